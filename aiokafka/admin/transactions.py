"""Transaction operations: list (every broker) and describe (transaction
coordinators)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from aiokafka.admin._base import AdminBase, check, error_for, raise_first
from aiokafka.admin.results import TransactionDescription, TransactionListing
from aiokafka.cluster import CoordinatorType
from aiokafka.protocol._gen import describe_transactions as _dt
from aiokafka.protocol._gen import list_transactions as _lt
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
