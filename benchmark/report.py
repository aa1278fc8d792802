"""Tables and ratios from the harness's outcomes: a console table, markdown and JSON files.

Ratios compare every peer with our client in the same run: throughput as ours ÷ peer
(> 1: we are faster) and CPU per message as peer ÷ ours (> 1: we use less CPU); latency
percentiles as peer ÷ ours (> 1: our calls return sooner).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmark.harness import OK, Outcome

OURS = "ours"

_LATENCY_KEYS = ("p50_us", "p99_us")

#: (header, metric key, format) of the columns every table has.
_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("msgs/s", "msgs_per_s", "{:,.0f}"),
    ("MB/s", "mb_per_s", "{:.1f}"),
    ("CPU µs/msg", "cpu_us_per_msg", "{:.1f}"),
    ("CPU s (process)", "cpu_total_s", "{:.2f}"),
    ("peak RSS MB", "max_rss_mb", "{:.0f}"),
    ("broker CPU µs/msg", "broker_cpu_us_per_msg", "{:.1f}"),
    ("other cores busy", "other_cores_busy", "{:.2f}"),
    ("p50 µs", "p50_us", "{:,.0f}"),
    ("p99 µs", "p99_us", "{:,.0f}"),
)


def _ratio(numerator: Any, denominator: Any) -> float | None:
    if not isinstance(numerator, (int, float)) or not isinstance(denominator, (int, float)):
        return None
    if denominator <= 0:
        return None
    return float(numerator) / float(denominator)


def ratios_vs_ours(outcomes: Sequence[Outcome]) -> dict[tuple[str, str], dict[str, float]]:
    """Per (scenario, peer) ratios against our client's result in the same scenario.

    Only pairs where both ran successfully get ratios. Keys of the inner dict:
    ``throughput`` (ours ÷ peer msgs/s), ``cpu`` (peer ÷ ours CPU µs/msg), and for
    latency scenarios ``p50``/``p99`` (peer ÷ ours).
    """
    ours = {o.scenario: o for o in outcomes if o.client == OURS and o.status == OK}
    out: dict[tuple[str, str], dict[str, float]] = {}
    for cell in outcomes:
        base = ours.get(cell.scenario)
        if cell.client == OURS or cell.status != OK or base is None:
            continue
        mine, theirs = base.metrics, cell.metrics
        pairs = {
            "throughput": _ratio(mine.get("msgs_per_s"), theirs.get("msgs_per_s")),
            "cpu": _ratio(theirs.get("cpu_us_per_msg"), mine.get("cpu_us_per_msg")),
        }
        for key in _LATENCY_KEYS:
            pairs[key.removesuffix("_us")] = _ratio(theirs.get(key), mine.get(key))
        out[(cell.scenario, cell.client)] = {k: v for k, v in pairs.items() if v is not None}
    return out


def _cell(metrics: dict[str, Any], key: str, fmt: str) -> str:
    if key == "max_rss_mb":
        value = metrics.get("max_rss_kb")
        value = value / 1024 if isinstance(value, (int, float)) else None
    else:
        value = metrics.get(key)
    return fmt.format(value) if isinstance(value, (int, float)) else "-"


def _ratio_text(ratios: dict[str, float] | None, key: str) -> str:
    if not ratios or key not in ratios:
        return "-"
    return f"{ratios[key]:.2f}x"


def scenario_rows(outcomes: Sequence[Outcome], scenario: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of one scenario's table (failed/skipped clients show their status)."""
    ratios = ratios_vs_ours(outcomes)
    header = ["client", *(name for name, _, _ in _COLUMNS), "thr vs ours", "CPU vs ours"]
    show_latency = any(
        "p50_us" in o.metrics for o in outcomes if o.scenario == scenario and o.status == OK
    )
    if show_latency:
        header.append("p99 vs ours")
    rows = []
    for cell in outcomes:
        if cell.scenario != scenario:
            continue
        if cell.status != OK:
            blanks = ["-"] * (len(header) - 2)
            rows.append([cell.client, cell.status.upper(), *blanks])
            continue
        pair = ratios.get((scenario, cell.client))
        row = [cell.client, *(_cell(cell.metrics, key, fmt) for _, key, fmt in _COLUMNS)]
        row += [_ratio_text(pair, "throughput"), _ratio_text(pair, "cpu")]
        if show_latency:
            row.append(_ratio_text(pair, "p99"))
        rows.append(row)
    if not show_latency:
        drop = {header.index("p50 µs"), header.index("p99 µs")}
        header = [h for i, h in enumerate(header) if i not in drop]
        rows = [[c for i, c in enumerate(r) if i not in drop] for r in rows]
    return header, rows


def _scenarios(outcomes: Iterable[Outcome]) -> list[str]:
    seen: list[str] = []
    for cell in outcomes:
        if cell.scenario not in seen:
            seen.append(cell.scenario)
    return seen


def text_table(outcomes: Sequence[Outcome]) -> str:
    """Fixed-width tables, one per scenario, then the reasons for skips and failures."""
    parts = []
    for scenario in _scenarios(outcomes):
        header, rows = scenario_rows(outcomes, scenario)
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = [f"== {scenario}"]
        for row in [header, *rows]:
            lines.append(
                "  ".join(
                    c.rjust(w) if i else c.ljust(w)
                    for i, (c, w) in enumerate(zip(row, widths, strict=True))
                )
            )
        parts.append("\n".join(lines))
    problems = _problems(outcomes)
    if problems:
        parts.append("Not measured:\n" + "\n".join(f"  {p}" for p in problems))
    return "\n\n".join(parts)


def _problems(outcomes: Iterable[Outcome]) -> list[str]:
    return [
        f"{o.scenario} / {o.client}: {o.status}: {o.reason}".replace("\n", " | ")
        for o in outcomes
        if o.status != OK
    ]


def markdown(outcomes: Sequence[Outcome], meta: dict[str, Any]) -> str:
    """The result as a markdown document (settings, one table per scenario, problems)."""
    lines = [f"# Benchmark: {meta.get('label', '')}", ""]
    for key in ("started", "machine", "python", "kafka", "broker", "settings", "load"):
        if key in meta:
            lines.append(f"- **{key}**: {_flat(meta[key])}")
    lines += [
        "",
        "Ratios: throughput ours ÷ peer, CPU and latency peer ÷ ours (> 1 favours ours).",
        "CPU µs/msg is the worker's own user+sys time over the measured loop ÷ records;",
        "`CPU s (process)` is the whole worker process including start-up.",
        "",
    ]
    for scenario in _scenarios(outcomes):
        header, rows = scenario_rows(outcomes, scenario)
        lines += [f"## {scenario}", "", "| " + " | ".join(header) + " |"]
        lines.append("|" + "|".join("---" for _ in header) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        notes = [
            f"{o.client}: {o.worker['notes']}"
            for o in outcomes
            if o.scenario == scenario and o.status == OK and o.worker.get("notes")
        ]
        if notes:
            lines += ["", "Settings: " + "; ".join(notes) + "."]
        # CPU per record moves less with the machine's load than msgs/s does, but not
        # nothing: its spread says how far one row's ratio can be read.
        for key, fmt, label in (
            ("runs_msgs_per_s", ",.0f", "msgs/s of every run (the median run is shown)"),
            ("runs_cpu_us_per_msg", ".1f", "CPU µs/msg of every run, in the same order"),
        ):
            spreads = _run_spreads(outcomes, scenario, key, fmt)
            if spreads:
                lines += ["", f"{label}: " + "; ".join(spreads)]
        lines.append("")
    problems = _problems(outcomes)
    if problems:
        lines += ["## Not measured", "", *(f"- {p}" for p in problems), ""]
    return "\n".join(lines)


def _run_spreads(outcomes: Sequence[Outcome], scenario: str, key: str, fmt: str) -> list[str]:
    """``"client v1 / v2 / ..."`` of every client's repeated runs of ``scenario`` (``key``
    of :func:`~benchmark.harness.pick_median`), for the clients that have all values."""
    return [
        f"{o.client} " + " / ".join(format(v, fmt) for v in o.metrics[key])
        for o in outcomes
        if o.scenario == scenario and o.metrics.get(key) and None not in o.metrics[key]
    ]


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def to_json(outcomes: Sequence[Outcome], meta: dict[str, Any]) -> dict[str, Any]:
    """The JSON result document: meta, every outcome, and the ratios against ours."""
    ratios = ratios_vs_ours(outcomes)
    return {
        "meta": meta,
        "results": [o.to_json() for o in outcomes],
        "ratios_vs_ours": [
            {"scenario": scenario, "client": client, **values}
            for (scenario, client), values in ratios.items()
        ],
    }


def write(outcomes: Sequence[Outcome], meta: dict[str, Any], out_dir: Path, label: str) -> Path:
    """Write ``<label>.json`` and ``<label>.md`` into ``out_dir``; returns the JSON path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{label}.json"
    json_path.write_text(json.dumps(to_json(outcomes, meta), indent=1) + "\n")
    (out_dir / f"{label}.md").write_text(markdown(outcomes, meta))
    return json_path
