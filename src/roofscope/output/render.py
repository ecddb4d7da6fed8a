"""Render the report dict (the JSON contract, docs/json.md) in the format the user asked for.

Every format is a pure function of that dict, so the numbers in a table, a CSV and a pasted
Markdown comment are the same numbers, and JSON is the source of truth.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from roofscope.analysis.summary import flat_row
from roofscope.jsonout import dumps, finite
from roofscope.output.export import datum
from roofscope.present.columns import (
    GROUP,
    JOINED,
    MARKDOWN,
    NSYS,
    NSYS_KEY,
    TABLE,
    Column,
    column_set,
)
from roofscope.present.text import console as plain_console
from roofscope.present.text import plain, shown_doc
from roofscope.present.units import (
    AT_LEAST,
    AT_MOST,
    bounded,
    counted,
    incomplete_reason,
    num,
    pct,
    si,
)
from roofscope.quantities import (
    BYTES,
    EFFICIENCY,
    EFFICIENCY_COMPLETE,
    FLOP_PER_S,
    FLOPS,
    HEADROOM_S,
    LAUNCHES,
    ROOFS,
    TIME_MAX_S,
    TIME_MED_S,
    TIME_MIN_S,
    TIME_PCT,
    TIME_S,
    ai_key,
)

FORMATS = ("table", "json", "csv", "md")


def _rows_key(report: dict[str, Any]) -> str:
    return "groups" if report.get("by", "group") == "group" else "rows"


_clean = finite


def to_json(doc: dict[str, Any]) -> str:
    """Strict JSON (no NaN): the real strings, which JSON escapes itself."""
    return dumps(doc)


def to_csv(doc: dict[str, Any]) -> str:
    """One CSV: a ``report`` column, then the flattened rows of every report."""
    return "".join(csv_parts(doc, _listed_rows))


RowsOf = Callable[[int, dict[str, Any]], Iterable[dict[str, Any]]]


def _listed_rows(_index: int, report: dict[str, Any]) -> Iterable[dict[str, Any]]:
    return report[_rows_key(report)]


def csv_row(report: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """One row of the CSV: the report's path, then the row flattened (a recording's as is)."""
    if report.get("recording") is not None:
        return {"report": report["path"], **_clean(row)}
    return {"report": report["path"], **flat_row(_clean(row))}


def csv_parts(
    doc: dict[str, Any], rows_of: RowsOf, fields: list[str] | None = None
) -> Iterator[str]:
    """The CSV text in pieces, each report's rows from ``rows_of`` (its index, its dict): the
    rows may stream from the store (output/streamed.py). The columns are ``fields``, or those
    of every row in order of first appearance (then the rows are read before writing)."""
    rows: Iterable[dict[str, Any]] = (
        csv_row(report, row)
        for i, report in enumerate(doc["reports"])
        for row in (
            report["recording"] if report.get("recording") is not None else rows_of(i, report)
        )
    )
    if fields is None:
        rows = list(rows)
        fields = list(dict.fromkeys(k for r in rows for k in r))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    wrote_header = False
    for n, r in enumerate(rows, start=1):
        if not wrote_header:
            writer.writerow(fields)
            wrote_header = True
        writer.writerow([datum(r.get(k)) for k in fields])
        if n % 10_000 == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def is_nsys(report: dict[str, Any]) -> bool:
    return report.get("family") == "nsys"


def _columns(report: dict[str, Any], view: str) -> tuple[Column, ...]:
    """The row columns of ``report`` in ``view``: the registry the Kernels pane reads too.
    nsys reports have times only (the spread of kernel durations instead of roofline
    columns); an ncu report opened with an nsys export of the same program gets its columns."""
    if is_nsys(report):
        return column_set(NSYS, view)
    joined = column_set(JOINED, view) if report.get("nsys_join") else ()
    return column_set(GROUP, view) + joined


def _cell(column: Column, row: dict[str, Any]) -> str:
    return column.cell(row, full=True)


def speedup_text(eff: dict[str, Any]) -> str:
    """The potential speedup, ``≤ 7.15×`` when some efficiencies are lower bounds."""
    return bounded(f"{num(eff['potential_speedup'])}×", AT_MOST, eff.get(EFFICIENCY_COMPLETE))


def bound_note(eff: dict[str, Any]) -> str | None:
    """Why the efficiencies are bounds, in a line; None when they are exact."""
    if eff.get(EFFICIENCY_COMPLETE) is not False:
        return None
    part = eff["incomplete"]
    return (
        f"efficiency {AT_LEAST}, speedup {AT_MOST} (bounds) for "
        f"{counted(part[LAUNCHES], 'launch')}, "
        f"{si(part[TIME_S], 's')}: {incomplete_reason(part['missing'])}"
    )


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def config_line(doc: dict[str, Any]) -> str | None:
    """Which ``roofscope.toml`` (and user config) grouped the kernels, or None when only the
    built-in rules did: a rule file picked up from the working directory is never silent."""
    files = doc.get("config_files") or []
    return f"grouping rules from {', '.join(files)}" if files else None


def to_markdown(doc: dict[str, Any]) -> str:
    return "\n".join(markdown_lines(doc, _listed_rows))


def markdown_lines(doc: dict[str, Any], rows_of: RowsOf) -> Iterator[str]:
    """The Markdown text line by line, each report's rows from ``rows_of`` (see csv_parts)."""
    out: list[str] = []
    if line := config_line(doc):
        out.append(f"_{_md_escape(line)}_\n")
    for i, report in enumerate(doc["reports"]):
        gpu = report["gpu"]
        out.append(f"### roofscope: `{report['path']}`\n")
        if report.get("recording") is not None:
            from roofscope.output.gpu import render_summary  # recordings only: GPU samples

            out.append("GPU recording\n\n" + render_summary(report["recording"], "md"))
            continue
        out.append(
            f"GPU **{gpu['name'] or 'unknown'}** (CC {gpu['cc'] or '?'}) · "
            f"{counted(report[LAUNCHES], 'launch')} of {counted(report['kernels'], 'kernel')} · "
            f"{si(report[TIME_S], 's')} · potential speedup {speedup_text(report[EFFICIENCY])}\n"
        )
        note = bound_note(report[EFFICIENCY])
        if note:
            out.append(f"{_md_escape(note)}\n")
        name_col = report.get("by", "group")
        columns = _columns(report, MARKDOWN)
        out.append("| " + " | ".join([name_col, *(c.long_title for c in columns)]) + " |")
        out.append("|" + "---|" * (len(columns) + 1))
        yield from out
        out.clear()
        for row in rows_of(i, report):
            cells = [_md_escape(str(row["name"])), *(_md_escape(_cell(c, row)) for c in columns)]
            yield "| " + " | ".join(cells) + " |"
        out.append("")
        if report["ceilings"]:
            out.append("| ceiling | value | source |\n|---|---|---|")
            for c in report["ceilings"]:
                out.append(
                    f"| {c['name']} | {si(c['value'], c['unit'])} | {_md_escape(c['source'])} |"
                )
            out.append("")
        for w in report["warnings"]:
            out.append(f"> ⚠ {_md_escape(w)}")
        out.append("")
    yield from out


def timeline_lines(t: dict[str, Any]) -> list[str]:
    """The timeline summary in words (CLI panel, Markdown, TUI)."""
    gaps = t["idle_gaps"]
    lines = [
        f"timeline {si(t['duration_s'], 's')} · GPU busy {pct(100 * t['busy_fraction'])} · "
        f"{gaps['count']:,} idle gaps, {si(gaps['total_s'], 's')} in all, longest "
        f"{si(gaps['longest_s'], 's')} · concurrency mean {t['mean_concurrency']:.2f}, "
        f"max {t['max_concurrency']}"
    ]
    for m in t["memops"]:
        rate = m[BYTES] / m[TIME_S] if m[BYTES] and m[TIME_S] else None
        lines.append(
            f"{m['kind']}: {m['count']:,} ops, {si(m[BYTES], 'B')}, {si(m[TIME_S], 's')}"
            + (f", {si(rate, 'B/s')}" if rate else "")
        )
    return lines


def _summary_panel(report: dict[str, Any]) -> Panel:
    if is_nsys(report):
        return _nsys_panel(report)
    gpu = report["gpu"]
    f, b = report[FLOPS], report[BYTES]
    lines = Text()
    lines.append(f"{gpu['name'] or 'GPU not named in export'}", style="bold")
    lines.append(f"  CC {gpu['cc'] or '?'}  SMs {gpu['sm_count'] or '?'}\n")
    lines.append(
        f"{counted(report[LAUNCHES], 'launch')} · {counted(report['kernels'], 'kernel')} · "
        f"{si(report[TIME_S], 's')} GPU time\n"
    )
    lines.append("FLOPs  " + "  ".join(f"{k} {si(v, 'FLOP')}" for k, v in f.items()) + "\n")
    lines.append("bytes  " + "  ".join(f"{k} {si(v, 'B')}" for k, v in b.items()) + "\n")
    speed = speedup_text(report[EFFICIENCY])
    lines.append(f"potential speedup of the step (all kernels at their roof): {speed}")
    note = bound_note(report[EFFICIENCY])
    if note:
        lines.append(f"\n{note}", style="yellow")
    join = report.get("nsys_join")
    if join:
        cover = join["coverage"]
        lines.append(
            f"\nwith {join['nsys_report']}: {counted(join['paired_launches'], 'launch')} "
            "paired, ncu "
            f"kernels cover {pct(100 * cover) if cover is not None else '—'} of real GPU time\n"
            f"{join['note']}"
        )
    return Panel(lines, title=plain(report["path"]), title_align="left", box=box.ROUNDED)


def _nsys_panel(report: dict[str, Any]) -> Panel:
    gpu = report["gpu"]
    lines = Text()
    lines.append(f"{gpu['name'] or 'GPU not named in export'}", style="bold")
    lines.append(f"  CC {gpu['cc'] or '?'}  SMs {gpu['sm_count'] or '?'}\n")
    axis = {
        "nvtx-inner": " · grouped by innermost NVTX range",
        "nvtx-outer": " · grouped by outermost NVTX range",
    }.get(report.get("axis", ""), "")
    lines.append(
        f"{counted(report[LAUNCHES], 'launch')} · {counted(report['kernels'], 'kernel')} · "
        f"{si(report[TIME_S], 's')} kernel time (nsys: real timeline, not replayed){axis}"
    )
    if report.get("timeline"):
        lines.append("\n" + "\n".join(timeline_lines(report["timeline"])))
    return Panel(lines, title=plain(report["path"]), title_align="left", box=box.ROUNDED)


# Left out first when a narrow terminal cannot hold every column next to the names.
_NARROW_DROPS = (
    *(ai_key("l2"), NSYS_KEY + FLOP_PER_S, HEADROOM_S, NSYS_KEY + TIME_PCT),
    *(TIME_MAX_S, TIME_MIN_S, TIME_MED_S, ai_key("dram"), EFFICIENCY),
)
NAME_MIN = 16


def _rows_table(report: dict[str, Any], width: int | None = None) -> Table:
    """The row table; at ``width`` columns the names keep at least NAME_MIN characters and the
    least needed numbers go (the caption says which), rather than the names disappearing."""
    by = report.get("by", "group")
    rows = report[_rows_key(report)]
    columns = {c.key: c for c in _columns(report, TABLE)}
    cells = {key: [_cell(c, row) for row in rows] for key, c in columns.items()}
    dropped: list[str] = []
    if width is not None:
        widest = {k: max([len(columns[k].title), *map(len, cells[k])]) for k in cells}

        def needed() -> int:  # each column is padded by one space a side, plus the edges
            numbers = sum(widest[k] + 2 for k in widest if k not in dropped)
            return NAME_MIN + 2 + numbers + 4

        for key in _NARROW_DROPS:
            if needed() <= width:
                break
            if key in cells:
                dropped.append(key)
    caption = (
        f"not shown at this width: {', '.join(columns[k].title for k in dropped)} "
        "(a wider terminal, or --format json)"
        if dropped
        else None
    )
    table = Table(
        box=box.SIMPLE_HEAVY,
        header_style="bold",
        pad_edge=False,
        caption=caption,
        caption_justify="left",
    )
    table.add_column(by, overflow="fold", min_width=NAME_MIN, max_width=48, ratio=1)
    shown = [c for c in columns.values() if c.key not in dropped]
    for c in shown:
        table.add_column(c.title, justify="left" if c.left else "right", no_wrap=True)
    for i, row in enumerate(rows):
        table.add_row(plain(row["name"]), *(plain(cells[c.key][i]) for c in shown))
    return table


def _ceilings_table(report: dict[str, Any]) -> Table:
    """The roofs a roofline draws; per-data-type tensor roofs are listed in JSON."""
    main = [c for c in report["ceilings"] if c["name"] in ROOFS]
    extra = len(report["ceilings"]) - len(main)
    caption = f"{extra} per-data-type tensor roofs in --format json" if extra else None
    table = Table(
        title="ceilings",
        box=box.SIMPLE,
        title_justify="left",
        caption=caption,
        caption_justify="left",
    )
    table.add_column("roof")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("source", overflow="fold")
    for c in main:
        table.add_row(plain(c["name"]), si(c["value"], c["unit"]), plain(c["source"]))
    return table


def _histogram_table(report: dict[str, Any]) -> Table:
    eff = report[EFFICIENCY]
    total = sum(b[TIME_S] for b in eff["bins"]) or 1.0
    note = bound_note(eff)
    table = Table(
        title="run time by hardware efficiency",
        box=box.SIMPLE,
        title_justify="left",
        caption=f"{note} (a launch may belong in a higher bin)" if note else None,
        caption_justify="left",
    )
    for col in ("efficiency", "time", "kernels", "time × eff", ""):
        table.add_column(col, justify="right" if col else "left")
    for b in eff["bins"]:
        bar = "█" * round(30 * b[TIME_S] / total)
        table.add_row(
            f"{b['lo']:.0%}–{b['hi']:.0%}",
            si(b[TIME_S], "s"),
            str(b["kernels"]),
            bounded(si(b["time_x_efficiency_s"], "s"), AT_LEAST, b.get(EFFICIENCY_COMPLETE)),
            bar,
        )
    unknown = eff["unknown"]
    if unknown[LAUNCHES]:
        table.add_row("unknown", si(unknown[TIME_S], "s"), str(unknown["kernels"]), "—", "")
    return table


def to_table(doc: dict[str, Any], console: Console) -> None:
    if line := config_line(doc):
        console.print(Text(line, style="dim"), soft_wrap=True)
    for report in doc["reports"]:
        if report.get("recording") is not None:
            console.print(Text(f"{report['path']}: GPU recording", style="bold"))
            from roofscope.output.gpu import render_summary  # recordings only: GPU samples

            render_summary(report["recording"], "table", console)
            continue
        roofs: Any = (
            _ceilings_table(report)
            if report["ceilings"]
            else Text(
                "no ceilings: the export has no peak metrics and names no known GPU "
                "(pass --gpu NAME or --ceilings FILE)",
                style="yellow",
            )
        )
        parts = [_summary_panel(report), _rows_table(report, console.width)]
        if not is_nsys(report):
            parts += [_histogram_table(report), roofs]
        console.print(Group(*parts))
    for w in doc["warnings"]:
        console.print(Text(f"warning: {w}", style="yellow"), soft_wrap=True)


def formatted(
    doc: dict[str, Any],
    fmt: str,
    console: Console | None,
    *,
    csv: Callable[[dict[str, Any]], str],
    md: Callable[[dict[str, Any]], str],
    table: Callable[[dict[str, Any], int], Any],
) -> str:
    """The one dispatch of every headless command: text for json/csv/md; for ``table`` the
    rich renderable (built for the console's width) is printed and '' returned. Every format
    but JSON shows the strings of ``doc`` with control characters escaped."""
    if fmt == "json":
        return to_json(doc)
    doc = shown_doc(doc)
    if fmt == "csv":
        return csv(doc)
    if fmt == "md":
        return md(doc)
    console = console or plain_console(soft_wrap=False)
    console.print(table(doc, console.width))
    return ""


def render(doc: dict[str, Any], fmt: str, console: Console | None = None) -> str | None:
    """Return the text for json/csv/md; print a rich table to ``console`` for ``table``."""
    if fmt == "json":
        return to_json(doc)
    doc = shown_doc(doc)
    if fmt == "csv":
        return to_csv(doc)
    if fmt == "md":
        return to_markdown(doc)
    to_table(doc, console or plain_console())
    return None
