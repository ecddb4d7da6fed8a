"""Monitor pane: a card per GPU (live NVML, followed recordings, or a recording in the store),
the processes using them, and the whole session's history to scroll back in.

Sampling runs in a thread worker on a self-rescheduling timer, so a slow NVML call delays the
next tick instead of piling ticks up; samples keep coming while another pane is shown, and only
the visible pane redraws.

Following a fleet (a thousand nodes' recordings), the cards are drawn only where they are on
screen, and the follower is told to read the samples of those nodes and a screen either side
(:meth:`FollowSource.watch`); the others are laid out from what the follower knows without
reading them, and their histories are let go, so memory and CPU follow the screen, not the
fleet. A node whose recording stopped growing is flagged in its cards and in the header.
"""

from __future__ import annotations

import math
import threading
import time
from bisect import bisect_right
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

from roofscope.charts.gpu_cards import LABEL, VALUE, axis_line, card_rows, render_card, title
from roofscope.charts.node_roofline import render_node_roofline
from roofscope.errors import RoofscopeError
from roofscope.monitor.source import GpuSource
from roofscope.present.text import shown
from roofscope.present.units import ago, counted, cut
from roofscope.telemetry.history import SeriesHistory
from roofscope.telemetry.sample import GpuSample, NodeStatus, ProcessInfo, Reading
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.session import Session

INTERVALS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
ZOOMS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
PROCESS_ROWS = 5
KEYS = "f/s faster/slower · +/- zoom · ←/→ scroll back · Home start · End live"
WATCH_ALL = 16  # following this many nodes or fewer, every one is read (a small job)
FLAGGED = Style(bold=True, reverse=True)  # a stale node's card title; the text says it too


def _no(y: int) -> bool:
    return False


class Lines(Widget):
    """Lines drawn through Textual's line API, made only when a line is on screen: a new frame
    costs one Strip per visible line, with no layout pass unless the line count changes
    (Static.update re-lays out the screen and re-wraps Rich text every tick)."""

    DEFAULT_CSS = "Lines { height: auto; }"

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.count = 0
        self.line: Callable[[int], str] = str
        self.flagged: Callable[[int], bool] = _no
        self._style: Style | None = None

    def show(self, lines: list[str]) -> None:
        self.show_lines(len(lines), lines.__getitem__)

    def show_lines(
        self, count: int, line: Callable[[int], str], flagged: Callable[[int], bool] = _no
    ) -> None:
        """``count`` lines, line ``y`` being ``line(y)``, drawn in the flag style where
        ``flagged(y)``."""
        relayout = count != self.count
        self.count, self.line, self.flagged = count, line, flagged
        self._style = self.rich_style  # resolving CSS costs more than building the line
        self.refresh(layout=relayout)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return self.count

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self._style or self.rich_style
        if y >= self.count:
            return Strip.blank(width, style)
        if self.flagged(y):
            style = style + FLAGGED
        return Strip([Segment(shown(self.line(y)), style)]).adjust_cell_length(width, style)


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
        Binding(
            "n",
            "next_stale",
            "Next stale",
            show=False,
            tooltip="following recordings: scroll to the next stale node",
        ),
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
        # Following recordings: every node the follower knows, by path, and what is read.
        self.nodes: dict[str, NodeStatus] | None = None
        self._host_node: dict[str, NodeStatus] = {}
        self._watched: frozenset[str] | None = None
        self._keys: list[tuple[str, int]] | None = None  # the cards, in order
        self._offsets: list[int] = [0]  # first line of each card, and the end
        self._polling = False
        self._poll_soon = False
        self._read_lock = threading.Lock()
        self._layout: list[tuple[str, str, tuple[int, ...]]] = []
        self._host_processes: dict[str, list[ProcessInfo]] = {}
        self._offsets_key: tuple | None = None
        self._cards: dict[tuple[str, int], tuple[tuple, list[str]]] = {}  # key → (inputs, lines)

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
        self.watch(self.query_one("#monitor-cards"), "scroll_y", self._scrolled, init=False)
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
        self._polling = poll
        watch = getattr(source, "watch", None)
        if watch is not None:  # a follower: read nothing until the cards on screen are known
            self._watched = frozenset()
            watch(self._watched)
        if poll:
            self._poll()

    def _schedule(self, delay: float | None = None) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.interval if delay is None else delay, self._poll)

    @work(thread=True, exclusive=True, group="monitor-poll")
    def _poll(self) -> None:
        source = self.source
        if source is None:
            return
        try:
            # One read at a time: a poll moved up by scrolling can start while one is running
            # (a thread worker that is cancelled still runs), and a source is not re-entrant.
            with self._read_lock:
                reading = source.read()
        except RoofscopeError as exc:
            self.app.call_from_thread(self._source_failed, exc.one_line())
            return
        self.app.call_from_thread(self.ingest, reading, True)

    def ingest(self, reading: Reading, schedule: bool = False) -> None:
        """Add one tick's samples to the history and redraw (tests call this directly)."""
        if reading.nodes is not None:
            self._set_nodes(reading.nodes)
        whole: set[str] = set()
        if self.nodes is not None:  # a history starts only from a node's whole history
            whole = {self.nodes[p].host for p in reading.complete if p in self.nodes}
            for key in [k for k in self.histories if k[0] in whole]:
                del self.histories[key]
        by_gpu: dict[tuple[str, int], list[GpuSample]] = {}
        for s in reading.samples:
            by_gpu.setdefault(s.key, []).append(s)
        for key, samples in by_gpu.items():
            history = self.histories.get(key)
            if history is None and (self.nodes is None or key[0] in whole):
                history = self.histories[key] = SeriesHistory(self.history_capacity)
            if history is None:
                pass
            elif len(samples) == 1:
                history.add(samples[0].ts, samples[0].series_values())
            else:  # a catch-up: column by column
                columns = [[getattr(s, k) for s in samples] for k in history.keys]
                history.extend([s.ts for s in samples], columns)
            latest = self.latest.get(key)
            if latest is None:
                self._keys = None
            for s in samples:
                if latest is None or s.ts >= latest.ts:
                    latest = s
            self.latest[key] = latest
        if self.nodes is not None:  # a fleet: each node's processes, as of its last read
            for host in {s.host for s in reading.samples}:
                self._host_processes[host] = [p for p in reading.processes if p.host == host]
        elif reading.samples or reading.processes:
            self.processes = reading.processes
        self.notes = reading.notes
        if self.seconds_per_column is None and self.histories:
            self.seconds_per_column = self._initial_zoom()
        if self.display and self.is_attached:
            self.redraw()
        if schedule:
            self._schedule(0.05 if self._poll_soon else None)
            self._poll_soon = False

    def _set_nodes(self, nodes: list[NodeStatus]) -> None:
        """The follower's recordings: those gone take their cards along."""
        self.nodes = {n.node: n for n in nodes}
        self._host_node = {n.host: n for n in nodes}
        layout = [(n.node, n.host, n.gpus) for n in nodes]
        if layout == self._layout:  # only times and flags moved: the cards stay where they are
            return
        self._layout = layout
        for key in [k for k in self.latest if k[0] not in self._host_node]:
            del self.latest[key]
            self.histories.pop(key, None)
        for host in [h for h in self._host_processes if h not in self._host_node]:
            del self._host_processes[host]
        self._keys = None

    def card_keys(self) -> list[tuple[str, int]]:
        """The cards in order: every GPU of every node followed (a node not read yet has one
        card, GPU -1), or every GPU sampled."""
        if self._keys is None:
            if self.nodes is None:
                self._keys = sorted(self.latest)
            else:
                keys = {(n.host, g) for n in self.nodes.values() for g in n.gpus or (-1,)}
                keys |= set(self.latest)
                keys -= {(h, -1) for h, g in keys if g >= 0}
                self._keys = sorted(keys)
        return self._keys

    def _stale_flag(self, host: str) -> str | None:
        node = self._host_node.get(host)
        if node is None or not node.stale:
            return None
        since = node.last_ts if node.last_ts is not None else node.grown_at
        return f"STALE, last sample {ago(self.clock() - (since or self.clock()))} ago"

    def _hosts_between(self, y0: int, y1: int) -> set[str]:
        """The hosts of the cards drawn on lines ``y0`` to ``y1``."""
        keys = self._keys or []
        lo = max(0, bisect_right(self._offsets, y0) - 1)
        hi = bisect_right(self._offsets, y1)
        return {h for h, _ in keys[lo:hi]}

    def _nodes_between(self, y0: int, y1: int) -> frozenset[str]:
        """The recordings of the cards drawn on lines ``y0`` to ``y1``."""
        nodes = self._host_node
        return frozenset(nodes[h].node for h in self._hosts_between(y0, y1) if h in nodes)

    def _scrolled(self, _: float) -> None:
        if self._watch_visible() and self._polling:
            self._schedule(0.2)

    def _watch_visible(self) -> bool:
        """Tell the follower which nodes to read: those of the cards on screen and a screen
        either side, or all of them in a small fleet. Histories of nodes no longer read are
        let go (they come back whole when read again). True when the set changed."""
        watch = getattr(self.source, "watch", None)
        if watch is None or self.nodes is None or self._keys is None:
            return False
        if len(self.nodes) <= WATCH_ALL:
            wanted = None
        else:
            cards = self.query_one("#monitor-cards")
            top, height = int(cards.scroll_y), max(1, cards.size.height)
            # A node a screen or less away is read; one read already stays until it is three
            # screens away, so a header that grows by a line does not make nodes come and go.
            near = self._nodes_between(top - height, top + 2 * height)
            kept = self._nodes_between(top - 3 * height, top + 4 * height)
            wanted = near | ((self._watched or frozenset()) & kept)
        if wanted == self._watched:
            return False
        self._watched = wanted
        watch(wanted)
        if wanted is not None:
            hosts = {self.nodes[p].host for p in wanted if p in self.nodes}
            for key in [k for k in self.histories if k[0] not in hosts]:
                del self.histories[key]
        return True

    def _initial_zoom(self) -> float:
        """Live: a column per sample. A recording: the smallest zoom that shows all of it."""
        if self.source is None or self.source.live:
            return _nearest(ZOOMS, self.interval)
        first, last = self._span()
        columns = self._columns()
        added = max((h.added for h in self.histories.values()), default=0)
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
        if not self.latest and not (self.nodes and self.card_keys()):
            label = self.source.label if self.source else "opening the GPU source"
            return f"{label} · waiting for the first sample…"
        label = self.source.label if self.source else ""
        spc = self.seconds_per_column or self.interval
        nodes = self.nodes
        gpus = len(self.latest) if nodes is None else sum(len(n.gpus) for n in nodes.values())
        parts = [label, f"{gpus} GPU{'s' if gpus != 1 else ''}"]
        if nodes is not None and len(nodes) > 1:
            parts.insert(1, counted(len(nodes), "node"))
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
        if nodes is not None:
            stale = self._stale_line(nodes)
            lines += [stale] if stale else []
            lines += [n for n in self.notes if ": stale, last sample" not in n][:3]
        else:
            lines += self.notes[:3]
        lines.append(KEYS)
        return "\n".join(lines)

    def _stale_line(self, nodes: dict[str, NodeStatus]) -> str:
        """``stale: 3 of 1,000 nodes · node0007 5 min ago · … (n: next)``, oldest first."""
        stale = [n for n in nodes.values() if n.stale]
        if not stale:
            return ""
        now = self.clock()

        def since(n: NodeStatus) -> float:
            return n.last_ts if n.last_ts is not None else (n.grown_at or now)

        stale.sort(key=since)
        head = f"stale: {len(stale):,} of {len(nodes):,} node{'s' if len(nodes) != 1 else ''}"
        named = [f"{n.host} last sample {ago(now - since(n))} ago" for n in stale[:6]]
        width = max(40, self.size.width or 80)
        line = head
        for i, text in enumerate(named):
            more = len(stale) - i - 1
            tail = f" · +{more:,} more (n: next)" if more else " (n: next)"
            if len(line) + 3 + len(text) + len(tail) > width:
                return line + f" · +{len(stale) - i:,} more (n: next)"
            line += " · " + text
        return line + " (n: next)"

    def redraw(self) -> None:
        header = self.header_text()
        if header != self._header:  # unchanged text: no layout pass; as many lines: no relayout
            relayout = header.count("\n") != self._header.count("\n")
            self._header = header
            self.query_one("#monitor-header", Static).update(header, layout=relayout)
        cards = self.query_one("#monitor-cards")
        text = self.query_one("#monitor-cards-text", Lines)
        keys = self.card_keys()
        if not keys:
            text.show([])
            self._show_processes()
            return
        width = max(20, (cards.size.width or 80) - 1)  # the scrollbar's column
        height = max(2, (cards.size.height or 16) - 1)
        end = self.window_end()
        spc = self.seconds_per_column or self.interval
        several_hosts = len({host for host, _ in keys}) > 1 or not self.live
        live = self.end is None and self.live
        rows = card_rows(len(keys), height)
        offsets = self._card_offsets(keys, rows)
        total = offsets[-1]
        right = "now" if live else time.strftime("%H:%M:%S", time.localtime(end))
        if self.nodes is not None and self.end is None and not self.live:
            # Following: the window ends on the column grid, so a card whose node read nothing
            # new is the same as last tick and comes from the cache.
            end = math.ceil(end / spc) * spc
        drawn: dict[int, list[str]] = {}  # this frame's cards, made when first on screen
        cache = self._cards if self.nodes is not None else {}

        def card(i: int) -> list[str]:
            lines = drawn.get(i)
            if lines is None:
                key = keys[i]
                host, gpu = key
                label = host if gpu < 0 else f"{host}:{gpu}" if several_hosts else f"GPU{gpu}"
                flag = self._stale_flag(host)
                latest, history = self.latest.get(key), self.histories.get(key)
                inputs = (
                    label,
                    flag,
                    latest.ts if latest else None,
                    history.added if history else 0,
                    history.last_ts if history else None,
                    end,
                    spc,
                    width,
                    rows,
                    live,
                    self.state.ascii_only,
                )
                cached = cache.get(key)
                if cached is not None and cached[0] == inputs:
                    lines = cached[1]
                elif latest is not None and history is not None:
                    lines = render_card(
                        label,
                        latest,
                        history,
                        end=end,
                        seconds_per_column=spc,
                        width=width,
                        rows=rows,
                        ascii_only=self.state.ascii_only,
                        live=live,
                        flag=flag,
                    )
                elif latest is not None:
                    lines = [title(label, latest, width, flag)]
                else:
                    lines = [cut(f"{label} · {flag or 'reading…'}", width)]
                if self.nodes is not None:
                    cache[key] = (inputs, lines)
                drawn[i] = lines
            return lines

        entries = [
            (f"{host}:{gpu}" if several_hosts else f"GPU{gpu}", sample, history)
            for (host, gpu) in keys
            if (sample := self.latest.get((host, gpu))) is not None
            and (history := self.histories.get((host, gpu))) is not None
        ]
        tail = [axis_line(spc, width, right), *self._roofline(entries, width)]

        def line(y: int) -> str:
            if y >= total:
                return tail[y - total]
            i = bisect_right(offsets, y) - 1
            lines = card(i)
            return lines[y - offsets[i]] if y - offsets[i] < len(lines) else ""

        def flagged(y: int) -> bool:
            if y >= total:
                return False
            i = bisect_right(offsets, y) - 1
            return offsets[i] == y and self._stale_flag(keys[i][0]) is not None

        text.show_lines(total + len(tail), line, flagged)
        self._poll_soon = self._watch_visible() or self._poll_soon
        if self.nodes is not None:
            on_screen = self._hosts_between(int(cards.scroll_y), int(cards.scroll_y) + height)
            self.processes = [p for h in sorted(on_screen) for p in self._host_processes.get(h, [])]
            for key in [k for k in self._cards if k not in self.histories]:
                if key not in self.latest:
                    del self._cards[key]
        self._show_processes()

    def _card_offsets(self, keys: list[tuple[str, int]], rows: int) -> list[int]:
        """The first line of each card, and the end: a card has its title and a line per
        series measured, up to ``rows``; a card not read yet has ``rows``."""
        measured = tuple((k, len(h.measured)) for k, h in self.histories.items())
        frame = (id(keys), len(keys), rows, measured)
        if frame != self._offsets_key:
            self._offsets_key = frame
            offsets = [0]
            for key in keys:
                history = self.histories.get(key)
                lines = rows if history is None else 1 + min(rows - 1, len(history.measured))
                offsets.append(offsets[-1] + lines)
            self._offsets = offsets
        return self._offsets

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

    def action_next_stale(self) -> None:
        """Scroll the cards to the next stale node below the top of the screen (wrapping)."""
        if self.nodes is None or self._keys is None:
            return
        keys, offsets = self._keys, self._offsets
        cards = self.query_one("#monitor-cards")
        top = bisect_right(offsets, int(cards.scroll_y)) - 1
        seen: set[str] = set()
        order = list(range(top + 1, len(keys))) + list(range(0, top + 1))
        for i in order:
            host = keys[i][0]
            if host in seen or (i > 0 and keys[i - 1][0] == host):
                continue
            seen.add(host)
            node = self._host_node.get(host)
            if node is not None and node.stale:
                cards.scroll_to(y=offsets[i], animate=False)
                return
        self.app.notify("no stale node", severity="information")

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
