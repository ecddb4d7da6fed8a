"""GPU recordings (``roofscope record``) into the store's ``gpu_samples`` table, so a recording
opens beside the profile of the same job and its numbers are queried like any report's.

pyarrow is imported by the functions that read Parquet: the dispatch asks :func:`refuse_parquet`
about every CSV, and a CSV must not pay for pyarrow.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from roofscope.errors import RoofscopeError
from roofscope.ingest.contract import RECORDING, ExportProblem, Layout, RawValue, StoredReport
from roofscope.ingest.report_info import ReportInfo
from roofscope.schema import RECORDING_COLUMNS, create_empty_values
from roofscope.sqlutil import quote_ident, scanned
from roofscope.telemetry.recording import CLOCK_JUMP_S, arrow_schema, is_recording, read_recorded

if TYPE_CHECKING:
    import pyarrow as pa


def _family(arrow: pa.DataType) -> str:
    import pyarrow as pa

    if pa.types.is_timestamp(arrow):
        return "timestamp"
    if pa.types.is_integer(arrow) or pa.types.is_floating(arrow):
        return "number"
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "text"
    return str(arrow)


def _conform(table: pa.Table, path: Path, info: ReportInfo) -> pa.Table:
    """The recording's columns in the store's types. A column missing (a recording of another
    roofscope version) is added empty with a warning; one of another kind of type is refused:
    such a file has the marker but was not written by ``roofscope record``."""
    import pyarrow as pa

    for key in ("ts", "gpu"):
        if key not in table.column_names:
            raise RoofscopeError(
                f"is marked as a roofscope recording but has no {key} column",
                path=str(path),
                hint="the file was not written by roofscope record; record it again",
            )
    missing = []
    for want in arrow_schema():
        if want.name not in table.column_names:
            missing.append(want.name)
            # host keys every per-GPU summary (a NULL would drop the GPU from them)
            empty = pa.array([""] * table.num_rows) if want.name == "host" else None
            table = table.append_column(
                want, empty if empty is not None else pa.nulls(table.num_rows, want.type)
            )
            continue
        have = table.schema.field(want.name).type
        if have == want.type:
            continue
        error = None
        if pa.types.is_null(have) or _family(have) == _family(want.type):
            try:
                column = table.column(want.name).cast(want.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                error = str(exc).splitlines()[0][:120]
            else:
                index = table.schema.get_field_index(want.name)
                table = table.set_column(index, want, column)
                continue
        raise RoofscopeError(
            f"recording column {want.name} is {have}, where roofscope record writes "
            f"{want.type}{f' ({error})' if error else ''}",
            path=str(path),
            hint="the file was not written by roofscope record, or was edited; record it again",
        )
    if missing:
        info.warnings.append(
            f"the recording lacks {len(missing)} column(s) ({', '.join(missing[:5])}"
            f"{', …' if len(missing) > 5 else ''}); they are left empty"
        )
    return table.select(arrow_schema().names)


def _read(path: Path, warnings: list[str]) -> pa.Table:
    import pyarrow as pa

    try:
        return read_recorded(path, warnings)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # parts whose columns disagree
        raise RoofscopeError(
            f"its parts do not fit together ({str(exc).splitlines()[0][:160]})",
            path=str(path),
            hint="move the odd part out of the folder; each part must come from roofscope record",
        ) from exc


def refuse_parquet(path: Path) -> None:
    """A Parquet file that is neither a recording nor an nsys parquetdir: say so, rather than
    let the CSV reader call it binary."""
    try:
        with open(path, "rb") as fh:
            if fh.read(4) != b"PAR1":
                return
    except OSError:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise RoofscopeError(
            f"is a damaged Parquet file ({str(exc).splitlines()[0][:120]})",
            path=str(path),
            hint="the file was cut or is still being written; copy or record it again",
        ) from exc
    raise RoofscopeError(
        "is a Parquet file, but not a GPU recording of roofscope record (no "
        "roofscope.recording marker)",
        path=str(path),
        hint="nsys parquetdir exports are opened as their folder (the one holding "
        "StringIds.parquet)",
    )


def ingest_recording(con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
    info = ReportInfo(report_id, str(path), "gpu-recording")
    table = recording_table(path, report_id, info.warnings)
    con.execute(create_empty_values(report_id))  # no kernels
    insert_samples(con, table)
    info.warnings += clock_jumps(con, report_id).get(report_id, [])
    names = con.execute(
        "SELECT DISTINCT name FROM gpu_samples WHERE report_id = ? ORDER BY 1", [report_id]
    ).fetchall()
    info.gpu_name = ", ".join(n for (n,) in names if n) or None
    if table.num_rows == 0:
        info.warnings.append("the recording holds no samples yet")
    return info


def recording_table(path: Path, report_id: int, warnings: list[str]) -> pa.Table:
    """A recording's samples in written order, in the recording schema, with ``report_id``
    and ``seq`` (their place as written) for :func:`insert_samples`."""
    import pyarrow as pa

    info = ReportInfo(report_id, str(path), "gpu-recording")
    table = _conform(_read(path, warnings), path, info)
    warnings += info.warnings
    table = table.append_column("seq", pa.array(range(table.num_rows), pa.int64()))
    return table.append_column("report_id", pa.array([report_id] * table.num_rows, pa.int32()))


def insert_samples(con: duckdb.DuckDBPyConnection, table: pa.Table) -> None:
    """Rows of :func:`recording_table` (one recording's, or many concatenated) into
    ``gpu_samples`` in one statement."""
    select = ", ".join(
        "epoch_us(ts) / 1e6" if n == "ts" else quote_ident(n) for n, _ in RECORDING_COLUMNS
    )
    with scanned(con, rec_rows=table):
        con.execute(f"INSERT INTO gpu_samples SELECT report_id, {select}, seq FROM rec_rows")


def _when(ts: float) -> str:
    try:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{ts:.0f} s since the epoch"


def _span(seconds: float) -> str:
    s = abs(seconds)
    if s >= 2 * 365.25 * 86400:
        return f"{s / (365.25 * 86400):.0f} years"
    if s >= 2 * 86400:
        return f"{s / 86400:.0f} days"
    return f"{s:.0f} s" if s >= 10 else f"{s:.3g} s"


def clock_jumps(
    con: duckdb.DuckDBPyConnection, report_id: int | None = None
) -> dict[int, list[str]]:
    """Per recording (``report_id``, or every one in ``gpu_samples``), one warning per clock
    step (read on each host's first GPU: the GPUs of a host share its clock): timestamps going
    back, or ahead by more than ``CLOCK_JUMP_S``. One query for all of them."""
    where = "WHERE report_id = ?" if report_id is not None else ""
    rows = con.execute(
        f"""
        WITH s AS (
            SELECT report_id, host, gpu, seq, ts,
                min(gpu) OVER (PARTITION BY report_id, host) AS first_gpu,
                ts - lag(ts) OVER (PARTITION BY report_id, host, gpu ORDER BY seq) AS dt
            FROM gpu_samples {where}
        )
        SELECT report_id, host, ts - dt AS before, ts AS after, dt FROM s
        WHERE (dt < 0 OR dt > ?) AND gpu IS NOT DISTINCT FROM first_gpu
        ORDER BY report_id, seq
        """,
        [*([report_id] if report_id is not None else []), CLOCK_JUMP_S],
    ).fetchall()
    by_report: dict[int, list[tuple]] = {}
    for rid, *jump in rows:
        by_report.setdefault(rid, []).append(tuple(jump))
    return {rid: _jump_words(jumps) for rid, jumps in by_report.items()}


def _jump_words(rows: list[tuple]) -> list[str]:
    out = []
    for host, before, after, dt in rows[:3]:
        where = f" on {host}" if host else ""
        way = "back" if dt < 0 else "ahead"
        out.append(
            f"the clock{where} jumped {way} by {_span(dt)} between samples stamped "
            f"{_when(before)} and {_when(after)} (an NTP step or a wrong hardware clock); that "
            "interval is left out of the recording's duration and energy"
        )
    if len(rows) > 3:
        out.append(
            f"the clock jumped {len(rows) - 3} more time(s); those intervals are left out too"
        )
    return out


GPU_RECORDING = Layout(
    "gpu-recording", RECORDING, counters=False, timeline=False, kernels=False, rules=False,
    container="Parquet",
)  # fmt: skip


class Recording:
    """A ``roofscope record`` recording: GPU samples, no kernels (Monitor and decisions)."""

    name = "roofscope GPU recording"
    layouts = (GPU_RECORDING,)

    def claim(self, path: Path) -> float:
        return 1.0 if is_recording(path) else 0.0

    def ingest(self, con: duckdb.DuckDBPyConnection, path: Path, report_id: int) -> ReportInfo:
        return ingest_recording(con, path, report_id)

    def launch_values(
        self,
        con: duckdb.DuckDBPyConnection,
        report: StoredReport,
        launch_id: int,
        problem: ExportProblem,
    ) -> list[RawValue]:
        return []  # no launches


RECORDING_READER = Recording()
