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
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region
from textual.strip import Strip
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


# DataTable's caches of rendered rows, cells and lines: what depends on the table's styles
_STYLED_CACHES = ("_row_render_cache", "_cell_render_cache", "_line_cache")


class PlainTable(DataTable):
    """A ``DataTable`` whose ``str`` cells are shown verbatim. A cell wider than its column
    widens the column, so a number is never cut (``1,000,000`` read ``1,000,``); only the
    ``squeeze`` columns (names) are cut, with an ellipsis.

    It also keeps its rendered cells where DataTable drops them for nothing: DataTable renders
    every cell again (through Rich, ~0.3 ms each) after any Resize and any style update, and
    Textual sends a Resize to each widget shown again and a style update on each focus change,
    so a pane switch, Enter, Esc and ``/`` re-rendered the whole table (bench/tui.py,
    docs/decisions.md). Here a Resize of the same width keeps the cells, and the rendered cells
    are kept per look (the table's styles: focused, blurred, a theme), so going back to a look
    seen before redraws from the cache.
    """

    def __init__(self, *args: Any, squeeze: Iterable[str] = (), **kwargs: Any):
        self._width_seen: int | None = None
        self._looks: tuple[Any, ...] | None = None  # the styles the caches were rendered in
        self._kept: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # other looks → their caches
        super().__init__(*args, **kwargs)
        self.squeeze = set(squeeze)

    def _on_resize(self, event: events.Resize) -> None:
        """A cell depends on its column's width, not on the table's height: only a new width
        lets DataTable's handler (which voids every rendered cell) run."""
        if event.size.width == self._width_seen:
            event.prevent_default()
        self._width_seen = event.size.width

    def notify_style_update(self) -> None:
        """Drop what is derived from the styles, not the rendered cells: render_lines puts the
        cells rendered under the new looks in place."""
        super(DataTable, self).notify_style_update()  # the widget's own style caches
        self._styles_cache.clear()
        self._get_styles_to_render_cell.cache_clear()
        self.refresh()

    def _clear_caches(self) -> None:
        """Content, cursor type or fixed columns changed: every kept set is void too."""
        self._kept.clear()
        super()._clear_caches()

    def render_lines(self, crop: Region) -> list[Strip]:
        looks = (
            self.app.theme,
            self.app.ansi_color,
            self.rich_style,
            *(self.get_component_rich_style(c) for c in sorted(self.COMPONENT_CLASSES)),
        )
        if looks != self._looks:
            # keep the cells rendered under the old looks (focused, say) and take up those
            # rendered under the new ones, if the table was drawn so before (blurred)
            if self._looks is not None:
                self._kept[self._looks] = tuple(getattr(self, c) for c in _STYLED_CACHES)
                while len(self._kept) > 4:
                    self._kept.pop(next(iter(self._kept)))
            kept = self._kept.pop(looks, None)
            for name, cache in zip(_STYLED_CACHES, kept or (), strict=False):
                setattr(self, name, cache)
            if kept is None:
                for name in _STYLED_CACHES:
                    setattr(self, name, LRUCache(getattr(self, name).maxsize))
            self._get_styles_to_render_cell.cache_clear()  # keyed by neither
            self._looks = looks
        return super().render_lines(crop)

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
