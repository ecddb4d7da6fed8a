"""What ``roofscope mcp`` answers, without the MCP SDK: each tool a function from its arguments
to a compact JSON document, with the numbers, units and provenance of ``report --format json``
(the same functions make them), never more rows than asked for.

Paths are resolved (symlinks followed) and must lie under one of the roots the server was given;
anything else is a ``RoofscopeError`` with the CLI's one-line message, which the server hands
back as a tool error. Nothing is written but roofscope's own cache.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofscope.errors import RoofscopeError
from roofscope.quantities import (
    AI,
    BOUND,
    BYTES,
    EFFICIENCY,
    FLOP_PER_S,
    FLOPS,
    HEADROOM_S,
    LAUNCHES,
    LEVELS,
    TIME_PCT,
    TIME_S,
)

if TYPE_CHECKING:
    from roofscope.session import Session
    from roofscope.session.report import Report

MAX_TOP = 1000  # rows any tool returns at most, whatever ``top`` asks
UNITS = {
    TIME_S: "s",
    FLOPS: "FLOP",
    BYTES: "B",
    FLOP_PER_S: "FLOP/s",
    AI: "FLOP/B",
    EFFICIENCY: "fraction of the attainable roof (0-1)",
    TIME_PCT: "% of the report's GPU time",
    HEADROOM_S: "s (time above what running at the roof would take)",
}
GROUP_SORTS = (TIME_S, HEADROOM_S, EFFICIENCY, LAUNCHES, FLOP_PER_S)
LAUNCH_SORTS = (TIME_S, EFFICIENCY, HEADROOM_S, FLOP_PER_S)


class Workspace:
    """The folders a client may read from; every path a tool takes goes through ``path``."""

    def __init__(self, roots: list[str | Path]):
        self.roots: list[Path] = []
        for root in roots:
            real = Path(root).expanduser().resolve()
            if not real.is_dir():
                raise RoofscopeError("is not a folder", path=str(root), hint="--root takes folders")
            self.roots.append(real)

    def path(self, given: str) -> Path:
        """``given`` (relative paths from the first root) with every symlink followed, refused
        unless it lies under a root."""
        if not isinstance(given, str) or not given or "\x00" in given:
            raise RoofscopeError("a path must be a non-empty string", hint="e.g. report.csv")
        candidate = Path(given).expanduser()
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        real = candidate.resolve()
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            raise RoofscopeError(
                "is outside the folders this server may read",
                path=given,
                hint="roofscope mcp --root DIR adds a folder: " + ", ".join(map(str, self.roots)),
            )
        return real


@contextmanager
def _opened(workspace: Workspace, *paths: str) -> Iterator[Session]:
    """The reports at ``paths``, opened by their resolved names; an error names a file as the
    client gave it, so the message is the one ``roofscope report`` prints for that path."""
    from roofscope.session import load

    resolved = [str(workspace.path(p)) for p in paths]  # a file diffed with itself: twice
    try:
        session = load(*resolved)
    except RoofscopeError as exc:
        spelled = dict(zip(resolved, paths, strict=True))
        exc.path = spelled.get(str(exc.path), exc.path) if exc.path else exc.path
        raise
    try:
        yield session
    finally:
        session.close()


def _top(top: int, default: int = 20) -> int:
    if top is None:
        return default
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise RoofscopeError("top needs a positive whole number", hint=f"e.g. {default}")
    return min(top, MAX_TOP)


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise RoofscopeError(f"unknown {what} {value!r}", hint="use " + ", ".join(allowed))
    return value


def _sorted(
    rows: list[dict[str, Any]], key: str, top: int, ascending: bool = False
) -> list[dict[str, Any]]:
    """Largest first (smallest with ``ascending``: the least efficient groups); rows without
    the value last either way (efficiency unknown is not 0)."""
    known = [r for r in rows if r.get(key) is not None]
    unknown = [r for r in rows if r.get(key) is None]
    return (sorted(known, key=lambda r: r[key], reverse=not ascending) + unknown)[:top]


def _report_head(session: Session) -> dict[str, Any]:
    """The first report of ``report --format json`` without its rows."""
    (entry,) = session.report_dict(top=0, advice=False)["reports"][:1]
    return {k: v for k, v in entry.items() if k not in ("groups", "rows", "by", "axis")}


def summary(workspace: Workspace, path: str) -> dict[str, Any]:
    with _opened(workspace, path) as session:
        return {"report": _report_head(session), "units": UNITS}


def groups(
    workspace: Workspace, path: str, sort: str = TIME_S, top: int = 20, ascending: bool = False
) -> dict[str, Any]:
    _choice(sort, GROUP_SORTS, "sort")
    n = _top(top)
    with _opened(workspace, path) as session:
        report = session.reports[0]
        rows = report.rows("group")
        return {
            "path": report.path,
            "groups_total": len(rows),
            "sort": sort,
            "ascending": ascending,
            "groups": _sorted(rows, sort, n, ascending),
            "units": UNITS,
        }


def _group_row(report: Report, group: str) -> dict[str, Any]:
    """The Kernels row of ``group``; an unknown name is an error naming the nearest ones."""
    rows = report.rows("group")
    found = [r for r in rows if r["name"] == group]
    if found:
        return found[0]
    names = [str(r["name"]) for r in rows]
    alike = [n for n in names if n.casefold() == group.casefold()]
    hint = (
        f"did you mean {alike[0]!r}? (names are matched exactly)"
        if alike
        else "its largest groups: " + ", ".join(repr(n) for n in names[:5])
    )
    raise RoofscopeError(f"has no group {group!r}", path=report.path, hint=hint)


def launches(
    workspace: Workspace,
    path: str,
    group: str,
    sort: str = TIME_S,
    top: int = 20,
    ascending: bool = False,
) -> dict[str, Any]:
    from roofscope.analysis.browse import Filter

    _choice(sort, LAUNCH_SORTS, "sort")
    n = _top(top)
    with _opened(workspace, path) as session:
        report = session.reports[0]
        total = int(_group_row(report, group)[LAUNCHES])
        flt = Filter(group=group)
        # by time the store cuts the list; another order needs the group's every launch
        cut = n if sort == TIME_S and not ascending else None
        rows = report.rows("launch", flt, limit=cut)
        return {
            "path": report.path,
            "group": group,
            "launches_total": total,
            "sort": sort,
            "ascending": ascending,
            "launches": _sorted(rows, sort, n, ascending),
            "units": UNITS,
        }


def launch_detail(
    workspace: Workspace, path: str, launch: int, match: str = "", top: int = 100
) -> dict[str, Any]:
    if isinstance(launch, bool) or not isinstance(launch, int) or launch < 0:
        raise RoofscopeError("launch needs a launch ID (a whole number ≥ 0)", hint="e.g. 0")
    n = _top(top, 100)
    with _opened(workspace, path) as session:
        report = session.reports[0]
        if not report.has_launch(launch):
            raise RoofscopeError(
                f"has no launch {launch}", path=report.path, hint="launches(path, group) lists IDs"
            )
        metrics = [
            {
                "kind": m.kind,
                "name": m.name,
                "value": m.value,
                "unit": m.unit,
                "formula_or_source": m.source,
                **({BOUND: m.bound} if m.bound else {}),
            }
            for m in report.launch_detail(launch)
            if match.casefold() in m.name.casefold()
        ]
        # derived values come first: a cut keeps them and the first exported columns
        return {
            "path": report.path,
            "launch": launch,
            "match": match,
            "metrics_total": len(metrics),
            "metrics": metrics[:n],
        }


def roofline(workspace: Workspace, path: str, level: str = "dram", top: int = 50) -> dict[str, Any]:
    _choice(level, LEVELS, "level")
    n = _top(top, 50)
    with _opened(workspace, path) as session:
        report = session.reports[0]
        points = [
            {
                "group": r["name"],
                AI: (r.get(AI) or {}).get(level),
                "ai_by_level": r.get(AI),
                FLOP_PER_S: r.get(FLOP_PER_S),
                TIME_PCT: r.get(TIME_PCT),
                BOUND: r.get(BOUND),
                "attainable_flop_per_s": r.get("attainable_flop_per_s"),
                EFFICIENCY: r.get(EFFICIENCY),
            }
            for r in report.rows("group")[:n]
        ]
        return {
            "path": report.path,
            "level": level,
            "roofs": [c.to_dict() for c in report.ceilings],  # as report --format json
            "points": points,
            "units": UNITS,
        }


def advice(workspace: Workspace, path: str, top: int = 10) -> dict[str, Any]:
    n = _top(top, 10)
    with _opened(workspace, path) as session:
        report = session.reports[0]
        items = [a.to_dict() for a in report.advice()]
        return {"path": report.path, "items_total": len(items), "advice": items[:n]}


def diff(
    workspace: Workspace, before: str, after: str, by: str = "group", top: int = 20
) -> dict[str, Any]:
    _choice(by, ("group", "kernel", "launch"), "grouping")
    n = _top(top)
    with _opened(workspace, before, after) as session:
        doc = session.diff(0, 1, by).to_dict()
    rows = doc.get("rows", [])
    doc["rows_total"] = len(rows)
    doc["rows"] = [_cut_lists(r, n) for r in rows[:n]]
    doc["kernels"] = _cut_lists(doc.get("kernels", {}), n)
    return doc


def _cut_lists(entry: dict[str, Any], n: int) -> dict[str, Any]:
    """Each list in ``entry`` cut to ``n`` items, with ``{key}_total`` where one was cut."""
    out: dict[str, Any] = {}
    for key, value in entry.items():
        out[key] = value[:n] if isinstance(value, list) else value
        if isinstance(value, list) and len(value) > n:
            out[f"{key}_total"] = len(value)
    return out


def monitor_snapshot() -> dict[str, Any]:
    """One NVML sample of every GPU, or why there is none (this host may have no GPU)."""
    from roofscope.monitor.nvml import NvmlSource, read_settled
    from roofscope.monitor.source import MonitorUnavailable
    from roofscope.output.gpu import reading_dict

    try:
        source = NvmlSource()
    except MonitorUnavailable as exc:
        return {"available": False, "reason": exc.one_line()}
    try:
        return {"available": True, **reading_dict(read_settled(source))}
    finally:
        source.close()
