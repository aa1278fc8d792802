"""Base classes of the exception tree.

They live apart from :mod:`aiokafka.errors` so that the generated per-code classes in
:mod:`aiokafka._gen.error_codes` can subclass them without importing the public module
(which itself imports the generated one). Import them from :mod:`aiokafka.errors`.
"""

from __future__ import annotations

import enum
from typing import ClassVar

__all__ = [
    "AuthorizationError",
    "BrokerResponseError",
    "KafkaError",
    "NoError",
    "TransactionErrorKind",
    "transaction_error_kind",
]


class KafkaError(RuntimeError):
    """Base of every exception aiokafka raises on purpose.

    The class attributes describe what a caller can do about the error, so retry
    policies read flags instead of listing classes:

    Attributes:
        errno: The Kafka protocol error code, or ``None`` for errors detected by the
            client itself.
        retriable: Sending the same request again (maybe after a back-off) may succeed.
        invalid_metadata: The client's cluster metadata is probably stale; refresh it
            before retrying.
        transaction_fatal: A transactional (or idempotent) producer that sees this error
            cannot continue and must be closed; see
            :func:`aiokafka.errors.transaction_error_kind`.
        message: The default human-readable message, used by ``str()`` when the
            exception is raised without arguments.
    """

    errno: ClassVar[int | None] = None
    retriable: ClassVar[bool] = False
    invalid_metadata: ClassVar[bool] = False
    transaction_fatal: ClassVar[bool] = False
    message: ClassVar[str] = ""

    def __str__(self) -> str:
        text = super().__str__() if self.args else self.message
        name = type(self).__name__
        return f"{name}: {text}" if text else name

    @property
    def transaction_kind(self) -> TransactionErrorKind:
        """What a transactional producer does after this error: retry the call
        (``RETRIABLE``), abort the transaction and begin again (``ABORTABLE``), or
        close the producer (``FATAL``); see :func:`aiokafka.errors.transaction_error_kind`."""
        return transaction_error_kind(self)


class BrokerResponseError(KafkaError):
    """A broker answered with a non-zero error code.

    There is one subclass per code (see :func:`aiokafka.errors.for_code`).

    Attributes:
        error_name: Kafka's name of the code, e.g. ``"NOT_LEADER_OR_FOLLOWER"``.
        description: The same text as ``message`` (the name aiokafka used for it).
    """

    error_name: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def __str__(self) -> str:
        return f"[Error {self.errno}] {super().__str__()}"


class AuthorizationError(BrokerResponseError):
    """The authenticated principal lacks an ACL for the resource (Java's
    ``AuthorizationException``); the per-resource classes (topic, group, cluster,
    transactional id, delegation token) subclass this one."""


class NoError(BrokerResponseError):
    """Code 0: the request succeeded.

    Kept so that ``for_code(0) is NoError`` works as in aiokafka, but it is never an
    error: creating an instance raises ``TypeError``, so it cannot be raised by
    mistake. Check ``code != 0`` (or ``cls is not NoError``) before raising.
    """

    errno = 0
    error_name = "NONE"
    message = "No error."
    description = message

    def __init__(self, *args: object) -> None:
        raise TypeError("error code 0 (NONE) means success; NoError cannot be raised")


class TransactionErrorKind(enum.Enum):
    """What a transactional producer does after an error (see
    :func:`transaction_error_kind`)."""

    #: Send the same request again after a back-off; the transaction goes on.
    RETRIABLE = "retriable"
    #: The transaction cannot commit: abort it, then a new one may begin.
    ABORTABLE = "abortable"
    #: The producer cannot continue (fenced, not authorized, broker too old): close it.
    FATAL = "fatal"


def transaction_error_kind(
    error: BaseException | type[BaseException],
) -> TransactionErrorKind:
    """Classify an error for a transactional producer.

    ``transaction_fatal`` wins, then ``retriable``; any other :class:`KafkaError` only
    aborts the current transaction. An exception that is not a :class:`KafkaError`
    means a bug or an unexpected state, so it is fatal.

    Args:
        error: An exception instance or class.

    Returns:
        The kind of the error.
    """
    cls = error if isinstance(error, type) else type(error)
    if not issubclass(cls, KafkaError) or cls.transaction_fatal:
        return TransactionErrorKind.FATAL
    if cls.retriable:
        return TransactionErrorKind.RETRIABLE
    return TransactionErrorKind.ABORTABLE
