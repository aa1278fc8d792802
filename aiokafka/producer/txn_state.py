"""The transaction state machine of a transactional producer (pure: no I/O, no asyncio).

States and the transitions allowed between them (the Java client's
``TransactionManager`` semantics)::

    UNINITIALIZED --init--> INITIALIZING --> READY
    READY --begin--> IN_TRANSACTION
    IN_TRANSACTION --commit--> COMMITTING --> READY
    IN_TRANSACTION --abort--> ABORTING --> READY
    IN_TRANSACTION/COMMITTING --error--> ABORTABLE_ERROR --abort--> ABORTING
    any --fatal error--> FATAL_ERROR (final)

An illegal call raises :class:`~aiokafka.errors.IllegalStateError` saying what the
state is and what to call instead; sending records or offsets outside a transaction
raises :class:`IllegalTransactionOperation`, which is also aiokafka's
:class:`~aiokafka.errors.IllegalOperation` (what aiokafka 0.14 raises there). Once a
fatal error was recorded every later call raises that same error, so a fenced
producer fails fast instead of trying again. An abortable error is raised by every
call except :meth:`TxnStateMachine.begin_abort` as a
:class:`~aiokafka.errors.TransactionAbortableError` whose ``__cause__`` is the
original error.

Besides the state, the machine tracks which partitions and which consumer group were
added to the coordinator's view of the current transaction: the sender must not send
a batch of a partition the coordinator does not know yet.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NoReturn

from aiokafka.errors import (
    IllegalOperation,
    IllegalStateError,
    KafkaError,
    TransactionAbortableError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka.structs import TopicPartition

__all__ = ["IllegalTransactionOperation", "TxnState", "TxnStateMachine"]


class IllegalTransactionOperation(IllegalOperation, IllegalStateError):
    """A transactional call the producer's configuration or state does not allow: no
    ``transactional_id``, or records/offsets sent outside a transaction.

    aiokafka 0.14 raises :class:`~aiokafka.errors.IllegalOperation` there and this
    package raised :class:`~aiokafka.errors.IllegalStateError`; being both, it is
    caught by code written for either.
    """


class TxnState(enum.Enum):
    """Where a transactional producer is."""

    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in-transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable-error"
    FATAL_ERROR = "fatal-error"


S = TxnState

#: The transitions allowed from each state (FATAL_ERROR is reachable from anywhere).
_ALLOWED: dict[TxnState, frozenset[TxnState]] = {
    S.UNINITIALIZED: frozenset({S.INITIALIZING}),
    # INITIALIZING -> INITIALIZING: InitProducerId is retried after a timeout.
    S.INITIALIZING: frozenset({S.READY, S.INITIALIZING}),
    S.READY: frozenset({S.IN_TRANSACTION, S.INITIALIZING}),
    S.IN_TRANSACTION: frozenset({S.COMMITTING, S.ABORTING, S.ABORTABLE_ERROR}),
    S.COMMITTING: frozenset({S.READY, S.ABORTABLE_ERROR}),
    S.ABORTING: frozenset({S.READY, S.INITIALIZING}),
    S.ABORTABLE_ERROR: frozenset({S.ABORTING, S.ABORTABLE_ERROR}),
    S.FATAL_ERROR: frozenset(),
}


class TxnStateMachine:
    """The state of one transactional producer and the partitions of its transaction.

    Attributes:
        state: The current :class:`TxnState`.
        fatal_error: The error that made the producer unusable, if any.
        abortable_error: The error that doomed the current transaction, if any.
        epoch_bump_needed: The next abort must bump the epoch with InitProducerId
            instead of (or after) EndTxn (the coordinator aborted on its own, or a
            sequenced batch was lost).
    """

    def __init__(self) -> None:
        self.state = S.UNINITIALIZED
        self.fatal_error: KafkaError | None = None
        self.abortable_error: KafkaError | None = None
        self.epoch_bump_needed = False
        #: Partitions with records in this transaction that the coordinator knows.
        self.added: set[TopicPartition] = set()
        #: Partitions with records that still need AddPartitionsToTxn.
        self.pending: set[TopicPartition] = set()
        #: Consumer groups added with AddOffsetsToTxn in this transaction.
        self.groups: set[str] = set()

    # -- checks -------------------------------------------------------------------------

    def _raise_errors(self) -> None:
        if self.fatal_error is not None:
            raise self.fatal_error
        if self.state is S.ABORTABLE_ERROR:
            err = TransactionAbortableError(
                "the transaction cannot commit and must be aborted with "
                f"abort_transaction(): {self.abortable_error!r}"
            )
            err.__cause__ = self.abortable_error
            raise err

    def _illegal(
        self, action: str, hint: str, cls: type[IllegalStateError] = IllegalStateError
    ) -> IllegalStateError:
        return cls(
            f"{action} is not allowed while the transactional producer is "
            f"{self.state.value}: {hint}"
        )

    def _refuse(
        self, action: str, hint: str, cls: type[IllegalStateError] = IllegalStateError
    ) -> NoReturn:
        """Raise what stops ``action``: the transaction's error if it has one (fatal,
        or abortable), else an illegal-state error with ``hint``."""
        self._raise_errors()
        raise self._illegal(action, hint, cls)

    def _move(self, target: TxnState) -> None:
        if target not in _ALLOWED[self.state]:
            raise IllegalStateError(
                f"invalid transaction state transition {self.state.value} -> {target.value}"
            )
        self.state = target

    def check_send(self) -> None:
        """``send()`` is allowed only inside a transaction."""
        if self.state is S.IN_TRANSACTION:
            return
        if self.state is S.UNINITIALIZED or self.state is S.INITIALIZING:
            self._refuse("send()", "call start() first (it initializes transactions)")
        self._refuse(
            "send()",
            "a transactional producer sends only between begin_transaction() and "
            "commit_transaction()/abort_transaction()",
            IllegalTransactionOperation,
        )

    def check_offsets(self) -> None:
        """``send_offsets_to_transaction()`` is allowed only inside a transaction."""
        if self.state is S.IN_TRANSACTION:
            return
        self._refuse(
            "send_offsets_to_transaction()",
            "call begin_transaction() first",
            IllegalTransactionOperation,
        )

    def check_commit_ok(self) -> None:
        """The commit may go on (raises the error that dooms it otherwise)."""
        if self.state is S.COMMITTING:
            return
        self._refuse("commit_transaction()", "the commit was interrupted")

    @property
    def in_transaction(self) -> bool:
        """True between begin and the end of commit/abort (also with an error)."""
        return self.state in (S.IN_TRANSACTION, S.COMMITTING, S.ABORTING, S.ABORTABLE_ERROR)

    @property
    def has_data(self) -> bool:
        """True if the coordinator knows something of this transaction (EndTxn needed)."""
        return bool(self.added or self.groups)

    # -- transitions --------------------------------------------------------------------

    def begin_init(self) -> None:
        """InitProducerId is about to be sent (``start()`` or an epoch bump)."""
        self._raise_if_fatal()
        self._move(S.INITIALIZING)

    def init_done(self) -> None:
        """InitProducerId succeeded."""
        self._move(S.READY)
        self._reset_transaction()

    def begin(self) -> None:
        """``begin_transaction()``."""
        if self.state is S.READY:
            self._move(S.IN_TRANSACTION)
            return
        if self.state is S.IN_TRANSACTION:
            self._refuse(
                "begin_transaction()",
                "a transaction is already open; commit or abort it first",
            )
        self._refuse("begin_transaction()", "wait until the producer is ready")

    def begin_commit(self) -> bool:
        """``commit_transaction()`` starts; returns False if it is a retry of a commit
        whose EndTxn did not get an answer (the state is already COMMITTING)."""
        if self.state is S.IN_TRANSACTION:
            self._move(S.COMMITTING)
            return True
        if self.state is S.COMMITTING:
            return False
        self._refuse("commit_transaction()", "call begin_transaction() first")

    def begin_abort(self) -> None:
        """``abort_transaction()`` starts (also after an abortable error)."""
        if self.state in (S.IN_TRANSACTION, S.ABORTABLE_ERROR):
            self._move(S.ABORTING)
            return
        if self.state is S.ABORTING:
            return  # a retry after a timeout
        self._raise_if_fatal()
        if self.state is S.COMMITTING:
            raise self._illegal(
                "abort_transaction()",
                "a commit is in progress; call commit_transaction() again to finish it",
            )
        raise self._illegal("abort_transaction()", "call begin_transaction() first")

    def end_done(self) -> None:
        """EndTxn succeeded (or was not needed): ready for the next transaction."""
        self._move(S.READY)
        self._reset_transaction()

    def _reset_transaction(self) -> None:
        self.added.clear()
        self.pending.clear()
        self.groups.clear()
        self.abortable_error = None

    # -- errors -------------------------------------------------------------------------

    def _raise_if_fatal(self) -> None:
        if self.fatal_error is not None:
            raise self.fatal_error

    def set_error(self, error: KafkaError) -> None:
        """Record ``error``: fatal errors end the producer, others doom the current
        transaction (retriable ones only reach here after their retries ran out)."""
        if transaction_error_kind(error) is TransactionErrorKind.FATAL:
            self.set_fatal(error)
        else:
            self.set_abortable(error)

    def set_fatal(self, error: KafkaError) -> None:
        """The producer cannot go on; every later call raises ``error``."""
        if self.fatal_error is None:
            self.fatal_error = error
        self.state = S.FATAL_ERROR

    def set_abortable(self, error: KafkaError) -> None:
        """The current transaction must be aborted (the first error is kept)."""
        if self.state is S.FATAL_ERROR:
            return
        if self.state in (S.IN_TRANSACTION, S.COMMITTING, S.ABORTABLE_ERROR):
            if self.abortable_error is None:
                self.abortable_error = error
            self.state = S.ABORTABLE_ERROR
        # In ABORTING the error changes nothing: the transaction ends anyway.

    # -- partitions ---------------------------------------------------------------------

    def maybe_add(self, tps: Iterable[TopicPartition]) -> bool:
        """Note partitions that have records; True if some are new to the transaction."""
        new = False
        for tp in tps:
            if tp not in self.added and tp not in self.pending:
                self.pending.add(tp)
                new = True
        return new

    def partitions_added(self, tps: Iterable[TopicPartition]) -> None:
        """AddPartitionsToTxn succeeded for ``tps``."""
        for tp in tps:
            self.pending.discard(tp)
            self.added.add(tp)

    def is_added(self, tp: TopicPartition) -> bool:
        """True if batches of ``tp`` may be sent (the coordinator knows it)."""
        return tp in self.added
