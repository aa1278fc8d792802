"""Transaction operations: list (every broker), describe and fence (transaction
coordinators), find and abort hanging transactions (partition leaders, then
coordinators)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from aiokafka.admin._base import AdminBase, check, error_for, raise_first
from aiokafka.admin.results import ProducerStateInfo, TransactionDescription, TransactionListing
from aiokafka.admin.txn_types import AbortTransactionSpec, FencedProducer, HangingTransaction
from aiokafka.cluster import CoordinatorType
from aiokafka.errors import KafkaError
from aiokafka.protocol._gen import describe_producers as _dp
from aiokafka.protocol._gen import describe_transactions as _dt
from aiokafka.protocol._gen import init_producer_id as _ipi
from aiokafka.protocol._gen import list_transactions as _lt
from aiokafka.protocol._gen import write_txn_markers as _wtm
from aiokafka.protocol.topic_lists import by_topic
from aiokafka.structs import TopicPartition

__all__ = ["TransactionsMixin"]

_TXN = CoordinatorType.TRANSACTION


class TransactionsMixin(AdminBase):
    """Transaction operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def list_transactions(
        self,
        states: Sequence[str] | None = None,
        producer_ids: Sequence[int] | None = None,
        duration_filter_ms: int | None = None,
    ) -> list[TransactionListing]:
        """Transactions known to all transaction coordinators (KIP-664).

        Args:
            states: Only these states, e.g. ``["Ongoing"]``.
            producer_ids: Only these producer ids.
            duration_filter_ms: Only transactions running longer than this
                (ListTransactions v1+).

        Raises:
            aiokafka.errors.KafkaError: a broker failed or reported an error.
        """
        request = _lt.ListTransactionsRequest(
            state_filters=list(states or ()),
            producer_id_filters=list(producer_ids or ()),
            duration_filter=-1 if duration_filter_ms is None else duration_filter_ms,
        )

        async def one(node: int) -> _lt.ListTransactionsResponse:
            response = await self._send_node(node, request)
            check(response.error_code, None, f"list transactions on broker {node}")
            return response

        responses = await asyncio.gather(*(one(n) for n in self._client.cluster.brokers))
        found = {
            t.transactional_id: TransactionListing(
                t.transactional_id, t.producer_id, t.transaction_state
            )
            for r in responses
            for t in r.transaction_states
        }
        return [found[k] for k in sorted(found)]

    async def describe_transactions(
        self, transactional_ids: Sequence[str]
    ) -> dict[str, TransactionDescription]:
        """Describe transactions, asking each id's transaction coordinator.

        Raises:
            aiokafka.errors.TransactionalIdNotFoundError: an unknown id (the
                exception names every failed id).
        """
        ids = list(dict.fromkeys(transactional_ids))
        if not all(isinstance(i, str) and i for i in ids):
            raise ValueError("transactional_ids must be non-empty str")

        async def send(node: int, names: list[str]) -> dict[str, Any]:
            request = _dt.DescribeTransactionsRequest(transactional_ids=names)
            response = await self._client.send(node, request)
            return {
                s.transactional_id: error_for(
                    s.error_code, None, f"describe transaction {s.transactional_id!r}"
                )
                or TransactionDescription(
                    s.transactional_id,
                    node,
                    s.transaction_state,
                    s.producer_id,
                    s.producer_epoch,
                    s.transaction_timeout_ms,
                    s.transaction_start_time_ms,
                    [TopicPartition(t.topic, p) for t in s.topics for p in t.partitions],
                )
                for s in response.transaction_states
            }

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._per_coordinator(pending, _TXN, send)

        outcome = await self._retry_items(ids, attempt, deadline=self._deadline())
        raise_first(outcome)
        return outcome

    async def describe_producers(
        self, partitions: Sequence[TopicPartition]
    ) -> dict[TopicPartition, list[ProducerStateInfo]]:
        """Active idempotent/transactional producers per partition (KIP-664).

        Raises:
            aiokafka.errors.UnknownTopicOrPartitionError: and other per-partition
                errors (the exception names every failed partition).
        """

        async def send(node: int, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            request = _dp.DescribeProducersRequest(
                topics=[
                    _dp.TopicRequest(name=t, partition_indexes=parts)
                    for t, parts in by_topic(tps).items()
                ]
            )
            response = await self._client.send(node, request)
            out: dict[TopicPartition, Any] = {}
            for t in response.topics:
                for p in t.partitions:
                    tp = TopicPartition(t.name, p.partition_index)
                    out[tp] = error_for(
                        p.error_code,
                        p.error_message,
                        f"describe producers of {tp.topic}[{tp.partition}]",
                    ) or [
                        ProducerStateInfo(
                            s.producer_id,
                            s.producer_epoch,
                            s.last_sequence,
                            s.last_timestamp,
                            s.coordinator_epoch,
                            s.current_txn_start_offset,
                        )
                        for s in p.active_producers
                    ]
            return out

        outcome = await self._per_leader(partitions, send)
        raise_first(outcome)
        return outcome

    async def fence_producers(
        self, transactional_ids: Sequence[str], timeout_ms: int | None = None
    ) -> dict[str, FencedProducer]:
        """Fence the producers of these transactional ids, as a new producer's
        ``start()`` would, without starting one.

        Each id's coordinator bumps its epoch (aborting a transaction in progress), so
        a producer still running with the id fails with ``ProducerFenced`` at its next
        transactional call and writes no more. Use it before handing an id to a new
        owner, or to stop a zombie whose host is unreachable.

        Args:
            transactional_ids: The ids to fence.
            timeout_ms: The transaction timeout sent with the request (the coordinator
                uses it to write the new epoch to its log); default
                ``request_timeout_ms``.

        Returns:
            The producer id and its new epoch, per transactional id.

        Raises:
            aiokafka.errors.TransactionalIdAuthorizationFailed: and other per-id
                errors (the exception names every failed id; the others were fenced).
        """
        ids = list(dict.fromkeys(transactional_ids))
        if isinstance(transactional_ids, str) or not all(isinstance(i, str) and i for i in ids):
            raise ValueError("transactional_ids must be a list of non-empty str")
        txn_timeout = self._request_timeout_ms if timeout_ms is None else timeout_ms
        if not isinstance(txn_timeout, int) or isinstance(txn_timeout, bool) or txn_timeout < 1:
            raise ValueError(f"timeout_ms must be a positive int, got {timeout_ms!r}")

        async def send(node: int, names: list[str]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for name in names:  # InitProducerId carries one transactional id
                # No producer id or epoch: the coordinator bumps whatever epoch it has.
                request = _ipi.InitProducerIdRequest(
                    transactional_id=name, transaction_timeout_ms=txn_timeout
                )
                response = await self._client.send(node, request)
                out[name] = error_for(
                    response.error_code, None, f"fence transactional id {name!r}"
                ) or FencedProducer(response.producer_id, response.producer_epoch)
            return out

        async def attempt(pending: list[str]) -> dict[str, Any]:
            return await self._per_coordinator(pending, _TXN, send)

        outcome = await self._retry_items(ids, attempt, deadline=self._deadline(txn_timeout))
        raise_first(outcome)
        return outcome

    async def find_hanging_transactions(
        self,
        partitions: Sequence[TopicPartition] | None = None,
        *,
        max_transaction_timeout_ms: int = 900_000,
    ) -> list[HangingTransaction]:
        """Open transactions on these partitions that no coordinator tracks (KIP-664).

        As ``kafka-transactions.sh find-hanging``: a producer with an open transaction
        on a partition (``describe_producers``) that has not written for longer than
        the brokers' ``transaction.max.timeout.ms`` should have been aborted by its
        coordinator. It hangs if no coordinator knows its producer id, or if the
        coordinator's transaction is not ``Ongoing``, has another epoch, or does
        not include the partition. Abort each with ``abort_transaction(h.spec())``.

        Args:
            partitions: Where to look; default every partition of every topic.
            max_transaction_timeout_ms: The brokers' ``transaction.max.timeout.ms``
                (Kafka's default 15 minutes); younger transactions are not reported.

        Raises:
            aiokafka.errors.KafkaError: as ``describe_producers`` and
                ``list_transactions`` raise.
        """
        if (
            not isinstance(max_transaction_timeout_ms, int)
            or isinstance(max_transaction_timeout_ms, bool)
            or max_transaction_timeout_ms < 0
        ):
            raise ValueError(
                "max_transaction_timeout_ms must be an int >= 0, "
                f"got {max_transaction_timeout_ms!r}"
            )
        if partitions is None:
            await self._client.refresh_metadata()
            cluster = self._client.cluster
            partitions = [
                TopicPartition(topic, p)
                for topic in sorted(cluster.topics(exclude_internal_topics=False))
                for p in sorted(cluster.partitions_for_topic(topic) or ())
            ]
        now_ms = time.time() * 1000
        candidates: list[tuple[TopicPartition, ProducerStateInfo]] = [
            (tp, state)
            for tp, states in (await self.describe_producers(partitions)).items()
            for state in states
            if state.current_txn_start_offset >= 0
            and now_ms - state.last_timestamp > max_transaction_timeout_ms
        ]
        if not candidates:
            return []
        pids = sorted({state.producer_id for _, state in candidates})
        ids = {
            t.producer_id: t.transactional_id
            for t in await self.list_transactions(producer_ids=pids)
        }
        known = await self._describe_each(sorted(set(ids.values())))
        hanging = []
        for tp, state in candidates:
            txn_id = ids.get(state.producer_id)
            txn = known.get(txn_id) if txn_id is not None else None
            if (
                txn is not None
                and txn.state == "Ongoing"
                and txn.producer_epoch == state.producer_epoch
                and tp in txn.partitions
            ):
                continue  # the coordinator tracks it: it will end it
            hanging.append(
                HangingTransaction(
                    tp,
                    state.producer_id,
                    state.producer_epoch,
                    state.coordinator_epoch,
                    state.current_txn_start_offset,
                    state.last_timestamp,
                    txn_id,
                )
            )
        return hanging

    async def _describe_each(
        self, transactional_ids: list[str]
    ) -> dict[str, TransactionDescription]:
        """The described transactions among these ids; an id that fails to describe
        (expired since it was listed, say) is left out."""
        if not transactional_ids:
            return {}
        try:
            return await self.describe_transactions(transactional_ids)
        except KafkaError:
            pass
        answers = await asyncio.gather(
            *(self.describe_transactions([i]) for i in transactional_ids), return_exceptions=True
        )
        out: dict[str, TransactionDescription] = {}
        for answer in answers:
            if isinstance(answer, dict):
                out.update(answer)
            elif not isinstance(answer, KafkaError):
                raise answer  # a bug or a cancellation: never hidden
        return out

    async def abort_transaction(self, spec: AbortTransactionSpec) -> None:
        """Abort a hanging transaction on one partition (KIP-664).

        A transaction whose coordinator lost track of a partition (a hanging
        transaction) holds the partition's last stable offset back, so
        ``read_committed`` consumers stop there. This writes the abort marker the
        coordinator never wrote, to the partition's leader, as
        ``kafka-transactions.sh abort`` does. Find the values with
        :meth:`describe_producers` (see :meth:`AbortTransactionSpec.of`).

        Raises:
            TypeError: ``spec`` is not an :class:`~aiokafka.admin.AbortTransactionSpec`.
            aiokafka.errors.InvalidProducerEpoch: the producer's epoch has moved on
                (the transaction ended another way).
            aiokafka.errors.TransactionCoordinatorFencedError: the coordinator epoch is
                older than the one the partition knows.
            aiokafka.errors.ClusterAuthorizationFailedError: the caller lacks
                CLUSTER_ACTION on the cluster.
        """
        if not isinstance(spec, AbortTransactionSpec):
            raise TypeError(f"spec must be an AbortTransactionSpec, got {type(spec).__name__}")
        tp = spec.topic_partition
        request = _wtm.WriteTxnMarkersRequest(
            markers=[
                _wtm.WritableTxnMarker(
                    producer_id=spec.producer_id,
                    producer_epoch=spec.producer_epoch,
                    transaction_result=False,
                    topics=[
                        _wtm.WritableTxnMarkerTopic(name=tp.topic, partition_indexes=[tp.partition])
                    ],
                    coordinator_epoch=spec.coordinator_epoch,
                )
            ]
        )

        async def send(node: int, tps: list[TopicPartition]) -> dict[TopicPartition, Any]:
            response = await self._client.send(node, request)
            what = f"abort the transaction of {spec}"
            out: dict[TopicPartition, Any] = {}
            for marker in response.markers:
                out.update(self._partition_errors(marker.topics, lambda _: what))
            return out

        raise_first(await self._per_leader([tp], send))
