"""Per-group, per-kernel and per-launch rows with every number the views and exports show.

All sums are weighted by ``invocations`` (1 for a real launch; N for a per-kernel summary row),
so a summary page and a raw page of the same run give the same totals.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from roofscope.analysis.roofline import classify
from roofscope.hardware.ceilings import Ceiling
from roofscope.quantities import (
    AI,
    BOUND,
    BOUND_BASIS,
    BYTES,
    EFFICIENCY_COMPLETE,
    FLOP_PER_S,
    FLOPS,
    FLOPS_COMPLETE,
    FLOPS_TOTAL,
    HEADROOM_S,
    LEVELS,
    PRECISIONS,
    TIME_PCT,
    TIME_S,
    flop_per_s,
    flop_total,
    flops_complete_sql,
    ratio,
)

if TYPE_CHECKING:
    import duckdb

UTILS = ("util_tensor", "util_fp32", "util_dram")  # busy fractions, the evidence of a bound

KEYS = {"group": "grp", "kernel": "kernel", "launch": "launch_id"}
STREAM_BATCH = 20_000  # rows finished at a time by iter_rows
STREAM_PARTITION = 250_000  # launch ids aggregated at a time by iter_rows

_AGGREGATES = (
    "sum(invocations) AS launches",
    "count(DISTINCT kernel) AS kernels",
    "sum(time_s * invocations) AS time_s",
    "sum(time_s * invocations) / nullif(sum(invocations) FILTER (WHERE time_s IS NOT NULL), 0) "
    "AS time_avg_s",
    "min(coalesce(time_min_s, time_s)) AS time_min_s",
    "max(coalesce(time_max_s, time_s)) AS time_max_s",
    # A median of medians is no median: known only for single launches or one summary row.
    "CASE WHEN max(invocations) = 1 THEN median(time_s) WHEN count(*) = 1 "
    "THEN any_value(coalesce(time_med_s, time_s)) END AS time_med_s",
    *(f"sum({f} * invocations) AS {f}" for f in PRECISIONS),
    *(f"sum({b} * invocations) AS {b}" for b in LEVELS),
    "sum(time_s * invocations * efficiency) / nullif(sum(time_s * invocations) FILTER "
    "(WHERE efficiency IS NOT NULL), 0) AS efficiency",
    "sum(time_s * invocations * (1 - efficiency)) AS headroom_s",
    # false when a launch's efficiency is a lower bound (efficiency, headroom and speedup are
    # then bounds); null when no launch's efficiency is known
    f"bool_and({EFFICIENCY_COMPLETE}) AS {EFFICIENCY_COMPLETE}",
    f"bool_and({flops_complete_sql()}) AS {FLOPS_COMPLETE}",
    # time-weighted busy fractions: which unit a row keeps busiest, where FLOPs are incomplete
    *(
        f"sum({u} * time_s * invocations) / nullif(sum(time_s * invocations) "
        f"FILTER (WHERE {u} IS NOT NULL), 0) AS {u}"
        for u in UTILS
    ),
)


def rows(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    by: str,
    ceilings: list[Ceiling],
    where: str = "TRUE",
    total_time: float | None = None,
    limit: int | None = None,
) -> list[dict[str, object]]:
    """Aggregated rows of one report, sorted by time (largest first); shares are of
    ``total_time`` when given (a filtered view), else of the rows' own sum."""
    result = _query(con, report_id, by, where, limit)
    names = [d[0] for d in result.description]
    data = [dict(zip(names, r, strict=True)) for r in result.fetchall()]
    total = total_time if total_time is not None else sum((r[TIME_S] or 0.0) for r in data)
    roofs = {c.name: c for c in ceilings}
    return [_finish(r, total, roofs) for r in data]


def iter_rows(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    by: str,
    ceilings: list[Ceiling],
    total_time: float,
    limit: int | None = None,
    batch: int | None = None,
) -> Iterator[dict[str, object]]:
    """:func:`rows`, a batch at a time, in memory bounded by the batch whatever the rows
    (``report --by launch`` of ten million launches). One GROUP BY over every launch holds a
    median's state per launch, which DuckDB cannot spill (out of memory at 1 GB and ten
    million); so the rows are aggregated a range of keys at a time into a temporary table,
    numbered in :func:`rows`' order there (a sort DuckDB spills), and read back a page at a
    time. The shares are of ``total_time`` (the report's). Nothing else may run on ``con``
    until the iteration ends; the temporary tables go with it."""
    rid = int(report_id)
    batch = batch or STREAM_BATCH
    staged, ordered = f"rs_rows_r{rid}", f"rs_rows_ordered_r{rid}"
    key = KEYS[by]
    roofs = {c.name: c for c in ceilings}
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {staged} AS {_select(rid, by, 'FALSE')}")
        if by == "launch":
            lo, hi = con.execute(
                f"SELECT min({key}), max({key}) FROM launch_view WHERE report_id = {rid}"
            ).fetchall()[0]
            starts = range(int(lo), int(hi) + 1, STREAM_PARTITION) if lo is not None else ()
            for start in starts:
                part = f"{key} >= {start} AND {key} < {start + STREAM_PARTITION}"
                con.execute(f"INSERT INTO {staged} {_select(rid, by, part)}")
        else:  # a name per row: as many rows as kernels or groups, never the trace's size
            con.execute(f"INSERT INTO {staged} {_select(rid, by, 'TRUE')}")
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE {ordered} AS SELECT *, row_number() OVER "
            f"(ORDER BY {_ORDER}) AS rs_row FROM {staged} ORDER BY rs_row"
        )
        con.execute(f"DROP TABLE {staged}")
        done = 0
        while limit is None or done < limit:
            size = batch if limit is None else min(batch, limit - done)
            result = con.execute(
                f"SELECT * EXCLUDE (rs_row) FROM {ordered} "
                f"WHERE rs_row > {done} AND rs_row <= {done + size} ORDER BY rs_row"
            )
            names = [d[0] for d in result.description]
            chunk = result.fetchall()
            for r in chunk:
                yield _finish(dict(zip(names, r, strict=True)), total_time, roofs)
            if len(chunk) < size:
                break
            done += size
    finally:
        con.execute(f"DROP TABLE IF EXISTS {staged}")
        con.execute(f"DROP TABLE IF EXISTS {ordered}")


_ORDER = "time_s DESC NULLS LAST, name"


def row_count(con: duckdb.DuckDBPyConnection, report_id: int, by: str) -> int:
    """How many rows :func:`rows` gives."""
    row = con.execute(
        f"SELECT count(DISTINCT {KEYS[by]}) FROM launch_view WHERE report_id = {int(report_id)}"
    ).fetchone()
    return int(row[0]) if row else 0


def empty_row(con: duckdb.DuckDBPyConnection, report_id: int, by: str) -> dict[str, object]:
    """A row of :func:`rows` with nothing known: its keys and nesting, without computing any
    row (the columns of a CSV written before its rows are read)."""
    names = [d[0] for d in con.execute(f"{_select(report_id, by, 'FALSE')} LIMIT 0").description]
    return _finish(dict.fromkeys(names), 0.0, {})


def _select(report_id: int, by: str, where: str) -> str:
    key = KEYS[by]
    extra = ", any_value(kernel) AS kernel, any_value(grp) AS grp" if by == "launch" else ""
    return (
        f"SELECT {key} AS name, {', '.join(_AGGREGATES)}{extra} FROM launch_view "
        f"WHERE report_id = {report_id} AND ({where}) GROUP BY {key}"
    )


def _query(
    con: duckdb.DuckDBPyConnection, report_id: int, by: str, where: str, limit: int | None
) -> duckdb.DuckDBPyConnection:
    return con.execute(
        f"{_select(report_id, by, where)} "
        f"ORDER BY {_ORDER}{f' LIMIT {int(limit)}' if limit else ''}"
    )


def _finish(r: dict[str, object], total: float, roofs: dict[str, Ceiling]) -> dict[str, object]:
    flops = {f: r.pop(f) for f in PRECISIONS}
    bytes_ = {b: r.pop(b) for b in LEVELS}
    utils = {u: r.pop(u) for u in UTILS}
    complete = r.pop(FLOPS_COMPLETE)
    flop_sum = flop_total(flops, complete)  # type: ignore[arg-type]
    time_s = r[TIME_S]
    r[TIME_PCT] = 100.0 * time_s / total if time_s is not None and total > 0 else None
    r[FLOPS] = flops
    r[FLOPS_TOTAL] = flop_sum
    r[FLOPS_COMPLETE] = complete if flop_sum is not None else None
    r[BYTES] = bytes_
    r[FLOP_PER_S] = flop_per_s(flop_sum, time_s)  # type: ignore[arg-type]
    r[AI] = {b: ratio(flop_sum, v) for b, v in bytes_.items()}  # type: ignore[arg-type]
    bound, attainable, basis = classify(
        flops,  # type: ignore[arg-type]
        bytes_,  # type: ignore[arg-type]
        roofs,
        complete=complete is not False,
        utils=utils,  # type: ignore[arg-type]
    )
    r[BOUND] = bound
    r[BOUND_BASIS] = basis
    r["attainable_flop_per_s"] = attainable
    headroom = r[HEADROOM_S]
    r["speedup_if_at_roof"] = (
        total / (total - headroom) if headroom is not None and total > headroom else None
    )
    return r


def flat_row(row: dict[str, object]) -> dict[str, object]:
    """One level deep (``flops_fp32``, ``bytes_dram``, ``ai_l2``) for CSV and DataFrames."""
    out: dict[str, object] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            for inner, v in value.items():
                out[f"{key}_{inner}"] = v
        else:
            out[key] = value
    return out
