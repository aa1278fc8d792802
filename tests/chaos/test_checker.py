"""The chaos checker and schedule without a broker: a checker that cannot fail proves
nothing, so each figure is shown to count the violation it names."""

from __future__ import annotations

from pathlib import Path

from tools.chaos import check
from tools.chaos.schedule import CLUSTER_KINDS, Scenario, is_cluster_fault, make_schedule


def test_schedule_is_deterministic_per_seed_and_covers_every_kind() -> None:
    scenario = Scenario(seed=7)
    first, again = make_schedule(scenario), make_schedule(scenario)
    assert first == again
    assert first != make_schedule(Scenario(seed=8))
    cluster = [f for f in first if is_cluster_fault(f)]
    assert len(cluster) == 20
    assert {f.kind for f in cluster} == set(CLUSTER_KINDS)
    assert sum(f.kind == "kill-member" for f in first) == scenario.member_kills
    assert sum(f.kind == "kill-eos" for f in first) == scenario.eos_kills
    assert [f.at for f in first] == sorted(f.at for f in first)
    short = [f for f in make_schedule(Scenario.short()) if is_cluster_fault(f)]
    assert sorted(f.kind for f in short) == sorted(CLUSTER_KINDS)


def _producer_log(
    path: Path, acks: list[tuple[int, int, int, float]], sent: int | None = None, end: float = 0.0
) -> Path:
    lines = ["START pid=1 t=0"]
    lines += [f"A {seq} {p} {offset} {t - 0.01:.3f} {t:.3f}" for seq, p, offset, t in acks]
    lines.append(f"S {sent if sent is not None else len(acks)} {end:.3f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_clean_data_gives_no_violation(tmp_path: Path) -> None:
    records = {0: [(0, b"1:0"), (1, b"1:2")], 1: [(0, b"1:1")]}
    log = _producer_log(tmp_path / "p.log", [(0, 0, 0, 1.0), (1, 1, 0, 1.1), (2, 0, 1, 1.2)])
    figures = check.Figures()
    check.check_producer(figures, records, log, start=0.0)
    assert (figures.acked, figures.sent, figures.records_in_topic) == (3, 3, 3)
    assert figures.violations() == []


def test_lost_duplicated_reordered_and_misplaced_records_are_counted(tmp_path: Path) -> None:
    # seq 4 acknowledged but absent; seq 0 twice; seq 2 before seq 1 in partition 0;
    # seq 3 acknowledged at offset 9 but sitting at offset 3.
    records = {0: [(0, b"1:0"), (1, b"1:2"), (2, b"1:1"), (3, b"1:3"), (4, b"1:0")]}
    acks = [(0, 0, 0, 1.0), (1, 0, 2, 1.1), (2, 0, 1, 1.2), (3, 0, 9, 1.3), (4, 0, 5, 40.0)]
    figures = check.Figures(gap_bound=30.0)
    check.check_producer(figures, records, _producer_log(tmp_path / "p.log", acks), start=0.0)
    assert figures.lost == 1
    assert figures.duplicated == 1
    assert figures.out_of_order == 2  # 1 after 2, and the duplicate 0 after 3
    assert figures.offset_mismatch == 1
    assert round(figures.max_ack_gap, 1) == 38.7
    assert len(figures.violations()) == 5


def test_a_producer_that_stops_delivering_is_a_violation(tmp_path: Path) -> None:
    # Six records sent; partition 1 acknowledged nothing after t=2 though sending went on
    # until t=50; two records were never acknowledged.
    records = {0: [(0, b"1:0"), (1, b"1:2")], 1: [(0, b"1:1"), (1, b"1:3")]}
    acks = [(0, 0, 0, 1.0), (1, 1, 0, 2.0), (2, 0, 1, 25.0), (3, 1, 1, 2.0)]
    log = _producer_log(tmp_path / "p.log", acks, sent=6, end=50.0)
    figures = check.Figures(gap_bound=30.0)
    check.check_producer(figures, records, log, start=0.0)
    assert figures.unacknowledged == 2
    assert (figures.max_ack_gap, figures.max_ack_gap_partition) == (48.0, 1)
    assert figures.violations() == [
        "records sent but never acknowledged: 2",
        "producer stalled 48.0 s on partition 1 (bound 30 s)",
    ]


def test_transactional_output_must_hold_each_input_once(tmp_path: Path) -> None:
    records = {0: [(0, b"1:0"), (1, b"1:1"), (2, b"1:2")]}
    output = {0: [(0, b"0:0"), (1, b"0:1"), (2, b"0:1"), (3, b"5:5")]}
    log = tmp_path / "eos.log"
    log.write_text("START pid=1 t=0\nT 2\nE KafkaTimeoutError\nT 2\n")
    figures = check.Figures(acked=1)
    check.check_transactional(figures, records, output, log)
    assert (figures.eos_missing, figures.eos_duplicated, figures.eos_extraneous) == (1, 1, 1)
    assert (figures.eos_transactions, figures.eos_aborts) == (2, 1)
    assert len(figures.violations()) == 3


def test_group_must_receive_every_record_at_least_once(tmp_path: Path) -> None:
    records = {0: [(o, b"x") for o in range(10)], 1: [(o, b"x") for o in range(4)]}
    first, second = tmp_path / "m0.log", tmp_path / "m1.log"
    first.write_text("R 0 0 5 6\nR 1 0 3 4\n")
    second.write_text("START pid=2 t=0\nR 0 4 8 5\nE CommitFailedError\n")
    figures = check.Figures(acked=1)
    check.check_group(figures, records, [first, second])
    assert figures.group_missing == 1  # offset 9 of partition 0
    assert figures.group_redelivered == 2  # offsets 4 and 5 of partition 0
    assert figures.group_commit_errors == 1
    assert figures.violations() == ["records never delivered to the group: 1"]
    assert "records never delivered" in check.table(figures)
