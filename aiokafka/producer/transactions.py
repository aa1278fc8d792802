"""Transactions of a transactional producer: the requests to the coordinators.

:class:`TransactionManager` owns the :class:`~aiokafka.producer.txn_state.TxnStateMachine`
and sends the transactional requests. Two flows exist; the one used is decided at each
InitProducerId from the transaction coordinator's finalized ``transaction.version``
feature (KIP-584), as that broker reported it in its connection's ApiVersions handshake:

Transaction version 1 (brokers before 4.0, or a 4.x cluster kept at version 1):

* InitProducerId with the ``transactional_id`` to the transaction coordinator
  (``start()``): fences every older producer with the same id and aborts its open
  transaction.
* AddPartitionsToTxn (v3 at most: v4+ are broker-to-broker) before the first batch of
  a partition is sent; the sender calls :meth:`TransactionManager.add_pending_partitions`
  and never drains a batch whose partition is not added yet. Produce stays at v11.
* AddOffsetsToTxn to the transaction coordinator, then TxnOffsetCommit (v4 at most) to
  the group coordinator (v3+ carries generation, member id and group instance id:
  KIP-447).
* EndTxn (v4 at most) after every batch was acknowledged.

Transaction version 2 (KIP-890 part 2; the default of a Kafka 4.x cluster):

* No AddPartitionsToTxn: a transactional Produce v12 makes the partition's leader add
  the partition to the transaction itself, before it appends the batch, which closes
  the window in which a late or hanging Produce could land outside its transaction.
* No AddOffsetsToTxn: TxnOffsetCommit v5 adds the group the same way.
* EndTxn v5: the coordinator bumps the producer epoch with every commit or abort and
  returns the new id/epoch; the next transaction uses it and restarts every sequence at
  0, so a zombie write of an ended transaction is fenced by its stale epoch.

Retriable errors (CONCURRENT_TRANSACTIONS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS, lost connections) are retried with back-off by
:meth:`~aiokafka.cluster.client.AIOKafkaClient.call_with_retry`, looking the
coordinator up again when it moved. What remains is classified by
:func:`~aiokafka.errors.transaction_error_kind`: fatal errors end the producer,
others make the transaction abortable.

Every request to the transaction coordinator is made under one lock, so an
AddPartitionsToTxn from the sender can never reach the coordinator after the EndTxn
of its transaction (which would silently open a new transaction there).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from aiokafka.cluster.client import CoordinatorType
from aiokafka.cluster.ports import TransactionClient
from aiokafka.errors import (
    CommitFailedError,
    IllegalGenerationError,
    InvalidProducerEpoch,
    InvalidTxnState,
    KafkaError,
    KafkaTimeoutError,
    OperationNotAttempted,
    ProducerFenced,
    UnknownMemberIdError,
    UnsupportedVersionError,
    for_code,
)
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.txn_state import TxnState, TxnStateMachine
from aiokafka.protocol import messages as m
from aiokafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

__all__ = ["TransactionManager", "check_offsets_args"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Client versions of AddPartitionsToTxn end at 3 (4+ are for brokers).
_ADD_PARTITIONS_MAX = 3
#: TxnOffsetCommit v3 carries the group generation and member id (KIP-447).
_TXN_OFFSET_COMMIT_GROUP_METADATA = 3
#: The finalized feature that says which transaction protocol the cluster runs.
TRANSACTION_VERSION_FEATURE = "transaction.version"
#: Per API: the highest version of the transaction version 1 flow. The next version of
#: each tells the broker the client runs version 2 (Produce v12 and TxnOffsetCommit v5
#: add partitions and groups to the transaction implicitly; EndTxn v5 bumps the epoch),
#: so a version 1 transaction must never use them.
#: Keyed by API key as numbers: reading ``m.ProduceRequest.API_KEY`` here would load the
#: generated modules at ``import aiokafka`` (tests/unit/test_import_cost.py).
_PRODUCE, _END_TXN, _TXN_OFFSET_COMMIT = 0, 26, 28
_TV1_MAX = {_PRODUCE: 11, _TXN_OFFSET_COMMIT: 4, _END_TXN: 4}


class TransactionManager:
    """Transactional requests and state of one producer.

    Args:
        client: The started cluster client.
        ids: Producer id, epoch and sequences (shared with the sender).
        transactional_id: The producer's ``transactional_id``.
        transaction_timeout_ms: For error messages (it is sent by InitProducerId).
        max_block_ms: Deadline of each transactional call (InitProducerId,
            AddOffsets/TxnOffsetCommit, EndTxn), retries included.
    """

    def __init__(
        self,
        client: TransactionClient,
        ids: ProducerIdState,
        transactional_id: str,
        transaction_timeout_ms: int,
        max_block_ms: int,
    ) -> None:
        self._client = client
        self._ids = ids
        self.transactional_id = transactional_id
        self._timeout_ms = transaction_timeout_ms
        self._max_block = max_block_ms / 1000
        self.state = TxnStateMachine()
        self._lock = asyncio.Lock()
        self._began_at = 0.0
        #: 1 or 2: the transaction protocol in use (decided at each InitProducerId).
        self.transaction_version = 1

    @property
    def produce_max_version(self) -> int | None:
        """The cap for Produce requests of this producer (``None``: no cap)."""
        return None if self.transaction_version >= 2 else _TV1_MAX[_PRODUCE]

    def _max_version(self, api_key: int) -> int | None:
        return None if self.transaction_version >= 2 else _TV1_MAX[api_key]

    # -- helpers ------------------------------------------------------------------------

    def _deadline(self) -> float:
        return time.monotonic() + self._max_block

    async def _coordinator_call(self, make: Callable[[int], Awaitable[T]]) -> T:
        """Run ``make(node)`` against the transaction coordinator with retries."""
        client = self._client
        key = (self.transactional_id, CoordinatorType.TRANSACTION)

        async def attempt() -> T:
            node = await client.coordinator_for(*key)
            return await make(node)

        return await client.call_with_retry(attempt, self._deadline(), coordinator=key)

    def explain(self, error: KafkaError) -> KafkaError:
        """Rewrite errors that, for a transactional producer, often mean the
        coordinator aborted the transaction on its own after
        ``transaction_timeout_ms``; the original error is kept as ``__cause__``."""
        if not isinstance(error, (ProducerFenced, InvalidTxnState)):
            return error
        elapsed = ""
        if self.state.in_transaction and self._began_at:
            ms = (time.monotonic() - self._began_at) * 1000
            elapsed = f" (this transaction has been open for {ms:.0f} ms)"
        what = str(error.args[0]) if error.args else error.message
        text = (
            f"{what}: another producer with transactional_id {self.transactional_id!r} "
            f"fenced this one, or the transaction ran longer than transaction_timeout_ms "
            f"({self._timeout_ms} ms){elapsed} and the coordinator aborted it"
        )
        new = type(error)(text)
        new.__cause__ = error
        return new

    def _fail(self, error: KafkaError) -> KafkaError:
        """Record ``error`` in the state machine; return what to raise."""
        error = self.explain(error)
        self.state.set_error(error)
        return error

    # -- InitProducerId -----------------------------------------------------------------

    async def initialize(self, bump: bool = False) -> None:
        """InitProducerId: a new id/epoch (``start()``) or an epoch bump of the current
        id (after an abort that needs one; KIP-360/588). Fences older producers."""
        self.state.begin_init()
        ids = self._ids
        if not bump:
            ids.producer_id = -1
            ids.producer_epoch = -1

        async def attempt(node: int) -> m.InitProducerIdResponse:
            version = await self._client.api_version(node, m.InitProducerIdRequest.API_KEY)
            response = await self._client.send(node, ids.init_request(version))
            if response.error_code:
                raise for_code(response.error_code)(
                    f"InitProducerId for transactional_id {self.transactional_id!r}"
                )
            # The flow is chosen between transactions only, from the coordinator that
            # just answered: it is the one that will run this producer's transactions.
            self.transaction_version = await self._coordinator_transaction_version(node)
            return response

        async with self._lock:
            try:
                response = await self._coordinator_call(attempt)
            except KafkaTimeoutError:
                raise  # the state stays INITIALIZING; the call may be repeated
            except KafkaError as exc:
                # A producer that cannot get an id has no way to continue.
                self.state.set_fatal(exc)
                raise
        ids.set_producer_id(response.producer_id, response.producer_epoch)
        self.state.epoch_bump_needed = False
        self.state.init_done()
        log.debug(
            "Transactional producer %r: id %d epoch %d, transaction version %d",
            self.transactional_id,
            response.producer_id,
            response.producer_epoch,
            self.transaction_version,
        )

    async def _coordinator_transaction_version(self, node: int) -> int:
        """2 if the coordinator's cluster finalized ``transaction.version`` >= 2 (as it
        reported in the connection's ApiVersions handshake) and the broker speaks the
        versions that flow needs, else 1."""
        client = self._client
        if await client.finalized_level(node, TRANSACTION_VERSION_FEATURE) < 2:
            return 1
        for api_key, tv1_max in _TV1_MAX.items():
            try:
                version = await client.api_version(node, api_key)
            except UnsupportedVersionError:
                return 1
            if version <= tv1_max:
                return 1
        return 2

    # -- begin / partitions -------------------------------------------------------------

    def begin(self) -> None:
        """Open a transaction (local only: the coordinator learns of it with the
        first AddPartitionsToTxn/AddOffsetsToTxn)."""
        self.state.begin()
        self._began_at = time.monotonic()

    async def add_pending_partitions(self) -> None:
        """Send AddPartitionsToTxn for every partition noted with
        ``state.maybe_add`` and not added yet (one request for all of them).

        Errors are recorded in the state machine (the sender cannot raise to the
        user); partitions stay pending after a timeout and are tried again.
        """
        state = self.state
        if self.transaction_version >= 2:
            # The leader adds each partition when its first Produce v12 arrives.
            if state.state in (TxnState.IN_TRANSACTION, TxnState.COMMITTING):
                state.partitions_added(list(state.pending))
            return
        async with self._lock:
            if not state.pending or state.state not in (
                TxnState.IN_TRANSACTION,
                TxnState.COMMITTING,
            ):
                return
            tps = sorted(state.pending)
            by_topic: dict[str, list[int]] = {}
            for tp in tps:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            ids = self._ids
            request = m.AddPartitionsToTxnRequest(
                v3_and_below_transactional_id=self.transactional_id,
                v3_and_below_producer_id=ids.producer_id,
                v3_and_below_producer_epoch=ids.producer_epoch,
                v3_and_below_topics=[
                    m.AddPartitionsToTxnTopic(name=t, partitions=p) for t, p in by_topic.items()
                ],
            )

            async def attempt(node: int) -> None:
                response = await self._client.send(node, request, max_version=_ADD_PARTITIONS_MAX)
                _raise_add_partitions_error(response)

            try:
                await self._coordinator_call(attempt)
            except KafkaTimeoutError as exc:
                log.warning("AddPartitionsToTxn for %s did not succeed yet: %s", tps, exc)
                return
            except KafkaError as exc:
                log.warning("AddPartitionsToTxn for %s failed: %r", tps, exc)
                self._fail(exc)
                return
            state.partitions_added(tps)
            log.debug("Added %s to the transaction", tps)

    # -- offsets ------------------------------------------------------------------------

    async def send_offsets(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        group: ConsumerGroupMetadata,
    ) -> None:
        """AddOffsetsToTxn, then TxnOffsetCommit to the group coordinator."""
        self.state.check_offsets()
        ids = self._ids
        try:
            if self.transaction_version >= 2:
                # TxnOffsetCommit v5 adds the group to the transaction itself.
                self.state.groups.add(group.group_id)
            elif group.group_id not in self.state.groups:
                add = m.AddOffsetsToTxnRequest(
                    transactional_id=self.transactional_id,
                    producer_id=ids.producer_id,
                    producer_epoch=ids.producer_epoch,
                    group_id=group.group_id,
                )

                async def add_attempt(node: int) -> None:
                    response = await self._client.send(node, add)
                    if response.error_code:
                        raise for_code(response.error_code)(
                            f"AddOffsetsToTxn for group {group.group_id!r}"
                        )

                async with self._lock:
                    self.state.check_offsets()
                    await self._coordinator_call(add_attempt)
                    self.state.groups.add(group.group_id)
            await self._txn_offset_commit(offsets, group)
        except KafkaError as exc:
            raise self._fail(exc) from None

    async def _txn_offset_commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        group: ConsumerGroupMetadata,
    ) -> None:
        ids = self._ids
        topics: dict[str, list[Any]] = {}
        for tp, om in offsets.items():
            epoch = om.leader_epoch
            topics.setdefault(tp.topic, []).append(
                m.TxnOffsetCommitRequestPartition(
                    partition_index=tp.partition,
                    committed_offset=om.offset,
                    committed_leader_epoch=-1 if epoch is None else epoch,
                    committed_metadata=om.metadata,
                )
            )
        request = m.TxnOffsetCommitRequest(
            transactional_id=self.transactional_id,
            group_id=group.group_id,
            producer_id=ids.producer_id,
            producer_epoch=ids.producer_epoch,
            generation_id=group.generation_id,
            member_id=group.member_id,
            group_instance_id=group.group_instance_id,
            topics=[m.TxnOffsetCommitRequestTopic(name=t, partitions=p) for t, p in topics.items()],
        )
        has_member = group.generation_id >= 0 or bool(group.member_id)
        max_version = self._max_version(m.TxnOffsetCommitRequest.API_KEY)
        client = self._client
        key = (group.group_id, CoordinatorType.GROUP)

        async def attempt() -> None:
            node = await client.coordinator_for(*key)
            version = await client.api_version(node, m.TxnOffsetCommitRequest.API_KEY)
            if has_member and version < _TXN_OFFSET_COMMIT_GROUP_METADATA:
                raise UnsupportedVersionError(
                    "the broker does not support TxnOffsetCommit v3 (KIP-447), needed to "
                    "send a consumer's group_metadata(); pass the group id string instead"
                )
            response = await client.send(node, request, max_version=max_version)
            _raise_txn_offset_commit_error(response, group)

        await client.call_with_retry(attempt, self._deadline(), coordinator=key)

    # -- produce errors -----------------------------------------------------------------

    def on_produce_error(self, error: BaseException) -> None:
        """A batch of the transaction failed for good: the transaction cannot commit.

        INVALID_PRODUCER_EPOCH from a Produce means the coordinator bumped the epoch
        when it aborted the transaction after ``transaction_timeout_ms`` (KIP-588):
        abortable, and the abort bumps our epoch too. Other fenced/authorization
        errors are fatal.
        """
        if not isinstance(error, KafkaError):
            error = KafkaError(f"unexpected error while sending: {error!r}")
        if isinstance(error, InvalidProducerEpoch):
            self.state.epoch_bump_needed = True
            self.state.set_abortable(self.explain(error))
            return
        if isinstance(error, (ProducerFenced, InvalidTxnState)):
            self.state.set_fatal(self.explain(error))
            return
        self.state.set_error(error)

    # -- end ----------------------------------------------------------------------------

    async def end(self, commit: bool) -> None:
        """EndTxn (when the coordinator knows of the transaction), then, if needed, an
        epoch bump; the state becomes READY."""
        state = self.state
        ids = self._ids
        async with self._lock:
            # KIP-588: when the coordinator aborted the transaction on its own (timeout)
            # and bumped the epoch, an EndTxn with ours would be fenced; the
            # InitProducerId below (our id and epoch) aborts whatever is open instead.
            skip = state.epoch_bump_needed and not commit
            if state.has_data and not skip:
                request = m.EndTxnRequest(
                    transactional_id=self.transactional_id,
                    producer_id=ids.producer_id,
                    producer_epoch=ids.producer_epoch,
                    committed=commit,
                )

                max_version = self._max_version(m.EndTxnRequest.API_KEY)

                async def attempt(node: int) -> m.EndTxnResponse:
                    response = await self._client.send(node, request, max_version=max_version)
                    if response.error_code:
                        raise for_code(response.error_code)(
                            f"EndTxn({'commit' if commit else 'abort'})"
                        )
                    return response

                try:
                    response = await self._coordinator_call(attempt)
                except KafkaTimeoutError:
                    raise  # state stays COMMITTING/ABORTING: the call may be repeated
                except KafkaError as exc:
                    raise self._fail(exc) from None
                if self.transaction_version >= 2 and response.producer_epoch >= 0:
                    # EndTxn v5 bumped the epoch (or, when it ran out, gave a new id):
                    # the next transaction's batches restart at sequence 0 under it.
                    ids.set_producer_id(response.producer_id, response.producer_epoch)
                    state.epoch_bump_needed = False
        if state.epoch_bump_needed or ids.bump_required:
            state.state = TxnState.ABORTING  # (already) ending; initialize() moves on
            try:
                await self.initialize(bump=True)
            except KafkaTimeoutError:
                # The abort may be called again; it then retries the bump.
                state.state = TxnState.ABORTING
                raise
        else:
            state.end_done()


def _raise_add_partitions_error(response: m.AddPartitionsToTxnResponse) -> None:
    """Raise the most telling per-partition error of an AddPartitionsToTxn response."""
    if response.error_code:
        raise for_code(response.error_code)("AddPartitionsToTxn")
    worst: KafkaError | None = None
    for topic in response.results_by_topic_v3_and_below:
        for part in topic.results_by_partition:
            code = part.partition_error_code
            if not code:
                continue
            exc = for_code(code)(f"AddPartitionsToTxn {topic.name}-{part.partition_index}")
            # OPERATION_NOT_ATTEMPTED only says another partition failed.
            if worst is None or isinstance(worst, OperationNotAttempted):
                worst = exc
    if worst is not None:
        raise worst


def _raise_txn_offset_commit_error(
    response: m.TxnOffsetCommitResponse, group: ConsumerGroupMetadata
) -> None:
    for topic in response.topics:
        for part in topic.partitions:
            code = part.error_code
            if not code:
                continue
            exc = for_code(code)(
                f"TxnOffsetCommit {topic.name}-{part.partition_index} for group {group.group_id!r}"
            )
            if isinstance(exc, (IllegalGenerationError, UnknownMemberIdError)):
                # The consumer is no longer the group member it was (a zombie): its
                # offsets must not be committed, and the transaction must abort.
                err = CommitFailedError(
                    f"TxnOffsetCommit was rejected: generation {group.generation_id} / "
                    f"member {group.member_id!r} is no longer current in group "
                    f"{group.group_id!r} ({type(exc).__name__}); abort the transaction"
                )
                err.__cause__ = exc
                raise err
            raise exc


def check_offsets_args(
    offsets: Mapping[TopicPartition, int | tuple[int, str] | OffsetAndMetadata],
    group_id: str | ConsumerGroupMetadata,
) -> tuple[dict[TopicPartition, OffsetAndMetadata], ConsumerGroupMetadata]:
    """Validate the arguments of ``send_offsets_to_transaction``.

    Raises:
        ValueError: ``group_id`` is not a non-empty str or a ConsumerGroupMetadata
            (ValueError whatever its type, as aiokafka raises), or an offset is
            negative or not an ``(offset, metadata)`` pair.
        TypeError: ``offsets`` is not a mapping of TopicPartition to int,
            ``(offset, metadata)`` or OffsetAndMetadata.
    """
    if isinstance(group_id, ConsumerGroupMetadata):
        group = group_id
    elif isinstance(group_id, str):
        group = ConsumerGroupMetadata(group_id)
    else:
        raise ValueError(
            f"group_id must be a str or a ConsumerGroupMetadata, not {type(group_id).__name__}"
        )
    if not group.group_id:
        raise ValueError("group_id must not be empty")
    checked: dict[TopicPartition, OffsetAndMetadata] = {}
    if not isinstance(offsets, Mapping):
        raise TypeError(f"offsets must be a mapping, not {type(offsets).__name__}")
    for tp, value in offsets.items():
        if not isinstance(tp, TopicPartition):
            raise TypeError(f"offsets keys must be TopicPartition, not {type(tp).__name__}")
        checked[tp] = _offset_and_metadata(tp, value)
    return checked, group


def _offset_and_metadata(tp: TopicPartition, value: object) -> OffsetAndMetadata:
    if isinstance(value, OffsetAndMetadata):
        om = value
    elif isinstance(value, int) and not isinstance(value, bool):
        om = OffsetAndMetadata(value, "")
    elif isinstance(value, tuple):
        # aiokafka's (offset, metadata) pairs.
        if len(value) != 2:
            raise ValueError(f"offsets[{tp}]: expected (offset, metadata), got {value!r}")
        offset, metadata = value
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise TypeError(f"offsets[{tp}]: the offset must be an int, not {offset!r}")
        if not isinstance(metadata, str):
            raise TypeError(f"offsets[{tp}]: the metadata must be a str, not {metadata!r}")
        om = OffsetAndMetadata(offset, metadata)
    else:
        raise TypeError(
            f"offsets[{tp}] must be an int, (offset, metadata) or OffsetAndMetadata, "
            f"not {type(value).__name__}"
        )
    if om.offset < 0:
        raise ValueError(f"offsets[{tp}] must be >= 0, got {om.offset}")
    return om
