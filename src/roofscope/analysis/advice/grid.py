"""``launch_grid``: tensor-core kernels far below their roof whose launch grid cannot keep every
SM busy (issue 19 item 2).

A GEMM or convolution is cut into tiles, one block each. With fewer blocks than SMs some SMs
have nothing to do for the whole launch; with a few waves of blocks and a partial last one the
GPU runs part-empty for a whole wave. Either caps the kernel below its roof however good the
kernel is, and the fix is outside it: more work per launch (a larger batch) or more, smaller
tiles (split-K).

The test reads each launch's grid (the export's ``Grid Size``, as ncu writes it: ``(x, y, z)``)
against the GPU's SM count, and where ncu's LaunchStats section was collected its
``launch__waves_per_multiprocessor`` (blocks ÷ the blocks all SMs hold at once) for the tail.
Only groups that are tensor-core work and reach under :data:`BELOW_ROOF` of the roofline's
attainable rate (``attainable_flop_per_s`` of ``Report.rows("group")``) are looked at: a
kernel at its roof has no idle SMs worth the trouble. Gains are upper bounds; the rule has not
been checked by applying it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from roofscope.analysis.advice import ROOFSCOPE, Advice, Context, step_speedup
from roofscope.metric_names import WAVES_PER_SM
from roofscope.present.units import counted, si, time
from roofscope.quantities import BOUND, FLOP_PER_S, FLOPS, FLOPS_TOTAL, TIME_S
from roofscope.schema import VALUES_R
from roofscope.sqlutil import quote_ident

Row = Mapping[str, Any]

TENSOR_SHARE = 0.5  # of a group's FLOPs on the tensor cores before it counts as tensor work
BELOW_ROOF = 0.5  # of the roofline's attainable FLOP/s, under which a group is far below its roof
TAIL_IDLE = 0.25  # of a launch's wave slots its partial last wave leaves empty, 1 − w/⌈w⌉
GRID_SHARE = 1.0  # % of the step in the launches it flags, under which the rule stays quiet
EXAMPLES = 3  # grids named per case in the evidence, the longest first

SMALL = "blocks < SMs"
TAIL = "tail wave"
ACTIONS = {
    SMALL: "a larger batch, so that each launch has at least one block per SM",
    TAIL: "a tiling with more, smaller tiles (e.g. split-K) so that the last wave is full",
}

# ncu (and nsys) write a grid as "(x, y, z)"; any other text is not read as a block count
_GRID = re.compile(r"^\s*\(\s*(\d{1,10})\s*,\s*(\d{1,10})\s*,\s*(\d{1,10})\s*\)\s*$")


def grid_blocks(grid: str | None) -> int | None:
    """Blocks in a grid written ``(x, y, z)``: x·y·z; None for any other text."""
    found = _GRID.match(grid or "")
    if found is None:
        return None
    x, y, z = (int(v) for v in found.groups())
    return x * y * z if x and y and z else None


@dataclass(frozen=True)
class Config:
    """The tensor-core launches of one group with one grid and one waves value."""

    group: str
    grid: str | None  # as exported
    waves: float | None  # launch__waves_per_multiprocessor; None when not exported
    launches: int
    time_s: float


@dataclass(frozen=True)
class Verdict:
    case: str  # SMALL | TAIL
    idle: float  # the share of the launch's time the model says the GPU is part-empty, 0..1


def judge(config: Config, sm_count: int | None) -> Verdict | None:
    """Whether a launch's grid leaves SMs idle, and which share of its time that costs.

    Fewer blocks than SMs: each block on its own SM, the other SMs idle; spread over every SM
    at the same per-SM rate the work would take blocks/SMs of the time. More than one wave with
    a partial last one: a wave takes as long however full it is, so ⌈w⌉ waves' time does w
    waves of work. A grid of under one wave that still covers every SM is not judged: how fast
    one SM runs two blocks rather than one is not known here."""
    blocks = grid_blocks(config.grid)
    if sm_count and blocks is not None and blocks < sm_count:
        return Verdict(SMALL, 1.0 - blocks / sm_count)
    waves = config.waves
    if waves is not None and waves > 1.0:
        idle = 1.0 - waves / math.ceil(waves - 1e-9)
        if idle >= TAIL_IDLE:
            return Verdict(TAIL, idle)
    return None


def tensor_share(row: Row) -> float:
    """The share of a group's FLOPs done on the tensor cores (0 when its FLOPs are unknown)."""
    total = row[FLOPS_TOTAL]
    return (row[FLOPS].get("tensor") or 0.0) / total if total else 0.0


def roof_fraction(row: Row) -> float | None:
    """The FLOP/s a group reaches over the attainable FLOP/s of its roofline point (the roofline
    code's, ``attainable_flop_per_s``); None when either is unknown."""
    reached, attainable = row[FLOP_PER_S], row.get("attainable_flop_per_s")
    if reached is None or not attainable:
        return None
    return reached / attainable


def candidates(groups: Sequence[Row]) -> list[Row]:
    """Groups of tensor-core work that reach under BELOW_ROOF of their attainable FLOP/s."""
    out = []
    for row in groups:
        fraction = roof_fraction(row)
        if tensor_share(row) >= TENSOR_SHARE and fraction is not None and fraction < BELOW_ROOF:
            out.append(row)
    return out


def _grid_text(config: Config) -> str:
    """A grid as the rule read it: rebuilt from its numbers (never the export's text)."""
    found = _GRID.match(config.grid or "")
    if found is None:
        return "(no grid)"
    return "(" + ", ".join(str(int(v)) for v in found.groups()) + ")"


def launch_grid(
    groups: Sequence[Row], configs: Sequence[Config], sm_count: int | None, step_s: float
) -> list[Advice]:
    """The rule over the step: ``groups`` are ``Report.rows("group")``, ``configs`` the
    tensor-core launches of the candidate groups with their grids and waves."""
    rows = {str(r["name"]): r for r in candidates(groups)}
    configs = [c for c in configs if c.group in rows]
    if not configs or step_s <= 0:
        return []
    judged = [(c, judge(c, sm_count)) for c in configs]
    flagged = [(c, v) for c, v in judged if v is not None]
    spent = sum(c.time_s for c, _ in flagged)
    share = 100.0 * spent / step_s
    if not flagged or share < GRID_SHARE:
        return []
    gain = sum(c.time_s * v.idle for c, v in flagged)
    cases = [case for case in (SMALL, TAIL) if any(v.case == case for _, v in flagged)]
    by_group: dict[str, list[Config]] = {}
    for c, _ in flagged:
        by_group.setdefault(c.group, []).append(c)
    names = sorted(by_group, key=lambda g: (-sum(c.time_s for c in by_group[g]), g))
    evidence = [_case_line(case, flagged, sm_count, step_s) for case in cases]
    evidence.append(_basis(configs, sm_count))
    evidence += [_group_line(rows[g], by_group[g], configs) for g in names]
    return [
        Advice(
            rule="launch_grid",
            source=ROOFSCOPE,
            title=f"tensor-core launches too small to fill the GPU: {share:.1f}% of the step",
            action="; or ".join(ACTIONS[case] for case in cases),
            evidence=evidence,
            groups=names,
            launches=sum(c.launches for c, _ in flagged),
            time_s=spent,
            time_pct=share,
            est_gain_s=gain,
            est_step_speedup=step_speedup(step_s, gain),
            assumptions=_assumptions(cases, sm_count),
        )
    ]


def _case_line(
    case: str, flagged: Sequence[tuple[Config, Verdict]], sm_count: int | None, step_s: float
) -> str:
    mine = sorted(
        ((c, v) for c, v in flagged if v.case == case),
        key=lambda cv: (-cv[0].time_s, cv[0].grid or ""),
    )
    spent = sum(c.time_s for c, _ in mine)
    launches = sum(c.launches for c, _ in mine)
    shown = "; ".join(
        _grid_text(c)
        + (f" = {blocks:,} blocks" if (blocks := grid_blocks(c.grid)) is not None else "")
        + (f", {c.waves:g} waves" if c.waves is not None else "")
        + f": {counted(c.launches, 'launch')}, {time(c.time_s)}"
        for c, _ in mine[:EXAMPLES]
    )
    more = f" and {len(mine) - EXAMPLES} more grid(s)" if len(mine) > EXAMPLES else ""
    if case == SMALL:
        what = f"fewer blocks than the GPU's {sm_count} SMs"
    else:
        what = (
            f"more than one wave per SM and a partial last one that leaves ≥ "
            f"{TAIL_IDLE:.0%} of the wave slots empty"
        )
    return (
        f"{launches:,} tensor-core launch(es) with {what}: {time(spent)}, "
        f"{100.0 * spent / step_s:.1f}% of the step. {shown}{more}"
    )


def _basis(configs: Sequence[Config], sm_count: int | None) -> str:
    """Which tests the export allowed: blocks vs SMs (Grid Size and an SM count), the tail
    (ncu's launch__waves_per_multiprocessor)."""
    launches = sum(c.launches for c in configs)
    with_waves = sum(c.launches for c in configs if c.waves is not None)
    without_grid = sum(c.launches for c in configs if grid_blocks(c.grid) is None)
    parts = [
        f"blocks vs SMs: the export's Grid Size (x·y·z blocks) against its {sm_count} SMs"
        if sm_count
        else "blocks vs SMs: not tested, the export gives no SM count"
    ]
    if with_waves == launches:
        parts.append(f"tail: ncu's {WAVES_PER_SM} (LaunchStats section)")
    elif with_waves:
        parts.append(
            f"tail: ncu's {WAVES_PER_SM} on {with_waves:,} of the {launches:,} launches (the "
            "others: blocks vs SMs only)"
        )
    else:
        parts.append(
            f"tail: not tested, the export has no {WAVES_PER_SM} (collect ncu's LaunchStats "
            "section); only blocks vs SMs"
        )
    if without_grid:
        parts.append(f"{without_grid:,} launch(es) without a readable grid not judged by blocks")
    return "; ".join(parts)


def _group_line(row: Row, flagged: Sequence[Config], configs: Sequence[Config]) -> str:
    name = str(row["name"])
    total = sum(c.launches for c in configs if c.group == name)
    launches = sum(c.launches for c in flagged)
    return (
        f"{name}: {tensor_share(row):.0%} of its FLOPs on tensor cores (threshold "
        f"{TENSOR_SHARE:.0%}), {si(row[FLOP_PER_S], 'FLOP/s')} = {roof_fraction(row):.0%} of "
        f"the {si(row['attainable_flop_per_s'], 'FLOP/s')} its roofline point allows (bound "
        f"{row[BOUND]}; threshold {BELOW_ROOF:.0%}); {launches:,} of its {total:,} tensor-core "
        f"launches flagged, {time(sum(c.time_s for c in flagged))} of its "
        f"{time(row[TIME_S] or 0.0)}"
    )


def _assumptions(cases: Sequence[str], sm_count: int | None) -> list[str]:
    out = []
    if SMALL in cases:
        out.append(
            f"fewer blocks than SMs: the work spread over all {sm_count} SMs at the same per-SM "
            "rate; gain = Σ time × (1 − blocks/SMs), an upper bound (smaller tiles cost more "
            "overhead, and a launch bound by memory gains less)"
        )
    if TAIL in cases:
        out.append(
            "tail wave: a wave takes as long however full it is; gain = Σ time × "
            "(1 − waves/⌈waves⌉), the empty slots of the last wave, an upper bound"
        )
    out += [
        f"judged: launches that did tensor-core work in groups with ≥ {TENSOR_SHARE:.0%} of their "
        f"FLOPs on tensor cores reaching under {BELOW_ROOF:.0%} of their roofline's attainable "
        "FLOP/s; a persistent kernel (at most one block per SM, looping over tiles: nvjet, "
        "CUTLASS 3) hides its tiles' tail from this test",
        "not checked by applying it (no before/after run in docs/performance.md)",
    ]
    return out


def _configs(ctx: Context, groups: Sequence[str]) -> list[Config]:
    """The tensor-core launches of ``groups``, by group, grid and waves (one row per distinct
    configuration, so a million launches are a few hundred rows)."""
    table = VALUES_R.name(ctx.report_id)
    present = {d[0] for d in ctx.con.execute(f"SELECT * FROM {table} LIMIT 0").description}
    waves = (
        f"TRY_CAST(v.{quote_ident(WAVES_PER_SM)} AS DOUBLE)"
        if WAVES_PER_SM in present
        else "NULL::DOUBLE"
    )
    rows = ctx.con.execute(
        f"SELECT l.grp, l.grid_size, {waves} AS waves, sum(l.invocations), "
        f"sum(l.time_s * l.invocations) "
        f"FROM launch_view l LEFT JOIN {table} v ON v.launch_id = l.launch_id "
        f"WHERE l.report_id = $rid AND list_contains($groups, l.grp) AND l.tensor > 0 "
        f"AND l.time_s IS NOT NULL GROUP BY ALL ORDER BY ALL",
        {"rid": ctx.report_id, "groups": list(groups)},
    ).fetchall()
    return [Config(str(g), grid, w, int(n or 0), float(t or 0.0)) for g, grid, w, n, t in rows]


def advise(ctx: Context) -> list[Advice]:
    """The producer ``Report.advice()`` runs (analysis/advice/sources.py): ncu reports only."""
    report = ctx.report
    if report is None or not ctx.step_s or report.is_nsys or report.is_recording:
        return []
    groups = report.rows("group")
    names = [str(r["name"]) for r in candidates(groups)]
    if not names:
        return []
    return launch_grid(groups, _configs(ctx, names), report.sm_count, ctx.step_s)
