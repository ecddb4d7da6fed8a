"""GPU recordings whose wall clock stepped (NTP, a wrong hardware clock) and recordings with an
empty part: no 200-year durations, no doubled energy, no "is a directory" (issue 16, 4e/13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from roofscope.monitor.recorder import record
from roofscope.session import load
from roofscope.telemetry.recording import parts
from tests.gpu_fakes import T0, FakeClock, SyntheticSource

YEARS_200 = 200 * 365.25 * 86400  # ~6.3e9 s


def _record(out: Path, seconds: int = 30, gpus: int = 2) -> Path:
    """A recording written by the recorder itself: 1 s samples, several rotated parts."""
    clock = FakeClock()
    record(
        SyntheticSource(gpus=gpus),
        out,
        interval=1.0,
        duration=seconds,
        flush_s=4,
        rotate_s=11,
        stop=clock,  # type: ignore[arg-type]
        clock=clock,
    )
    assert len(parts(out)) >= 3
    return out


def _step_clock(out: Path, after: float, by: float) -> None:
    """Edit the parts as a clock step would have stamped them: every sample from ``after`` on
    is ``by`` seconds off."""
    for part in parts(out):
        table = pq.read_table(part)
        ts = table.column("ts")
        micros = pc.cast(ts, pa.int64())
        moved = pc.if_else(
            pc.greater_equal(micros, int(after * 1e6)),
            pc.add(micros, int(by * 1e6)),
            micros,
        )
        index = table.schema.get_field_index("ts")
        table = table.set_column(index, table.schema.field("ts"), moved.cast(ts.type))
        pq.write_table(table, part, compression="zstd")


def _as_written(out: Path) -> pa.Table:
    """The parts' rows in the order the recorder wrote them, read here with pyarrow."""
    return pa.concat_tables([pq.read_table(p) for p in parts(out)])


def _expected_energy(out: Path, gpu: int, skip_after: float) -> float:
    """The counter's increase over every 1 s interval but the one that holds the step."""
    table = _as_written(out).filter(pc.equal(_as_written(out)["gpu"], gpu))
    energy = table.column("energy_j").to_pylist()
    ts = [t.timestamp() for t in table.column("ts").to_pylist()]
    return sum(
        b - a for a, b, t in zip(energy, energy[1:], ts[1:], strict=False) if t != T0 + skip_after
    )


@pytest.mark.parametrize(
    ("by", "words"),
    [(-10.0, "jumped back by 9 s"), (YEARS_200, "jumped ahead by 200 years")],
)
@pytest.mark.slow
def test_a_clock_step_neither_stretches_the_duration_nor_doubles_energy(tmp_path, by, words):
    out = _record(tmp_path / "node01.parquet")
    expected = [_expected_energy(out, g, 15.0) for g in (0, 1)]
    _step_clock(out, T0 + 15.0, by)
    session = load(str(out))
    summary = session.reports[0].recording_summary()
    assert len(summary) == 2
    for g, want in zip(summary, expected, strict=True):
        assert g["samples"] == 30
        assert g["duration_s"] == pytest.approx(28.0)  # 29 intervals, the step left out
        assert g["interval_s"] == pytest.approx(1.0)
        assert g["energy_source"] == "NVML energy counter"
        assert g["energy_j"] == pytest.approx(want)
    steps = [w for w in session.warnings if "clock on node01" in w]
    assert len(steps) == 1, session.warnings  # one host clock, not one line per GPU
    assert words in steps[0] and str(out) in steps[0]


def test_a_clock_step_without_the_energy_counter_integrates_power_once(tmp_path):
    """Power × time over the real intervals: samples interleaved by a step back count once."""
    out = _record(tmp_path / "node01.parquet", gpus=1)
    for part in parts(out):
        table = pq.read_table(part)
        index = table.schema.get_field_index("energy_j")
        empty = pa.nulls(table.num_rows, pa.float64())
        pq.write_table(table.set_column(index, table.schema.field("energy_j"), empty), part)
    power = _as_written(out).column("power_w").to_pylist()
    want = sum(p for k, p in enumerate(power) if k and k != 15)  # 1 s each, bar the step
    _step_clock(out, T0 + 15.0, -10.0)
    (g,) = load(str(out)).reports[0].recording_summary()
    assert g["energy_source"] == "power × time"
    assert g["energy_j"] == pytest.approx(want)
    assert g["duration_s"] == pytest.approx(28.0)


def test_a_pause_of_the_recorder_still_counts_in_the_duration(tmp_path):
    """A gap under a day is the recorder stopped and started again: no clock warning."""
    out = _record(tmp_path / "node01.parquet", gpus=1)
    _step_clock(out, T0 + 15.0, 3600.0)
    session = load(str(out))
    (g,) = session.reports[0].recording_summary()
    assert g["duration_s"] == pytest.approx(29.0 + 3600.0)
    assert not [w for w in session.warnings if "clock" in w]


def _report(path: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "roofscope", "report", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "ROOFSCOPE_CACHE_DIR": str(cache)},
    )


@pytest.mark.slow
def test_an_empty_first_part_is_named_not_called_a_directory(tmp_path):
    out = _record(tmp_path / "node01.parquet")
    parts(out)[0].write_bytes(b"")
    done = _report(out, tmp_path / "cache")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "directory" not in done.stderr
    assert "part-000001.parquet (empty: 0 bytes)" in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2  # the line and its hint


@pytest.mark.slow
def test_a_recording_whose_parts_are_all_empty_is_refused_clearly(tmp_path):
    out = _record(tmp_path / "node01.parquet")
    for part in parts(out):
        part.write_bytes(b"")
    done = _report(out, tmp_path / "cache")
    assert done.returncode == 2, done.stderr
    assert "recording folder with no readable part" in done.stderr
    assert "part-000001.parquet (empty: 0 bytes)" in done.stderr


@pytest.mark.slow
def test_the_json_report_of_a_stepped_recording(tmp_path):
    """What ``roofscope report`` prints: the real duration and the warning beside it."""
    out = _record(tmp_path / "node01.parquet", gpus=1)
    _step_clock(out, T0 + 15.0, YEARS_200)
    done = _report(out, tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (g,) = doc["reports"][0]["recording"]
    assert g["duration_s"] == pytest.approx(28.0)
    assert any("jumped ahead by 200 years" in w for w in doc["warnings"])


@pytest.mark.slow
def test_a_part_given_twice_counts_once_and_says_so(tmp_path):
    """A part copied back beside itself (a sync, a restore) holds the same samples twice:
    energy and duration are those of the recording without the copy, with a warning."""
    out = _record(tmp_path / "node01.parquet", gpus=1)
    before = json.loads(_report(out, tmp_path / "cache-a").stdout)["reports"][0]["recording"]
    first = parts(out)[0]
    copy = out / "part-999999.parquet"
    copy.write_bytes(first.read_bytes())
    done = _report(out, tmp_path / "cache-b")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["reports"][0]["recording"] == before
    assert any("part-999999.parquet repeats part-000001.parquet" in w for w in doc["warnings"])


@pytest.mark.slow
@pytest.mark.parametrize(("version", "words"), [(b"2", "recording format 2"), (b"x", "'x'")])
def test_a_recording_of_another_format_version_is_refused_in_one_line(tmp_path, version, words):
    """A part a newer roofscope wrote (format 2) is not read as format 1."""
    out = _record(tmp_path / "node01.parquet", gpus=1)
    part = parts(out)[-1]
    table = pq.read_table(part)
    meta = dict(table.schema.metadata or {})
    meta[b"roofscope.recording"] = version
    pq.write_table(table.replace_schema_metadata(meta), part)
    done = _report(out, tmp_path / "cache")
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
