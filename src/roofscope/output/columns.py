"""Tables described as (title, cell function) columns, in rich, Markdown and flat CSV: those
of cost, mig and the profiling commands. The row columns of ``roofscope report`` and the
Kernels pane are records of one registry instead (present/columns.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich import box
from rich.table import Table

from roofscope.output.export import dicts_csv, table_text
from roofscope.present.text import plain

CellColumn = tuple[str, Callable[[dict[str, Any]], str]]


def column_table(
    columns: tuple[CellColumn, ...],
    rows: list[dict[str, Any]],
    left: set[str],
    squeeze: tuple[str, ...] = ("offer", "GPU"),
) -> Table:
    """Numbers keep their full width; long text (the ``squeeze`` columns) is cut with an
    ellipsis."""
    texts = [[f(r) for _, f in columns] for r in rows]
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 0))
    for i, (name, _) in enumerate(columns):
        squeezable = name in squeeze
        table.add_column(
            name,
            justify="left" if name in left else "right",
            no_wrap=True,
            overflow="ellipsis",
            min_width=None if squeezable else max([len(name), *(len(t[i]) for t in texts)]),
            max_width=28 if squeezable else None,
        )
    for t in texts:
        table.add_row(*map(plain, t))
    return table


def column_markdown(columns: tuple[CellColumn, ...], rows: list[dict[str, Any]]) -> list[str]:
    header = [name for name, _ in columns]
    return table_text(header, [[f(r) for _, f in columns] for r in rows], "md").splitlines()


def flat_csv(rows: list[dict[str, Any]]) -> str:
    flat = []
    for r in rows:
        item = {k: v for k, v in r.items() if not isinstance(v, dict)}
        for k, v in r.items():
            if isinstance(v, dict):
                item.update({f"{k}_{ik}": iv for ik, iv in v.items()})
        flat.append(item)
    return dicts_csv(flat)
