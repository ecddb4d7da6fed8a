"""Arrow-native reading of nsys SQLite exports (the ADBC SQLite driver), with a read-ahead thread.

Python's ``sqlite3`` hands over one value at a time (~0.7 M rows/s of six integers); the ADBC
driver fills Arrow batches in C, 4–6× faster, and releases the GIL while it reads, so one
core can read the next batch while the other writes the last into DuckDB (docs/decisions.md).

The driver is strict where ``sqlite3`` is lenient: it infers each column's type from its first
batch and fails on a later value of another type. Every answer here is therefore either exactly
what the ``sqlite3`` path would give, or :class:`ArrowUnfit`, on which the caller reads the same
query through ``sqlite3`` and so keeps its warnings and errors for damaged files.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator

import pyarrow as pa

# Rows per batch: two of DuckDB's row groups (122,880 rows each), so that each insert writes
# whole row groups and the final checkpoint has little left to compress (about 0.5 s less CPU at
# a million kernels than 262,144-row batches); 12 MB of six integers.
BATCH_ROWS = 2 * 122_880


class ArrowUnfit(Exception):
    """This query's answer is not plain Arrow of the expected types: read it with ``sqlite3``."""


class ArrowSqlite:
    """One read-only ADBC connection to the database ``uri`` names (a ``file:`` URI, as the
    ``sqlite3`` connection of the same export opened it, so that it sees the same data)."""

    def __init__(self, uri: str):
        import adbc_driver_manager
        import adbc_driver_sqlite

        self._errors: tuple[type[BaseException], ...] = (
            adbc_driver_manager.Error,
            pa.ArrowException,
            OSError,
        )
        self._db = adbc_driver_sqlite.connect(uri)
        try:
            self._con = adbc_driver_manager.AdbcConnection(self._db)
        except BaseException:
            self._db.close()
            raise
        self._open: list[object] = []

    @classmethod
    def open(cls, uri: str | None) -> ArrowSqlite | None:
        """The connection, or None where the driver is not installed or cannot open ``uri``
        (the ``sqlite3`` path then reads everything, as before the driver was used)."""
        if uri is None:
            return None
        try:
            return cls(uri)
        except Exception:
            return None

    def close(self) -> None:
        """Release the statements, the connection and the database handle; a failure to close
        (a statement whose stream broke off) is no reason to lose the answer already read."""
        for handle in [*self._open, self._con, self._db]:
            with contextlib.suppress(*self._errors):
                handle.close()  # type: ignore[attr-defined]
        self._open.clear()

    def batches(self, sql: str, batch_rows: int | None = None) -> pa.RecordBatchReader:
        """The rows of ``sql`` as a stream of batches; reading a batch may raise (a value whose
        type differs from the column's first batch): callers treat any error as
        :class:`ArrowUnfit`."""
        import adbc_driver_manager

        stmt = adbc_driver_manager.AdbcStatement(self._con)
        self._open.append(stmt)
        try:
            rows = BATCH_ROWS if batch_rows is None else batch_rows
            stmt.set_options(**{"adbc.sqlite.query.batch_rows": str(int(rows))})
            stmt.set_sql_query(sql)
            handle, _ = stmt.execute_query()
            return pa.RecordBatchReader.from_stream(handle)
        except self._errors as exc:
            raise ArrowUnfit(str(exc)) from exc

    def table(self, sql: str, schema: pa.Schema) -> pa.Table:
        """All rows of ``sql`` as ``schema``; :class:`ArrowUnfit` where a column is not of the
        type ``sqlite3`` + ``pa.array`` would have produced without error."""
        try:
            got = self.batches(sql).read_all()
        except self._errors as exc:
            raise ArrowUnfit(str(exc)) from exc
        if got.num_columns != len(schema):
            raise ArrowUnfit("column count")
        if got.num_rows == 0:  # (schema.empty_table() would make pyarrow import pandas)
            return pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema)
        return pa.Table.from_arrays(
            [conform(got.column(i), schema.field(i)) for i in range(len(schema))], schema=schema
        )


def conform(column: pa.ChunkedArray, field: pa.Field) -> pa.ChunkedArray:
    """``column`` as ``field``'s type, allowing only what ``pa.array`` of the same Python values
    allows: an integer column read as a narrower integer or as a double (both range-checked,
    as ``pa.array`` checks them); text that is valid UTF-8."""
    have, want = column.type, field.type
    if have == want:
        if pa.types.is_string(want):
            try:
                column.validate(full=True)  # the driver does not check UTF-8; sqlite3 does
            except pa.ArrowInvalid as exc:
                raise ArrowUnfit("text that is not UTF-8") from exc
        return column
    if pa.types.is_integer(have) and (pa.types.is_integer(want) or pa.types.is_floating(want)):
        try:
            return column.cast(want)  # safe: overflow or inexact doubles raise
        except (pa.ArrowInvalid, OverflowError) as exc:
            raise ArrowUnfit(f"{field.name}: {exc}") from exc
    raise ArrowUnfit(f"{field.name} is {have}, not {want}")


def read_ahead(
    open_reader: Callable[[], pa.RecordBatchReader], depth: int = 2
) -> Iterator[pa.RecordBatch]:
    """The batches of the reader ``open_reader`` returns, opened and read by a second thread up
    to ``depth`` batches ahead: the driver reads without the GIL while the caller writes the
    previous batch (opening runs the query to its first batch, so it goes there too). An error
    in the reader is raised here, at the batch where it happened; closing the iterator stops
    the thread."""
    slots: queue.Queue[pa.RecordBatch | BaseException | None] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: pa.RecordBatch | BaseException | None) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    readers: list[pa.RecordBatchReader] = []

    def work() -> None:
        try:
            readers.append(open_reader())
            for batch in readers[0]:
                if not put(batch):
                    return
            put(None)
        except BaseException as exc:  # handed to the consumer, raised there
            put(exc)

    thread = threading.Thread(target=work, name="roofscope-sqlite-read", daemon=True)
    thread.start()
    try:
        while True:
            item = slots.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()
        for reader in readers:
            reader.close()
