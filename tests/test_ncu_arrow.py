"""Issue 20: ncu pages read by pyarrow (``ingest/ncu/arrow.py``) build the very store that
DuckDB's readers and the Python pass build, and any file pyarrow would not read exactly (a
value that crosses a line, a row of another width, a header elsewhere) is handed to those
readers, whose checks and warnings then apply. The independent reading here is Python's
``csv`` module."""

from __future__ import annotations

import csv
import gzip
import io
import os
import shutil
import threading
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roofscope.ingest.ncu.arrow as ncu_arrow
import roofscope.ingest.ncu.pages as ncu_pages
from roofscope.errors import RoofscopeError
from roofscope.ingest.ncu.pages import READER_ENV, _unique
from roofscope.ingest.sniff import RAW, Sniffed, open_input
from roofscope.session import load
from tests.conftest import SAMPLES
from tests.ncu_builder import raw_page, write

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

CORPUS = Path(__file__).parent / "corpus" / "bad"
REAL = [
    SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv",  # 1,279 columns, 3 launches
    SAMPLES / "mobilenetv2_fp32_h100.ncu-raw-base.csv",  # --print-units base
    SAMPLES / "cnn_tf32_b128_h100.ncu-raw.csv.gz",  # gzip
    SAMPLES / "mobilenetv2_fp32_h100.ncu-details.csv",  # a details page: every column as text
    CORPUS / "decimal_comma.ncu-raw.csv",  # European locale
    CORPUS / "glob[12]*?.ncu-raw.csv",  # a name DuckDB would expand
]
UNITS = {"gpu__time_duration.sum": "us", "dram__bytes.sum": "Mbyte"}


def _launches(n: int, kernel: str = "k{i}(float *)") -> list[tuple[str, dict[str, str]]]:
    return [
        (kernel.format(i=i), {"gpu__time_duration.sum": f"{i + 1}.5", "dram__bytes.sum": "2.5"})
        for i in range(n)
    ]


def _store(path: Path, reader: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Every table of the cache built with ``reader``: columns, rows and an order-free hash of
    the rows, and the warnings; or the error."""
    cache = tmp / f"cache-{reader}"
    shutil.rmtree(cache, ignore_errors=True)
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(cache))
    monkeypatch.setenv(READER_ENV, reader)
    try:
        session = load(path)
    except RoofscopeError as exc:
        return {"error": str(exc)}
    out: dict = {"said": list(session.warnings)}
    session.close()
    (db,) = cache.glob("*.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        for (table,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall():
            columns = [c[:2] for c in con.execute(f"DESCRIBE {table}").fetchall()]
            skip = "WHERE t.key <> 'inputs'" if table == "meta" else ""  # the file's own path
            rows = con.execute(f"SELECT count(*), sum(hash(t)::HUGEINT) FROM {table} t {skip}")
            out[table] = (columns, *rows.fetchall())
    finally:
        con.close()
    return out


@pytest.fixture(params=["whole", "streamed"])
def taken(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each raw page read, whether pyarrow took it; read whole (``read_page``), or
    ``streamed`` (``PageStream``: every raw page then streams, as a large one does)."""
    seen: list[bool] = []
    if request.param == "streamed":
        monkeypatch.setattr(ncu_pages, "RAW_TABLE_LIMIT", 0)
        monkeypatch.setattr(ncu_pages, "WHOLE_TEXT_LIMIT", 0)
        monkeypatch.setattr(ncu_arrow, "STREAM_GROUP_BYTES", 2048)  # groups of a few rows
        create = ncu_pages._create_from_arrow

        def spy_create(con, src, sn, columns, page):
            taken = create(con, src, sn, columns, page)
            if isinstance(page, ncu_arrow.PageStream):
                seen.append(taken)
            return taken

        def spy_read(fd, sn, *args, **kwargs):  # a raw page read whole is not counted
            table = original(fd, sn, *args, **kwargs)
            if sn.layout != RAW:  # a details page is read whole, whatever its size
                seen.append(table is not None)
            return table

        original = ncu_arrow.read_page
        monkeypatch.setattr(ncu_pages, "_create_from_arrow", spy_create)
        monkeypatch.setattr(ncu_arrow, "read_page", spy_read)
        return seen
    original = ncu_arrow.read_page

    def spy(*args, **kwargs):
        table = original(*args, **kwargs)
        seen.append(table is not None)
        return table

    monkeypatch.setattr(ncu_arrow, "read_page", spy)
    return seen


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_pages_give_the_store_duckdb_gives(path, tmp_path, monkeypatch, taken):
    fast = _store(path, "arrow", tmp_path, monkeypatch)
    assert taken == [True]
    assert fast == _store(path, "duckdb", tmp_path, monkeypatch)
    assert fast["launches"][1][0] > 0


def _rewritten(text: str, how: str) -> bytes:
    data = text.encode()
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "rows ended by a lone CR":
        *head, rows = data.split(b"\n", 3)  # the preamble, the header and the units row
        return b"\n".join(head) + b"\n" + rows.rstrip(b"\n").replace(b"\n", b"\r") + b"\n"
    if how == "bom, no final newline":
        return b"\xef\xbb\xbf" + data.rstrip(b"\n")
    if how == "gzip in two members":
        cut = data.index(b"\n", len(data) // 2) + 1
        return gzip.compress(data[:cut]) + gzip.compress(data[cut:])
    return data


@pytest.mark.parametrize(
    "how",
    [
        "as written",
        "crlf",
        "rows ended by a lone CR",
        "bom, no final newline",
        "gzip in two members",
    ],
)
def test_rewrites_are_taken_and_read_alike(how, tmp_path, monkeypatch, taken):
    monkeypatch.setattr(ncu_arrow, "BLOCK_BYTES", 4096)  # many blocks: rows cross them
    text = raw_page(_launches(300), UNITS, preamble="==PROF== Connected to process 1\n")
    path = tmp_path / "page.ncu-raw.csv"
    path.write_bytes(_rewritten(text, how))
    fast = _store(path, "arrow", tmp_path, monkeypatch)
    assert taken == [True]
    assert fast == _store(path, "duckdb", tmp_path, monkeypatch)
    assert fast["launches"][1][0] == 300


DAMAGE = {
    # a noise line with an open quote: pyarrow would swallow the next launch into one row
    "unbalanced quote": lambda lines: [*lines[:5], '"loss = 0.5', *lines[5:]],
    # a kernel name across two lines: a value that crosses a line
    "newline in a name": lambda lines: [*lines[:5], lines[5].replace("k3(", "k3\n("), *lines[6:]],
    "short row": lambda lines: [*lines[:5], lines[5].rsplit(",", 1)[0], *lines[6:]],
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damage_is_left_to_the_readers_that_name_it(damage, tmp_path, monkeypatch, taken):
    lines = raw_page(_launches(8), UNITS).splitlines()
    path = write(tmp_path / "page.ncu-raw.csv", "\n".join(DAMAGE[damage](lines)) + "\n")
    fast = _store(path, "arrow", tmp_path, monkeypatch)
    assert taken == [False]
    assert fast == _store(path, "duckdb", tmp_path, monkeypatch)


def test_the_noise_line_of_the_corpus_costs_no_launch(tmp_path, monkeypatch, taken):
    """The failure that made rows count against lines: before, pyarrow read this file with
    launch 2 swallowed into the noise line above it, and said nothing."""
    fast = _store(CORPUS / "unbalanced_quote.ncu-raw.csv", "arrow", tmp_path, monkeypatch)
    assert taken == [False]
    assert fast["launches"][1][0] == 6
    assert any("skipped 1 line(s)" in w for w in fast["said"])


TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.lists(TEXT, min_size=4, max_size=4), min_size=1, max_size=30),
    stray=st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(['"', '","', "\n", "\r\n", ","])),
        max_size=3,
    ),
    block=st.integers(64, 2048),
)
def test_what_pyarrow_takes_is_what_python_csv_reads(rows, stray, block, tmp_path, monkeypatch):
    """Any all-quoted table, with stray quotes, separators and line breaks dropped in:
    pyarrow either gives up, or gives row for row what ``csv`` reads line by line, empty
    lines skipped (as DuckDB's reader skips them)."""
    monkeypatch.setattr(ncu_arrow, "BLOCK_BYTES", block)
    header = ["ID", "Kernel Name", "a", "b"]
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([header, *rows])
    text = buf.getvalue()
    head, body = text[: text.index("\n") + 1], text[text.index("\n") + 1 :]
    for at, piece in stray:
        cut = at % (len(body) + 1)
        body = body[:cut] + piece + body[cut:]
    path = tmp_path / "t.csv"
    path.write_bytes((head + body).encode())
    sn = Sniffed(path, RAW, header, header_line=0, raw_header_line=head.rstrip("\n"))
    fd = open_input(path)
    try:
        table = ncu_arrow.read_page(fd, sn, _unique(header), None)
    finally:
        os.close(fd)
    if table is None:
        return
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line for line in lines if line not in ("", "\r")]
    expected = [next(csv.reader([line]), []) for line in lines]
    got = [[v if v is not None else "" for v in row.values()] for row in table.to_pylist()]
    assert len(got) == len(lines)
    assert got == [row + [""] * (len(header) - len(row)) for row in expected]


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b",", b"\r", b"\n", b"\r\n"]), max_size=40).map(b"".join),
    chunk=st.integers(1, 16),
)
def test_lines_are_counted_where_pyarrow_ends_them(data: bytes, chunk: int) -> None:
    """``\\n``, ``\\r\\n`` (also split between two reads) and a lone ``\\r`` each end a line,
    as does the end of the file after a last line without a break; the empty ones (which
    pyarrow skips) are counted apart, so the rows are matched against the other lines."""
    import pyarrow as pa

    expected = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = expected.count(b"\n") + (not expected.endswith(b"\n") and expected != b"")
    split = expected.split(b"\n")[:lines]
    empty = sum(1 for line in split if line == b"")
    original = ncu_arrow._COUNT_CHUNK
    ncu_arrow._COUNT_CHUNK = chunk
    try:
        assert ncu_arrow._lines(pa.BufferReader(data), 0, False) == (lines, empty)
    finally:
        ncu_arrow._COUNT_CHUNK = original


def test_a_gzip_page_is_judged_by_the_text_it_holds(tmp_path, monkeypatch):
    """Whether a page streams is judged by its text, not its gzip's size: a page whose
    compressed file is under the limit but whose text is over it streams."""
    text = raw_page(_launches(300), UNITS)
    path = tmp_path / "page.ncu-raw.csv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    packed = path.stat().st_size
    assert len(text) > 3 * packed  # the text is several times the file
    monkeypatch.setattr(ncu_pages, "RAW_TABLE_LIMIT", 0)
    monkeypatch.setattr(ncu_pages, "WHOLE_TEXT_LIMIT", 2 * packed)
    streamed: list[bool] = []
    original = ncu_arrow.stream_page

    def spy(*args, **kwargs):
        streamed.append(True)
        return original(*args, **kwargs)

    monkeypatch.setattr(ncu_arrow, "stream_page", spy)
    store = _store(path, "arrow", tmp_path, monkeypatch)
    assert streamed == [True]
    assert store == _store(path, "duckdb", tmp_path, monkeypatch)
    assert store["launches"][1][0] == 300


def _page_stream(tmp_path: Path, convert) -> tuple[ncu_arrow.PageStream, int]:
    text = raw_page(_launches(50), UNITS)
    path = tmp_path / "page.ncu-raw.csv"
    path.write_text(text)
    header = next(csv.reader([text.splitlines()[0]]))
    sn = Sniffed(path, RAW, header, header_line=0, raw_header_line=text.splitlines()[0])
    fd = open_input(path)
    stream = ncu_arrow.stream_page(fd, sn, _unique(header), None, convert)
    assert stream is not None
    return stream, fd


def test_a_stream_given_up_on_does_not_hold_its_reader(tmp_path, monkeypatch):
    """DuckDB stops reading after a row; closing the stream must free the reader's thread,
    not leave it waiting for a group that will never come."""
    monkeypatch.setattr(ncu_arrow, "STREAM_GROUP_BYTES", 256)
    stream, fd = _page_stream(tmp_path, lambda page: page)
    con = duckdb.connect()
    done = threading.Event()

    def use() -> None:
        con.register("p", stream.reader())
        con.execute("SELECT * FROM p")
        con.fetchone()
        stream.close()
        con.close()
        done.set()

    worker = threading.Thread(target=use, daemon=True)
    worker.start()
    try:
        assert done.wait(30), "the connection hung on the abandoned stream"
    finally:
        os.close(fd)


@pytest.mark.parametrize("when", ["first group", "schema"])
def test_a_fault_of_ours_in_the_stream_is_raised_not_read_around(when, tmp_path, monkeypatch):
    """DuckDB reports any error of a stream as its own; one that is not the file's (a bug in
    the parse) must reach the user, not send the page quietly to the slower readers."""
    import roofscope.ingest.number_columns as number_columns

    parse = number_columns.parse_columns

    def broken(page, *args, **kwargs):
        if when == "schema" or page.num_rows:
            raise TypeError("a bug in the parse")
        return parse(page, *args, **kwargs)

    monkeypatch.setattr(ncu_pages, "RAW_TABLE_LIMIT", 0)
    monkeypatch.setattr(ncu_pages, "WHOLE_TEXT_LIMIT", 0)
    monkeypatch.setattr(number_columns, "parse_columns", broken)
    path = write(tmp_path / "page.ncu-raw.csv", raw_page(_launches(20), UNITS))
    with pytest.raises((RoofscopeError, TypeError), match="a bug in the parse"):
        load(path, use_cache=False)
