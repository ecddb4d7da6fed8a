"""Turning ncu's locale-formatted strings into numbers: SQL for whole columns, Python for one.

ncu prints ``"1,580,911,775.91"``, ``"n/a"``, ``"nan"``, ``"inf"`` (``launch__waves_per_
multiprocessor`` of a launch no block of which fits an SM, ncu 2025.3.1), ``""`` and, with
``--print-metric-instances values``, ``"65,536 (0; 0; …)"``. All of these become a DOUBLE or
NULL in one SQL expression, so the conversion runs inside DuckDB at scan speed.
"""

from __future__ import annotations

import math
import re

import duckdb

from roofscope.sqlutil import quote_ident

# The shapes ncu writes a number in: digits, grouped in threes or not at all, an optional
# fraction; the marks follow the export's locale. Anything else (``20,992000``, ``1_000``,
# ``1e3``, ``+5``) is not a number ncu wrote, and is never guessed at. ``nan`` and ``inf`` ncu
# does write: no value, like NaN (``NOT_FINITE``).
SHAPES = {
    ".": r"-?([0-9]+|[0-9]{1,3}(,[0-9]{3})+)(\.[0-9]+)?",
    ",": r"-?([0-9]+|[0-9]{1,3}(\.[0-9]{3})+)(,[0-9]+)?",
}
# The commonest shape alone (grouped, or up to three digits), tested first: a simpler pattern
# matches ~20% faster than the alternation of SHAPES (76 columns × 100,000 values: 1.16 s
# against 1.40–1.55 s; the old unchecked cast took 0.66 s).
_GROUPED = {
    ".": r"^-?[0-9]{1,3}(,[0-9]{3})*(\.[0-9]+)?$",
    ",": r"^-?[0-9]{1,3}(\.[0-9]{3})*(,[0-9]+)?$",
}
# What a value that is not a number ncu writes parses to: ``null_non_finite`` counts it apart
# from NaN and negatives and makes it NULL. It is -inf, which no number ncu writes reaches.
UNREADABLE = "'-inf'::DOUBLE"
UNREADABLE_VALUE = float("-inf")  # the same, as ``number_columns`` gives it from Arrow
# What ncu writes for a value that is not finite, read as NaN (then NULL, and counted)
NOT_FINITE = ("nan", "-nan", "inf", "-inf", "+inf")


def parse_number(text: str | None, decimal: str = ".") -> float | None:
    """Python twin of :func:`number_sql`, for single values: only the shapes ncu writes
    (``SHAPES``) are numbers, so Detail never shows ``20,992000`` as 20,992,000; any other text
    is None and shown as the text it is."""
    if text is None:
        return None
    head = text.strip(" ").split(" (", 1)[0]  # spaces only, as number_sql
    if not re.fullmatch(SHAPES[decimal], head):
        return None
    head = head.replace(".", "").replace(",", ".") if decimal == "," else head.replace(",", "")
    try:
        value = float(head)
    except ValueError:
        return None
    return None if value != value or value in (float("inf"), float("-inf")) else value


def number_sql(column: str, decimal: str = ".") -> str:
    """SQL expression parsing a text column into DOUBLE.

    A number in one of ncu's shapes (``SHAPES``) is cast; ``""``, ``n/a`` and NULL are NULL;
    ``nan`` and ``inf`` (``NOT_FINITE``) are NaN, and any other text is ``UNREADABLE`` (-inf).
    NaN and -inf become NULL in
    ``null_non_finite``, the one pass every ingest runs after this scan, which counts them.
    The ``"65,536 (0; 0; …)"`` instance form is tried only for values the first shape test
    rejects (``CASE`` is lazy).
    """
    shape = SHAPES[decimal]

    def clean(expr: str) -> str:
        if decimal == ",":
            return f"replace(replace({expr}, '.', ''), ',', '.')"
        return f"replace({expr}, ',', '')"

    # only spaces, as the shapes' `` *``: DuckDB's trim() alone takes every Unicode space
    # (a no-break space before ``n/a`` would be NULL here and unreadable in number_columns)
    text = f"trim({column}, ' ')"
    # regexp_matches with anchors runs ~2x faster than regexp_full_match (DuckDB 1.x)
    return (
        f"CASE WHEN regexp_matches({column}, '{_GROUPED[decimal]}') "
        f"THEN CAST({clean(column)} AS DOUBLE) "
        f"WHEN regexp_matches({column}, '^ *{shape} *$') "
        f"THEN CAST({clean(column)} AS DOUBLE) "
        f"WHEN {column} IS NULL OR lower({text}) IN ('', 'n/a') THEN NULL "
        f"WHEN lower({text}) IN ({', '.join(repr(x) for x in NOT_FINITE)}) THEN 'nan'::DOUBLE "
        f"WHEN regexp_matches({column}, '^ *{shape} \\(.*\\) *$') "
        f"THEN CAST({clean(f'split_part({text}, {chr(39)} ({chr(39)}, 1)')} AS DOUBLE) "
        f"ELSE {UNREADABLE} END"
    )


def null_non_finite(
    con: duckdb.DuckDBPyConnection, table: str, unreadable: dict[str, int] | None = None
) -> dict[str, int]:
    """NaN and ±inf (from ``nan`` or a number too large for a double) and negative values (no
    metric roofscope reads can be below zero) become NULL, in one scan to find them and an
    UPDATE only for the columns that have any. Returns how many per such column.

    With ``unreadable``, values ``number_sql`` found not to be numbers (-inf) are counted
    there per column instead of in the returned counts (the caller names their text)."""
    doubles = [
        name for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall() if kind == "DOUBLE"
    ]
    if not doubles:
        return {}

    def bad(col: str) -> str:
        return f"(NOT isfinite({col}) OR {col} < 0)"

    # min and max find the columns that hold any (NaN sorts above every number, -inf below):
    # 10x cheaper than counting per column, which is then done only for those.
    ends = con.execute(
        f"SELECT {', '.join(f'min({quote_ident(c)}), max({quote_ident(c)})' for c in doubles)} "
        f"FROM {table}"
    ).fetchall()[0]
    doubles = [
        c
        for i, c in enumerate(doubles)
        if ends[2 * i] is not None
        and (
            ends[2 * i] < 0 or not math.isfinite(ends[2 * i]) or not math.isfinite(ends[2 * i + 1])
        )
    ]
    if not doubles:
        return {}
    aggregates = [f"count(*) FILTER (WHERE {bad(quote_ident(c))})" for c in doubles]
    if unreadable is not None:
        aggregates += [f"count(*) FILTER (WHERE {quote_ident(c)} = {UNREADABLE})" for c in doubles]
    counts = con.execute(f"SELECT {', '.join(aggregates)} FROM {table}").fetchall()[0]
    found = {}
    for i, column in enumerate(doubles):
        n = counts[i]
        if n:
            col = quote_ident(column)
            con.execute(f"UPDATE {table} SET {col} = NULL WHERE {bad(col)}")
            odd = counts[len(doubles) + i] if unreadable is not None else 0
            if odd:
                unreadable[column] = int(odd)  # type: ignore[index]
            if n - odd:
                found[column] = int(n - odd)
    return found
