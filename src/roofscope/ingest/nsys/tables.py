"""Where every nsys reader (SQLite, parquetdir, stats CSV) puts what it read.

A reader fills staging tables with fixed columns; :func:`write_report` turns them into the
store's canonical tables (:mod:`roofscope.schema`), so grouping, summaries and the Kernels pane
treat nsys kernels like ncu launches whose only metric is their duration, and the timeline
tables (``spans``, ``memops``, ``gpu_metrics``, ``nvtx_ranges``) keep what only a trace has.

Staging ``stg_kernels`` columns: ``source_row`` (rowid in the export, for on-demand detail),
``start_ns``, ``end_ns`` (NULL for summary rows), ``device``, ``stream``, ``kernel`` (demangled
name), ``process_id``, ``grid_size``, ``block_size``, ``invocations``, ``time_s`` (average per
invocation), ``time_min_s``, ``time_max_s``, ``time_med_s``, ``nvtx_inner``, ``nvtx_outer``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

import duckdb

from roofscope.ingest.numbers import null_non_finite
from roofscope.metrics import begin_facts, drop_facts
from roofscope.schema import VALUES_R, create_values
from roofscope.sqlutil import scanned


class _Pyarrow:
    """pyarrow on first use: every reader's module imports this one for its names, and a
    cached or ncu report must not pay pyarrow's import (with numpy: ~0.16 s) for them."""

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("pyarrow"), name)


if TYPE_CHECKING:
    import pyarrow as pa
else:
    pa = _Pyarrow()

# nsys times count nanoseconds from the session's start: past 2**62 (146 years) is damage, and
# would overflow the timeline's BIGINT arithmetic.
LATEST_NS = 2**62
DURATION = "nsys__duration"  # end - start of a traced launch, or a summary row's average
TIME_MIN = "nsys__time_min"
TIME_MAX = "nsys__time_max"
TIME_MED = "nsys__time_med"

STAGING_KERNELS = """
CREATE OR REPLACE TEMP TABLE stg_kernels (source_row BIGINT, start_ns BIGINT, end_ns BIGINT,
    device INTEGER, stream BIGINT, kernel VARCHAR, process_id VARCHAR, grid_size VARCHAR,
    block_size VARCHAR, invocations BIGINT, time_s DOUBLE, time_min_s DOUBLE,
    time_max_s DOUBLE, time_med_s DOUBLE, nvtx_inner VARCHAR, nvtx_outer VARCHAR)
"""

# Memory operations read by each reader, one label vocabulary for all of them.
MEMCPY_KINDS = {
    1: "Host-to-Device",
    2: "Device-to-Host",
    3: "Host-to-Array",
    4: "Array-to-Host",
    5: "Array-to-Array",
    6: "Array-to-Device",
    7: "Device-to-Array",
    8: "Device-to-Device",
    9: "Host-to-Host",
    10: "Peer-to-Peer",
}
# The memory kind of each side of a copy (``srcKind``/``dstKind``), as nsys numbers them
# (``ENUM_CUDA_MEM_KIND``, read from the export where it has that table). Exports without the
# table number them the same way: in every such sample a Host-to-Device copy has dstKind 2
# (Device), which CUPTI's own numbering (0 unknown, 1 pageable, 2 pinned…) would call pinned.
MEM_KINDS = {
    0: "Pageable",
    1: "Pinned",
    2: "Device",
    3: "Array",
    4: "Managed",
    5: "Device Static",
    6: "Managed Static",
    7: "Unknown",
}
PAGEABLE, PINNED = "pageable", "pinned"  # memops.host_kind
# The memops columns a reader fills row by row (``host_kind`` follows where it knows it).
MEMOP_COLUMNS = (
    "report_id", "start_ns", "end_ns", "device", "stream", "bytes", "kind", "count", "time_s",
)  # fmt: skip


def host_kind(src: str | None, dst: str | None) -> str | None:
    """A copy's host memory (``memops.host_kind``) from its sides' memory kinds as nsys labels
    them: ``pageable`` when either side is pageable host memory, else ``pinned`` when either is
    pinned, else None (device to device, managed, or not known)."""
    sides = {(side or "").strip().lower() for side in (src, dst)}
    if PAGEABLE in sides:
        return PAGEABLE
    return PINNED if PINNED in sides else None


def create_staging(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(STAGING_KERNELS)


def write_report(
    con: duckdb.DuckDBPyConnection, report_id: int, warnings: list[str] | None = None
) -> int:
    """Move ``stg_kernels`` into ``launches``/``values_r{N}``/``spans``/``launch_nvtx`` and the
    catalogue; launch ids follow the timeline (start time, then export row). Returns the
    number of launches (summary rows count their instances). Durations that cannot be
    (negative, NaN, infinite, no end) are dropped with a warning appended to ``warnings``."""
    rid = int(report_id)
    bad = _drop_bad_durations(con)
    if bad and warnings is not None:
        warnings.append(bad_durations_warning(bad))
    con.execute(
        "CREATE OR REPLACE TEMP TABLE stg_numbered AS SELECT row_number() OVER "
        "(ORDER BY start_ns NULLS LAST, source_row) - 1 AS launch_id, * FROM stg_kernels"
    )
    con.execute(
        f"INSERT INTO launches SELECT {rid}, launch_id, process_id, NULL, NULL, kernel, NULL, "
        f"NULL, CAST(stream AS VARCHAR), block_size, grid_size, CAST(device AS VARCHAR), NULL, "
        f"nvtx_inner, invocations FROM stg_numbered"
    )
    con.execute(
        f"INSERT INTO spans SELECT {rid}, launch_id, start_ns, end_ns, device, stream, source_row "
        f"FROM stg_numbered WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL"
    )
    con.execute(
        f"INSERT INTO launch_nvtx SELECT {rid}, launch_id, nvtx_inner, nvtx_outer "
        f"FROM stg_numbered WHERE nvtx_inner IS NOT NULL OR nvtx_outer IS NOT NULL"
    )
    _islands(con, rid)
    summary = bool(
        con.execute("SELECT count(*) FROM stg_numbered WHERE start_ns IS NULL").fetchall()[0][0]
    )
    extra = (
        f', time_min_s AS "{TIME_MIN}", time_max_s AS "{TIME_MAX}", time_med_s AS "{TIME_MED}"'
        if summary
        else ""
    )
    con.execute(
        create_values(rid, f'SELECT launch_id, time_s AS "{DURATION}"{extra} FROM stg_numbered')
    )
    metrics = [DURATION, *((TIME_MIN, TIME_MAX, TIME_MED) if summary else ())]
    for metric in metrics:
        con.execute(
            "INSERT INTO catalogue VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [rid, metric, metric, "nsys", "s", "s", 1.0, "nsys", True, True],
        )
    total = con.execute("SELECT coalesce(sum(invocations), 0) FROM stg_numbered").fetchall()
    con.execute("DROP TABLE stg_numbered")
    con.execute("DROP TABLE stg_kernels")
    return int(total[0][0])


def bad_durations_warning(count: int) -> str:
    return (
        f"{count} kernel(s) have no valid duration (they end before they start, have no end, "
        f"or a time that is negative, not a number or centuries long); their times are left out"
    )


def _islands(con: duckdb.DuckDBPyConnection, report_id: int) -> None:
    """Merge each device's overlapping kernels into busy intervals once, at ingest: busy
    fraction, idle gaps and zooming then read these instead of every launch."""
    con.execute(
        f"INSERT INTO islands SELECT {report_id}, device, min(start_ns), max(end_ns) FROM ("
        f"SELECT *, sum(CASE WHEN start_ns > prev_end THEN 1 ELSE 0 END) OVER (PARTITION BY "
        f"device ORDER BY start_ns, end_ns) AS island FROM (SELECT device, start_ns, end_ns, "
        f"coalesce(max(end_ns) OVER (PARTITION BY device ORDER BY start_ns, end_ns ROWS BETWEEN "
        f"UNBOUNDED PRECEDING AND 1 PRECEDING), -1) AS prev_end FROM stg_numbered "
        f"WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL)) GROUP BY device, island"
    )


def _drop_bad_durations(con: duckdb.DuckDBPyConnection) -> int:
    """NULL the times of staged kernels that cannot be right; returns how many had one."""
    invalid = (
        "(start_ns IS NOT NULL AND (end_ns IS NULL OR end_ns < start_ns OR start_ns < 0 "
        f"OR end_ns > {LATEST_NS})) "
        "OR (time_s IS NOT NULL AND (NOT isfinite(time_s) OR time_s < 0))"
    )
    bad = con.execute(f"UPDATE stg_kernels SET time_s = NULL, end_ns = NULL WHERE {invalid}")
    count = bad.fetchall()[0][0]  # DuckDB answers an UPDATE with the rows it changed
    null_non_finite(con, "stg_kernels")  # min/max/med of stats rows: only columns with any
    return int(count)


class NotStreamable(Exception):
    """A traced kernel table that :class:`TraceWriter` does not take (rows out of start order, a
    missing start, a device id beyond 32 bits, a column of another type): the caller removes
    what was written and stages it through ``stg_kernels``/:func:`write_report`, which handles
    every case."""


# Distinct devices beyond which busy intervals are merged once at the end, in SQL, rather than
# per batch (the per-batch merge loops over devices).
STREAM_DEVICES = 64


class TraceWriter:
    """Write a trace's kernels straight into ``launches``/``spans``/``values_r{N}`` batch by
    batch, for exports whose rows are already in launch order (every real nsys export seen:
    rows by start time). Launch ids are then row positions, so the sort, the staging table and
    the window functions of :func:`write_report` are not needed; the result is the same rows.

    Batches hold ``source_row``, ``start_ns``, ``end_ns``, ``device``, ``stream``, ``name_id``
    (int64) and, when ``detail``, ``grid_size``/``block_size`` (text). ``names`` maps name ids to
    text (``id``, ``value``: one row per id). ``nvtx``: a table ``(source_row, inner, outer)``
    to join, or None. On :class:`NotStreamable` the caller removes the report's rows and reads
    the file the staged way. The values table is created first, by :meth:`create_values`.

    Constants reach Arrow's compute functions as Arrow values made by DuckDB, never as Python
    numbers: converting one makes pyarrow import pandas (0.25 s, a sixth of a million-kernel
    open).
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        report_id: int,
        names: pa.Table,
        *,
        detail: bool,
        nvtx: str | None,
    ):
        self.con, self.rid, self.detail, self.nvtx = con, int(report_id), detail, nvtx
        self.name_ids = names.column("id")
        constants = con.sql(
            f"SELECT '(unnamed)' AS unnamed, {names.num_rows}::INTEGER AS unnamed_index, "
            f"0::BIGINT AS zero, {LATEST_NS}::BIGINT AS latest, -1::BIGINT AS before"
        ).to_arrow_table()
        self.name_text = pa.concat_arrays(
            [
                names.column("value").combine_chunks().cast(pa.string()),
                constants.column("unnamed").combine_chunks(),
            ]
        )
        self.unnamed_index = constants.column("unnamed_index")[0]  # "(unnamed)", the last entry
        self.zero, self.latest = constants.column("zero")[0], constants.column("latest")[0]
        self.before = constants.column("before").combine_chunks()  # ends before any start
        self.launches = self.unnamed = self.bad = 0
        self.last: tuple[int, int] | None = None  # (source_row, start_ns) of the last row
        # device → (start, running end) of its interval still open, as 1-value arrays
        self.open_islands: dict[int, tuple[pa.Array, pa.Array]] = {}
        self.islands_in_sql = False
        self.devices: set[int] = set()
        # the facts too, as store_facts would keep them (text columns only where launches have
        # text: NVTX names where ranges were tied to kernels, sizes where they were read)
        facts = ["launch_id", "kernel", "time_s"]
        facts += ["nvtx"] if nvtx is not None else []
        facts += ["block_size", "grid_size"] if detail else []
        self.facts = begin_facts(con, self.rid, {DURATION}, facts)

    @staticmethod
    def create_values(con: duckdb.DuckDBPyConnection, report_id: int) -> None:
        """The empty ``values_r{N}`` the writer fills. (Never create it in a transaction that
        then bulk-inserts into it: DuckDB 2.0.0 loses those rows from view after the COMMIT
        until the database is reopened.)"""
        con.execute(
            create_values(
                report_id,
                f'SELECT CAST(NULL AS BIGINT) AS launch_id, CAST(NULL AS DOUBLE) AS "{DURATION}" '
                f"LIMIT 0",
            )
        )

    def write(self, batch: pa.RecordBatch) -> None:
        """Check that ``batch`` continues the launch order, then write its rows."""
        pc = _compute()
        n = batch.num_rows
        if n == 0:
            return
        cols = batch.columns
        if any(c.type != pa.int64() for c in cols[:6]) or (
            self.detail and any(c.type != pa.string() for c in cols[6:8])
        ):
            raise NotStreamable("a column of another type")
        source, start, end, device, stream, name_id = cols[:6]
        if start.null_count or source.null_count:
            raise NotStreamable("a kernel without a start")
        if n > 1 and not (
            pc.all(pc.less(source.slice(0, n - 1), source.slice(1))).as_py()
            and pc.all(pc.less_equal(start.slice(0, n - 1), start.slice(1))).as_py()
        ):
            raise NotStreamable("rows out of start order")
        first = (source[0].as_py(), start[0].as_py())
        if self.last is not None and not (self.last[0] < first[0] and self.last[1] <= first[1]):
            raise NotStreamable("rows out of start order")
        self.last = (source[n - 1].as_py(), start[n - 1].as_py())
        try:
            device32 = device.cast(pa.int32())  # range-checked: a 64-bit id is damage
        except pa.ArrowInvalid as exc:
            raise NotStreamable("a device id beyond 32 bits") from exc
        # a NULL id names nothing, as in the staged path's join (even if StringIds has one)
        index = pc.index_in(name_id, value_set=self.name_ids, skip_nulls=True)
        self.unnamed += index.null_count
        kernel = pa.DictionaryArray.from_arrays(
            pc.fill_null(index, self.unnamed_index), self.name_text
        )
        # _drop_bad_durations' rule for a row with a start: no end, an end before the start,
        # a negative start or an end past LATEST_NS
        bad = pc.or_kleene(
            pc.or_kleene(pc.is_null(end), pc.less(end, start)),
            pc.or_kleene(pc.less(start, self.zero), pc.greater(end, self.latest)),
        )
        nbad = pc.sum(bad).as_py() or 0
        self.bad += nbad
        good_end = pc.if_else(bad, pa.nulls(n, pa.int64()), end) if nbad else end
        arrays = {
            "launch_id": self._positions(n),
            "source_row": source,
            "start_ns": start,
            "end_ns": good_end,
            "device": device32,
            "stream": stream,
            "kernel": kernel,
            "stream_txt": _as_text(stream),
            "device_txt": _as_text(device32),
        }
        if self.detail:
            arrays["grid_size"], arrays["block_size"] = cols[6], cols[7]
        self._insert(pa.table(arrays), first[0], self.last[0])
        self._islands(device32, start, good_end, pc.invert(bad) if nbad else None)
        self.launches += n

    def _positions(self, n: int) -> pa.Array:
        """Launch ids of the next ``n`` rows: their positions in the export."""
        lo, hi = self.launches, self.launches + n
        if hasattr(pa, "arange"):  # newer pyarrow; the same from DuckDB otherwise
            return pa.arange(lo, hi)
        table = self.con.sql(f"SELECT range FROM range({lo}, {hi})").to_arrow_table()
        return table.column(0).combine_chunks()

    def _insert(self, table: pa.Table, lo: int, hi: int) -> None:
        rid, con = self.rid, self.con
        sizes = "b.block_size, b.grid_size" if self.detail else "NULL, NULL"
        join, inner = "", "NULL"
        if self.nvtx is not None:
            join = (
                f"LEFT JOIN (SELECT * FROM {self.nvtx} WHERE source_row BETWEEN {int(lo)} AND "
                f"{int(hi)}) a ON a.source_row = b.source_row"
            )
            inner = "a.inner"
        with scanned(con, nsys_batch=table):
            con.execute(
                f"INSERT INTO launches SELECT {rid}, b.launch_id, NULL, NULL, NULL, b.kernel, "
                f"NULL, NULL, b.stream_txt, {sizes}, b.device_txt, NULL, {inner}, 1 "
                f"FROM nsys_batch b {join}"
            )
            con.execute(
                f"INSERT INTO spans SELECT {rid}, launch_id, start_ns, end_ns, device, stream, "
                f"source_row FROM nsys_batch WHERE end_ns IS NOT NULL"
            )
            duration = "(CAST(b.end_ns AS DOUBLE) - b.start_ns) / 1e9"  # as write_report's
            con.execute(
                f"INSERT INTO {VALUES_R.name(rid)} SELECT launch_id, {duration} FROM nsys_batch b"
            )
            con.execute(
                f"INSERT INTO {self.facts} BY NAME SELECT b.launch_id, b.kernel, "
                f"{duration} AS time_s"
                + (", a.inner AS nvtx" if self.nvtx is not None else "")
                + (", b.block_size, b.grid_size" if self.detail else "")
                + f" FROM nsys_batch b {join}"
            )
            if self.nvtx is not None:
                con.execute(
                    f"INSERT INTO launch_nvtx SELECT {rid}, b.launch_id, a.inner, a.outer "
                    f"FROM nsys_batch b {join} "
                    f"WHERE a.inner IS NOT NULL OR a.outer IS NOT NULL"
                )

    def _islands(
        self, device: pa.Array, start: pa.Array, end: pa.Array, keep: pa.Array | None
    ) -> None:
        """Busy intervals per device, carried from batch to batch: rows come in start order,
        so a row opens a new interval exactly when it starts after every earlier end (the
        rule of :func:`_islands`; rows that start together end up in one interval whatever
        their order)."""
        pc = _compute()
        if self.islands_in_sql:
            return
        if keep is not None:  # rows whose times were dropped are no span
            device, start, end = device.filter(keep), start.filter(keep), end.filter(keep)
        found = pc.unique(device)
        self.devices.update(found.to_pylist())
        if len(self.devices) > STREAM_DEVICES:
            self.islands_in_sql = True  # merged once at the end instead (finish)
            return
        if len(found) == 1:  # the usual case: no copies
            self._merge(found[0].as_py(), start, end)
            return
        for i in range(len(found)):
            mask = pc.equal(device, found[i])
            self._merge(found[i].as_py(), start.filter(mask), end.filter(mask))

    def _merge(self, dev: int, start: pa.Array, end: pa.Array) -> None:
        """Write one device's intervals that this batch closes; the last one stays open."""
        pc = _compute()
        n = len(start)
        if n == 0:
            return
        carry = self.open_islands.get(dev)
        running = pc.cumulative_max(end)
        if carry is not None:
            running = pc.max_element_wise(running, carry[1][0])
        # previous[i]: the latest end before row i (that of the open interval for row 0)
        previous = pa.concat_arrays(
            [carry[1] if carry is not None else self.before, running.slice(0, n - 1)]
        )
        starts = pc.indices_nonzero(pc.greater(start, previous))
        k = len(starts)
        if k == 0:  # every row extends the interval the last batch left open
            assert carry is not None  # a device's first row always opens one
            self.open_islands[dev] = (carry[0], running.slice(n - 1, 1))
            return
        lo = start.take(starts)
        # an interval ends where the next opens: its end is the running end just before
        his = [previous.take(starts.slice(1))]
        los = [lo.slice(0, k - 1)]
        if carry is not None:
            los.insert(0, carry[0])
            his.insert(0, previous.take(starts.slice(0, 1)))
        self.open_islands[dev] = (lo.slice(k - 1, 1), running.slice(n - 1, 1))
        self._write_islands(dev, pa.concat_arrays(los), pa.concat_arrays(his))

    def _write_islands(self, dev: int, lo: pa.Array, hi: pa.Array) -> None:
        if len(lo):
            with scanned(self.con, nsys_closed=pa.table({"start_ns": lo, "end_ns": hi})):
                self.con.execute(
                    f"INSERT INTO islands SELECT {self.rid}, {int(dev)}, start_ns, end_ns "
                    f"FROM nsys_closed"
                )

    def finish(self, warnings: list[str] | None = None) -> int:
        """Close the last intervals, register the duration metric; returns the launches."""
        rid = self.rid
        if self.islands_in_sql:  # from every span, those merged per batch before included
            self.con.execute(f"DELETE FROM islands WHERE report_id = {rid}")
            self.con.execute(
                f"CREATE OR REPLACE TEMP TABLE stg_numbered AS SELECT device, start_ns, end_ns "
                f"FROM spans WHERE report_id = {rid}"
            )
            _islands(self.con, rid)
            self.con.execute("DROP TABLE stg_numbered")
        else:
            for dev, (lo, hi) in sorted(self.open_islands.items()):
                self._write_islands(dev, lo, hi)
        if self.launches == 0:  # no text in any launch: store_facts' own (empty) table
            drop_facts(self.con, rid)
        if self.bad and warnings is not None:
            warnings.append(bad_durations_warning(self.bad))
        self.con.execute(
            "INSERT INTO catalogue VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [rid, DURATION, DURATION, "nsys", "s", "s", 1.0, "nsys", True, True],
        )
        return self.launches


def _as_text(values: pa.Array) -> pa.DictionaryArray:
    """``CAST(x AS VARCHAR)`` of a column with few distinct values, as a dictionary: DuckDB
    casts each row's number to text itself about 10× slower."""
    pc = _compute()
    encoded = pc.dictionary_encode(values)
    return pa.DictionaryArray.from_arrays(encoded.indices, encoded.dictionary.cast(pa.string()))


def names_any(ids: pa.Array, wanted: pa.Array) -> bool:
    """Whether any of ``ids`` is in ``wanted``."""
    pc = _compute()
    return bool(pc.any(pc.is_in(ids, value_set=wanted)).as_py())


def _compute() -> ModuleType:
    """``pyarrow.compute``, imported on first use: it takes ~0.1 s, which only a first open
    of a trace needs (a cached re-open never writes one)."""
    import pyarrow.compute

    return pyarrow.compute
