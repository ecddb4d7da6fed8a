"""The cache database: reused when inputs are unchanged, rebuilt when they change or rot."""

from __future__ import annotations

import os
import shutil
import stat

import duckdb
import pytest

import roofscope
from roofscope.store import SCHEMA_VERSION, cache_key, input_identity, open_store
from tests.conftest import SAMPLES

MOBILENET = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"


@pytest.fixture
def copy(tmp_path):
    dst = tmp_path / "reports" / "m.csv"
    dst.parent.mkdir()
    shutil.copy(MOBILENET, dst)
    return dst


def test_second_open_comes_from_cache(copy, _isolated_cache):
    first = open_store([copy])
    assert not first.from_cache and first.path.parent == _isolated_cache
    first.con.close()
    second = open_store([copy])
    assert second.from_cache and second.path == first.path
    assert second.con.execute("SELECT count(*) FROM launches").fetchall() == [(459,)]
    meta = dict(second.con.execute("SELECT key, value FROM meta").fetchall())
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    # no temp files: the cache, and the (empty) folder that queries would spill into
    assert sorted(p.name for p in _isolated_cache.iterdir()) == [first.path.name, "spill"]
    assert not any((_isolated_cache / "spill").iterdir())


@pytest.mark.slow
def test_changed_input_rebuilds(copy):
    first = open_store([copy])
    first.con.close()
    text = copy.read_text()
    copy.write_text(text.replace('"0","', '"0","', 1) + "\n")
    os.utime(copy, ns=(1, 1))
    second = open_store([copy])
    assert not second.from_cache and second.path != first.path


@pytest.mark.slow
def test_corrupt_cache_is_rebuilt(copy):
    first = open_store([copy])
    path = first.path
    first.con.close()
    path.write_bytes(b"not a duckdb file at all" * 100)
    again = open_store([copy])
    assert not again.from_cache
    assert again.con.execute("SELECT count(*) FROM launches").fetchall() == [(459,)]


@pytest.mark.slow
def test_schema_version_mismatch_rebuilds(copy):
    first = open_store([copy])
    path = first.path
    first.con.close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    assert not open_store([copy]).from_cache


def test_read_only_report_directory(copy):
    folder = copy.parent
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        session = roofscope.load(copy)
        assert session.reports[0].totals()["launches"] == 459
        assert not list(folder.glob("*.duckdb"))
    finally:
        folder.chmod(stat.S_IRWXU)


def test_unwritable_cache_directory_falls_back_to_memory(copy, monkeypatch, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(blocked / "cache"))
    store = open_store([copy])
    assert store.path is None
    assert store.con.execute("SELECT count(*) FROM launches").fetchall() == [(459,)]


def test_two_readers_share_one_cache(copy):
    a = roofscope.load(copy)
    b = roofscope.load(copy)
    assert b.store.from_cache
    assert a.reports[0].totals() == b.reports[0].totals()


def test_cache_key_depends_on_identity(copy):
    ident = input_identity([copy])
    assert cache_key(ident) == cache_key(input_identity([copy]))
    assert cache_key(ident) != cache_key(input_identity([copy, MOBILENET]))


def test_abandoned_temporary_builds_are_removed(copy, _isolated_cache):
    old = _isolated_cache / "abc.duckdb.1234.tmp"
    young = _isolated_cache / "def.duckdb.5678.tmp"
    old.write_bytes(b"half a database")
    young.write_bytes(b"a build in progress")
    os.utime(old, (1, 1))
    open_store([copy]).con.close()
    assert not old.exists()
    assert young.exists()


def test_capped_queries_spill_into_a_private_folder_beside_the_cache(
    copy, _isolated_cache, in_tmp_cwd
):
    """An open cache's queries spill into the process's own folder in the cache directory's
    0700 ``spill`` folder: never the working directory (DuckDB's default ``./.tmp``). Under
    ``memory_capped`` they are held to QUERY_MEMORY_LIMIT (DuckDB's default before and after);
    a sort larger than the limit finishes by spilling there, and the folder goes at close."""
    from roofscope.store import memory_capped, spill_dir

    open_store([copy]).con.close()
    opened = open_store([copy])
    con = opened.con
    spill = spill_dir(opened.path)
    assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == str(spill)
    assert stat.S_IMODE(spill.parent.stat().st_mode) == 0o700

    def limit() -> str:
        return con.execute("SELECT current_setting('memory_limit')").fetchone()[0]

    default = limit()
    with memory_capped(con):
        assert limit() == "953.6 MiB"  # DuckDB's way of saying QUERY_MEMORY_LIMIT, 1 GB
        con.execute("SET memory_limit = '64MB'")  # small enough for a test's sort to spill
        n = con.execute(
            "SELECT count(DISTINCT x) FROM (SELECT hash(range) AS x FROM range(6000000) ORDER BY x)"
        ).fetchone()[0]
        assert n == 6_000_000
        assert spill.is_dir()  # it did spill, there
    assert limit() == default
    assert not (in_tmp_cwd / ".tmp").exists()
    con.close()
    assert not spill.exists()


def test_abandoned_spill_folders_are_removed_and_live_ones_kept(copy, _isolated_cache):
    """The clean-up leaves this host's running process's folder (a TUI open all afternoon)
    and another host's recent one (a shared home); it removes a dead process's, and another
    host's untouched for a day."""
    from roofscope.store import spill_dir

    target = _isolated_cache / "abc.duckdb"
    live = spill_dir(target)
    dead = spill_dir(target, pid=2**22 + 12345)
    elsewhere = spill_dir(target, host="node17.cluster.example", pid=4242)
    forgotten = spill_dir(target, host="node18.cluster.example", pid=4343)
    for folder in (live, dead, elsewhere, forgotten):
        folder.mkdir(parents=True)
        (folder / "duckdb_temp_storage.tmp").write_bytes(b"spilled")
    for folder in (live, dead, forgotten):
        os.utime(folder, (1, 1))
    open_store([copy]).con.close()
    assert live.is_dir() and elsewhere.is_dir()
    assert not dead.exists() and not forgotten.exists()
