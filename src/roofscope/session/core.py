"""The session: reports opened together, their derived views, and the one lock.

The TUI's workers, the CLI and Python users share one DuckDB connection per session, used by
one thread at a time; the session and its :class:`~roofscope.session.report.Report` objects
take the lock around every query, so no caller ever touches the connection. What compares
several reports lives in :mod:`~roofscope.session.decisions`, the JSON contract in
:mod:`~roofscope.session.contract` and the pandas frames in :mod:`~roofscope.session.frames`;
the methods here hand over to them. Those modules (and the recording's) are imported by the
methods that use them: opening a report for its table loads none of them.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from roofscope.errors import RoofscopeError
from roofscope.grouping import AXES, Grouper, Rule
from roofscope.session import contract, frames
from roofscope.session.loading import Options, read_reports, store_default_facts
from roofscope.session.views import apply_groups, build_views
from roofscope.store import (
    OpenedStore,
    changed_since_loaded,
    discard_damaged,
    is_damaged,
    memory_capped,
    open_store,
    stored_identity,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

    import pandas as pd

    from roofscope.analysis import compare, cost, scaling
    from roofscope.analysis.recording import StoredRecordingSource
    from roofscope.hardware.specs import GpuSpec


class Session:
    """Reports opened together, with derived facts in a session-local DuckDB connection."""

    def __init__(self, store: OpenedStore, options: Options):
        self.store = store
        self.identity = stored_identity(store.con)
        # One connection, used by one thread at a time: the TUI's workers query through it,
        # and the session's temporary tables are per connection in DuckDB. Only the session's
        # own modules (and tests checking what is stored) read it.
        self.con = store.con
        self.lock = threading.RLock()
        self.options = options
        self.reports = read_reports(self.con, options, self.lock)
        self.grouper = Grouper(options.rules or [])
        self.axis = options.axis
        build_views(self.con, self.reports, self.grouper, self.axis)

    # -- regrouping -----------------------------------------------------------------------
    def set_rules(self, rules: list[Rule]) -> None:
        """Regroup with new rules (the TUI's rule editor): only the name table changes."""
        with self.lock:
            self.grouper = Grouper(rules)
            apply_groups(self.con, self.grouper, self.axis)
            for report in self.reports:
                report.forget_groups()

    def set_axis(self, axis: str) -> None:
        if axis not in AXES:
            raise RoofscopeError(f"unknown grouping axis {axis!r}", hint=", ".join(AXES))
        with self.lock:
            self.axis = axis
            apply_groups(self.con, self.grouper, self.axis)
            for report in self.reports:
                report.forget_groups()

    def kernel_names(self) -> list[str]:
        """Every distinct kernel name of the open reports (the rule editor's preview)."""
        with self.lock:
            rows = self.con.execute(
                "SELECT DISTINCT kernel FROM launches WHERE kernel IS NOT NULL ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    # -- the session as a whole -----------------------------------------------------------
    @property
    def warnings(self) -> list[str]:
        notes = [self.store.note] if self.store.note else []
        return notes + [f"{r.path}: {w}" for r in self.reports for w in r.warnings]

    def changed_on_disk(self) -> list[str]:
        """Inputs modified (or removed) since this session loaded them (stat calls only)."""
        return changed_since_loaded(self.identity)

    def recording_summaries(self) -> list[dict[str, Any]]:
        """Per-GPU summaries of every GPU recording opened (``roofscope record --summary``)."""
        from roofscope.analysis.recording import summarise

        with self.lock:
            return [g.to_dict() for g in summarise(self.con)]

    def recording_source(self) -> StoredRecordingSource | None:
        """The recordings opened in this session, for the Monitor pane; None if there are none."""
        ids = [r.report_id for r in self.reports if r.is_recording]
        if not ids:
            return None
        names = ", ".join(Path(r.path).name for r in self.reports if r.is_recording)
        from roofscope.analysis.recording import StoredRecordingSource

        return StoredRecordingSource(self.con, self.lock, ids, f"recording {names}")

    def close(self) -> None:
        self.con.close()

    def memory_capped(self, limit: str | None = None) -> AbstractContextManager[None]:
        """The queries of a block held to ``limit`` (``store.QUERY_MEMORY_LIMIT``) and
        spilling beside the cache (``report``, ``advise``: 2.7 GB → 1.0 GB at ten million
        kernels); a store in memory is left alone (its data is the memory)."""
        if self.store.path is None:
            return nullcontext()
        return memory_capped(self.con, limit) if limit else memory_capped(self.con)

    # -- across reports (decisions.py) ------------------------------------------------------
    def diff(self, before: int = 0, after: int = 1, by: str = "group") -> compare.Diff:
        """``after`` against ``before``, row by row (groups, kernels or launches)."""
        from roofscope.session import decisions

        return decisions.diff(self, before, after, by)

    def scaling(self, settings: dict[int, scaling.Setting] | None = None) -> dict[str, Any]:
        """Time per sample, throughput, FLOP/s and efficiency per report (setting); settings
        not given are read from the file names."""
        from roofscope.session import decisions

        return decisions.scaling_doc(self, settings)

    def cost(
        self,
        table: cost.PriceTable | None = None,
        run_steps: int | None = None,
        epochs: float | None = None,
        samples: int | None = None,
        settings: dict[int, scaling.Setting] | None = None,
        measured: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """What a run of ``run_steps`` (or ``epochs`` × ``samples``) costs on each report's GPU
        at the table's prices (None: the user's price file, else the shipped examples); GPUs
        without a price get no cost and a warning. ``measured``: a :meth:`scaling` document
        already at hand (a view showing both measures once)."""
        from roofscope.session import decisions

        return decisions.cost_doc(self, table, run_steps, epochs, samples, settings, measured)

    def gpu_keys(self) -> list[str]:
        """Spec-table keys of the reports' GPUs."""
        from roofscope.session import decisions

        return decisions.gpu_keys(self)

    def mig_advice(
        self, gpu: GpuSpec | None = None, tolerance: float | None = None
    ) -> list[dict[str, Any]]:
        """A MIG slice suggestion per recorded GPU (``gpu`` overrides the recorded name;
        ``tolerance``: the slowdown accepted, None for ``analysis.mig.SLOWDOWN_TOLERANCE``)."""
        from roofscope.analysis import mig
        from roofscope.session import decisions

        if tolerance is None:
            tolerance = mig.SLOWDOWN_TOLERANCE
        return decisions.mig_advice(self, gpu, tolerance)

    # -- the JSON contract (contract.py) and pandas (frames.py) -----------------------------
    def report_dict(
        self,
        by: str = "group",
        top: int | None = None,
        *,
        advice: bool = True,
        rows: bool = True,
    ) -> dict[str, Any]:
        """The documented JSON contract (docs/json.md): ``groups`` always, ``rows`` too when
        ``by`` is ``kernel`` or ``launch``; ``top`` keeps the rows with the most time.
        ``advice=False`` leaves out ``advice`` (what the table, CSV and Markdown never show);
        ``rows=False`` leaves out ``rows``, for a writer that streams them."""
        return contract.report_dict(self, by, top, advice, rows)

    def groups(self, report: int | None = None) -> pd.DataFrame:
        """One row per kernel group (pandas DataFrame)."""
        return frames.frame(self, "group", report)

    def kernels(self, report: int | None = None) -> pd.DataFrame:
        return frames.frame(self, "kernel", report)

    def launches(self, report: int | None = None) -> pd.DataFrame:
        """One row per launch with every derived column, straight from DuckDB."""
        return frames.launches(self, report)


def load(
    *paths: str | Path,
    gpu: str | None = None,
    ceilings: str | None = None,
    fp16_convention: str = "ncu",
    rules: list[Rule] | None = None,
    use_cache: bool = True,
    axis: str = "rules",
) -> Session:
    """Open ncu exports (CSV, ``.csv.gz``, ``.ncu-rep`` with ncu installed) and nsys exports
    (SQLite, parquetdir, stats CSV, ``.nsys-rep`` with nsys installed)."""
    options = Options(gpu, ceilings, fp16_convention, rules, use_cache, axis)
    store = open_store(list(paths), use_cache=use_cache, on_build=store_default_facts)
    try:
        session = Session(store, options)
    except duckdb.Error as exc:
        if not (store.from_cache and is_damaged(exc)):
            raise
        # A cache that rotted on disk: drop it and build a new one from the report.
        store.con.close()
        discard_damaged()
        store = open_store(list(paths), use_cache=use_cache, on_build=store_default_facts)
        session = Session(store, options)
    for report, given in zip(session.reports, paths, strict=False):
        report.path = str(given)  # a cache made from another spelling of the same file
    return session


def load_in_thread(*paths: str | Path, **options: Any) -> Future[Session]:
    """:func:`load` in a thread of its own, started now: ``roofscope open`` calls it before
    importing Textual (~0.15 s of Python), and DuckDB's part of opening the cache (its start,
    the attach, the views' queries; ~60 ms) runs outside the GIL meanwhile. The future holds
    the session, or the error ``load`` raised."""
    from concurrent.futures import Future  # its import loads logging: not for roofscope report

    future: Future[Session] = Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(load(*paths, **options))
        except BaseException as exc:  # handed to whoever waits: a RoofscopeError, a damaged cache
            future.set_exception(exc)

    threading.Thread(target=run, name="roofscope-load", daemon=True).start()
    return future
