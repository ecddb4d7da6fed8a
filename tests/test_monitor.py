"""The GPU monitor below the UI: history bounds, the recording format, recorder → follower round
trips, summaries checked against sums computed here, the store, and the CLI without NVML."""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from roofscope.analysis.recording import summarise
from roofscope.errors import RoofscopeError
from roofscope.monitor.follow import FollowSource
from roofscope.monitor.recorder import record
from roofscope.monitor.source import GpuSource
from roofscope.session import load
from roofscope.telemetry.history import SeriesHistory
from roofscope.telemetry.recording import (
    RecordingWriter,
    from_table,
    is_recording,
    parts,
    read_recording,
    to_table,
)
from roofscope.telemetry.sample import GpuSample, Reading
from tests.conftest import SAMPLES, run_cli
from tests.gpu_fakes import T0, FakeClock, SyntheticSource

H100_RECORDING = SAMPLES / "h100_matmul.parquet"


def nvml_present() -> bool:
    from roofscope.monitor.nvml import NvmlSource

    try:
        NvmlSource().close()
    except RoofscopeError:
        return False
    return True


def util(k: int) -> float:
    return min(1.0, 0.05 * k)


# -- history ------------------------------------------------------------------------------------
def test_history_memory_is_bounded_and_keeps_the_session_start():
    h = SeriesHistory(capacity=16, tiers=4, keys=("a",))
    for t in range(16 * 15):  # exactly what four tiers of 16 can hold: 16·(1+2+4+8)
        h.add(float(t), [float(t)])
    assert h.buckets() <= 16 * 4
    assert h.first_ts == 0.0 and h.last_ts == 16 * 15 - 1
    for t in range(16 * 15, 10_000):
        h.add(float(t), [float(t)])
    assert h.buckets() <= 16 * 4 + 1  # bounded however long the session runs
    assert h.last_ts == 9999.0 and h.first_ts > 0.0  # only then is the oldest dropped


def test_history_averages_old_buckets_and_windows_report_means():
    h = SeriesHistory(capacity=4, tiers=3, keys=("a",))
    for t in range(12):
        h.add(float(t), [float(t)])
    # Raw 8..11 in tier 0; pairs (0,1)…(6,7) averaged into tier 1 then tier 2.
    assert list(h.tiers[0].cols[0]) == [8.0, 9.0, 10.0, 11.0]
    assert h.window("a", 12.0, 4.0, 3) == [1.5, 5.5, 9.5]
    assert h.window("a", 12.0, 1.0, 2) == [10.0, 11.0]
    assert h.window("a", 100.0, 1.0, 3) == [None, None, None]  # nothing sampled then


def test_history_ignores_out_of_order_samples_and_unmeasured_series():
    h = SeriesHistory(keys=("a", "b"))
    h.add(10.0, [1.0, None])
    h.add(9.0, [5.0, None])  # older than what is kept: a follower re-reading a file
    assert h.added == 1 and h.has("a") and not h.has("b")


# -- the recording format --------------------------------------------------------------------
def test_samples_survive_a_parquet_round_trip(tmp_path):
    src = SyntheticSource(gpus=2)
    reading = src.read()
    table = to_table([(s, reading.processes) for s in reading.samples])
    pq.write_table(table, tmp_path / "one.parquet")
    back = from_table(pq.read_table(tmp_path / "one.parquet"))
    assert [s.as_dict() for s in back.samples] == [s.as_dict() for s in reading.samples]
    assert back.processes[0].name == "python" and back.processes[0].mem_bytes == int(18e9)


def test_recorder_writes_rotated_complete_parts_and_appends(tmp_path):
    out = tmp_path / "node01.parquet"
    clock = FakeClock()
    result = record(
        SyntheticSource(gpus=2),
        out,
        interval=1.0,
        duration=20,
        flush_s=3,
        rotate_s=7,
        stop=clock,  # type: ignore[arg-type]
        clock=clock,
    )
    assert result.samples == 40 and result.skipped == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["part-000001.parquet", "part-000002.parquet", "part-000003.parquet"]
    assert is_recording(out) and read_recording(out).num_rows == 40
    # A second job step appends parts after the existing ones, never over them.
    again = FakeClock()
    record(SyntheticSource(gpus=2), out, duration=2, stop=again, clock=again)  # type: ignore[arg-type]
    assert [p.name for p in parts(out)][-1] == "part-000004.parquet"


def test_follower_reads_a_recording_while_it_grows(tmp_path):
    src = SyntheticSource(gpus=1)
    writer = RecordingWriter(tmp_path / "node01.parquet")
    follower = FollowSource([str(tmp_path / "node*.parquet")], clock=lambda: T0 + 5)
    assert follower.read().notes == [f"no recordings match {tmp_path / 'node*.parquet'} yet"]
    for _ in range(3):
        writer.add(src.read())
    writer.flush()
    first = follower.read()
    assert [s.ts for s in first.samples] == [T0, T0 + 1, T0 + 2]
    assert follower.read().samples == []  # nothing new, and the part is not re-read
    writer.add(src.read())
    writer.flush()  # the same part, rewritten with one more row
    assert [s.ts for s in follower.read().samples] == [T0 + 3]
    leftovers = [p.name for p in (tmp_path / "node01.parquet").iterdir()]
    assert leftovers == ["part-000001.parquet"]  # no temporary file survives a flush


def written_at(recording: Path, t: float) -> None:
    """Date a recording's files as if its last flush happened at ``t`` (the tests' clock)."""
    for part in parts(recording):
        os.utime(part, (t, t))


def record_nodes(folder: Path, hosts: tuple[str, ...], gpus: int, ticks: int) -> None:
    """One recording per node, as ``roofscope record`` on each node of a job writes them,
    its files dated at its last sample."""
    for host in hosts:
        writer = RecordingWriter(folder / f"{host}.parquet")
        src = SyntheticSource(gpus=gpus, host=host)
        for _ in range(ticks):
            writer.add(src.read())
        writer.flush()
        written_at(writer.path, T0 + ticks - 1)


def test_follower_shows_many_nodes_and_flags_stale_ones(tmp_path):
    record_nodes(tmp_path, ("node01", "node02"), gpus=2, ticks=4)
    follower = FollowSource([str(tmp_path / "*.parquet")], clock=lambda: T0 + 3 + 90)
    reading = follower.read()
    assert sorted(reading.latest()) == [("node01", 0), ("node01", 1), ("node02", 0), ("node02", 1)]
    assert len(reading.samples) == 16
    assert reading.notes == [
        "node01: stale, last sample 90 s ago",
        "node02: stale, last sample 90 s ago",
    ]
    assert [(n.host, n.gpus, n.stale) for n in reading.nodes] == [
        ("node01", (0, 1), True),
        ("node02", (0, 1), True),
    ]
    assert isinstance(follower, GpuSource)


def test_not_a_recording_is_refused_in_one_line(tmp_path):
    other = tmp_path / "plain.parquet"
    pq.write_table(to_table([]).drop_columns(["processes"]).replace_schema_metadata({}), other)
    assert not is_recording(other)
    with pytest.raises(RoofscopeError, match="not a roofscope recording"):
        read_recording(other)
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(RoofscopeError, match="not a recording folder"):
        RecordingWriter(tmp_path / "file.txt")


# -- summaries --------------------------------------------------------------------------------
def _write(path: Path, samples: list[GpuSample]) -> Path:
    writer = RecordingWriter(path)
    writer.add(Reading(samples=samples))
    writer.flush()
    return path


def test_summary_matches_sums_computed_here(tmp_path):
    src = SyntheticSource(gpus=1)
    samples = [src.read().samples[0] for _ in range(30)]
    path = _write(tmp_path / "run.parquet", samples)
    session = load(str(path))
    (g,) = summarise(session.con)
    assert g.samples == 30 and g.duration_s == 29.0 and g.interval_s == 1.0
    assert g.util_gpu == pytest.approx(sum(util(k) for k in range(30)) / 30)
    assert g.power_w == pytest.approx(sum(70 + 500 * util(k) for k in range(30)) / 30)
    assert g.energy_source == "NVML energy counter"
    assert g.energy_j == pytest.approx(samples[-1].energy_j - samples[0].energy_j)
    # Each sample stands for the second before it: k = 1..5 are under 30% (k = 6 is exactly 30%).
    assert g.low_util_s == pytest.approx(5.0) and g.low_util_frac == pytest.approx(5 / 29)
    assert g.tensor_active == pytest.approx(sum(0.6 * util(k) for k in range(30)) / 30)


def test_summary_integrates_power_without_a_counter_and_skips_gaps(tmp_path):
    src = SyntheticSource(gpus=1)
    samples = [src.read().samples[0] for _ in range(20)]
    for s in samples:
        s.energy_j = None
    for s in samples[10:]:
        s.ts += 100.0  # the recorder was stopped for 100 s
    session = load(str(_write(tmp_path / "gap.parquet", samples)))
    (g,) = summarise(session.con)
    counted = [k for k in range(1, 20) if k != 10]
    assert g.energy_source == "power × time"
    assert g.energy_j == pytest.approx(sum(samples[k].power_w for k in counted))
    assert g.low_util_s == pytest.approx(5.0)  # k = 1..5; the gap counts for nothing
    assert g.duration_s == pytest.approx(119.0)


def test_the_h100_recording_shows_the_load_it_recorded():
    """bench/monitor_device.py recorded a bf16 then an fp32 matmul loop on an H100."""
    session = load(str(H100_RECORDING))
    (g,) = summarise(session.con)
    assert g.name == "NVIDIA H100 80GB HBM3" and g.samples >= 60
    samples = from_table(read_recording(H100_RECORDING)).samples
    busy = [s for s in samples if s.util_gpu and s.util_gpu > 0.9]
    idle = [s for s in samples if s.util_gpu == 0.0]
    assert len(busy) >= 30 and len(idle) >= 10
    idle_power = sorted(s.power_w for s in idle)[len(idle) // 2]  # the median: power lags
    assert min(s.power_w for s in busy) > 2 * idle_power
    # Tensor cores are busy in the bf16 phase and idle in the fp32 (TF32 off) phase.
    assert max(s.tensor_active or 0 for s in busy) > 0.8
    assert any((s.fp32_active or 0) > 0.3 and (s.tensor_active or 0) < 0.05 for s in busy)


@pytest.mark.slow
def test_a_recording_opens_beside_a_profile():
    session = load(str(H100_RECORDING), str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv"))
    doc = session.report_dict()
    rec, prof = doc["reports"]
    assert rec["format"] == "gpu-recording" and rec["launches"] == 0
    assert rec["recording"][0]["samples"] >= 60
    assert prof["recording"] is None and prof["launches"] == 1
    assert session.recording_source() is not None
    assert len(session.recording_source().read().samples) == rec["recording"][0]["samples"]


# -- the CLI ------------------------------------------------------------------------------------
def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``roofscope ARGS`` through ``main`` in this process (conftest.run_cli)."""
    return run_cli(*args, cwd=Path.cwd())


@pytest.mark.skipif(nvml_present(), reason="this machine has NVML")
def test_without_nvml_monitor_and_record_exit_2_in_one_line(tmp_path):
    for args in (
        ("monitor", "--once", "--format", "json"),
        ("monitor",),
        ("record", "--out", str(tmp_path / "x.parquet"), "--duration", "1"),
    ):
        result = cli(*args)
        assert result.returncode == 2 and result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("roofscope: NVML unavailable:")
        assert "--follow" in lines[0]


@pytest.mark.slow
def test_follow_once_and_record_summary_through_the_cli(tmp_path):
    for host in ("n1", "n2"):
        src = SyntheticSource(gpus=1, host=host)
        _write(tmp_path / f"{host}.parquet", [src.read().samples[0] for _ in range(5)])
    once = cli("monitor", "--follow", str(tmp_path / "n*.parquet"), "--once", "--format", "json")
    assert once.returncode == 0, once.stderr
    doc = json.loads(once.stdout)
    assert [(g["host"], g["ts"]) for g in doc["gpus"]] == [("n1", T0 + 4), ("n2", T0 + 4)]
    summary = cli("record", "--summary", str(tmp_path / "n1.parquet"), "--format", "json")
    (g,) = json.loads(summary.stdout)["gpus"]
    assert g["samples"] == 5 and g["util_gpu"] == pytest.approx(sum(util(k) for k in range(5)) / 5)
    table = cli("record", "--summary", str(tmp_path / "n1.parquet"), str(tmp_path / "n2.parquet"))
    assert "n1:0" in table.stdout and "n2:0" in table.stdout and "GPU usage %" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("record", "--summary", "missing.parquet"), "missing.parquet: no such file"),
        (
            ("record", "--summary", str(SAMPLES / "gemm4096_bf16_h100.ncu-raw.csv")),
            "not a roofscope recording",
        ),
        (("monitor", "--interval", "0.01", "--follow", "x"), "interval 0.01 s is out of range"),
        (("monitor", "--follow", "/nonexistent/*.parquet", "--once"), "no samples in the followed"),
        (("monitor", "--stale-after", "60"), "--stale-after needs --follow"),
        (("monitor", "--follow", "x", "--stale-after", "-1"), "--stale-after needs --follow"),
    ],
)
def test_user_errors_are_one_line_with_exit_2(args, message):
    result = cli(*args)
    assert result.returncode == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_summary_numbers_are_finite_on_the_device_recording():
    result = cli("report", str(H100_RECORDING), "--format", "json")
    (g,) = json.loads(result.stdout)["reports"][0]["recording"]
    assert all(math.isfinite(g[k]) for k in ("util_gpu", "power_w", "energy_j", "low_util_s"))


def test_timer_jitter_leaves_no_holes_in_a_sparkline():
    h = SeriesHistory(keys=("a",))
    for t in (0.1, 0.9, 2.1, 3.05, 3.95, 5.1):  # 1 Hz, late and early: column 1 gets none
        h.add(t, [1.0])
    assert h.window("a", 6.0, 1.0, 6) == [1.0] * 6
    h.add(9.5, [2.0])  # a real pause of several columns stays empty
    assert h.window("a", 10.0, 1.0, 10)[6:9] == [None, None, None]
