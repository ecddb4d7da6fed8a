"""Nsight Systems exports of every schema era: one reader over SQLite files and parquetdirs.

``nsys export --type sqlite`` files are read with Python's own ``sqlite3`` (DuckDB's sqlite
extension is downloaded on first use and so fails on an offline login node);
``--type parquetdir`` folders hold the same tables as Parquet files, read by DuckDB. Both are
an :class:`Export`: tables and columns are looked up, never assumed — the 2020-era export has
``TARGET_INFO_CUDA_GPU`` and no ``mangledName``, 2023 adds ``EXPORT_META_DATA``, 2024–25 rename
it ``META_DATA_EXPORT`` and add ``greenContextId``, ``graphId``, clusters…

SQLite kernel rows are read in chunks of plain integers (names stay ids until DuckDB joins
``StringIds``): the per-value cost of ``sqlite3`` dominates ingest, so fewer columns is faster.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import shutil
import sqlite3
import tempfile
import weakref
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow as pa

from roofscope.errors import RoofscopeError
from roofscope.ingest.nsys.arrow import ArrowSqlite, ArrowUnfit, read_ahead
from roofscope.ingest.nsys.tables import (
    LATEST_NS,
    MEM_KINDS,
    MEMCPY_KINDS,
    PAGEABLE,
    PINNED,
    NotStreamable,
    TraceWriter,
    create_staging,
    host_kind,
    names_any,
    write_report,
)
from roofscope.ingest.report_info import ReportInfo
from roofscope.ingest.sniff import duckdb_name, open_input, sidecars
from roofscope.interrupts import connect as duckdb_connect
from roofscope.metrics import drop_facts
from roofscope.schema import VALUES_R
from roofscope.sqlutil import insert_rows, quote_ident, scanned

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
CHUNK = 250_000
# ROOFSCOPE_NSYS_READER=sqlite3 reads every table through Python's sqlite3 (the reader before
# the Arrow one: for comparisons, and a way out should the driver misbehave on some system).
READER_ENV = "ROOFSCOPE_NSYS_READER"
# From this many kernels a file that the Arrow reader cannot take says so (it is read, slower).
SLOW_NOTE_KERNELS = 1_000_000
# Up to this many kernels, grid and block sizes are copied into the store; above it they are
# read from the export for the one launch a user opens (copying them doubles ingest time).
DETAIL_COLUMNS_LIMIT = 100_000
NVTX_PUSHPOP, NVTX_STARTEND = 59, 60
_RANGES = pa.schema(
    [("tid", pa.int64()), ("start_ns", pa.int64()), ("end_ns", pa.int64()), ("name", pa.string())]
)
NO_KERNELS = (
    "no CUDA kernels in this export (was nsys run with --trace=cuda, and did the program "
    "launch any kernel in the profiled range?)"
)


class _Connection(sqlite3.Connection):
    """A connection that remembers the URI it opened, so that the Arrow reader
    (:mod:`roofscope.ingest.nsys.arrow`) opens the very same database, recovery included."""

    uri: str | None = None


def _open(uri: str) -> sqlite3.Connection:
    con = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=_Connection)
    con.uri = uri
    return con


class _CopyConnection(_Connection):
    """A connection to a private copy of an export; the copy goes when the connection does."""

    cleanup: weakref.finalize | None = None

    def close(self) -> None:
        super().close()
        if self.cleanup is not None:
            self.cleanup()


def connect(path: Path) -> sqlite3.Connection:
    """Read-only, with SQLite's own recovery: committed rows still in a ``-wal`` are read, a
    hot ``-journal`` is rolled back and a live writer's lock is waited for, as ``sqlite3``
    itself would. Where that cannot happen in place without writing beside the file (a
    ``-wal`` without its ``-shm`` index, which reading would create, or cannot in a read-only
    folder; a hot journal, which a read-only connection may not roll back) the file and its
    sidecars are copied to a private temporary folder and read there. Without
    sidecars a file whose locks cannot be taken (some read-only mounts) is read lock-free."""
    resolved = path.resolve()
    uri = resolved.as_uri()
    pending = sidecars(resolved)
    shm = resolved.with_name(resolved.name + "-shm")
    if any(p.name.endswith("-wal") for p in pending) and not shm.exists():
        # reading in place would leave a new -shm in the user's folder (or fail read-only)
        return _recovered_copy(resolved, pending, "no -shm beside its -wal")
    con = _open(uri + "?mode=ro")
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        return con
    except sqlite3.OperationalError as exc:
        con.close()
        pending = sidecars(resolved)  # again: a writer may have made one meanwhile
        if not pending:  # nothing to apply: the main file alone is the database
            return _open(uri + "?mode=ro&immutable=1")
        return _recovered_copy(resolved, pending, exc)
    except sqlite3.Error:
        con.close()  # not a database, damaged…: reported by the caller's own reads
        return _open(uri + "?mode=ro&immutable=1")


def _recovered_copy(path: Path, pending: list[Path], why: object) -> sqlite3.Connection:
    """Copy ``path`` with its ``-wal``/``-journal`` (never the ``-shm``: SQLite rebuilds it) and
    open the copy read-write so SQLite applies them; refuse rather than read without them."""
    names = ", ".join(p.name for p in pending)
    tmp = Path(tempfile.mkdtemp(prefix="roofscope-sqlite-"))
    try:
        copy = tmp / path.name
        shutil.copyfile(path, copy)
        for side in pending:
            shutil.copyfile(side, tmp / side.name)
        con = sqlite3.connect(copy, check_same_thread=False, factory=_CopyConnection)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RoofscopeError(
            f"has {names} beside it holding data SQLite must apply, which cannot be done in "
            f"place ({why}) nor in a temporary copy ({exc.strerror or exc})",
            path=str(path),
            hint=f"where the file is writable run: sqlite3 {path.name} "
            f"'PRAGMA wal_checkpoint(TRUNCATE)', or copy it with {names} to a writable folder",
        ) from exc
    con.cleanup = weakref.finalize(con, shutil.rmtree, tmp, ignore_errors=True)
    con.uri = copy.resolve().as_uri()
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except sqlite3.Error:
        con.close()
        raise
    return con


def schema(con: sqlite3.Connection) -> dict[str, set[str]]:
    tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {t: {r[1] for r in con.execute(f"PRAGMA table_info({quote_ident(t)})")} for t in tables}


class BadValue(ValueError):
    """A column of an export holds a value its type cannot (text where nsys writes integers)."""


class Export(Protocol):
    """The tables of one nsys export, queried with SQL that SQLite and DuckDB both accept."""

    tables: dict[str, set[str]]

    def arrow(self, sql: str, schema_: pa.Schema) -> pa.Table: ...

    def fetchall(self, sql: str) -> list[tuple]: ...


def has(export: Export, table: str, *columns: str) -> bool:
    return table in export.tables and all(c in export.tables[table] for c in columns)


class SqliteExport:
    """An SQLite export: small answers through ``sqlite3``, tables through the Arrow reader where
    it gives exactly what ``sqlite3`` would (else through ``sqlite3``, value by value)."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.tables = schema(con)
        self._fast: ArrowSqlite | None = None
        self._fast_tried = False

    @property
    def fast(self) -> ArrowSqlite | None:
        """The Arrow reader of the same database, opened on first use; None without it."""
        if not self._fast_tried:
            self._fast_tried = True
            if os.environ.get(READER_ENV, "").strip().lower() != "sqlite3":
                self._fast = ArrowSqlite.open(getattr(self.con, "uri", None))
        return self._fast

    def close(self) -> None:
        if self._fast is not None:
            self._fast.close()
            self._fast = None
        self.con.close()

    def fetchall(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def arrow(self, sql: str, schema_: pa.Schema) -> pa.Table:
        if self.fast is not None:
            try:
                return self.fast.table(sql, schema_)
            except ArrowUnfit:
                pass  # read again below, value by value, with sqlite3's checks and messages
        return self.plain_arrow(sql, schema_)

    def plain_arrow(self, sql: str, schema_: pa.Schema) -> pa.Table:
        cur = self.con.execute(sql)
        batches = []
        while chunk := cur.fetchmany(CHUNK):
            columns = zip(*chunk, strict=True)
            arrays = [_array(c, f) for c, f in zip(columns, schema_, strict=True)]
            batches.append(pa.record_batch(arrays, schema=schema_))
        return pa.Table.from_batches(batches, schema=schema_)


def _array(values: tuple, field: pa.Field) -> pa.Array:
    """SQLite columns are typed per value: a damaged or hand-edited export can hold text in an
    integer column, which Arrow refuses."""
    try:
        return pa.array(values, type=field.type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        kinds = int if pa.types.is_integer(field.type) else int | float
        bad = next((v for v in values if v is not None and not isinstance(v, kinds)), None)
        shown = f"{bad!r}" if bad is not None else "a value out of range"
        raise BadValue(f"{field.name} holds {shown[:60]} where a {field.type} is expected") from exc


class ParquetExport:
    """A parquetdir: one ``TABLE.parquet`` per table, viewed under the SQLite table names
    (``rowid`` = row number + 1, as in the SQLite export)."""

    def __init__(self, directory: Path):
        self.con = duckdb_connect()
        self.tables: dict[str, set[str]] = {}
        self._fds: list[int] = []  # DuckDB reads each table by descriptor, never by name
        for file in sorted(directory.glob("*.parquet")):
            self._fds.append(open_input(file))
            source = "'" + duckdb_name(self._fds[-1]) + "'"
            try:
                self.con.execute(
                    f"CREATE VIEW {quote_ident(file.stem)} AS SELECT file_row_number + 1 AS "
                    f"rowid, * EXCLUDE (file_row_number) "
                    f"FROM read_parquet({source}, file_row_number = true)"
                )
                cols = self.con.execute(f"DESCRIBE {quote_ident(file.stem)}").fetchall()
            except duckdb.Error as exc:
                self.close()
                raise RoofscopeError(
                    f"its table {file.name} is not a readable Parquet file "
                    f"({str(exc).strip().splitlines()[0][:160]})",
                    path=str(directory),
                    hint="the export is damaged or was cut; export it again with "
                    "nsys export --type parquetdir",
                ) from exc
            self.tables[file.stem] = {c[0] for c in cols} - {"rowid"}

    def fetchall(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def arrow(self, sql: str, schema_: pa.Schema) -> pa.Table:
        table = self.con.sql(sql).to_arrow_table()
        return table.rename_columns(schema_.names).cast(schema_)

    def close(self) -> None:
        self.con.close()
        while self._fds:
            os.close(self._fds.pop())


def ingest_nsys_sqlite(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    info = ReportInfo(report_id, str(path), "nsys-sqlite")
    sq = None
    try:
        sq = connect(path)
        export = SqliteExport(sq)
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        if sq is not None:
            sq.close()
        raise RoofscopeError(
            f"is not a readable SQLite database ({_not_utf8(exc)})",
            path=str(path),
            hint="export it again with: nsys export --type sqlite REPORT.nsys-rep",
        ) from exc
    try:
        _check_nsys(export, path, "an SQLite database")
        read_export(con, export, info)
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        raise RoofscopeError(
            f"could not be read as an nsys export ({_not_utf8(exc)})",
            path=str(path),
            hint="the file may be truncated; export it again with nsys export --type sqlite",
        ) from exc
    except (BadValue, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise _bad_value(path, exc) from exc
    finally:
        export.close()  # the sqlite3 connection and the Arrow reader's
    return info


def _not_utf8(exc: Exception) -> str:
    """SQLite hands text over as UTF-8; bytes that are not (a damaged page) fail to decode."""
    return "it holds text that is not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)


def _bad_value(path: Path, exc: Exception) -> RoofscopeError:
    first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
    return RoofscopeError(
        f"a table of this nsys export holds a value of the wrong type ({first})",
        path=str(path),
        hint="the export is damaged or was edited; export it again with nsys export",
    )


def ingest_nsys_parquet(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    info = ReportInfo(report_id, str(path), "nsys-parquetdir")
    export = ParquetExport(path)
    try:
        _check_nsys(export, path, "a folder of Parquet files")
        read_export(con, export, info)
    except (BadValue, pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise _bad_value(path, exc) from exc
    finally:
        export.close()
    return info


def _check_nsys(export: Export, path: Path, what: str) -> None:
    if "StringIds" not in export.tables or not any(
        t.startswith(("CUPTI_", "TARGET_INFO_", "NVTX_")) for t in export.tables
    ):
        raise RoofscopeError(
            f"is {what} but not an Nsight Systems export (no StringIds/CUPTI tables)",
            path=str(path),
            hint="nsys export --type sqlite REPORT.nsys-rep writes one",
        )
    if not has(export, "StringIds", "id", "value"):
        raise RoofscopeError(
            "its StringIds table lacks the id or value column",
            path=str(path),
            hint="the export is damaged or was edited; export it again with nsys export",
        )


def read_export(con: duckdb.DuckDBPyConnection, export: Export, info: ReportInfo) -> None:
    rid = info.report_id
    conflicts = _strings(con, export)
    create_staging(con)
    streamed: _Streamed | None = None
    if KERNEL in export.tables:
        _check_kernel_columns(export, info)
        streamed = _stream_kernels(con, export, info)
        if streamed is None:
            unnamed = _kernels(con, export, info)
            nvtx = _nvtx(con, export, rid)
            _attribute_staged(con)
        else:
            unnamed, nvtx = streamed.unnamed, streamed.nvtx
        if unnamed:
            info.warnings.append(
                f"{unnamed} kernel(s) name a string id that StringIds does not hold; "
                f"shown as (unnamed) — the export may be damaged"
            )
        if nvtx:
            info.warnings.append(nvtx)
    else:
        info.warnings.append(NO_KERNELS)
    if conflicts:
        info.warnings.append(
            f"{conflicts} string id(s) appear in StringIds more than once with different text "
            f"(no kernel uses them); the first row's text is used, so NVTX range names may be "
            f"wrong — the export may be damaged"
        )
    if streamed is None:
        info.launches = write_report(con, rid, info.warnings)
    else:
        con.execute("DROP TABLE stg_kernels")
        info.launches = streamed.launches
        info.warnings.extend(streamed.warnings)
    if info.launches == 0 and NO_KERNELS not in info.warnings:
        info.warnings.append(NO_KERNELS)
    dropped = _memops(con, export, rid)
    if dropped:
        info.warnings.append(
            f"{dropped} memory operation(s) with impossible times (no end, an end before the "
            f"start, or centuries long) left out"
        )
    dropped = _host_syncs(con, export, rid)
    if dropped:
        info.warnings.append(f"{dropped} synchronising API call(s) with impossible times left out")
    _gpu_metrics(con, export, rid)
    _gpus(con, export, rid)
    con.execute("DROP TABLE nsys_str")
    con.execute("DROP TABLE nsys_str_conflicts")
    gpu = con.execute(
        "SELECT g.name, g.cc, g.sm_count FROM gpus g LEFT JOIN (SELECT device, "
        "sum(end_ns - start_ns) AS t FROM spans WHERE report_id = ? GROUP BY device) s "
        "ON s.device = g.device WHERE g.report_id = ? ORDER BY s.t DESC NULLS LAST, g.device "
        "LIMIT 1",
        [rid, rid],
    ).fetchall()
    if gpu:
        info.gpu_name, info.cc, info.sm_count = gpu[0]


def _check_kernel_columns(export: Export, info: ReportInfo) -> None:
    """Every nsys release writes start, end and a name id; a kernel table without them is
    damaged, not empty."""
    cols = export.tables[KERNEL]
    lacking = [c for c in ("start", "end") if c not in cols]
    if not {"demangledName", "shortName"} & cols:
        lacking.append("demangledName/shortName")
    if lacking:
        raise RoofscopeError(
            f"its {KERNEL} table lacks the column(s) {', '.join(lacking)}",
            path=info.path,
            hint="the export is damaged or was edited; export it again with nsys export",
        )


# One row per StringIds id, the first in the table (an id twice would repeat every row that
# names it in a join): SQL that SQLite and DuckDB both accept.
FIRST_STRINGS = (
    "SELECT id, value FROM StringIds WHERE rowid IN (SELECT min(rowid) FROM StringIds GROUP BY id)"
)


def _strings(con: duckdb.DuckDBPyConnection, export: Export) -> int:
    """``nsys_str``: one text per string id (the first row's), so no join repeats a kernel;
    ``nsys_str_conflicts``: ids listed twice with different texts. Returns how many."""
    strings = export.arrow(
        "SELECT rowid, id, value FROM StringIds",
        pa.schema([("row", pa.int64()), ("id", pa.int64()), ("value", pa.string())]),
    )
    with scanned(con, nsys_strings=strings):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE nsys_str AS SELECT id, arg_min(value, row) AS value "
            "FROM nsys_strings GROUP BY id"
        )
        ((conflicts,),) = con.execute(
            "CREATE OR REPLACE TEMP TABLE nsys_str_conflicts AS SELECT id, "
            "list(value ORDER BY row) AS texts FROM nsys_strings GROUP BY id "
            "HAVING count(DISTINCT value) > 1"
        ).fetchall()
    return int(conflicts)


def _kernel_fields(export: Export) -> tuple[str, list[tuple[str, pa.DataType, str]], bool]:
    """The name column, the kernel columns read (name, type, SQL) and whether grid and block
    sizes are among them."""
    cols = export.tables[KERNEL]
    name = "demangledName" if "demangledName" in cols else "shortName"
    ((top,),) = export.fetchall(f"SELECT max(rowid) FROM {KERNEL}")
    dims = {"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"}
    detail = (top or 0) <= DETAIL_COLUMNS_LIMIT and dims <= cols
    device = "deviceId" if "deviceId" in cols else "0"
    stream = "streamId" if "streamId" in cols else "NULL"
    fields = [
        ("source_row", pa.int64(), "rowid"),
        ("start_ns", pa.int64(), "start"),
        ("end_ns", pa.int64(), '"end"'),
        ("device", pa.int32(), device),
        ("stream", pa.int64(), stream),
        ("name_id", pa.int64(), name),
    ]
    if detail:
        fields += [
            ("grid_size", pa.string(), "printf('(%d, %d, %d)', gridX, gridY, gridZ)"),
            ("block_size", pa.string(), "printf('(%d, %d, %d)', blockX, blockY, blockZ)"),
        ]
    return name, fields, detail


@dataclass
class _Streamed:
    """What :func:`_stream_kernels` wrote: counts and warnings in the order the staged path
    gives them."""

    launches: int
    unnamed: int
    nvtx: str | None
    warnings: list[str]


def _stream_kernels(
    con: duckdb.DuckDBPyConnection, export: Export, info: ReportInfo
) -> _Streamed | None:
    """Kernels (and their NVTX ranges) read as Arrow batches and written straight into the
    store; None, with what was written removed again, where the file needs the staged path
    (rows out of start order, values of odd types, a string id clash, no Arrow reader): that
    path then reads it with every check and message it always had.

    No transaction around it: DuckDB holds a transaction's appended rows in memory until it
    commits (1.53 GB peak at ten million kernels, 0.99 GB without; docs/decisions.md)."""
    if not isinstance(export, SqliteExport):
        return None  # a parquetdir: DuckDB reads it, already as Arrow
    fast = export.fast
    if fast is None:
        _note_plain(export, info, "the adbc-driver-sqlite package could not be loaded")
        return None
    rid = info.report_id
    _, fields, detail = _kernel_fields(export)
    sql = f"SELECT {', '.join(f[2] for f in fields)} FROM {KERNEL}"
    try:
        TraceWriter.create_values(con, rid)
        nvtx = _nvtx(con, export, rid)
        names = con.sql("SELECT id, value FROM nsys_str ORDER BY id").to_arrow_table()
        clashes = con.sql("SELECT id FROM nsys_str_conflicts").to_arrow_table().column(0)
        attr = "nsys_attr" if _exists(con, "nsys_attr") else None
        writer = TraceWriter(con, rid, names, detail=detail, nvtx=attr)
        with contextlib.closing(read_ahead(lambda: fast.batches(sql))) as batches:
            for batch in batches:  # (closing stops the reading thread at once on an error)
                if len(clashes) and names_any(batch.column(5), clashes):
                    raise NotStreamable("a kernel named by a string id listed twice")
                writer.write(batch)
        warnings: list[str] = []
        launches = writer.finish(warnings)
    except Exception as exc:  # any: the staged path reads the file again and decides
        _discard(con, rid)
        _note_plain(export, info, _reason(exc))
        return None
    finally:
        con.execute("DROP TABLE IF EXISTS nsys_attr")
    return _Streamed(launches, writer.unnamed, nvtx, warnings)


# What _stream_kernels writes for a report, all of it removed when it hands the file over.
_STREAMED_TABLES = ("launches", "spans", "launch_nvtx", "islands", "nvtx_ranges", "catalogue")


def _discard(con: duckdb.DuckDBPyConnection, report_id: int) -> None:
    rid = int(report_id)
    for table in _STREAMED_TABLES:
        con.execute(f"DELETE FROM {table} WHERE report_id = {rid}")
    con.execute(f"DROP TABLE IF EXISTS {VALUES_R.name(rid)}")
    drop_facts(con, rid)


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
    return text


def _note_plain(export: Export, info: ReportInfo, why: str) -> None:
    """Say that a large export is read the slow way; small ones read fast either way."""
    if os.environ.get(READER_ENV, "").strip().lower() == "sqlite3":
        return
    try:
        ((top,),) = export.fetchall(f"SELECT max(rowid) FROM {KERNEL}")
    except sqlite3.Error:
        return  # a damaged file: the staged path says what is wrong with it
    if isinstance(top, int) and top >= SLOW_NOTE_KERNELS:
        info.warnings.append(
            f"read with Python's sqlite3 rather than the Arrow reader ({why}): this first open "
            f"of {top:,} kernels is several times slower; later opens read the cache"
        )


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]
        ).fetchall()[0][0]
    )


def _kernels(con: duckdb.DuckDBPyConnection, export: Export, info: ReportInfo) -> int:
    """Stage the kernel rows; returns how many name a string id missing from StringIds.
    Refuses a kernel name id that StringIds lists twice with different texts: which name is
    right cannot be known."""
    name, fields, detail = _kernel_fields(export)
    sql = f"SELECT {', '.join(f[2] for f in fields)} FROM {KERNEL}"
    table = export.arrow(sql, pa.schema([(f[0], f[1]) for f in fields]))
    sizes = "k.grid_size, k.block_size" if detail else "NULL, NULL"
    with scanned(con, nsys_kernels=table):
        clash = con.execute(
            "SELECT c.id, c.texts, count(*) FROM nsys_kernels k JOIN nsys_str_conflicts c "
            "ON c.id = k.name_id GROUP BY c.id, c.texts ORDER BY c.id LIMIT 1"
        ).fetchall()
        if clash:
            sid, texts, n = clash[0]
            shown = " / ".join(repr(t[:60]) for t in texts[:3])
            raise RoofscopeError(
                f"its StringIds table lists id {sid} {len(texts)} times with different texts "
                f"({shown}), and {n} kernel(s) are named by it ({KERNEL}.{name})",
                path=info.path,
                hint="the export is damaged or was edited; export it again with nsys export",
            )
        con.execute(
            f"INSERT INTO stg_kernels SELECT k.source_row, k.start_ns, k.end_ns, k.device, "
            f"k.stream, coalesce(s.value, '(unnamed)'), NULL, {sizes}, 1, "
            f"(CAST(k.end_ns AS DOUBLE) - k.start_ns) / 1e9, NULL, NULL, NULL, NULL, NULL "
            f"FROM nsys_kernels k "
            f"LEFT JOIN nsys_str s ON s.id = k.name_id"
        )
        unnamed = con.execute(
            "SELECT count(*) FROM nsys_kernels k ANTI JOIN nsys_str s ON s.id = k.name_id"
        ).fetchall()[0][0]
    return int(unnamed)


def _nvtx(con: duckdb.DuckDBPyConnection, export: Export, report_id: int) -> str | None:
    """Attribute each kernel to the NVTX ranges open on the thread that launched it, into the
    temporary table ``nsys_attr`` (``source_row``, ``inner``, ``outer``; absent when no kernel
    can be tied to a range).

    As ``nsys stats --report nvtx_kern_sum``: the kernel's CUDA API call (same
    ``correlationId``) happened on a thread at a time; the ranges open there and then enclose
    it. Returns a warning when ranges exist but kernels cannot be tied to threads.
    """
    if not has(export, "NVTX_EVENTS", "start", "end", "eventType", "globalTid"):
        return None
    text = "n.text" if has(export, "NVTX_EVENTS", "text") else "NULL"
    join = ""
    if has(export, "NVTX_EVENTS", "textId"):
        text, join = (
            f"coalesce({text}, s.value)",
            f"LEFT JOIN ({FIRST_STRINGS}) s ON s.id = n.textId",
        )
    ranges = export.fetchall(
        f'SELECT n.globalTid, n.start, n."end", '
        f"coalesce({text}, '(unnamed range)') "
        f"FROM NVTX_EVENTS n {join} WHERE n.eventType IN ({NVTX_PUSHPOP}, {NVTX_STARTEND}) "
        'AND n."end" IS NOT NULL AND n."end" >= n.start AND n.start >= 0'
    )
    if not ranges:
        return None
    table = pa.table([list(column) for column in zip(*ranges, strict=True)], schema=_RANGES)
    with scanned(con, nsys_ranges=table):
        con.execute(f"INSERT INTO nvtx_ranges SELECT {int(report_id)}, * FROM nsys_ranges")
    if not has(export, KERNEL, "correlationId") or not has(
        export, RUNTIME, "correlationId", "globalTid", "start"
    ):
        return "NVTX ranges found, but no CUDA API trace to tie kernels to threads"
    same_process = (
        " AND r.globalTid - (r.globalTid % 16777216) = k.globalPid"
        if has(export, KERNEL, "globalPid")
        else ""
    )
    calls = export.arrow(
        f"SELECT k.rowid, r.globalTid, r.start FROM {KERNEL} k JOIN {RUNTIME} r "
        f"ON r.correlationId = k.correlationId{same_process}",
        pa.schema([("source_row", pa.int64()), ("tid", pa.int64()), ("t", pa.int64())]),
    )
    with scanned(con, nsys_calls=calls, nsys_segments=_segments(ranges)):
        # One row per kernel, whatever the runtime table holds: old exports (schema 2.x, MPI
        # runs) have two runtime rows for one correlationId, and a second row here would be a
        # second launch where the launches are written (TraceWriter joins this table). The
        # earliest call wins; a kernel whose calls hit no range keeps none.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE nsys_attr AS "
            "SELECT DISTINCT ON (c.source_row) c.source_row, s.inner, s.outer "
            "FROM nsys_calls c ASOF JOIN nsys_segments s ON c.tid = s.tid "
            "AND c.t >= s.seg_start WHERE c.t < s.seg_end ORDER BY c.source_row, c.t"
        )
    return None


def _attribute_staged(con: duckdb.DuckDBPyConnection) -> None:
    """Copy the NVTX attribution :func:`_nvtx` left in ``nsys_attr`` onto the staged kernels."""
    if not _exists(con, "nsys_attr"):
        return
    con.execute(
        "UPDATE stg_kernels SET nvtx_inner = a.inner, nvtx_outer = a.outer FROM nsys_attr a "
        "WHERE a.source_row = stg_kernels.source_row"
    )
    con.execute("DROP TABLE nsys_attr")


def _segments(ranges: list[tuple[int, int, int, str]]) -> pa.Table:
    """Cut each thread's time into pieces with a constant set of open ranges, and name the
    innermost (latest start) and outermost (earliest start) range of each piece."""
    by_tid: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for tid, start, end, name in ranges:
        by_tid[tid].append((start, end, name))
    out: dict[str, list] = {k: [] for k in ("tid", "seg_start", "seg_end", "inner", "outer")}
    for tid, items in by_tid.items():
        items.sort(key=lambda r: (r[0], -r[1]))
        bounds = sorted({t for s, e, _ in items for t in (s, e)})
        active: list[tuple[int, int, str]] = []
        nxt = 0
        for lo, hi in itertools.pairwise(bounds):
            while nxt < len(items) and items[nxt][0] <= lo:
                active.append(items[nxt])
                nxt += 1
            active = [r for r in active if r[1] > lo]
            if not active:
                continue
            inner = max(active, key=lambda r: (r[0], -r[1]))
            outer = min(active, key=lambda r: (r[0], -r[1]))
            for key, value in zip(out, (tid, lo, hi, inner[2], outer[2]), strict=True):
                out[key].append(value)
    return pa.table(
        out,
        schema=pa.schema(
            [
                ("tid", pa.int64()),
                ("seg_start", pa.int64()),
                ("seg_end", pa.int64()),
                ("inner", pa.string()),
                ("outer", pa.string()),
            ]
        ),
    )


def _memops(con: duckdb.DuckDBPyConnection, export: Export, report_id: int) -> int:
    """Memory copies and sets onto the timeline, each copy with its host memory (pageable or
    pinned, from ``srcKind``/``dstKind``); returns how many had impossible times (an end before
    the start, no end, past 2**62 ns) and were left out."""
    labels = dict(MEMCPY_KINDS)
    if has(export, "ENUM_CUDA_MEMCPY_OPER", "id", "label"):
        rows = export.fetchall("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER")
        labels.update((i, t) for i, t in rows if isinstance(i, int) and isinstance(t, str))
    mem_kinds = dict(MEM_KINDS)
    if has(export, "ENUM_CUDA_MEM_KIND", "id", "label"):
        rows = export.fetchall("SELECT id, label FROM ENUM_CUDA_MEM_KIND")
        mem_kinds.update((i, t) for i, t in rows if isinstance(i, int) and isinstance(t, str))
    parts = []
    memcpy = "CUPTI_ACTIVITY_KIND_MEMCPY"
    where = ("deviceId", "streamId")
    if has(export, memcpy, "start", "end", "bytes", "copyKind", *where):
        sides = "srcKind, dstKind" if has(export, memcpy, "srcKind", "dstKind") else "NULL, NULL"
        parts.append(
            f'SELECT start, "end", deviceId, streamId, bytes, copyKind, {sides} FROM {memcpy}'
        )
    memset = "CUPTI_ACTIVITY_KIND_MEMSET"
    if has(export, memset, "start", "end", "bytes", *where):
        parts.append(
            f'SELECT start, "end", deviceId, streamId, bytes, -1, NULL, NULL FROM {memset}'
        )
    fields = pa.schema(
        [
            ("start_ns", pa.int64()),
            ("end_ns", pa.int64()),
            ("device", pa.int32()),
            ("stream", pa.int64()),
            ("bytes", pa.float64()),
            ("kind_id", pa.int64()),
            ("src_kind", pa.int64()),
            ("dst_kind", pa.int64()),
        ]
    )
    if not parts:
        return 0
    # small lookup tables made by DuckDB: pyarrow would import pandas to convert Python lists
    con.execute("CREATE OR REPLACE TEMP TABLE nsys_labels (id BIGINT, label VARCHAR)")
    insert_rows(con, "nsys_labels", ("id", "label"), [*labels.items(), (-1, "memset")])
    con.execute("CREATE OR REPLACE TEMP TABLE nsys_hosts (id BIGINT, host VARCHAR)")
    insert_rows(
        con,
        "nsys_hosts",
        ("id", "host"),
        [(i, host_kind(label, None)) for i, label in mem_kinds.items()],
    )
    valid = f"m.start_ns >= 0 AND m.end_ns >= m.start_ns AND m.end_ns <= {LATEST_NS}"
    host = (
        f"CASE WHEN '{PAGEABLE}' IN (hs.host, hd.host) THEN '{PAGEABLE}' "
        f"WHEN '{PINNED}' IN (hs.host, hd.host) THEN '{PINNED}' END"
    )
    dropped = 0
    for sql in parts:
        table = export.arrow(sql, fields)
        with scanned(con, nsys_memops=table):
            ((inserted,),) = con.execute(  # DuckDB answers an INSERT with the rows it added
                f"INSERT INTO memops SELECT {int(report_id)}, m.start_ns, m.end_ns, m.device, "
                f"m.stream, m.bytes, coalesce(l.label, 'memcpy kind ' || m.kind_id), 1, "
                f"(CAST(m.end_ns AS DOUBLE) - m.start_ns) / 1e9, {host} FROM nsys_memops m "
                f"LEFT JOIN nsys_labels l ON l.id = m.kind_id "
                f"LEFT JOIN nsys_hosts hs ON hs.id = m.src_kind "
                f"LEFT JOIN nsys_hosts hd ON hd.id = m.dst_kind WHERE {valid}"
            ).fetchall()
            dropped += table.num_rows - inserted
    con.execute("DROP TABLE nsys_labels")
    con.execute("DROP TABLE nsys_hosts")
    return int(dropped)


# the CUDA runtime's and driver's calls that block the host until the GPU (or a stream, an
# event) is done; nsys names them with a version suffix (cudaStreamSynchronize_v3020)
# (and the per-thread default stream's variants: cudaStreamSynchronize_ptsz_v7000)
SYNC_NAME = re.compile(
    r"^(cu(?:da)?(?:Device|Stream|Event|Ctx)Synchronize)(?:_pt[sd]z)?(?:_v\d+)?$"
)


def _host_syncs(con: duckdb.DuckDBPyConnection, export: Export, report_id: int) -> int:
    """The synchronising API calls onto ``host_syncs``; returns how many had impossible times.
    Only their string ids are looked up, then only their rows read: a trace's millions of other
    API calls are never copied."""
    runtime = "CUPTI_ACTIVITY_KIND_RUNTIME"
    if not (has(export, runtime, "start", "end", "nameId") and has(export, "StringIds")):
        return 0
    names = {
        int(i): m.group(1)
        for i, text in export.fetchall(
            "SELECT id, value FROM StringIds WHERE value LIKE '%Synchronize%'"
        )
        if isinstance(i, int) and isinstance(text, str) and (m := SYNC_NAME.match(text))
    }
    if not names:
        return 0
    fields = pa.schema([("start_ns", pa.int64()), ("end_ns", pa.int64()), ("name_id", pa.int64())])
    ids = ", ".join(str(i) for i in sorted(names))
    table = export.arrow(
        f'SELECT start, "end", nameId FROM {runtime} WHERE nameId IN ({ids})', fields
    )
    con.execute("CREATE OR REPLACE TEMP TABLE nsys_sync_names (id BIGINT, name VARCHAR)")
    insert_rows(con, "nsys_sync_names", ("id", "name"), list(names.items()))
    valid = f"s.start_ns >= 0 AND s.end_ns >= s.start_ns AND s.end_ns <= {LATEST_NS}"
    with scanned(con, nsys_syncs=table):
        ((inserted,),) = con.execute(
            f"INSERT INTO host_syncs SELECT {int(report_id)}, n.name, s.start_ns, s.end_ns "
            f"FROM nsys_syncs s JOIN nsys_sync_names n ON n.id = s.name_id WHERE {valid}"
        ).fetchall()
    con.execute("DROP TABLE nsys_sync_names")
    return table.num_rows - int(inserted)


def _gpu_metrics(con: duckdb.DuckDBPyConnection, export: Export, report_id: int) -> None:
    """Sampled GPU metrics; the first sample of each series is invalid (negative timestamp,
    garbage values) and is dropped with every sample at or before time zero."""
    if not (
        has(export, "GPU_METRICS", "timestamp", "typeId", "metricId", "value")
        and has(export, "TARGET_INFO_GPU_METRICS", "typeId", "metricId", "metricName")
    ):
        return
    type_name = "i.typeName" if has(export, "TARGET_INFO_GPU_METRICS", "typeName") else "''"
    table = export.arrow(
        f"SELECT g.typeId, {type_name}, i.metricName, g.timestamp, g.value "
        f"FROM GPU_METRICS g JOIN TARGET_INFO_GPU_METRICS i "
        f"ON i.typeId = g.typeId AND i.metricId = g.metricId",
        pa.schema(
            [
                ("type_id", pa.int64()),
                ("type_name", pa.string()),
                ("metric", pa.string()),
                ("ts_ns", pa.int64()),
                ("value", pa.float64()),
            ]
        ),
    )
    with scanned(con, nsys_metrics=table):
        con.execute(
            f"INSERT INTO gpu_metrics SELECT {int(report_id)}, coalesce(nullif(type_name, ''), "
            f"'GPU metrics ' || dense_rank() OVER (ORDER BY type_id)), metric, ts_ns, value "
            f"FROM nsys_metrics "
            f"QUALIFY row_number() OVER (PARTITION BY type_id, metric ORDER BY ts_ns) > 1 "
            f"AND ts_ns > 0"
        )


def _gpus(con: duckdb.DuckDBPyConnection, export: Export, report_id: int) -> None:
    rows: list[tuple] = []
    if has(export, "TARGET_INFO_GPU", "smCount", "name"):
        cols = export.tables["TARGET_INFO_GPU"]

        def pick(*names: str) -> str:
            return next((n for n in names if n in cols), "NULL")

        cc = (
            "CAST(computeMajor AS TEXT) || '.' || CAST(computeMinor AS TEXT)"
            if {"computeMajor", "computeMinor"} <= cols
            else "NULL"
        )
        rows = export.fetchall(
            f"SELECT {pick('id', 'deviceId')}, name, smCount, {pick('clockRate')}, "
            f"{pick('memoryBandwidth')}, {pick('l2CacheSize')}, {pick('totalMemory')}, {cc} "
            f"FROM TARGET_INFO_GPU"
        )
    elif has(export, "TARGET_INFO_CUDA_GPU", "name", "numMultiprocessors"):
        # 2020-era units: clocks in kHz, bandwidth in kB/s (0 when unknown), memory size in
        # bytes or MiB depending on the release — left out rather than guessed.
        old = export.tables["TARGET_INFO_CUDA_GPU"]

        def given(column: str, expr: str) -> str:
            return expr if column in old else "NULL"

        device = "deviceId" if "deviceId" in old else "rowid - 1"
        cc = (
            "CAST(computeCapabilityMajor AS TEXT) || '.' || CAST(computeCapabilityMinor AS TEXT)"
            if {"computeCapabilityMajor", "computeCapabilityMinor"} <= old
            else "NULL"
        )
        rows = export.fetchall(
            f"SELECT {device}, name, numMultiprocessors, "
            f"{given('coreClockRate', 'coreClockRate * 1000.0')}, "
            f"{given('globalMemoryBandwidth', 'nullif(globalMemoryBandwidth, 0) * 1000.0')}, "
            f"{given('l2CacheSize', 'l2CacheSize')}, NULL, {cc} FROM TARGET_INFO_CUDA_GPU"
        )
    elif has(export, "TARGET_INFO_GPU", "name"):
        device = "deviceId" if has(export, "TARGET_INFO_GPU", "deviceId") else "rowid - 1"
        rows = export.fetchall(
            f"SELECT {device}, name, NULL, NULL, NULL, NULL, NULL, NULL FROM TARGET_INFO_GPU"
        )
    seen: set[int] = set()
    for row in rows:
        device, sm_count = _int32(row[0]), _int32(row[2])
        if device is None or device in seen:
            continue  # no usable device id (a damaged row): nothing to key it by
        seen.add(device)
        name, cc = (v if isinstance(v, str) else None for v in (row[1], row[7]))
        numbers = [_finite(v) for v in row[3:7]]
        con.execute(
            "INSERT INTO gpus VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [report_id, device, name, sm_count, *numbers, cc],
        )


def _int32(value: object) -> int | None:
    """An id or count as nsys writes it, or None for what SQLite let a damaged export hold."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
        return value
    return None


def _finite(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        return number if math.isfinite(number) else None
    return None


def kernel_row(path: Path, source_row: int) -> dict[str, object]:
    """Every column of one kernel row of an export (ids resolved through ``StringIds``), read
    when a user opens that launch."""
    export: SqliteExport | ParquetExport
    export = ParquetExport(path) if path.is_dir() else SqliteExport(connect(path))
    try:
        if KERNEL not in export.tables:
            return {}
        columns = sorted(export.tables[KERNEL])
        rows = export.fetchall(
            f"SELECT {', '.join(f'k.{quote_ident(c)}' for c in columns)} FROM {KERNEL} k "
            f"WHERE k.rowid = {int(source_row)}"
        )
        if not rows:
            return {}
        values = dict(zip(columns, rows[0], strict=True))
        for name in ("demangledName", "shortName", "mangledName"):
            if isinstance(values.get(name), int):
                found = export.fetchall(
                    f"SELECT value FROM StringIds WHERE id = {values[name]} ORDER BY rowid"
                )
                values[name] = found[0][0] if found else values[name]
        return values
    finally:
        export.close()
