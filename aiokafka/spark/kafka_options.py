"""``kafka.*`` data source options (Java client names) -> this client's keyword arguments.

Spark users write the Java client's names (``kafka.bootstrap.servers``,
``kafka.sasl.jaas.config``, ``kafka.isolation.level``); the clients here take aiokafka's
keyword names (``bootstrap_servers``, ``sasl_plain_username``, ``isolation_level``).
This module owns that translation and rejects, naming the option, what it cannot honour,
so a typo fails when the query is planned instead of being silently ignored. Pure: no
pyspark, no asyncio.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable, Mapping
from typing import Any, Literal

from aiokafka.helpers import create_ssl_context

Role = Literal["consumer", "producer"]

KAFKA_PREFIX = "kafka."


class OptionError(ValueError):
    """A data source option is unknown, malformed or not supported; the message names it."""


def _int(name: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise OptionError(f"option {name!r}: expected an integer, got {value!r}") from None


def _bool(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise OptionError(f"option {name!r}: expected true or false, got {value!r}")


def _str(name: str, value: str) -> str:
    return value


def _acks(name: str, value: str) -> Any:
    if value == "all":
        return "all"
    return _int(name, value)


def _compression(name: str, value: str) -> str | None:
    return None if value.lower() == "none" else value.lower()


_Conv = Callable[[str, str], Any]


def _same_names(convert: _Conv, java_names: str) -> dict[str, tuple[str, _Conv]]:
    """The table rows of ``java_names`` (separated by white space), each converted by
    ``convert``, whose keyword is the Java name with underscores for the dots: the rule
    for most options, written once."""
    return {name: (name.replace(".", "_"), convert) for name in java_names.split()}


# Java name (after "kafka.") -> (our keyword, converter). Options every client shares.
_COMMON: dict[str, tuple[str, _Conv]] = {
    **_same_names(
        _str,
        """bootstrap.servers client.id security.protocol sasl.mechanism
        sasl.kerberos.service.name client.rack""",
    ),
    **_same_names(
        _int,
        """request.timeout.ms metadata.max.age.ms retry.backoff.ms reconnect.backoff.ms
        reconnect.backoff.max.ms connections.max.idle.ms""",
    ),
    # aiokafka's keyword differs from the Java name.
    "allow.auto.create.topics": ("allow_auto_topic_creation", _bool),
    # This client's own names for SASL/PLAIN and SCRAM credentials.
    "sasl.username": ("sasl_plain_username", _str),
    "sasl.password": ("sasl_plain_password", _str),
}

_CONSUMER: dict[str, tuple[str, _Conv]] = {
    **_same_names(_str, "group.id isolation.level"),
    **_same_names(
        _int,
        """fetch.max.bytes fetch.min.bytes fetch.max.wait.ms max.partition.fetch.bytes
        max.poll.records""",
    ),
    **_same_names(_bool, "check.crcs"),
}

_PRODUCER: dict[str, tuple[str, _Conv]] = {
    **_same_names(_acks, "acks"),
    **_same_names(_compression, "compression.type"),
    **_same_names(
        _int,
        """compression.level linger.ms max.request.size buffer.memory max.block.ms
        delivery.timeout.ms transaction.timeout.ms max.in.flight.requests.per.connection""",
    ),
    **_same_names(_bool, "enable.idempotence"),
    # aiokafka's keyword differs from the Java name.
    "batch.size": ("max_batch_size", _int),
}


# Spark's own connector refuses these too: the data source owns what they control.
_OWNED_BY_SOURCE = {
    "key.deserializer": "records are returned as binary key/value columns",
    "value.deserializer": "records are returned as binary key/value columns",
    "key.serializer": "write binary (or string) key/value columns instead",
    "value.serializer": "write binary (or string) key/value columns instead",
    "auto.offset.reset": "use startingOffsets",
    "enable.auto.commit": "offsets are tracked in Spark's checkpoint, not committed",
    "interceptor.classes": "Java interceptors do not apply to this client",
    "transactional.id": "set exactlyOnce=true; transactional ids are derived per query and task",
}

_SSL_KEYS = {
    "ssl.truststore.location",
    "ssl.truststore.type",
    "ssl.keystore.location",
    "ssl.keystore.type",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.endpoint.identification.algorithm",
    "ssl.cafile",
    "ssl.certfile",
    "ssl.keyfile",
    "ssl.password",
    "ssl.crlfile",
}

_JAAS_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_JAAS_RE = re.compile(r"^\s*(?P<module>[\w.$]+)\s+(?P<flag>\w+)(?P<body>.*?);?\s*$", re.S)
_JAAS_PAIR_RE = re.compile(r'\s*(?P<key>[\w.-]+)\s*=\s*(?:"(?P<q>(?:[^"\\]|\\.)*)"|(?P<b>[^\s;]+))')


def parse_jaas_config(value: str) -> tuple[str, str]:
    """Username and password from a PLAIN or SCRAM ``sasl.jaas.config`` string.

    Example: ``org.apache.kafka.common.security.plain.PlainLoginModule required
    username="alice" password="secret";``

    Raises:
        OptionError: another login module, or no username/password (the value is not
            quoted in the message: it holds a password).
    """
    name = "kafka.sasl.jaas.config"
    match = _JAAS_RE.match(value)
    if match is None:
        raise OptionError(f"option {name!r}: not a JAAS login module configuration")
    if match.group("module") not in _JAAS_MODULES:
        raise OptionError(
            f"option {name!r}: login module {match.group('module')!r} is not supported; "
            f"use one of {sorted(_JAAS_MODULES)} (OAUTHBEARER and GSSAPI are configured "
            "through the client's own options)"
        )
    pairs: dict[str, str] = {}
    body = match.group("body")
    pos = 0
    while pos < len(body):
        found = _JAAS_PAIR_RE.match(body, pos)
        if found is None:
            if body[pos:].strip(" ;\n\t") == "":
                break
            raise OptionError(f"option {name!r}: cannot parse the options of the login module")
        quoted = found.group("q")
        raw = found.group("b")
        pairs[found.group("key")] = (
            re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else str(raw)
        )
        pos = found.end()
    if "username" not in pairs or "password" not in pairs:
        raise OptionError(f"option {name!r}: username and password are required")
    return pairs["username"], pairs["password"]


def _ssl_context(ssl_opts: Mapping[str, str]) -> ssl.SSLContext:
    for store in ("truststore", "keystore"):
        kind = ssl_opts.get(f"ssl.{store}.type", "PEM").upper()
        if kind != "PEM":
            raise OptionError(
                f"option 'kafka.ssl.{store}.type': only PEM files are supported, got {kind!r}"
            )
    for java_only in ("ssl.keystore.password", "ssl.truststore.password"):
        if java_only in ssl_opts:
            raise OptionError(
                f"option 'kafka.{java_only}': JKS/PKCS12 stores are not supported; "
                "give PEM files (kafka.ssl.truststore.location / kafka.ssl.keystore.location)"
            )
    cafile = ssl_opts.get("ssl.cafile", ssl_opts.get("ssl.truststore.location"))
    certfile = ssl_opts.get("ssl.certfile", ssl_opts.get("ssl.keystore.location"))
    keyfile = ssl_opts.get("ssl.keyfile")
    password = ssl_opts.get("ssl.password", ssl_opts.get("ssl.key.password"))
    try:
        context = create_ssl_context(
            cafile=cafile,
            certfile=certfile,
            keyfile=keyfile,
            password=password,
            crlfile=ssl_opts.get("ssl.crlfile"),
        )
    except (OSError, ssl.SSLError) as exc:
        raise OptionError(f"options 'kafka.ssl.*': cannot load the TLS material: {exc}") from exc
    if ssl_opts.get("ssl.endpoint.identification.algorithm", "https") == "":
        context.check_hostname = False
    return context


def client_kwargs(options: Mapping[str, str], role: Role) -> dict[str, Any]:
    """The keyword arguments of an ``AIOKafkaConsumer``/``AIOKafkaProducer`` from the
    ``kafka.*`` options.

    Args:
        options: Every data source option (keys compared case-insensitively; only the
            ``kafka.`` ones are looked at).
        role: Which client the arguments are for.

    Returns:
        Keyword arguments, without an ``ssl_context`` object: call
        :func:`build_ssl_context` in the process that creates the client (an
        ``SSLContext`` does not pickle).

    Raises:
        OptionError: an unknown option, an option of the other client, an option the
            data source owns, or a malformed value; the message names the option.
    """
    table = {**_COMMON, **(_CONSUMER if role == "consumer" else _PRODUCER)}
    other = _PRODUCER if role == "consumer" else _CONSUMER
    kwargs: dict[str, Any] = {}
    for raw_key, value in options.items():
        key = raw_key.lower()
        if not key.startswith(KAFKA_PREFIX):
            continue
        name = key[len(KAFKA_PREFIX) :]
        if name in _OWNED_BY_SOURCE:
            raise OptionError(f"option {raw_key!r} is not supported: {_OWNED_BY_SOURCE[name]}")
        if name == "sasl.jaas.config":
            user, password = parse_jaas_config(value)
            kwargs["sasl_plain_username"] = user
            kwargs["sasl_plain_password"] = password
        elif name in _SSL_KEYS:
            continue  # see build_ssl_context
        elif name in table:
            keyword, convert = table[name]
            kwargs[keyword] = convert(raw_key, value)
        elif name in other:
            raise OptionError(f"option {raw_key!r} applies to the {_other(role)}, not the {role}")
        else:
            raise OptionError(f"unknown option {raw_key!r}")
    if "bootstrap_servers" not in kwargs:
        raise OptionError("option 'kafka.bootstrap.servers' is required")
    if role == "consumer":
        # Offsets live in Spark's checkpoint; a group id (if given) is for ACLs/quotas only.
        kwargs["enable_auto_commit"] = False
        kwargs["auto_offset_reset"] = "none"
    return kwargs


def _other(role: Role) -> str:
    return "producer" if role == "consumer" else "consumer"


def ssl_options(options: Mapping[str, str]) -> dict[str, str]:
    """The ``kafka.ssl.*`` options, prefix removed (validated by :func:`build_ssl_context`)."""
    out = {}
    for raw_key, value in options.items():
        key = raw_key.lower()
        if key.startswith(KAFKA_PREFIX) and key[len(KAFKA_PREFIX) :] in _SSL_KEYS:
            out[key[len(KAFKA_PREFIX) :]] = value
    return out


def build_ssl_context(ssl_opts: Mapping[str, str], security_protocol: str) -> ssl.SSLContext | None:
    """The ``SSLContext`` for SSL/SASL_SSL from :func:`ssl_options`' result, else None.

    Raises:
        OptionError: a store type other than PEM, or unreadable files.
    """
    if not security_protocol.upper().endswith("SSL"):
        return None
    return _ssl_context(ssl_opts)
