"""Issue 20: the Arrow reader of nsys SQLite exports (ADBC batches read ahead by a second thread,
launch-ordered kernels streamed straight into the store) builds the very store that the
``sqlite3`` reader (value by value, staged and sorted in DuckDB) builds, and where it cannot
take a file it hands it to that reader, whose checks and messages then apply."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

import roofscope.ingest.nsys.arrow as nsys_arrow
import roofscope.ingest.nsys.export as nsys_export
import roofscope.ingest.nsys.tables as nsys_tables
from roofscope.errors import RoofscopeError
from roofscope.metrics import facts_select
from roofscope.session import load
from tests.conftest import SHARED
from tests.nsys_builder import Copy, Export, Kernel

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
SAMPLES = sorted(SHARED.glob("*/**/*.sqlite")) if SHARED.is_dir() else []


def _trace(path: Path, n: int = 4000) -> Path:
    """``n`` kernels in start order on 2 devices and 4 streams: overlapping runs (busy intervals
    that span batches), kernels that start together, a few negative durations, NVTX ranges and
    copies."""
    kernels = []
    for i in range(n):
        start = 1_000_000 + 700 * i
        end = start + (2500 if i % 7 else 400) + (i * 37) % 900
        if i % 501 == 3:
            end = start - 10  # ends before it starts: no valid duration
        kernels.append(
            Kernel(
                f"kern_{i % 13}<{i % 3}>(float *, int)",
                start,
                end,
                stream=7 + i % 4,
                device=i % 2 if i < n // 2 else 0,
                grid=(128 + i % 5, 1, 1),
            )
        )
    if n > 100:
        kernels[100].start = kernels[99].start  # two kernels start together
        kernels[100].end = kernels[100].start + 50
    ranges = [
        (1_000_000 + 200_000 * j, 1_000_000 + 200_000 * j + 150_000, f"step {j}") for j in range(14)
    ]
    ranges.append((1_000_000, 1_000_000 + 3_000_000, "epoch"))
    copies = [Copy(900_000 + 5000 * j, 900_000 + 5000 * j + 800, 4096 * (j + 1)) for j in range(20)]
    return Export(kernels=kernels, ranges=ranges, copies=copies).write(path)


def _store(
    path: Path | list[Path], monkeypatch: pytest.MonkeyPatch, tmp: Path, reader: str
) -> dict:
    """Every table of the cache built with ``reader``: its columns, rows and an order-free hash
    of its rows (every value bit for bit; tables are sets), or the error it gave."""
    cache = tmp / f"cache-{reader}"
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(cache))
    monkeypatch.setenv(nsys_export.READER_ENV, reader)
    try:
        load(*(path if isinstance(path, list) else [path])).close()
    except RoofscopeError as exc:
        return {"error": str(exc)}
    (db,) = cache.glob("*.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        out = {}
        for table in sorted(tables):
            columns = [c[:2] for c in con.execute(f"DESCRIBE {table}").fetchall()]
            skip = "WHERE t.key <> 'inputs'" if table == "meta" else ""  # the file's own path
            out[table] = (
                columns,
                *con.execute(
                    f"SELECT count(*), sum(hash(t)::HUGEINT) FROM {table} t {skip}"
                ).fetchall(),
            )
        return out
    finally:
        con.close()


def _rows(path: Path, table: str, tmp: Path, reader: str = "arrow") -> list[tuple]:
    (db,) = (tmp / f"cache-{reader}").glob("*.duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT * FROM {table}").fetchall()
    finally:
        con.close()


@pytest.fixture
def plain_reasons(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Why the Arrow path handed a file to the sqlite3 reader, each time it did."""
    reasons: list[str] = []
    original = nsys_export._note_plain

    def note(export, info, why):
        reasons.append(why)
        original(export, info, why)

    monkeypatch.setattr(nsys_export, "_note_plain", note)
    return reasons


def test_threaded_arrow_path_builds_the_same_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str]
) -> None:
    monkeypatch.setattr(nsys_arrow, "BATCH_ROWS", 333)  # many batches: intervals cross them
    path = _trace(tmp_path / "trace.sqlite")
    fast = _store(path, monkeypatch, tmp_path, "arrow")
    assert plain_reasons == []  # the Arrow path took the file
    plain = _store(path, monkeypatch, tmp_path, "sqlite3")
    assert fast == plain
    assert fast["launches"][1][0] == 4000
    assert fast["launch_nvtx"][1][0] > 0  # NVTX attribution went through the streamed path
    assert fast["islands"][1][0] > 10


def test_rows_out_of_start_order_take_the_staged_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str]
) -> None:
    monkeypatch.setattr(nsys_arrow, "BATCH_ROWS", 500)
    path = _trace(tmp_path / "shuffled.sqlite", n=1500)
    con = sqlite3.connect(path)  # rows 1201…: one kernel out of start order
    con.execute(
        f"UPDATE {KERNEL} SET start = start - 900000, end = end - 900000 WHERE rowid = 1201"
    )
    con.commit()
    con.close()
    fast = _store(path, monkeypatch, tmp_path, "arrow")
    assert plain_reasons == ["rows out of start order"]
    assert fast == _store(path, monkeypatch, tmp_path, "sqlite3")


@pytest.mark.parametrize("row", [1, 1400], ids=["first-batch", "later-batch"])
def test_text_in_an_integer_column_gets_the_same_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str], row: int
) -> None:
    """The driver infers a column's type from its first batch and fails on a later value of
    another type: either way the sqlite3 reader reads the file and gives its own message."""
    monkeypatch.setattr(nsys_arrow, "BATCH_ROWS", 500)
    path = _trace(tmp_path / "text.sqlite", n=1500)
    con = sqlite3.connect(path)
    con.execute(f"UPDATE {KERNEL} SET end = 'soon' WHERE rowid = {row}")
    con.commit()
    con.close()
    fast = _store(path, monkeypatch, tmp_path, "arrow")
    assert len(plain_reasons) == 1
    assert fast == _store(path, monkeypatch, tmp_path, "sqlite3")
    assert "end_ns holds 'soon' where a int64 is expected" in fast["error"]


def test_large_file_read_plainly_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nsys_export, "SLOW_NOTE_KERNELS", 1000)
    monkeypatch.setattr(nsys_arrow.ArrowSqlite, "open", classmethod(lambda cls, uri: None))
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    session = load(_trace(tmp_path / "big.sqlite", n=1200))
    notes = [w for w in session.reports[0].warnings if "Arrow reader" in w]
    assert notes and "1,200 kernels" in notes[0] and "adbc-driver-sqlite" in notes[0]


def test_small_file_read_plainly_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nsys_arrow.ArrowSqlite, "open", classmethod(lambda cls, uri: None))
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    session = load(_trace(tmp_path / "small.sqlite", n=50))
    assert not [w for w in session.reports[0].warnings if "Arrow reader" in w]


@pytest.mark.skipif(not SAMPLES, reason="shared samples not present")
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name[:40])
def test_every_sample_gives_the_same_store(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str]
) -> None:
    fast = _store(path, monkeypatch, tmp_path, "arrow")
    assert plain_reasons == []
    assert fast == _store(path, monkeypatch, tmp_path, "sqlite3")


@pytest.mark.parametrize("kind", ["nsys", "ncu"])
def test_stored_facts_read_as_the_full_facts(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache stores only the fact columns that vary (issue 20: each constant column costs
    30–50 ms a million rows); the ``facts`` view puts the others back, equal to the facts
    computed afresh, column for column."""
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    if kind == "nsys":
        path = _trace(tmp_path / "trace.sqlite", n=300)
    else:
        path = Path(__file__).resolve().parents[1] / "sample_reports/resnet18_fp32_h100.ncu-raw.csv"
    load(path).close()  # builds the cache
    session = load(path)  # reads the stored facts
    plan = session.reports[0].plan

    def rows(sql: str) -> tuple[list, list]:
        cur = session.con.execute(f"SELECT * FROM ({sql}) ORDER BY report_id, launch_id")
        shape = [(d[0], str(d[1])) for d in cur.description]
        return shape, [tuple(repr(v) for v in row) for row in cur.fetchall()]

    stored = rows("SELECT * FROM facts")
    assert stored == rows(facts_select(plan))
    assert len(stored[1]) == (300 if kind == "nsys" else session.reports[0].totals()["launches"])
    narrow = {d[0] for d in session.con.execute("SELECT * FROM facts_r0 LIMIT 0").description}
    assert "report_id" not in narrow and "time_s" in narrow


def test_damaged_name_ids_give_the_same_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str]
) -> None:
    """A kernel without a name id, one naming an id StringIds lacks, a StringIds row without an
    id and an id listed twice with the same text: streamed, with the staged path's names and
    counts."""
    monkeypatch.setattr(nsys_arrow, "BATCH_ROWS", 200)
    path = _trace(tmp_path / "ids.sqlite", n=700)
    con = sqlite3.connect(path)
    for table in (KERNEL, "StringIds"):  # the same tables without NOT NULL
        con.execute(f"CREATE TABLE loose AS SELECT * FROM {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE loose RENAME TO {table}")
    con.execute(f"UPDATE {KERNEL} SET demangledName = NULL WHERE rowid IN (5, 450)")
    con.execute(f"UPDATE {KERNEL} SET demangledName = 987654 WHERE rowid = 300")
    con.execute("INSERT INTO StringIds VALUES (NULL, 'a string without an id')")
    con.execute("INSERT INTO StringIds SELECT id, value FROM StringIds WHERE id = 1")
    con.commit()
    con.close()
    fast = _store(path, monkeypatch, tmp_path, "arrow")
    assert plain_reasons == []
    assert fast == _store(path, monkeypatch, tmp_path, "sqlite3")
    names = [row[5] for row in _rows(path, "launches", tmp_path)]
    assert names.count("(unnamed)") == 3
    warnings = [row[1] for row in _rows(path, "warnings", tmp_path)]
    assert any("3 kernel(s) name a string id" in w for w in warnings)


def test_busy_intervals_of_many_devices_are_merged_in_sql(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str]
) -> None:
    """Past ``STREAM_DEVICES`` devices the writer stops merging per batch and merges once at
    the end, in SQL: the same intervals."""
    monkeypatch.setattr(nsys_arrow, "BATCH_ROWS", 200)
    monkeypatch.setattr(nsys_tables, "STREAM_DEVICES", 1)
    path = _trace(tmp_path / "devices.sqlite", n=600)
    con = sqlite3.connect(path)  # one device in the first batch, two from the second on
    con.execute(f"UPDATE {KERNEL} SET deviceId = 0 WHERE rowid <= 250")
    con.commit()
    con.close()
    fast = _store(path, monkeypatch, tmp_path, "arrow")
    assert plain_reasons == []
    assert fast == _store(path, monkeypatch, tmp_path, "sqlite3")
    assert {row[1] for row in _rows(path, "islands", tmp_path)} == {0, 1}


def test_reports_opened_together_keep_their_own_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plain_reasons: list[str]
) -> None:
    """Two traces and an ncu page in one store: the second trace streams after the first, and a
    third, out of order, is handed to the staged path without touching the others' rows."""
    monkeypatch.setattr(nsys_arrow, "BATCH_ROWS", 200)
    first = _trace(tmp_path / "a.sqlite", n=500)
    second = _trace(tmp_path / "b.sqlite", n=450)
    shuffled = _trace(tmp_path / "c.sqlite", n=450)
    con = sqlite3.connect(shuffled)
    con.execute(f"UPDATE {KERNEL} SET start = start - 200000, end = end - 200000 WHERE rowid = 300")
    con.commit()
    con.close()
    ncu = Path(__file__).resolve().parents[1] / "sample_reports/resnet18_fp32_h100.ncu-raw.csv"
    paths = [first, ncu, second, shuffled]
    fast = _store(paths, monkeypatch, tmp_path, "arrow")
    assert plain_reasons == ["rows out of start order"]
    assert fast == _store(paths, monkeypatch, tmp_path, "sqlite3")
