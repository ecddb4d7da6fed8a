"""``roofscope report`` asked again about an unchanged cache answers from the document kept
beside it (``report_memo``): the same bytes in every format, no DuckDB, and a new answer as
soon as anything it was computed from changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from roofscope.report_memo import KEPT, SUFFIX
from tests.conftest import SAMPLES, SHARED, run_cli

RESNET = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
DETAILS = SAMPLES / "resnet18_fp32_h100.ncu-details.csv"
NSYS = SHARED / "wild" / "tomarriott__GTLS__report1.sqlite"  # 23,419 kernels, a real run
FORMATS = ("json", "csv", "md", "table")


@pytest.fixture
def report(tmp_path: Path) -> Path:
    """A copy of a real export, so its modification time is the test's to change."""
    copy = tmp_path / RESNET.name
    shutil.copy2(RESNET, copy)
    return copy


def memos(cache: Path) -> list[Path]:
    return sorted(cache.glob(f"*{SUFFIX}"))


def cli(cwd: Path, *args: str) -> str:
    done = run_cli(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_kept_answer_is_the_computed_one_in_every_format(tmp_path, _isolated_cache, fmt):
    """First ask: computed and kept; second: read back. Both print what ``--no-cache``
    (nothing kept, nothing read) prints, for an ncu raw page, a details page and, where the
    shared samples are, a real nsys run of 23,419 kernels."""
    inputs = [RESNET, DETAILS] + ([NSYS] if NSYS.exists() else [])
    for path in inputs:
        args = ("report", str(path), "--format", fmt, "--by", "kernel")
        fresh = cli(tmp_path, *args, "--no-cache")
        first = cli(tmp_path, *args)
        assert memos(_isolated_cache), "nothing kept"
        assert cli(tmp_path, *args) == first == fresh, path.name
    assert len(memos(_isolated_cache)) == len(inputs)


def test_a_kept_answer_needs_no_duckdb(tmp_path, report):
    """The second ask runs with a DuckDB that cannot be imported: it must not need it. The
    first ask, with the same stand-in, fails: the stand-in works."""
    stand_in = tmp_path / "no-duckdb"
    stand_in.mkdir()
    (stand_in / "duckdb.py").write_text("raise ImportError('DuckDB was imported')\n")
    argv = [sys.executable, "-m", "roofscope", "report", str(report), "--format", "json"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stand_in), *sys.path]))
    blocked = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert blocked.returncode != 0
    made = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    kept = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert kept.returncode == 0, kept.stderr
    assert kept.stdout == made.stdout


def _later(path: Path) -> None:
    """Move a file's modification time on by a second (as an edit would)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_any_change_to_what_it_came_from_computes_again(tmp_path, report, monkeypatch):
    """Each change below must give a new answer (a new kept file, or the changed output)."""
    args = ("report", str(report), "--format", "json")
    base = cli(tmp_path, *args)
    cache = Path(os.environ["ROOFSCOPE_CACHE_DIR"])
    assert len(memos(cache)) == 1

    # a grouping rules file appears in the working folder: its rule must show
    (tmp_path / "roofscope.toml").write_text(
        '[[groups]]\nname = "all convolutions"\npattern = "conv"\n'
    )
    grouped = cli(tmp_path, *args)
    assert '"all convolutions"' in grouped and grouped != base
    # ... and is edited
    (tmp_path / "roofscope.toml").write_text('[[groups]]\nname = "every conv"\npattern = "conv"\n')
    _later(tmp_path / "roofscope.toml")
    assert '"every conv"' in cli(tmp_path, *args)
    (tmp_path / "roofscope.toml").unlink()
    assert cli(tmp_path, *args) == base  # back to the first answer

    # options that reach the document
    assert cli(tmp_path, *args, "--top", "2") != base
    assert cli(tmp_path, *args, "--gpu", "A100-SXM4-80GB") != base

    # the input changes (the cache is rebuilt: another store file)
    _later(report)
    assert cli(tmp_path, *args) == base.replace(str(report), str(report))
    # a rebuilt cache (removed by hand) is another store, even for the same inputs
    for store in cache.glob("*.duckdb"):
        store.unlink()
    assert cli(tmp_path, *args) == base

    # a ROOFSCOPE_ variable
    monkeypatch.setenv("ROOFSCOPE_ANYTHING", "1")
    before = len(memos(cache))
    cli(tmp_path, *args)
    assert len(memos(cache)) == before + 1 or before == KEPT


def test_a_damaged_kept_answer_is_computed_again(tmp_path, report, _isolated_cache):
    args = ("report", str(report), "--format", "json")
    base = cli(tmp_path, *args)
    (kept,) = memos(_isolated_cache)
    for junk in ("", "{", '{"material": 1, "document": 2}', "[]"):
        kept.write_text(junk)
        assert cli(tmp_path, *args) == base
    assert memos(_isolated_cache) == [kept]


def test_at_most_eight_answers_are_kept_for_one_report(tmp_path, report, _isolated_cache):
    for top in range(1, KEPT + 4):
        cli(tmp_path, "report", str(report), "--format", "json", "--top", str(top))
        time.sleep(0.01)  # modification times apart: the oldest go
    assert len(memos(_isolated_cache)) == KEPT
    newest = cli(tmp_path, "report", str(report), "--format", "json", "--top", str(KEPT + 3))
    assert len(memos(_isolated_cache)) == KEPT
    assert newest.count('"name"') >= 1


def test_no_cache_keeps_and_reads_nothing(tmp_path, report, _isolated_cache):
    cli(tmp_path, "report", str(report), "--format", "json", "--no-cache")
    assert memos(_isolated_cache) == []
