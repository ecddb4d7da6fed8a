"""Write what a view shows to a file: a table as CSV or Markdown, a chart as text."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from roofscope.errors import RoofscopeError


def write_table(path: str | Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Path:
    """``.md`` writes a Markdown table, anything else CSV."""
    target = Path(path).expanduser()
    try:
        if target.suffix.lower() == ".md":
            lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
            target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        else:
            with target.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(header)
                writer.writerows(rows)
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
