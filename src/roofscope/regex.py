"""User regular expressions, matched by RE2 (inside DuckDB) so that none can hang the UI.

Python's ``re`` backtracks: ``(a+)+$`` against a 10 KB kernel name never returns, and a thread
running it cannot be stopped. RE2 matches in time linear in the text for every pattern it
accepts, so every pattern a user types (filters, grouping rules, metric search) is checked
here and then matched in DuckDB. Patterns RE2 refuses (look-arounds, back-references) are
rejected with a hint rather than run by a backtracking engine.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from roofscope.errors import RoofscopeError
from roofscope.interrupts import connect
from roofscope.sqlutil import quote_str

if TYPE_CHECKING:  # DuckDB is imported where a pattern is matched, not where rules are read:
    import duckdb  # --help names the config file in use and imports no data stack

MAX_PATTERN_CHARS = 4096  # a kernel-name pattern; a 10 MB one took minutes to check


def check_regex(pattern: str, origin: str | None = None) -> None:
    """Reject what neither Python's parser nor RE2 accepts, or a pattern over
    :data:`MAX_PATTERN_CHARS`, with a hint (never a traceback)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise RoofscopeError(
            f"regular expression of {len(pattern):,} characters is longer than the "
            f"{MAX_PATTERN_CHARS:,} allowed",
            path=origin,
            hint="match a distinctive part of the name, not all of it",
        )
    problem = _problem(pattern)
    if problem is not None:
        message, hint = problem
        raise RoofscopeError(message, path=origin, hint=hint)


@lru_cache(maxsize=512)
def _problem(pattern: str) -> tuple[str, str] | None:
    # Cached: every query of a filtered view and every Grouper (15 built-in rules) checks again.
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"invalid regular expression {pattern!r} ({exc})", "fix the pattern"
    import duckdb

    try:
        _query(f"SELECT regexp_matches('', {quote_str(pattern)})", [])
    except duckdb.Error:
        return (
            f"regular expression {pattern!r} is not supported",
            "RE2 syntax: no look-arounds or back-references",
        )
    return None


def first_match(
    patterns: Sequence[str],
    texts: Sequence[str],
    ignore_case: bool = True,
    con: duckdb.DuckDBPyConnection | None = None,
) -> list[int | None]:
    """For each text, the index of the first pattern found in it, or None. ``con``: a
    connection the caller owns for this thread (else this module's own, per thread)."""
    if not patterns or not texts:
        return [None] * len(texts)
    flag = "'i'" if ignore_case else "'c'"
    cases = " ".join(
        f"WHEN regexp_matches(t, {quote_str(p)}, {flag}) THEN {i}" for i, p in enumerate(patterns)
    )
    sql = f"SELECT list_transform($texts, lambda t: CASE {cases} END)"
    return _query(sql, list(texts), con)


def search(pattern: str, texts: Sequence[str], ignore_case: bool = True) -> list[bool]:
    """Whether the pattern is found in each text."""
    return [hit is not None for hit in first_match([pattern], texts, ignore_case)]


_local = threading.local()


def _query(sql: str, texts: list[str], con: duckdb.DuckDBPyConnection | None = None) -> Any:
    # One connection per thread: callers run in Textual workers and the main thread at once.
    con = con or getattr(_local, "con", None)
    if con is None:
        con = _local.con = connect()
    params = {"texts": texts} if "$texts" in sql else None
    row = con.execute(sql, params).fetchone()
    return row[0] if row else []
