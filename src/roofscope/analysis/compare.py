"""Two reports row by row: which group, kernel or launch of *before* is which of *after*.

Groups match by group name (the same rules group both reports). Kernels match by exact name,
then — among those left, in order of first launch — by the name with data types blanked (the
fp32 and bf16 instantiations of one template), by base name (templates and parameters
stripped) and by base name without namespace — each only within one group, so a split-K
reduction never pairs with a convolution that shares its template's name. Launches pair the
k-th launch of a kernel with the k-th launch of its match ("launch order where names
repeat"). Anything left over is *new* (only after) or *vanished* (only before): never guessed.

Works on the row dicts of :mod:`roofscope.analysis.summary`, so the numbers compared are exactly
the numbers each report shows on its own.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roofscope import quantities as q
from roofscope.errors import RoofscopeError
from roofscope.grouping import base_name

if TYPE_CHECKING:
    import duckdb

Row = dict[str, Any]

# Per side of a diff row: what each report shows for it on its own.
SIDE_KEYS = (q.TIME_S, q.LAUNCHES, "kernels", q.TIME_PCT, q.FLOP_PER_S, q.EFFICIENCY, q.BOUND)


@dataclass(frozen=True)
class KernelInfo:
    """A kernel of one report: its name, group and when it first ran (launch order)."""

    name: str
    group: str
    first_launch: int


@dataclass
class KernelMatch:
    pairs: list[tuple[str, str, str]]  # (before name, after name, matched by)
    vanished: list[str]  # only in before
    new: list[str]  # only in after

    def after_of(self) -> dict[str, str]:
        return {a: b for a, b, _ in self.pairs}


def match_kernels(before: Sequence[KernelInfo], after: Sequence[KernelInfo]) -> KernelMatch:
    """Exact names first; then base names, paired in order of first launch."""
    a_names = {k.name for k in before}
    b_names = {k.name for k in after}
    pairs = [(k.name, k.name, "name") for k in sorted(before, key=_order) if k.name in b_names]
    left_a = [k for k in sorted(before, key=_order) if k.name not in b_names]
    left_b = [k for k in sorted(after, key=_order) if k.name not in a_names]
    keys = (("types", typeless_name), ("base name", base_name), ("short name", short_name))
    for how, key in keys:
        left_a, left_b, found = _pair_by(left_a, left_b, key)
        pairs += [(a, b, how) for a, b in found]
    return KernelMatch(pairs, [k.name for k in left_a], [k.name for k in left_b])


_TYPES = re.compile(
    r"\b(?:c10::|at::)?(?:BFloat16|Half|Float8_e4m3fn|Float8_e5m2)\b|__nv_bfloat16|__half|"
    r"\b(?:float|double|half|bf16|fp16|f16|f32|tf32|s1688|s16816|h16816)\b|\b\d+\b"
)

if TYPE_CHECKING:
    import duckdb


def typeless_name(kernel: str) -> str:
    """The full name with data types and numbers blanked: the fp32 and bf16 instantiations of
    one template (``max_pool<float, int>`` / ``max_pool<c10::BFloat16, int>``) compare equal."""
    return _TYPES.sub("T", kernel)


def short_name(kernel: str) -> str:
    """The base name without its namespace: ``cudnn::nchwToNhwcKernel`` -> ``nchwToNhwcKernel``
    (cuDNN moves kernels between namespaces from one precision to another)."""
    return base_name(kernel).rsplit("::", 1)[-1]


def _pair_by(
    left_a: list[KernelInfo], left_b: list[KernelInfo], key: Callable[[str], str]
) -> tuple[list[KernelInfo], list[KernelInfo], list[tuple[str, str]]]:
    """Pair equal keys within one group, in order of first launch; return what is left."""
    queues: dict[tuple[str, str], list[KernelInfo]] = defaultdict(list)
    for k in left_b:
        queues[(k.group, key(k.name))].append(k)
    found, rest_a, taken = [], [], set()
    for k in left_a:
        queue = queues.get((k.group, key(k.name)))
        if queue:
            other = queue.pop(0)
            taken.add(other.name)
            found.append((k.name, other.name))
        else:
            rest_a.append(k)
    return rest_a, [k for k in left_b if k.name not in taken], found


def _order(k: KernelInfo) -> tuple[int, str]:
    return (k.first_launch, k.name)


@dataclass
class DiffRow:
    """One matched (or unmatched) row: both sides' own numbers and the differences."""

    name: str
    matched_by: str  # group | name | types | base name | short name | launch order | new | vanished
    before: Row | None
    after: Row | None
    before_name: str | None = None  # when it differs from ``name`` (base-name matches)
    new_kernels: list[str] = field(default_factory=list)
    vanished_kernels: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.before is None:
            return "new"
        if self.after is None:
            return "vanished"
        return "matched"

    def _get(self, side: Row | None, key: str) -> float | None:
        return None if side is None else side.get(key)

    @property
    def delta_time_s(self) -> float:
        """after − before; a new row counts its whole time, a vanished one minus its time."""
        return (self._get(self.after, q.TIME_S) or 0.0) - (self._get(self.before, q.TIME_S) or 0.0)

    @property
    def delta_time_pct(self) -> float | None:
        t0 = self._get(self.before, q.TIME_S)
        if self.after is None or not t0:
            return None
        return 100.0 * self.delta_time_s / t0

    @property
    def speedup(self) -> float | None:
        t0, t1 = self._get(self.before, q.TIME_S), self._get(self.after, q.TIME_S)
        return t0 / t1 if t0 and t1 else None

    @property
    def delta_roof_pp(self) -> float | None:
        """Change of the achieved fraction of the row's own roof, in percentage points."""
        r0, r1 = roof_pct(self.before), roof_pct(self.after)
        return r1 - r0 if r0 is not None and r1 is not None else None

    @property
    def delta_flop_per_s(self) -> float | None:
        f0, f1 = self._get(self.before, q.FLOP_PER_S), self._get(self.after, q.FLOP_PER_S)
        return f1 - f0 if f0 is not None and f1 is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "before_name": self.before_name,
            "matched_by": self.matched_by,
            "status": self.status,
            "before": side_dict(self.before),
            "after": side_dict(self.after),
            "delta_time_s": self.delta_time_s,
            "delta_time_pct": self.delta_time_pct,
            "speedup": self.speedup,
            "delta_roof_pp": self.delta_roof_pp,
            "delta_flop_per_s": self.delta_flop_per_s,
            "new_kernels": self.new_kernels,
            "vanished_kernels": self.vanished_kernels,
        }


def roof_pct(row: Row | None) -> float | None:
    """Achieved FLOP/s as a percentage of the attainable rate under the row's own roof."""
    if row is None:
        return None
    achieved, attainable = row.get(q.FLOP_PER_S), row.get("attainable_flop_per_s")
    if achieved is None or not attainable:
        return None
    return 100.0 * achieved / attainable


def side_dict(row: Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    out = {k: row.get(k) for k in SIDE_KEYS}
    out["roof_pct"] = roof_pct(row)
    return out


def diff_groups(
    before: Sequence[Row],
    after: Sequence[Row],
    kernels_before: Sequence[KernelInfo],
    kernels_after: Sequence[KernelInfo],
) -> tuple[list[DiffRow], KernelMatch]:
    """Group rows matched by group name; each carries the kernels new or vanished in it."""
    match = match_kernels(kernels_before, kernels_after)
    group_of_a = {k.name: k.group for k in kernels_before}
    group_of_b = {k.name: k.group for k in kernels_after}
    new_in: dict[str, list[str]] = defaultdict(list)
    gone_in: dict[str, list[str]] = defaultdict(list)
    for name in match.new:
        new_in[group_of_b[name]].append(name)
    for name in match.vanished:
        gone_in[group_of_a[name]].append(name)
    a_rows = {str(r["name"]): r for r in before}
    b_rows = {str(r["name"]): r for r in after}
    out = []
    for name in dict.fromkeys([*a_rows, *b_rows]):
        a, b = a_rows.get(name), b_rows.get(name)
        how = "group" if a is not None and b is not None else ("new" if a is None else "vanished")
        out.append(DiffRow(name, how, a, b, None, new_in[name], gone_in[name]))
    return _sorted(out), match


def diff_kernels(before: Sequence[Row], after: Sequence[Row], match: KernelMatch) -> list[DiffRow]:
    """Kernel rows (``summary.rows(by="kernel")``) paired as ``match`` says."""
    a_rows = {str(r["name"]): r for r in before}
    b_rows = {str(r["name"]): r for r in after}
    out = [
        DiffRow(b, how, a_rows.get(a), b_rows.get(b), a if a != b else None)
        for a, b, how in match.pairs
    ]
    out += [DiffRow(n, "vanished", a_rows.get(n), None) for n in match.vanished]
    out += [DiffRow(n, "new", None, b_rows.get(n)) for n in match.new]
    return _sorted(out)


def diff_launches(before: Sequence[Row], after: Sequence[Row], match: KernelMatch) -> list[DiffRow]:
    """Launch rows (``summary.rows(by="launch")``): the k-th launch of a kernel against the
    k-th launch of its match. Rows are named ``kernel #k`` (1-based)."""
    a_runs = _runs(before)
    b_runs = _runs(after)
    out = []
    for a_name, b_name, _ in match.pairs:
        a_list, b_list = a_runs.get(a_name, []), b_runs.get(b_name, [])
        for k in range(max(len(a_list), len(b_list))):
            a = a_list[k] if k < len(a_list) else None
            b = b_list[k] if k < len(b_list) else None
            label = f"{b_name if b is not None else a_name} #{k + 1}"
            kind = "launch order" if a is not None and b is not None else None
            kind = kind or ("new" if a is None else "vanished")
            out.append(
                DiffRow(label, kind, a, b, f"{a_name} #{k + 1}" if a_name != b_name else None)
            )
    for name in match.vanished:
        out += [
            DiffRow(f"{name} #{k + 1}", "vanished", r, None) for k, r in enumerate(a_runs[name])
        ]
    for name in match.new:
        out += [DiffRow(f"{name} #{k + 1}", "new", None, r) for k, r in enumerate(b_runs[name])]
    return _sorted(out)


def _runs(rows: Iterable[Row]) -> dict[str, list[Row]]:
    """Launch rows per kernel, in launch order."""
    runs: dict[str, list[Row]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r["name"]):
        runs[str(r["kernel"])].append(r)
    return runs


def _sorted(rows: list[DiffRow]) -> list[DiffRow]:
    """Biggest movers first (by |Δtime|), then by name for a stable order."""
    return sorted(rows, key=lambda r: (-abs(r.delta_time_s), r.name))


def kernel_infos(con: duckdb.DuckDBPyConnection, report_id: int) -> list[KernelInfo]:
    """Every kernel of a report with its group and first launch, in launch order."""
    rows = con.execute(
        "SELECT kernel, any_value(grp), min(launch_id) FROM launch_view "
        "WHERE report_id = ? AND kernel IS NOT NULL GROUP BY kernel ORDER BY 3",
        [report_id],
    ).fetchall()
    return [KernelInfo(k, g, int(first)) for k, g, first in rows]


@dataclass
class Totals:
    time_s: float | None
    flops: float | None
    launches: int
    kernels: int

    @property
    def flop_per_s(self) -> float | None:
        return q.flop_per_s(self.flops, self.time_s)


def total_change(before: Totals, after: Totals) -> dict[str, Any]:
    """The step's change: Δtime, Δ% and speedup of the summed kernel time."""
    t0, t1 = before.time_s, after.time_s
    delta = t1 - t0 if t0 is not None and t1 is not None else None
    return {
        "delta_time_s": delta,
        "delta_time_pct": 100.0 * delta / t0 if delta is not None and t0 else None,
        "speedup": t0 / t1 if t0 and t1 else None,
        "delta_flop_per_s": (
            after.flop_per_s - before.flop_per_s
            if after.flop_per_s is not None and before.flop_per_s is not None
            else None
        ),
    }


@dataclass
class Diff:
    """Everything ``roofscope diff`` prints and the Compare pane shows."""

    by: str
    before: dict[str, Any]  # the report's head: path, GPU, totals
    after: dict[str, Any]
    total: dict[str, Any]
    rows: list[DiffRow]
    kernels: KernelMatch
    warnings: list[str] = field(default_factory=list)

    def slower_than(self, threshold_pct: float) -> bool:
        """The CI gate: summed kernel time grew by more than ``threshold_pct`` percent. A side
        without kernel time cannot pass the gate silently: that is the caller's error."""
        pct = self.total["delta_time_pct"]
        if pct is None:
            raise RoofscopeError(
                "cannot gate: one of the two exports has no kernel time",
                path=self.after["path"] if not self.after[q.TIME_S] else self.before["path"],
                hint="--fail-if-slower needs kernels with durations in both",
            )
        return pct > threshold_pct

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "before": self.before,
            "after": self.after,
            "total": self.total,
            "rows": [r.to_dict() for r in self.rows],
            "kernels": {
                "matched": [
                    {"before": a, "after": b, "matched_by": how} for a, b, how in self.kernels.pairs
                ],
                "new": self.kernels.new,
                "vanished": self.kernels.vanished,
            },
            "warnings": self.warnings,
        }
