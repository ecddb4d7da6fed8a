"""Issue 16 for the Nsight Systems readers: no silent wrong number from uncheckpointed WALs, hot
journals, duplicate string ids, odd table names, unknown time units, byte order marks, and the
GUI's Events View CSV, each checked against an independent reading."""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from roofscope.errors import RoofscopeError
from roofscope.session import load
from roofscope.store import cache_key, input_identity
from tests.conftest import SHARED, shared
from tests.nsys_builder import Export, Kernel

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
EVENTS = "wild/K-Wu__HET__hetero_edgesoftmax_misc_artifacts_hgt_acm_dgl_fw.csv"


def _export(path: Path, n: int = 3) -> Path:
    kernels = [
        Kernel(f"kern_{i % 2}", 10_000 * (i + 1), 10_000 * (i + 1) + 1000 + i) for i in range(n)
    ]
    return Export(kernels=kernels).write(path)


def _truth(path: Path) -> tuple[int, int]:
    """What sqlite3 itself answers, applying WAL and journal as it always does (on a copy, so
    a hot journal's rollback cannot change the file under test)."""
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for suffix in ("", "-wal", "-journal"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                shutil.copyfile(side, tmp / side.name)
        con = sqlite3.connect(tmp / path.name)
        count, total = con.execute(f"SELECT count(*), sum(end - start) FROM {KERNEL}").fetchone()
        con.close()
    return count, total or 0


def _immutable(path: Path) -> int:
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    con = sqlite3.connect(uri, uri=True)
    try:
        return con.execute(f"SELECT count(*) FROM {KERNEL}").fetchone()[0]
    finally:
        con.close()


def _loaded(path: Path) -> tuple[int, int]:
    session = load(path)
    totals = session.reports[0].totals()
    return totals["launches"], round(totals["time_s"] * 1e9)


@contextlib.contextmanager
def _wal_writer(path: Path, more: int = 2) -> Iterator[sqlite3.Connection]:
    """A live writer that committed ``more`` kernels into the WAL and never checkpoints."""
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.execute("PRAGMA wal_autocheckpoint=0")
    _add_kernels(con, more)
    try:
        yield con
    finally:
        con.close()


def _add_kernels(con: sqlite3.Connection, n: int) -> None:
    top = con.execute(f"SELECT max(end) FROM {KERNEL}").fetchone()[0]
    for i in range(n):
        con.execute(
            f"INSERT INTO {KERNEL} SELECT ?, ?, deviceId, contextId, greenContextId, streamId, "
            f"NULL, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, "
            f"registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
            f"staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, "
            f"gridId, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL "
            f"FROM {KERNEL} LIMIT 1",
            (top + 5000 * (i + 1), top + 5000 * (i + 1) + 777),
        )
    con.commit()


@contextlib.contextmanager
def _read_only_dir(directory: Path) -> Iterator[None]:
    """Make ``directory`` unwritable even for root (the immutable attribute), or skip."""
    directory.chmod(0o555)
    probe = directory / ".probe"
    immutable = False
    try:
        try:
            probe.touch()
        except OSError:
            pass
        else:
            probe.unlink()
            done = subprocess.run(
                ["chattr", "+i", str(directory)], capture_output=True, check=False
            )
            immutable = done.returncode == 0
            if not immutable:
                pytest.skip("cannot make a folder read-only here (root without chattr)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(directory)], check=False)
        directory.chmod(0o755)


# --- item 3: WAL, hot journal, cache identity -------------------------------------------------


def test_uncheckpointed_wal_is_read(tmp_path: Path) -> None:
    """Committed kernels still in the -wal are part of the database (immutable=1 skipped them)."""
    path = _export(tmp_path / "wal.sqlite")
    with _wal_writer(path):
        assert _immutable(path) == 3  # the rows live only in the WAL
        assert _truth(path)[0] == 5
        assert _loaded(path) == _truth(path)


def test_wal_in_read_only_folder_without_shm(tmp_path: Path) -> None:
    """A read-only folder with db and -wal but no -shm: SQLite cannot open it read-only in
    place; the reader copies both and reads the copy, leaving the folder as it was."""
    path = _export(tmp_path / "src.sqlite")
    ro = tmp_path / "ro"
    ro.mkdir()
    with _wal_writer(path):
        for suffix in ("", "-wal"):
            shutil.copyfile(path.with_name(path.name + suffix), ro / f"wal.sqlite{suffix}")
    target = ro / "wal.sqlite"
    truth = _truth(target)
    assert truth[0] == 5 and _immutable(target) == 3
    before = sorted(p.name for p in ro.iterdir())
    with _read_only_dir(ro):
        assert _loaded(target) == truth
    assert sorted(p.name for p in ro.iterdir()) == before


def test_wal_without_shm_leaves_folder_untouched(tmp_path: Path) -> None:
    """Reading a -wal in place makes SQLite create a -shm beside it: a reader must not leave
    files in the user's report folder."""
    path = _export(tmp_path / "src.sqlite")
    out = tmp_path / "out"
    out.mkdir()
    with _wal_writer(path):
        for suffix in ("", "-wal"):
            shutil.copyfile(path.with_name(path.name + suffix), out / f"wal.sqlite{suffix}")
    target = out / "wal.sqlite"
    before = sorted(p.name for p in out.iterdir())
    assert _loaded(target) == _truth(target)
    assert _truth(target)[0] == 5
    assert sorted(p.name for p in out.iterdir()) == before


def _hot_journal(path: Path) -> None:
    """A writer killed mid-transaction after its changes reached the main file."""
    code = (
        "import os, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "con.execute('PRAGMA cache_size=1')\n"
        "con.execute('BEGIN')\n"
        f"con.execute('DELETE FROM {KERNEL} WHERE rowid > 1')\n"
        "con.execute('CREATE TABLE filler (x)')\n"
        "con.executemany('INSERT INTO filler VALUES (?)', [('x' * 500,)] * 3000)\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


def test_hot_journal_is_rolled_back(tmp_path: Path) -> None:
    """A hot -journal means the main file holds half a transaction: read as sqlite3 would,
    rolled back, not the torn pages (immutable=1 read 1 kernel of 5)."""
    path = _export(tmp_path / "hot.sqlite", n=5)
    _hot_journal(path)
    assert path.with_name("hot.sqlite-journal").stat().st_size > 0
    assert _immutable(path) == 1
    truth = _truth(path)
    assert truth[0] == 5
    assert _loaded(path) == truth
    assert path.with_name("hot.sqlite-journal").stat().st_size > 0  # the file is not touched


def test_changed_wal_changes_cache_identity(tmp_path: Path) -> None:
    """New commits in the -wal with the main file untouched must not be served from the cache
    built before them."""
    path = _export(tmp_path / "cache.sqlite")
    with _wal_writer(path) as writer:
        main = path.stat()
        first = input_identity([path])
        assert _loaded(path)[0] == 5
        _add_kernels(writer, 1)
        after = path.stat()
        assert (after.st_size, after.st_mtime_ns) == (main.st_size, main.st_mtime_ns)
        assert cache_key(input_identity([path])) != cache_key(first)
        assert _loaded(path) == _truth(path) == (6, _truth(path)[1])


def test_file_without_sidecars_keeps_its_cache_identity(tmp_path: Path) -> None:
    """Files with no -wal/-journal (every real export) keep the identity they always had."""
    path = _export(tmp_path / "plain.sqlite")
    assert set(input_identity([path])[0]) == {"path", "size", "mtime_ns"}


# --- item 4d: duplicate StringIds --------------------------------------------------------------


def _strings_without_key(path: Path, *extra: tuple[int, str]) -> None:
    """Rebuild StringIds without its PRIMARY KEY (as an edited or foreign export may be) and
    append ``extra`` rows."""
    con = sqlite3.connect(path)
    con.executescript(
        "ALTER TABLE StringIds RENAME TO s_old; CREATE TABLE StringIds (id INTEGER, value TEXT);"
        "INSERT INTO StringIds SELECT id, value FROM s_old; DROP TABLE s_old;"
    )
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", extra)
    con.commit()
    con.close()


def _name_id(path: Path) -> tuple[int, str]:
    con = sqlite3.connect(path)
    row = con.execute(
        f"SELECT s.id, s.value FROM {KERNEL} k JOIN StringIds s ON s.id = k.demangledName LIMIT 1"
    ).fetchone()
    con.close()
    return row


def test_duplicate_identical_string_ids_do_not_multiply_kernels(tmp_path: Path) -> None:
    path = _export(tmp_path / "dup.sqlite", n=4)
    sid, text = _name_id(path)
    _strings_without_key(path, (sid, text), (sid, text))
    truth = _truth(path)
    assert _loaded(path) == truth
    assert {r["name"] for r in load(path).reports[0].rows("kernel")} == {"kern_0", "kern_1"}


def test_duplicate_string_ids_disagreeing_on_a_kernel_name_refuse(tmp_path: Path) -> None:
    path = _export(tmp_path / "clash.sqlite")
    sid, _text = _name_id(path)
    _strings_without_key(path, (sid, "some_other_kernel"))
    with pytest.raises(RoofscopeError, match=rf"lists id {sid} 2 times with different texts"):
        load(path)


def test_duplicate_string_ids_elsewhere_warn_and_keep_counts(tmp_path: Path) -> None:
    """An NVTX text id listed twice: one range, not two, and a warning."""
    path = Export(kernels=[Kernel("k", 10_000, 11_000)], ranges=[(5_000, 20_000, "step")]).write(
        tmp_path / "nvtx.sqlite"
    )
    con = sqlite3.connect(path)
    con.execute("UPDATE NVTX_EVENTS SET text = NULL, textId = 900")
    con.commit()
    con.close()
    _strings_without_key(path, (900, "step"), (900, "other"))
    session = load(path)
    assert session.reports[0].totals()["launches"] == 1
    ranges = session.con.execute("SELECT name FROM nvtx_ranges").fetchall()
    assert ranges == [("step",)]
    assert any("more than once with different text" in w for w in session.warnings)


# --- item 13: odd table names ------------------------------------------------------------------


def test_odd_table_name_in_sqlite(tmp_path: Path) -> None:
    path = _export(tmp_path / "odd.sqlite")
    con = sqlite3.connect(path)
    con.execute('CREATE TABLE "we""ird" (x INTEGER)')
    con.execute('CREATE TABLE "it\'s [odd]" ("a""b" INTEGER)')
    con.commit()
    con.close()
    assert _loaded(path) == _truth(path)


def test_odd_table_name_in_parquetdir(tmp_path: Path) -> None:
    source = _export(tmp_path / "src.sqlite")
    out = tmp_path / "pq"
    out.mkdir()
    con = sqlite3.connect(source)
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        cur = con.execute(f'SELECT * FROM "{table}"')
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
        columns = {n: [r[i] for r in rows] for i, n in enumerate(names)}
        pq.write_table(pa.table(columns), out / f"{table}.parquet")
    con.close()
    pq.write_table(pa.table({"x": [1]}), out / 'we"ird.parquet')
    assert _loaded(out) == _truth(source)


# --- item 4c / 13: nsys stats units and byte order marks ---------------------------------------

STATS = (
    "Time (%),Total Time ({u}),Instances,Avg ({u}),Med ({u}),Min ({u}),Max ({u}),"
    "StdDev ({u}),Name\n"
    "75.0,3.000,3,1.000,1.000,0.900,1.100,0.100,kern_a\n"
    "25.0,1.000,1,1.000,1.000,1.000,1.000,0.000,kern_b\n"
)


UNITS = [("ns", 1e-9), ("us", 1e-6), ("\u03bcs", 1e-6), ("\u00b5s", 1e-6), ("ms", 1e-3), ("s", 1.0)]


@pytest.mark.parametrize(("unit", "seconds"), UNITS)
def test_known_stats_time_units(tmp_path: Path, unit: str, seconds: float) -> None:
    path = tmp_path / "r_cuda_gpu_kern_sum.csv"
    path.write_text(STATS.format(u=unit), encoding="utf-8")
    assert load(path).reports[0].totals()["time_s"] == pytest.approx(4.0 * seconds)


@pytest.mark.parametrize("unit", ["min", "h", "cycles", "ks"])
def test_unknown_stats_time_unit_is_refused(tmp_path: Path, unit: str) -> None:
    """``(min)`` used to be read as nanoseconds: 60e9 times too small."""
    path = tmp_path / "r_cuda_gpu_kern_sum.csv"
    path.write_text(STATS.format(u=unit), encoding="utf-8")
    with pytest.raises(RoofscopeError, match=rf"column 'Avg \({unit}\)' is in '{unit}'") as err:
        load(path)
    assert err.value.path == str(path)


def test_stats_csv_with_byte_order_mark(tmp_path: Path) -> None:
    """Spreadsheets save CSV with a BOM; the header after it is still the header (and the file
    name need not say what it is)."""
    path = tmp_path / "kernels.csv"
    path.write_bytes(b"\xef\xbb\xbf" + STATS.format(u="ns").encode())
    totals = load(path).reports[0].totals()
    assert (totals["launches"], totals["time_s"]) == (4, pytest.approx(4e-9))


def test_stats_csv_gzipped_and_columns_moved(tmp_path: Path) -> None:
    """A gzip of a stats table, and a table whose columns a script put in another order, read
    as the table itself (both used to be refused as "human-readable nsys output")."""
    import gzip

    rows = list(csv.reader(STATS.format(u="us").splitlines()))
    moved = tmp_path / "moved.csv"
    with moved.open("w", newline="") as fh:
        csv.writer(fh).writerows([[r[-1], *r[:-1]] for r in rows])  # Name first
    zipped = tmp_path / "kernels.csv.gz"
    zipped.write_bytes(gzip.compress(STATS.format(u="us").encode()))
    for path in (moved, zipped):
        totals = load(path).reports[0].totals()
        assert (totals["launches"], totals["time_s"]) == (4, pytest.approx(4e-6)), path


def test_stats_truncated_gzip_keeps_complete_rows_and_says_so(tmp_path: Path) -> None:
    import gzip

    data = gzip.compress(STATS.format(u="ns").encode())
    whole = tmp_path / "whole_cuda_gpu_kern_sum.csv.gz"
    whole.write_bytes(data)
    cut = tmp_path / "cut_cuda_gpu_kern_sum.csv.gz"
    cut.write_bytes(data[: len(data) - 12])  # the trailer and the end of the last row's block
    session = load(cut)
    assert session.reports[0].totals()["launches"] <= load(whole).reports[0].totals()["launches"]
    assert any("truncated" in w for w in session.report_dict()["warnings"])


# --- item 13: the GUI's Events View -------------------------------------------------------------

UNIT_NS = {"ns": 1, "\u03bcs": 1000, "\u00b5s": 1000, "us": 1000, "ms": 10**6, "s": 10**9}


def _ns(text: str) -> int:
    """Independent of the reader: split off the unit letters, Decimal times the unit."""
    text = text.strip()
    digits = text.rstrip("".join(set("".join(UNIT_NS)))).strip()
    return int(Decimal(digits) * UNIT_NS[text[len(digits) :].strip()])


def test_events_view_sample_matches_stdlib_csv() -> None:
    """The wild GUI export: every row is a kernel (no memcpy/API rows in it)."""
    path = shared(*EVENTS.split("/"))
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 356
    total = sum(_ns(r["Duration"]) for r in rows)
    session = load(path)
    assert session.reports[0].layout == "nsys-events"
    totals = session.reports[0].totals()
    assert totals["launches"] == len(rows)
    assert round(totals["time_s"] * 1e9) == total
    per_name: dict[str, int] = {}
    for r in rows:
        per_name[r["Name"]] = per_name.get(r["Name"], 0) + _ns(r["Duration"])
    got = {r["name"]: round(r["time_s"] * 1e9) for r in session.reports[0].rows("kernel")}
    assert got == per_name
    first = min(_ns(r["Start"]) for r in rows)
    start = session.con.execute("SELECT min(start_ns) FROM spans").fetchone()[0]
    assert start == first
    assert any("start times rounded" in w for w in session.warnings)


def test_events_view_units_memops_and_extra_columns(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text(
        "Name,Start,Duration,GPU,Context,Correlation ID\n"
        "kern_a,1.5s,2.5 \u03bcs,GPU 0,Stream 7,1\n"
        "kern_a,1.6s,3\u00b5s,GPU 0,Stream 7,2\n"
        "kern_b,1600.1ms,1.000001 ms,GPU 1,Stream 13,3\n"
        "[CUDA memcpy HtoD],1.7s,10 us,GPU 0,Stream 7,4\n"
        "Memcpy DtoH (Device -> Pageable),1.8s,20 us,GPU 0,Stream 7,5\n"
        "Memset (Device),1.9s,30 us,GPU 0,Stream 7,6\n"
        "kern_c,2000000000ns,7ns,GPU 0,Stream 7,7\n",
        encoding="utf-8",
    )
    session = load(path)
    got = {r["name"]: round(r["time_s"] * 1e9) for r in session.reports[0].rows("kernel")}
    assert got == {"kern_a": 5500, "kern_b": 1000001, "kern_c": 7}
    memops = session.con.execute(
        "SELECT kind, start_ns, end_ns FROM memops ORDER BY start_ns"
    ).fetchall()
    assert memops == [
        ("Host-to-Device", 1_700_000_000, 1_700_010_000),
        ("Device-to-Host", 1_800_000_000, 1_800_020_000),
        ("memset", 1_900_000_000, 1_900_030_000),
    ]
    spans = session.con.execute(
        "SELECT start_ns, end_ns, device, stream FROM spans ORDER BY start_ns"
    ).fetchall()
    assert spans[2] == (1_600_100_000, 1_601_100_001, 1, 13)


@pytest.mark.parametrize("bad", ["4.2 min", "4.2", "4,2 s", "1e3 ns", "12 \u03bcsec", "nan s"])
def test_events_view_unknown_time_is_refused(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "events.csv"
    path.write_text(
        f'Name,Start,Duration,GPU,Context\nk,1.5s,2 us,GPU 0,Stream 7\nk,1.6s,"{bad}",GPU 0,'
        f"Stream 7\n",
        encoding="utf-8",
    )
    with pytest.raises(RoofscopeError, match=r"line 3, column Duration: .* is not a time"):
        load(path)


def test_events_view_of_cpu_rows_is_refused(tmp_path: Path) -> None:
    """CUDA API calls and NVTX ranges are not kernels: refused, never counted."""
    path = tmp_path / "api.csv"
    path.write_text(
        "Name,Start,Duration,TID\ncudaLaunchKernel,1.5s,4.2 \u03bcs,4242\n", encoding="utf-8"
    )
    with pytest.raises(RoofscopeError, match="CPU-side events"):
        load(path)


# --- every wild SQLite export agrees with sqlite3 ----------------------------------------------


@pytest.mark.parametrize(
    "path",
    sorted((SHARED / "wild").glob("*.sqlite")) if (SHARED / "wild").is_dir() else [],
    ids=lambda p: p.name[:40],
)
def test_wild_sqlite_matches_sqlite3(path: Path) -> None:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    count, total = con.execute(f"SELECT count(*), sum(end - start) FROM {KERNEL}").fetchone()
    con.close()
    assert _loaded(path) == (count, total or 0)
    assert not any(n.endswith(("-shm", "-wal")) for n in os.listdir(path.parent))


# --- nsys stats: unreadable totals, bad instances, repeated rows, repeated columns -------------

KERN_SUM = "public/CodeGandee__llm-perf-opt__summary_cuda_gpu_kern_sum.csv"
TRACE_HEAD = "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Device,Strm,Name\n"


def _kern_sum_rows() -> list[list[str]]:
    path = shared(*KERN_SUM.split("/"))
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write_rows(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return path


def _total_ns(rows: list[list[str]]) -> int:
    """The sum of the Total Time (ns) cells, by the standard library alone."""
    return sum(int(r[1]) for r in rows[1:])


def _warnings(path: Path) -> tuple[dict, list[str]]:
    session = load(path)
    return session.reports[0].totals(), session.report_dict()["warnings"]


@pytest.mark.parametrize("bad", ["nan", "1231822285 ns", "", "1.2.3"])
def test_stats_unreadable_total_is_left_out_not_rebuilt(tmp_path: Path, bad: str) -> None:
    """An unreadable Total Time used to be rebuilt from the rounded Avg x Instances
    (4.9460508 s instead of 4.9460647 s); its time is left out, naming line, column, text."""
    rows = _kern_sum_rows()
    rest = _total_ns([rows[0], *rows[2:]])
    rows[1][1] = bad
    totals, warnings = _warnings(_write_rows(tmp_path / "s_cuda_gpu_kern_sum.csv", rows))
    assert round(totals["time_s"] * 1e9) == rest
    said = [w for w in warnings if "line 2" in w and "Total Time (ns)" in w and repr(bad) in w]
    assert said, warnings


def test_stats_without_total_column_says_times_are_rebuilt(tmp_path: Path) -> None:
    """A cuda_gpu_sum with no Total Time column: times come from Avg x Instances, and say so."""
    path = tmp_path / "s_cuda_gpu_sum.csv"
    path.write_text(
        "Time (%),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Category,Operation\n"
        "100.0,3,1000.5,1000.0,900,1100,10.0,CUDA_KERNEL,kern_a\n"
    )
    totals, warnings = _warnings(path)
    assert totals["time_s"] == pytest.approx(3 * 1000.5e-9)
    assert any("Avg" in w and "Instances" in w and "rounded" in w for w in warnings), warnings


def test_stats_zero_instances_with_time_is_named(tmp_path: Path) -> None:
    """Instances 0 with a time above 0 dropped that time without a word."""
    rows = _kern_sum_rows()
    rows[3][2] = "0"
    totals, warnings = _warnings(_write_rows(tmp_path / "z_cuda_gpu_kern_sum.csv", rows))
    assert round(totals["time_s"] * 1e9) == _total_ns([rows[0], *rows[1:3], *rows[4:]])
    assert any("line 4" in w and "Instances" in w for w in warnings), warnings


def test_stats_skipped_rows_name_their_lines(tmp_path: Path) -> None:
    rows = _kern_sum_rows()
    rows[6][2] = "2.5"
    rows[8][2] = "-1"
    _, warnings = _warnings(_write_rows(tmp_path / "f_cuda_gpu_kern_sum.csv", rows))
    assert any("lines 7, 9" in w for w in warnings), warnings


def test_stats_repeated_summary_is_counted_once(tmp_path: Path) -> None:
    """``cat a a`` (or a pasted block) counted every kernel twice."""
    rows = _kern_sum_rows()
    once = _write_rows(tmp_path / "once_cuda_gpu_kern_sum.csv", rows)
    twice = _write_rows(tmp_path / "twice_cuda_gpu_kern_sum.csv", rows + rows)
    pasted = _write_rows(tmp_path / "pasted_cuda_gpu_kern_sum.csv", [*rows, rows[3], rows[5]])
    expected = load(once).reports[0].totals()
    for path, first, count in ((twice, len(rows) + 2, len(rows) - 1), (pasted, 4, 2)):
        totals, warnings = _warnings(path)
        assert (totals["launches"], totals["time_s"]) == (
            expected["launches"],
            pytest.approx(expected["time_s"], rel=1e-12),
        ), path
        said = [w for w in warnings if f"{count} row(s)" in w and f"line {first}" in w]
        assert said, (path, warnings)


def test_stats_same_kernel_twice_with_other_values_is_named(tmp_path: Path) -> None:
    """Two rows for one kernel name with different values: neither is trusted, both lines are
    named, and the kernel is not counted twice."""
    rows = _kern_sum_rows()
    other = list(rows[2])
    other[1], other[2] = "100", "1"
    rows.append(other)
    totals, warnings = _warnings(_write_rows(tmp_path / "d_cuda_gpu_kern_sum.csv", rows))
    assert round(totals["time_s"] * 1e9) == _total_ns([rows[0], rows[1], *rows[3:-1]])
    assert any("line 3" in w and f"line {len(rows)}" in w for w in warnings), warnings


def test_stats_repeated_trace_row_is_counted_once(tmp_path: Path) -> None:
    """Two identical rows of a GPU trace (same start, duration, device, stream, name) cannot
    both be launches."""
    row = "1000,500,7,1,1,1,32,1,1,NVIDIA H100 (0),7,kern_a\n"
    other = "2000,300,8,1,1,1,32,1,1,NVIDIA H100 (0),7,kern_b\n"
    path = tmp_path / "t_cuda_gpu_trace.csv"
    path.write_text(TRACE_HEAD + row + other + row)
    totals, warnings = _warnings(path)
    assert (totals["launches"], round(totals["time_s"] * 1e9)) == (2, 800)
    assert any("1 row(s)" in w and "line 4" in w for w in warnings), warnings


@pytest.mark.parametrize("kind", ["kern_sum", "trace"])
def test_stats_repeated_column_with_other_values(tmp_path: Path, kind: str) -> None:
    """A column named twice whose copies differ used the first silently; equal copies are fine,
    differing ones leave that value out with a warning naming the column and the line."""
    if kind == "kern_sum":
        rows = [[*r, r[1]] for r in _kern_sum_rows()]  # Total Time (ns) again, at the end
        expected = _total_ns(rows)
        same = _write_rows(tmp_path / "same_cuda_gpu_kern_sum.csv", rows)
        rows[5][-1] = str(int(rows[5][1]) + 1000)
        left = _total_ns([rows[0], *rows[1:5], *rows[6:]])
        column, line = "Total Time (ns)", 6
    else:
        rows = [
            [*r.split(",")[:-1], r.split(",")[1], r.rstrip().split(",")[-1]]
            for r in (
                TRACE_HEAD,
                "1000,500,7,1,1,1,32,1,1,NVIDIA H100 (0),7,kern_a\n",
                "2000,300,8,1,1,1,32,1,1,NVIDIA H100 (0),7,kern_b\n",
            )
        ]
        rows = [[c.strip() for c in r] for r in rows]
        expected = 800
        same = _write_rows(tmp_path / "same_cuda_gpu_trace.csv", rows)
        rows[2][-2] = "900"
        left = 500
        column, line = "Duration (ns)", 3
    totals, warnings = _warnings(same)
    assert round(totals["time_s"] * 1e9) == expected
    assert not any("more than once" in w for w in warnings), warnings
    differ = _write_rows(same.with_name("differ_" + same.name), rows)
    totals, warnings = _warnings(differ)
    assert round(totals["time_s"] * 1e9) == left
    said = [w for w in warnings if "more than once" in w and column in w and f"line {line}" in w]
    assert said, warnings


def test_events_view_repeated_column_with_other_values(tmp_path: Path) -> None:
    """The Events View reader too: a differing copy of Duration is not silently ignored."""
    path = tmp_path / "events.csv"
    path.write_text(
        "Name,Start,Duration,GPU,Context,Duration\n"
        "kern_a,1.000s,2.000 \u03bcs,GPU 0,Stream 7,2.000 \u03bcs\n"
        "kern_b,1.100s,3.000 \u03bcs,GPU 0,Stream 7,4.000 \u03bcs\n",
        encoding="utf-8",
    )
    totals, warnings = _warnings(path)
    assert round(totals["time_s"] * 1e9) == 2000
    assert any("more than once" in w and "Duration" in w and "line 3" in w for w in warnings)
