"""Write what a view shows to a file: a table as CSV or Markdown, a chart as text."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from roofscope.errors import RoofscopeError


def table_text(header: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> str:
    """A table as ``md`` (Markdown) or ``csv`` text."""
    if fmt == "md":
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def rounded(value: float) -> float:
    """``value`` to 15 significant digits, all a double holds for certain: a time summed from
    integer nanoseconds reads ``0.000885088``, not the sum's ``0.0008850879999999999``.
    (JSON keeps every bit: a program reads it, and epoch times need 16 digits.)"""
    return float(f"{value:.15g}")


def datum(value: object) -> str:
    """A value as a data file writes it: a number in its base unit (seconds, FLOP/s, a 0..1
    fraction) to 15 significant digits, all a double holds for certain (``0.000885088``, not
    the sum's noise ``0.0008850879999999999``), empty for unknown, text as it is; never
    ``885 µs``."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(rounded(value)) if value == value else ""
    return str(value)


def dicts_table(rows: Sequence[dict[str, object]]) -> tuple[list[str], list[list[str]]]:
    """Rows of dicts as a header (keys in order of first appearance) and data cells."""
    fields = list(dict.fromkeys(k for r in rows for k in r))
    return fields, [[datum(r.get(k)) for k in fields] for r in rows]


def dicts_csv(rows: Sequence[dict[str, object]]) -> str:
    """Rows of dicts as CSV, columns in order of first appearance (empty text for no rows)."""
    buffer = io.StringIO()
    if rows:
        fields = list(dict.fromkeys(k for r in rows for k in r))
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(fields)
        writer.writerows([datum(r.get(k)) for k in fields] for r in rows)
    return buffer.getvalue()


def write_table(path: str | Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Path:
    """``.md`` writes a Markdown table, anything else CSV."""
    target = Path(path).expanduser()
    fmt = "md" if target.suffix.lower() == ".md" else "csv"
    try:
        target.write_text(table_text(header, rows, fmt), encoding="utf-8", newline="")
    except OSError as exc:
        raise RoofscopeError(f"cannot write {target} ({exc.strerror})", path=str(target)) from exc
    return target


def write_text(path: str | Path, text: str) -> Path:
    target = Path(path).expanduser()
    try:
        target.write_text(text.rstrip() + "\n", encoding="utf-8")
    except OSError as exc:
        raise RoofscopeError(f"cannot write {target} ({exc.strerror})", path=str(target)) from exc
    return target
