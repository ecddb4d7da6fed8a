"""The Kernels pane's first screen, kept beside the cache so that ``roofscope open`` of an
unchanged report draws it before DuckDB is even imported (issue 31, item 3).

Re-opening a cached report used to cost, before anything was drawn: DuckDB's import and start
(~0.2 s on the 2-core VM), the session's views and the group query — 0.76 s to the first paint
against 0.24 s for a bare Textual app drawing one table. What that screen shows is a function of
the cache and the options alone, so it is kept like ``roofscope report``'s answer
(``report_memo``: the same rules for what makes it valid — the store file, the inputs, the
options, the rules files, the ceilings, roofscope's code) and drawn from there; the session
loads behind it, and the keys typed meanwhile wait for it (``RoofscopeApp``).

What is kept is the data the pane draws from — the group rows as the session returns them, the
FLOP shares, the components missing from lower-bound efficiencies, and the status line's
heading — never the drawn text: the pane lays the rows out for the terminal it finds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from roofscope import report_memo
from roofscope.quantities import EFFICIENCY_COMPLETE

if TYPE_CHECKING:
    from roofscope.analysis.browse import Filter
    from roofscope.session import Report

SUFFIX = ".first-screen.json"
PANE = "kernels"  # the pane whose first screen is kept (KernelsPane.KEY)
# The column sets of the groups table (KernelsPane maps them to its columns)
KINDS = ("ncu", "nsys", "joined")


@dataclass(frozen=True)
class Heading:
    """What the groups table's columns and status line depend on, besides the rows."""

    label: str  # ``name.csv [1/2] · H100`` (ViewState.label)
    kind: str  # one of KINDS
    axis: str  # the grouping axis (grouping.AXES)


@dataclass(frozen=True)
class Groups:
    """The groups of one report under one filter, as the Kernels pane shows them."""

    rows: list[dict[str, Any]]
    precision: list[dict[str, Any]]  # the report's FLOPs per precision (ncu)
    missing: list[str] | None  # what lower-bound efficiencies lack; None: all exact


@dataclass(frozen=True)
class FirstScreen:
    heading: Heading
    groups: Groups


def heading(label: str, report: Report, axis: str) -> Heading:
    """The heading of ``report``, labelled ``label`` (ViewState.label), grouped by ``axis``."""
    kind = "nsys" if report.is_nsys else "joined" if report.partner is not None else "ncu"
    return Heading(label, kind, axis)


def query_groups(report: Report, flt: Filter) -> Groups:
    """The pane's queries for its groups table (in a worker: they wait on the session)."""
    rows = report.rows("group", flt)
    precision = [] if report.is_nsys else report.precision()
    partial = any(r.get(EFFICIENCY_COMPLETE) is False for r in rows)
    return Groups(rows, precision, report.missing_components() if partial else None)


def _options(options: dict[str, Any]) -> dict[str, Any] | None:
    """The options that reach the first screen; None when there is no cache to tie it to."""
    if not options.get("use_cache", True):
        return None
    kept = {k: options.get(k) for k in ("gpu", "ceilings", "fp16_convention", "axis")}
    return {**kept, "view": "kernels"}


def read(files: list[str], options: dict[str, Any]) -> FirstScreen | None:
    """The first screen kept for these files and options, when all it came from is unchanged
    (and it reads back as one); else None, and the app opens as before."""
    tied = _options(options)
    doc = report_memo.read(files, tied, SUFFIX) if tied is not None else None
    if doc is None:
        return None
    try:
        head, groups = doc["heading"], doc["groups"]
        screen = FirstScreen(
            Heading(str(head["label"]), str(head["kind"]), str(head["axis"])),
            Groups(list(groups["rows"]), list(groups["precision"]), groups["missing"]),
        )
    except (KeyError, TypeError, ValueError):
        return None
    well_formed = (
        screen.heading.kind in KINDS
        and all(isinstance(r, dict) and isinstance(r.get("name"), str) for r in screen.groups.rows)
        and all(isinstance(p, dict) for p in screen.groups.precision)
        and (screen.groups.missing is None or isinstance(screen.groups.missing, list))
    )
    return screen if well_formed else None


def write(files: list[str], options: dict[str, Any], screen: FirstScreen) -> None:
    """Keep ``screen`` for the next open of these files (only ever from a cache on disk:
    ``report_memo`` ties it to the store file, and writes nothing when there is none)."""
    tied = _options(options)
    if tied is None:
        return
    doc = {"heading": screen.heading.__dict__, "groups": screen.groups.__dict__}
    report_memo.write(files, tied, doc, SUFFIX)
