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

import duckdb

from roofscope.ingest.numbers import null_non_finite
from roofscope.schema import create_values

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
        warnings.append(
            f"{bad} kernel(s) have no valid duration (they end before they start, have no end, "
            f"or a time that is negative, not a number or centuries long); their times are left "
            f"out"
        )
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
