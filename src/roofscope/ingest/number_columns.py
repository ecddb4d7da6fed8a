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
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from roofscope.ingest.numbers import UNREADABLE_VALUE

if TYPE_CHECKING:
    import pyarrow as pa


_MINUS = ord("-")
# a column of more text than this is parsed chunk by chunk (one chunk each call costs a few
# fixed calls, so columns under it are combined into one: a copy of their text)
_COMBINED_LIMIT = 1 << 30

Page = TypeVar("Page", "pa.Table", "pa.RecordBatch")


def parse_columns(page: Page, metrics: Collection[str], decimal: str, pool: Executor) -> Page:
    """``page`` with each column named in ``metrics`` parsed by ``parse_column`` (on the
    pool's threads: numpy and Arrow let go of the GIL), the others as they are."""
    names = page.schema.names
    chosen = [i for i, name in enumerate(names) if name in metrics]
    columns = list(page.columns)
    for i, parsed in zip(
        chosen, pool.map(lambda i: parse_column(columns[i], decimal), chosen), strict=True
    ):
        columns[i] = parsed
    return type(page).from_arrays(columns, names=names)


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
    valid = _valid(values)
    plain, has_marks = _shape_ok(values, decimal, valid)
    number = np.full(n, np.nan)
    present = plain.copy()
    if plain.any():
        number[plain] = _cast(values, plain, decimal, has_marks)
    rest = np.flatnonzero(valid & ~plain)
    if rest.size:
        sub_number, sub_present = _unusual(values.take(_indices(rest)), decimal)
        number[rest] = sub_number
        present[rest] = sub_present
    return _doubles(number, present)


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
    if data.size and (data.min() < 44 or data.max() > 57 or (data == 47).any()):
        return None
    minus = np.count_nonzero(data == _MINUS)
    if minus and minus != _count(pc.starts_with(values, "-")):
        return None
    group, point = (",", ".") if decimal == "." else (".", ",")
    for edge in (pc.starts_with(values, point), pc.starts_with(values, "-" + point)):
        if _count(edge):
            return None
    if _count(pc.ends_with(values, point)):
        return None
    marks = np.flatnonzero(data == ord(group))
    text = values
    if marks.size:
        valid = _valid(values)
        lead = (_bits_or_none(pc.starts_with(values, "-"), len(values))).astype(np.int64)
        at = _first(values, point, valid)
        if not _group_marks_ok(start, length, lead, at, marks)[valid].all():
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


def _bits_or_none(flags: pa.Array, n: int) -> np.ndarray:
    """A boolean Arrow array as numpy, NULL as false."""
    bits = _bits(flags.buffers()[1], flags.offset, n)
    return bits & _valid(flags) if flags.null_count else bits


def _layout(values: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value's start and length in ``data``, the bytes of the values (from the first
    value's start to the last's end)."""
    n = len(values)
    buffers = values.buffers()
    wide = values.type.equals(_large_string())
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32)
    offsets = offsets[values.offset : values.offset + n + 1]
    lo, hi = (int(offsets[0]), int(offsets[-1])) if n else (0, 0)
    data = np.frombuffer(buffers[2], dtype=np.uint8)[lo:hi] if buffers[2] else np.zeros(0, "u1")
    return (offsets[:-1] - lo).astype(np.int64), np.diff(offsets).astype(np.int64), data


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


def _valid(values: pa.Array) -> np.ndarray:
    if values.null_count == 0:
        return np.ones(len(values), dtype=bool)
    return _bits(values.buffers()[0], values.offset, len(values))


def _bits(bitmap: pa.Buffer, offset: int, n: int) -> np.ndarray:
    """An Arrow bitmap as numpy booleans (``to_numpy`` of a boolean array imports pandas)."""
    packed = np.frombuffer(bitmap, dtype=np.uint8)
    return np.unpackbits(packed, bitorder="little")[offset : offset + n].astype(bool)


def _shape_ok(values: pa.Array, decimal: str, valid: np.ndarray) -> tuple[np.ndarray, bool]:
    """Which values are exactly ``-?([0-9]+|[0-9]{1,3}(G[0-9]{3})+)(D[0-9]+)?`` (G the group
    mark, D the decimal mark of the export's locale), and whether any group mark occurs.

    Every byte is a digit, a mark or a minus; a minus only first; at most one decimal mark,
    with digits on both sides; the group marks as ``_group_marks_ok`` says. Arrow finds each
    value's first decimal mark (~13 ms a million values); odd bytes, minus signs, group
    marks and second decimal marks, where a column has any, are traced to their value by
    position (~20 ms a million)."""
    n = len(values)
    start, length, data = _layout(values)
    ok = valid & (length > 0)
    # digits are 48-57; ',' '-' '.' 44-46; '/' (47) is the one byte between that is odd.
    # min and max first (2 ms a million values): most columns hold no odd byte at all
    if data.size and (data.min() < 44 or data.max() > 57 or (data == 47).any()):
        ok[_owner(start, np.flatnonzero((data < 44) | (data > 57) | (data == 47)))] = False
    group, point = (",", ".") if decimal == "." else (".", ",")
    lead = np.zeros(n, dtype=np.int64)  # bytes before the first digit: 1 after a minus
    minus = np.flatnonzero(data == _MINUS)
    if minus.size:
        who = _owner(start, minus)
        first = minus == start[who]
        ok[who[~first]] = False
        lead[who[first]] = 1
    ok &= length > lead
    at = _first(values, point, valid)
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


def _first(values: pa.Array, text: str, valid: np.ndarray) -> np.ndarray:
    """Where ``text`` first occurs in each value, in bytes from its start; -1 where not (and
    for NULL: its slot is read from the buffer and masked, as ``fill_null`` would import
    pandas)."""
    import pyarrow.compute as pc

    return np.where(valid, _integers(pc.find_substring(values, text)), -1).astype(np.int64)


def _integers(values: pa.Array) -> np.ndarray:
    """An int32 or int64 Arrow array's slots as numpy, NULL slots as they lie (``to_numpy``
    of an array with NULLs would import pandas). Offsets and positions in a large_string
    are int64."""
    kind = np.int64 if values.type.bit_width == 64 else np.int32
    return np.frombuffer(values.buffers()[1], dtype=kind)[
        values.offset : values.offset + len(values)
    ]


def _large_string() -> Any:
    import pyarrow as pa

    return pa.large_string()


def _cast(values: pa.Array, plain: np.ndarray, decimal: str, has_marks: bool) -> np.ndarray:
    """The plain-shaped values (``plain``) through Arrow's cast, marks removed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = values if plain.all() else values.filter(_booleans(plain))
    if decimal == ",":
        text = pc.replace_substring(pc.replace_substring(text, ".", ""), ",", ".")
    elif has_marks:
        text = pc.replace_substring(text, ",", "")
    number = pc.cast(text, pa.float64())
    # read from the buffer: no value is NULL here, and ``to_numpy`` would import pandas
    return np.frombuffer(number.buffers()[1], dtype=np.float64)[
        number.offset : number.offset + len(number)
    ]


def _unusual(values: pa.Array, decimal: str) -> tuple[np.ndarray, np.ndarray]:
    """number_sql's other cases, for the values not in the plain shape: spaces around a
    number, ``""``/``n/a`` (NULL), ``nan``/``-nan`` (NaN), the instance form, else -inf."""
    import pyarrow.compute as pc

    n = len(values)
    trimmed = pc.utf8_trim(values, " ")
    spaced, _ = _shape_ok(trimmed, decimal, np.ones(n, dtype=bool))
    lower = pc.utf8_lower(trimmed)
    empty = _equal(lower, "") | _equal(lower, "n/a")
    nan = _equal(lower, "nan") | _equal(lower, "-nan")
    # "<number> (<anything but a line break>)", spaces around: the head is read as a number
    parts = pc.split_pattern(trimmed, " (", max_splits=1)  # list_element imports pandas
    head = parts.values.take(_indices(_integers(parts.offsets)[:-1]))
    tail_ok = (
        _numpy_bool(pc.ends_with(trimmed, ")"))
        & _numpy_bool(pc.match_substring(trimmed, " ("))
        & ~_numpy_bool(pc.match_substring(trimmed, "\n"))
    )
    head_ok, _ = _shape_ok(head, decimal, np.ones(n, dtype=bool))
    instance = tail_ok & head_ok & ~spaced
    number = np.full(n, UNREADABLE_VALUE)
    number[nan] = np.nan
    for chosen, text in ((spaced, trimmed), (instance, head)):
        if chosen.any():
            number[chosen] = _cast(text, chosen, decimal, True)
    return number, ~empty


def _numpy_bool(values: pa.Array) -> np.ndarray:
    """A boolean Arrow array without NULLs as numpy."""
    assert values.null_count == 0
    return _bits(values.buffers()[1], values.offset, len(values))


def _equal(values: pa.Array, text: str) -> np.ndarray:
    """Which values are exactly ``text`` (comparing to a scalar would import pandas)."""
    import pyarrow.compute as pc

    length = _integers(pc.binary_length(values))
    return (length == len(text.encode())) & _numpy_bool(pc.starts_with(values, text))


def _booleans(mask: np.ndarray) -> pa.Array:
    import pyarrow as pa

    bits = np.packbits(mask, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(bits)])


def _indices(positions: np.ndarray) -> pa.Array:
    import pyarrow as pa

    values = np.ascontiguousarray(positions, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _doubles(number: np.ndarray, present: np.ndarray) -> pa.Array:
    """A float64 Arrow array of ``number``, NULL where not ``present`` (built from buffers:
    ``pa.array`` on numpy imports pandas, 0.26 s)."""
    import pyarrow as pa

    number = np.ascontiguousarray(number, dtype=np.float64)
    validity = None if present.all() else pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(pa.float64(), len(number), [validity, pa.py_buffer(number)])
