"""Positions of partitions that have none: the committed offset, else a reset.

Used by the fetcher's loop and by the consumer's ``position()`` / ``seek_to_*``
paths; results are applied only if the partition's state did not change while the
look-ups were in flight (a seek or reassignment meanwhile wins).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from aiokafka.errors import KafkaError, NoOffsetForPartitionError
from aiokafka.structs import TopicPartition

from .config import ConsumerConfig
from .offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, OffsetsClient
from .subscription import SubscriptionState

__all__ = ["resolve_positions", "seek_committed"]

log = logging.getLogger(__name__)

ErrorSink = Callable[[TopicPartition, KafkaError], None]


async def seek_committed(
    subs: SubscriptionState, offsets: OffsetsClient, partitions: list[TopicPartition]
) -> tuple[dict[TopicPartition, int | None], list[TopicPartition]]:
    """``seek_to_committed()``: move each partition to its committed offset; those
    without one get a pending ``auto_offset_reset`` (the caller resolves them).

    Returns:
        ``({tp: committed offset or None}, partitions left to reset)``.
    """
    committed = await offsets.fetch_committed(partitions)
    result: dict[TopicPartition, int | None] = {}
    reset = []
    for tp in partitions:
        found = committed.get(tp)
        result[tp] = None if found is None else found.offset
        if found is None:
            reset.append(tp)
        elif subs.is_assigned(tp):
            subs.seek(tp, found.offset, found.leader_epoch)
    reset = [tp for tp in reset if subs.is_assigned(tp)]
    if reset:
        subs.request_reset(reset)
    return result, reset


async def resolve_positions(
    subs: SubscriptionState,
    offsets: OffsetsClient,
    config: ConsumerConfig,
    partitions: Iterable[TopicPartition],
    on_error: ErrorSink | None = None,
) -> None:
    """Find positions of the assigned ``partitions`` that have none: the committed
    offset, else ``auto_offset_reset``; pending resets are applied.

    Args:
        subs: The subscription state holding the positions.
        offsets: Offset look-ups.
        config: The consumer config (group id, isolation level).
        partitions: Partitions to look at; unassigned ones are ignored.
        on_error: Where a per-partition error goes; ``None`` raises it.

    Raises:
        NoOffsetForPartitionError: ``auto_offset_reset="none"`` and nothing is
            committed (only without ``on_error``).
        aiokafka.errors.KafkaError: a look-up failed.
    """
    tps = [tp for tp in partitions if subs.is_assigned(tp)]
    lookup = [
        tp
        for tp in tps
        if subs.state(tp).position is None and subs.state(tp).reset_strategy is None
    ]
    if lookup:
        await _use_committed(subs, offsets, config, lookup)
    await _reset_offsets(
        subs, offsets, config, [tp for tp in tps if subs.is_assigned(tp)], on_error
    )


async def _use_committed(
    subs: SubscriptionState,
    offsets: OffsetsClient,
    config: ConsumerConfig,
    tps: list[TopicPartition],
) -> None:
    epochs = {tp: subs.state(tp).epoch for tp in tps}
    committed: dict[TopicPartition, Any] = {}
    if config.group_id is not None:
        committed = await offsets.fetch_committed(tps)
    for tp in tps:
        state = subs.get(tp)
        if state is None or state.epoch != epochs[tp] or state.position is not None:
            continue  # moved while we waited
        found = committed.get(tp)
        if found is not None:
            log.debug("Starting %s at committed offset %d", tp, found.offset)
            state.seek(found.offset, found.leader_epoch)
        else:
            state.request_reset(subs.default_reset)


async def _reset_offsets(
    subs: SubscriptionState,
    offsets: OffsetsClient,
    config: ConsumerConfig,
    tps: list[TopicPartition],
    on_error: ErrorSink | None,
) -> None:
    targets: dict[TopicPartition, int] = {}
    epochs: dict[TopicPartition, int] = {}
    for tp in tps:
        state = subs.state(tp)
        strategy = state.reset_strategy
        if strategy is None:
            continue
        if strategy == "none":
            exc = NoOffsetForPartitionError(
                f"no committed offset for {tp} and auto_offset_reset='none'"
            )
            if on_error is None:
                raise exc
            on_error(tp, exc)
            continue
        targets[tp] = EARLIEST_TIMESTAMP if strategy == "earliest" else LATEST_TIMESTAMP
        epochs[tp] = state.epoch
    if not targets:
        return
    found = await offsets.list_offsets(targets, isolation_level=config.isolation_level_code)
    for tp, value in found.items():
        current = subs.get(tp)
        if current is None or current.epoch != epochs[tp] or value is None:
            continue
        log.debug("Reset %s to offset %d", tp, value.offset)
        current.reset_to(value.offset)
