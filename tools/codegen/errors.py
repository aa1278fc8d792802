"""Generate ``aiokafka/_gen/error_codes.py`` from Kafka's ``errors.json``.

``errors.json`` gives every protocol error code with its NAME, default message, the
Java exception class and whether that class is retriable / signals stale metadata.
This module adds what the JSON cannot know: the Python class names. Names that
aiokafka (0.8 and later) exported keep working, as the class or as an alias; codes
aiokafka never named get the Java exception's name with ``Exception`` turned into
``Error``.

The generated module holds only the per-code classes, their aliases and the
code-to-class table. The base classes are hand-written in ``aiokafka/_errors_base.py``
and the public surface is ``aiokafka/errors.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OUTPUT_DIRS = ("aiokafka/_gen",)

PACKAGE = "aiokafka/_gen"
MODULE = f"{PACKAGE}/error_codes.py"
# The same public names as strings: aiokafka.errors lists them (__all__, dir()) and
# resolves each on first use without loading the table at import (issue 14).
NAMES_MODULE = f"{PACKAGE}/error_names.py"

# Kafka NAME -> (class name, aliases...). The class name is aiokafka's where aiokafka
# had one, except where that name was misleading (code 13 was "StaleLeaderEpochCode").
# aiokafka's transaction-era names lack the ``Error`` suffix, so the suffixed spelling
# (kafka-python's) is added as an alias for them.
CLASS_NAMES: dict[str, tuple[str, ...]] = {
    "UNKNOWN_SERVER_ERROR": ("UnknownError", "UnknownServerError"),
    "OFFSET_OUT_OF_RANGE": ("OffsetOutOfRangeError",),
    "CORRUPT_MESSAGE": ("CorruptRecordError", "CorruptRecordException", "InvalidMessageError"),
    "UNKNOWN_TOPIC_OR_PARTITION": ("UnknownTopicOrPartitionError",),
    "INVALID_FETCH_SIZE": ("InvalidFetchRequestError", "InvalidFetchSizeError"),
    "LEADER_NOT_AVAILABLE": ("LeaderNotAvailableError",),
    "NOT_LEADER_OR_FOLLOWER": ("NotLeaderForPartitionError", "NotLeaderOrFollowerError"),
    "REQUEST_TIMED_OUT": ("RequestTimedOutError",),
    "BROKER_NOT_AVAILABLE": ("BrokerNotAvailableError",),
    "REPLICA_NOT_AVAILABLE": ("ReplicaNotAvailableError",),
    "MESSAGE_TOO_LARGE": ("MessageSizeTooLargeError",),
    "STALE_CONTROLLER_EPOCH": ("StaleControllerEpochError", "ControllerMovedError"),
    "OFFSET_METADATA_TOO_LARGE": ("OffsetMetadataTooLargeError",),
    "NETWORK_EXCEPTION": ("NetworkError", "StaleLeaderEpochCodeError", "NetworkExceptionError"),
    "COORDINATOR_LOAD_IN_PROGRESS": (
        "CoordinatorLoadInProgressError",
        "GroupLoadInProgressError",
    ),
    "COORDINATOR_NOT_AVAILABLE": (
        "CoordinatorNotAvailableError",
        "GroupCoordinatorNotAvailableError",
    ),
    "NOT_COORDINATOR": ("NotCoordinatorError", "NotCoordinatorForGroupError"),
    "INVALID_TOPIC_EXCEPTION": ("InvalidTopicError",),
    "RECORD_LIST_TOO_LARGE": ("RecordListTooLargeError", "RecordBatchTooLargeError"),
    "NOT_ENOUGH_REPLICAS": ("NotEnoughReplicasError",),
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": ("NotEnoughReplicasAfterAppendError",),
    "INVALID_REQUIRED_ACKS": ("InvalidRequiredAcksError",),
    "ILLEGAL_GENERATION": ("IllegalGenerationError",),
    "INCONSISTENT_GROUP_PROTOCOL": ("InconsistentGroupProtocolError",),
    "INVALID_GROUP_ID": ("InvalidGroupIdError",),
    "UNKNOWN_MEMBER_ID": ("UnknownMemberIdError",),
    "INVALID_SESSION_TIMEOUT": ("InvalidSessionTimeoutError",),
    "REBALANCE_IN_PROGRESS": ("RebalanceInProgressError",),
    "INVALID_COMMIT_OFFSET_SIZE": ("InvalidCommitOffsetSizeError",),
    "TOPIC_AUTHORIZATION_FAILED": ("TopicAuthorizationFailedError",),
    "GROUP_AUTHORIZATION_FAILED": ("GroupAuthorizationFailedError",),
    "CLUSTER_AUTHORIZATION_FAILED": ("ClusterAuthorizationFailedError",),
    "INVALID_TIMESTAMP": ("InvalidTimestampError",),
    "UNSUPPORTED_SASL_MECHANISM": ("UnsupportedSaslMechanismError",),
    "ILLEGAL_SASL_STATE": ("IllegalSaslStateError",),
    "UNSUPPORTED_VERSION": ("UnsupportedVersionError",),
    "TOPIC_ALREADY_EXISTS": ("TopicAlreadyExistsError",),
    "INVALID_PARTITIONS": ("InvalidPartitionsError",),
    "INVALID_REPLICATION_FACTOR": ("InvalidReplicationFactorError",),
    "INVALID_REPLICA_ASSIGNMENT": (
        "InvalidReplicationAssignmentError",
        "InvalidReplicaAssignmentError",
    ),
    "INVALID_CONFIG": ("InvalidConfigurationError",),
    "NOT_CONTROLLER": ("NotControllerError",),
    "INVALID_REQUEST": ("InvalidRequestError",),
    "UNSUPPORTED_FOR_MESSAGE_FORMAT": ("UnsupportedForMessageFormatError",),
    "POLICY_VIOLATION": ("PolicyViolationError",),
    "OUT_OF_ORDER_SEQUENCE_NUMBER": ("OutOfOrderSequenceNumber", "OutOfOrderSequenceNumberError"),
    "DUPLICATE_SEQUENCE_NUMBER": ("DuplicateSequenceNumber", "DuplicateSequenceNumberError"),
    "INVALID_PRODUCER_EPOCH": ("InvalidProducerEpoch", "InvalidProducerEpochError"),
    "INVALID_TXN_STATE": ("InvalidTxnState", "InvalidTxnStateError"),
    "INVALID_PRODUCER_ID_MAPPING": ("InvalidProducerIdMapping", "InvalidProducerIdMappingError"),
    "INVALID_TRANSACTION_TIMEOUT": (
        "InvalidTransactionTimeout",
        "InvalidTransactionTimeoutError",
    ),
    "CONCURRENT_TRANSACTIONS": ("ConcurrentTransactions", "ConcurrentTransactionsError"),
    "TRANSACTION_COORDINATOR_FENCED": (
        "TransactionCoordinatorFenced",
        "TransactionCoordinatorFencedError",
    ),
    # aiokafka's docs spell it "TransactionIdAuthorizationFailed"; its code did not.
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": (
        "TransactionalIdAuthorizationFailed",
        "TransactionalIdAuthorizationFailedError",
        "TransactionIdAuthorizationFailed",
    ),
    "SECURITY_DISABLED": ("SecurityDisabled", "SecurityDisabledError"),
    "OPERATION_NOT_ATTEMPTED": ("OperationNotAttempted", "OperationNotAttemptedError"),
    "KAFKA_STORAGE_ERROR": ("KafkaStorageError",),
    "LOG_DIR_NOT_FOUND": ("LogDirNotFound", "LogDirNotFoundError"),
    "SASL_AUTHENTICATION_FAILED": ("SaslAuthenticationFailed", "SaslAuthenticationFailedError"),
    "UNKNOWN_PRODUCER_ID": ("UnknownProducerId", "UnknownProducerIdError"),
    "REASSIGNMENT_IN_PROGRESS": ("ReassignmentInProgress", "ReassignmentInProgressError"),
    "DELEGATION_TOKEN_AUTH_DISABLED": (
        "DelegationTokenAuthDisabled",
        "DelegationTokenAuthDisabledError",
    ),
    "DELEGATION_TOKEN_NOT_FOUND": ("DelegationTokenNotFound", "DelegationTokenNotFoundError"),
    "DELEGATION_TOKEN_OWNER_MISMATCH": (
        "DelegationTokenOwnerMismatch",
        "DelegationTokenOwnerMismatchError",
    ),
    "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED": (
        "DelegationTokenRequestNotAllowed",
        "DelegationTokenRequestNotAllowedError",
    ),
    "DELEGATION_TOKEN_AUTHORIZATION_FAILED": (
        "DelegationTokenAuthorizationFailed",
        "DelegationTokenAuthorizationFailedError",
    ),
    "DELEGATION_TOKEN_EXPIRED": ("DelegationTokenExpired", "DelegationTokenExpiredError"),
    "INVALID_PRINCIPAL_TYPE": ("InvalidPrincipalType", "InvalidPrincipalTypeError"),
    "NON_EMPTY_GROUP": ("NonEmptyGroup", "NonEmptyGroupError", "GroupNotEmptyError"),
    "GROUP_ID_NOT_FOUND": ("GroupIdNotFound", "GroupIdNotFoundError"),
    "FETCH_SESSION_ID_NOT_FOUND": ("FetchSessionIdNotFound", "FetchSessionIdNotFoundError"),
    "INVALID_FETCH_SESSION_EPOCH": ("InvalidFetchSessionEpoch", "InvalidFetchSessionEpochError"),
    "LISTENER_NOT_FOUND": ("ListenerNotFound", "ListenerNotFoundError"),
    "MEMBER_ID_REQUIRED": ("MemberIdRequired", "MemberIdRequiredError"),
    "PRINCIPAL_DESERIALIZATION_FAILURE": (
        "PrincipalDeserializationError",
        "PrincipalDeserializationFailureError",
    ),
    "PRODUCER_FENCED": ("ProducerFenced", "ProducerFencedError"),
}

# Parents that differ from what the Java superclass chain gives. aiokafka reported an
# INVALID_PRODUCER_EPOCH from the transaction coordinator as ProducerFenced, so an
# ``except ProducerFenced`` must keep catching it.
PARENT_OVERRIDES: dict[str, str] = {"INVALID_PRODUCER_EPOCH": "PRODUCER_FENCED"}

# Hand-written intermediate bases (in aiokafka/_errors_base.py) for Java superclasses.
JAVA_BASES: dict[str, str] = {"AuthorizationException": "AuthorizationError"}

# Codes after which a transactional or idempotent producer cannot go on: it was fenced,
# is not allowed to use its transactional id, or talks to a broker that cannot do
# transactions. This follows the Java TransactionManager's "fatal" cases. Any other
# non-retriable error only aborts the current transaction.
TRANSACTION_FATAL: frozenset[str] = frozenset(
    {
        "PRODUCER_FENCED",
        "INVALID_PRODUCER_EPOCH",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "CLUSTER_AUTHORIZATION_FAILED",
        "INVALID_TXN_STATE",
        "TRANSACTION_COORDINATOR_FENCED",
        "INVALID_TRANSACTION_TIMEOUT",
        "UNSUPPORTED_VERSION",
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        # Authentication failures are fatal for the Java producer too.
        "SASL_AUTHENTICATION_FAILED",
        "UNSUPPORTED_SASL_MECHANISM",
        "ILLEGAL_SASL_STATE",
    }
)

# Code 0 is success: NoError is hand-written so that it can refuse to be instantiated.
NONE_NAME = "NONE"
HAND_WRITTEN = ("AuthorizationError", "BrokerResponseError", "NoError")

_SOURCE_COMMIT = "1eb7644349cb07139d6a3c1ad1986979647cac99"


@dataclass(frozen=True)
class ErrorSpec:
    """One row of errors.json plus the Python naming decided here."""

    code: int
    name: str
    message: str
    java_exception: str
    java_chain: tuple[str, ...]
    retriable: bool
    invalid_metadata: bool
    class_name: str
    aliases: tuple[str, ...]


def java_to_python_name(java_exception: str) -> str:
    """``NotControllerException`` -> ``NotControllerError``; ``Foo`` -> ``FooError``."""
    base = re.sub(r"Exception$", "", java_exception)
    return base if base.endswith("Error") else base + "Error"


def load_specs(spec_dir: Path) -> list[ErrorSpec]:
    """Parse ``errors.json`` and attach the class names; code NONE is left out."""
    raw: list[dict[str, Any]] = json.loads((spec_dir / "errors.json").read_text("utf-8"))
    specs = []
    for row in raw:
        if row["name"] == NONE_NAME:
            continue
        names = CLASS_NAMES.get(row["name"]) or (java_to_python_name(row["java_exception"]),)
        specs.append(
            ErrorSpec(
                code=row["code"],
                name=row["name"],
                message=row["message"] or "",
                java_exception=row["java_exception"],
                java_chain=tuple(row["java_exception_chain"]),
                retriable=bool(row["retriable"]),
                invalid_metadata=bool(row["invalid_metadata"]),
                class_name=names[0],
                aliases=names[1:],
            )
        )
    known = {s.name for s in specs}
    for table, names_used in (
        ("CLASS_NAMES", set(CLASS_NAMES)),
        ("PARENT_OVERRIDES", set(PARENT_OVERRIDES) | set(PARENT_OVERRIDES.values())),
        ("TRANSACTION_FATAL", set(TRANSACTION_FATAL)),
    ):
        if names_used - known:
            raise SystemExit(f"{table} has names not in errors.json: {sorted(names_used - known)}")
    seen: set[str] = set(HAND_WRITTEN)
    for s in specs:
        for n in (s.class_name, *s.aliases):
            if n in seen:
                raise SystemExit(f"error class name {n} is used twice")
            seen.add(n)
    return sorted(specs, key=lambda s: s.code)


def _parent_name(
    spec: ErrorSpec, by_java: dict[str, ErrorSpec], by_name: dict[str, ErrorSpec]
) -> str:
    if spec.name in PARENT_OVERRIDES:
        return by_name[PARENT_OVERRIDES[spec.name]].class_name
    # The nearest Java superclass that is itself a per-code class or a known base.
    for java in spec.java_chain[1:]:
        if java in by_java:
            return by_java[java].class_name
        if java in JAVA_BASES:
            return JAVA_BASES[java]
    return "BrokerResponseError"


def _split_string(text: str, width: int) -> list[str]:
    """Cut ``text`` at spaces into pieces of about ``width`` whose concatenation is text."""
    pieces: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if current and len(candidate) > width:
            pieces.append(current + " ")
            current = word
        else:
            current = candidate
    pieces.append(current)
    if "".join(pieces) != text:  # e.g. runs of spaces, which split() cannot keep
        raise SystemExit(f"cannot split {text!r} losslessly")
    return pieces


def _quote(text: str) -> str:
    # JSON string escapes are valid Python escapes; non-ASCII stays as is, because
    # JSON's surrogate-pair escapes would mean two characters to Python.
    return json.dumps(text, ensure_ascii=False)


def string_literal(text: str, indent: str) -> str:
    """``text`` as Python source: one literal, or implicitly joined pieces of ~72
    characters in parentheses (continuation lines indented by ``indent``)."""
    pieces = _split_string(text, 72)
    if len(pieces) == 1:
        return _quote(text)
    inner = "".join(f"{indent}    {_quote(p)}\n" for p in pieces)
    return f"(\n{inner}{indent})"


def _docstring(spec: ErrorSpec) -> str:
    text = f"{spec.name} ({spec.code}): {spec.message}".replace("\\", "\\\\")
    text = text.replace('"', '\\"')  # also keeps a trailing quote off the closing """
    lines = _split_string(text, 80)
    body = "\n    ".join(line.rstrip() for line in lines)
    return f'    """{body}"""'


def _render_class(spec: ErrorSpec, parent: str) -> str:
    lines = [
        f"class {spec.class_name}({parent}):",
        _docstring(spec),
        "",
        f"    errno = {spec.code}",
        f"    error_name = {_quote(spec.name)}",
        f"    message = {string_literal(spec.message, '    ')}",
        "    description = message",
        f"    retriable = {spec.retriable}",
        f"    invalid_metadata = {spec.invalid_metadata}",
        f"    transaction_fatal = {spec.name in TRANSACTION_FATAL}",
    ]
    text = "\n".join(lines) + "\n"
    if spec.aliases:
        text += "\n\n" + "".join(f"{alias} = {spec.class_name}\n" for alias in spec.aliases)
    return text


def _ordered(specs: list[ErrorSpec], parents: dict[str, str]) -> list[ErrorSpec]:
    """Code order, except that a class is always written after its parent."""
    by_class = {s.class_name: s for s in specs}
    done: set[str] = set()
    out: list[ErrorSpec] = []

    def visit(spec: ErrorSpec) -> None:
        if spec.class_name in done:
            return
        parent = by_class.get(parents[spec.class_name])
        if parent is not None:
            visit(parent)
        done.add(spec.class_name)
        out.append(spec)

    for s in specs:
        visit(s)
    return out


HEADER = f"""\
# Generated by tools/codegen/errors.py from Apache Kafka's errors.json. DO NOT EDIT.
# Regenerate with `python -m tools.codegen`.
#
# Source data: Apache Kafka, clients/src/main/java/org/apache/kafka/common/protocol/
# Errors.java and common/errors/ at commit {_SOURCE_COMMIT},
# Copyright The Apache Software Foundation, licensed under the Apache License, Version 2.0.
"""


def parents_of(specs: list[ErrorSpec]) -> dict[str, str]:
    """Class name -> the name of its base class, for every per-code class."""
    by_java = {s.java_exception: s for s in specs}
    by_name = {s.name: s for s in specs}
    return {s.class_name: _parent_name(s, by_java, by_name) for s in specs}


def render(specs: list[ErrorSpec]) -> str:
    """The full text of ``aiokafka/_gen/error_codes.py``."""
    parents = parents_of(specs)
    used_bases = sorted({p for p in parents.values() if p in HAND_WRITTEN} | {"NoError"})
    out = [
        HEADER,
        '"""One exception class per Kafka protocol error code (import from aiokafka.errors)."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        f"from aiokafka._errors_base import {', '.join(used_bases)}",
        "",
    ]
    for spec in _ordered(specs, parents):
        out.append("")
        out.append(_render_class(spec, parents[spec.class_name]))
    out.append("")
    out.append("# Code -> class. Code 0 maps to NoError, which cannot be instantiated.")
    out.append("ERROR_CLASSES: Final[dict[int, type[BrokerResponseError]]] = {")
    rows = [(0, "NoError")] + [(s.code, s.class_name) for s in specs]
    for code, cls in sorted(rows):
        out.append(f"    {code}: {cls},")
    out.append("}")
    out.append("")
    out.append("__all__ = [")
    for n in _public_names(specs):
        out.append(f'    "{n}",')
    out.append("]")
    return "\n".join(out) + "\n"


def _public_names(specs: list[ErrorSpec]) -> list[str]:
    return ["ERROR_CLASSES", *(n for s in specs for n in (s.class_name, *s.aliases))]


def render_names(specs: list[ErrorSpec]) -> str:
    """The full text of ``aiokafka/_gen/error_names.py``."""
    from tools.codegen.error_tree import render_tree  # it imports this module

    out = [
        HEADER,
        '"""What :mod:`aiokafka.errors` shows without loading the table: the public names',
        "of :mod:`aiokafka._gen.error_codes` (its ``__all__``), as strings, which it lists",
        'and loads on first use, and the exception tree its docstring ends with."""',
        "",
        "ERROR_NAMES = (",
        *(f'    "{n}",' for n in _public_names(specs)),
        ")",
        "",
        "# Drawn by tools/codegen/error_tree.py from the error tables.",
        'ERROR_TREE = """',
        *(f"    {line}" for line in render_tree(specs)),
        '"""',
    ]
    return "\n".join(out) + "\n"


def generate(spec_dir: Path) -> dict[str, str]:
    """Return ``{repo-relative path: file text}`` for every file this generator owns."""
    specs = load_specs(spec_dir)
    init = (
        "# Generated by tools/codegen/errors.py. DO NOT EDIT.\n"
        '"""Generated modules (from Apache Kafka\'s definitions, Apache License 2.0)."""\n'
    )
    return {
        f"{PACKAGE}/__init__.py": init,
        MODULE: render(specs),
        NAMES_MODULE: render_names(specs),
    }
