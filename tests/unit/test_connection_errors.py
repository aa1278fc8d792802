"""Transport exceptions are translated once, into typed aiokafka errors."""

from __future__ import annotations

import asyncio
import ssl

from aiokafka.errors import AuthenticationFailedError, KafkaConnectionError
from aiokafka.net.transport_errors import TRANSPORT_ERRORS, translate_transport_error


def cert_error(code: int, message: str) -> ssl.SSLCertVerificationError:
    exc = ssl.SSLCertVerificationError(1, "certificate verify failed")
    exc.verify_code = code
    exc.verify_message = message
    return exc


def test_hostname_mismatch_says_so() -> None:
    err = translate_transport_error(
        cert_error(62, "Hostname mismatch"), "h:1", handshake=True, server_hostname="bad.host"
    )
    assert isinstance(err, AuthenticationFailedError)
    assert "hostname verification failed" in str(err)
    assert "'bad.host'" in str(err)
    assert not err.retriable


def test_other_certificate_failure() -> None:
    err = translate_transport_error(cert_error(20, "unable to get local issuer"), "h:1")
    assert isinstance(err, AuthenticationFailedError)
    assert "certificate verification failed" in str(err)
    assert "unable to get local issuer" in str(err)


def test_ssl_error_during_handshake_vs_later() -> None:
    exc = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    assert isinstance(
        translate_transport_error(exc, "h:1", handshake=True), AuthenticationFailedError
    )
    later = translate_transport_error(exc, "h:1")
    assert isinstance(later, KafkaConnectionError)
    assert later.retriable


def test_eof_reset_and_timeout_are_retriable_connection_errors() -> None:
    for exc, text in [
        (asyncio.IncompleteReadError(b"ab", 4), "closed by the peer"),
        (ConnectionResetError(104, "reset"), "reset"),
        (TimeoutError(), "timed out"),
    ]:
        err = translate_transport_error(exc, "h:1")
        assert isinstance(err, KafkaConnectionError)
        assert err.retriable
        assert text in str(err)
        assert "h:1" in str(err)


def test_boundary_catches_every_transport_exception() -> None:
    for exc in (OSError(), EOFError(), ssl.SSLError(), asyncio.IncompleteReadError(b"", 1)):
        assert isinstance(exc, TRANSPORT_ERRORS)
    assert not isinstance(asyncio.CancelledError(), TRANSPORT_ERRORS)
