"""Connect over TLS and with SASL (PLAIN, SCRAM, OAUTHBEARER; GSSAPI settings shown).

Every client (producer, consumer, admin) takes the same security options, so each
function below builds one dict of keyword options, and ``round_trip`` passes it to a
producer and a consumer. Passwords come from the environment, never from the command
line (where ``ps`` shows them to every user of the machine).

Run it::

    # TLS, verifying the broker's certificate against your CA:
    python examples/secure_clients.py ssl --bootstrap broker:9093 --cafile ca.pem
    # SASL/SCRAM over TLS:
    KAFKA_PASSWORD=... python examples/secure_clients.py sasl --bootstrap broker:9094 \\
        --mechanism SCRAM-SHA-512 --username alice --cafile ca.pem
    # OAUTHBEARER with a token file kept fresh by your identity agent:
    python examples/secure_clients.py oauth --bootstrap broker:9094 --token-file token.jwt
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.abc import AbstractTokenProvider
from aiokafka.helpers import create_ssl_context


def ssl_options(
    bootstrap: str, cafile: str, certfile: str | None = None, keyfile: str | None = None
) -> dict[str, Any]:
    """TLS: the broker's certificate and host name are verified against ``cafile``.
    ``certfile``/``keyfile`` add a client certificate, for brokers that require
    mutual TLS (``ssl.client.auth=required``)."""
    return {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SSL",
        "ssl_context": create_ssl_context(cafile=cafile, certfile=certfile, keyfile=keyfile),
    }


def sasl_options(
    bootstrap: str, mechanism: str, username: str, password: str, cafile: str | None = None
) -> dict[str, Any]:
    """SASL PLAIN or SCRAM-SHA-256/512 with a user name and password; over TLS
    (``SASL_SSL``) when ``cafile`` is given. PLAIN sends the password as it is, so
    use it over TLS only: the client logs a warning for PLAIN without TLS."""
    options: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_SSL" if cafile else "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": username,
        # Kept as a Secret by the client: it never shows in repr() or logs.
        "sasl_plain_password": password,
    }
    if cafile:
        options["ssl_context"] = create_ssl_context(cafile=cafile)
    return options


class TokenFile(AbstractTokenProvider):
    """OAUTHBEARER tokens read from a file that another process keeps fresh (an
    identity agent, a Kubernetes projected service-account token, ...).

    ``token()`` is awaited at every authentication (each new connection, and each
    re-authentication when the broker limits the session's lifetime, KIP-368), so a
    rotated file is picked up then. Without such an agent, fetch from your identity
    provider here, and reuse the token until shortly before it expires.
    """

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = Path(path)

    async def token(self) -> str:
        # A thread: file I/O must not block the event loop.
        text = await asyncio.to_thread(self.path.read_text)
        return text.strip()


def oauth_options(bootstrap: str, token_file: str, cafile: str | None = None) -> dict[str, Any]:
    """SASL OAUTHBEARER with tokens from :class:`TokenFile`."""
    options: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_SSL" if cafile else "SASL_PLAINTEXT",
        "sasl_mechanism": "OAUTHBEARER",
        "sasl_oauth_token_provider": TokenFile(token_file),
    }
    if cafile:
        options["ssl_context"] = create_ssl_context(cafile=cafile)
    return options


def gssapi_options(bootstrap: str, cafile: str, service_name: str = "kafka") -> dict[str, Any]:
    """SASL GSSAPI (Kerberos) over TLS: needs ``pip install aiokafka[gssapi]`` and a
    Kerberos ticket (``kinit``, or a keytab named by ``KRB5_CLIENT_KTNAME``). The
    brokers' principal is ``service_name/<broker host>@REALM``."""
    return {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "GSSAPI",
        "sasl_kerberos_service_name": service_name,
        "ssl_context": create_ssl_context(cafile=cafile),
    }


async def round_trip(options: dict[str, Any], topic: str) -> None:
    """Produce one record with ``options`` and read it back."""
    value = uuid.uuid4().hex.encode()
    async with AIOKafkaProducer(**options) as producer:
        metadata = await producer.send_and_wait(topic, value)
    tp = TopicPartition(topic, metadata.partition)
    async with AIOKafkaConsumer(**options) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, metadata.offset)
        record = await asyncio.wait_for(consumer.getone(), 30)
    assert record.value == value, record
    print(
        f"{options['security_protocol']} {options.get('sasl_mechanism', '')}: "
        f"wrote and read back {topic}[{tp.partition}] offset {metadata.offset}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["ssl", "sasl", "oauth"])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", default="secure-example")
    parser.add_argument("--cafile", help="CA certificates (PEM) that signed the brokers'")
    parser.add_argument("--certfile", help="client certificate (PEM), for mutual TLS")
    parser.add_argument("--keyfile", help="the client certificate's key (PEM)")
    parser.add_argument("--mechanism", default="SCRAM-SHA-512")
    parser.add_argument("--username")
    parser.add_argument("--password-env", default="KAFKA_PASSWORD")
    parser.add_argument("--token-file")
    args = parser.parse_args()
    if args.mode == "ssl":
        if not args.cafile:
            parser.error("ssl needs --cafile")
        options = ssl_options(args.bootstrap, args.cafile, args.certfile, args.keyfile)
    elif args.mode == "sasl":
        password = os.environ.get(args.password_env)
        if not args.username or password is None:
            parser.error(f"sasl needs --username and the password in ${args.password_env}")
        options = sasl_options(args.bootstrap, args.mechanism, args.username, password, args.cafile)
    else:
        if not args.token_file:
            parser.error("oauth needs --token-file")
        options = oauth_options(args.bootstrap, args.token_file, args.cafile)
    asyncio.run(round_trip(options, args.topic))


if __name__ == "__main__":
    main()
