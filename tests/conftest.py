"""Shared fixtures: where the real exports live, and an isolated cache per test."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

# One intra-op thread for torch and BLAS: the suite runs on two xdist workers (pyproject), and
# OpenMP threads of one worker spinning for a core the other holds cost ~15% of the torch
# tests' CPU. Set before any test module imports torch; subprocesses inherit it.
for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_reports"
DATA = REPO / "tests" / "data"
SHARED = Path(os.environ.get("ROOFSCOPE_SHARED", REPO.parent / "shared")) / "samples"


def shared(*parts: str) -> Path:
    """A file under ../shared/samples, skipping the test when that folder is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available (shared samples folder absent)")
    return path


@pytest.fixture(scope="session")
def _isolation_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isolated")


@pytest.fixture(autouse=True)
def _isolated_cache(_isolation_root: Path, monkeypatch: pytest.MonkeyPatch):
    # Four empty folders of this test's own, made in one new folder: pytest's mktemp lists
    # every folder made so far in the session, which four times per test cost ~10 ms of
    # setup by the end of a worker's run.
    home = Path(tempfile.mkdtemp(dir=_isolation_root))
    cache, config, runs, ceilings = (home / n for n in ("cache", "config", "runs", "ceilings"))
    for folder in (cache, config, runs, ceilings):
        folder.mkdir(mode=0o700)
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    # run folders and measured ceilings of the user's machine never leak into a test
    monkeypatch.setenv("ROOFSCOPE_RUNS_DIR", str(runs))
    monkeypatch.setenv("ROOFSCOPE_CEILINGS_DIR", str(ceilings))
    yield cache


@pytest.fixture(scope="session")
def samples_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the read-only sample reports across a test session, as a user's cache is
    across runs: tests that open the same samples many times ingest them once."""
    return tmp_path_factory.mktemp("samples-cache")


@pytest.fixture
def shared_sample_cache(samples_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(samples_cache))
    return samples_cache


@pytest.fixture
def in_tmp_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty directory so no project roofscope.toml leaks into a test."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``roofscope ARGS`` in this process, in ``cwd``, as a finished process (exit code,
    stdout, stderr): the entry point's own code path without a Python start-up per case (a
    subprocess costs ~1 s of the suite's 2 cores). A traceback escapes as the exception."""
    from roofscope.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse refusing an option
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    """Clock times printed in UTC, whatever the machine's zone (snapshots, recordings)."""
    import time

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
