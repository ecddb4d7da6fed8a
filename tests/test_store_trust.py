"""The cache never turns a readable report into a traceback: a cache directory removed during a
build, a folder at the cache file's name, and a umask of 000 (issue 16, item 9)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from roofscope.store import cache_key, input_identity, open_store
from tests.conftest import REPO, SAMPLES, run_cli

MOBILENET = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    dst = tmp_path / "reports" / "m.csv"
    dst.parent.mkdir()
    shutil.copy(MOBILENET, dst)
    return dst


def _launches(store) -> int:
    return store.con.execute("SELECT count(*) FROM launches").fetchall()[0][0]


@pytest.mark.slow
def test_cache_directory_removed_during_the_build_loads_in_memory(copy, _isolated_cache):
    """``rm -rf ~/.cache/roofscope`` while a report is being read: the load still works."""
    removed = []

    def remove_cache(con) -> None:
        if not removed:  # the in-memory rebuild calls the hook again
            shutil.rmtree(_isolated_cache)
            removed.append(True)

    store = open_store([copy], on_build=remove_cache)
    assert removed
    assert store.path is None
    assert "removed" in (store.note or "")
    assert _launches(store) == 459
    again = open_store([copy])  # the next open makes a new cache
    assert again.path is not None and again.path.is_file()


@pytest.mark.slow
def test_two_builds_both_survive_the_cache_directory_being_removed(copy, _isolated_cache):
    """Two concurrent builds (two terminals): the removal happens while both are writing."""
    barrier = threading.Barrier(2, timeout=60)
    results: dict[int, object] = {}

    def run(i: int, path: Path) -> None:
        calls = []

        def hook(con) -> None:
            if calls:
                return
            calls.append(True)
            barrier.wait()  # both builds are in progress
            if i == 0:
                shutil.rmtree(_isolated_cache, ignore_errors=True)
            barrier.wait()

        try:
            results[i] = open_store([path], on_build=hook)
        except BaseException as exc:  # the test reports what escaped
            results[i] = exc

    other = copy.with_name("n.csv")
    shutil.copy(copy, other)
    threads = [threading.Thread(target=run, args=(i, p)) for i, p in enumerate((copy, other))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for i in (0, 1):
        store = results[i]
        assert not isinstance(store, BaseException), repr(store)
        assert store.path is None and "removed" in store.note
        assert _launches(store) == 459


def test_folder_at_the_cache_file_path_loads_in_memory(copy, _isolated_cache):
    """A directory with the cache file's name: a note naming it, never IsADirectoryError."""
    target = _isolated_cache / f"{cache_key(input_identity([copy]))}.duckdb"
    target.mkdir()
    store = open_store([copy])
    assert store.path is None
    assert str(target) in store.note and "is a directory" in store.note
    assert _launches(store) == 459
    assert target.is_dir()  # left alone


@pytest.mark.slow
def test_folder_at_the_cache_path_through_the_cli(copy, _isolated_cache):
    target = _isolated_cache / f"{cache_key(input_identity([copy]))}.duckdb"
    target.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "roofscope", "report", str(copy), "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "ROOFSCOPE_CACHE_DIR": str(_isolated_cache)},
        cwd=copy.parent,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert str(target) in done.stdout + done.stderr


_UMASK_SCRIPT = """
import os, sys
from pathlib import Path
os.umask(0)
from roofscope.store import open_store
modes = []

def hook(con):
    build = [p for p in Path(sys.argv[2]).iterdir() if p.name.endswith(".tmp")]
    modes.extend(oct(p.stat().st_mode & 0o777) for p in build)

store = open_store([sys.argv[1]], on_build=hook)
print(" ".join(modes))
print(store.path)
"""


@pytest.mark.slow
def test_cache_is_private_under_umask_000(copy, tmp_path):
    """umask 000 would make a DuckDB file 0666: the cache (and its build) stay the user's."""
    cache = tmp_path / "xdg" / "roofscope"
    done = subprocess.run(
        [sys.executable, "-c", _UMASK_SCRIPT, str(copy), str(cache)],
        capture_output=True,
        text=True,
        env={**os.environ, "ROOFSCOPE_CACHE_DIR": str(cache)},
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    build_modes, path = done.stdout.split("\n")[:2]
    assert build_modes == "0o700"
    made = Path(path)
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    spill = cache / "spill"  # where queries would spill: private too, and empty
    assert stat.S_IMODE(spill.stat().st_mode) == 0o700 and not any(spill.iterdir())
    assert not [p for p in cache.iterdir() if p not in (made, spill)]  # the build folder is gone


# -- sums that overflow (item 4f) ---------------------------------------------------------------
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
DADD = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum"
TIME = "gpu__time_duration.sum"
DRAM = "dram__bytes.sum"
INT64_MAX = 9223372036854775807


def _huge_export(tmp_path: Path, time: str, fadd: str, dadd: str) -> Path:
    from decimal import Decimal

    from tests.ncu_builder import raw_page, write

    def digits(x: str) -> str:  # as ncu writes numbers: no exponent (1e308 is 309 digits)
        return format(Decimal(x), "f")

    units = {TIME: "s", FADD: "inst", DADD: "inst", DRAM: "byte"}
    values = {TIME: digits(time), FADD: digits(fadd), DADD: digits(dadd), DRAM: str(INT64_MAX)}
    return write(tmp_path / "huge.ncu-raw.csv", raw_page([("k", values)] * 3, units))


def _json_report(path: Path) -> dict:
    done = run_cli("report", str(path), "--format", "json", cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_total_past_the_largest_double_is_flagged_not_a_silent_null(tmp_path):
    """Three launches of 1e308 s: the sum is inf, which JSON prints as null; a warning names
    each total that overflowed, and the one that did not (DRAM bytes near INT64 max) is kept."""
    doc = _json_report(_huge_export(tmp_path, "1e308", "1.7e308", "1e308"))
    report = doc["reports"][0]
    assert report["time_s"] is None and report["flops"]["fp32"] is None
    (line,) = [w for w in doc["warnings"] if "a double (over" in w]
    for name in ("GPU time", "fp32 FLOPs", "fp64 FLOPs", "FLOPs of all precisions"):
        assert name in line
    assert "dram" not in line
    assert report["bytes"]["dram"] == pytest.approx(3 * INT64_MAX, rel=1e-15)


def test_precisions_that_overflow_only_together_are_flagged(tmp_path):
    """fp32 and fp64 each fit; their sum (FLOPs of all precisions, FLOP/s) does not."""
    doc = _json_report(_huge_export(tmp_path, "1e-3", "3e307", "3e307"))
    report = doc["reports"][0]
    assert report["flops"]["fp32"] == pytest.approx(9e307)
    assert report["time_s"] == pytest.approx(3e-3)
    (line,) = [w for w in doc["warnings"] if "a double (over" in w]
    assert "the total of FLOPs of all precisions overflows" in line


def test_large_but_finite_totals_raise_no_overflow_warning(tmp_path):
    doc = _json_report(_huge_export(tmp_path, "1e300", "1e300", "1e300"))
    assert not [w for w in doc["warnings"] if "a double (over" in w]
    assert doc["reports"][0]["time_s"] == pytest.approx(3e300)
