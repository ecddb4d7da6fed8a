"""Timeline pane (nsys): GPU busy fraction, kernel concurrency, memcpy throughput and the
sampled GPU metrics as sparklines over time; zoom and pan to a window, then filter Kernels to
the launches that ran in it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from roofscope.analysis.browse import Filter
from roofscope.analysis.timeline import Timeline, Window
from roofscope.charts.sparkline import sparkline
from roofscope.output.render import timeline_lines
from roofscope.present.units import si
from roofscope.tui.messages import FilterKernels, ShowPane
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import Change, ViewState
from roofscope.tui.widgets.plain import PlainStatic

if TYPE_CHECKING:
    from roofscope.session import Report

LABEL = 26
VALUE = 11
NO_TIMELINE = (
    "No timeline in this report: Nsight Compute replays kernels one at a time.\n"
    "Open an Nsight Systems export (run.sqlite, a parquetdir, a cuda_gpu_trace CSV) — alone or "
    "beside this report: roofscope open run.sqlite run.ncu-rep.csv"
)


class TimelinePane(Pane, can_focus=True):
    KEY = "timeline"
    TITLE = "Timeline"
    HINT = "nsys"
    RELOAD_ON = frozenset({Change.DATA, Change.REPORT})
    BINDINGS = [
        Binding("plus,equals_sign", "zoom(0.5)", "Zoom in", tooltip="zoom in at the cursor"),
        Binding("minus", "zoom(2.0)", "Zoom out"),
        Binding("left", "cursor(-1)", "Cursor", show=False, tooltip="move the cursor"),
        Binding("right", "cursor(1)", "Cursor", show=False, tooltip="move the cursor"),
        Binding("shift+left,less_than_sign", "pan(-0.25)", "Pan", show=False, tooltip="pan left"),
        Binding(
            "shift+right,greater_than_sign", "pan(0.25)", "Pan", show=False, tooltip="pan right"
        ),
        Binding("0", "reset", "Whole run"),
        Binding("d", "device", "Device", tooltip="next device"),
        Binding("f,enter", "filter", "Filter", tooltip="filter Kernels to the window"),
    ]
    DEFAULT_CSS = """
    TimelinePane #timeline-summary { height: auto; }
    TimelinePane #timeline-chart { height: 1fr; }
    """

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.window: Window | None = None
        self.full: Window | None = None
        self.devices: list[int | None] = []
        self.device_index = 0
        self.data: Timeline | None = None
        self.cursor: float | None = None  # where zooming centres, as a fraction of the window
        self.asked_buckets: int | None = None  # the chart width of the last load

    @property
    def device(self) -> int | None:
        return self.devices[self.device_index] if self.devices else None

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="timeline-summary")
        yield PlainStatic(id="timeline-chart")

    def _buckets(self) -> int:
        # the pane's width, not the chart's: that Static is as wide as its last content, and
        # a pane first loaded while hidden (width 0) kept an 80-column chart at any width
        return max(10, (self.size.width or 80) - LABEL - VALUE)

    def on_resize(self) -> None:
        if self.asked_buckets is not None and self.asked_buckets != self._buckets():
            self.reload()

    def reload(self) -> None:
        self.asked_buckets = self._buckets()
        self._load(
            self.state.current,
            self.window,
            list(self.devices),
            self.device_index,
            self.asked_buckets,
        )

    @work(thread=True, exclusive=True, group="timeline")
    def _load(
        self,
        report: Report,
        window: Window | None,
        devices: list[int | None],
        device_index: int,
        buckets: int,
    ) -> None:
        if not devices:  # once per report, not on every zoom: a scan of every launch
            if not report.has_timeline():
                self.app.call_from_thread(self._show, None, None, [], buckets)
                return
            devices = report.devices() or [None]
        device = devices[min(device_index, len(devices) - 1)]
        data = report.timeline(window, device, buckets)
        self.app.call_from_thread(self._show, data, window, devices, buckets)

    def _show(
        self, data: Timeline | None, asked: Window | None, devices: list, buckets: int
    ) -> None:
        if buckets != self.asked_buckets:
            return  # a resize asked for another width since: that load draws (and places ^)
        if asked != self.window and not (asked is None and self.window == self.full):
            return  # a newer zoom or pan is on its way (None: the whole run, as first loaded)
        self.data = data
        window = data.window if data else None
        summary = self.query_one("#timeline-summary", Static)
        chart = self.query_one("#timeline-chart", Static)
        if data is None:
            self.full = None
            summary.update(f"{self.state.label()}\n{NO_TIMELINE}")
            chart.update("")
            return
        self.devices = devices
        if self.full is None or self.window is None:
            self.full = window
        self.window = window
        if self.cursor is None:
            # start on the busiest moment, where zooming in is most useful
            busiest = max(range(data.buckets), key=lambda i: data.concurrency[i])
            self.cursor = (busiest + 0.5) / data.buckets
        device = "all devices" if data.device is None else f"device {data.device}"
        lines = [
            f"{self.state.label()} · {device} · window {si(data.window.t0 / 1e9, 's')} – "
            f"{si(data.window.t1 / 1e9, 's')} · nsys: the real timeline (not replayed)",
            *timeline_lines(data.to_dict()),
            "+/- zoom at the cursor ^ · ←/→ cursor · </> pan · 0 whole run · d device · "
            "f/Enter filter Kernels to this window",
        ]
        summary.update("\n".join(lines))
        chart.update(self.chart_text(data))

    def chart_text(self, data: Timeline) -> str:
        asc = self.state.ascii_only
        rows: list[tuple[str, list[float | None], float | None, str]] = [
            ("GPU busy", list(data.busy), 1.0, f"{100 * data.busy_fraction:.1f}%"),
            ("kernels running", list(data.concurrency), None, f"max {data.max_concurrency}"),
            (
                "memcpy (bucket avg)",
                list(data.memcpy),
                None,
                si(max(data.memcpy, default=0.0), "B/s"),
            ),
        ]
        for name, values in data.metrics.items():
            top = max((v for v in values if v is not None), default=None)
            rows.append((name.split(": ", 1)[-1], values, None, f"{top:.3g}" if top else "—"))
        out = []
        for label, values, top, value in rows:
            line = sparkline(values, top, ascii_only=asc)
            out.append(f"{label[: LABEL - 1]:<{LABEL}}{line}  {value:>{VALUE - 2}}")
        cursor = self._cursor_bucket(data)
        at = (data.window.t0 + (cursor + 0.5) * data.window.width / data.buckets) / 1e9
        out.append(" " * (LABEL + cursor) + f"^ {si(at, 's')}")
        span = data.window
        axis = f"{si(span.t0 / 1e9, 's')}"
        end = f"{si(span.t1 / 1e9, 's')}"
        width = data.buckets
        out.append(" " * LABEL + axis + " " * max(1, width - len(axis) - len(end)) + end)
        return "\n".join(out)

    # -- actions ---------------------------------------------------------------------------
    def action_zoom(self, factor: float) -> None:
        if self.window is None or self.full is None:
            return
        centre = self.cursor if self.cursor is not None else 0.5
        self.window = self.window.zoom(factor, centre).clamp(self.full)
        self.cursor = 0.5
        self.reload()

    def _cursor_bucket(self, data: Timeline) -> int:
        return min(int((self.cursor or 0.0) * data.buckets), data.buckets - 1)

    def action_cursor(self, step: int) -> None:
        if self.data is None:
            return
        bucket = min(max(self._cursor_bucket(self.data) + step, 0), self.data.buckets - 1)
        self.cursor = (bucket + 0.5) / self.data.buckets
        self.query_one("#timeline-chart", Static).update(self.chart_text(self.data))

    def action_pan(self, fraction: float) -> None:
        if self.window is None or self.full is None:
            return
        self.window = self.window.pan(fraction).clamp(self.full)
        self.reload()

    def action_reset(self) -> None:
        self.window = self.full
        self.cursor = None
        self.reload()

    def action_device(self) -> None:
        if len(self.devices) > 1:
            self.device_index = (self.device_index + 1) % len(self.devices)
            self.reload()

    def action_filter(self) -> None:
        if self.window is not None:
            flt = self.state.filter
            window = (self.state.current.report_id, self.window.t0, self.window.t1)
            self.post_message(FilterKernels(Filter(flt.regex, None, flt.eff_bin, window)))
            self.post_message(ShowPane("kernels"))

    def state_changed(self, change: Change) -> None:
        if change is Change.REPORT:  # another report's run: start from its whole run
            self.window = self.full = None
            self.devices = []
        super().state_changed(change)

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        data = self.data
        if data is None:
            return ["bucket"], []
        width = data.window.width / data.buckets
        header = ["start_s", "busy", "kernels_running", "memcpy_B_per_s", *data.metrics]
        rows = []
        for i in range(data.buckets):
            rows.append(
                [
                    f"{(data.window.t0 + i * width) / 1e9:.9f}",
                    f"{data.busy[i]:.4f}",
                    f"{data.concurrency[i]:.4f}",
                    f"{data.memcpy[i]:.1f}",
                    *("" if v[i] is None else f"{v[i]:.4g}" for v in data.metrics.values()),
                ]
            )
        return header, rows
