"""SubscriptionState, FetchSession and ConsumerConfig: pure state, no broker."""

from __future__ import annotations

import asyncio
import gc
import warnings
from typing import NamedTuple

import pytest

from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.consumer.commits import Committer
from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.fetch_session import FetchSession, PartitionFetch
from aiokafka.consumer.offsets import BadArgumentError, normalize_offsets
from aiokafka.consumer.subscription import SubscriptionState, SubscriptionType, check_partitions
from aiokafka.errors import IllegalStateError
from aiokafka.structs import OffsetAndMetadata, TopicPartition

A0 = TopicPartition("a", 0)
A1 = TopicPartition("a", 1)
B0 = TopicPartition("b", 0)


# -- SubscriptionState ----------------------------------------------------------------


def test_manual_assignment_and_mutual_exclusion() -> None:
    s = SubscriptionState()
    changes: list[int] = []
    s.add_listener(lambda: changes.append(1))
    s.assign_from_user([A0, A1, A0])
    assert s.type is SubscriptionType.USER_ASSIGNED
    assert s.assigned_partitions() == {A0, A1}
    assert changes
    with pytest.raises(IllegalStateError):
        s.subscribe(["a"])
    with pytest.raises(TypeError):
        s.assign_from_user([("a", "0")])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        s.assign_from_user([("a", 0, 1)])  # type: ignore[list-item]
    s.unsubscribe()
    assert s.type is SubscriptionType.NONE and not s.assigned_partitions()
    s.subscribe(["a"])
    with pytest.raises(IllegalStateError):
        s.assign_from_user([A0])


def test_positions_resets_pause_and_epochs() -> None:
    s = SubscriptionState(default_reset="earliest")
    s.assign_from_user([A0, A1])
    assert s.missing_positions() == [A0, A1]
    assert s.fetchable_partitions() == []
    s.seek(A0, 5)
    st = s.state(A0)
    e = st.epoch
    assert st.position == 5 and s.fetchable_partitions() == [A0]
    s.request_reset([A0])
    assert st.reset_strategy == "earliest" and st.epoch > e
    assert A0 in s.missing_positions()
    s.seek(A0, 7)
    s.pause([A0])
    assert s.paused_partitions() == {A0} and s.fetchable_partitions() == []
    s.resume([A0])
    assert s.fetchable_partitions() == [A0]
    assert s.all_consumed_offsets() == {A0: (7, None)}
    with pytest.raises(IllegalStateError):
        s.seek(B0, 1)


def test_reassignment_keeps_positions_of_kept_partitions() -> None:
    s = SubscriptionState()
    s.assign_from_user([A0, A1])
    s.seek(A0, 3)
    old = s.state(A0)
    v = s.assignment_version
    s.assign_from_user([A0, B0])
    assert s.state(A0) is old and s.state(A0).position == 3
    assert not s.is_assigned(A1) and s.assignment_version == v + 1


def test_group_assignment_requires_subscribed_topics() -> None:
    s = SubscriptionState()
    s.subscribe(["a"])
    s.assign_from_subscribed([A0])
    with pytest.raises(IllegalStateError):
        s.assign_from_subscribed([B0])
    s2 = SubscriptionState()
    s2.subscribe_pattern("^a")
    s2.change_subscription(["a"])
    s2.assign_from_subscribed([A1])
    assert s2.assigned_partitions() == {A1}


def test_fetch_metadata_update() -> None:
    s = SubscriptionState()
    s.assign_from_user([A0])
    st = s.state(A0)
    s.update_fetch_metadata(st, 10, 8, 2)
    assert (st.highwater, st.last_stable_offset, st.log_start_offset) == (10, 8, 2)
    assert st.last_poll_ms is not None and st.last_poll_ms > 0


# -- FetchSession ---------------------------------------------------------------------


def pf(offset: int) -> PartitionFetch:
    return PartitionFetch(offset, -1, 1024)


def test_session_full_then_incremental_then_forgotten() -> None:
    s = FetchSession()
    plan = s.plan({A0: pf(0), A1: pf(0)})
    assert plan.is_full and (plan.session_id, plan.epoch) == (0, 0)
    assert set(plan.to_send) == {A0, A1}
    s.on_response(plan, 77)
    assert (s.session_id, s.epoch) == (77, 1)
    # A0 advanced, A1 unchanged: only A0 is sent; B0 new; nothing forgotten.
    plan = s.plan({A0: pf(10), A1: pf(0), B0: pf(0)})
    assert not plan.is_full and (plan.session_id, plan.epoch) == (77, 1)
    assert set(plan.to_send) == {A0, B0} and plan.forgotten == []
    s.on_response(plan, 77)
    assert s.epoch == 2
    plan = s.plan({A0: pf(10)})
    assert plan.to_send == {} and sorted(plan.forgotten) == [A1, B0]
    s.on_response(plan, 77)
    assert s.incremental_fetches == 2 and s.full_fetches == 1


def test_session_reset_and_no_session_from_broker() -> None:
    s = FetchSession()
    plan = s.plan({A0: pf(0)})
    s.on_response(plan, 0)  # the broker did not create a session
    assert s.plan({A0: pf(5)}).is_full
    plan = s.plan({A0: pf(5)})
    s.on_response(plan, 9)
    s.reset()  # e.g. FETCH_SESSION_ID_NOT_FOUND
    plan = s.plan({A0: pf(6)})
    assert plan.is_full and plan.session_id == 0 and set(plan.to_send) == {A0}


def test_session_epoch_wraps_to_one() -> None:
    s = FetchSession()
    s.on_response(s.plan({A0: pf(0)}), 3)
    s.epoch = 2**31 - 1
    s.on_response(s.plan({A0: pf(1)}), 3)
    assert s.epoch == 1


# -- ConsumerConfig -------------------------------------------------------------------


def test_config_defaults() -> None:
    c = ConsumerConfig.from_options(bootstrap_servers="h:1")
    assert (c.fetch_max_wait_ms, c.fetch_min_bytes, c.fetch_max_bytes) == (500, 1, 52428800)
    assert c.max_partition_fetch_bytes == 1048576 and c.max_poll_records is None
    assert (c.auto_offset_reset, c.enable_auto_commit, c.check_crcs) == ("latest", True, True)
    assert c.isolation_level_code == 0 and c.group_protocol == "classic"
    assert c.client.bootstrap_addresses == (("h", 1),)
    assert c.client.client_id.startswith("aiokafka-")  # type: ignore[union-attr]
    assert c.effective_rebalance_timeout_ms == c.session_timeout_ms


@pytest.mark.parametrize(
    ("options", "exc", "name"),
    [
        ({"no_such_option": 1}, TypeError, "no_such_option"),
        ({"fetch_min_bytes": 0}, ValueError, "fetch_min_bytes"),
        ({"fetch_max_wait_ms": "5"}, TypeError, "fetch_max_wait_ms"),
        ({"auto_offset_reset": "smallest"}, ValueError, "auto_offset_reset"),
        ({"isolation_level": "committed"}, ValueError, "isolation_level"),
        ({"enable_auto_commit": 1}, TypeError, "enable_auto_commit"),
        ({"max_poll_records": 0}, ValueError, "max_poll_records"),
        ({"heartbeat_interval_ms": 10000}, ValueError, "heartbeat_interval_ms"),
        ({"group_protocol": "x"}, ValueError, "group_protocol"),
        ({"value_deserializer": 3}, TypeError, "value_deserializer"),
        ({"group_instance_id": "i"}, ValueError, "group_instance_id"),
        ({"fetch_max_wait_ms": 40000}, ValueError, "fetch_max_wait_ms"),
        ({"request_timeout_ms": -1}, ValueError, "request_timeout_ms"),
    ],
)
def test_config_rejects(options: dict[str, object], exc: type[Exception], name: str) -> None:
    with pytest.raises(exc, match=name):
        ConsumerConfig.from_options(**options)


def test_loop_is_accepted_and_ignored_with_a_deprecation_warning() -> None:
    # aiokafka 0.14 took loop= with a DeprecationWarning; code passing it keeps running.
    loop = asyncio.new_event_loop()
    try:
        with pytest.warns(DeprecationWarning, match="loop"):
            config = ConsumerConfig.from_options(loop=loop)
    finally:
        loop.close()
    assert not hasattr(config, "loop")


def test_unknown_option_is_a_value_error_too_and_suggests_the_name() -> None:
    with pytest.raises(ValueError, match="'max_poll_recods'; did you mean 'max_poll_records'"):
        ConsumerConfig.from_options(max_poll_recods=3)


def test_created_outside_a_running_loop_silently() -> None:
    """aiokafka 0.14 raised RuntimeError here (after Python 3.12's own
    DeprecationWarning); this consumer binds to the loop running at start(). Neither
    that nor dropping a consumer that never started warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        consumer = AIOKafkaConsumer("t", bootstrap_servers="localhost:1")
        assert consumer.subscription() == {"t"}
        del consumer
        gc.collect()


def test_commit_offsets_are_checked_like_aiokafka() -> None:
    tp = TopicPartition("t", 0)

    def assigned(x: TopicPartition) -> bool:
        return x == tp

    assert normalize_offsets({tp: 5}, assigned) == {tp: OffsetAndMetadata(5, "")}
    assert normalize_offsets({tp: [6, "m"]}, assigned) == {tp: OffsetAndMetadata(6, "m")}
    for bad in ({}, "something", {tp: (1, "m", 2)}, {tp: -1}, {tp: "x"}):
        with pytest.raises(ValueError):
            normalize_offsets(bad, assigned)  # type: ignore[arg-type]
    for bad, message in (({"t": 1}, "Key should be"), ({tp: (1, b"m")}, "Metadata should be")):
        with pytest.raises(BadArgumentError, match=message) as info:
            normalize_offsets(bad, assigned)  # type: ignore[arg-type]
        assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    # The structure is checked before the assignment, as aiokafka does.
    other = TopicPartition("t", 1)
    with pytest.raises(BadArgumentError):
        normalize_offsets({other: 1, tp: (1, 2)}, assigned)
    with pytest.raises(IllegalStateError, match="is not assigned"):
        normalize_offsets({other: 1, tp: 2}, assigned)


def test_assignment_received_tracks_the_current_subscription() -> None:
    subs = SubscriptionState()
    subs.subscribe(["t"])
    assert not subs.assignment_received  # commit(): "No partitions assigned"
    subs.assign_from_subscribed([])
    assert subs.assignment_received  # empty, but assigned: commit() commits nothing
    subs.subscribe(["t", "u"])
    assert not subs.assignment_received
    subs.unsubscribe()
    assert not subs.assignment_received and not subs.is_subscribed_or_assigned


def test_commit_checks_of_a_subscribed_consumer_before_its_first_assignment() -> None:
    subs = SubscriptionState()
    committer = Committer(subs, None, None)  # type: ignore[arg-type]
    tp = TopicPartition("t", 0)
    with pytest.raises(IllegalStateError, match="Not subscribed to any topics"):
        committer.check_commit(None)
    subs.subscribe(["t"])
    # commit() (e.g. from on_partitions_revoked(set()) before the first join)
    # commits nothing; explicit offsets raise as in aiokafka.
    assert committer.check_commit(None) == {}
    with pytest.raises(IllegalStateError, match="No partitions assigned"):
        committer.check_commit({tp: 1})
    subs.assign_from_subscribed([tp])
    assert committer.check_commit({tp: 1}) == {tp: OffsetAndMetadata(1, "")}


def test_records_of_topics_no_longer_subscribed_are_not_returnable() -> None:
    subs = SubscriptionState()
    a, b = TopicPartition("a", 0), TopicPartition("b", 0)
    subs.subscribe(["a"])
    subs.assign_from_subscribed([a])
    assert subs.returnable is None  # everything assigned may be returned
    subs.subscribe(["b"])  # the group has yet to revoke a
    assert subs.returnable == frozenset() and subs.assigned_partitions() == {a}
    subs.assign_from_subscribed([b])
    assert subs.returnable is None
    subs.unsubscribe()
    subs.assign_from_user([a])
    assert subs.returnable is None


def test_the_partition_state_is_the_only_writer_of_the_position() -> None:
    s = SubscriptionState()
    s.assign_from_user([A0])
    state = s.state(A0)
    # Read-only to everyone else: the state's methods are the only writers.
    for name in ("position", "position_epoch", "reset_strategy"):
        with pytest.raises(AttributeError):
            setattr(state, name, 1)
    s.seek(A0, 5, 2)
    assert (state.position, state.position_epoch, state.epoch) == (5, 2, 1)
    # Handing out records moves the position without making fetched data stale.
    state.advance(8, 3)
    state.skip_to(10)  # a control batch: the epoch of the last record stays
    assert (state.position, state.position_epoch, state.epoch) == (10, 3, 1)
    s.request_reset([A0], "earliest")
    assert state.epoch == 2 and not state.has_valid_position
    state.reset_to(0)  # the look-up's answer: nothing was fetched meanwhile
    assert (state.position, state.position_epoch, state.reset_strategy) == (0, None, None)
    assert state.epoch == 2 and state.is_fetchable
    s.clear_position(A0)
    assert state.position is None and state.epoch == 3
    s.assign_from_user([A1])  # unassigned: its fetched data is stale
    assert state.epoch == 4


def test_partition_pairs_of_another_tuple_type_count_as_topic_partitions() -> None:
    """aiokafka 0.14 does not check partitions; faust-streaming passes its own ``TP``
    named tuple to seek(), position() and the offset look-ups."""

    class TP(NamedTuple):
        topic: str
        partition: int

    assert check_partitions([TP("a", 0), ("a", 1), TopicPartition("a", 0)]) == [
        TopicPartition("a", 0),
        TopicPartition("a", 1),
    ]
    assert all(type(tp) is TopicPartition for tp in check_partitions([TP("a", 0)]))
    for bad in (("a", True), ("a",), ["a", 0], TP("a", "0")):  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="expected TopicPartition"):
            check_partitions([bad])
