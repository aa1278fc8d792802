"""SASL mechanisms, bytes in and bytes out, against the RFC example exchanges."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any, ClassVar

import pytest

from aiokafka.errors import AuthenticationFailedError, IllegalStateError
from aiokafka.net.sasl import (
    GssapiMechanism,
    OAuthBearerMechanism,
    PlainMechanism,
    ScramMechanism,
    ScramSha256Mechanism,
    ScramSha512Mechanism,
)


class ScramSha1(ScramMechanism):
    """SCRAM-SHA-1: not used by Kafka, but RFC 5802's example exchange uses it."""

    name = "SCRAM-SHA-1"
    hash_name = "sha1"


# -- SCRAM: RFC 5802 section 5 and RFC 7677 section 3 ------------------------------


def test_scram_sha1_rfc5802_example() -> None:
    mech = ScramSha1("user", "pencil", nonce="fyko+d2lbbFgONRv9qkxdawL")
    assert mech.initial_response() == b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"
    final = mech.step(b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
    assert final == (
        b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    )
    assert not mech.complete
    assert mech.step(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=") is None
    assert mech.complete


RFC7677_SERVER_FIRST = (
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)


def test_scram_sha256_rfc7677_example() -> None:
    mech = ScramSha256Mechanism("user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert mech.name == "SCRAM-SHA-256"
    assert mech.initial_response() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = mech.step(RFC7677_SERVER_FIRST)
    assert final == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert mech.step(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None
    assert mech.complete


def test_scram_sha256_wrong_server_signature_is_rejected() -> None:
    mech = ScramSha256Mechanism("user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    mech.initial_response()
    mech.step(RFC7677_SERVER_FIRST)
    forged = base64.b64encode(b"\x00" * 32)
    with pytest.raises(AuthenticationFailedError, match="server signature does not match"):
        mech.step(b"v=" + forged)
    assert not mech.complete


def _scram_server_final(
    hash_name: str, password: str, salt: bytes, iterations: int, auth_message: bytes
) -> bytes:
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
    server_key = hmac.new(salted, b"Server Key", hash_name).digest()
    return b"v=" + base64.b64encode(hmac.new(server_key, auth_message, hash_name).digest())


def test_scram_sha512_against_independent_server_computation() -> None:
    # No RFC vector exists for SHA-512; compute the server side independently here.
    mech = ScramSha512Mechanism("al,i=ce", "s3cret", nonce="clientnonce")
    first = mech.initial_response()
    assert first == b"n,,n=al=2Ci=3Dce,r=clientnonce"
    salt = b"saltsalt"
    server_first = b"r=clientnonceSERVER,s=" + base64.b64encode(salt) + b",i=4096"
    final = mech.step(server_first)
    assert final is not None
    without_proof, _, proof_part = final.rpartition(b",")
    assert without_proof == b"c=biws,r=clientnonceSERVER"
    auth_message = first[3:] + b"," + server_first + b"," + without_proof
    # Check the proof as a broker would: recover ClientKey and compare StoredKey.
    salted = hashlib.pbkdf2_hmac("sha512", b"s3cret", salt, 4096)
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    stored_key = hashlib.sha512(client_key).digest()
    signature = hmac.new(stored_key, auth_message, "sha512").digest()
    proof = base64.b64decode(proof_part[2:])
    recovered = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
    assert hashlib.sha512(recovered).digest() == stored_key
    server_final = _scram_server_final("sha512", "s3cret", salt, 4096, auth_message)
    assert mech.step(server_final) is None
    assert mech.complete


def test_scram_token_auth_extension_is_in_the_signed_message() -> None:
    # A delegation token logs in with Kafka's tokenauth extension after the nonce
    # (RFC 5802 extensions); the proof covers the first message with it.
    mech = ScramSha256Mechanism("token-id", "aG1hYw==", nonce="cn", token_auth=True)
    first = mech.initial_response()
    assert first == b"n,,n=token-id,r=cn,tokenauth=true"
    salt = b"saltsalt"
    server_first = b"r=cnSERVER,s=" + base64.b64encode(salt) + b",i=4096"
    final = mech.step(server_first)
    assert final is not None
    without_proof, _, _ = final.rpartition(b",")
    auth_message = first[3:] + b"," + server_first + b"," + without_proof
    server_final = _scram_server_final("sha256", "aG1hYw==", salt, 4096, auth_message)
    assert mech.step(server_final) is None and mech.complete
    assert ScramSha256Mechanism("u", "p", nonce="cn").initial_response() == b"n,,n=u,r=cn"


@pytest.mark.parametrize(
    ("server_first", "match"),
    [
        (b"r=othernonce,s=c2FsdA==,i=4096", "does not extend"),
        (b"r=abc,s=c2FsdA==,i=4096", "does not extend"),  # no server part
        (b"r=abcdef,s=c2FsdA==,i=1000", "iteration count"),
        (b"r=abcdef,s=c2FsdA==", "lacks attribute 'i'"),
        (b"r=abcdef,s=!!!,i=4096", "malformed salt"),
        (b"e=unknown-user", "server error"),
        (b"garbage", "malformed"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_scram_rejects_bad_server_first(server_first: bytes, match: str) -> None:
    mech = ScramSha256Mechanism("u", "p", nonce="abc")
    mech.initial_response()
    with pytest.raises(AuthenticationFailedError, match=match):
        mech.step(server_first)


def test_scram_server_final_error_attribute() -> None:
    mech = ScramSha256Mechanism("user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    mech.initial_response()
    mech.step(RFC7677_SERVER_FIRST)
    with pytest.raises(AuthenticationFailedError, match="invalid-proof"):
        mech.step(b"e=invalid-proof")


def test_scram_random_nonce_differs() -> None:
    a = ScramSha256Mechanism("u", "p").initial_response()
    b = ScramSha256Mechanism("u", "p").initial_response()
    assert a != b
    assert a.startswith(b"n,,n=u,r=")


def test_mechanism_state_errors() -> None:
    mech = ScramSha256Mechanism("u", "p", nonce="abc")
    with pytest.raises(IllegalStateError):
        mech.step(b"")
    mech.initial_response()
    with pytest.raises(IllegalStateError):
        mech.initial_response()


# -- PLAIN --------------------------------------------------------------------------


def test_plain_exchange() -> None:
    mech = PlainMechanism("alice", "pässword")
    assert mech.name == "PLAIN"
    assert mech.initial_response() == b"\x00alice\x00p\xc3\xa4ssword"
    assert mech.step(b"") is None
    assert mech.complete
    with pytest.raises(AuthenticationFailedError, match="after the exchange completed"):
        mech.step(b"")


def test_plain_rejects_challenge_and_nul() -> None:
    mech = PlainMechanism("alice", "pw")
    mech.initial_response()
    with pytest.raises(AuthenticationFailedError, match="unexpected server challenge"):
        mech.step(b"what?")
    with pytest.raises(ValueError, match="sasl_plain_username"):
        PlainMechanism("a\x00b", "pw")


# -- OAUTHBEARER (RFC 7628 section 4 examples, Kafka framing) ------------------------


def test_oauthbearer_initial_response_and_success() -> None:
    mech = OAuthBearerMechanism("vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg==")
    # RFC 7628 4.1 without the host/port attributes Kafka does not send.
    assert mech.initial_response() == (
        b"n,,\x01auth=Bearer vF9dft4qmTc2Nvb3RlckBhbHRhdmlzdGEuY29tCg==\x01\x01"
    )
    assert mech.step(b"") is None
    assert mech.complete


def test_oauthbearer_extensions_sorted_and_validated() -> None:
    mech = OAuthBearerMechanism("tok", {"traceId": "123", "logicalCluster": "lc-1"})
    assert mech.initial_response() == (
        b"n,,\x01auth=Bearer tok\x01logicalCluster=lc-1\x01traceId=123\x01\x01"
    )
    with pytest.raises(ValueError, match="reserved"):
        OAuthBearerMechanism("tok", {"auth": "x"})
    with pytest.raises(ValueError, match="invalid SASL extension"):
        OAuthBearerMechanism("tok", {"bad key": "x"})
    with pytest.raises(ValueError, match="invalid SASL extension"):
        OAuthBearerMechanism("tok", {"k": "\x01"})
    with pytest.raises(ValueError, match="token"):
        OAuthBearerMechanism("")


def test_oauthbearer_error_challenge_answered_with_kvsep() -> None:
    mech = OAuthBearerMechanism("expired")
    mech.initial_response()
    error = b'{"status":"invalid_token","scope":"example_scope"}'
    # RFC 7628 3.2.3: the client answers the error challenge with a single %x01.
    assert mech.step(error) == b"\x01"
    assert mech.server_error == error.decode()
    with pytest.raises(AuthenticationFailedError, match="invalid_token"):
        mech.step(b"")
    assert not mech.complete


# -- GSSAPI (wrapping logic with a fake security context) ---------------------------


class _Msg:
    def __init__(self, message: bytes) -> None:
        self.message = message


class FakeGssContext:
    """Two context round trips, then wrap/unwrap as a reversible transform."""

    tokens: ClassVar[list[bytes]] = [b"AP-REQ", b"done"]

    def __init__(self) -> None:
        self.steps: list[bytes | None] = []
        self.complete = False
        self.wrapped: list[tuple[bytes, bool]] = []

    def step(self, token: bytes | None = None) -> bytes | None:
        self.steps.append(token)
        if token is None:
            return b"AP-REQ"
        assert token == b"AP-REP"
        self.complete = True
        return None  # mutual auth completes without a further token

    def wrap(self, message: bytes, encrypt: bool) -> Any:
        self.wrapped.append((message, encrypt))
        return _Msg(b"W(" + message + b")")

    def unwrap(self, message: bytes) -> Any:
        if not (message.startswith(b"W(") and message.endswith(b")")):
            raise ValueError("bad token")
        return _Msg(message[2:-1])


def test_gssapi_exchange_with_fake_context() -> None:
    ctx = FakeGssContext()
    mech = GssapiMechanism("kafka", "broker.example", context=ctx)
    assert mech.initial_response() == b"AP-REQ"
    # Context completes without an output token: the client sends an empty message.
    assert mech.step(b"AP-REP") == b""
    reply = mech.step(b"W(\x07\x00\x10\x00)")  # offers none|integrity|privacy, 4096 bytes
    assert reply == b"W(\x01\x00\x00\x00)"
    assert ctx.wrapped == [(b"\x01\x00\x00\x00", False)]
    assert not mech.complete
    assert mech.step(b"") is None
    assert mech.complete


def test_gssapi_refuses_mandatory_security_layer() -> None:
    ctx = FakeGssContext()
    mech = GssapiMechanism("kafka", "h", context=ctx)
    mech.initial_response()
    mech.step(b"AP-REP")
    with pytest.raises(AuthenticationFailedError, match="requires a SASL security layer"):
        mech.step(b"W(\x04\x00\x10\x00)")


def test_gssapi_bad_offer() -> None:
    mech = GssapiMechanism("kafka", "h", context=FakeGssContext())
    mech.initial_response()
    mech.step(b"AP-REP")
    with pytest.raises(AuthenticationFailedError, match="4 bytes"):
        mech.step(b"W(\x01)")
    mech2 = GssapiMechanism("kafka", "h", context=FakeGssContext())
    mech2.initial_response()
    mech2.step(b"AP-REP")
    with pytest.raises(AuthenticationFailedError, match="cannot unwrap"):
        mech2.step(b"garbage")


def test_gssapi_missing_package_names_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "gssapi", None)  # makes `import gssapi` fail
    with pytest.raises(ImportError, match=r"pip install aiokafka\[gssapi\]"):
        GssapiMechanism("kafka", "h")


class _NoTicketError(Exception):
    """Stands in for gssapi's GSSError tree (not a KafkaError)."""


class FailingGssContext(FakeGssContext):
    def __init__(self, fail_on_step: int) -> None:
        super().__init__()
        self.fail_on_step = fail_on_step

    def step(self, token: bytes | None = None) -> bytes | None:
        if len(self.steps) == self.fail_on_step:
            raise _NoTicketError("No Kerberos credentials available")
        return super().step(token)


@pytest.mark.parametrize("fail_on_step", [0, 1])
def test_gssapi_context_errors_become_authentication_failed(fail_on_step: int) -> None:
    # Regression: gssapi's own GSSError (no ticket, unknown service principal) escaped
    # producer.start() untyped (tests/integration/test_gssapi.py sees it for real).
    mech = GssapiMechanism("kafka", "broker.example", context=FailingGssContext(fail_on_step))
    with pytest.raises(
        AuthenticationFailedError, match=r"kafka@broker\.example.*No Kerberos"
    ) as info:
        if fail_on_step == 0:
            mech.initial_response()
        else:
            mech.initial_response()
            mech.step(b"AP-REP")
    assert isinstance(info.value.__cause__, _NoTicketError)
