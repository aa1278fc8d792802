"""Transactional producer against a real broker: commit/abort visibility for three
read_committed consumers (ours, confluent-kafka, kafka-python), fencing, illegal
transitions, the context manager and send_offsets_to_transaction."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from aiokafka.cluster.client import CoordinatorType
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.errors import (
    CommitFailedError,
    IllegalStateError,
    InvalidTxnState,
    KafkaError,
    KafkaTimeoutError,
    ProducerFenced,
    TransactionAbortableError,
    TransactionAbortedError,
    TransactionErrorKind,
    transaction_error_kind,
)
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition
from tools.kafka.rig import KafkaCluster

NewTopic = Callable[..., str]

pytestmark = pytest.mark.timeout(180)


def txn_id() -> str:
    return f"txn-{uuid.uuid4().hex}"


async def txn_producer(kafka: KafkaCluster, tid: str | None = None, **kw: Any) -> AIOKafkaProducer:
    kw.setdefault("linger_ms", 2)
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, transactional_id=tid or txn_id(), **kw
    )
    await producer.start()
    return producer


@pytest.fixture
async def producer(kafka: KafkaCluster) -> AsyncIterator[AIOKafkaProducer]:
    p = await txn_producer(kafka)
    yield p
    await p.stop()


async def read_ours(
    kafka: KafkaCluster, topic: str, partitions: int, isolation: str, until: int
) -> dict[int, list[bytes]]:
    """Values per partition, read from the start until every partition's position
    reaches its end offset and ``until`` records were seen (bounded)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        isolation_level=isolation,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    )
    async with consumer:
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for tp, records in (await consumer.getmany(timeout_ms=200)).items():
                out[tp.partition].extend(r.value for r in records if r.value is not None)
            positions = [await consumer.position(tp) for tp in tps]
            if sum(map(len, out.values())) >= until and all(
                pos >= ends[tp] for pos, tp in zip(positions, tps, strict=True)
            ):
                break
    return out


def read_confluent(
    kafka: KafkaCluster, topic: str, partitions: int, until: int
) -> dict[int, list[bytes]]:
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": f"reader-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    try:
        consumer.assign([CTopicPartition(topic, p, 0) for p in range(partitions)])
        eof: set[int] = set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            msg: Any
            for msg in consumer.consume(num_messages=1000, timeout=0.3):
                if msg.error():
                    if msg.error().code() == -191:  # _PARTITION_EOF
                        eof.add(msg.partition())
                        continue
                    raise RuntimeError(str(msg.error()))
                out[msg.partition()].append(msg.value())
            if len(eof) == partitions and sum(map(len, out.values())) >= until:
                break
        return out
    finally:
        consumer.close()


def read_kafka_python(
    kafka: KafkaCluster, topic: str, partitions: int, until: int
) -> dict[int, list[bytes]]:
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KTopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        enable_auto_commit=False,
        isolation_level="read_committed",
    )
    out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    try:
        tps = [KTopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            for tp, records in consumer.poll(timeout_ms=300).items():
                out[tp.partition].extend(r.value for r in records)
            if sum(map(len, out.values())) >= until and all(
                consumer.position(tp) >= ends[tp] for tp in tps
            ):
                break
        return out
    finally:
        consumer.close()


async def test_commit_visible_abort_invisible_to_read_committed(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer
) -> None:
    topic = new_topic(partitions=2)
    committed = {p: [b"c-%d-%d" % (p, i) for i in range(20)] for p in range(2)}
    aborted = {p: [b"a-%d-%d" % (p, i) for i in range(20)] for p in range(2)}
    after = {p: [b"after-%d" % p] for p in range(2)}

    await producer.begin_transaction()
    futures = [await producer.send(topic, v, partition=p) for p in range(2) for v in committed[p]]
    await producer.commit_transaction()
    assert all(f.done() and f.exception() is None for f in futures)

    await producer.begin_transaction()
    for p in range(2):
        for v in aborted[p]:
            await producer.send(topic, v, partition=p)
    await producer.flush()  # the aborted records are really in the log
    await producer.abort_transaction()

    # A committed transaction after the aborted one: readers see where the log ends.
    await producer.begin_transaction()
    for p in range(2):
        await producer.send(topic, after[p][0], partition=p)
    await producer.commit_transaction()

    expected = {p: committed[p] + after[p] for p in range(2)}
    total = sum(map(len, expected.values()))
    assert await read_ours(kafka, topic, 2, "read_committed", total) == expected
    uncommitted = await read_ours(kafka, topic, 2, "read_uncommitted", 82)
    assert uncommitted == {p: committed[p] + aborted[p] + after[p] for p in range(2)}
    assert await asyncio.to_thread(read_confluent, kafka, topic, 2, total) == expected
    assert await asyncio.to_thread(read_kafka_python, kafka, topic, 2, total) == expected


async def test_abort_fails_buffered_records(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    producer = await txn_producer(kafka, linger_ms=60000, max_batch_size=1 << 20)
    try:
        await producer.begin_transaction()
        fut = await producer.send(topic, b"never", partition=0)
        await producer.abort_transaction()
        with pytest.raises(TransactionAbortedError):
            await fut
        async with producer.transaction():
            await producer.send(topic, b"kept", partition=0)
    finally:
        await producer.stop()
    assert await read_ours(kafka, topic, 1, "read_committed", 1) == {0: [b"kept"]}
    assert await read_ours(kafka, topic, 1, "read_uncommitted", 1) == {0: [b"kept"]}


async def test_illegal_transitions(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer
) -> None:
    topic = new_topic()
    with pytest.raises(IllegalStateError, match="begin_transaction"):
        await producer.send(topic, b"x")
    with pytest.raises(IllegalStateError, match="commit_transaction"):
        await producer.commit_transaction()
    with pytest.raises(IllegalStateError, match="abort_transaction"):
        await producer.abort_transaction()
    with pytest.raises(IllegalStateError, match="send_offsets_to_transaction"):
        await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 1}, "g")
    await producer.begin_transaction()
    with pytest.raises(IllegalStateError, match="already open"):
        await producer.begin_transaction()
    with pytest.raises(ValueError, match="group_id"):  # ValueError, as in aiokafka
        await producer.send_offsets_to_transaction({}, 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="offsets"):
        await producer.send_offsets_to_transaction({TopicPartition(topic, 0): "1"}, "g")  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="offsets"):
        await producer.send_offsets_to_transaction({TopicPartition(topic, 0): -1}, "g")
    await producer.send(topic, b"ok")
    await producer.commit_transaction()
    # Idempotent (not transactional) producers have no transactions.
    async with AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers) as plain:
        with pytest.raises(IllegalStateError, match="transactional_id"):
            await plain.begin_transaction()
    not_started = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, transactional_id="x")
    with pytest.raises(IllegalStateError, match="start"):
        await not_started.begin_transaction()


async def test_context_manager_commits_and_aborts(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer
) -> None:
    topic = new_topic()
    async with producer.transaction():
        await producer.send(topic, b"one", partition=0)
    with pytest.raises(RuntimeError, match="boom"):
        async with producer.transaction():
            await producer.send(topic, b"two", partition=0)
            await producer.flush()
            raise RuntimeError("boom")
    async with producer.transaction():
        await producer.send(topic, b"three", partition=0)
    assert await read_ours(kafka, topic, 1, "read_committed", 2) == {0: [b"one", b"three"]}
    uncommitted = await read_ours(kafka, topic, 1, "read_uncommitted", 3)
    assert uncommitted == {0: [b"one", b"two", b"three"]}


async def test_second_producer_fences_the_first(kafka: KafkaCluster, new_topic: NewTopic) -> None:
    topic = new_topic()
    tid = txn_id()
    first = await txn_producer(kafka, tid)
    second: AIOKafkaProducer | None = None
    try:
        await first.begin_transaction()
        for i in range(5):
            await first.send(topic, b"zombie-%d" % i, partition=0)
        await first.flush()
        second = await txn_producer(kafka, tid)
        with pytest.raises(ProducerFenced) as info:
            await first.commit_transaction()
        assert transaction_error_kind(info.value) is TransactionErrorKind.FATAL
        # Fenced is final: every later call fails fast with it.
        with pytest.raises(ProducerFenced):
            await first.begin_transaction()
        with pytest.raises(ProducerFenced):
            await first.send(topic, b"later", partition=0)
        with pytest.raises(ProducerFenced):
            await first.abort_transaction()
        async with second.transaction():
            await second.send(topic, b"new", partition=0)
    finally:
        await first.stop()
        if second is not None:
            await second.stop()
    # The first producer's open transaction was aborted by the second's start.
    assert await read_ours(kafka, topic, 1, "read_committed", 1) == {0: [b"new"]}
    uncommitted = await read_ours(kafka, topic, 1, "read_uncommitted", 6)
    assert uncommitted[0][:5] == [b"zombie-%d" % i for i in range(5)]


async def _committed(
    kafka: KafkaCluster, group: str, tps: list[TopicPartition]
) -> dict[TopicPartition, int | None]:
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    async with consumer:
        consumer.assign(tps)
        return {tp: await consumer.committed(tp) for tp in tps}


@pytest.mark.parametrize("as_metadata", [False, True], ids=["group-id", "group-metadata"])
async def test_send_offsets_to_transaction(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer, as_metadata: bool
) -> None:
    src = new_topic(partitions=2)
    out = new_topic()
    group = f"g-{uuid.uuid4().hex}"
    tps = [TopicPartition(src, 0), TopicPartition(src, 1)]
    arg: str | ConsumerGroupMetadata = ConsumerGroupMetadata(group) if as_metadata else group

    async with producer.transaction():
        await producer.send(out, b"r", partition=0)
        await producer.send_offsets_to_transaction(
            {tps[0]: 5, tps[1]: OffsetAndMetadata(7, "meta")}, arg
        )
    assert await _committed(kafka, group, tps) == {tps[0]: 5, tps[1]: 7}

    await producer.begin_transaction()
    await producer.send_offsets_to_transaction({tps[0]: 50, tps[1]: 70}, arg)
    await producer.abort_transaction()
    assert await _committed(kafka, group, tps) == {tps[0]: 5, tps[1]: 7}

    # Offsets alone (no records) still commit.
    async with producer.transaction():
        await producer.send_offsets_to_transaction({tps[0]: 9}, arg)
    assert await _committed(kafka, group, tps) == {tps[0]: 9, tps[1]: 7}


async def test_zombie_generation_is_fenced_at_txn_offset_commit(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer
) -> None:
    src = new_topic(partitions=2)
    group = f"g-{uuid.uuid4().hex}"
    tps = [TopicPartition(src, 0), TopicPartition(src, 1)]

    def member() -> AIOKafkaConsumer[Any, Any]:
        return AIOKafkaConsumer(
            bootstrap_servers=kafka.bootstrap_servers,
            group_id=group,
            enable_auto_commit=False,
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
        )

    async def poll_until(check: Callable[[], bool], *consumers: Any) -> None:
        deadline = time.monotonic() + 60
        while not check():
            assert time.monotonic() < deadline, "the group did not settle"
            for c in consumers:
                await c.getmany(timeout_ms=100)

    first = member()
    second = member()
    await first.start()
    try:
        first.subscribe([src])
        await poll_until(lambda: len(first.assignment()) == 2, first)
        old = first.group_metadata()
        assert old.generation_id >= 0 and old.member_id
        # The member's own metadata is accepted.
        async with producer.transaction():
            await producer.send_offsets_to_transaction({tps[0]: 1}, old)
        assert (await _committed(kafka, group, tps))[tps[0]] == 1

        # A second member joins: a new generation; ``old`` is now a zombie's.
        await second.start()
        second.subscribe([src])
        await poll_until(
            lambda: (
                first.group_metadata().generation_id > old.generation_id
                and len(first.assignment()) + len(second.assignment()) == 2
            ),
            first,
            second,
        )
        await producer.begin_transaction()
        with pytest.raises(CommitFailedError, match="no longer current") as info:
            await producer.send_offsets_to_transaction({tps[0]: 2}, old)
        assert transaction_error_kind(info.value) is TransactionErrorKind.ABORTABLE
        with pytest.raises(TransactionAbortableError):
            await producer.commit_transaction()
        await producer.abort_transaction()
        # An unknown member id is fenced the same way.
        await producer.begin_transaction()
        bogus = ConsumerGroupMetadata(group, first.group_metadata().generation_id, "nobody")
        with pytest.raises(CommitFailedError):
            await producer.send_offsets_to_transaction({tps[0]: 3}, bogus)
        await producer.abort_transaction()
        # The current generation commits.
        async with producer.transaction():
            await producer.send_offsets_to_transaction({tps[0]: 4}, first.group_metadata())
    finally:
        await second.stop()
        await first.stop()
    assert (await _committed(kafka, group, tps))[tps[0]] == 4


async def test_transaction_timeout_is_reported_and_recoverable(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """The coordinator aborts a transaction older than transaction_timeout_ms (it
    looks every 10 s by default); the producer says so, and after abort_transaction()
    it can go on (KIP-588 epoch bump)."""
    topic = new_topic()
    producer = await txn_producer(kafka, transaction_timeout_ms=1000)
    try:
        await producer.begin_transaction()
        await (await producer.send(topic, b"too-slow", partition=0))
        fut = None
        deadline = time.monotonic() + 40
        # Bounded: keep writing until the broker rejects the old epoch.
        while time.monotonic() < deadline:
            await asyncio.sleep(1)
            fut = await producer.send(topic, b"late", partition=0)
            await producer.flush()
            if fut.exception() is not None:
                break
        assert fut is not None and fut.exception() is not None
        with pytest.raises(TransactionAbortableError, match="transaction_timeout_ms"):
            await producer.commit_transaction()
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send(topic, b"next", partition=0)
    finally:
        await producer.stop()
    assert await read_ours(kafka, topic, 1, "read_committed", 1) == {0: [b"next"]}


@pytest.mark.cluster
@pytest.mark.timeout(360)
async def test_transactional_stream_survives_broker_restart(
    kafka_cluster: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture
) -> None:
    """The documented pattern: abortable errors -> abort and redo the transaction,
    timeouts of commit -> commit again, fatal -> give up. The transaction
    coordinator's broker is killed mid-stream and restarted; every transaction ends
    up committed exactly once."""
    topic = new_topic(
        partitions=3,
        replication_factor=3,
        cluster=kafka_cluster,
        config={"min.insync.replicas": "2"},
    )
    caplog.set_level(logging.DEBUG, logger="aiokafka.cluster")
    tid = txn_id()
    producer = await txn_producer(
        kafka_cluster,
        tid,
        request_timeout_ms=5000,
        delivery_timeout_ms=30000,
        max_block_ms=30000,
        metadata_max_age_ms=5000,
    )
    count, per_txn = 60, 15
    aborted_attempts = 0
    killed: int | None = None
    try:
        coordinator = await producer.client.coordinator_for(tid, CoordinatorType.TRANSACTION)
        for n in range(count):
            if n == count // 3:
                killed = coordinator
                await asyncio.to_thread(kafka_cluster.kill, coordinator)
            if n == count // 2 and killed is not None:
                await asyncio.to_thread(kafka_cluster.restart, killed)
                killed = None
            for _attempt in range(10):
                try:
                    await run_transaction(producer, topic, n, per_txn)
                    break
                except KafkaError as exc:
                    if transaction_error_kind(exc) is TransactionErrorKind.FATAL:
                        raise
                    aborted_attempts += 1
            else:
                pytest.fail(f"transaction {n} never committed")
    finally:
        if killed is not None:
            await asyncio.to_thread(kafka_cluster.restart, killed)
        await producer.stop()

    expected = {
        p: [b"%05d-%02d" % (n, i) for n in range(count) for i in range(per_txn) if i % 3 == p]
        for p in range(3)
    }
    got = await read_ours(kafka_cluster, topic, 3, "read_committed", count * per_txn)
    assert got == expected
    # The kill really disturbed the transactions (otherwise this proves nothing).
    retried = [r for r in caplog.records if r.getMessage().startswith("Retrying after")]
    assert retried or aborted_attempts, "the broker kill went unnoticed"
    print(f"aborted attempts: {aborted_attempts}, retried requests: {len(retried)}")


async def run_transaction(producer: AIOKafkaProducer, topic: str, n: int, per_txn: int) -> None:
    """One transaction, the documented way: the context manager aborts on any error;
    a commit that timed out is committed again (its outcome is unknown)."""
    await producer.begin_transaction()
    try:
        for i in range(per_txn):
            await producer.send(topic, b"%05d-%02d" % (n, i), partition=i % 3)
    except BaseException:
        await producer.abort_transaction()
        raise
    for _ in range(5):
        try:
            await producer.commit_transaction()
            return
        except KafkaTimeoutError:
            continue  # the same commit again
        except KafkaError:
            await producer.abort_transaction()
            raise
    await producer.commit_transaction()


async def test_send_racing_commit_is_committed_or_refused(
    kafka: KafkaCluster, new_topic: NewTopic, producer: AIOKafkaProducer
) -> None:
    """A send() that passed its state check and then waited for metadata while the
    transaction committed: its record is either in that transaction or refused with
    IllegalStateError, never left hanging or sent outside a transaction."""
    topic = new_topic()
    await producer.begin_transaction()
    sending = asyncio.create_task(producer.send(topic, b"racer", partition=0))
    await asyncio.sleep(0)  # the send is now waiting for the topic's metadata
    await producer.commit_transaction()
    try:
        fut = await sending
        await asyncio.wait_for(fut, 60)
        in_txn = True
    except IllegalStateError:
        in_txn = False
    async with producer.transaction():
        await producer.send(topic, b"after", partition=0)
    expected = [b"racer", b"after"] if in_txn else [b"after"]
    assert await read_ours(kafka, topic, 1, "read_committed", len(expected)) == {0: expected}
    uncommitted = await read_ours(kafka, topic, 1, "read_uncommitted", len(expected))
    assert uncommitted == {0: expected}


@pytest.mark.parametrize("transactional", [True, False], ids=["transactional", "idempotent"])
async def test_batch_too_large_for_topic_is_split(
    kafka: KafkaCluster, new_topic: NewTopic, caplog: pytest.LogCaptureFixture, transactional: bool
) -> None:
    """MESSAGE_TOO_LARGE for a batch of many records: the sender splits it and the
    parts keep the batch's sequences (no OUT_OF_ORDER_SEQUENCE for later batches)."""
    caplog.set_level(logging.INFO, logger="aiokafka.producer")
    topic = new_topic(config={"max.message.bytes": "30000"})
    options: dict[str, Any] = {"linger_ms": 200, "max_batch_size": 200000}
    if transactional:
        producer = await txn_producer(kafka, **options)
    else:
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, **options)
        await producer.start()
    values = [b"%04d-" % i + b"x" * 1000 for i in range(300)]
    try:
        if transactional:
            await producer.begin_transaction()
        futures = [await producer.send(topic, v, partition=0) for v in values]
        if transactional:
            await producer.commit_transaction()
        offsets = [(await f).offset for f in futures]
    finally:
        await producer.stop()
    assert offsets == sorted(offsets) and len(set(offsets)) == len(values)
    assert any("split" in r.getMessage() for r in caplog.records), "nothing was split"
    got = await read_ours(kafka, topic, 1, "read_committed", len(values))
    assert got == {0: values}


async def test_commit_after_coordinator_timeout_is_fatal_and_explained(
    kafka: KafkaCluster, new_topic: NewTopic
) -> None:
    """No record was sent after the coordinator aborted the transaction for its
    timeout: EndTxn with the old epoch is refused (fatal, as in the Java client), and
    the error says that transaction_timeout_ms may be the reason. Transaction version 1
    answers PRODUCER_FENCED; version 2 (whose aborts bump the epoch) INVALID_TXN_STATE,
    since a commit cannot follow the abort it completed."""
    from aiokafka.admin import AIOKafkaAdminClient

    topic = new_topic()
    tid = txn_id()
    producer = await txn_producer(kafka, tid, transaction_timeout_ms=1000)
    try:
        await producer.begin_transaction()
        await (await producer.send(topic, b"slow", partition=0))
        async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
            deadline = time.monotonic() + 40
            while True:  # the coordinator looks for expired transactions every 10 s
                state = (await admin.describe_transactions([tid]))[tid].state
                if state in ("CompleteAbort", "Empty"):
                    break
                assert time.monotonic() < deadline, f"not aborted by the coordinator: {state}"
                await asyncio.sleep(0.5)
        with pytest.raises(
            (ProducerFenced, InvalidTxnState), match="transaction_timeout_ms"
        ) as info:
            await producer.commit_transaction()
        assert transaction_error_kind(info.value) is TransactionErrorKind.FATAL
        assert info.value.transaction_kind is TransactionErrorKind.FATAL
        with pytest.raises(type(info.value)):
            await producer.begin_transaction()
    finally:
        await producer.stop()
    assert await read_ours(kafka, topic, 1, "read_committed", 0) == {0: []}
