"""The vectorised number parse (``ingest/number_columns.py``) against the SQL one it replaced.

``number_sql`` is the grammar's reference: a regular expression per value inside DuckDB. Every
column here is parsed both ways and must agree value for value — number, NULL, NaN or -inf —
whether ``parse_column`` took its fast path (every value plain) or its full one.
"""

from __future__ import annotations

import math
import subprocess
import sys

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofscope.ingest import number_columns
from roofscope.ingest.number_columns import parse_column
from roofscope.ingest.numbers import number_sql
from tests.conftest import SAMPLES

SAMPLE = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"  # plain columns and grouped ones


def _reference(values: list[str | None], decimal: str) -> list[float | None]:
    con = duckdb.connect()
    con.register("t", pa.table({"x": pa.array(values, pa.string())}))
    return [r[0] for r in con.execute(f"SELECT {number_sql('x', decimal)} FROM t").fetchall()]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b


def _check(values: list[str | None], decimal: str) -> None:
    got = parse_column(pa.array(values, pa.string()), decimal).to_pylist()
    want = _reference(values, decimal)
    wrong = [(v, w, g) for v, w, g in zip(values, want, got, strict=True) if not _same(w, g)]
    assert not wrong, wrong[:5]


def _grouped(n: int, mark: str) -> str:
    digits = str(n)
    groups = []
    while digits:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    return mark.join(groups)


@st.composite
def _ncu_number(draw: st.DrawFn, decimal: str) -> str:
    """A number the way ncu writes one (grouped or not, with or without a fraction)."""
    group = "," if decimal == "." else "."
    whole = draw(st.integers(0, 10**13))
    text = _grouped(whole, group) if draw(st.booleans()) else str(whole)
    if draw(st.booleans()):
        text += decimal + draw(st.text("0123456789", min_size=1, max_size=7))
    return ("-" if draw(st.integers(0, 9)) == 0 else "") + text


# a no-break space, an ideographic and a thin space: DuckDB's trim() alone would take them
ODD = st.text("0123456789,.- na/()\t\ne+\u00a0\u3000\u2009", max_size=10)
EDGE_VALUES = [
        "20,992000", "1,0000,00", "1234,567,890", ",123", "1,", ".5", "5.", "-.5", "-5.",
        "-", "--1", "1-2", "1.2.3", "1e3", "+5", "inf", "nan", "-nan", "NaN", "n/a", "N/A",
        " 1,024 ", "65,536 (0; 0; 65,536)", "65,536  (0)", "5 (a\nb)", "", "1" * 400, None,
        "1_000", "1.234,5", "\u00a0n/a", "\u3000nan", "\u00a05",
]  # fmt: skip
EDGES = st.sampled_from(EDGE_VALUES)


@pytest.mark.parametrize("decimal", [".", ","])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_a_column_parses_as_number_sql_reads_it(decimal, data):
    """Mostly ncu's numbers with a few odd values mixed in, as real columns are: the fast
    path must give way whenever one value is not plain."""
    plain = data.draw(st.lists(_ncu_number(decimal), min_size=1, max_size=40))
    odd = data.draw(st.lists(st.one_of(EDGES, ODD), max_size=3))
    values: list[str | None] = list(plain)
    for value in odd:
        values.insert(data.draw(st.integers(0, len(values))), value)
    _check(values, decimal)


@pytest.mark.parametrize("decimal", [".", ","])
@pytest.mark.parametrize("edge", EDGE_VALUES)
def test_each_edge_among_plain_numbers(decimal, edge):
    numbers = ["1", "22", "1,234" if decimal == "." else "1.234", "-4"]
    _check([*numbers, edge, *numbers], decimal)


def test_the_fast_path_takes_plain_columns_and_only_them():
    plain = pa.array(["1,024", "-3.5", None, "12,345,678.25", "0"], pa.string())
    assert number_columns._all_plain(plain, ".") is not None
    for odd in [".5", "5.", "-.5", "1,0000", "n/a", "1e3", " 1", "1-", ""]:
        column = pa.array(["1", odd, "2"], pa.string())
        assert number_columns._all_plain(column, ".") is None, odd


def test_sliced_chunked_and_large_columns_read_alike():
    values = ["1,024", "n/a", "2.5", None, "65,536 (0; 1)", "x", "-7", "1,0"]
    want = _reference(values, ".")
    whole = pa.array(values, pa.string())
    cases = [
        (whole.slice(2), want[2:]),
        (whole.slice(1, 4), want[1:5]),
        (pa.chunked_array([whole.slice(0, 3), whole.slice(3, 0), whole.slice(3)]), want),
        (pa.array(values, pa.large_string()), want),
        (pa.array(values, pa.large_string()).slice(3), want[3:]),
    ]
    for column, expect in cases:
        got = parse_column(column, ".").to_pylist()
        assert len(got) == len(expect)
        assert all(_same(w, g) for w, g in zip(expect, got, strict=True)), (column, got)


def test_a_column_too_large_to_combine_is_parsed_chunk_by_chunk(monkeypatch):
    monkeypatch.setattr(number_columns, "_COMBINED_LIMIT", 8)
    values = ["1,024", "n/a", "2.5", None, "x"]
    column = pa.chunked_array(
        [pa.array(values[:2], pa.string()), pa.array(values[2:], pa.string())]
    )
    got = parse_column(column, ".")
    assert isinstance(got, pa.ChunkedArray) and got.num_chunks == 2
    want = _reference(values, ".")
    assert all(_same(w, g) for w, g in zip(want, got.to_pylist(), strict=True))


def test_parsing_does_not_import_pandas(tmp_path):
    """pandas is an extra and costs ~0.3 s to import: ``pa.array``, ``fill_null``,
    ``to_numpy`` and ``Schema.empty_table`` would all pull it in. A real page through the
    fast path, the full path and the stream, in a fresh interpreter."""
    code = (
        "import sys, pyarrow as pa, pyarrow.csv as c, io\n"
        "from roofscope.ingest.number_columns import parse_column\n"
        "t = c.read_csv(io.BytesIO(b'x\\n1\\nn/a\\n 5 \\n7 (1)\\nnan\\n\"1,000.5\"\\nzz\\n'),"
        " convert_options=c.ConvertOptions(column_types={'x': pa.string()},"
        " strings_can_be_null=True, null_values=['']))\n"
        "parse_column(t.column(0)); parse_column(t.column(0).slice(1, 2))\n"
        "parse_column(t.column(0).slice(0, 1))  # a ChunkedArray\n"
        "import roofscope\n"
        "from roofscope.ingest.ncu import pages\n"
        "pages.RAW_TABLE_LIMIT = pages.WHOLE_TEXT_LIMIT = 0\n"
        f"roofscope.load({str(SAMPLE)!r}, use_cache=False)\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
