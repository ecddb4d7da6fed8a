"""The column registry: one set of columns for the Kernels pane and ``roofscope report``.

Each :class:`Column` says which row kinds it applies to (ncu rows, nsys rows, the nsys columns
joined beside ncu rows, the pane's launch list) and in which views it shows (the pane, the
report's table, its Markdown); titles come from the quantity records of
:mod:`roofscope.quantities`, so a quantity reads the same in both front ends. The order of
:data:`COLUMNS` is the order of every set taken from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from roofscope.present import units as u
from roofscope.quantities import (
    AI,
    BOUND,
    BY_USE,
    EFFICIENCY,
    EFFICIENCY_COMPLETE,
    FLOP_PER_S,
    FLOPS_COMPLETE,
    HEADROOM_S,
    LAUNCHES,
    QUANTITIES,
    TIME_AVG_S,
    TIME_MAX_S,
    TIME_MED_S,
    TIME_MIN_S,
    TIME_PCT,
    TIME_S,
    UTIL_EFF,
    ai_key,
)

# Row kinds
GROUP = "group"  # rows of an ncu report (groups, kernels, launches): the roofline columns
NSYS = "nsys"  # rows of an nsys report: times only, the spread of kernel durations
JOINED = "joined"  # beside ncu rows when the report was opened with an nsys export of the program
LAUNCH = "launch"  # the Kernels pane's launch list (analysis.browse.LaunchPager pages)

# Views
PANE = "pane"  # the Kernels pane (fixed widths, for 80 columns)
TABLE = "table"  # roofscope report --format table (narrow headers, every digit)
MARKDOWN = "md"  # roofscope report --format md (long headers)
VIEWS = frozenset((PANE, TABLE, MARKDOWN))

NSYS_KEY = "nsys."  # "nsys.time_pct": the joined nsys row's time_pct


@dataclass(frozen=True)
class Column:
    """One column: the row key it reads (:func:`value`), its headers, its cell format at the
    pane's fixed ``width``, and ``full``, the cell where no width binds (the report, files):
    every digit of a count."""

    key: str
    title: str  # the pane's and the report table's header
    long_title: str  # the Markdown header
    fmt: Callable[[Any], str]
    width: int
    kinds: frozenset[str]
    views: frozenset[str] = VIEWS
    left: bool = False  # text, aligned left; numbers align right
    exact: Callable[[Any], str] | None = None
    short: Callable[[Any], str] | None = None  # the cell where the pane is narrow (bound → roof)
    mark: str = ""  # before the value when the row's value is a bound (u.AT_LEAST, …)
    complete_key: str = EFFICIENCY_COMPLETE  # the row's flag that says whether it is a bound

    def full(self, value: Any) -> str:
        return (self.exact or self.fmt)(value)

    def cell(self, row: Mapping[str, Any], *, narrow: bool = False, full: bool = False) -> str:
        """The cell of ``row``: the short form where the pane is ``narrow`` and the column has
        one; ``≥ 8%`` where the row's efficiency is a lower bound."""
        v = value(row, self.key)
        form = self.full if full else (self.short if narrow and self.short else self.fmt)
        text = form(v)
        return u.bounded(text, self.mark, row.get(self.complete_key)) if self.mark else text

    @property
    def unit_title(self) -> str:
        """The header of an exported file: the row key, as ``report --format csv`` writes it,
        with the unit where the key does not say it (``time_s``, ``efficiency (fraction)``)."""
        key = self.key.replace(".", "_")  # nsys.time_pct -> nsys_time_pct, as in report's CSV
        q = QUANTITIES.get(self.key.removeprefix(NSYS_KEY))
        if q is None or key.endswith(("_s", "_pct", "per_s")) or q.key in (BOUND, LAUNCHES):
            return key
        return f"{key} ({q.unit or 'fraction'})"


def _q(
    key: str,
    fmt: Callable[[Any], str],
    width: int,
    kinds: Iterable[str],
    views: Iterable[str] = VIEWS,
    *,
    nsys: bool = False,
    **kwargs: Any,
) -> Column:
    """The column of a quantity, titled by its record; ``nsys``: the joined nsys value of it."""
    q = QUANTITIES[key]
    if nsys:  # "nsys %" / "nsys % time", but FLOP/s measured on the real timeline reads so
        key = NSYS_KEY + key
        if q.key == FLOP_PER_S:
            short = title = f"{q.title} real"
        else:
            short, title = f"nsys {q.short_title}", f"nsys {q.title}"
    else:
        short, title = q.short_title, q.title
    return Column(key, short, title, fmt, width, frozenset(kinds), frozenset(views), **kwargs)


def _text(key: str, title: str, width: int, kinds: Iterable[str], **kwargs: Any) -> Column:
    return Column(key, title, title, u.text, width, frozenset(kinds), left=True, **kwargs)


def roof(bound: object) -> str:
    """``memory (dram)`` -> ``DRAM``, ``compute (tensor)`` -> ``tensor``: the limiting roof;
    ``compute (tensor) by use`` (read from utilisations) -> ``tensor use``."""
    text = str(bound)
    if "(" not in text:
        return text
    inner = text[text.index("(") + 1 : text.rindex(")")]
    short = inner.upper() if text.startswith("memory") else inner
    return f"{short} use" if text.endswith(BY_USE) else short


# FLOP/s and intensity are lower bounds where a precision was not measured: ≥ before them
_FLOPS_BOUND: dict[str, Any] = {"mark": u.AT_LEAST, "complete_key": FLOPS_COMPLETE}


def _count8(v: int | None) -> str:
    return u.count(v, 8)


COLUMNS: tuple[Column, ...] = (
    Column("launch_id", "ID", "ID", str, 8, frozenset((LAUNCH,))),
    _text("name", "group", 24, (GROUP,), views=frozenset((PANE,))),
    _text("name", "group", 26, (NSYS,), views=frozenset((PANE,))),
    _text("kernel", "kernel", 36, (LAUNCH,)),
    _q(LAUNCHES, u.count, 6, (GROUP,), exact=u.exact),
    _q(LAUNCHES, _count8, 8, (NSYS,), exact=u.exact),
    _q(TIME_S, u.time, 9, (GROUP, NSYS, LAUNCH)),
    _q(TIME_PCT, u.share, 6, (GROUP, NSYS)),
    *(_q(k, u.time, 9, (NSYS,)) for k in (TIME_AVG_S, TIME_MED_S, TIME_MIN_S, TIME_MAX_S)),
    _q(FLOP_PER_S, u.rate, 13, (GROUP, LAUNCH), **_FLOPS_BOUND),
    _q(ai_key("dram"), u.num, 8, (GROUP, LAUNCH), **_FLOPS_BOUND),
    _q(ai_key("l2"), u.num, 8, (GROUP,), (TABLE, MARKDOWN), **_FLOPS_BOUND),
    _q(BOUND, u.text, 15, (GROUP,), (PANE, MARKDOWN), left=True, short=roof),
    Column(BOUND, "roof", "roof", roof, 10, frozenset((GROUP,)), frozenset((TABLE,)), left=True),
    _q(EFFICIENCY, u.frac, 5, (GROUP, LAUNCH), mark=u.AT_LEAST),
    *(_q(k, u.frac, w, (LAUNCH,)) for k, w in zip(UTIL_EFF, (6, 5, 5), strict=True)),
    _q(HEADROOM_S, u.time, 9, (GROUP,), mark=u.AT_MOST),
    _text("grid_size", "grid", 14, (LAUNCH,)),
    _text("block_size", "block", 12, (LAUNCH,)),
    _q(TIME_PCT, u.share, 7, (JOINED,), nsys=True),
    _q(TIME_S, u.time, 9, (JOINED,), (PANE,), nsys=True),
    _q(FLOP_PER_S, u.rate, 13, (JOINED,), nsys=True),
)


def column_set(kind: str, view: str) -> tuple[Column, ...]:
    """The columns of ``kind`` rows in ``view``, in registry order."""
    return tuple(c for c in COLUMNS if kind in c.kinds and view in c.views)


def by_keys(kind: str, keys: Iterable[str]) -> tuple[Column, ...]:
    """The ``kind`` column of each key, in the order of ``keys`` (a pager's tuple order)."""
    found = {c.key: c for c in COLUMNS if kind in c.kinds}
    return tuple(found[k] for k in keys)


def value(row: Mapping[str, Any], key: str) -> Any:
    """A column's value in a row dict: ``ai_dram`` from ``row["ai"]["dram"]``,
    ``nsys.time_pct`` from the joined ``row["nsys"]`` (None when the row has no partner)."""
    if key.startswith(NSYS_KEY):
        return (row.get("nsys") or {}).get(key.removeprefix(NSYS_KEY))
    if key.startswith(f"{AI}_") and isinstance(row.get(AI), Mapping):
        return row[AI][key.removeprefix(f"{AI}_")]
    return row.get(key)


# -- the pane's layout at the terminal's width ------------------------------------------------
NAME_MIN = 16  # a name column narrower than this says nothing
NAME_WANT = 40  # full-length cells (``compute (tensor)``) while the names get this much
PANE_KEEP = (TIME_S, TIME_PCT, BOUND, EFFICIENCY)  # in sight at 80 columns, beside the names


@dataclass(frozen=True)
class Layout:
    """Columns in the order shown with each one's width; the name column (first) is fixed
    when scrolling right; ``narrow``: cells in their short form."""

    columns: tuple[Column, ...]
    widths: tuple[int, ...]
    narrow: bool


def fit(
    columns: tuple[Column, ...],
    rows: list[Mapping[str, Any]],
    width: int,
    pad: int = 2,
    keep: tuple[str, ...] = PANE_KEEP,
) -> Layout:
    """Lay ``columns`` (the name first) out in ``width`` terminal columns, each cell taking
    ``pad`` more: numbers as wide as their widest cell (never cut), the name column the width
    left over (up to its longest name). When that leaves the names under NAME_WANT the cells
    take their short forms; when it leaves them under NAME_MIN, the ``keep`` columns move up
    beside the names and the others follow, reached by scrolling right."""
    name, others = columns[0], columns[1:]
    longest = max([len(name.title), *(len(u.text(value(r, name.key))) for r in rows)])

    def need(c: Column, narrow: bool) -> int:
        cells = (len(c.cell(r, narrow=narrow)) for r in rows)
        return max([len(c.title), *cells])

    for narrow in (False, True):
        widths = [need(c, narrow) for c in others]
        room = width - pad - sum(w + pad for w in widths)
        if room >= min(longest, NAME_WANT if not narrow else NAME_MIN):
            return Layout(columns, (min(longest, room), *widths), narrow)
    first = [c for c in others if c.key in keep]
    order = (name, *first, *(c for c in others if c not in first))
    widths = [need(c, True) for c in order[1:]]
    room = width - pad - sum(need(c, True) + pad for c in first)
    return Layout(order, (max(NAME_MIN, min(longest, room)), *widths), True)
