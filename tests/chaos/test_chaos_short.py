"""The short chaos run (the full one is ``make chaos``): one fault of each kind on a real
three-broker cluster while an idempotent producer, a consumer group and a transactional
consume-process-produce process run; one member and the transactional process are
SIGKILLed and restarted. The independent checker's figures must all be zero."""

from __future__ import annotations

import pytest

from tools.chaos.check import table
from tools.chaos.run import run_scenario
from tools.chaos.schedule import Scenario

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(900)]


async def test_short_chaos_run_keeps_every_guarantee() -> None:
    result = await run_scenario(Scenario.short(seed=20261125))
    figures = result.figures
    shown = f"\n{table(figures)}\nlogs: {result.work_dir}"
    assert figures.acked > 5000, shown  # about a minute at 300 records/s
    assert figures.worker_kills == 2, shown
    assert (figures.lost, figures.duplicated, figures.out_of_order) == (0, 0, 0), shown
    assert figures.offset_mismatch == 0, shown
    assert (figures.eos_missing, figures.eos_duplicated, figures.eos_extraneous) == (0, 0, 0), shown
    assert figures.eos_inputs == figures.records_in_topic, shown
    assert (figures.group_missing, figures.group_lag_at_end) == (0, 0), shown
    assert figures.max_ack_gap < figures.gap_bound, shown
    assert figures.violations() == [], shown
