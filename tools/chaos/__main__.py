"""``python -m tools.chaos``: run the chaos scenario, print the figures, exit 1 on a violation."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shlex
import sys
import tempfile
from pathlib import Path

from .check import table
from .run import Client, report_markdown, run_scenario
from .schedule import Scenario
from .snapshot import export


def _parser() -> argparse.ArgumentParser:
    full = Scenario()
    parser = argparse.ArgumentParser(prog="python -m tools.chaos", description=__doc__)
    parser.add_argument("--seed", type=int, default=full.seed)
    parser.add_argument("--short", action="store_true", help="the short run of `make test`")
    parser.add_argument(
        "--faults", type=int, help=f"cluster faults (default {full.cluster_faults})"
    )
    parser.add_argument("--rate", type=float, help=f"records/s (default {full.rate:.0f})")
    parser.add_argument(
        "--client",
        choices=["this", "aiokafka014"],
        default="this",
        help="client under test: this repository's aiokafka, or aiokafka==0.14.0 in "
        "benchmark/.venvs/aiokafka014 (created on first use)",
    )
    parser.add_argument(
        "--at-commit",
        metavar="REV",
        help="run this repository's aiokafka/ as of commit REV (exported to a temporary "
        "directory) instead of the working tree",
    )
    parser.add_argument("--report", type=Path, help="also write the results as Markdown here")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    scenario = Scenario.short(args.seed) if args.short else Scenario(seed=args.seed)
    if args.faults is not None:
        scenario = dataclasses.replace(scenario, cluster_faults=args.faults)
    if args.rate is not None:
        scenario = dataclasses.replace(scenario, rate=args.rate)
    with tempfile.TemporaryDirectory(prefix="chaos-src-") as source:
        client = Client()
        if args.client == "aiokafka014":
            from benchmark.clients import ensure_venv

            client = Client(str(ensure_venv("aiokafka014", "aiokafka==0.14.0")), "aiokafka 0.14.0")
        elif args.at_commit:
            commit = export(args.at_commit, Path(source))
            client = Client(name=f"aiokafka (this repository) at {commit[:12]}", pythonpath=source)
        print(f"chaos scenario, seed {scenario.seed}, client {client.name}: {scenario}")
        result = asyncio.run(run_scenario(scenario, client))
    print()
    print(table(result.figures))
    violations = result.figures.violations()
    print()
    print("VIOLATIONS:\n  " + "\n  ".join(violations) if violations else "no violation")
    print(f"seed {scenario.seed}; {result.duration:.0f} s; logs in {result.work_dir}")
    if args.report is not None:
        command = "python -m tools.chaos " + shlex.join(argv if argv is not None else sys.argv[1:])
        args.report.write_text(report_markdown(result, command))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
