"""The transactional API of :class:`~aiokafka.producer.AIOKafkaProducer`.

Kept apart from the facade's sending and lifecycle code: :class:`TransactionalAPI` is
a mixin of the producer holding ``begin_transaction``, ``commit_transaction``,
``abort_transaction``, ``transaction()`` and ``send_offsets_to_transaction``. The
requests live in ``transactions.py``, the states in ``txn_state.py``.

Errors follow aiokafka 0.14 where aiokafka code can see them: every call of this API
on a producer without ``transactional_id``, and ``send_offsets_to_transaction()``
outside a transaction, raise :class:`~aiokafka.errors.IllegalOperation` (as
:class:`~aiokafka.producer.txn_state.IllegalTransactionOperation`, which is also the
:class:`~aiokafka.errors.IllegalStateError` this package raised before);
``begin_transaction()`` is a coroutine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from aiokafka.errors import IllegalStateError, KafkaError, KafkaTimeoutError, ProducerClosed
from aiokafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

if TYPE_CHECKING:
    from aiokafka.producer.accumulator import RecordAccumulator
    from aiokafka.producer.config import ProducerConfig
    from aiokafka.producer.sender import Sender
    from aiokafka.producer.transactions import TransactionManager

__all__ = ["TransactionalAPI"]


class TransactionalAPI:
    """The transaction methods of the producer (a mixin: the producer owns the
    attributes declared here)."""

    _config: ProducerConfig
    _state: str
    _txn: TransactionManager | None
    _sender: Sender | None
    _acc: RecordAccumulator | None

    async def flush(self, timeout: float | None = None) -> None:
        raise NotImplementedError  # the producer's

    def _transactions(self) -> TransactionManager:
        if self._txn is None:
            if self._config.transactional_id is None:
                # Imported on this error only: a producer without transactional_id
                # never loads the transaction state machine.
                from aiokafka.producer.txn_state import IllegalTransactionOperation

                raise IllegalTransactionOperation(
                    "transactions need a transactional_id (AIOKafkaProducer(transactional_id=...))"
                )
            raise IllegalStateError("AIOKafkaProducer.start() was not called")
        if self._state != "running":
            raise ProducerClosed("the producer is stopped")
        return self._txn

    async def begin_transaction(self) -> None:
        """Open a transaction; records sent until commit/abort belong to it.

        A coroutine, as in aiokafka (``await producer.begin_transaction()``). It does
        no I/O: ``start()`` already obtained the producer id.

        Raises:
            aiokafka.errors.IllegalOperation: no ``transactional_id``.
            aiokafka.errors.IllegalStateError: not started, or a transaction is
                already open.
            aiokafka.errors.KafkaError: the fatal error that ended this producer
                (e.g. :class:`~aiokafka.errors.ProducerFenced`).
        """
        self._transactions().begin()

    async def commit_transaction(self) -> None:
        """Send everything buffered, wait until every record is acknowledged, then
        commit (EndTxn).

        After a :class:`~aiokafka.errors.KafkaTimeoutError` the outcome is unknown:
        call ``commit_transaction()`` again (abort is refused then).

        Raises:
            aiokafka.errors.IllegalOperation: no ``transactional_id``.
            aiokafka.errors.IllegalStateError: no open transaction.
            aiokafka.errors.TransactionAbortableError: a record or request of this
                transaction failed (``__cause__``): call :meth:`abort_transaction`.
            aiokafka.errors.KafkaError: fatal errors (see
                :func:`~aiokafka.errors.transaction_error_kind`): close the producer.
        """
        txn = self._transactions()
        txn.state.begin_commit()
        await self.flush()
        # A send() that passed its state check before the commit began but appended
        # after the flush started (it waited for metadata or memory) belongs to this
        # transaction too: EndTxn must not overtake it.
        while self._acc is not None and self._acc.has_incomplete():
            txn.state.check_commit_ok()
            await self.flush()
        txn.state.check_commit_ok()
        await txn.add_pending_partitions()
        txn.state.check_commit_ok()
        await txn.end(commit=True)

    async def abort_transaction(self) -> None:
        """Abort the open transaction: buffered records fail with
        :class:`~aiokafka.errors.TransactionAbortedError`, sent ones are never shown
        to ``read_committed`` consumers. Also the way out of an abortable error.

        Raises:
            aiokafka.errors.IllegalOperation: no ``transactional_id``.
            aiokafka.errors.IllegalStateError: no open transaction.
            aiokafka.errors.KafkaError: fatal errors: close the producer.
        """
        txn = self._transactions()
        txn.state.begin_abort()
        assert self._sender is not None
        self._sender.abort_queued(txn.state.abortable_error)
        # Records in flight must have their outcome before EndTxn: a Produce
        # arriving after the abort marker would start a new transaction.
        await self.flush()
        await txn.end(commit=False)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        """``async with producer.transaction():`` begins a transaction, commits it
        when the block ends normally, aborts it when the block or the commit raises
        (then the exception propagates).

        A commit that raised :class:`~aiokafka.errors.KafkaTimeoutError` is not
        aborted (its outcome is unknown): call :meth:`commit_transaction` again.
        """
        await self.begin_transaction()
        try:
            yield
        except BaseException:
            await self._abort_after_error()
            raise
        try:
            await self.commit_transaction()
        except KafkaTimeoutError:
            raise  # the outcome is unknown: only commit_transaction() again may follow
        except KafkaError:
            await self._abort_after_error()
            raise

    async def _abort_after_error(self) -> None:
        txn = self._txn
        state = txn.state if txn is not None else None
        if state is None or state.fatal_error is not None or not state.in_transaction:
            return
        # Shielded: a cancelled block must still end its transaction; the abort itself
        # is bounded by max_block_ms.
        await asyncio.shield(self.abort_transaction())

    async def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartition, int | tuple[int, str] | OffsetAndMetadata],
        group_id: str | ConsumerGroupMetadata,
    ) -> None:
        """Commit consumer offsets as part of the open transaction (the
        consume-process-produce pattern).

        The checks run in aiokafka's order: a transactional producer, then an open
        transaction, then the arguments. An empty ``offsets`` does nothing.

        Args:
            offsets: Partition -> the next offset to consume (an ``int``, an
                ``(offset, metadata)`` pair or an
                :class:`~aiokafka.structs.OffsetAndMetadata`).
            group_id: The consumer group id, or ``consumer.group_metadata()``
                (KIP-447: the broker then rejects the commit of a consumer that is no
                longer a current member of the group).

        Raises:
            aiokafka.errors.IllegalOperation: no ``transactional_id``, or no open
                transaction.
            ValueError, TypeError: ``group_id`` (ValueError, as in aiokafka) or
                ``offsets`` is malformed.
            aiokafka.errors.CommitFailedError: the consumer's generation/member is no
                longer current (a zombie): abort the transaction.
            aiokafka.errors.KafkaError: other errors; the transaction is then abortable
                or the producer fenced (see ``transaction_error_kind``).
        """
        txn = self._transactions()
        txn.state.check_offsets()
        # Imported here for import cost only: transactions.py loads with the first
        # transactional producer and imports nothing of this module (no cycle).
        from aiokafka.producer.transactions import check_offsets_args

        checked, group = check_offsets_args(offsets, group_id)
        if checked:
            await txn.send_offsets(checked, group)
