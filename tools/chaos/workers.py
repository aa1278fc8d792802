"""The client processes of the chaos scenario: producer, group member, transactional loop.

Each role runs in a process of its own so the orchestrator can SIGKILL it, and writes what
it observed to a line-oriented log that the checker reads afterwards (``tools.chaos.check``).
Lines are written and flushed before the step they describe is acknowledged elsewhere (a
member logs what it consumed before committing), so a SIGKILL loses nothing the checker
needs.

This file is run as a script (``python tools/chaos/workers.py ROLE ...``), never imported
as ``tools.chaos.workers`` by a worker: the interpreter then finds ``aiokafka`` where it is
installed, so the same scenario runs against aiokafka 0.14 from another virtualenv. Only the
API aiokafka 0.14 has is used here.

Log lines (space-separated):

* producer: ``A seq partition offset t_send t_ack`` per acknowledged record,
  ``F seq partition error`` per failed one, ``S sent t_end`` at the end (records sent,
  and when sending stopped);
* member: ``R partition first last count`` per consumed run of records (logged before the
  commit), ``E error`` per failed commit;
* transactional loop: ``T records`` per committed transaction, ``E error`` per abort.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError, KafkaTimeoutError
from aiokafka.structs import OffsetAndMetadata, TopicPartition

#: How long a graceful stop may take before the worker gives up (the orchestrator kills
#: it a little later anyway).
STOP_TIMEOUT = 60.0


class LineLog:
    """Append-only log file, flushed on demand (and so visible to the checker after a kill)."""

    def __init__(self, path: str) -> None:
        self._file: IO[str] = open(path, "a", encoding="utf-8")
        self._lines: list[str] = []
        self.write(f"START pid={os.getpid()} t={time.time():.3f}")
        self.flush()

    def write(self, line: str) -> None:
        self._lines.append(line)

    def flush(self) -> None:
        if self._lines:
            self._file.write("\n".join(self._lines) + "\n")
            self._lines.clear()
            self._file.flush()

    def close(self) -> None:
        self.flush()
        self._file.close()


def _stop_event() -> asyncio.Event:
    """An event set by SIGTERM/SIGINT: the orchestrator's request for a graceful stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return stop


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}:{str(exc)[:160]!r}".replace(" ", "_").replace("\n", "_")


# ----------------------------------------------------------------------------- producer


async def produce(args: argparse.Namespace) -> None:
    """Send ``args.rate`` records a second for ``args.duration`` seconds, round-robin over
    the partitions, each value ``b"<run>:<seq>"``; log every acknowledgement."""
    log = LineLog(args.log)
    producer = AIOKafkaProducer(
        bootstrap_servers=args.bootstrap,
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
        client_id="chaos-producer",
    )

    def recorder(seq: int, partition: int, t_send: float) -> Callable[[Any], None]:
        def done(fut: Any) -> None:
            if fut.cancelled():
                log.write(f"F {seq} {partition} cancelled")
            elif fut.exception() is not None:
                log.write(f"F {seq} {partition} {_short(fut.exception())}")
            else:
                meta = fut.result()
                log.write(f"A {seq} {partition} {meta.offset} {t_send:.3f} {time.time():.3f}")

        return done

    await producer.start()
    stop = _stop_event()
    seq = 0
    began = time.monotonic()
    try:
        while not stop.is_set() and time.monotonic() - began < args.duration:
            due = int((time.monotonic() - began) * args.rate)
            while seq < due:
                partition = seq % args.partitions
                value = f"{args.run}:{seq}".encode()
                fut = await producer.send(args.topic, value, partition=partition)
                fut.add_done_callback(recorder(seq, partition, time.time()))
                seq += 1
            log.flush()
            await asyncio.sleep(0.05)
    finally:
        ended = time.time()
        # stop() flushes what is buffered: every future is resolved afterwards.
        await asyncio.wait_for(producer.stop(), STOP_TIMEOUT)
        log.write(f"S {seq} {ended:.3f}")
        log.close()


# ----------------------------------------------------------------------------- group member


async def member(args: argparse.Namespace) -> None:
    """Consume in group ``args.group`` and commit after each batch until told to stop."""
    log = LineLog(args.log)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id=f"chaos-{args.name}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
    )
    await consumer.start()
    stop = _stop_event()
    try:
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=500)
            if not batches:
                continue
            for tp, records in batches.items():
                log.write(
                    f"R {tp.partition} {records[0].offset} {records[-1].offset} {len(records)}"
                )
            log.flush()  # before the commit: the log covers at least what is committed
            try:
                await consumer.commit()
            except KafkaError as exc:  # a rebalance in between: the next owner re-reads
                log.write(f"E {_short(exc)}")
    finally:
        await asyncio.wait_for(consumer.stop(), STOP_TIMEOUT)
        log.close()


# ----------------------------------------------------------------------------- transactions


async def _commit(producer: AIOKafkaProducer) -> None:
    """Commit; a timeout leaves the outcome unknown, so the same commit is retried."""
    for _ in range(10):
        try:
            await producer.commit_transaction()
            return
        except KafkaTimeoutError:
            continue
    await producer.commit_transaction()


async def transactional(args: argparse.Namespace) -> None:
    """Consume ``args.topic`` (read_committed) and write ``b"<partition>:<offset>"`` of
    each input record to ``args.output``, committing output and offsets in one transaction.

    On an error the transaction is aborted and the consumer rewound to the committed
    offsets; if even the abort fails the process exits non-zero and the orchestrator
    starts it again (a new instance fences the old transaction, which is always safe).
    """
    log = LineLog(args.log)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id="chaos-eos-consumer",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=args.bootstrap,
        transactional_id=args.transactional_id,
        client_id="chaos-eos-producer",
    )
    await consumer.start()
    await producer.start()
    # KIP-447 fencing where the client has it (aiokafka 0.14 takes only the group id).
    group_metadata = getattr(consumer, "group_metadata", None)
    stop = _stop_event()
    try:
        while not stop.is_set():
            batches = await consumer.getmany(timeout_ms=500, max_records=200)
            if not batches:
                continue
            # A coroutine (aiokafka 0.14, and here now); a plain call in this package's
            # commits before it was made one (--at-commit): await it only if awaitable.
            begin: Callable[[], Any] = producer.begin_transaction
            begun = begin()
            if inspect.isawaitable(begun):
                await begun
            try:
                offsets = {}
                for tp, records in batches.items():
                    for r in records:
                        value = f"{tp.partition}:{r.offset}".encode()
                        await producer.send(args.output, value, partition=tp.partition)
                    offsets[tp] = OffsetAndMetadata(records[-1].offset + 1, "")
                group = group_metadata() if group_metadata is not None else args.group
                await producer.send_offsets_to_transaction(offsets, group)
                await _commit(producer)
            except KafkaError as exc:
                log.write(f"E {_short(exc)}")
                log.flush()
                await producer.abort_transaction()
                await _rewind(consumer, list(batches))
                continue
            log.write(f"T {sum(len(r) for r in batches.values())}")
            log.flush()
    finally:
        await asyncio.wait_for(producer.stop(), STOP_TIMEOUT)
        await asyncio.wait_for(consumer.stop(), STOP_TIMEOUT)
        log.close()


async def _rewind(consumer: AIOKafkaConsumer[bytes, bytes], tps: list[TopicPartition]) -> None:
    for tp in tps:
        committed = await consumer.committed(tp)
        if committed is None:
            await consumer.seek_to_beginning(tp)
        else:
            consumer.seek(tp, committed)


# ----------------------------------------------------------------------------- entry point


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="chaos scenario worker")
    parser.add_argument("role", choices=["producer", "member", "transactional"])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--log", required=True, help="the line log the checker reads")
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--rate", type=float, default=500.0, help="records per second")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of sending")
    parser.add_argument("--run", default="1", help="producer run id written into values")
    parser.add_argument("--group", default="chaos-group")
    parser.add_argument("--name", default="member")
    parser.add_argument("--output", default="chaos-eos-out")
    parser.add_argument("--transactional-id", default="chaos-eos-0")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    role = {"producer": produce, "member": member, "transactional": transactional}[args.role]
    asyncio.run(role(args))


if __name__ == "__main__":
    main(sys.argv[1:])
