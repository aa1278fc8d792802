"""``python -m tools.fuzz``: run the fuzzer, print the summary, exit 1 on any failure.

Examples::

    python -m tools.fuzz                      # 1,000,000 inputs on 2 workers, seed 0
    python -m tools.fuzz --inputs 20000 --groups records --seed 3
    python -m tools.fuzz --replay tools/fuzz/failures/untyped-....json
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

from .runner import LIMIT_MS, Report, replay, run_fuzz
from .targets import build_targets

DEFAULT_OUT = Path(__file__).resolve().parent / "failures"


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MB"


def summary(report: Report, seed: int, groups: str) -> str:
    """The human-readable summary of a run."""
    targets = build_targets(groups) if report.inputs else []
    by_group: collections.Counter[str] = collections.Counter()
    versions: collections.Counter[str] = collections.Counter()
    for target in targets:
        versions[target.group] += 1
        by_group[target.group] += report.per_target[target.name]
    lines = [
        f"fuzz: {report.inputs:,} inputs in {report.seconds:.1f} s "
        f"({report.workers or 'in-process'} workers, seed {seed}, groups {groups})",
        f"  {len(targets)} targets: {sum(1 for t in targets if t.group != 'records')} "
        f"(message type, version) pairs, {versions['records']} record readers",
        "  per message type (inputs, versions):",
    ]
    row: list[str] = []
    for group in sorted(g for g in by_group if g != "records"):
        row.append(f"{group} {by_group[group]:,} ({versions[group]})")
        if len(row) == 3:
            lines.append("    " + "; ".join(row))
            row = []
    if row:
        lines.append("    " + "; ".join(row))
    lines.append("  per record reader:")
    records = [t.name for t in targets if t.group == "records"]
    for start in range(0, len(records), 4):
        chunk = records[start : start + 4]
        lines.append("    " + "; ".join(f"{n} {report.per_target[n]:,}" for n in chunk))
    outcomes = ", ".join(f"{k} {v:,}" for k, v in report.outcomes.most_common())
    lines += [
        f"  outcomes: {outcomes}",
        f"  slowest input: {report.slowest_ms:.2f} ms ({report.slowest_input}); "
        f"largest single timing {report.raw_max_ms:.2f} ms (limit {LIMIT_MS:.0f} ms)",
        f"  peak RSS per worker: {_mb(report.peak_rss_bytes)}, "
        f"growth over warm-up {_mb(report.growth_bytes)} (limit 100 MB)",
        f"  failures={report.failure_count}",
    ]
    for failure in report.failures[:10]:
        lines.append(f"    {failure.kind} {failure.target}: {failure.error}")
    lines += [f"    saved {path}" for path in report.saved[:10]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__)
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2, help="0: run in this process")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--groups", choices=("all", "protocol", "records"), default="all")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="reproducers go here")
    parser.add_argument("--replay", type=Path, help="run one saved reproducer")
    args = parser.parse_args(argv)
    if args.replay is not None:
        outcome = replay(args.replay)
        if isinstance(outcome, str):
            print(f"no longer fails: {outcome}")
            return 0
        print(f"{outcome.kind}: {outcome.error}\n{outcome.trace}")
        return 1
    report = run_fuzz(
        args.inputs,
        workers=args.workers,
        seed=args.seed,
        groups=args.groups,
        out_dir=args.out,
        progress=True,
    )
    print(summary(report, args.seed, args.groups))
    return 1 if report.failure_count else 0


if __name__ == "__main__":
    sys.exit(main())
