"""Widgets that show text from files as data: never markup, control characters visible, and
numbers never cut to a misleading prefix.

Textual reads markup in a ``Static``'s strings and in every ``str`` cell of a ``DataTable``, so
a kernel named ``[/]`` crashed the app and ``[fp32] gemm`` lost its ``[fp32]``. The panes build
their text and tables from these instead (see :mod:`roofscope.present.text`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.widgets import DataTable, Static

from roofscope.present.text import plain, shown


class PlainStatic(Static):
    """A ``Static`` whose strings are shown verbatim (Rich renderables pass as they are)."""

    def __init__(self, content: Any = "", **kwargs: Any):
        kwargs.setdefault("markup", False)
        super().__init__(
            shown(content, lines=True) if isinstance(content, str) else content, **kwargs
        )

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        text = shown(content, lines=True) if isinstance(content, str) else content
        super().update(text, layout=layout)


class PlainTable(DataTable):
    """A ``DataTable`` whose ``str`` cells are shown verbatim. A cell wider than its column
    widens the column, so a number is never cut (``1,000,000`` read ``1,000,``); only the
    ``squeeze`` columns (names) are cut, with an ellipsis."""

    def __init__(self, *args: Any, squeeze: Iterable[str] = (), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.squeeze = set(squeeze)

    def add_row(self, *cells: Any, **kwargs: Any) -> Any:
        texts = [plain(c) if isinstance(c, str) else c for c in cells]
        for column, cell in zip(self.ordered_columns, texts, strict=False):
            label = column.label.plain
            if label in self.squeeze or not isinstance(cell, Text):
                if isinstance(cell, Text):
                    cell.overflow, cell.no_wrap = "ellipsis", True
                continue
            if not column.auto_width and cell.cell_len > column.width:
                column.width = cell.cell_len
        return super().add_row(*texts, **kwargs)
