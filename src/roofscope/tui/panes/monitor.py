"""Monitor pane: a card per GPU (live NVML, followed recordings, or a recording in the store),
the processes using them, and the whole session's history to scroll back in.

Sampling runs in a thread worker on a self-rescheduling timer, so a slow NVML call delays the
next tick instead of piling ticks up; samples keep coming while another pane is shown, and only
the visible pane redraws.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Static

from roofscope.charts.gpu_cards import LABEL, VALUE, axis_line, render_cards
from roofscope.charts.node_roofline import render_node_roofline
from roofscope.errors import RoofscopeError
from roofscope.monitor.source import GpuSource
from roofscope.telemetry.history import SeriesHistory
from roofscope.telemetry.sample import GpuSample, ProcessInfo, Reading
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.session import Session

INTERVALS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
ZOOMS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
PROCESS_ROWS = 5
KEYS = "f/s faster/slower · +/- zoom · ←/→ scroll back · Home start · End live"


class Lines(Widget):
    """Pre-rendered lines drawn through Textual's line API: a new frame costs one Strip per
    line, with no layout pass unless the line count changes (Static.update re-lays out the
    screen and re-wraps Rich text every tick)."""

    DEFAULT_CSS = "Lines { height: auto; }"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.lines: list[str] = []
        self._style: Style | None = None

    def show(self, lines: list[str]) -> None:
        relayout = len(lines) != len(self.lines)
        self.lines = lines
        self._style = self.rich_style  # resolving CSS costs more than building the line
        self.refresh(layout=relayout)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return len(self.lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self._style or self.rich_style
        if y >= len(self.lines):
            return Strip.blank(width, style)
        return Strip([Segment(self.lines[y], style)]).adjust_cell_length(width, style)


def _cell(value: float | None) -> int | None:
    """A value's place on the roofline's log axes, to 1/40 decade (0 and None apart)."""
    if value is None or value <= 0:
        return None if value is None else -(10**9)
    return round(40 * math.log10(value))


def _nearest(choices: tuple[float, ...], value: float) -> float:
    return min(choices, key=lambda c: abs(c - value))


class MonitorPane(Pane, can_focus=True):
    KEY = "monitor"
    TITLE = "Monitor"
    HINT = "GPUs"
    BINDINGS = [
        Binding(
            "f,right_square_bracket",
            "interval(-1)",
            "Faster",
            tooltip="sample faster: 0.1 s to 10 s (live NVML only)",
        ),
        Binding("s,left_square_bracket", "interval(1)", "Slower", tooltip="sample slower"),
        Binding("plus,equals_sign", "zoom(-1)", "Zoom in", tooltip="zoom the history in"),
        Binding("minus", "zoom(1)", "Zoom out", tooltip="zoom out: more seconds per column"),
        Binding("left", "scroll_history(-0.25)", "Back", show=False, tooltip="scroll back"),
        Binding("right", "scroll_history(0.25)", "Forward", show=False, tooltip="scroll forward"),
        Binding("home", "history_start", "Start", show=False, tooltip="the session's start"),
        Binding("end", "live", "Live", show=False, tooltip="back to live"),
    ]
    DEFAULT_CSS = """
    MonitorPane #monitor-header { height: auto; }
    MonitorPane #monitor-cards { height: 1fr; scrollbar-size-vertical: 1; }
    MonitorPane #monitor-procs { height: auto; }
    """

    def __init__(
        self,
        source_factory: Callable[[], GpuSource],
        *,
        state: ViewState | None = None,
        interval: float = 1.0,
        autostart: bool = True,
        clock: Callable[[], float] = time.time,
        history_capacity: int = 3600,
        **kwargs: Any,
    ):
        super().__init__(state or ViewState(), **kwargs)
        self.source_factory = source_factory
        self.source: GpuSource | None = None
        self.error: str | None = None
        self.interval = _nearest(INTERVALS, interval)
        self.autostart = autostart
        self.clock = clock
        self.history_capacity = history_capacity
        self.histories: dict[tuple[str, int], SeriesHistory] = {}
        self.latest: dict[tuple[str, int], GpuSample] = {}
        self.processes: list[ProcessInfo] = []
        self.notes: list[str] = []
        self.seconds_per_column: float | None = None
        self.end: float | None = None  # None: follow the newest sample
        self.started = False
        self._timer: Any = None
        self._header = ""
        self._shown_processes: list[ProcessInfo] | None = None
        self._roofline_key: tuple | None = None
        self._roofline_lines: list[str] = []
        self._roofline_at = -1e18

    def compose(self) -> ComposeResult:
        yield PlainStatic("starting the GPU source…", id="monitor-header")
        with VerticalScroll(id="monitor-cards"):
            yield Lines(id="monitor-cards-text")
        table: DataTable = PlainTable(
            id="monitor-procs", squeeze=("process",), cursor_type="row", zebra_stripes=True
        )
        table.add_columns("GPU", "PID", "process", "GPU memory")
        yield table

    @classmethod
    def create(cls, state: ViewState) -> Pane:
        def source() -> GpuSource:
            """Recordings opened in this session, else this machine's GPUs through NVML."""
            stored = state.session.recording_source() if state.session else None
            if stored is not None:
                return stored
            from roofscope.monitor.nvml import NvmlSource

            return NvmlSource()

        return cls(source, state=state, autostart=False)

    @classmethod
    def start_here(cls, session: Session | None) -> bool:
        return True  # a session of recordings only: nothing for the kernel panes

    def shown(self) -> None:
        self.start()
        self.redraw()

    # -- sampling ------------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.autostart:
            self.start()

    def start(self) -> None:
        """Open the source (in a thread: NVML's init can take a second) and start ticking."""
        if not self.started:
            self.started = True
            self._open_source()

    @work(thread=True, exclusive=True, group="monitor-open")
    def _open_source(self) -> None:
        try:
            source = self.source_factory()
        except RoofscopeError as exc:
            self.app.call_from_thread(self._source_failed, exc.one_line())
            return
        self.app.call_from_thread(self._source_opened, source)

    def _source_failed(self, message: str) -> None:
        self.error = message
        self.redraw()

    def _source_opened(self, source: GpuSource) -> None:
        self.use_source(source)

    def use_source(self, source: GpuSource, poll: bool = True) -> None:
        """Start sampling ``source``; tests pass ``poll=False`` and feed :meth:`ingest`."""
        self.started = True
        self.source = source
        if poll:
            self._poll()

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.interval, self._poll)

    @work(thread=True, exclusive=True, group="monitor-poll")
    def _poll(self) -> None:
        source = self.source
        if source is None:
            return
        try:
            reading = source.read()
        except RoofscopeError as exc:
            self.app.call_from_thread(self._source_failed, exc.one_line())
            return
        self.app.call_from_thread(self.ingest, reading, True)

    def ingest(self, reading: Reading, schedule: bool = False) -> None:
        """Add one tick's samples to the history and redraw (tests call this directly)."""
        for s in reading.samples:
            history = self.histories.get(s.key)
            if history is None:
                history = self.histories[s.key] = SeriesHistory(self.history_capacity)
            history.add(s.ts, s.series_values())
            latest = self.latest.get(s.key)
            if latest is None or s.ts >= latest.ts:
                self.latest[s.key] = s
        if reading.samples or reading.processes:
            self.processes = reading.processes
        self.notes = reading.notes
        if self.seconds_per_column is None and self.latest:
            self.seconds_per_column = self._initial_zoom()
        if self.display and self.is_attached:
            self.redraw()
        if schedule:
            self._schedule()

    def _initial_zoom(self) -> float:
        """Live: a column per sample. A recording: the smallest zoom that shows all of it."""
        if self.source is None or self.source.live:
            return _nearest(ZOOMS, self.interval)
        first, last = self._span()
        columns = self._columns()
        added = max(h.added for h in self.histories.values())
        step = (last - first) / (added - 1) if added > 1 else 0.0
        for zoom in ZOOMS:  # no finer than the recording's own step: that draws gaps
            if zoom * columns >= last - first and zoom >= step * 0.999:
                return zoom
        return ZOOMS[-1]

    def _span(self) -> tuple[float, float]:
        firsts = [h.first_ts for h in self.histories.values() if h.first_ts is not None]
        lasts = [h.last_ts for h in self.histories.values() if h.last_ts is not None]
        return (min(firsts, default=0.0), max(lasts, default=0.0))

    def _columns(self) -> int:
        width = self.query_one("#monitor-cards").size.width or self.size.width or 80
        return max(4, width - 1 - LABEL - VALUE - 1)

    def on_unmount(self) -> None:
        if self.source is not None:
            self.source.close()

    # -- drawing -------------------------------------------------------------------------------
    @property
    def live(self) -> bool:
        return self.source is None or self.source.live

    def window_end(self) -> float:
        newest = self._span()[1]
        return newest + 1e-9 if self.end is None else self.end

    def header_text(self) -> str:
        if self.error:
            return f"{self.error}\n{KEYS}"
        if not self.latest:
            label = self.source.label if self.source else "opening the GPU source"
            return f"{label} · waiting for the first sample…"
        label = self.source.label if self.source else ""
        spc = self.seconds_per_column or self.interval
        gpus = len(self.latest)
        parts = [label, f"{gpus} GPU{'s' if gpus != 1 else ''}"]
        if self.live:
            parts.append(f"every {self.interval:g} s")
        parts.append(f"{spc:g} s/column")
        if self.end is not None:
            parts.append("scrolled back")
        else:
            parts.append("live" if self.live else "newest")
        lines = [" · ".join(parts)]
        gpm = sorted({s.gpm_status for s in self.latest.values() if s.gpm_status})
        lines += [f"GPM: {g}" for g in gpm if g != "warming up"]
        lines += sorted({s.est_status for s in self.latest.values() if s.est_status})
        lines += self.notes[:3]
        lines.append(KEYS)
        return "\n".join(lines)

    def redraw(self) -> None:
        header = self.header_text()
        if header != self._header:  # unchanged text: no layout pass
            self._header = header
            self.query_one("#monitor-header", Static).update(header)
        cards = self.query_one("#monitor-cards")
        text = self.query_one("#monitor-cards-text", Lines)
        if not self.latest:
            text.show([])
            self._show_processes()
            return
        width = max(20, (cards.size.width or 80) - 1)  # the scrollbar's column
        height = max(2, (cards.size.height or 16) - 1)
        end = self.window_end()
        spc = self.seconds_per_column or self.interval
        several_hosts = len({host for host, _ in self.latest}) > 1 or not self.live
        entries = [
            (
                f"{host}:{gpu}" if several_hosts else f"GPU{gpu}",
                self.latest[key],
                self.histories[key],
            )
            for key in sorted(self.latest)
            for host, gpu in [key]
        ]
        lines = render_cards(
            entries,
            end=end,
            seconds_per_column=spc,
            width=width,
            height=height,
            ascii_only=self.state.ascii_only,
            live=self.end is None and self.live,
        )
        right = (
            "now"
            if self.end is None and self.live
            else time.strftime("%H:%M:%S", time.localtime(end))
        )
        lines.append(axis_line(spc, width, right))
        lines += self._roofline(entries, width)
        text.show(lines)
        self._show_processes()

    def _roofline(
        self, entries: list[tuple[str, GpuSample, SeriesHistory]], width: int
    ) -> list[str]:
        """The live roofline under the cards. plotext takes ~12 ms for eight GPUs on a slow
        core, so it is drawn again only when a point moved by a visible step (1/40 decade), and
        then at most once a second unless the size or the set of GPUs with a point changed: a
        steady load costs nothing per tick."""
        cards = [(label, sample) for label, sample, _ in entries]
        points = tuple((_cell(s.est_flops), _cell(s.est_dram_bps)) for _, s in cards)
        drawn = tuple(
            None not in p and min(p) > -(10**9) for p in points
        )  # which GPUs have a point
        frame = (width, self.state.ascii_only, drawn)
        old_frame, old_points = self._roofline_key or (None, None)
        now = time.monotonic()
        if frame != old_frame or (points != old_points and now - self._roofline_at >= 1.0):
            self._roofline_key, self._roofline_at = (frame, points), now
            chart = render_node_roofline(cards, width, ascii_only=self.state.ascii_only)
            self._roofline_lines = ["", *chart] if chart else []
        return self._roofline_lines

    def _show_processes(self) -> None:
        rows = sorted(self.processes, key=lambda p: (p.host, p.gpu, -(p.mem_bytes or 0)))
        if rows == self._shown_processes:
            return
        self._shown_processes = rows
        table = self.query_one("#monitor-procs", DataTable)
        table.clear()
        table.display = bool(rows)
        # Leave the cards most of a small terminal: header + a few rows at 80×24.
        table.styles.max_height = max(3, self.app.size.height // 6)
        several_hosts = len({p.host for p in rows}) > 1
        for p in rows:
            mem = "—" if p.mem_bytes is None else f"{p.mem_bytes / 2**20:,.0f} MiB"
            gpu = f"{p.host}:{p.gpu}" if several_hosts else str(p.gpu)
            table.add_row(gpu, str(p.pid), p.name, mem)

    # -- actions -------------------------------------------------------------------------------
    def action_interval(self, step: int) -> None:
        if not self.live and self.source is not None:
            self.app.notify("a recording is replayed at its own rate", severity="warning")
            return
        i = INTERVALS.index(self.interval)
        self.interval = INTERVALS[min(max(i + step, 0), len(INTERVALS) - 1)]
        if self.seconds_per_column is not None and self.seconds_per_column < self.interval:
            self.seconds_per_column = _nearest(ZOOMS, self.interval)
        if self.source is not None and self.error is None:
            self._schedule()
        self.redraw()

    def action_zoom(self, step: int) -> None:
        current = self.seconds_per_column or self.interval
        i = ZOOMS.index(_nearest(ZOOMS, current))
        self.seconds_per_column = ZOOMS[min(max(i + step, 0), len(ZOOMS) - 1)]
        self.redraw()

    def action_scroll_history(self, fraction: float) -> None:
        if not self.latest:
            return
        first, last = self._span()
        span = self._columns() * (self.seconds_per_column or self.interval)
        end = self.window_end() + fraction * span
        if end >= last:
            self.end = None
        else:
            self.end = max(end, first + span / 4)
        self.redraw()

    def action_history_start(self) -> None:
        if self.latest:
            first, last = self._span()
            span = self._columns() * (self.seconds_per_column or self.interval)
            self.end = None if first + span >= last else first + span
            self.redraw()

    def action_live(self) -> None:
        self.end = None
        self.redraw()

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        """Export: the newest sample of every GPU, one row each."""
        header = [
            "host",
            "gpu",
            *[k for k in GpuSample.__dataclass_fields__ if k not in ("host", "gpu")],
        ]
        rows = []
        for key in sorted(self.latest):
            d = self.latest[key].as_dict()
            rows.append(["" if d.get(h) is None else str(d.get(h)) for h in header])
        return header, rows
