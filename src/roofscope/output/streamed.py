"""A report whose rows are the size of the trace (``report --by launch``), written as they come.

A million launches as dicts took 10.6 GB and 183 s to print as JSON (docs/performance.md,
issue 31 item 4). Here the report's document is built without its ``rows``, and each report's
rows stream from the store (``Report.iter_rows``, a batch at a time) into the text. The text
is the one ``render`` writes for the same rows: JSON is the document's JSON with each report's
row list spliced in where a marker stood, CSV and Markdown come from the same generators as
``render`` (``csv_parts``, ``markdown_lines``). A rich table of a million rows is no use on a
terminal, and rich builds it whole: past ``TABLE_MAX`` rows ``table`` asks for ``--top`` or
another format.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from typing import Any, TextIO

from roofscope.errors import RoofscopeError
from roofscope.jsonout import dumps
from roofscope.output.render import RowsOf, csv_parts, csv_row, markdown_lines
from roofscope.present.text import shown_doc

TABLE_MAX = 10_000


def write_report(
    doc: dict[str, Any],
    fmt: str,
    rows_of: RowsOf,
    empty_row: Callable[[int], dict[str, Any]],
    out: TextIO,
) -> None:
    """Write ``doc`` in ``fmt`` (json, csv, md) with each report's ``rows`` from
    ``rows_of(index, report)``; ``empty_row(index)`` is a report's row with nothing known
    (its keys and nesting), for the CSV's columns before any row is read."""
    if fmt == "json":
        _json(doc, rows_of, out)
        return
    shown = shown_doc(doc)

    def shown_rows(i: int, report: dict[str, Any]) -> Iterable[dict[str, Any]]:
        return (shown_doc(row) for row in rows_of(i, report))

    if fmt == "csv":
        # the columns of every row in order of first appearance, as render's CSV has them:
        # a report's rows share their keys and nesting, which its empty row has too
        fields: list[str] = []
        for i, report in enumerate(shown["reports"]):
            recording = report.get("recording")
            for row in recording if recording is not None else [shown_doc(empty_row(i))]:
                fields += [k for k in csv_row(report, row) if k not in fields]
        for part in csv_parts(shown, shown_rows, fields):
            out.write(part)
        return
    if fmt == "md":
        for n, line in enumerate(markdown_lines(shown, shown_rows)):
            out.write(line if n == 0 else "\n" + line)  # "\n".join, as render's Markdown
        return
    raise ValueError(f"no streamed {fmt!r}")


def refuse_long_table(rows: int, top: int | None) -> None:
    """``--format table`` of more than ``TABLE_MAX`` rows: one line saying what to use."""
    if top is None and rows > TABLE_MAX:
        raise RoofscopeError(
            f"{rows:,} launches are too many rows for a table on the terminal",
            hint="add --top N, or use --format csv, md or json for every launch",
        )


def _json(doc: dict[str, Any], rows_of: RowsOf, out: TextIO) -> None:
    """The document's JSON (``jsonout.dumps``, indent 2) with each report's rows spliced in
    where its marker stood, written row by row."""
    # where each report's rows go: a string no file can hold, unknown before this run (a
    # group or path that spelled a fixed marker would take the rows in its place)
    mark_of = ("\x00roofscope rows " + secrets.token_hex(8) + " {}\x00").format
    marked = {
        **doc,
        "reports": [{**r, "rows": mark_of(i)} for i, r in enumerate(doc["reports"])],
    }
    text = dumps(marked)
    for i, report in enumerate(doc["reports"]):
        mark = dumps(mark_of(i)).rstrip("\n")  # the marker as the JSON text spells it
        at = text.index(mark)
        line_start = text.rindex("\n", 0, at) + 1
        indent = " " * (len(text[line_start:at]) - len(text[line_start:at].lstrip(" ")))
        out.write(text[:at])
        first = True
        for row in rows_of(i, report):
            row_text = dumps(row).rstrip("\n").replace("\n", "\n" + indent + "  ")
            out.write(("[\n" if first else ",\n") + indent + "  " + row_text)
            first = False
        out.write("[]" if first else "\n" + indent + "]")
        text = text[at + len(mark) :]
    out.write(text)
