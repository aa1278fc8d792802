"""The error table, for_code, the documented tree and aiokafka's names."""

from __future__ import annotations

import inspect
import json
import pickle
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from aiokafka import errors
from aiokafka.errors import (
    BrokerResponseError,
    KafkaError,
    NoError,
    TransactionErrorKind,
    UnknownError,
    UnrecognizedErrorCode,
    for_code,
    transaction_error_kind,
)

SPEC_DIR = Path(__file__).resolve().parents[3] / "shared" / "kafka-protocol"
ERRORS_JSON: list[dict[str, Any]] = json.loads((SPEC_DIR / "errors.json").read_text("utf-8"))
REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"

# Every name aiokafka 0.8-0.12 exported from aiokafka.errors (its __all__, the classes
# it defined itself and the ones its docs list).
AIOKAFKA_NAMES = """
ConsumerStoppedError NoOffsetForPartitionError RecordTooLargeError ProducerClosed KafkaError
IllegalStateError IllegalArgumentError NoBrokersAvailable NodeNotReadyError KafkaProtocolError
CorrelationIdError Cancelled TooManyInFlightRequests StaleMetadata UnrecognizedBrokerVersion
IncompatibleBrokerVersion CommitFailedError AuthenticationMethodNotSupported
AuthenticationFailedError BrokerResponseError NoError UnknownError OffsetOutOfRangeError
CorruptRecordException UnknownTopicOrPartitionError InvalidFetchRequestError
LeaderNotAvailableError NotLeaderForPartitionError RequestTimedOutError
BrokerNotAvailableError ReplicaNotAvailableError MessageSizeTooLargeError
StaleControllerEpochError OffsetMetadataTooLargeError StaleLeaderEpochCodeError
GroupLoadInProgressError GroupCoordinatorNotAvailableError NotCoordinatorForGroupError
InvalidTopicError RecordListTooLargeError NotEnoughReplicasError
NotEnoughReplicasAfterAppendError InvalidRequiredAcksError IllegalGenerationError
InconsistentGroupProtocolError InvalidGroupIdError UnknownMemberIdError
InvalidSessionTimeoutError RebalanceInProgressError InvalidCommitOffsetSizeError
TopicAuthorizationFailedError GroupAuthorizationFailedError ClusterAuthorizationFailedError
InvalidTimestampError UnsupportedSaslMechanismError IllegalSaslStateError
UnsupportedVersionError TopicAlreadyExistsError InvalidPartitionsError
InvalidReplicationFactorError InvalidReplicationAssignmentError InvalidConfigurationError
NotControllerError InvalidRequestError UnsupportedForMessageFormatError PolicyViolationError
KafkaUnavailableError KafkaTimeoutError KafkaConnectionError UnsupportedCodecError
CoordinatorNotAvailableError NotCoordinatorError CoordinatorLoadInProgressError
InvalidMessageError IllegalOperation ProducerFenced OutOfOrderSequenceNumber
DuplicateSequenceNumber InvalidProducerEpoch InvalidTxnState InvalidProducerIdMapping
InvalidTransactionTimeout ConcurrentTransactions TransactionCoordinatorFenced
TransactionalIdAuthorizationFailed TransactionIdAuthorizationFailed SecurityDisabled
OperationNotAttempted KafkaStorageError LogDirNotFound SaslAuthenticationFailed
UnknownProducerId ReassignmentInProgress DelegationTokenAuthDisabled DelegationTokenNotFound
DelegationTokenOwnerMismatch DelegationTokenRequestNotAllowed
DelegationTokenAuthorizationFailed DelegationTokenExpired InvalidPrincipalType NonEmptyGroup
GroupIdNotFound FetchSessionIdNotFound InvalidFetchSessionEpoch ListenerNotFound
MemberIdRequired KafkaConfigurationError QuotaViolationError MetadataEmptyBrokerList
for_code
""".split()

# Names other parts of this project rely on (the shared contract).
CONTRACT_NAMES = """
KafkaError KafkaConnectionError KafkaTimeoutError NoBrokersAvailable NodeNotReadyError
IllegalStateError IllegalArgumentError KafkaProtocolError CorruptRecordError
CorruptRecordException UnsupportedCodecError SerializationError ProducerClosed
ConsumerStoppedError MessageSizeTooLargeError UnrecognizedBrokerVersion
AuthenticationFailedError CommitFailedError BrokerResponseError UnknownTopicOrPartitionError
NotLeaderForPartitionError RequestTimedOutError UnsupportedVersionError
SaslAuthenticationFailed IllegalSaslStateError UnsupportedSaslMechanismError
NotControllerError NotCoordinatorError CoordinatorNotAvailableError for_code
""".split()


def test_spec_dir_found() -> None:
    assert len(ERRORS_JSON) > 100


@pytest.mark.parametrize("row", ERRORS_JSON, ids=lambda r: f"{r['code']}:{r['name']}")
def test_every_code_has_a_class_with_the_table_flags(row: dict[str, Any]) -> None:
    cls = for_code(row["code"])
    assert issubclass(cls, BrokerResponseError)
    assert cls.errno == row["code"]
    assert cls.error_name == row["name"]
    assert cls.retriable is row["retriable"]
    assert cls.invalid_metadata is row["invalid_metadata"]
    if row["code"] != 0:
        assert cls.message == row["message"]
        assert cls.description == row["message"]
        assert getattr(errors, cls.__name__) is cls
        assert cls.__name__ in errors.__all__
        assert cls is not UnknownError or row["code"] == -1


def test_classes_are_distinct_per_code() -> None:
    classes = [for_code(r["code"]) for r in ERRORS_JSON]
    assert len(set(classes)) == len(classes)


def test_code_zero_is_no_error_and_cannot_be_raised() -> None:
    assert for_code(0) is NoError
    with pytest.raises(TypeError, match="success"):
        NoError()


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-1, errors.UnknownError),
        (2, errors.CorruptRecordError),
        (3, errors.UnknownTopicOrPartitionError),
        (6, errors.NotLeaderForPartitionError),
        (7, errors.RequestTimedOutError),
        (10, errors.MessageSizeTooLargeError),
        (15, errors.CoordinatorNotAvailableError),
        (16, errors.NotCoordinatorError),
        (35, errors.UnsupportedVersionError),
        (58, errors.SaslAuthenticationFailed),
        (90, errors.ProducerFenced),
    ],
)
def test_for_code_known(code: int, cls: type[BrokerResponseError]) -> None:
    assert for_code(code) is cls


@pytest.mark.parametrize("code", [99, 999, 32767, -2, -32768])
def test_for_code_unknown_keeps_the_number(code: int) -> None:
    cls = for_code(code)
    assert issubclass(cls, UnrecognizedErrorCode)
    assert issubclass(cls, UnknownError)  # aiokafka returned UnknownError here
    assert cls.errno == code
    assert cls is for_code(code)  # cached
    err = cls("detail")
    assert f"[Error {code}]" in str(err)
    assert "detail" in str(err)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is cls
    assert back.args == ("detail",)


def test_for_code_unknown_codes_get_distinct_classes() -> None:
    assert for_code(1000) is not for_code(1001)
    assert not issubclass(for_code(1000), for_code(1001))


@pytest.mark.parametrize("bad", [1.0, "6", None, True])
def test_for_code_rejects_non_int(bad: Any) -> None:
    with pytest.raises(TypeError, match="code"):
        for_code(bad)


@pytest.mark.parametrize("bad", [2**15, -(2**15) - 1])
def test_for_code_rejects_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="code"):
        for_code(bad)


def test_aliases_from_the_issue() -> None:
    assert errors.CorruptRecordException is errors.CorruptRecordError
    assert errors.InvalidMessageError is errors.CorruptRecordError
    assert errors.NotCoordinatorForGroupError is errors.NotCoordinatorError
    assert errors.GroupCoordinatorNotAvailableError is errors.CoordinatorNotAvailableError
    assert errors.GroupLoadInProgressError is errors.CoordinatorLoadInProgressError
    assert errors.NotLeaderOrFollowerError is errors.NotLeaderForPartitionError
    assert errors.ProducerFencedError is errors.ProducerFenced
    assert errors.UnknownServerError is errors.UnknownError


def test_producer_fenced_family() -> None:
    # aiokafka raised ProducerFenced for INVALID_PRODUCER_EPOCH too.
    assert issubclass(errors.InvalidProducerEpoch, errors.ProducerFenced)
    assert errors.ProducerFenced.errno == 90
    # Java: UnknownProducerIdException extends OutOfOrderSequenceException.
    assert issubclass(errors.UnknownProducerId, errors.OutOfOrderSequenceNumber)


def test_authorization_family() -> None:
    for name in (
        "TopicAuthorizationFailedError",
        "GroupAuthorizationFailedError",
        "ClusterAuthorizationFailedError",
        "TransactionalIdAuthorizationFailed",
        "DelegationTokenAuthorizationFailed",
    ):
        assert issubclass(getattr(errors, name), errors.AuthorizationError), name


def test_unnamed_codes_use_the_java_name() -> None:
    assert for_code(128).__name__ == "InvalidRegularExpressionError"
    assert for_code(110).__name__ == "FencedMemberEpochError"
    assert for_code(120).__name__ == "TransactionAbortableError"


@pytest.mark.parametrize("name", AIOKAFKA_NAMES)
def test_aiokafka_name_exists(name: str) -> None:
    assert name in errors.__all__
    obj = getattr(errors, name)
    assert callable(obj)
    if isinstance(obj, type):
        assert issubclass(obj, KafkaError)


@pytest.mark.parametrize("name", CONTRACT_NAMES)
def test_contract_name_exists(name: str) -> None:
    assert name in errors.__all__
    assert getattr(errors, name) is not None


def test_names_listed_in_the_aiokafka_reference_docs_exist() -> None:
    text = (REFERENCE / "aiokafka-0.8-docs.txt").read_text("utf-8")
    documented = set(re.findall(r"aiokafka\.errors\.([A-Za-z_]+)", text))
    assert len(documented) > 40
    missing = sorted(n for n in documented if not hasattr(errors, n))
    assert missing == []


def test_all_is_complete_and_resolvable() -> None:
    assert len(errors.__all__) == len(set(errors.__all__))
    for name in errors.__all__:
        assert hasattr(errors, name), name
    public_classes = {
        name
        for name, obj in vars(errors).items()
        if isinstance(obj, type) and issubclass(obj, BaseException) and not name.startswith("_")
    }
    assert public_classes <= set(errors.__all__)


def test_classes_present_as_aiokafka_errors() -> None:
    assert errors.NotLeaderForPartitionError.__module__ == "aiokafka.errors"
    assert errors.KafkaError.__module__ == "aiokafka.errors"


@pytest.mark.parametrize(
    ("name", "retriable", "invalid_metadata"),
    [
        ("KafkaConnectionError", True, True),
        ("NoBrokersAvailable", True, True),
        ("NodeNotReadyError", True, False),
        ("KafkaProtocolError", True, False),
        ("KafkaTimeoutError", False, False),
        ("IllegalStateError", False, False),
        ("AuthenticationFailedError", False, False),
        ("CommitFailedError", False, False),
        ("StaleMetadata", True, True),
    ],
)
def test_client_side_flags(name: str, retriable: bool, invalid_metadata: bool) -> None:
    cls = getattr(errors, name)
    assert cls.errno is None
    assert cls.retriable is retriable
    assert cls.invalid_metadata is invalid_metadata


def test_incompatible_broker_version_is_an_unsupported_version() -> None:
    assert issubclass(errors.IncompatibleBrokerVersion, errors.UnsupportedVersionError)
    assert for_code(35) is errors.UnsupportedVersionError


def test_str_uses_default_message_or_args() -> None:
    assert str(errors.KafkaConnectionError()) == (
        "KafkaConnectionError: Connection to the broker failed."
    )
    assert str(errors.KafkaConnectionError("to 1.2.3.4:9092")) == (
        "KafkaConnectionError: to 1.2.3.4:9092"
    )
    assert str(errors.RequestTimedOutError()) == (
        "[Error 7] RequestTimedOutError: The request timed out."
    )
    assert str(errors.RequestTimedOutError("topic t")) == "[Error 7] RequestTimedOutError: topic t"


def test_commit_failed_says_what_to_do() -> None:
    text = str(errors.CommitFailedError())
    assert "max_poll_interval_ms" in text
    assert "max_poll_records" in text


def test_every_exported_error_pickles() -> None:
    for name in errors.__all__:
        obj = getattr(errors, name)
        if not (isinstance(obj, type) and issubclass(obj, KafkaError)) or obj is NoError:
            continue
        err = obj("x")
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is obj
        assert back.args == ("x",)


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (errors.ProducerFenced, TransactionErrorKind.FATAL),
        (errors.InvalidProducerEpoch, TransactionErrorKind.FATAL),
        (errors.TransactionalIdAuthorizationFailed, TransactionErrorKind.FATAL),
        (errors.UnsupportedVersionError, TransactionErrorKind.FATAL),
        (errors.ProducerClosed(), TransactionErrorKind.FATAL),
        (ValueError("bug"), TransactionErrorKind.FATAL),
        (errors.ConcurrentTransactions, TransactionErrorKind.RETRIABLE),
        (errors.NotCoordinatorError(), TransactionErrorKind.RETRIABLE),
        (errors.KafkaConnectionError, TransactionErrorKind.RETRIABLE),
        (errors.TopicAuthorizationFailedError, TransactionErrorKind.ABORTABLE),
        (for_code(120), TransactionErrorKind.ABORTABLE),
        (errors.MessageSizeTooLargeError(), TransactionErrorKind.ABORTABLE),
        (errors.UnknownProducerId, TransactionErrorKind.ABORTABLE),
    ],
)
def test_transaction_error_kind(
    error: BaseException | type[BaseException], kind: TransactionErrorKind
) -> None:
    assert transaction_error_kind(error) is kind


# -- the drawn tree -----------------------------------------------------------------


def _label(cls: type) -> str:
    parts = []
    own_errno = vars(cls).get("errno")
    if own_errno is not None:
        parts.append(str(own_errno))
    parts += [flag for attr, flag in _FLAGS if getattr(cls, attr, False)]
    text = cls.__name__
    if parts:
        text += f" [{' '.join(parts)}]"
    return text


_FLAGS = (("retriable", "R"), ("invalid_metadata", "M"), ("transaction_fatal", "F"))


def render_tree() -> str:
    """Draw the exported exception classes as an ASCII tree, aliases on their own lines."""
    names_by_class: dict[type, list[str]] = {}
    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            names_by_class.setdefault(obj, []).append(name)
    children: dict[type, list[type]] = {}
    for cls in names_by_class:
        if cls is KafkaError:
            continue
        (base,) = cls.__bases__  # the tree needs single inheritance
        assert base in names_by_class, f"{cls.__name__}'s base {base.__name__} not exported"
        children.setdefault(base, []).append(cls)

    def key(cls: type) -> tuple[int, int, str]:
        own = vars(cls).get("errno")
        return (0, own, "") if own is not None else (1, 0, cls.__name__)

    lines = [f"KafkaError ({KafkaError.__bases__[0].__name__})"]

    def walk(cls: type, prefix: str) -> None:
        kids = sorted(children.get(cls, []), key=key)
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            lines.append(f"{prefix}{'`-- ' if last else '+-- '}{_label(kid)}")
            inner = prefix + ("    " if last else "|   ")
            bar = "|   " if children.get(kid) else "    "
            for alias in sorted(n for n in names_by_class[kid] if n != kid.__name__):
                lines.append(f"{inner}{bar}  = {alias}")
            walk(kid, inner)

    walk(KafkaError, "")
    return "\n".join(lines)


def _drawn_tree() -> str:
    doc = inspect.getdoc(errors) or ""
    block = doc.split("::", 1)[1]
    return textwrap.dedent(block).strip("\n").rstrip()


def test_docstring_tree_matches_the_hierarchy() -> None:
    expected = render_tree()
    drawn = _drawn_tree()
    assert drawn == expected, "update the tree in aiokafka/errors.py:\n" + expected


def test_generated_module_is_up_to_date() -> None:
    from tools.codegen import errors as generator

    repo = Path(__file__).resolve().parents[2]
    for path, text in generator.generate(SPEC_DIR).items():
        assert (repo / path).read_text("utf-8") == text, f"regenerate {path}"


def test_generator_derives_names_from_java() -> None:
    from tools.codegen.errors import java_to_python_name

    assert java_to_python_name("NotControllerException") == "NotControllerError"
    assert java_to_python_name("InvalidRegularExpression") == "InvalidRegularExpressionError"


def test_errors_structs_and_abc_do_not_import_asyncio() -> None:
    # Protocol and record code imports these; that code must stay free of asyncio.
    import subprocess
    import sys

    code = (
        "import sys, aiokafka.errors, aiokafka.structs, aiokafka.abc; "
        "sys.exit('asyncio' in sys.modules)"
    )
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=repo, check=False)
    assert result.returncode == 0
