"""The ``input_pipeline`` rule (issue 19 item 2) on GPU recordings written by the recorder
itself (``monitor.recorder.record`` with a scripted source and a fake clock), on the real H100
recordings in sample_reports/, and through ``roofscope advise --format json``."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import roofscope
from roofscope.analysis.advice import ROOFSCOPE, step_speedup
from roofscope.analysis.advice.recording import MIN_STRETCH_S, WAIT_SHARE
from roofscope.monitor.recorder import record
from roofscope.telemetry.recording import parts
from roofscope.telemetry.sample import GpuSample, Reading
from tests.conftest import SAMPLES, run_cli
from tests.gpu_fakes import T0, FakeClock, SyntheticSource
from tests.test_recording_trust import _step_clock

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

RULE = "input_pipeline"
BUSY = 0.96


def _phase(seconds: int, util: float, held: bool = True) -> list[tuple[float, bool]]:
    return [(util, held)] * seconds


# 1 s samples. Each sample stands for the second before it, so a phase of n samples after
# another phase is n seconds long.
STALLS = [
    *_phase(5, 0.0, held=False),  # nothing on the GPU yet
    *_phase(5, 0.0),  # start-up: the process is there, no busy period before it
    *_phase(20, BUSY),
    *_phase(8, 0.05),  # stretch 1: 8 s at 5%
    *_phase(20, BUSY),
    *_phase(10, 0.10),  # stretch 2: 10 s at 10%
    *_phase(20, BUSY),
    *_phase(3, 0.0),  # under MIN_STRETCH_S: a hiccup, not a stretch
    *_phase(20, BUSY),
    *_phase(6, 0.0),  # teardown: no busy period after it
]


class Scripted(SyntheticSource):
    """GPU 0 follows ``profile`` (utilisation, held) one tick at a time; other GPUs idle and
    unheld. Held: NVML lists the process (``listed``) and its memory is allocated (``memory``)."""

    def __init__(
        self,
        profile: list[tuple[float, bool]],
        gpus: int = 1,
        listed: bool = True,
        memory: bool = True,
    ):
        super().__init__(gpus=gpus)
        self.profile = profile
        self.listed = listed
        self.memory = memory

    def _now(self, gpu: int) -> tuple[float, bool]:
        if gpu > 0:
            return 0.0, False
        return self.profile[min(self.tick, len(self.profile) - 1)]

    def sample(self, gpu: int) -> GpuSample:
        s = super().sample(gpu)
        util, held = self._now(gpu)
        s.util_gpu = util
        s.mem_used = 0.5e9 + (1.5e9 if held and self.memory else 0.0)
        return s

    def read(self) -> Reading:
        held = {g: self._now(g)[1] for g in range(self.gpus)}
        reading = super().read()
        reading.processes = [p for p in reading.processes if self.listed and held[p.gpu]]
        return reading


def _record(tmp_path: Path, source: Scripted) -> Path:
    out = tmp_path / "node01.parquet"
    clock = FakeClock()
    record(
        source,
        out,
        interval=1.0,
        duration=len(source.profile),
        flush_s=4,
        rotate_s=13,  # several parts: stretches cross them
        stop=clock,  # type: ignore[arg-type]
        clock=clock,
    )
    assert len(parts(out)) >= 3
    return out


def _advice(path: Path) -> tuple[list, list[dict]]:
    session = roofscope.load(path, use_cache=False)
    try:
        report = session.reports[0]
        return report.advice(), report.recording_summary()
    finally:
        session.close()


def _item(path: Path):
    found = [a for a in _advice(path)[0] if a.rule == RULE]
    return found[0] if found else None


def _written(path: Path, column: str) -> list:
    """A column of GPU 0's rows in the order the recorder wrote them, read with pyarrow."""
    rows = []
    for part in parts(path):
        table = pq.read_table(part)
        gpus = table["gpu"].to_pylist()
        rows += [v for v, g in zip(table[column].to_pylist(), gpus, strict=True) if g == 0]
    return rows


def _expected_gain(stretches: list[tuple[int, float]], busy_median: float) -> float:
    return sum(seconds * (1 - util / busy_median) for seconds, util in stretches)


def test_stalls_between_busy_periods_fire_with_their_numbers(tmp_path: Path) -> None:
    path = _record(tmp_path, Scripted(STALLS))
    utils = _written(path, "util_gpu")
    assert utils == [u for u, _ in STALLS]  # the recorder wrote the script, in order
    span = len(STALLS) - 1.0  # one interval between each two samples
    item = _item(path)
    assert item is not None and item.source == ROOFSCOPE
    assert item.time_s == pytest.approx(8 + 10)
    assert item.time_pct == pytest.approx(100 * 18 / span)
    gain = _expected_gain([(8, 0.05), (10, 0.10)], BUSY)
    assert item.est_gain_s == pytest.approx(gain)
    assert item.est_step_speedup == pytest.approx(step_speedup(span, gain))
    assert item.groups == [] and item.launches == 0  # a recording has no kernels
    head = item.evidence[0]
    assert head.startswith("2 stretch(es) of ≥ 5 s") and "18.0 s" in head
    assert f"{span:.1f} s recorded" in head
    assert (
        "utilisation inside them 8% (time-weighted) against a busy median of 96%"
        in (item.evidence[1])
    )
    assert any(e.startswith("node01:0: 2 stretch(es), 18.0 s") for e in item.evidence)
    assert any("longest 10.0 s at 10%, from 57 s into the recording" in e for e in item.evidence)
    assert "num_workers" in item.action and "pin_memory=True" in item.action
    assert any("not SM occupancy" in a for a in item.assumptions)
    assert any("not checked by applying it" in a for a in item.assumptions)


def test_the_span_is_the_recording_summary_s(tmp_path: Path) -> None:
    path = _record(tmp_path, Scripted(STALLS))
    items, (summary,) = _advice(path)
    (item,) = [a for a in items if a.rule == RULE]
    assert 100 * item.time_s / item.time_pct == pytest.approx(summary["duration_s"])


def test_a_steadily_busy_gpu_does_not(tmp_path: Path) -> None:
    steady = [(0.9 + 0.01 * (k % 5), True) for k in range(90)]
    assert _item(_record(tmp_path, Scripted(steady))) is None


def test_no_process_holding_the_gpu_does_not(tmp_path: Path) -> None:
    """The same utilisation, but nothing listed and no memory allocated: another job's gaps,
    or none at all, not this one waiting for data."""
    path = _record(tmp_path, Scripted(STALLS, listed=False, memory=False))
    assert [p for ps in _written(path, "processes") for p in ps] == []
    assert _item(path) is None


def test_memory_held_without_a_listed_process_counts(tmp_path: Path) -> None:
    """In a container NVML may list no process; 1.5 GB above the GPU's least still says held."""
    item = _item(_record(tmp_path, Scripted(STALLS, listed=False)))
    assert item is not None and item.time_s == pytest.approx(18)


def test_only_the_gpus_that_ran_work_make_the_step(tmp_path: Path) -> None:
    path = _record(tmp_path, Scripted(STALLS, gpus=2))
    item = _item(path)
    assert item is not None
    assert item.time_pct == pytest.approx(100 * 18 / (len(STALLS) - 1))  # GPU 1 never worked
    assert not any(e.startswith("node01:1") for e in item.evidence)


def test_short_or_unflanked_stretches_do_not(tmp_path: Path) -> None:
    """Start-up and teardown are not flanked by busy periods; a 4 s dip is under the minimum."""
    assert MIN_STRETCH_S > 4
    profile = [*STALLS[:30], *_phase(4, 0.0), *_phase(20, BUSY), *_phase(10, 0.0)]
    assert _item(_record(tmp_path, Scripted(profile))) is None


def test_a_pause_of_the_recorder_is_not_a_stall(tmp_path: Path) -> None:
    """An hour without samples between two busy periods: the recorder was stopped, not the GPU
    waiting. The interval counts for nothing and breaks the stretch."""
    profile = [*_phase(20, BUSY), *_phase(6, 0.0), *_phase(20, BUSY)]
    path = _record(tmp_path, Scripted(profile))
    _step_clock(path, T0 + 23.0, 3600.0)  # mid-stretch: 3 low samples before, 3 after
    assert _item(path) is None


def test_a_small_share_stays_quiet(tmp_path: Path) -> None:
    """One 6 s stretch in ~2.5 minutes of work: under WAIT_SHARE."""
    profile = [*_phase(80, BUSY), *_phase(6, 0.05), *_phase(80, BUSY)]
    assert 100 * 6 / (len(profile) - 1) < WAIT_SHARE
    assert _item(_record(tmp_path, Scripted(profile))) is None


@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize("name", ["h100_matmul.parquet", "h100_gpm_estimate.parquet"])
def test_the_real_h100_recordings_do_not(name: str) -> None:
    """Both hold the GPU idle before the first busy period (start-up) and after the last
    (teardown), and never between: nothing to advise, though a tenth or more is idle."""
    session = roofscope.load(SAMPLES / name)
    try:
        report = session.reports[0]
        (summary,) = report.recording_summary()
        assert summary["low_util_s"] > 10  # idle time there is, just not between busy periods
        assert RULE not in {a.rule for a in report.advice()}
    finally:
        session.close()


def test_roofscope_advise_json_on_a_recording(tmp_path: Path) -> None:
    path = _record(tmp_path, Scripted(STALLS))
    out = run_cli("advise", str(path), "--format", "json", "--no-cache", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    (item,) = report["advice"]
    assert item["rule"] == RULE and item["source"] == "roofscope"
    assert item["time_s"] == pytest.approx(18)
    assert item["est_gain_s"] == pytest.approx(_expected_gain([(8, 0.05), (10, 0.10)], BUSY))
    assert item["launches"] == 0 and item["groups"] == []
