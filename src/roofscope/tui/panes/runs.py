"""Runs pane (6): bundled models × precision × batch × preset; start, watch, cancel, open.

A run goes in a thread worker (the runner blocks on ncu); its progress comes back through
``call_from_thread`` at most twice a second. When it finishes the app opens its report, so the
user lands in Kernels with every pane working. Past runs are read from the runs folder.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Input, Select, Static

from roofscope.errors import RoofscopeError
from roofscope.output.profiling import kernels_text, settings_text
from roofscope.present.units import clock, si
from roofscope.profiling import runs as runs_dir
from roofscope.profiling.catalog import MODELS
from roofscope.profiling.command import MODES, PRECISIONS, RunSpec, find_tool
from roofscope.profiling.presets import PRESETS
from roofscope.profiling.progress import Progress
from roofscope.quantities import FLOPS, TIME_S
from roofscope.tui.messages import OpenReports
from roofscope.tui.panes.base import Pane
from roofscope.tui.state import ViewState
from roofscope.tui.widgets.plain import PlainStatic, PlainTable

if TYPE_CHECKING:
    from roofscope.profiling.runner import Runner


def progress_lines(p: Progress, width: int, ascii_only: bool = False) -> list[str]:
    """A bar, counts, phase, ETA and the kernel being replayed."""
    if p.first_kernel_at is None:
        return [f"starting… {clock(p.elapsed)} (warm-up steps run before ncu profiles)"]
    frac = p.fraction
    bar_w = max(10, min(50, width - 30))
    if frac is not None:
        full, empty = ("#", "-") if ascii_only else ("█", "░")
        filled = round(frac * bar_w)
        bar = f"{full * filled}{empty * (bar_w - filled)} {frac:4.0%}"
    else:
        bar = "(no kernel count: no ETA)"
    eta = p.eta()
    total = f"/{p.expected}" if p.expected else ""
    return [
        bar,
        f"kernel {p.done}{total} · {p.phase or '—'} · {clock(p.elapsed)} elapsed"
        + (f" · ETA {clock(eta)}" if eta is not None else ""),
        f"now: {p.current or '—'} ({p.percent}% of its passes)",
    ]


class RunsPane(Pane):
    KEY = "runs"
    TITLE = "Runs"
    HINT = "profile bundled models"
    KEYS = (("Tab", "reach the form: model, precision, batch, preset, mode"),)
    NEEDS_REPORT = False
    DEFAULT_CSS = """
    RunsPane #runs-form { height: 3; }
    RunsPane #runs-form Select { width: 1fr; }
    RunsPane #runs-form #run-batch { width: 10; }
    RunsPane #runs-form Input:focus { border: tall $accent; }
    RunsPane #runs-head { height: auto; }
    RunsPane #runs-table { height: 1fr; }
    RunsPane #run-detail { height: auto; max-height: 50%; }
    """
    BINDINGS = [
        Binding("s", "start", "Start run", tooltip="start the run set in the form"),
        Binding("c", "cancel", "Cancel run"),
        Binding("o", "open_run", "Open report", tooltip="open a run's report (or Enter)"),
        Binding("R", "refresh", "Refresh", show=False, tooltip="read the runs folder again"),
    ]

    def __init__(self, state: ViewState, **kwargs: Any):
        super().__init__(state, **kwargs)
        self.root = state.runs_root
        self.runs: list[runs_dir.Run] = []
        self.runner: Runner | None = None
        self.progress: Progress | None = None
        self.summaries: dict[str, dict[str, Any]] = {}
        self._reading: set[str] = set()  # runs whose report a worker is summarising

    def compose(self) -> ComposeResult:
        yield PlainStatic(id="runs-head")
        with Horizontal(id="runs-form"):
            yield Select([(f"{m.name}", m.name) for m in MODELS.values()], value="resnet18",
                         allow_blank=False, id="run-model")  # fmt: skip
            yield Select([(p, p) for p in PRECISIONS], value="fp32", allow_blank=False,
                         id="run-precision")  # fmt: skip
            yield Input(value="32", type="integer", id="run-batch", tooltip="batch size")
            yield Select([(p, p) for p in PRESETS], value="roofline", allow_blank=False,
                         id="run-preset")  # fmt: skip
            yield Select([(m, m) for m in MODES], value="train", allow_blank=False, id="run-mode")
        table: DataTable[str] = PlainTable(
            id="runs-table", squeeze=("model", "settings", "preset", "status"), cursor_type="row"
        )
        for title, width in (("started", 11), ("model", 10), ("settings", 10), ("preset", 8),
                             ("status", 9), ("time", 7), ("kernels", 7)):  # fmt: skip
            table.add_column(title, width=width)
        yield table
        yield PlainStatic(id="run-detail", markup=False)

    def on_mount(self) -> None:
        self._head()
        self.refresh_runs()

    def on_unmount(self) -> None:
        """Quitting mid-run stops ncu and the step rather than leaving them running."""
        if self.runner is not None:
            self.runner.cancel()

    def _head(self) -> None:
        ncu = find_tool("ncu")
        where = self.root or runs_dir.runs_root()
        tool = f"ncu: {ncu}" if ncu else "ncu not found (roofscope doctor)"
        self.query_one("#runs-head", Static).update(
            f"Runs · {tool} · folder {where}\n"
            "Tab to the form: model · precision · batch · preset · mode; s (or Enter in batch) "
            "starts, c cancels, Enter on a run opens its report"
        )

    @on(Input.Submitted, "#run-batch")
    def _batch_entered(self) -> None:
        """Enter in the batch field starts the run (``s`` there would be typed)."""
        self.action_start()

    @on(Select.Changed, "#run-model")
    def _model_changed(self, event: Select.Changed) -> None:
        info = MODELS.get(str(event.value))
        if info is not None:
            self.query_one("#run-batch", Input).value = str(info.default_batch)

    # -- list ------------------------------------------------------------------------------
    def action_refresh(self) -> None:
        self.refresh_runs()

    def refresh_runs(self) -> None:
        self.runs = runs_dir.list_runs(self.root)
        table = self.query_one("#runs-table", DataTable)
        keep = table.cursor_row
        table.clear()
        for r in self.runs:
            d = r.to_dict()
            table.add_row(
                self._started(r),
                r.spec.model,
                settings_text(d["spec"]),
                r.spec.preset,
                r.status,
                clock(r.duration) if r.duration is not None else "…",
                kernels_text(d),
                key=r.name,
            )
        if self.runs:
            table.move_cursor(row=min(max(keep, 0), len(self.runs) - 1))
        self._detail()

    @staticmethod
    def _started(run: runs_dir.Run) -> str:
        return time.strftime("%m-%d %H:%M", time.localtime(run.started))

    def selected(self) -> runs_dir.Run | None:
        table = self.query_one("#runs-table", DataTable)
        if not self.runs or table.cursor_row < 0 or table.cursor_row >= len(self.runs):
            return None
        return self.runs[table.cursor_row]

    @on(DataTable.RowHighlighted, "#runs-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    @on(DataTable.RowSelected, "#runs-table")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        self.action_open_run()

    def _detail(self) -> None:
        run = self.selected()
        lines: list[str] = []
        running = self.runner is not None and run is not None and run.name == self.runner.run.name
        if running and self.progress is not None:
            lines += progress_lines(self.progress, self.size.width, self.state.ascii_only)
        elif run is not None:
            lines += self._finished_lines(run)
        else:
            lines.append("no runs yet: Tab to the form, choose a model, press s")
        self.query_one("#run-detail", Static).update("\n".join(lines))

    def _finished_lines(self, run: runs_dir.Run) -> list[str]:
        spec = run.spec
        title = f"{spec.model} {settings_text(spec.to_dict())} [{spec.preset}] · {run.status}"
        lines = [title + (f" · {run.error}" if run.error else "")]
        t = run.timings
        if t:
            lines.append(" · ".join(f"{k.removesuffix('_s')} {v:.1f} s" for k, v in t.items()))
        summary = self.summaries.get(run.name)
        if summary is None and run.status == runs_dir.DONE:
            # once per run, and only on screen: every `roofscope open` mounts this pane hidden
            if self.display and run.name not in self._reading:
                self._reading.add(run.name)
                self._summarise(run)
            return [*lines, "reading the report…"]
        if summary:
            facts = summary["facts"]
            mem = summary.get("memory") or {}
            extra = []
            if "step_time_s" in facts:
                extra.append(f"step (unprofiled) {si(float(facts['step_time_s']), 's')}")
            if "peak_memory_bytes" in facts:
                extra.append(f"peak memory {si(float(facts['peak_memory_bytes']), 'B')}")
            if mem.get("estimate_bytes"):
                extra.append(f"estimate {si(mem['estimate_bytes'], 'B')}")
            if extra:
                lines.append(" · ".join(extra))
            if summary["phases"]:
                lines.append(f"{'phase':<10}{'kernels':>8}{'time':>10}{'measured':>13}"
                             f"{'analytic':>13}{'÷':>8}")  # fmt: skip
            for r in summary["phases"]:
                ratio = r["measured_over_analytic"]
                share = "—" if ratio is None else f"{ratio:.2f}" if ratio < 100 else f"{ratio:,.0f}"
                lines.append(
                    f"{r['phase']:<10}{r['kernels']:>8}{si(r[TIME_S], 's'):>10}"
                    f"{si(r[FLOPS], 'FLOP'):>13}{si(r['analytic_flops'], 'FLOP'):>13}{share:>8}"
                )
        return lines

    @work(thread=True, group="runs-summary")
    def _summarise(self, run: runs_dir.Run) -> None:
        from roofscope.profiling.summary import run_summary

        try:
            summary = run_summary(run)
        except RoofscopeError as exc:
            summary = {"facts": {}, "phases": [], "memory": None, "error": exc.one_line()}
        self.app.call_from_thread(self._summarised, run.name, summary)

    def _summarised(self, name: str, summary: dict[str, Any]) -> None:
        self.summaries[name] = summary
        self._reading.discard(name)
        self._detail()

    def shown(self) -> None:
        """Pane 6 came into view: read the highlighted run's report if not yet read."""
        self._detail()

    def busy(self) -> str | None:
        if self.runner is not None:
            return "a run is going: open reports when it ends (c cancels it)"
        return None

    def focus_first(self) -> None:
        self.query_one("#runs-table").focus()  # the list first; Tab reaches the form

    # -- start / cancel / open -------------------------------------------------------------
    def spec_from_form(self) -> RunSpec:
        batch_text = self.query_one("#run-batch", Input).value.strip()
        try:
            batch = int(batch_text)
        except ValueError:
            raise RoofscopeError(f"batch {batch_text!r} is not a whole number") from None
        return RunSpec(
            model=str(self.query_one("#run-model", Select).value),
            precision=str(self.query_one("#run-precision", Select).value),
            batch=batch,
            preset=str(self.query_one("#run-preset", Select).value),
            mode=str(self.query_one("#run-mode", Select).value),
        )

    def action_start(self) -> None:
        if self.runner is not None:
            self.notify("a run is going; c cancels it", severity="warning")
            return
        from roofscope.profiling.runner import Runner

        try:
            spec = self.spec_from_form()
            self.runner = Runner(spec, root=self.root, listener=self._listen)
        except RoofscopeError as exc:
            self.notify(exc.one_line(), severity="error", timeout=10)
            return
        self.progress = self.runner.progress
        self.refresh_runs()
        self.query_one("#runs-table", DataTable).move_cursor(row=0)
        self._go(self.runner)
        self.notify(f"profiling {spec.model} {spec.precision} b{spec.batch} [{spec.preset}]")

    @work(thread=True, group="runs-run")
    def _go(self, runner: Runner) -> None:
        run = runner.start()
        self.app.call_from_thread(self._finished, run)

    def _listen(self, progress: Progress) -> None:
        self.app.call_from_thread(self._progressed, progress)

    def _progressed(self, progress: Progress) -> None:
        self.progress = progress
        self._detail()

    def _finished(self, run: runs_dir.Run) -> None:
        self.runner = None
        self.progress = None
        self.refresh_runs()
        if run.status == runs_dir.DONE and run.report_path is not None:
            self.notify(f"{run.name} done: opening {run.report}")
            self.post_message(OpenReports([str(run.report_path)]))
        elif run.status == runs_dir.CANCELLED:
            self.notify(f"{run.name} cancelled (log kept in {run.folder})", severity="warning")
        else:
            self.notify(f"{run.name} failed: {run.error}", severity="error", timeout=15)

    def action_cancel(self) -> None:
        if self.runner is None:
            self.notify("no run is going")
            return
        self.notify("cancelling…")
        self._stop(self.runner)

    @work(thread=True, group="runs-cancel")
    def _stop(self, runner: Runner) -> None:
        runner.cancel()

    def action_open_run(self) -> None:
        run = self.selected()
        if run is None:
            return
        if run.report_path is None or not run.report_path.exists():
            self.notify(f"{run.name} has no report ({run.status})", severity="warning")
            return
        self.post_message(OpenReports([str(run.report_path)]))

    def current_table(self) -> tuple[list[str], list[list[str]]]:
        table = self.query_one("#runs-table", DataTable)
        header = [str(c.label) for c in table.columns.values()]
        return header, [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
