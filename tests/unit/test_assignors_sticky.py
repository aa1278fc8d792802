"""Sticky and cooperative-sticky assignors: balance, stickiness, conflicts, KIP-429."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from hypothesis import given, settings
from hypothesis import strategies as st

from aiokafka.consumer.group.assignors import (
    Assignment,
    CooperativeStickyAssignor,
    GroupMember,
    RebalanceProtocol,
    StaticCluster,
    StickyPartitionAssignor,
)
from aiokafka.consumer.group.assignors.codec import encode_sticky_user_data
from aiokafka.consumer.group.assignors.sticky_core import MemberClaim, resolve_ownership
from aiokafka.structs import TopicPartition as TP

Owned = Mapping[str, tuple[TP, ...]]


def sticky_members(
    spec: Mapping[str, list[str]], owned: Owned | None = None, generation: int | None = 1
) -> dict[str, GroupMember]:
    """Members as the eager sticky assignor sees them: previous assignment in user data."""
    owned = owned or {}
    return {
        m: GroupMember(
            m,
            tuple(topics),
            user_data=encode_sticky_user_data(owned[m], generation) if m in owned else None,
        )
        for m, topics in spec.items()
    }


def coop_members(
    spec: Mapping[str, list[str]], owned: Owned | None = None, generation: int = 1
) -> dict[str, GroupMember]:
    owned = owned or {}
    return {
        m: GroupMember(
            m,
            tuple(topics),
            owned_partitions=owned.get(m, ()),
            generation_id=generation if m in owned else -1,
        )
        for m, topics in spec.items()
    }


def parts(result: Mapping[str, Assignment]) -> dict[str, tuple[TP, ...]]:
    return {m: a.topic_partitions for m, a in result.items()}


def check_valid(
    topics: Mapping[str, int], spec: Mapping[str, list[str]], result: Mapping[str, tuple[TP, ...]]
) -> None:
    """Every subscribed partition exactly once, only to subscribers."""
    owners = Counter(tp for tps in result.values() for tp in tps)
    expected = {
        TP(t, p) for ts in spec.values() for t in ts if t in topics for p in range(topics[t])
    }
    assert set(owners) == expected
    assert all(n == 1 for n in owners.values())
    for m, tps in result.items():
        assert {tp.topic for tp in tps} <= set(spec[m])


def check_balanced(spec: Mapping[str, list[str]], result: Mapping[str, tuple[TP, ...]]) -> None:
    """Java's isBalanced: no partition could go to a subscriber with 2+ fewer."""
    for heavy, h_tps in result.items():
        for light, l_tps in result.items():
            if len(h_tps) >= len(l_tps) + 2:
                assert not any(tp.topic in spec[light] for tp in h_tps), (heavy, light)
    for m1 in spec:
        for m2 in spec:
            if set(spec[m1]) == set(spec[m2]):
                assert abs(len(result[m1]) - len(result[m2])) <= 1


def min_moves_identical(prev_counts: list[int], total: int, n_members: int) -> int:
    """Fewest partitions that must change owner to balance identical subscribers.

    Final counts are floor/ceil of total/n; the ceil quotas are best given to the
    members that have most now, and a member keeps at most min(now, quota).
    """
    base, extra = divmod(total, n_members)
    quotas = [base + 1] * extra + [base] * (n_members - extra)
    counts = sorted(prev_counts, reverse=True) + [0] * (n_members - len(prev_counts))
    return total - sum(min(c, q) for c, q in zip(counts, quotas, strict=True))


def moved(before: Owned, after: Mapping[str, tuple[TP, ...]]) -> int:
    return sum(len(set(tps) - set(after.get(m, ()))) for m, tps in before.items())


# -- fixed scenarios ----------------------------------------------------------------


def test_names_and_protocols() -> None:
    assert StickyPartitionAssignor().name == "sticky"
    assert CooperativeStickyAssignor().name == "cooperative-sticky"
    assert StickyPartitionAssignor().supported_protocols() == [RebalanceProtocol.EAGER]
    assert CooperativeStickyAssignor().supported_protocols() == [
        RebalanceProtocol.COOPERATIVE,
        RebalanceProtocol.EAGER,
    ]


def test_fresh_assignment_deals_round_robin_like_java() -> None:
    result = parts(
        StickyPartitionAssignor().assign(
            StaticCluster({"t0": 3, "t1": 3}),
            sticky_members({"C0": ["t0", "t1"], "C1": ["t0", "t1"]}),
        )
    )
    assert result == {
        "C0": (TP("t0", 0), TP("t0", 2), TP("t1", 1)),
        "C1": (TP("t0", 1), TP("t1", 0), TP("t1", 2)),
    }


def test_kip54_example_with_different_subscriptions() -> None:
    # KIP-54: C0 on t0; C1 on t0, t1; C2 on t0, t1, t2 with t0: 1, t1: 2, t2: 3.
    spec = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    result = parts(
        StickyPartitionAssignor().assign(
            StaticCluster({"t0": 1, "t1": 2, "t2": 3}), sticky_members(spec)
        )
    )
    assert result == {
        "C0": (TP("t0", 0),),
        "C1": (TP("t1", 0), TP("t1", 1)),
        "C2": (TP("t2", 0), TP("t2", 1), TP("t2", 2)),
    }
    # KIP-54 continues: C0 leaves. Round robin would reshuffle; sticky keeps C1, C2.
    del spec["C0"]
    after = parts(
        StickyPartitionAssignor().assign(
            StaticCluster({"t0": 1, "t1": 2, "t2": 3}),
            sticky_members(spec, {m: result[m] for m in spec}),
        )
    )
    assert set(result["C1"]) <= set(after["C1"]) and set(result["C2"]) <= set(after["C2"])
    check_valid({"t0": 1, "t1": 2, "t2": 3}, spec, after)


def test_member_joining_takes_only_what_balance_requires() -> None:
    cluster = StaticCluster({"t": 20})
    prev = {
        "a": tuple(TP("t", p) for p in range(10)),
        "b": tuple(TP("t", p) for p in range(10, 20)),
    }
    spec = {"a": ["t"], "b": ["t"], "c": ["t"]}
    result = parts(StickyPartitionAssignor().assign(cluster, sticky_members(spec, prev)))
    check_valid({"t": 20}, spec, result)
    assert sorted(len(v) for v in result.values()) == [6, 7, 7]
    assert moved(prev, result) == 6
    assert set(result["a"]) <= set(prev["a"]) and set(result["b"]) <= set(prev["b"])


def test_metadata_carries_previous_assignment_and_generation() -> None:
    assignor = StickyPartitionAssignor()
    assert assignor.metadata({"t"}).user_data is None
    assignor.receive_assignment(Assignment.of([TP("t", 1), TP("t", 0)]), 7)
    assert assignor.member_assignment == (TP("t", 0), TP("t", 1))
    assert assignor.generation == 7
    sub = assignor.metadata({"t"})
    assert sub.user_data == encode_sticky_user_data((TP("t", 0), TP("t", 1)), 7)
    # The leader reads it back: both partitions stay with this member.
    members = {"me": GroupMember.from_subscription("me", sub), "new": GroupMember("new", ("t",))}
    result = parts(StickyPartitionAssignor().assign(StaticCluster({"t": 3}), members))
    assert result["me"] == (TP("t", 0), TP("t", 1))


def test_higher_generation_wins_a_conflicting_claim() -> None:
    spec = {"a": ["t"], "b": ["t"]}
    claims = {
        "a": MemberClaim(frozenset({"t"}), (TP("t", 0), TP("t", 1)), 5),
        "b": MemberClaim(frozenset({"t"}), (TP("t", 1),), 4),
    }
    result = resolve_ownership({"t": [0, 1, 2]}, claims, ["a", "b"])
    assert result.owner == {TP("t", 0): "a", TP("t", 1): "a"}
    assert result.previous_owner == {TP("t", 1): "b"}
    # Through the assignor: b, the stale claimant, gets t-1 back when a gives one up.
    prev: Owned = {"a": (TP("t", 0), TP("t", 1)), "b": (TP("t", 1),)}
    members = {
        "a": GroupMember("a", ("t",), user_data=encode_sticky_user_data(prev["a"], 5)),
        "b": GroupMember("b", ("t",), user_data=encode_sticky_user_data(prev["b"], 4)),
    }
    out = parts(StickyPartitionAssignor().assign(StaticCluster({"t": 2}), members))
    check_valid({"t": 2}, spec, out)
    assert out == {"a": (TP("t", 0),), "b": (TP("t", 1),)}


def test_same_generation_claims_cancel_out() -> None:
    claims = {
        "a": MemberClaim(frozenset({"t"}), (TP("t", 0), TP("t", 1)), 3),
        "b": MemberClaim(frozenset({"t"}), (TP("t", 1), TP("t", 2)), 3),
    }
    result = resolve_ownership({"t": [0, 1, 2]}, claims, ["a", "b"])
    assert result.owner == {TP("t", 0): "a", TP("t", 2): "b"}


def test_claims_on_unsubscribed_or_missing_partitions_are_ignored() -> None:
    claims = {"a": MemberClaim(frozenset({"t"}), (TP("t", 0), TP("t", 9), TP("u", 0)), 1)}
    assert resolve_ownership({"t": [0, 1], "u": [0]}, claims, ["a"]).owner == {TP("t", 0): "a"}


def test_garbage_user_data_only_loses_stickiness() -> None:
    members = {
        "a": GroupMember("a", ("t",), user_data=b"\x00\x00\x00\x09junk"),
        "b": GroupMember("b", ("t",)),
    }
    out = parts(StickyPartitionAssignor().assign(StaticCluster({"t": 4}), members))
    check_valid({"t": 4}, {"a": ["t"], "b": ["t"]}, out)


# -- properties ---------------------------------------------------------------------


@st.composite
def scenarios(
    draw: st.DrawFn, identical: bool = False
) -> tuple[dict[str, int], dict[str, list[str]], dict[str, tuple[TP, ...]]]:
    """Topics, subscriptions and a valid (one owner per partition) previous assignment."""
    topics = draw(
        st.dictionaries(st.sampled_from("abcde"), st.integers(0, 12), min_size=1, max_size=4)
    )
    names = sorted(topics)
    n = draw(st.integers(1, 7))
    member_ids = [f"m{i}" for i in range(n)]
    if identical:
        chosen = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        spec = {m: list(chosen) for m in member_ids}
    else:
        spec = {
            m: draw(st.lists(st.sampled_from(names), min_size=1, unique=True)) for m in member_ids
        }
    rnd = draw(st.randoms(use_true_random=False))
    owned: dict[str, list[TP]] = {m: [] for m in member_ids}
    for t, count in topics.items():
        for p in range(count):
            holders = [m for m in member_ids if t in spec[m]]
            if holders and rnd.random() < 0.8:
                owned[rnd.choice(holders)].append(TP(t, p))
    return topics, spec, {m: tuple(v) for m, v in owned.items()}


@settings(max_examples=300, deadline=None)
@given(scenarios())
def test_sticky_is_valid_and_balanced(
    scenario: tuple[dict[str, int], dict[str, list[str]], dict[str, tuple[TP, ...]]],
) -> None:
    topics, spec, owned = scenario
    cluster = StaticCluster(topics)
    for members in (sticky_members(spec), sticky_members(spec, owned)):
        result = parts(StickyPartitionAssignor().assign(cluster, members))
        check_valid(topics, spec, result)
        check_balanced(spec, result)


@settings(max_examples=300, deadline=None)
@given(scenarios(identical=True))
def test_sticky_moves_the_minimum_with_identical_subscriptions(
    scenario: tuple[dict[str, int], dict[str, list[str]], dict[str, tuple[TP, ...]]],
) -> None:
    topics, spec, owned = scenario
    total = sum(topics[t] for t in next(iter(spec.values())))
    result = parts(
        StickyPartitionAssignor().assign(StaticCluster(topics), sticky_members(spec, owned))
    )
    check_valid(topics, spec, result)
    check_balanced(spec, result)
    unowned = total - sum(len(v) for v in owned.values())
    # Partitions nobody owned before do not count as moved.
    fewest = min_moves_identical([len(v) for v in owned.values()], total, len(spec)) - unowned
    assert moved(owned, result) == fewest


@settings(max_examples=200, deadline=None)
@given(scenarios(identical=True), st.booleans())
def test_sticky_member_join_or_leave_moves_the_minimum(
    scenario: tuple[dict[str, int], dict[str, list[str]], dict[str, tuple[TP, ...]]], join: bool
) -> None:
    topics, spec, _ = scenario
    cluster = StaticCluster(topics)
    first = parts(StickyPartitionAssignor().assign(cluster, sticky_members(spec)))
    total = sum(len(v) for v in first.values())
    spec2 = dict(spec)
    if join:
        spec2["zz-new"] = list(next(iter(spec.values())))
    elif len(spec) > 1:
        del spec2[sorted(spec)[0]]
    prev = {m: first[m] for m in spec2 if m in first}
    second = parts(StickyPartitionAssignor().assign(cluster, sticky_members(spec2, prev)))
    check_valid(topics, spec2, second)
    check_balanced(spec2, second)
    if join:
        assert moved(prev, second) == min_moves_identical(
            [len(v) for v in prev.values()], total, len(spec2)
        )
    else:
        assert moved(prev, second) == 0  # only the leaver's partitions move
