"""Generate ``aiokafka/_gen/client_errors.py``: the errors the client detects itself.

The broker's error codes come from Kafka's ``errors.json`` (``errors.py``); the errors
aiokafka raises on its own (connection lost, deadline passed, producer closed, ...)
have no such source, so this table is theirs: one row per class with its flags, its
default message and its docstring. The class shape is written once, in
:func:`_render_class`, instead of once per class; ``aiokafka/errors.py`` re-exports
the classes (its docstring draws the tree; ``tests/unit/test_errors.py`` keeps it true).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

from tools.codegen.errors import string_literal

OUTPUT_DIRS: tuple[str, ...] = ()  # aiokafka/_gen is owned by tools.codegen.errors

MODULE = "aiokafka/_gen/client_errors.py"

# What each flag letter of a row sets to True on the class (the rest stay False, as
# inherited from KafkaError); the same letters as the tree in aiokafka/errors.py.
FLAGS = {"R": "retriable", "M": "invalid_metadata", "F": "transaction_fatal"}


@dataclass(frozen=True)
class ClientError:
    """One client-side error class: name, flag letters, default message, docstring
    (continuation lines may be indented; they are re-indented), base class."""

    name: str
    flags: str
    message: str
    doc: str
    base: str = "KafkaError"


# In the order they are written; a class comes after its base. The comments group
# them as the docs do.
CLIENT_ERRORS: tuple[ClientError, ...] = (
    # Misuse and configuration.
    ClientError(
        "IllegalStateError", "", "The operation is not allowed in the current state.",
        """The operation is not allowed in the object's current state (e.g. a producer
        method called before ``start()``).""",
    ),
    ClientError(
        "IllegalArgumentError", "", "Invalid argument.",
        """An argument was rejected after validation at the API edge (which raises
        ``ValueError``/``TypeError``) had passed, e.g. by a pluggable component.""",
    ),
    ClientError(
        "IllegalOperation", "",
        "The operation is not available with the current configuration.",
        """The operation is not available with the current configuration, for example
        committing offsets without a ``group_id``.""",
    ),
    ClientError(
        "KafkaConfigurationError", "", "Invalid configuration.",
        "The configuration is inconsistent in a way only found at run time.",
    ),
    # Connectivity and cluster metadata.
    ClientError(
        "KafkaConnectionError", "RM", "Connection to the broker failed.",
        """A connection to a broker failed or was lost; requests in flight on it fail
        with this error. Retry, possibly on another broker, after refreshing metadata.""",
    ),
    ClientError(
        "NoBrokersAvailable", "RM", "No broker could be reached.",
        "None of the bootstrap servers or known brokers could be reached.",
    ),
    ClientError(
        "NodeNotReadyError", "R", "The broker connection is not ready.",
        "The connection to this node is not established (yet).",
    ),
    ClientError(
        "KafkaUnavailableError", "", "Kafka is unavailable.",
        "The cluster could not serve the request at all (kept from aiokafka).",
    ),
    ClientError(
        "StaleMetadata", "RM", "Cluster metadata is stale.",
        "The cached cluster metadata is known to be outdated.",
    ),
    ClientError(
        "MetadataEmptyBrokerList", "R", "The metadata response contained no brokers.",
        "A metadata response listed no brokers.",
    ),
    ClientError(
        "TooManyInFlightRequests", "R", "Too many requests are in flight on this connection.",
        "The connection's limit of unanswered requests is reached.",
    ),
    ClientError(
        "Cancelled", "R", "The request was cancelled.",
        """A request was abandoned before it got a response (e.g. its connection was
        closed on purpose).""",
    ),
    ClientError(
        "KafkaTimeoutError", "", "The operation timed out.",
        """A client-side deadline passed (e.g. ``send()`` waiting for metadata or buffer
        space, or ``request_timeout_ms`` without an answer).

        Not retriable: the caller's time budget is spent. Code that wants to retry a
        request whose connection timed out should treat it as a connection failure.""",
    ),
    # Protocol, versions and bytes.
    ClientError(
        "KafkaProtocolError", "R", "Malformed or undecodable protocol frame.",
        """A frame from the broker could not be decoded. The connection is closed; the
        request may be retried on a new one.""",
    ),
    ClientError(
        "CorrelationIdError", "", "Response correlation id does not match any request.",
        "A response's correlation id matched no request in flight.",
        base="KafkaProtocolError",
    ),
    ClientError(
        "UnrecognizedBrokerVersion", "F", "Unrecognized broker version.",
        "The broker's version could not be determined from its ApiVersions answer.",
    ),
    ClientError(
        "UnsupportedCodecError", "", "The compression codec's library is not installed.",
        """The compression library for a codec is not installed; the message names the
        package to install.""",
    ),
    ClientError(
        "SerializationError", "", "Serialization failed.",
        "A key or value serializer/deserializer failed.",
    ),
    ClientError(
        "RecordTooLargeError", "", "A fetched record is larger than max_partition_fetch_bytes.",
        """The first record batch at a partition's position never arrived whole.

        With Fetch v0-v2 (before KIP-74) a batch larger than the partition's fetch limit
        comes back cut; the consumer grows the limit up to its cap first. From v3 a broker
        returns such a batch whole, so an incomplete first batch means a broken response;
        the consumer fetches once more before raising. The message names topic, partition
        and offset, and ``getmany()``/``getone()`` raise it until the application seeks.""",
    ),
    # Authentication.
    ClientError(
        "AuthenticationMethodNotSupported", "F",
        "The SASL mechanism is not supported by the client.",
        "The requested SASL mechanism is not supported by this client.",
    ),
    ClientError(
        "AuthenticationFailedError", "F", "Authentication failed.",
        """Authentication failed on the client side (e.g. the SCRAM server signature did
        not verify). Broker-reported failures are ``SaslAuthenticationFailed``.""",
    ),
    # Producer and consumer.
    ClientError(
        "ProducerClosed", "F", "The producer is closed.",
        "The producer is stopped; no more records can be sent.",
    ),
    ClientError(
        "TransactionAbortedError", "", "Failing the record since its transaction was aborted.",
        "A record was not sent because its transaction was aborted.",
    ),
    ClientError(
        "ConsumerStoppedError", "", "The consumer is stopped.",
        "Raised by the consumer's ``get*`` methods, even pending ones, once it is stopped.",
    ),
    ClientError(
        "NoOffsetForPartitionError", "", "No offset for the partition and no reset policy.",
        'No committed offset exists and ``auto_offset_reset`` is ``"none"``.',
    ),
    ClientError(
        "CommitFailedError", "",
        (
            "Commit cannot be completed since the group has already rebalanced and "
            "assigned the partitions to another member. This means that the time between "
            "subsequent calls to getone()/getmany() was longer than max_poll_interval_ms, "
            "which typically implies that the processing loop spends too much time on each "
            "batch. You can address this either by increasing max_poll_interval_ms or by "
            "reducing the maximum size of batches returned by getmany() with "
            "max_poll_records; records from the uncommitted batch will be delivered again."
        ),
        "The offset commit was rejected because the group rebalanced meanwhile.",
    ),
    ClientError(
        "QuotaViolationError", "", "Quota violated.",
        "A client-side quota was exceeded (kept from aiokafka).",
    ),
)  # fmt: skip


def _render_class(error: ClientError) -> str:
    doc = "\n".join(
        f"    {line}" if line and i else line
        for i, line in enumerate(inspect.cleandoc(error.doc).split("\n"))
    )
    lines = [
        f"class {error.name}({error.base}):",
        f'    """{doc}"""',
        "",
        f"    message = {string_literal(error.message, '    ')}",
        *(f"    {FLAGS[flag]} = True" for flag in error.flags),
    ]
    return "\n".join(lines) + "\n"


def render(errors: tuple[ClientError, ...]) -> str:
    """The full text of ``aiokafka/_gen/client_errors.py``."""
    names = [e.name for e in errors]
    if len(set(names)) != len(names):
        raise SystemExit("a client error class is listed twice")
    for i, error in enumerate(errors):
        if error.base != "KafkaError" and error.base not in names[:i]:
            raise SystemExit(f"{error.name} is listed before its base {error.base}")
        if set(error.flags) - set(FLAGS):
            raise SystemExit(f"{error.name} has unknown flags {error.flags!r}")
    out = [
        "# Generated by tools/codegen/client_errors.py from its table. DO NOT EDIT.",
        "# Regenerate with `python -m tools.codegen`.",
        "",
        '"""The errors aiokafka detects itself (import them from aiokafka.errors)."""',
        "",
        "from __future__ import annotations",
        "",
        "from aiokafka._errors_base import KafkaError",
        "",
    ]
    for error in errors:
        out += ["", _render_class(error)]
    out += ["", "__all__ = [", *(f'    "{n}",' for n in sorted(names)), "]"]
    return "\n".join(out) + "\n"


def generate(spec_dir: Path) -> dict[str, str]:
    """Return ``{repo-relative path: file text}`` for the file this generator owns."""
    return {MODULE: render(CLIENT_ERRORS)}
