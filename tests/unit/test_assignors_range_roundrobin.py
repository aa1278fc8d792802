"""Range and round-robin assignors: the Java client's known results and balance."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.coordinator.assignors.range import RangePartitionAssignor as KpRange
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor as KpRoundRobin

from aiokafka.consumer.group.assignors import (
    AbstractPartitionAssignor,
    Assignment,
    GroupMember,
    RangePartitionAssignor,
    RoundRobinPartitionAssignor,
    StaticCluster,
    as_assignor,
)
from aiokafka.structs import TopicPartition as TP


def members(
    spec: dict[str, list[str]], instance_ids: dict[str, str] | None = None
) -> dict[str, GroupMember]:
    ids = instance_ids or {}
    return {m: GroupMember(m, tuple(topics), ids.get(m)) for m, topics in spec.items()}


def short(result: dict[str, Assignment]) -> dict[str, list[str]]:
    return {
        m: [f"{tp.topic}p{tp.partition}" for tp in a.topic_partitions] for m, a in result.items()
    }


# Cases from Kafka's RangeAssignorTest / RoundRobinAssignorTest and the aiokafka docs.
RANGE_CASES = [
    ({"t": 3}, {"c": []}, {"c": []}),
    ({"t": 3}, {"c": ["missing"]}, {"c": []}),
    ({"t": 3, "other": 3}, {"c": ["t"]}, {"c": ["tp0", "tp1", "tp2"]}),
    ({"t": 1}, {"c1": ["t"], "c2": ["t"]}, {"c1": ["tp0"], "c2": []}),
    ({"t": 2}, {"c1": ["t"], "c2": ["t"]}, {"c1": ["tp0"], "c2": ["tp1"]}),
    (
        {"t1": 3, "t2": 2},
        {"consumer1": ["t1"], "consumer2": ["t1", "t2"], "consumer3": ["t1"]},
        {"consumer1": ["t1p0"], "consumer2": ["t1p1", "t2p0", "t2p1"], "consumer3": ["t1p2"]},
    ),
    (
        {"t0": 3, "t1": 3},
        {"C0": ["t0", "t1"], "C1": ["t0", "t1"]},
        {"C0": ["t0p0", "t0p1", "t1p0", "t1p1"], "C1": ["t0p2", "t1p2"]},
    ),
    (
        {"t": 10},
        {"a": ["t"], "b": ["t"], "c": ["t"]},
        {"a": ["tp0", "tp1", "tp2", "tp3"], "b": ["tp4", "tp5", "tp6"], "c": ["tp7", "tp8", "tp9"]},
    ),
]

ROUNDROBIN_CASES = [
    ({"t": 3}, {"c": []}, {"c": []}),
    ({"t": 3, "other": 3}, {"c": ["t"]}, {"c": ["tp0", "tp1", "tp2"]}),
    ({"t": 1}, {"c1": ["t"], "c2": ["t"]}, {"c1": ["tp0"], "c2": []}),
    (
        {"t1": 3, "t2": 2},
        {"consumer1": ["t1"], "consumer2": ["t1", "t2"], "consumer3": ["t1"]},
        {"consumer1": ["t1p0"], "consumer2": ["t1p1", "t2p0", "t2p1"], "consumer3": ["t1p2"]},
    ),
    (
        {"t0": 3, "t1": 3},
        {"C0": ["t0", "t1"], "C1": ["t0", "t1"]},
        {"C0": ["t0p0", "t0p2", "t1p1"], "C1": ["t0p1", "t1p0", "t1p2"]},
    ),
    (
        {"t0": 1, "t1": 2, "t2": 3},
        {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]},
        {"C0": ["t0p0"], "C1": ["t1p0"], "C2": ["t1p1", "t2p0", "t2p1", "t2p2"]},
    ),
]


@pytest.mark.parametrize(("topics", "spec", "expected"), RANGE_CASES)
def test_range_known_results(
    topics: dict[str, int], spec: dict[str, list[str]], expected: dict[str, list[str]]
) -> None:
    result = RangePartitionAssignor().assign(StaticCluster(topics), members(spec))
    assert short(result) == expected


@pytest.mark.parametrize(("topics", "spec", "expected"), ROUNDROBIN_CASES)
def test_roundrobin_known_results(
    topics: dict[str, int], spec: dict[str, list[str]], expected: dict[str, list[str]]
) -> None:
    result = RoundRobinPartitionAssignor().assign(StaticCluster(topics), members(spec))
    assert short(result) == expected


def test_static_members_are_ordered_by_instance_id_first() -> None:
    # Java's MemberInfo order: static members by group.instance.id, then dynamic by id.
    spec = {"consumer-a": ["t"], "consumer-b": ["t"], "consumer-c": ["t"]}
    ids = {"consumer-a": "instance-2", "consumer-b": "instance-1"}
    cluster = StaticCluster({"t": 3})
    rng = RangePartitionAssignor().assign(cluster, members(spec, ids))
    assert short(rng) == {"consumer-a": ["tp1"], "consumer-b": ["tp0"], "consumer-c": ["tp2"]}
    rr = RoundRobinPartitionAssignor().assign(cluster, members(spec, ids))
    assert short(rr) == {"consumer-a": ["tp1"], "consumer-b": ["tp0"], "consumer-c": ["tp2"]}


def test_member_ids_sort_like_java_strings() -> None:
    # U+FF21 (one UTF-16 unit) sorts after U+1F600 (a surrogate pair, 0xD83D...) in
    # Java, but before it by Python code points.
    spec = {"\uff21": ["t"], "\U0001f600": ["t"]}
    result = RangePartitionAssignor().assign(StaticCluster({"t": 2}), members(spec))
    assert short(result) == {"\U0001f600": ["tp0"], "\uff21": ["tp1"]}


def test_topics_unknown_to_the_cluster_are_skipped() -> None:
    spec = {"a": ["known", "unknown"], "b": ["unknown"]}
    for assignor in (RangePartitionAssignor(), RoundRobinPartitionAssignor()):
        result = assignor.assign(StaticCluster({"known": 2}), members(spec))
        assert short(result) == {"a": ["knownp0", "knownp1"], "b": []}


def test_partition_ids_need_not_be_contiguous() -> None:
    cluster = StaticCluster({"t": [5, 1, 3]})
    result = RangePartitionAssignor().assign(cluster, members({"a": ["t"], "b": ["t"]}))
    assert short(result) == {"a": ["tp1", "tp3"], "b": ["tp5"]}


def test_metadata_and_names() -> None:
    assert RangePartitionAssignor().name == "range"
    assert RoundRobinPartitionAssignor().name == "roundrobin"
    sub = RoundRobinPartitionAssignor().metadata({"b", "a"})
    assert sub.topics == ("a", "b") and sub.user_data is None
    assert sub.subscription == ["a", "b"]


# -- properties ---------------------------------------------------------------------


@st.composite
def groups(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, list[str]], dict[str, str]]:
    topics = draw(
        st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 9), min_size=1, max_size=5)
    )
    names = [*sorted(topics), "ghost"]  # "ghost" is subscribed to but does not exist
    spec = draw(
        st.dictionaries(
            st.text("xyz0123", min_size=1, max_size=4),
            st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True),
            min_size=1,
            max_size=7,
        )
    )
    static = draw(st.lists(st.sampled_from(sorted(spec)), unique=True))
    return topics, spec, {m: f"inst-{m}" for m in static}


def check_complete(
    topics: dict[str, int], spec: dict[str, list[str]], result: dict[str, Assignment]
) -> None:
    assert set(result) == set(spec)
    owners = Counter(tp for a in result.values() for tp in a.topic_partitions)
    subscribed = {t for ts in spec.values() for t in ts if t in topics}
    expected = {TP(t, p) for t in subscribed for p in range(topics[t])}
    assert set(owners) == expected
    assert all(n == 1 for n in owners.values())
    for m, a in result.items():
        assert {tp.topic for tp in a.topic_partitions} <= set(spec[m])


@settings(max_examples=300)
@given(groups())
def test_roundrobin_properties(
    group: tuple[dict[str, int], dict[str, list[str]], dict[str, str]],
) -> None:
    topics, spec, ids = group
    result = RoundRobinPartitionAssignor().assign(StaticCluster(topics), members(spec, ids))
    check_complete(topics, spec, result)
    # If all subscriptions are identical, counts differ by at most one. (Only then:
    # with C0 on a,b,c and C00, C1 on a,b,d and partitions b0 b1 c0 d0, C1 is skipped
    # for c0 and C00 gets both b1 and d0 while C1 gets nothing, as in Java.)
    if len({frozenset(ts) for ts in spec.values()}) == 1:
        counts = [len(a.topic_partitions) for a in result.values()]
        assert max(counts) - min(counts) <= 1


def test_roundrobin_can_be_unbalanced_for_equal_members_of_mixed_groups() -> None:
    cluster = StaticCluster({"b": 2, "c": 1, "d": 1})
    spec = {"C0": ["b", "c"], "C00": ["b", "d"], "C1": ["b", "d"]}
    result = RoundRobinPartitionAssignor().assign(cluster, members(spec))
    assert short(result) == {"C0": ["bp0", "cp0"], "C00": ["bp1", "dp0"], "C1": []}


@settings(max_examples=300)
@given(groups())
def test_range_properties(
    group: tuple[dict[str, int], dict[str, list[str]], dict[str, str]],
) -> None:
    topics, spec, ids = group
    result = RangePartitionAssignor().assign(StaticCluster(topics), members(spec, ids))
    check_complete(topics, spec, result)
    for topic in topics:
        counts = [
            sum(tp.topic == topic for tp in result[m].topic_partitions)
            for m in spec
            if topic in spec[m]
        ]
        if counts:
            assert max(counts) - min(counts) <= 1


@settings(max_examples=200)
@given(groups())
def test_same_results_as_kafka_python(
    group: tuple[dict[str, int], dict[str, list[str]], dict[str, str]],
) -> None:
    """kafka-python implements the Java algorithms; run it through the adapter too.

    kafka-python 3.0.12 has two bugs these cases avoid: its range assignor drops
    members when static and dynamic members interleave (``itertools.groupby`` on
    unsorted input), and its round-robin assignor raises ``KeyError`` whenever it
    has to skip a member that does not subscribe to a topic.
    """
    topics, spec, _ = group
    group_members = members(spec)
    cluster = StaticCluster(topics)
    pairs: list[tuple[AbstractPartitionAssignor, AbstractPartitionAssignor]] = [
        (RangePartitionAssignor(), as_assignor(KpRange)),
    ]
    if len({frozenset(ts) for ts in spec.values()}) == 1:
        pairs.append((RoundRobinPartitionAssignor(), as_assignor(KpRoundRobin)))
    for ours, theirs in pairs:
        assert ours.name == theirs.name
        expected = theirs.assign(cluster, group_members)
        got = ours.assign(cluster, group_members)
        assert {m: a.topic_partitions for m, a in got.items()} == {
            m: expected[m].topic_partitions if m in expected else () for m in spec
        }
