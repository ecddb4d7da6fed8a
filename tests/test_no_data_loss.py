"""No data loss (issue 8): concurrent opens, reports that change, caches that rot, directories
that refuse writes, a full disk, and a recorder killed mid-write."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import roofscope
from roofscope.cli import main
from roofscope.errors import RoofscopeError
from roofscope.ingest.ncu import pages as ncu_csv
from roofscope.store import open_store
from roofscope.telemetry.recording import parts, read_recording
from roofscope.tui.app import RoofscopeApp
from tests.conftest import SAMPLES
from tests.test_tui import opened, settle

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

MOBILENET = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"
RESNET = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def report(tmp_path) -> Path:
    dst = tmp_path / "reports" / "m.ncu-raw.csv"
    dst.parent.mkdir()
    shutil.copy(MOBILENET, dst)
    return dst


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), **extra}
    env.pop("ROOFSCOPE_DEBUG", None)
    return env


def _report_json(path: Path, capsys) -> tuple[int, dict | None, str]:
    code = main(["report", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def _without_warnings(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "warnings"}


def test_concurrent_opens_share_one_cache(report, _isolated_cache):
    cmd = [sys.executable, "-m", "roofscope.cli", "report", str(report), "--format", "json"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
        for _ in range(4)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in results]
    docs = [json.loads(out) for out, _ in results]
    assert all(d == docs[0] for d in docs) and docs[0]["reports"][0]["launches"] == 459
    # Each built into its own temporary file and renamed: one cache, nothing half-written
    # (beside it, the answer kept for the next ask: report_memo, and the empty folder
    # queries would spill into)
    names = sorted(p.name for p in _isolated_cache.iterdir() if p.name != "spill")
    assert [n for n in names if not n.endswith(".report.json")] == [
        n for n in names if n.endswith(".duckdb")
    ]
    assert len([n for n in names if n.endswith(".duckdb")]) == 1, names
    again = roofscope.load(report)
    assert again.store.from_cache and again.report_dict() == docs[0]


def test_a_report_replaced_while_open_is_flagged_and_reloads(report, monkeypatch):
    monkeypatch.setattr(ncu_csv, "RAW_TABLE_LIMIT", 0)  # other columns read from the export
    session = roofscope.load(report)
    assert (
        session.reports[0].raw_values == "source"
        if hasattr(session.reports[0], "raw_values")
        else True
    )

    def exported(rows):  # Detail's rows of the export (the derived ones come from the store)
        return [r for r in rows if r.kind == "raw"]

    before = exported(session.reports[0].launch_detail(0))
    assert len(before) > 100 and session.changed_on_disk() == []
    shutil.copy(RESNET, report)  # ncu wrote another report over it
    assert session.changed_on_disk() == [str(report.resolve())]
    after = exported(session.reports[0].launch_detail(0))
    assert len(after) == 1 and "changed since it was opened" in after[0].source
    assert session.reports[0].totals()["launches"] == 459  # still the version loaded, consistently
    assert roofscope.load(report).reports[0].totals()["launches"] == 361


async def test_tui_says_when_the_report_changed_and_ctrl_r_reloads(report, monkeypatch):
    monkeypatch.chdir(report.parent)
    app = RoofscopeApp([str(report)])
    async with app.run_test(size=(120, 36)) as pilot:
        await opened(app, pilot)
        assert app.session.reports[0].totals()["launches"] == 459
        app._watchdog()
        assert not app._notifications
        shutil.copy(RESNET, report)
        app._watchdog()
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("m.ncu-raw.csv changed on disk" in m and "Ctrl+R" in m for m in messages)
        await pilot.press("ctrl+r")
        await opened(app, pilot)
        await settle(app, pilot)
        assert app.session.reports[0].totals()["launches"] == 361


def test_a_report_changing_during_the_build_is_not_cached(report, _isolated_cache):
    def rewrite(con) -> None:
        with report.open("a", encoding="utf-8") as fh:
            fh.write("\n")

    with pytest.raises(RoofscopeError, match="changed while it was being read") as err:
        open_store([report], on_build=rewrite)
    assert str(report) in err.value.one_line()
    assert list(_isolated_cache.iterdir()) == []


def test_damaged_cache_blocks_are_caught_and_rebuilt(report, capsys, _isolated_cache):
    code, reference, _ = _report_json(report, capsys)
    assert code == 0
    (cache,) = _isolated_cache.glob("*.duckdb")
    data = cache.read_bytes()
    outcomes = []
    for offset in range(262_144, len(data) - 4096, len(data) // 12):
        damaged = bytearray(data)
        damaged[offset : offset + 64] = bytes(b ^ 0x5A for b in damaged[offset : offset + 64])
        cache.write_bytes(bytes(damaged))
        code, doc, err = _report_json(report, capsys)
        if code == 2:  # found mid-report: removed, with the one line that says what to do
            assert err.count("\n") == 1 and "damaged" in err and "run the same command" in err
            assert not cache.exists()
            code, doc, err = _report_json(report, capsys)
        assert code == 0 and "Traceback" not in err
        assert _without_warnings(doc) == _without_warnings(reference)
        outcomes.append(roofscope.load(report).store.from_cache)
        cache.write_bytes(data)
    assert len(outcomes) >= 8


@pytest.mark.parametrize("damage", [b"", b"not a database" * 300, 0.5, 0.75])
def test_truncated_or_foreign_cache_files_are_rebuilt(report, _isolated_cache, damage):
    """Cut where the ``meta`` block survives too (0.75): blocks past the end are damage."""
    roofscope.load(report).close()
    (cache,) = _isolated_cache.glob("*.duckdb")
    whole = cache.read_bytes()
    blob = whole[: int(len(whole) * damage)] if isinstance(damage, float) else damage
    cache.write_bytes(blob)
    session = roofscope.load(report)
    assert not session.store.from_cache and session.reports[0].totals()["launches"] == 459


def test_read_only_cache_directory_works_in_memory_and_says_so(report, monkeypatch):
    # /proc refuses new files even to root, where chmod would not (CI may run as root).
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", "/proc/1")
    session = roofscope.load(report)
    assert session.store.path is None and session.reports[0].totals()["launches"] == 459
    (note,) = [w for w in session.warnings if "no cache written" in w]
    assert "/proc/1" in note and "ROOFSCOPE_CACHE_DIR" in note


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_chmod_read_only_cache_directory(report, tmp_path, monkeypatch):
    cache = tmp_path / "ro-cache"
    cache.mkdir(mode=0o500)
    monkeypatch.setenv("ROOFSCOPE_CACHE_DIR", str(cache))
    assert roofscope.load(report).store.path is None


_FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
from roofscope.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_full_disk_while_caching_loads_in_memory(tmp_path, _isolated_cache):
    report = tmp_path / "r.ncu-raw.csv"
    shutil.copy(RESNET, report)  # its cache grows past the limit; the report itself is read
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _FULL_DISK.format(limit=1 << 20),
            "report",
            str(report),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["reports"][0]["launches"] == 361
    assert any("no cache written" in w and "File too large" in w for w in doc["warnings"])
    assert list(_isolated_cache.iterdir()) == []  # the half-written cache was removed
    assert roofscope.load(report).report_dict()["reports"] == doc["reports"]


_RECORDER = """
import sys
from pathlib import Path
sys.path.insert(0, {tests!r})
{prelude}
import gpu_fakes
from gpu_fakes import SyntheticSource
gpu_fakes.T0 += float(sys.argv[4])  # each run its own hour: its samples are new ones
from roofscope.cli import main
from roofscope.monitor.recorder import record
from roofscope.errors import RoofscopeError
try:
    record(SyntheticSource(gpus=8), Path(sys.argv[1]), interval=0.1, flush_s=0.05,
           rotate_s=float(sys.argv[3]), duration=float(sys.argv[2]),
           warn=lambda m: print("roofscope: warning:", m, file=sys.stderr))
except RoofscopeError as exc:
    print(exc.one_line(), file=sys.stderr)
    sys.exit(2)
"""


def _recorder(
    out: Path, seconds: float, rotate: float = 0.4, prelude: str = "", start: float = 0.0
) -> subprocess.Popen:
    """The recorder in a process of its own; ``start``: seconds its synthetic clock is ahead
    (a restarted recorder of identical samples would write parts byte for byte like the last
    run's, which a recording counts once)."""
    code = _RECORDER.format(tests=str(REPO / "tests"), prelude=prelude)
    return subprocess.Popen(
        [sys.executable, "-c", code, str(out), str(seconds), str(rotate), str(start)],
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _all_parts_whole(out: Path) -> int:
    for part in parts(out):
        pq.read_table(part)  # raises on a truncated or half-written file
    return read_recording(out).num_rows


def test_recorder_killed_mid_write_leaves_only_whole_parts(tmp_path):
    out = tmp_path / "node01.parquet"
    rows = 0
    for attempt in range(3):  # each run appends; each is killed at a different moment
        proc = _recorder(out, seconds=60, start=3600.0 * attempt)
        deadline = time.monotonic() + 30
        while len(parts(out)) < 2 * (attempt + 1) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.013 * attempt)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        now = _all_parts_whole(out)
        assert now > rows
        rows = now
    assert main(["record", "--summary", str(out), "--format", "json"]) == 0


def test_recorder_on_a_full_disk_keeps_parts_and_says_so(tmp_path):
    out = tmp_path / "node01.parquet"
    prelude = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (12_000, 12_000))"
    )
    proc = _recorder(out, seconds=4, rotate=100, prelude=prelude)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = err.strip().splitlines()
    assert "File too large" in lines[-1] and "parts already on disk are complete" in lines[-1]
    assert "Traceback" not in err and any("trying again" in ln for ln in lines[:-1])
    assert _all_parts_whole(out) > 0
