"""SQL for turning ncu's locale-formatted strings into numbers.

ncu prints ``"1,580,911,775.91"``, ``"n/a"``, ``"nan"``, ``""`` and, with
``--print-metric-instances values``, ``"65,536 (0; 0; …)"``. All of these become a DOUBLE or
NULL in one SQL expression, so the conversion runs inside DuckDB at scan speed.
"""

from __future__ import annotations

import duckdb

from roofscope.sqlutil import quote_ident


def number_sql(column: str, decimal: str = ".") -> str:
    """SQL expression parsing a text column into DOUBLE (NULL when not a number).

    The common case is one ``replace`` and a cast; the ``"65,536 (0; 0; …)"`` instance form is
    tried only for values the first cast rejects (``coalesce`` is lazy), which keeps the
    conversion at scan speed. ``nan``/``inf`` spellings cast to NaN/±inf here and become NULL in
    ``null_non_finite``, the one pass every ingest runs after this scan: testing for them here
    too cost ~10% of a 1,000,000-launch scan.
    """

    def clean(expr: str) -> str:
        if decimal == ",":
            return f"replace(replace({expr}, '.', ''), ',', '.')"
        return f"replace({expr}, ',', '')"

    fallback = clean(f"split_part({column}, ' (', 1)")
    return f"coalesce(TRY_CAST({clean(column)} AS DOUBLE), TRY_CAST({fallback} AS DOUBLE))"


def null_non_finite(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, int]:
    """NaN and ±inf (from ``NaN``, ``Infinity``, ``1e999`` spellings) and negative values (no
    metric roofscope reads can be below zero) become NULL, in one scan to find them and an
    UPDATE only for the columns that have any. Returns how many per such column."""
    doubles = [
        name for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall() if kind == "DOUBLE"
    ]
    if not doubles:
        return {}

    def bad(col: str) -> str:
        return f"(NOT isfinite({col}) OR {col} < 0)"

    counts = con.execute(
        "SELECT "
        + ", ".join(f"count(*) FILTER (WHERE {bad(quote_ident(c))})" for c in doubles)
        + f" FROM {table}"
    ).fetchall()[0]
    found = {}
    for column, n in zip(doubles, counts, strict=True):
        if n:
            col = quote_ident(column)
            con.execute(f"UPDATE {table} SET {col} = NULL WHERE {bad(col)}")
            found[column] = int(n)
    return found
