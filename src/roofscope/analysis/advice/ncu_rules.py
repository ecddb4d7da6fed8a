"""ncu's own rules, rolled up over the whole step.

ncu judges one kernel at a time: a details page collected with sections (``--set full``)
carries, per launch, the rules that fired (``ncu_rules``: type, ncu's text, and in newer
ncu an Estimated Speedup in percent). Here each rule becomes one :class:`Advice` for the whole
report: the launches it fires on, their groups, their time and share of the step, and the step
time ncu's estimates claim, Σ over launches of (estimate % × the launch's time).

Types OPT (an optimisation opportunity) and WRN (a warning) are advice; INF is information
(ncu says so itself: it carries no estimate) and ERR is a rule that failed to run; neither
becomes an item (docs/decisions.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope.analysis.advice import NCU, Advice, step_speedup
from roofscope.present.units import counted, si
from roofscope.quantities import LAUNCHES
from roofscope.sqlutil import quote_str

if TYPE_CHECKING:
    from roofscope.analysis.advice import Context

ADVICE_TYPES = ("OPT", "WRN")
GROUPS_SHOWN = 3  # groups named in the evidence, the longest first

# A short title and what to change, per rule ncu ships (its section scripts' names); any other
# rule keeps its name and points at ncu's text, which is always in the evidence.
KNOWN: dict[str, tuple[str, str]] = {
    "SOLBottleneck": (
        "the unit that limits the kernel (speed of light)",
        "work on the bottleneck ncu names: compute, memory, or a grid too small for the GPU",
    ),
    "IssueSlotUtilization": (
        "schedulers idle: few eligible warps",
        "hide latency: more warps per scheduler (occupancy) or more independent instructions",
    ),
    "CPIStall": (
        "warps stall on one reason most cycles",
        "remove the main stall ncu names (e.g. wait on memory: prefetch, reuse in shared memory)",
    ),
    "HighPipeUtilization": (
        "one pipeline is the busiest",
        "move work off that pipeline (e.g. to tensor cores) or issue fewer of its instructions",
    ),
    "AchievedOccupancy": (
        "achieved occupancy below theoretical",
        "balance work across blocks and warps; avoid a partial last wave",
    ),
    "TheoreticalOccupancy": (
        "occupancy limited by registers, shared memory or block size",
        "use fewer registers or less shared memory per block, or another block size",
    ),
    "Occupancy": (
        "occupancy limited",
        "use fewer registers or less shared memory per block, or another block size",
    ),
    "LaunchConfiguration": (
        "launch configuration wastes the GPU",
        "launch enough blocks to fill every SM; block sizes a multiple of 32 threads",
    ),
    "WorkloadImbalance": (
        "work spread unevenly over SMs or schedulers",
        "split the work more evenly across blocks",
    ),
    "FPInstructions": (
        "floating-point adds and multiplies not fused",
        "let them fuse into FMA (e.g. -fmad=true, fewer separate mul/add)",
    ),
    "MemoryCacheAccessPattern": (
        "cache lines used poorly",
        "coalesce accesses: neighbouring threads read neighbouring addresses",
    ),
    "UncoalescedGlobalAccess": (
        "uncoalesced global memory accesses",
        "coalesce accesses: neighbouring threads read neighbouring addresses",
    ),
    "UncoalescedSharedAccess": (
        "shared memory bank conflicts",
        "pad or swizzle shared-memory arrays to avoid bank conflicts",
    ),
    "SharedMemoryConflicts": (
        "shared memory bank conflicts",
        "pad or swizzle shared-memory arrays to avoid bank conflicts",
    ),
    "ThreadDivergence": (
        "threads of a warp diverge",
        "keep the threads of a warp on one branch (reorder work, predicate)",
    ),
    "MemoryL2Compression": (
        "L2 compression of writes unused or failing",
        "see ncu's rule text (compressible memory for this data)",
    ),
}
SEE_TEXT = "see ncu's rule text"

# Rules whose text says opposite things on different launches: ncu's HighPipeUtilization fires
# both when one pipeline is the busiest and when every pipeline is under-used (51 of 57
# launches in the exports here), and SOLBottleneck names compute, memory, a grid too small for
# the GPU, or neither busy. An item per kind of text, each titled as its text says, so that no
# item contradicts ncu's own words on the launches it covers (issue 32). The first pattern
# (RE2, searched in ncu's text) that matches decides; a text none matches keeps KNOWN's.
VARIANTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "HighPipeUtilization": (
        (
            r"^\s*All compute pipelines are under-utilized",
            "every compute pipeline under-used",
            "give each launch more work or more warps (larger batch, fuse small kernels): the "
            "kernel is too small or stalls, not limited by a pipeline",
        ),
        (
            r"is the highest-utilized pipeline",
            "one pipeline is the busiest",
            "move work off that pipeline (e.g. to tensor cores) or issue fewer of its instructions",
        ),
    ),
    "SOLBottleneck": (
        (
            r"^\s*This kernel grid is too small",
            "grid too small to fill the GPU",
            "launch more blocks: a larger batch, or fuse small kernels; the GPU sits partly idle",
        ),
        (
            r"low compute throughput and memory bandwidth utilization",
            "neither compute nor memory is busy (latency)",
            "hide latency: more warps in flight, fewer dependent instructions, fewer stalls",
        ),
        (
            r"^\s*Compute is more heavily utilized than Memory",
            "compute is the busier unit",
            "see which compute pipeline ncu names and move work off it",
        ),
        (
            r"^\s*Memory is more heavily utilized than Compute",
            "memory is the busier unit",
            "move fewer bytes: reuse data in shared memory or cache, fuse, use smaller types",
        ),
    ),
}


# A launch's largest estimate for a rule, at most the whole launch; NULL stays NULL (DuckDB's
# least() would give 100 for it)
_CAPPED = "CASE WHEN max(speedup_pct) IS NULL THEN NULL ELSE least(max(speedup_pct), 100) END"


def _variant_sql() -> str:
    """The index (from 1) of the VARIANTS entry a row's text matches, 0 for none."""
    whens = [
        f"WHEN rule = {quote_str(rule)} AND regexp_matches(coalesce(description, ''), "
        f"{quote_str(pattern)}) THEN {i}"
        for rule, variants in VARIANTS.items()
        for i, (pattern, _, _) in enumerate(variants, start=1)
    ]
    return f"CASE {' '.join(whens)} ELSE 0 END"


def _title(rule: str, variant: int) -> tuple[str, str]:
    if variant:
        _, title, action = VARIANTS[rule][variant - 1]
        return title, action
    return KNOWN.get(rule, (rule, SEE_TEXT))


@dataclass(frozen=True)
class RuleGroup:
    """One group a rule fires in: its launches, their time and the gain ncu's estimates claim
    there (None: no launch of it has an estimate)."""

    name: str
    launches: int
    time_s: float
    est_gain_s: float | None


def _fired(ctx: Context) -> list[tuple]:
    """Per (rule, kind of text, group): launches, time, estimated gain, launches with an
    estimate and with a local one, time without an estimate, launches without a time; OPT/WRN
    rows only. A rule that fires twice on one launch counts the launch once, with its larger
    estimate (capped at the whole launch: 100 %) and its first text."""
    types = ", ".join(f"'{t}'" for t in ADVICE_TYPES)
    return ctx.con.execute(
        f"""
        WITH per_launch AS (
            SELECT rule, launch_id, {_CAPPED} AS pct,
                   arg_max(speedup_type, speedup_pct) AS kind, min(description) AS description
            FROM ncu_rules WHERE report_id = $rid AND type IN ({types})
            GROUP BY rule, launch_id
        ), timed AS (
            SELECT p.rule, {_variant_sql()} AS variant, coalesce(v.grp, '(unnamed)') AS grp,
                   p.launch_id, p.pct, p.kind,
                   coalesce(v.invocations, 1) AS n, v.time_s * coalesce(v.invocations, 1) AS t
            FROM per_launch p
            LEFT JOIN launch_view v ON v.report_id = $rid AND v.launch_id = p.launch_id
        )
        SELECT rule, variant, grp, sum(n), coalesce(sum(t), 0),
               sum(pct / 100 * t) FILTER (WHERE pct IS NOT NULL AND t IS NOT NULL),
               count(*) FILTER (WHERE pct IS NOT NULL),
               count(*) FILTER (WHERE pct IS NOT NULL AND kind = 'local'),
               coalesce(sum(t) FILTER (WHERE pct IS NULL), 0),
               count(*) FILTER (WHERE t IS NULL)
        FROM timed GROUP BY rule, variant, grp ORDER BY rule, variant, grp
        """,
        {"rid": ctx.report_id},
    ).fetchall()


def _texts(ctx: Context) -> dict[tuple[str, int], tuple]:
    """Per (rule, kind of text), ncu's text on the longest launch it fires on (ties: the lowest
    launch ID, then the first text in sort order), with that launch's ID, type and section."""
    types = ", ".join(f"'{t}'" for t in ADVICE_TYPES)
    rows = ctx.con.execute(
        f"""
        WITH per_launch AS (
            SELECT rule, launch_id, min(description) AS description, min(type) AS type,
                   min(section) AS section
            FROM ncu_rules WHERE report_id = $rid AND type IN ({types})
            GROUP BY rule, launch_id
        ), classed AS (SELECT *, {_variant_sql()} AS variant FROM per_launch)
        SELECT p.rule, p.variant, arg_max(
            struct_pack(description := p.description, launch := p.launch_id, type := p.type,
                        section := p.section),
            struct_pack(t := coalesce(v.time_s * v.invocations, -1), id := -p.launch_id))
        FROM classed p
        LEFT JOIN launch_view v ON v.report_id = $rid AND v.launch_id = p.launch_id
        GROUP BY p.rule, p.variant
        """,
        {"rid": ctx.report_id},
    ).fetchall()
    return {
        (rule, variant): (s["description"], s["launch"], s["type"], s["section"])
        for rule, variant, s in rows
    }


def advise(ctx: Context) -> list[Advice]:
    """One item per ncu rule that fires as OPT or WRN on a launch of the report, and per kind
    of text for the rules of VARIANTS."""
    by_rule: dict[tuple[str, int], list[tuple]] = {}
    for row in _fired(ctx):
        by_rule.setdefault((row[0], row[1]), []).append(row[2:])
    texts = _texts(ctx) if by_rule else {}
    return [_item(key, rows, texts.get(key), ctx) for key, rows in sorted(by_rule.items())]


def _sum_known(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _item(key: tuple[str, int], rows: list[tuple], text: tuple | None, ctx: Context) -> Advice:
    rule, variant = key
    groups = sorted(
        (RuleGroup(grp, int(n), float(t), g) for grp, n, t, g, *_ in rows),
        key=lambda g: (-g.time_s, g.name),
    )
    launches = sum(g.launches for g in groups)
    time_s = sum(g.time_s for g in groups)
    gain = _sum_known([g.est_gain_s for g in groups])
    estimated = sum(r[4] for r in rows)
    local = sum(r[5] for r in rows)
    unestimated_s = sum(r[6] for r in rows)
    untimed = sum(r[7] for r in rows)
    step = ctx.step_s
    title, action = _title(rule, variant)
    evidence = []
    if text is not None:
        description, launch, kind, section = text
        where = f"{section} section, " if section else ""
        evidence.append(
            f"ncu's text ({kind}, {where}launch {launch}, the longest it fires on): "
            f"{description or '(no text)'}"
        )
    shown = ", ".join(
        f"{g.name} {si(g.time_s, 's')}"
        + (f" (est. gain {si(g.est_gain_s, 's')})" if g.est_gain_s is not None else "")
        for g in groups[:GROUPS_SHOWN]
    )
    more = f" and {len(groups) - GROUPS_SHOWN} more" if len(groups) > GROUPS_SHOWN else ""
    where = f"{counted(launches, 'launch')} in {counted(len(groups), 'group')}"
    evidence.append(f"fires on {where}: {shown}{more}")
    evidence.append(
        f"ncu estimates a speedup on {estimated:,} of them ({local:,} local, "
        f"{estimated - local:,} global)"
        if estimated
        else "ncu put no Estimated Speedup on this rule in this export (older ncu, or a rule "
        "without one)"
    )
    return Advice(
        rule=rule,
        source=NCU,
        title=f"ncu {rule}: {title}" if title != rule else f"ncu rule {rule}",
        action=action,
        evidence=evidence,
        groups=[g.name for g in groups],
        launches=launches,
        time_s=time_s,
        time_pct=100.0 * time_s / step if step else 0.0,
        est_gain_s=gain,
        est_step_speedup=step_speedup(step or 0.0, gain),
        assumptions=_assumptions(gain, estimated, local, launches, unestimated_s, untimed),
    )


def _assumptions(
    gain: float | None, estimated: int, local: int, launches: int, unestimated_s: float,
    untimed: int,
) -> list[str]:  # fmt: skip
    if gain is None:
        return [
            "no estimate: ncu put no Estimated Speedup on this rule here; ranked after the "
            "estimated items, by the time it covers"
        ]
    out = [
        "gain = Σ over the launches it fires on of ncu's Estimated Speedup (%) × the launch's "
        "time; a global estimate is ncu's share of the whole kernel's time",
        "each item alone: the gains of different rules overlap and do not add up",
        "step speedup: Amdahl over the report's summed kernel time with this gain saved",
    ]
    if local:
        out.append(
            f"{local:,} launch(es) carry a local estimate, relative to the part of the kernel "
            f"the rule looks at; taken here as a share of the whole kernel, an upper bound"
        )
    if estimated < launches:
        out.append(
            f"{launches - estimated:,} launch(es) ({si(unestimated_s, 's')}) carry no estimate "
            f"and add nothing to the gain"
        )
    if untimed:
        out.append(f"{untimed:,} launch(es) have no duration and add nothing to time or gain")
    return out


def together(ctx: Context) -> dict[str, Any] | None:
    """What ncu's estimates claim for the step all together, or None when no launch carries
    one. Rules overlap (a kernel too small to fill the GPU is also one whose pipelines are all
    under-used), so a launch's estimates are combined as 1 − Π(1 − s), each s capped at the
    whole launch, never summed: the gain never exceeds the time of the launches it is on, and
    the step speedup is Amdahl's over the whole step (issue 32)."""
    types = ", ".join(f"'{t}'" for t in ADVICE_TYPES)
    row = ctx.con.execute(
        f"""
        WITH per_rule AS (
            SELECT rule, launch_id, {_CAPPED} / 100 AS s
            FROM ncu_rules WHERE report_id = $rid AND type IN ({types})
                AND speedup_pct IS NOT NULL
            GROUP BY rule, launch_id
        ), per_launch AS (
            SELECT p.launch_id, 1 - product(1 - greatest(p.s, 0)) AS s, sum(p.s) AS summed,
                   count(*) AS rules, any_value(v.time_s * coalesce(v.invocations, 1)) AS t
            FROM per_rule p
            LEFT JOIN launch_view v ON v.report_id = $rid AND v.launch_id = p.launch_id
            GROUP BY p.launch_id
        )
        SELECT count(*), sum(s * t) FILTER (WHERE t IS NOT NULL),
               sum(summed * t) FILTER (WHERE t IS NOT NULL), max(rules),
               (SELECT count(DISTINCT rule) FROM per_rule)
        FROM per_launch
        """,
        {"rid": ctx.report_id},
    ).fetchall()[0]
    launches, gain, summed, most, rules = row
    if not launches or gain is None:
        return None
    step = ctx.step_s or 0.0
    return {
        "rules": int(rules),
        LAUNCHES: int(launches),
        "est_gain_s": float(gain),
        "est_step_speedup": step_speedup(step, float(gain)),
        "summed_gain_s": float(summed),
        "most_rules_on_a_launch": int(most),
        "model": "per launch 1 − Π(1 − s) over the rules' Estimated Speedups s (each at most "
        "the whole launch), × the launch's time, summed over launches; step speedup: Amdahl "
        "over the report's summed kernel time",
    }
