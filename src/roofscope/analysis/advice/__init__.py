"""What to change first, and what it should buy: advice items with their evidence and an
estimated gain, from ncu's own rules (rolled up over the whole step) and roofscope's rules.

Every item says where it came from (``source``), what it saw (``evidence``), which groups and
launches it covers and how much of the step they take, the gain it estimates with the model
behind it (``assumptions``), and what to do (``action``). The list is ranked by estimated gain
in seconds, unknown gains last: a rule that cannot put a number on its gain still says so.

The JSON contract (``advice`` per report) is in docs/json.md; ``Advice.to_dict`` writes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

NCU = "ncu"
ROOFSCOPE = "roofscope"


@dataclass(frozen=True)
class Advice:
    rule: str  # a stable id: ncu's rule name, or roofscope's (``channels_last``)
    source: str  # NCU | ROOFSCOPE
    title: str  # one line: what was found
    action: str  # one line: what to change
    evidence: list[str]  # what it saw: metrics, thresholds, counts (ncu's own text is quoted)
    groups: list[str]  # the groups it covers, longest first
    launches: int  # how many launches it covers
    time_s: float  # their GPU time
    time_pct: float  # of the step's GPU time, 0..100
    est_gain_s: float | None  # GPU time it would save; None: no estimate (said in assumptions)
    est_step_speedup: float | None  # the step's speedup from that gain (Amdahl), ≥ 1
    assumptions: list[str] = field(default_factory=list)  # the model behind the estimate

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


# The metrics each rule reads, as a Detail search (the Advice pane's `d`): roofscope's rules by
# their evidence, ncu's by the section its rule reads. Not listed: every metric.
METRICS_READ: dict[str, str] = {
    "channels_last": "time",
    "tensor_cores": "fp32|tensor|util_|inst_executed_op_ffma",
    "fusion": "dram|l2|bytes|time",
    "model_flops": "tensor|ffma|fp32|time",
    "launch_grid": "grid|block|waves|launch__|tensor|time",
    "SOLBottleneck": "throughput|time|duration",
    "HighPipeUtilization": "pipe|inst_executed|util_",
    "MemoryL2Compression": "lts__",
    "AchievedOccupancy": "occupancy|warps_active",
    "TheoreticalOccupancy": "occupancy|registers|shared",
    "LaunchConfiguration": "grid|block|waves|launch__",
    "cuda_graphs": "nsys__|time",  # nsys timeline rules: the launches' durations
    "nccl_overlap": "nsys__|time",
}


def step_speedup(step_s: float, gain_s: float | None) -> float | None:
    """Amdahl over the step: the step's time over the time left once ``gain_s`` is saved. A
    gain that is the whole step but for rounding (ncu's 100 % estimates summed over every
    launch) is the whole step: infinite, not 2e15×."""
    if gain_s is None or step_s <= 0:
        return None
    left = step_s - min(max(gain_s, 0.0), step_s)
    return math.inf if left <= step_s * 1e-9 else step_s / left


def ranked(items: Iterable[Advice]) -> list[Advice]:
    """By estimated gain, largest first; items without an estimate last, by time covered."""
    return sorted(
        items,
        key=lambda a: (a.est_gain_s is None, -(a.est_gain_s or 0.0), -a.time_s, a.rule),
    )


@dataclass(frozen=True)
class Context:
    """What a producer of advice reads: the store, one report, and its step time (the summed
    kernel time; None or 0 when unknown). A producer that needs more of the report (ceilings,
    the metric plan) finds it in ``report``, the session's ``Report``."""

    con: duckdb.DuckDBPyConnection
    report_id: int
    step_s: float | None
    report: Any = None


# A source of advice: one report in, its items out (unranked). ``Report.advice()`` runs every
# producer of ``roofscope.analysis.advice.sources.PRODUCERS`` and ranks their items together.
Producer = Callable[[Context], list[Advice]]
