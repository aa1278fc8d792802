"""The chaos scenario's independent checker.

After a run it reads the topics back with kafka-python (a different client from the one
under test, so a bug shared by the writer and the reader cannot hide itself), reads the
workers' line logs (``tools/chaos/workers.py``) and computes the figures:

* idempotent producer: acknowledged records missing from the topic, records present more
  than once, records out of order within a partition, acknowledgements naming another
  offset than the one the record sits at, and the longest wait between two
  acknowledgements of one partition;
* transactional consume-process-produce: input records missing from the committed output
  (``read_committed``) or present more than once;
* consumer group (at least once): records no member ever received, and records after
  the group's committed offsets at the end.

:meth:`Figures.violations` lists what breaks a guarantee; the rest is information.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Seconds a topic read-back or a group's catch-up may take.
READ_TIMEOUT = 180.0


def _kafka() -> Any:
    # kafka-python reads its bundled data with deprecated importlib calls at import time.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import kafka

    return kafka


def _consumer(bootstrap: str, **config: Any) -> Any:
    return _kafka().KafkaConsumer(
        bootstrap_servers=bootstrap.split(","),
        enable_auto_commit=False,
        request_timeout_ms=30000,
        client_id="chaos-checker",
        **config,
    )


def read_topic(
    bootstrap: str, topic: str, isolation_level: str
) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of ``topic`` as ``partition -> [(offset, value), ...]`` in offset order.

    Raises:
        TimeoutError: if the end of some partition is not reached within
            :data:`READ_TIMEOUT` seconds.
    """
    kafka = _kafka()
    consumer = _consumer(bootstrap, group_id=None, isolation_level=isolation_level)
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        tps = [kafka.TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)  # the last stable offset for read_committed
        records: dict[int, list[tuple[int, bytes]]] = {tp.partition: [] for tp in tps}
        deadline = time.monotonic() + READ_TIMEOUT
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                raise TimeoutError(f"reading {topic} back: end not reached in {READ_TIMEOUT} s")
            for tp, batch in consumer.poll(timeout_ms=1000, max_records=5000).items():
                records[tp.partition].extend((r.offset, r.value) for r in batch)
        return records
    finally:
        consumer.close()


class GroupProbe:
    """How far a consumer group's committed offsets are behind the end of a topic."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self._kafka = _kafka()
        self._consumer = _consumer(bootstrap, group_id=group)
        self._topic = topic

    def lag(self) -> int:
        """Records between the committed offsets and the end of the topic (all partitions)."""
        partitions = self._consumer.partitions_for_topic(self._topic) or set()
        tps = [self._kafka.TopicPartition(self._topic, p) for p in sorted(partitions)]
        ends = self._consumer.end_offsets(tps)
        return sum(ends[tp] - (self._consumer.committed(tp) or 0) for tp in tps)

    def close(self) -> None:
        self._consumer.close()


def wait_caught_up(
    bootstrap: str, groups: Iterable[str], topic: str, timeout: float
) -> dict[str, int]:
    """Poll until every group has committed the end of ``topic``; return the lags left."""
    probes = {group: GroupProbe(bootstrap, group, topic) for group in groups}
    try:
        deadline = time.monotonic() + timeout
        while True:
            lags = {group: probe.lag() for group, probe in probes.items()}
            if not any(lags.values()) or time.monotonic() > deadline:
                return lags
            time.sleep(2.0)
    finally:
        for probe in probes.values():
            probe.close()


@dataclass
class Figures:
    """What the checker found (see the module docstring)."""

    records_in_topic: int = 0
    sent: int = 0
    acked: int = 0
    send_errors: int = 0
    unacknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    offset_mismatch: int = 0
    max_ack_gap: float = 0.0
    max_ack_gap_partition: int = -1
    max_ack_gap_at: float = 0.0
    ack_latency: tuple[float, float, float] = (0.0, 0.0, 0.0)
    eos_inputs: int = 0
    eos_outputs: int = 0
    eos_missing: int = 0
    eos_duplicated: int = 0
    eos_extraneous: int = 0
    eos_transactions: int = 0
    eos_aborts: int = 0
    group_missing: int = 0
    group_redelivered: int = 0
    group_lag_at_end: int = 0
    group_commit_errors: int = 0
    worker_kills: int = 0
    unexpected_exits: int = 0
    gap_bound: float = 30.0
    notes: list[str] = field(default_factory=list)

    def violations(self) -> list[str]:
        """One line per broken guarantee; empty when the run is clean."""
        checks = {
            "acknowledged records lost": self.lost,
            "records duplicated": self.duplicated,
            "records out of order": self.out_of_order,
            "acks naming a wrong offset": self.offset_mismatch,
            "records sent but never acknowledged": self.unacknowledged,
            "inputs missing from transactional output": self.eos_missing,
            "inputs duplicated in transactional output": self.eos_duplicated,
            "transactional outputs naming no input": self.eos_extraneous,
            "records never delivered to the group": self.group_missing,
            "records left uncommitted by the group": self.group_lag_at_end,
        }
        found = [f"{name}: {count}" for name, count in checks.items() if count]
        if self.acked == 0:
            found.append("no record was acknowledged")
        if self.max_ack_gap > self.gap_bound:
            found.append(
                f"producer stalled {self.max_ack_gap:.1f} s on partition "
                f"{self.max_ack_gap_partition} (bound {self.gap_bound:.0f} s)"
            )
        return found

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _lines(paths: Iterable[Path], tag: str) -> list[list[str]]:
    rows = []
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split(" ")
            if parts[0] == tag:
                rows.append(parts)
    return rows


def check_producer(
    figures: Figures,
    records: dict[int, list[tuple[int, bytes]]],
    producer_log: Path,
    start: float,
    run: str = "1",
) -> None:
    """Fill the producer figures from the data topic and the log of producer run ``run``
    (``start``: wall-clock time of the start of traffic, for the gap's position)."""
    where: dict[bytes, list[tuple[int, int]]] = {}
    for partition, rows in records.items():
        last_seq = -1
        for offset, value in rows:
            where.setdefault(value, []).append((partition, offset))
            seq = int(value.split(b":")[1])
            if seq < last_seq:
                figures.out_of_order += 1
            last_seq = max(last_seq, seq)
    figures.records_in_topic = sum(len(rows) for rows in records.values())
    figures.duplicated = sum(len(places) - 1 for places in where.values())
    acks = _lines([producer_log], "A")
    figures.acked = len(acks)
    figures.send_errors = len(_lines([producer_log], "F"))
    ends = _lines([producer_log], "S")
    figures.sent = sum(int(row[1]) for row in ends)
    # acks=all with idempotence retries until the delivery timeout, far beyond any fault
    # here: a record that was never acknowledged is a producer that gave up or hung.
    figures.unacknowledged = figures.sent - figures.acked
    ack_times: dict[int, list[float]] = {}
    for _, acked_seq, acked_partition, acked_offset, _t_send, t_ack in acks:
        places = where.get(f"{run}:{acked_seq}".encode())
        if not places:
            figures.lost += 1
        elif (int(acked_partition), int(acked_offset)) not in places:
            figures.offset_mismatch += 1
        ack_times.setdefault(int(acked_partition), []).append(float(t_ack))
    figures.ack_latency = ack_latency(producer_log)
    stopped = [float(row[2]) for row in ends if len(row) > 2]
    for partition, times in ack_times.items():
        times.sort()
        # A partition whose acknowledgements stopped before sending did waited until then.
        for before, after in itertools.pairwise(times + stopped[-1:]):
            if after - before > figures.max_ack_gap:
                figures.max_ack_gap = after - before
                figures.max_ack_gap_partition = partition
                figures.max_ack_gap_at = before - start


def ack_latency(producer_log: Path) -> tuple[float, float, float]:
    """Median, 99th percentile and maximum seconds from send() to acknowledgement."""
    waits = sorted(float(row[5]) - float(row[4]) for row in _lines([producer_log], "A"))
    if not waits:
        return (0.0, 0.0, 0.0)
    return (waits[len(waits) // 2], waits[min(len(waits) - 1, len(waits) * 99 // 100)], waits[-1])


def check_transactional(
    figures: Figures,
    records: dict[int, list[tuple[int, bytes]]],
    output: dict[int, list[tuple[int, bytes]]],
    eos_log: Path,
) -> None:
    """Every input record exactly once in the committed output (values ``partition:offset``)."""
    inputs = {f"{p}:{offset}".encode() for p, rows in records.items() for offset, _ in rows}
    seen = Counter(value for rows in output.values() for _, value in rows)
    figures.eos_inputs = len(inputs)
    figures.eos_outputs = sum(seen.values())
    figures.eos_missing = len(inputs - seen.keys())
    figures.eos_duplicated = sum(n - 1 for value, n in seen.items() if value in inputs and n > 1)
    figures.eos_extraneous = sum(n for value, n in seen.items() if value not in inputs)
    figures.eos_transactions = len(_lines([eos_log], "T"))
    figures.eos_aborts = len(_lines([eos_log], "E"))


def check_group(
    figures: Figures, records: dict[int, list[tuple[int, bytes]]], member_logs: list[Path]
) -> None:
    """At least once: every record of the data topic received by some member."""
    received: Counter[tuple[int, int]] = Counter()
    for _, partition, first, last, count in _lines(member_logs, "R"):
        offsets = range(int(first), int(last) + 1)
        if len(offsets) != int(count):  # a non-transactional topic has no offset gaps
            figures.notes.append(f"member batch {partition}:{first}..{last} has {count} records")
        received.update((int(partition), o) for o in offsets)
    present = {(p, offset) for p, rows in records.items() for offset, _ in rows}
    figures.group_missing = len(present - received.keys())
    figures.group_redelivered = sum(n - 1 for n in received.values() if n > 1)
    figures.group_commit_errors = len(_lines(member_logs, "E"))


def table(figures: Figures) -> str:
    """The figures as an aligned two-column text table."""
    rows = [
        ("records sent / acknowledged", f"{figures.sent} / {figures.acked}"),
        (
            "records never acknowledged (of which errors)",
            f"{figures.unacknowledged} ({figures.send_errors})",
        ),
        ("records in the topic", str(figures.records_in_topic)),
        ("acknowledged records lost", str(figures.lost)),
        ("records duplicated", str(figures.duplicated)),
        ("records out of order (per partition)", str(figures.out_of_order)),
        ("acks naming a wrong offset", str(figures.offset_mismatch)),
        (
            f"longest ack gap, one partition (bound {figures.gap_bound:.0f} s)",
            f"{figures.max_ack_gap:.2f} s (partition {figures.max_ack_gap_partition}, "
            f"from t={figures.max_ack_gap_at:.1f} s)",
        ),
        (
            "ack latency p50 / p99 / max",
            " / ".join(f"{seconds * 1000:.0f} ms" for seconds in figures.ack_latency),
        ),
        (
            "transactional: inputs / committed outputs",
            f"{figures.eos_inputs} / {figures.eos_outputs}",
        ),
        ("transactional: inputs missing", str(figures.eos_missing)),
        ("transactional: inputs duplicated", str(figures.eos_duplicated)),
        ("transactional: outputs naming no input", str(figures.eos_extraneous)),
        ("transactional: commits / aborts", f"{figures.eos_transactions} / {figures.eos_aborts}"),
        ("group: records never delivered", str(figures.group_missing)),
        ("group: records redelivered (at least once)", str(figures.group_redelivered)),
        ("group: records uncommitted at the end", str(figures.group_lag_at_end)),
        ("group: failed commits (rebalances)", str(figures.group_commit_errors)),
        (
            "worker processes killed / exited unplanned",
            f"{figures.worker_kills} / {figures.unexpected_exits}",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows]
    lines.extend(f"note: {note}" for note in figures.notes)
    return "\n".join(lines)
