"""Launches without a value the rest of their report has.

A sum over launches silently shrinks when one launch lacks a counter (ncu writes ``n/a`` for
a failed replay; an edited file loses a cell): the total is then a lower bound, and the user
must be told which metric and which launch, as the numbers contract (docs/metrics.md §0) says.
No real export seen has such gaps, so the warning costs nothing where all is well.
"""

from __future__ import annotations

import duckdb

from roofscope.ingest.report_info import ReportInfo
from roofscope.metric_names import TIME
from roofscope.sqlutil import quote_ident

SHOWN = 3  # metrics named in the warning; the rest are counted


def warn_partial_metrics(con: duckdb.DuckDBPyConnection, info: ReportInfo) -> None:
    """One warning naming each metric some launches lack (the duration has its own)."""
    table = f"values_r{info.report_id}"
    columns = [
        name
        for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall()
        if kind == "DOUBLE" and name != TIME
    ]
    if not columns:
        return
    counts = con.execute(
        f"SELECT count(*), {', '.join(f'count({quote_ident(c)})' for c in columns)} FROM {table}"
    ).fetchone()
    total, present = counts[0], counts[1:]
    partial = [(c, total - n) for c, n in zip(columns, present, strict=True) if 0 < n < total]
    if not partial:
        return
    partial.sort(key=lambda cm: (-cm[1], cm[0]))
    first, _ = partial[0]
    launch = con.execute(
        f"SELECT min(launch_id) FROM {table} WHERE {quote_ident(first)} IS NULL"
    ).fetchone()[0]
    named = ", ".join(f"{c} ({n} of {total})" for c, n in partial[:SHOWN])
    more = f" and {len(partial) - SHOWN} more metric(s)" if len(partial) > SHOWN else ""
    info.warnings.append(
        f"some launches have no value (n/a, empty or left out) for {named}{more}, e.g. launch "
        f"{launch} for {first}; totals computed from these metrics leave those launches' part "
        "out (lower bounds)"
    )
