"""ncu's numbers parsed a column at a time: a byte-level shape check, then Arrow's cast.

``numbers.number_sql`` tested each value against a regular expression inside DuckDB: 27.5 s
of a 51 s load of a million launches went there, after pyarrow had already read the text
(issue 31). Here the same grammar is checked on the column's bytes with numpy — which bytes
occur, where the minus, the decimal mark and the group marks sit relative to each value's
start and end — and only the values that pass go through Arrow's string-to-double cast, the
same correctly rounded conversion DuckDB's ``CAST`` makes. The few values outside the plain
shape (``n/a``, ``nan``, spaces, the ``"65,536 (0; 0; …)"`` instance form, anything else)
are taken apart and given number_sql's answer, so each value parses to exactly what
``number_sql`` gives it: a number, NULL, NaN, or ``UNREADABLE_VALUE`` (-inf), which
``null_non_finite`` counts and names. ``tests/test_number_columns.py`` holds the two to each
other, value by value, under hypothesis.
"""

from __future__ import annotations

from collections.abc import Collection
from concurrent.futures import Executor
from typing import TYPE_CHECKING

import numpy as np

from roofscope.arrowutil import arrow_array, flags, slots, valid
from roofscope.ingest.numbers import NOT_FINITE, UNREADABLE_VALUE

if TYPE_CHECKING:
    import pyarrow as pa


_MINUS = ord("-")
# a column of more text than this is parsed chunk by chunk (one chunk each call costs a few
# fixed calls, so columns under it are combined into one: a copy of their text)
_COMBINED_LIMIT = 1 << 30


def parse_columns(
    page: pa.Table, metrics: Collection[str], decimal: str, pool: Executor
) -> pa.Table:
    """``page`` with each column named in ``metrics`` parsed by ``parse_column`` (on the
    pool's threads: numpy and Arrow let go of the GIL), the others as they are."""
    names = page.schema.names
    chosen = [i for i, name in enumerate(names) if name in metrics]
    columns = list(page.columns)
    for i, parsed in zip(
        chosen, pool.map(lambda i: parse_column(columns[i], decimal), chosen), strict=True
    ):
        columns[i] = parsed
    return type(page).from_arrays(columns, names=names)  # type: ignore[attr-defined]


def parse_column(
    values: pa.Array | pa.ChunkedArray, decimal: str = "."
) -> pa.Array | pa.ChunkedArray:
    """The texts of one column as DOUBLE, value for value what ``number_sql`` makes of them:
    a number in one of ``numbers.SHAPES`` (spaces around it allowed, or followed by ncu's
    ``" (…)"`` instance list) is that number; NULL, ``""`` and ``n/a`` are NULL; ``nan`` is
    NaN; anything else is -inf."""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        if values.nbytes > _COMBINED_LIMIT:  # combined, its offsets would overflow int32
            return pa.chunked_array(
                [parse_column(chunk, decimal) for chunk in values.chunks], pa.float64()
            )
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if values.type not in (pa.string(), pa.large_string()):
        values = values.cast(pa.string())
    fast = _all_plain(values, decimal)
    if fast is not None:
        return fast
    n = len(values)
    present_values = valid(values)
    plain, has_marks = _shape_ok(values, decimal, present_values)
    number = np.full(n, np.nan)
    present = plain.copy()
    if plain.any():
        number[plain] = _cast(values, plain, decimal, has_marks)
    rest = np.flatnonzero(present_values & ~plain)
    if rest.size:
        sub_number, sub_present = _unusual(values.take(arrow_array(rest, pa.int64())), decimal)
        number[rest] = sub_number
        present[rest] = sub_present
    return arrow_array(number, pa.float64(), present)


def _all_plain(values: pa.Array, decimal: str) -> pa.Array | None:
    """The column through Arrow's cast when every value that is not NULL is in the plain
    shape, which is most columns of most pages; else None. Cheaper than ``_shape_ok``:
    bytes only of ``0-9 , . -`` (min and max), minus signs only first (as many as values
    start with one), then the cast refuses the rest of what the grammar does (two decimal
    marks, no digit, an empty value) but for a number opening or ending with its decimal
    mark (``.5``, ``-.5``, ``5.``), which Arrow's ``starts_with``/``ends_with`` find, and
    group marks out of place, which ``_group_marks_ok`` finds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    start, length, data = _layout(values)
    if _odd_bytes(data):
        return None
    minus = np.count_nonzero(data == _MINUS)
    if minus and minus != _count(pc.starts_with(values, "-")):
        return None
    group, point = _marks(decimal)
    for edge in (pc.starts_with(values, point), pc.starts_with(values, "-" + point)):
        if _count(edge):
            return None
    if _count(pc.ends_with(values, point)):
        return None
    marks = np.flatnonzero(data == ord(group))
    text = values
    if marks.size:
        present = valid(values)
        lead = flags(pc.starts_with(values, "-")).astype(np.int64)
        at = _first(values, point, present)
        if not _group_marks_ok(start, length, lead, at, marks)[present].all():
            return None
        text = pc.replace_substring(text, group, "")
    if decimal == ",":
        text = pc.replace_substring(text, ",", ".")
    try:
        return pc.cast(text, pa.float64())
    except pa.ArrowInvalid:
        return None


def _count(flags: pa.Array) -> int:
    """How many are true (NULL counts as false)."""
    import pyarrow.compute as pc

    return int(pc.sum(flags).as_py() or 0)


def _layout(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value's start and length in ``data``, the bytes of the values (from the first
    value's start to the last's end)."""
    import pyarrow as pa

    n = len(values)
    buffers = values.buffers()
    wide = pa.types.is_large_string(values.type)
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[values.offset : values.offset + n + 1]
    lo, hi = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    data = np.frombuffer(buffers[2], dtype=np.uint8)[lo:hi] if buffers[2] else np.zeros(0, "u1")
    return (offsets[:-1] - lo).astype(np.int64), np.diff(offsets).astype(np.int64), data


def _odd_bytes(data: np.ndarray) -> bool:
    """Whether any byte is other than a digit (48-57), ``,`` ``-`` ``.`` (44-46); ``/`` (47)
    is the one byte between that is odd. Min and max first (2 ms a million values): most
    columns hold no odd byte at all."""
    return bool(data.size) and bool(data.min() < 44 or data.max() > 57 or (data == 47).any())


def _marks(decimal: str) -> tuple[str, str]:
    """The group mark and the decimal mark of a locale."""
    return (",", ".") if decimal == "." else (".", ",")


def _owner(start: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The value whose bytes hold each of ``positions`` (sorted)."""
    return np.searchsorted(start[1:], positions, side="right")


def _group_marks_ok(
    start: np.ndarray, length: np.ndarray, lead: np.ndarray, at: np.ndarray, marks: np.ndarray
) -> np.ndarray:
    """Per value: every group mark a multiple of four bytes before the end of the integer
    part, and k of them leaving one to three digits before the first. (The marks then sit
    exactly at the 4th, 8th, … byte from that end: k such places with only 1–3 bytes left
    over cannot skip one.) ``at``: where the decimal mark is, -1 for none."""
    ok = np.ones(len(start), dtype=bool)
    who = _owner(start, marks)
    int_end = np.where(at >= 0, at, length)  # one past the integer part, from the start
    gap = int_end[who] - (marks - start[who])
    ok[who[(gap <= 0) | (gap % 4 != 0)]] = False
    k = np.bincount(who, minlength=len(start))
    first_group = int_end - lead - 4 * k
    ok[(k > 0) & ((first_group < 1) | (first_group > 3))] = False
    return ok


def _shape_ok(values: pa.Array, decimal: str, present: np.ndarray) -> tuple[np.ndarray, bool]:
    """Which values are exactly ``-?([0-9]+|[0-9]{1,3}(G[0-9]{3})+)(D[0-9]+)?`` (G the group
    mark, D the decimal mark of the export's locale), and whether any group mark occurs.

    Every byte is a digit, a mark or a minus; a minus only first; at most one decimal mark,
    with digits on both sides; the group marks as ``_group_marks_ok`` says. Arrow finds each
    value's first decimal mark (~13 ms a million values); odd bytes, minus signs, group
    marks and second decimal marks, where a column has any, are traced to their value by
    position (~20 ms a million)."""
    n = len(values)
    start, length, data = _layout(values)
    ok = present & (length > 0)
    if _odd_bytes(data):
        ok[_owner(start, np.flatnonzero((data < 44) | (data > 57) | (data == 47)))] = False
    group, point = _marks(decimal)
    lead = np.zeros(n, dtype=np.int64)  # bytes before the first digit: 1 after a minus
    minus = np.flatnonzero(data == _MINUS)
    if minus.size:
        who = _owner(start, minus)
        first = minus == start[who]
        ok[who[~first]] = False
        lead[who[first]] = 1
    ok &= length > lead
    at = _first(values, point, present)
    has_point = at >= 0
    ok[has_point & ((at == lead) | (at == length - 1))] = False
    points = data == ord(point)
    if np.count_nonzero(points) != np.count_nonzero(has_point):
        who = _owner(start, np.flatnonzero(points))
        ok[who[1:][who[1:] == who[:-1]]] = False  # a second decimal mark
    marks = np.flatnonzero(data == ord(group))
    if marks.size:
        ok &= _group_marks_ok(start, length, lead, at, marks)
    return ok, bool(marks.size)


def _first(values: pa.Array, text: str, present: np.ndarray) -> np.ndarray:
    """Where ``text`` first occurs in each value, in bytes from its start; -1 where not (and
    for NULL: its slot is read from the buffer and masked, as ``fill_null`` would import
    pandas)."""
    import pyarrow.compute as pc

    return np.where(present, _integers(pc.find_substring(values, text)), -1).astype(np.int64)


def _integers(values: pa.Array) -> np.ndarray:
    """An int32 or int64 Arrow array's slots (offsets and positions in a large_string are
    int64), NULL slots as they lie."""
    return slots(values, np.int64 if values.type.bit_width == 64 else np.int32)


def _cast(values: pa.Array, plain: np.ndarray, decimal: str, has_marks: bool) -> np.ndarray:
    """The plain-shaped values (``plain``) through Arrow's cast, marks removed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = values if plain.all() else values.filter(arrow_array(plain, pa.bool_()))
    if decimal == ",":
        text = pc.replace_substring(pc.replace_substring(text, ".", ""), ",", ".")
    elif has_marks:
        text = pc.replace_substring(text, ",", "")
    return slots(pc.cast(text, pa.float64()), np.float64)  # no value is NULL here


def _unusual(values: pa.Array, decimal: str) -> tuple[np.ndarray, np.ndarray]:
    """number_sql's other cases, for the values not in the plain shape: spaces around a
    number, ``""``/``n/a`` (NULL), ``nan``/``inf`` (``NOT_FINITE``: NaN), the instance form,
    else -inf."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(values)
    trimmed = pc.utf8_trim(values, " ")
    spaced, _ = _shape_ok(trimmed, decimal, np.ones(n, dtype=bool))
    lower = pc.utf8_lower(trimmed)
    empty = _equal(lower, "") | _equal(lower, "n/a")
    nan = np.zeros(n, dtype=bool)
    for text in NOT_FINITE:
        nan |= _equal(lower, text)
    # "<number> (<anything but a line break>)", spaces around: the head is read as a number
    parts = pc.split_pattern(trimmed, " (", max_splits=1)  # list_element imports pandas
    head = parts.values.take(arrow_array(_integers(parts.offsets)[:-1], pa.int64()))
    tail_ok = (
        flags(pc.ends_with(trimmed, ")"))
        & flags(pc.match_substring(trimmed, " ("))
        & ~flags(pc.match_substring(trimmed, "\n"))
    )
    head_ok, _ = _shape_ok(head, decimal, np.ones(n, dtype=bool))
    instance = tail_ok & head_ok & ~spaced
    number = np.full(n, UNREADABLE_VALUE)
    number[nan] = np.nan
    for chosen, text in ((spaced, trimmed), (instance, head)):
        if chosen.any():
            number[chosen] = _cast(text, chosen, decimal, True)
    return number, ~empty


def _equal(values: pa.Array, text: str) -> np.ndarray:
    """Which values are exactly ``text`` (comparing to a scalar would import pandas)."""
    import pyarrow.compute as pc

    length = _integers(pc.binary_length(values))
    return (length == len(text.encode())) & flags(pc.starts_with(values, text))
