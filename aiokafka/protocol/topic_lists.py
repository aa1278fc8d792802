"""Partitions grouped by topic, as requests carry them.

Most requests about partitions list them per topic: ``[Topic(name=..., partitions=[
Partition(partition_index=..., ...), ...]), ...]``. :func:`per_topic` builds such a
list from :class:`~aiokafka.structs.TopicPartition` items given the topic entry's class
and how to make one partition's entry, so each request is written as that entry rather
than as a nested comprehension that groups the partitions and looks each one up again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from aiokafka.structs import TopicPartition

__all__ = ["TopicEntry", "by_topic", "per_topic"]

P = TypeVar("P")
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class TopicEntry(Protocol[P, T_co]):
    """A request's per-topic entry class: ``(name=topic, partitions=[entries])``."""

    def __call__(self, *, name: str, partitions: list[P]) -> T_co: ...


def by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """``{topic: [partition, ...]}``, topics and partitions in first-seen order."""
    out: dict[str, list[int]] = {}
    for tp in partitions:
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


def per_topic(
    partitions: Iterable[TopicPartition],
    topic: TopicEntry[P, T],
    partition: Callable[[TopicPartition], P],
) -> list[T]:
    """``[topic(name=..., partitions=[partition(tp), ...]), ...]``: one entry per
    topic of ``partitions`` holding its partitions' entries, in first-seen order."""
    grouped: dict[str, list[P]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(partition(tp))
    return [topic(name=name, partitions=entries) for name, entries in grouped.items()]
