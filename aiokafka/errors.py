"""Exceptions raised by aiokafka, and the Kafka error-code table.

Every exception aiokafka raises on purpose derives from :class:`KafkaError`. Errors
that a broker reports as an error code are :class:`BrokerResponseError` subclasses, one
class per code of Kafka's protocol (generated from Kafka's own table);
:func:`for_code` maps a code to its class. Errors the client detects itself
(connection lost, deadline passed, corrupt bytes, closed producer, ...) are the
other subclasses, generated from a table of their own (``tools/codegen/
client_errors.py``) in the same shape. The broker classes are defined when first read
from this module (or at the first :func:`for_code` call), not when it is imported;
every name is listed in ``__all__`` and ``dir()`` all the same.

Class attributes say what to do, so retry code reads flags instead of listing classes:
``retriable`` (sending again may succeed), ``invalid_metadata`` (refresh metadata
first), ``transaction_fatal`` (a transactional producer must be closed; see
:func:`transaction_error_kind`), ``errno`` (the protocol code or ``None``) and
``message`` (the default text, shown when the exception is raised without arguments).

The tree below (kept true by ``tests/unit/test_errors.py``) marks each broker class
with ``[code flags]``, where the flags are ``R`` retriable, ``M`` invalid_metadata and
``F`` transaction_fatal; ``= Name`` lists other names of the same class::

    KafkaError (RuntimeError)
    +-- AuthenticationFailedError [F]
    +-- AuthenticationMethodNotSupported [F]
    +-- BrokerResponseError
    |   +-- UnknownError [-1]
    |   |   |     = UnknownServerError
    |   |   `-- UnrecognizedErrorCode
    |   +-- NoError [0]
    |   +-- OffsetOutOfRangeError [1]
    |   |   `-- LogTruncationError
    |   +-- CorruptRecordError [2 R]
    |   |         = CorruptRecordException
    |   |         = InvalidMessageError
    |   +-- UnknownTopicOrPartitionError [3 R M]
    |   +-- InvalidFetchRequestError [4]
    |   |         = InvalidFetchSizeError
    |   +-- LeaderNotAvailableError [5 R M]
    |   +-- NotLeaderForPartitionError [6 R M]
    |   |         = NotLeaderOrFollowerError
    |   +-- RequestTimedOutError [7 R]
    |   +-- BrokerNotAvailableError [8]
    |   +-- ReplicaNotAvailableError [9 R M]
    |   +-- MessageSizeTooLargeError [10]
    |   +-- StaleControllerEpochError [11]
    |   |         = ControllerMovedError
    |   +-- OffsetMetadataTooLargeError [12]
    |   +-- NetworkError [13 R M]
    |   |         = NetworkExceptionError
    |   |         = StaleLeaderEpochCodeError
    |   +-- CoordinatorLoadInProgressError [14 R]
    |   |         = GroupLoadInProgressError
    |   +-- CoordinatorNotAvailableError [15 R]
    |   |         = GroupCoordinatorNotAvailableError
    |   +-- NotCoordinatorError [16 R]
    |   |         = NotCoordinatorForGroupError
    |   +-- InvalidTopicError [17]
    |   +-- RecordListTooLargeError [18]
    |   |         = RecordBatchTooLargeError
    |   +-- NotEnoughReplicasError [19 R]
    |   +-- NotEnoughReplicasAfterAppendError [20 R]
    |   +-- InvalidRequiredAcksError [21]
    |   +-- IllegalGenerationError [22]
    |   +-- InconsistentGroupProtocolError [23]
    |   +-- InvalidGroupIdError [24]
    |   +-- UnknownMemberIdError [25]
    |   +-- InvalidSessionTimeoutError [26]
    |   +-- RebalanceInProgressError [27]
    |   +-- InvalidCommitOffsetSizeError [28]
    |   +-- InvalidTimestampError [32]
    |   +-- UnsupportedSaslMechanismError [33 F]
    |   +-- IllegalSaslStateError [34 F]
    |   +-- UnsupportedVersionError [35 F]
    |   |   `-- IncompatibleBrokerVersion [F]
    |   +-- TopicAlreadyExistsError [36]
    |   +-- InvalidPartitionsError [37]
    |   +-- InvalidReplicationFactorError [38]
    |   +-- InvalidReplicationAssignmentError [39]
    |   |         = InvalidReplicaAssignmentError
    |   +-- InvalidConfigurationError [40]
    |   +-- NotControllerError [41 R]
    |   +-- InvalidRequestError [42]
    |   +-- UnsupportedForMessageFormatError [43 F]
    |   +-- PolicyViolationError [44]
    |   +-- OutOfOrderSequenceNumber [45]
    |   |   |     = OutOfOrderSequenceNumberError
    |   |   `-- UnknownProducerId [59]
    |   |             = UnknownProducerIdError
    |   +-- DuplicateSequenceNumber [46]
    |   |         = DuplicateSequenceNumberError
    |   +-- InvalidTxnState [48 F]
    |   |         = InvalidTxnStateError
    |   +-- InvalidProducerIdMapping [49]
    |   |         = InvalidProducerIdMappingError
    |   +-- InvalidTransactionTimeout [50 F]
    |   |         = InvalidTransactionTimeoutError
    |   +-- ConcurrentTransactions [51 R]
    |   |         = ConcurrentTransactionsError
    |   +-- TransactionCoordinatorFenced [52 F]
    |   |         = TransactionCoordinatorFencedError
    |   +-- SecurityDisabled [54]
    |   |         = SecurityDisabledError
    |   +-- OperationNotAttempted [55]
    |   |         = OperationNotAttemptedError
    |   +-- KafkaStorageError [56 R M]
    |   +-- LogDirNotFound [57]
    |   |         = LogDirNotFoundError
    |   +-- SaslAuthenticationFailed [58 F]
    |   |         = SaslAuthenticationFailedError
    |   +-- ReassignmentInProgress [60]
    |   |         = ReassignmentInProgressError
    |   +-- DelegationTokenAuthDisabled [61]
    |   |         = DelegationTokenAuthDisabledError
    |   +-- DelegationTokenNotFound [62]
    |   |         = DelegationTokenNotFoundError
    |   +-- DelegationTokenOwnerMismatch [63]
    |   |         = DelegationTokenOwnerMismatchError
    |   +-- DelegationTokenRequestNotAllowed [64]
    |   |         = DelegationTokenRequestNotAllowedError
    |   +-- DelegationTokenExpired [66]
    |   |         = DelegationTokenExpiredError
    |   +-- InvalidPrincipalType [67]
    |   |         = InvalidPrincipalTypeError
    |   +-- NonEmptyGroup [68]
    |   |         = GroupNotEmptyError
    |   |         = NonEmptyGroupError
    |   +-- GroupIdNotFound [69]
    |   |         = GroupIdNotFoundError
    |   +-- FetchSessionIdNotFound [70 R]
    |   |         = FetchSessionIdNotFoundError
    |   +-- InvalidFetchSessionEpoch [71 R]
    |   |         = InvalidFetchSessionEpochError
    |   +-- ListenerNotFound [72 R M]
    |   |         = ListenerNotFoundError
    |   +-- TopicDeletionDisabledError [73]
    |   +-- FencedLeaderEpochError [74 R M]
    |   +-- UnknownLeaderEpochError [75 R]
    |   +-- UnsupportedCompressionTypeError [76]
    |   +-- StaleBrokerEpochError [77]
    |   +-- OffsetNotAvailableError [78 R]
    |   +-- MemberIdRequired [79]
    |   |         = MemberIdRequiredError
    |   +-- PreferredLeaderNotAvailableError [80 R M]
    |   +-- GroupMaxSizeReachedError [81]
    |   +-- FencedInstanceIdError [82]
    |   +-- EligibleLeadersNotAvailableError [83 R M]
    |   +-- ElectionNotNeededError [84 R M]
    |   +-- NoReassignmentInProgressError [85]
    |   +-- GroupSubscribedToTopicError [86]
    |   +-- InvalidRecordError [87]
    |   +-- UnstableOffsetCommitError [88 R]
    |   +-- ThrottlingQuotaExceededError [89 R]
    |   +-- ProducerFenced [90 F]
    |   |   |     = ProducerFencedError
    |   |   `-- InvalidProducerEpoch [47 F]
    |   |             = InvalidProducerEpochError
    |   +-- ResourceNotFoundError [91]
    |   +-- DuplicateResourceError [92]
    |   +-- UnacceptableCredentialError [93]
    |   +-- InconsistentVoterSetError [94]
    |   +-- InvalidUpdateVersionError [95]
    |   +-- FeatureUpdateFailedError [96]
    |   +-- PrincipalDeserializationError [97]
    |   |         = PrincipalDeserializationFailureError
    |   +-- SnapshotNotFoundError [98]
    |   +-- UnknownTopicIdError [100 R M]
    |   +-- DuplicateBrokerRegistrationError [101]
    |   +-- BrokerIdNotRegisteredError [102]
    |   +-- InconsistentTopicIdError [103 R M]
    |   +-- InconsistentClusterIdError [104]
    |   +-- TransactionalIdNotFoundError [105]
    |   +-- FetchSessionTopicIdError [106 R]
    |   +-- IneligibleReplicaError [107]
    |   +-- NewLeaderElectedError [108]
    |   +-- OffsetMovedToTieredStorageError [109]
    |   +-- FencedMemberEpochError [110]
    |   +-- UnreleasedInstanceIdError [111]
    |   +-- UnsupportedAssignorError [112]
    |   +-- StaleMemberEpochError [113]
    |   +-- MismatchedEndpointTypeError [114]
    |   +-- UnsupportedEndpointTypeError [115]
    |   +-- UnknownControllerIdError [116]
    |   +-- UnknownSubscriptionIdError [117]
    |   +-- TelemetryTooLargeError [118]
    |   +-- InvalidRegistrationError [119]
    |   +-- TransactionAbortableError [120]
    |   +-- InvalidRecordStateError [121]
    |   +-- ShareSessionNotFoundError [122 R]
    |   +-- InvalidShareSessionEpochError [123 R]
    |   +-- FencedStateEpochError [124]
    |   +-- InvalidVoterKeyError [125]
    |   +-- DuplicateVoterError [126]
    |   +-- VoterNotFoundError [127]
    |   +-- InvalidRegularExpressionError [128]
    |   `-- AuthorizationError
    |       +-- TopicAuthorizationFailedError [29]
    |       +-- GroupAuthorizationFailedError [30]
    |       +-- ClusterAuthorizationFailedError [31 F]
    |       +-- TransactionalIdAuthorizationFailed [53 F]
    |       |         = TransactionIdAuthorizationFailed
    |       |         = TransactionalIdAuthorizationFailedError
    |       `-- DelegationTokenAuthorizationFailed [65]
    |                 = DelegationTokenAuthorizationFailedError
    +-- Cancelled [R]
    +-- CommitFailedError
    +-- ConsumerStoppedError
    +-- IllegalArgumentError
    +-- IllegalOperation
    +-- IllegalStateError
    +-- KafkaConfigurationError
    +-- KafkaConnectionError [R M]
    +-- KafkaProtocolError [R]
    |   `-- CorrelationIdError [R]
    +-- KafkaTimeoutError
    +-- KafkaUnavailableError
    +-- MetadataEmptyBrokerList [R]
    +-- NoBrokersAvailable [R M]
    +-- NoOffsetForPartitionError
    +-- NodeNotReadyError [R]
    +-- ProducerClosed [F]
    +-- QuotaViolationError
    +-- RecordTooLargeError
    +-- SerializationError
    +-- StaleMetadata [R M]
    +-- TooManyInFlightRequests [R]
    +-- TransactionAbortedError
    +-- UnrecognizedBrokerVersion [F]
    `-- UnsupportedCodecError
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from aiokafka._errors_base import (
    AuthorizationError,
    BrokerResponseError,
    KafkaError,
    NoError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka._gen import client_errors as _client
from aiokafka._gen.client_errors import *  # noqa: F403 - the errors the client detects
from aiokafka._gen.error_names import ERROR_NAMES

if TYPE_CHECKING:
    from aiokafka._error_table import (
        IncompatibleBrokerVersion,
        LogTruncationError,
        UnrecognizedErrorCode,
    )
    from aiokafka._error_table import (
        kafka_errors as kafka_errors,
    )
    from aiokafka._gen import error_codes as _codes
    from aiokafka._gen.error_codes import *  # noqa: F403 - the generated per-code classes

__all__ = [
    "AuthorizationError",
    "BrokerResponseError",
    "IncompatibleBrokerVersion",
    "KafkaError",
    "LogTruncationError",
    "NoError",
    "TransactionErrorKind",
    "UnrecognizedErrorCode",
    "for_code",
    "transaction_error_kind",
]
# The errors the client detects itself, generated from one table (tools/codegen/
# client_errors.py) in the same shape as the per-code classes.
__all__ += _client.__all__
# The generated per-code classes (and ERROR_CLASSES), by name: the table itself loads
# on first use (see __getattr__ below).
if TYPE_CHECKING:
    __all__ += _codes.__all__
else:
    __all__ += ERROR_NAMES


# -- code lookup --------------------------------------------------------------------
#
# The broker error classes (one per protocol code, generated), the three classes
# derived from them (LogTruncationError, IncompatibleBrokerVersion,
# UnrecognizedErrorCode) and kafka_errors live in aiokafka/_error_table.py, which
# loads on first use (issue 14): the first read of one of these names here (PEP 562;
# the value then stays in this module) or the first for_code() call. A program that
# imports the clients but never sees a broker error does not define 128 classes.


def _error_table() -> ModuleType:
    return importlib.import_module("aiokafka._error_table")


def for_code(error_code: int) -> type[BrokerResponseError]:
    """Return the exception class for a protocol error code.

    Args:
        error_code: The error code from a response (an int16).

    Returns:
        The class for ``error_code``. Code 0 gives :class:`NoError`, which cannot be
        instantiated: check for success first. A code missing from the table (e.g.
        from a newer broker) gives a cached subclass of :class:`UnrecognizedErrorCode`
        (hence of :class:`UnknownError`) whose ``errno`` is ``error_code``.

    Raises:
        TypeError: ``error_code`` is not an int.
        ValueError: ``error_code`` is outside the int16 range.
    """
    return _error_table().for_code(error_code)  # type: ignore[no-any-return]


def __getattr__(name: str) -> Any:
    # Dunder look-ups (the import system asks for __path__) never load the table.
    if name.startswith("__") or not hasattr(table := _error_table(), name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(table, name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _adopt_classes() -> None:
    # Show the classes defined in the private modules as aiokafka.errors.X in
    # tracebacks and docs; pickle finds them there too, since this module exports them.
    # (aiokafka/_error_table.py adopts the classes it defines or loads.)
    for name in __all__:
        obj = globals().get(name)  # the table's names are not loaded yet
        if isinstance(obj, type) and obj.__module__ != __name__:
            obj.__module__ = __name__


_adopt_classes()
