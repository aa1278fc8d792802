"""Planning reads: which partitions, which offsets, which offset ranges per Spark task.

Runs on the driver side (Spark's planner processes) with an admin client: partitions
come from fresh cluster metadata on every call (so partitions added while a streaming
query runs are seen at the next trigger), offsets from ListOffsets with the reader's
isolation level (``read_committed`` ends at the last stable offset). Offsets are
handed to Spark in the JSON shape of Spark's own Kafka source:
``{"topic": {"0": 123, "1": 456}}``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiokafka.structs import TopicPartition

from .options import EARLIEST, LATEST, TP, OffsetSpec, ReadOptions, Subscription

if TYPE_CHECKING:
    from aiokafka.admin import AIOKafkaAdminClient, IsolationLevel

# The admin client is imported where it is used (the driver side): Spark's Python
# workers unpickle OffsetRange from this module and must not pay for importing it.

Offsets = dict[TP, int]

log = logging.getLogger("aiokafka.spark")


class DataLossError(RuntimeError):
    """Offsets to read are gone (retention, truncation, a deleted topic or partition)
    and ``failOnDataLoss`` is true; the message names topic, partition and offsets."""


def data_loss_message(what: str) -> str:
    """The text of a :class:`DataLossError`, with the option that turns it off."""
    return (
        f"{what}. Some data may have been lost because they are not available in Kafka any "
        "more: deleted by retention, truncated, or the topic was deleted. If you want the "
        "query to continue, set the option failOnDataLoss=false."
    )


def data_lost(what: str, fail_on_data_loss: bool, then: str) -> None:
    """Offsets to read are gone (``what`` names topic, partition and offsets): raise
    :class:`DataLossError` if ``failOnDataLoss``, else log a warning saying what
    the reader does instead (``then``) and return.

    Raises:
        DataLossError: ``fail_on_data_loss`` is true.
    """
    if fail_on_data_loss:
        raise DataLossError(data_loss_message(what))
    log.warning("%s; failOnDataLoss=false: %s", what, then)


@dataclass(frozen=True)
class OffsetRange:
    """Offsets ``[start, end)`` of one partition: what one Spark task reads."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        """Number of offsets in the range (records, markers and aborted ones)."""
        return self.end - self.start


def to_json(offsets: Offsets) -> dict[str, dict[str, int]]:
    """``{(topic, p): o}`` -> ``{"topic": {"p": o}}`` (Spark's checkpoint shape)."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def from_json(data: Any) -> Offsets:
    """The inverse of :func:`to_json`.

    Raises:
        ValueError: not that shape (e.g. a checkpoint written by another source).
    """
    if not isinstance(data, dict):
        raise ValueError(f"not a Kafka offsets object: {data!r}")
    out: Offsets = {}
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            raise ValueError(f"not a Kafka offsets object: {data!r}")
        for partition, offset in parts.items():
            out[(str(topic), int(partition))] = int(offset)
    return out


def isolation(options: ReadOptions) -> IsolationLevel:
    """The ListOffsets isolation matching the consumer's ``isolation_level``."""
    from aiokafka.admin import IsolationLevel

    level = options.consumer_kwargs.get("isolation_level", "read_uncommitted")
    return (
        IsolationLevel.READ_COMMITTED
        if level == "read_committed"
        else IsolationLevel.READ_UNCOMMITTED
    )


async def discover(admin: AIOKafkaAdminClient, subscription: Subscription) -> list[TP]:
    """The partitions the subscription covers now (fresh metadata), sorted.

    Topics of ``subscribe`` that do not exist have no partitions (as in Spark's
    connector); ``assign`` is taken as given.
    """
    if subscription.kind == "assign":
        return sorted(subscription.partitions)
    names = [t for t in await admin.list_topics() if subscription.matches(t)]
    if subscription.kind == "subscribePattern":
        names = [t for t in names if not t.startswith("__")]
    if not names:
        return []
    found: list[TP] = []
    for topic in await admin.describe_topics(names, raise_errors=True):
        found.extend((topic.name, p.partition) for p in topic.partitions)
    return sorted(found)


async def list_offsets(
    admin: AIOKafkaAdminClient, tps: list[TP], which: int, level: IsolationLevel
) -> Offsets:
    """Earliest (``which`` = -2) or latest (-1) offsets of ``tps``."""
    from aiokafka.admin.types import OffsetSpec as AdminOffsetSpec

    if not tps:
        return {}
    spec = AdminOffsetSpec.earliest() if which == EARLIEST else AdminOffsetSpec.latest()
    found = await admin.list_offsets({TopicPartition(t, p): spec for t, p in tps}, level)
    return {(tp.topic, tp.partition): info.offset for tp, info in found.items()}


async def resolve(
    admin: AIOKafkaAdminClient,
    tps: list[TP],
    spec: OffsetSpec,
    options: ReadOptions,
    option_name: str,
) -> Offsets:
    """Concrete offsets of ``tps`` for a ``starting``/``ending`` spec.

    Partitions a per-partition spec does not list start at the earliest offset and end
    at the latest one.

    Raises:
        ValueError: the spec names a partition outside the subscription, or a
            starting timestamp matches no record and the strategy is ``error``.
    """
    from aiokafka.admin.types import OffsetSpec as AdminOffsetSpec

    level = isolation(options)
    starting = option_name.startswith("starting")
    default = EARLIEST if starting else LATEST
    if spec.kind in ("earliest", "latest"):
        return await list_offsets(
            admin, tps, EARLIEST if spec.kind == "earliest" else LATEST, level
        )
    unknown = sorted(set(spec.offsets) - set(tps))
    if unknown:
        raise ValueError(
            f"option {option_name!r} names partitions that are not subscribed or do not "
            f"exist: {', '.join(f'{t}-{p}' for t, p in unknown)}"
        )
    if spec.kind == "offsets":
        wanted = {tp: spec.offsets.get(tp, default) for tp in tps}
        out = {tp: o for tp, o in wanted.items() if o >= 0}
        for special in (EARLIEST, LATEST):
            todo = [tp for tp, o in wanted.items() if o == special]
            out.update(await list_offsets(admin, todo, special, level))
        return out
    stamps = (
        dict.fromkeys(tps, spec.timestamp or 0)
        if spec.kind == "timestamp"
        else {tp: spec.offsets[tp] for tp in tps if tp in spec.offsets}
    )
    out = {}
    if stamps:
        found = await admin.list_offsets(
            {
                TopicPartition(t, p): AdminOffsetSpec.for_timestamp(ts)
                for (t, p), ts in stamps.items()
            },
            level,
        )
        for tp, info in found.items():
            if info.offset >= 0:
                out[(tp.topic, tp.partition)] = info.offset
    missing = [tp for tp in tps if tp not in out]
    if missing and starting and options.timestamp_strategy == "error":
        lacking = [tp for tp in missing if tp in stamps]
        if lacking:
            raise ValueError(
                f"option {option_name!r}: no record at or after the timestamp in "
                f"{', '.join(f'{t}-{p}' for t, p in lacking)} (set "
                "startingOffsetsByTimestampStrategy=latest to start at the end instead)"
            )
    fallback = [tp for tp in missing if tp not in stamps]
    out.update(await list_offsets(admin, fallback, default, level))
    out.update(await list_offsets(admin, [tp for tp in missing if tp in stamps], LATEST, level))
    return out


def split_ranges(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Split ranges so that there are at least ``min_partitions`` of them.

    As Spark's connector: each range gets a share of ``min_partitions`` proportional to
    its size (at least one), and is cut into that many near-equal pieces.
    """
    ranges = [r for r in ranges if r.size > 0]
    if min_partitions is None or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    out: list[OffsetRange] = []
    for r in ranges:
        parts = max(1, min(r.size, math.ceil(min_partitions * r.size / total)))
        for i in range(parts):
            start = r.start + r.size * i // parts
            end = r.start + r.size * (i + 1) // parts
            out.append(OffsetRange(r.topic, r.partition, start, end))
    return out


def group_ranges(ranges: list[OffsetRange], tasks: int) -> list[tuple[OffsetRange, ...]]:
    """Ranges (of distinct partitions) shared among ``tasks`` groups of near-equal
    total size: largest first, each into the group with the least so far (ties: the
    lower group). Depends only on the ranges, so a replayed batch groups the same."""
    groups: list[list[OffsetRange]] = [[] for _ in range(max(1, tasks))]
    totals = [0] * len(groups)
    for r in sorted(ranges, key=lambda r: (-r.size, r.topic, r.partition)):
        least = totals.index(min(totals))
        groups[least].append(r)
        totals[least] += r.size
    return [tuple(sorted(group, key=lambda r: (r.topic, r.partition))) for group in groups if group]


def rate_limit(start: Offsets, latest: Offsets, limit: int) -> Offsets:
    """End offsets that admit at most about ``limit`` offsets across partitions.

    The limit is shared in proportion to each partition's backlog, as in Spark's
    connector (a partition with any backlog advances by at least one).
    """
    backlog = {tp: max(0, end - start.get(tp, end)) for tp, end in latest.items()}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    out: Offsets = {}
    for tp, end in latest.items():
        begin = start.get(tp, end)
        share = limit * backlog[tp] / total
        step = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(end, begin + step)
    return out
