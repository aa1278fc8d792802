"""The sender's response table, sequence state and retry/epoch-bump behaviour
(against a scripted stand-in for AIOKafkaClient; the real broker is in
tests/integration/test_producer_*.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    TopicAuthorizationFailedError,
)
from aiokafka.producer.accumulator import RecordAccumulator
from aiokafka.producer.config import ProducerConfig
from aiokafka.producer.idempotence import ProducerIdState
from aiokafka.producer.sender import Outcome, Sender, classify
from aiokafka.protocol._gen.produce import (
    LeaderIdAndEpoch,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from aiokafka.protocol.messages import InitProducerIdResponse
from aiokafka.record import CODEC_NONE, MemoryRecords
from aiokafka.structs import TopicPartition

from ._producer_stub import StubClient

TP = TopicPartition("t", 0)


@pytest.mark.parametrize(
    ("code", "idempotent", "outcome"),
    [
        (0, True, Outcome.SUCCESS),
        (46, True, Outcome.SUCCESS),  # duplicate sequence: already written
        (45, True, Outcome.SEQUENCE_CHECK),
        (59, True, Outcome.SEQUENCE_CHECK),
        (45, False, Outcome.FAIL),
        (6, False, Outcome.RETRY_REFRESH),  # NOT_LEADER_OR_FOLLOWER
        (3, True, Outcome.RETRY_REFRESH),  # UNKNOWN_TOPIC_OR_PARTITION
        (7, True, Outcome.RETRY),  # REQUEST_TIMED_OUT
        (19, True, Outcome.RETRY),  # NOT_ENOUGH_REPLICAS
        (10, True, Outcome.FAIL),  # MESSAGE_TOO_LARGE
        (29, True, Outcome.FAIL),  # TOPIC_AUTHORIZATION_FAILED
        (87, True, Outcome.FAIL),  # INVALID_RECORD
    ],
)
def test_classify_table(code: int, idempotent: bool, outcome: Outcome) -> None:
    assert classify(code, idempotent) is outcome


def test_sequence_state() -> None:
    ids = ProducerIdState()
    assert not ids.has_producer_id
    ids.set_producer_id(5, 0)
    assert ids.has_producer_id
    assert ids.assign_sequence(TP, 3) == 0
    assert ids.assign_sequence(TP, 2) == 3
    assert ids.assign_sequence(TopicPartition("t", 1), 1) == 0
    assert ids.is_next_expected(TP, 0)
    ids.on_acked(TP, 0, 3)
    assert ids.last_acked(TP) == 2
    assert ids.is_next_expected(TP, 3) and not ids.is_next_expected(TP, 5)
    # A bump restarts every partition at 0.
    ids.request_bump()
    assert not ids.has_producer_id
    ids.set_producer_id(5, 1)
    assert ids.assign_sequence(TP, 1) == 0 and ids.last_acked(TP) == -1


def test_sequence_wraps_at_int32() -> None:
    ids = ProducerIdState()
    ids.set_producer_id(1, 0)
    ids._next_sequence[TP] = 2**31 - 2
    assert ids.assign_sequence(TP, 5) == 2**31 - 2
    assert ids.assign_sequence(TP, 1) == 3


def test_init_request_bumps_with_current_id_at_v3() -> None:
    ids = ProducerIdState()
    first = ids.init_request(4)
    assert (first.producer_id, first.producer_epoch) == (-1, -1)
    ids.set_producer_id(77, 3)
    ids.request_bump()
    bump = ids.init_request(4)
    assert (bump.producer_id, bump.producer_epoch) == (77, 3)
    old_broker = ids.init_request(2)  # no KIP-360: a new producer id instead
    assert old_broker.producer_id == -1


# -- the sender against a scripted client ---------------------------------------------


Handler = Callable[[Any], Awaitable[Any]]


class ScriptedClient(StubClient):
    """Answers Produce requests with ``produce(request)``; records what was sent.

    With ``nowait`` set (see the ``write_path`` fixture) it also acts as an open
    connection with a free slot: ``write_nowait`` takes the request, and the sender
    takes the response in a callback instead of a task.
    """

    nowait = False

    def write_nowait(
        self, node: int, request: Any, on_answer: Any, *, max_version: int | None = None
    ) -> bool:
        if not self.nowait:
            return False
        answer = asyncio.ensure_future(self.send(node, request, max_version=max_version))

        def answered(fut: asyncio.Future[Any]) -> None:
            if fut.cancelled():
                return  # the test ended
            error = fut.exception()
            on_answer(None, error) if error is not None else on_answer(fut.result(), None)

        answer.add_done_callback(answered)
        return True

    def __init__(self, produce: Handler) -> None:
        super().__init__()
        self.produce = produce
        self.sent: list[tuple[int, int, int, int]] = []  # (epoch, base seq, count, attempt)
        self.init_calls = 0
        self.epoch = 0

    async def api_version(self, node: Any, api_key: int, max_version: int | None = None) -> int:
        return 4

    async def send(self, node: Any, request: Any, **kw: Any) -> Any:
        if type(request).__name__ == "InitProducerIdRequest":
            self.init_calls += 1
            if request.producer_id >= 0:
                self.epoch = request.producer_epoch + 1
            return InitProducerIdResponse(producer_id=9, producer_epoch=self.epoch)
        for topic in request.topic_data:
            for part in topic.partition_data:
                (batch,) = list(MemoryRecords(bytes(part.records)))
                self.sent.append((batch.producer_epoch, batch.base_sequence, len(list(batch)), 0))
        return await self.produce(request)


@pytest.fixture(autouse=True, params=["task", "nowait"])
def write_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test with both ways the sender sends a Produce request: a task awaiting
    ``send()``, or ``write_nowait()`` and a callback."""
    monkeypatch.setattr(ScriptedClient, "nowait", request.param == "nowait")
    return str(request.param)


def response(code: int = 0, base_offset: int = 0) -> ProduceResponse:
    part = PartitionProduceResponse(
        index=0, error_code=code, base_offset=base_offset, current_leader=LeaderIdAndEpoch()
    )
    return ProduceResponse(responses=[TopicProduceResponse(name="t", partition_responses=[part])])


async def run_sender(
    client: ScriptedClient, records: int, **options: Any
) -> tuple[list[asyncio.Future[Any]], Sender, RecordAccumulator]:
    defaults = {"retry_backoff_ms": 1, "request_timeout_ms": 1000, "delivery_timeout_ms": 2000}
    config = ProducerConfig.from_kwargs(**{**defaults, **options})
    sender: Sender
    acc = RecordAccumulator.from_config(
        config, linger_ms=0, codec=CODEC_NONE, wakeup=lambda: sender.wakeup()
    )
    ids = ProducerIdState() if config.enable_idempotence else None
    sender = Sender(client, acc, config, ids)
    futures = []
    for i in range(records):
        fut = acc.append(TP, None, None, str(i).encode(), None)
        assert fut is not None
        futures.append(fut)
    sender.start()
    return futures, sender, acc


async def test_out_of_order_on_first_unacked_batch_bumps_epoch_and_recovers() -> None:
    answers = [response(45)]  # then success

    async def produce(request: Any) -> Any:
        return answers.pop(0) if answers else response(0, base_offset=100)

    client = ScriptedClient(produce)
    futures, sender, _ = await run_sender(client, 5)
    results = await asyncio.wait_for(asyncio.gather(*futures), 5)
    await sender.close(1, KafkaConnectionError("closed"))
    assert [r.offset for r in results] == [100, 101, 102, 103, 104]
    assert client.init_calls == 2  # first id, then the KIP-360 bump
    assert client.sent[0][:2] == (0, 0)
    assert client.sent[-1][:2] == (1, 0)  # new epoch, sequence restarted


async def test_out_of_order_behind_an_unacked_batch_just_retries() -> None:
    ids = ProducerIdState()
    ids.set_producer_id(9, 0)
    ids.assign_sequence(TP, 10)  # sequences 0..9 were sent and are unresolved
    # A batch with base sequence 10 is not the next expected one (0 is).
    assert not ids.is_next_expected(TP, 10)


async def test_retriable_connection_errors_resend_same_sequence() -> None:
    failures = [KafkaConnectionError("reset"), KafkaConnectionError("reset")]

    async def produce(request: Any) -> Any:
        if failures:
            raise failures.pop(0)
        return response(0, base_offset=7)

    client = ScriptedClient(produce)
    futures, sender, _ = await run_sender(client, 3)
    results = await asyncio.wait_for(asyncio.gather(*futures), 5)
    await sender.close(1, KafkaConnectionError("closed"))
    assert [r.offset for r in results] == [7, 8, 9]
    # Three attempts, all with epoch 0 / sequence 0: the broker can drop duplicates.
    assert [s[:2] for s in client.sent] == [(0, 0)] * 3
    assert client.init_calls == 1
    assert client.refreshes >= 1


async def test_non_retriable_error_fails_only_that_batch_with_typed_error() -> None:
    async def produce(request: Any) -> Any:
        return response(29)

    client = ScriptedClient(produce)
    futures, sender, _ = await run_sender(client, 2, enable_idempotence=False)
    for fut in futures:
        with pytest.raises(TopicAuthorizationFailedError):
            await asyncio.wait_for(fut, 5)
    await sender.close(1, KafkaConnectionError("closed"))


async def test_retries_stop_at_delivery_timeout() -> None:
    async def produce(request: Any) -> Any:
        return response(7)  # REQUEST_TIMED_OUT, retriable forever

    client = ScriptedClient(produce)
    t0 = time.monotonic()
    futures, sender, _ = await run_sender(client, 1, enable_idempotence=False)
    with pytest.raises(KafkaTimeoutError, match="delivery_timeout_ms"):
        await asyncio.wait_for(futures[0], 5)
    assert 1.9 <= time.monotonic() - t0 < 4
    assert len(client.sent) > 3
    await sender.close(1, KafkaConnectionError("closed"))


async def test_close_fails_undelivered_records() -> None:
    never: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def produce(request: Any) -> Any:
        return await never

    client = ScriptedClient(produce)
    futures, sender, acc = await run_sender(client, 2, enable_idempotence=False)
    await asyncio.sleep(0.05)
    t0 = time.monotonic()
    await sender.close(0.1, KafkaConnectionError("producer closed"))
    assert time.monotonic() - t0 < 1
    for fut in futures:
        with pytest.raises(KafkaConnectionError, match="producer closed"):
            fut.result()
    assert acc.used_memory == 0


async def test_nothing_is_sent_to_a_node_before_its_connection_is_open() -> None:
    """Produce requests started while the connection is being made would race for the
    pool's lock against later ones (and overtake each other): the sender connects
    first, then drains, and every request goes out in sequence order."""

    async def produce(request: Any) -> Any:
        return response(0, base_offset=0)

    class Connecting(ScriptedClient):
        connected = False
        early = 0

        def is_connected(self, node: int) -> bool:
            return self.connected

        async def api_version(self, node: Any, api_key: int, max_version: int | None = None) -> int:
            # How the sender connects (like ready(), but raising why it failed).
            await asyncio.sleep(0.05)
            self.connected = True
            return await super().api_version(node, api_key, max_version)

        async def send(self, node: Any, request: Any, **kw: Any) -> Any:
            if type(request).__name__ == "ProduceRequest" and not self.connected:
                self.early += 1
            return await super().send(node, request, **kw)

    client = Connecting(produce)
    # Small batches: several are ready at once, with five requests allowed in flight.
    futures, sender, _ = await run_sender(client, 40, max_batch_size=64)
    await asyncio.wait_for(asyncio.gather(*futures), 5)
    await sender.close(1, KafkaConnectionError("closed"))
    assert client.early == 0
    sequences = [seq for _, seq, _, _ in client.sent]
    assert len(sequences) > 5 and sequences == sorted(sequences)


async def test_one_batch_in_flight_until_the_partitions_first_is_acknowledged() -> None:
    """The broker accepts any first sequence from a producer it has no state for: if a
    second batch overtook a first one that failed (NOT_LEADER on a new partition), the
    first could never be written. So the second batch waits for the first's answer."""
    answers = [response(6)]  # NOT_LEADER_OR_FOLLOWER, then success

    async def produce(request: Any) -> Any:
        await asyncio.sleep(0.02)  # time for more requests to go out behind this one
        return answers.pop(0) if answers else response(0, base_offset=0)

    client = ScriptedClient(produce)
    futures, sender, acc = await run_sender(client, 1, max_batch_size=64)
    for i in range(20):  # records arriving while the first batch is in flight
        await asyncio.sleep(0.002)
        fut = acc.append(TP, None, None, b"%d" % i, None)
        assert fut is not None
        futures.append(fut)
    await asyncio.wait_for(asyncio.gather(*futures), 5)
    await sender.close(1, KafkaConnectionError("closed"))
    sequences = [seq for _, seq, _, _ in client.sent]
    # seq 0 alone, again alone after its failure; only then the batches behind it.
    assert sequences[:2] == [0, 0]
    assert len(sequences) > 5 and sequences[1:] == sorted(sequences[1:])


async def test_a_pass_without_await_runs_as_a_loop_callback(
    write_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Once the producer id is known, a new batch is drained and sent by a loop
    # callback while the sender's task sleeps: the task is not woken for it. The
    # first record still goes through the task (getting the producer id awaits).
    passes = 0
    task_pass = Sender._run_once

    async def counted(self: Sender) -> float:
        nonlocal passes
        passes += 1
        return await task_pass(self)

    monkeypatch.setattr(Sender, "_run_once", counted)

    async def produce(request: Any) -> Any:
        return response(0, base_offset=7)

    client = ScriptedClient(produce)
    (first,), sender, acc = await run_sender(client, 1)
    assert (await asyncio.wait_for(first, 5)).offset == 7
    await asyncio.sleep(0.01)  # the task's pass after the answer, if any, is over
    before = passes
    for _ in range(3):
        fut = acc.append(TP, None, None, b"x", None)
        assert fut is not None
        assert (await asyncio.wait_for(fut, 5)).offset == 7
    if write_path == "nowait":  # a request task's end wakes the task (the old way)
        assert passes == before
    await sender.close(1, KafkaConnectionError("closed"))
    assert [s[:2] for s in client.sent] == [(0, 0), (0, 1), (0, 2), (0, 3)]


async def test_records_appended_in_one_loop_turn_share_a_request() -> None:
    # The callback pass runs after the callers of this loop turn, as the task's
    # step did: records sent together still go in one batch.
    async def produce(request: Any) -> Any:
        return response(0)

    client = ScriptedClient(produce)
    (first,), sender, acc = await run_sender(client, 1)
    await asyncio.wait_for(first, 5)
    await asyncio.sleep(0.01)
    futures = [acc.append(TP, None, None, b"x", None) for _ in range(5)]
    await asyncio.wait_for(asyncio.gather(*futures), 5)  # type: ignore[arg-type]
    await sender.close(1, KafkaConnectionError("closed"))
    assert [s[2] for s in client.sent] == [1, 5]


async def test_a_batch_that_cannot_be_encoded_fails_instead_of_hanging(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An error while encoding a drained batch (a bug, or an installation without a
    working CRC-32C) fails that batch's futures with it; the batch is in no queue any
    more, so before this its futures waited for ever (longer than delivery_timeout_ms)."""
    import aiokafka.record.default_builder as builder_module

    async def produce(request: Any) -> Any:
        return response(0, base_offset=0)

    def broken_crc(data: Any) -> int:
        raise ModuleNotFoundError("No module named 'crc32c'")

    client = ScriptedClient(produce)
    monkeypatch.setattr(builder_module, "calc_crc32c", broken_crc)
    futures, sender, acc = await run_sender(client, 2, enable_idempotence=False)
    for fut in futures:
        with pytest.raises(ModuleNotFoundError, match="crc32c"):
            await asyncio.wait_for(fut, 1)
    assert "Could not encode a batch for" in caplog.text
    assert acc.used_memory == 0 and client.sent == []
    # The sender goes on: with the CRC back, the next record is delivered.
    monkeypatch.undo()
    later = acc.append(TP, None, None, b"later", None)
    assert later is not None
    sender.wakeup()
    assert (await asyncio.wait_for(later, 5)).offset == 0
    await sender.close(1, KafkaConnectionError("closed"))
