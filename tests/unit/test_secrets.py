"""Passwords, tokens and key passwords never show in repr, str, asdict or errors.

Every config class and every client object is built with a distinctive secret, then
its text forms (and, for the clients, every string reachable from it) are searched
for that value.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import AbstractTokenProvider
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config import admin_config
from aiokafka.admin.scram import (
    ScramMechanism,
    UserScramCredentialUpsertion,
    salted_password,
)
from aiokafka.cluster import AIOKafkaClient, ClientConfig
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.helpers import create_ssl_context
from aiokafka.net.auth import build_mechanism
from aiokafka.net.config import ConnectionConfig, InvalidOptionError
from aiokafka.net.connection import AIOKafkaConnection
from aiokafka.net.sasl import (
    OAuthBearerMechanism,
    PlainMechanism,
    ScramSha256Mechanism,
    ScramSha512Mechanism,
)
from aiokafka.net.secret import Secret, reveal
from aiokafka.producer.config import ProducerConfig

PASSWORD = "pw-Q7vXk2ZrT9"
TOKEN = "tok-J3mWq8LsB4"

SASL = {
    "security_protocol": "SASL_PLAINTEXT",
    "sasl_mechanism": "PLAIN",
    "sasl_plain_username": "alice",
    "sasl_plain_password": PASSWORD,
}


class CachingProvider(AbstractTokenProvider):
    """A provider that keeps its current token, as real ones do."""

    def __init__(self) -> None:
        super().__init__()
        self.current = TOKEN

    async def token(self) -> str:
        return self.current


class ChattyProvider(CachingProvider):
    """A provider whose own repr shows its token: configs must not print it."""

    def __repr__(self) -> str:
        return f"ChattyProvider(current={self.current!r})"


def texts(obj: object) -> list[str]:
    """The ways an object commonly becomes text."""
    out = [repr(obj), str(obj), f"{obj}", "%s" % (obj,), "%r" % (obj,)]  # noqa: UP031
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out.append(repr(dataclasses.asdict(obj)))
        out.append(repr(dataclasses.astuple(obj)))
    return out


def assert_hidden(obj: object, *secrets: str) -> None:
    for text in texts(obj):
        for secret in secrets:
            assert secret not in text, text


def clear_strings(root: object, limit: int = 20000) -> Iterator[str]:
    """Every ``str``/``bytes`` reachable from ``root`` through aiokafka objects and
    builtin containers, not looking inside a :class:`Secret`."""
    seen: set[int] = set()
    stack: list[object] = [root]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, Secret):
            continue
        seen.add(id(obj))
        if isinstance(obj, str | bytes | bytearray):
            yield obj.decode("latin-1") if not isinstance(obj, str) else obj
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
            continue
        if isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
            continue
        module = type(obj).__module__ or ""
        if not module.startswith(("aiokafka", __name__)):
            continue
        stack.extend(vars(obj).values() if hasattr(obj, "__dict__") else ())
        for cls in type(obj).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if hasattr(obj, slot):
                    stack.append(getattr(obj, slot))


def assert_nowhere_in_clear(obj: object, secret: str) -> None:
    assert_hidden(obj, secret)
    leaks = [s for s in clear_strings(obj) if secret in s]
    assert not leaks


# -- Secret ---------------------------------------------------------------------------


def test_secret_text_forms_are_masked() -> None:
    s = Secret(PASSWORD)
    assert repr(s) == "Secret('***')"
    assert str(s) == "***"
    assert f"{s}" == "***" and f"{s:>5}" == "  ***"
    assert "%s %r" % (s, s) == "*** Secret('***')"  # noqa: UP031
    assert PASSWORD not in repr([s, {"k": s}, (s,)])
    assert s.get_secret_value() == PASSWORD
    assert reveal(s) == PASSWORD and reveal(None) is None


def test_secret_equality_hash_copy_pickle() -> None:
    s = Secret(PASSWORD)
    assert s == Secret(PASSWORD) and s != Secret("other")
    # A Secret never equals its clear text: comparing would be an accidental unwrap.
    assert s != PASSWORD
    assert hash(s) == hash(Secret(PASSWORD))
    assert {s: 1}[Secret(PASSWORD)] == 1
    assert copy.copy(s) is s and copy.deepcopy(s) is s
    back = pickle.loads(pickle.dumps(s))
    assert back == s and back.get_secret_value() == PASSWORD
    assert Secret("\ud800") == Secret("\ud800")  # a lone surrogate does not break eq


def test_secret_is_immutable_and_checked() -> None:
    s = Secret(PASSWORD)
    with pytest.raises(AttributeError):
        s._value = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del s._value
    with pytest.raises(AttributeError):
        s.other = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="bytes") as info:
        Secret(PASSWORD.encode())  # type: ignore[arg-type]
    assert PASSWORD not in str(info.value)


# -- configs ----------------------------------------------------------------------------


def all_configs(**options: Any) -> list[object]:
    client = ClientConfig(**options)
    consumer = ConsumerConfig.from_options(**options)
    return [
        ConnectionConfig(**{k: v for k, v in options.items() if k != "bootstrap_servers"}),
        client,
        client.connection,
        ProducerConfig.from_kwargs(**options),
        ProducerConfig.from_kwargs(**options).client,
        consumer,
        consumer.client,
        admin_config(dict(options)),
    ]


def test_password_hidden_in_every_config() -> None:
    for config in all_configs(**SASL):
        assert_hidden(config, PASSWORD)
        password = getattr(config, "sasl_plain_password", None)
        if password is None:
            password = config.client.sasl_plain_password  # type: ignore[attr-defined]
        assert isinstance(password, Secret)
        assert password.get_secret_value() == PASSWORD


def test_password_given_as_secret_or_replaced() -> None:
    config = ClientConfig(**{**SASL, "sasl_plain_password": Secret(PASSWORD)})
    assert config == ClientConfig(**SASL)
    assert config.connection.sasl_plain_password == Secret(PASSWORD)
    other = dataclasses.replace(config, sasl_plain_password="other-S3cr")
    assert_hidden(other, "other-S3cr")
    assert reveal(other.connection.sasl_plain_password) == "other-S3cr"
    assert hash(config) == hash(ClientConfig(**SASL))


def test_password_of_wrong_type_named_not_shown() -> None:
    with pytest.raises(InvalidOptionError, match="sasl_plain_password") as info:
        ClientConfig(**{**SASL, "sasl_plain_password": PASSWORD.encode()})
    assert info.value.option == "sasl_plain_password"
    assert PASSWORD not in str(info.value) and PASSWORD not in repr(info.value)


@pytest.mark.parametrize("provider_type", [CachingProvider, ChattyProvider])
def test_token_provider_left_out_of_config_text(provider_type: type[CachingProvider]) -> None:
    options = {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "OAUTHBEARER",
        "sasl_oauth_token_provider": provider_type(),
    }
    for config in all_configs(**options):
        assert TOKEN not in repr(config) and TOKEN not in str(config)
        if provider_type is CachingProvider:
            # asdict deep-copies the user's provider and shows its own repr, which
            # here is object's default.
            assert TOKEN not in repr(dataclasses.asdict(config))  # type: ignore[call-overload]


# -- client objects ---------------------------------------------------------------------


async def test_password_nowhere_in_clear_in_client_objects() -> None:
    options = {"bootstrap_servers": "127.0.0.1:1", **SASL}
    producer = AIOKafkaProducer(**options)
    consumer = AIOKafkaConsumer("topic", **options)
    admin = AIOKafkaAdminClient(**options)
    client = AIOKafkaClient(**options)
    connection = AIOKafkaConnection("127.0.0.1", 1, client.config.connection, node_id=0)
    for obj in (producer, consumer, admin, client, connection):
        assert_nowhere_in_clear(obj, PASSWORD)
        assert_nowhere_in_clear(obj.config, PASSWORD)
        # The walk reaches the configs: the user name beside the password is found.
        assert any("alice" in s for s in clear_strings(obj))


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"])
async def test_mechanisms_keep_secrets_wrapped(mechanism: str) -> None:
    config = ConnectionConfig(
        **{**SASL, "sasl_mechanism": mechanism, "sasl_oauth_token_provider": CachingProvider()}
    )
    mech = await build_mechanism(config, "localhost")
    assert_nowhere_in_clear(mech, PASSWORD)
    assert_nowhere_in_clear(mech, TOKEN)
    first = mech.initial_response()
    # The clear value is written only into the bytes that go on the wire.
    if mechanism == "PLAIN":
        assert first == b"\x00alice\x00" + PASSWORD.encode()
    if mechanism == "OAUTHBEARER":
        assert f"auth=Bearer {TOKEN}".encode() in first
    assert_nowhere_in_clear(mech, PASSWORD)
    assert_nowhere_in_clear(mech, TOKEN)


def test_mechanisms_take_str_or_secret() -> None:
    for password in (PASSWORD, Secret(PASSWORD)):
        assert PlainMechanism("u", password).initial_response().endswith(PASSWORD.encode())
        for cls in (ScramSha256Mechanism, ScramSha512Mechanism):
            assert_nowhere_in_clear(cls("u", password, nonce="abc"), PASSWORD)
    for token in (TOKEN, Secret(TOKEN)):
        assert TOKEN.encode() in OAuthBearerMechanism(token).initial_response()


def test_mechanism_errors_do_not_quote_secrets() -> None:
    with pytest.raises(ValueError) as plain:
        PlainMechanism("u", PASSWORD + "\x00")
    with pytest.raises(ValueError) as token:
        OAuthBearerMechanism(TOKEN + " x")
    with pytest.raises(ValueError) as extension:
        OAuthBearerMechanism("t", {"secretExt": TOKEN + "\x00"})
    for info in (plain, token, extension):
        assert PASSWORD not in str(info.value) and TOKEN not in str(info.value)
    assert "secretExt" in str(extension.value)


# -- admin SCRAM credentials ------------------------------------------------------------


def test_scram_upsertion_hides_password() -> None:
    for password in (PASSWORD, Secret(PASSWORD)):
        upsert = UserScramCredentialUpsertion("bob", "SCRAM-SHA-256", password)
        assert_nowhere_in_clear(upsert, PASSWORD)
        assert upsert.password == Secret(PASSWORD)
        assert upsert.salted_password() == salted_password(
            ScramMechanism.SCRAM_SHA_256, PASSWORD, upsert.salt, upsert.iterations
        )
    with pytest.raises(ValueError, match="password"):
        UserScramCredentialUpsertion("bob", "SCRAM-SHA-256", Secret(""))
    with pytest.raises(TypeError, match="password") as info:
        UserScramCredentialUpsertion("bob", "SCRAM-SHA-256", PASSWORD.encode())  # type: ignore[arg-type]
    assert PASSWORD not in str(info.value)


async def test_bad_scram_alteration_error_names_the_type_only() -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers="127.0.0.1:1")
    with pytest.raises(TypeError, match="tuple") as info:
        await admin.alter_user_scram_credentials(
            [("bob", "SCRAM-SHA-256", PASSWORD)]  # type: ignore[list-item]
        )
    assert PASSWORD not in str(info.value) and PASSWORD not in repr(info.value)


# -- SSL key password -------------------------------------------------------------------


@pytest.fixture(scope="module")
def encrypted_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    exe = shutil.which("openssl")
    if exe is None:
        pytest.skip("the openssl command is needed to make an encrypted key")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            exe, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=client",
            "-passout", f"pass:{PASSWORD}",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )  # fmt: skip
    return cert, key


@pytest.mark.parametrize(
    "password", [PASSWORD, PASSWORD.encode(), Secret(PASSWORD), lambda: PASSWORD]
)
def test_ssl_key_password_accepted(encrypted_key: tuple[Path, Path], password: Any) -> None:
    cert, key = encrypted_key
    context = create_ssl_context(certfile=str(cert), keyfile=str(key), password=password)
    assert isinstance(context, ssl.SSLContext)
    assert_nowhere_in_clear(context, PASSWORD)


@pytest.mark.parametrize("wrong", ["wrong-" + PASSWORD[::-1], Secret("wrong-" + PASSWORD[::-1])])
def test_wrong_ssl_key_password_not_in_the_error(
    encrypted_key: tuple[Path, Path], wrong: str | Secret
) -> None:
    cert, key = encrypted_key
    with pytest.raises(ssl.SSLError) as info:
        create_ssl_context(certfile=str(cert), keyfile=str(key), password=wrong)
    for text in (str(info.value), repr(info.value), repr(info.value.args)):
        assert PASSWORD not in text and PASSWORD[::-1] not in text


def test_key_password_without_certfile_not_in_the_error() -> None:
    with pytest.raises(ValueError, match="certfile") as info:
        create_ssl_context(password=PASSWORD)
    assert PASSWORD not in str(info.value)
