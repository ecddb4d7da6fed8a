"""A table over a million rows: pages are read from DuckDB on demand, in thread workers.

Textual's DataTable measures every cell on the event loop and froze for 8.8 s at 100k rows
(shared/reference/engineering.md §2.1), so this is a Line-API ScrollView in the manner of
toolong's LogLines: ``render_line`` reads a page cache; a missing page draws a placeholder and
asks a worker for it, and the worker's result refreshes the view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from roofscope.present.text import shown
from roofscope.present.units import cut

PAGE = 128


@dataclass(frozen=True)
class Column:
    title: str
    width: int
    fmt: Callable[[Any], str] = str
    right: bool = True


class VirtualTable(ScrollView, can_focus=True):
    """Rows come from ``fetch(start, size)``; ``count`` of them in all. Row 0 of the view is
    the header, pinned while scrolling; the first ``fixed`` columns (the names) stay put when
    scrolling right."""

    DEFAULT_CSS = """
    VirtualTable { height: 1fr; }
    VirtualTable > .virtual-table--header { text-style: bold; background: $panel; }
    VirtualTable > .virtual-table--cursor { background: $accent 60%; }
    VirtualTable:focus > .virtual-table--cursor { background: $accent; }
    """
    COMPONENT_CLASSES = {"virtual-table--header", "virtual-table--cursor"}
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "Top", show=False),
        Binding("end", "jump(-1)", "Bottom", show=False),
        Binding("enter", "select", "Open", show=False),
    ]

    cursor = reactive(0)

    class Highlighted(Message):
        """The cursor is on ``row`` (None while its page is loading)."""

        def __init__(self, table: VirtualTable, row: tuple | None):
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> VirtualTable:
            return self.table

    class Selected(Highlighted):
        """Enter on ``row``."""

    def __init__(self, columns: Sequence[Column], fixed: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.columns = list(columns)
        self.fixed = fixed
        self.count = 0
        self._fetch: Callable[[int, int], list[tuple]] | None = None
        self._pages: dict[int, list[tuple]] = {}
        self._pending: set[int] = set()
        self._version = 0
        # drawn lines by (row, loaded, under the cursor, scroll, width, source, columns, styles):
        # a cursor move redraws two rows, a page arriving the rows it fills, not all of them
        self._strips: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._columns_version = 0
        self._styles: tuple[Style, Style, Style] | None = None  # for the frame being drawn

    # -- data ------------------------------------------------------------------------------
    def set_source(
        self,
        fetch: Callable[[int, int], list[tuple]],
        count: int,
        first_page: list[tuple] | None = None,
    ) -> None:
        """Show a new row source (a new filter or sort): clears the cache, keeps nothing.
        ``first_page``: rows 0…PAGE-1 read with the source, so that the first screen needs no
        second trip to a worker (and shows no "…" row while it is on its way)."""
        self._version += 1
        self._fetch = fetch
        self.count = count
        self._pages.clear()
        self._pending.clear()
        if first_page is not None:
            self._pages[0] = first_page
            self._fit(first_page)
        self._resize_virtual()
        self.cursor = 0
        self.scroll_to(0, 0, animate=False)
        self.refresh()
        self._announce()

    def set_columns(self, columns: Sequence[Column]) -> None:
        """New column widths (the terminal was resized); the rows stay."""
        self.columns = list(columns)
        self._columns_version += 1
        for page in self._pages.values():
            self._fit(page)
        self._resize_virtual()
        self.refresh()

    def _resize_virtual(self) -> None:
        width = sum(c.width + 1 for c in self.columns)
        self.virtual_size = Size(width, self.count + 1)

    def row(self, index: int) -> tuple | None:
        page = self._pages.get(index // PAGE)
        if page is None or index % PAGE >= len(page):
            return None
        return page[index % PAGE]

    def _request(self, page: int) -> None:
        if page in self._pending or self._fetch is None:
            return
        self._pending.add(page)
        self._load(page, self._version, self._fetch)

    @work(thread=True, group="virtual-table-pages")
    def _load(self, page: int, version: int, fetch: Callable[[int, int], list[tuple]]) -> None:
        rows = fetch(page * PAGE, PAGE)
        self.app.call_from_thread(self._loaded, page, version, rows)

    def _loaded(self, page: int, version: int, rows: list[tuple]) -> None:
        if version != self._version:
            return
        self._pages[page] = rows
        self._pending.discard(page)
        self._fit(rows)
        if len(self._pages) > 64:  # bounded memory whatever the row count
            far = sorted(self._pages, key=lambda p: abs(p - self.cursor // PAGE))[-1]
            self._pages.pop(far, None)
        self.refresh()
        if page == self.cursor // PAGE:
            self._announce()

    def _fit(self, rows: list[tuple]) -> None:
        """Widen a number column to its widest cell: a number is never cut to a prefix
        (only the left-aligned text columns are cut, with an ellipsis)."""
        wider = False
        for i, col in enumerate(self.columns):
            if not col.right:
                continue
            need = max((len(shown(col.fmt(r[i]))) for r in rows if i < len(r)), default=0)
            if need > col.width:
                self.columns[i] = replace(col, width=need)
                wider = True
        if wider:
            self._columns_version += 1
            self._resize_virtual()

    # -- drawing ---------------------------------------------------------------------------
    def _cells(self, values: Sequence[str]) -> tuple[str, str]:
        """The fixed columns' text (with the space after them) and the scrolled columns'."""
        parts = []
        for col, text in zip(self.columns, values, strict=False):
            text = cut(shown(text), col.width)
            parts.append(text.rjust(col.width) if col.right else text.ljust(col.width))
        fixed = " ".join(parts[: self.fixed])
        return (fixed + " " if fixed else ""), " ".join(parts[self.fixed :])

    def render_lines(self, crop: Region) -> list[Strip]:
        """The styles once a frame: ``rich_style`` walks the ancestors (~0.1 ms a line)."""
        base = self.rich_style
        cursor = base + self.get_component_rich_style("virtual-table--cursor")
        self._styles = (base, cursor, self.get_component_rich_style("virtual-table--header"))
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y - 1
        if y > 0 and index >= self.count:
            return Strip.blank(width, self._styles[0] if self._styles else self.rich_style)
        row = self.row(index) if y > 0 else None
        key = (
            -1 if y == 0 else index,
            row is None,
            y > 0 and index == self.cursor,
            scroll_x,
            width,
            self._version,
            self._columns_version,
            self._styles,
        )
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._draw_line(y, index, row, width, scroll_x)
        if y > 0 and row is None:
            self._request(index // PAGE)
        return strip

    def _draw_line(self, y: int, index: int, row: tuple | None, width: int, scroll_x: int) -> Strip:
        base, cursor, header = self._styles or (self.rich_style,) * 3
        if y == 0:
            text = self._cells([c.title for c in self.columns])
            style = header
        else:
            if row is None:
                text = self._cells(["…"] + [""] * (len(self.columns) - 1))
            else:
                text = self._cells([c.fmt(v) for c, v in zip(self.columns, row, strict=False)])
            style = cursor if index == self.cursor else base
        fixed, rest = text
        # the scrolled part moves under the fixed one: scroll_x counts from its first column
        text = (fixed + rest[scroll_x : scroll_x + max(width - len(fixed), 0)])[:width]
        text = text.ljust(width)
        return Strip([Segment(text, style or Style())], width)

    # -- moving ----------------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        visible = self.size.height - 1
        top = int(self.scroll_y)
        if new < top:
            self.scroll_to(y=new, animate=False)
        elif visible > 0 and new >= top + visible:
            self.scroll_to(y=new - visible + 1, animate=False)
        self.refresh()
        self._announce()

    def _announce(self) -> None:
        self.post_message(self.Highlighted(self, self.row(self.cursor) if self.count else None))

    def action_cursor(self, delta: int) -> None:
        if self.count:
            self.cursor = max(0, min(self.count - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        if self.count:
            self.cursor = self.count - 1 if where < 0 else 0

    def action_select(self) -> None:
        row = self.row(self.cursor)
        if row is not None:
            self.post_message(self.Selected(self, row))
