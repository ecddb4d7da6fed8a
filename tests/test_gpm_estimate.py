"""Live useful math (issue 19 item 5): est. FLOP/s from GPM pipe activity × peak at the SM clock,
est. DRAM B/s from DRAM bandwidth utilisation; in samples, recordings, record --summary and the
Monitor, and checked against the H100 run of bench/gpm_estimate.py."""

from __future__ import annotations

import json
import statistics

import pyarrow.parquet as pq
import pytest

from roofscope.analysis.recording import summarise
from roofscope.charts.node_roofline import TITLE, render_node_roofline
from roofscope.hardware.pipes import MIG_OFF, PIPE_PEAKS, estimate, peak_at_clock
from roofscope.hardware.specs import find_gpu, match_device_name
from roofscope.monitor.estimate import PIPE_FIELDS, fill_estimate
from roofscope.session import load
from roofscope.telemetry.recording import from_table, read_recording, to_table
from roofscope.telemetry.sample import GpuSample
from tests.conftest import REPO, SAMPLES
from tests.gpu_fakes import SyntheticSource
from tests.screen_text import screen_text
from tests.test_monitor import H100_RECORDING, _write, cli
from tests.test_monitor_tui import app_with, fed

H100 = "NVIDIA H100 80GB HBM3"
GPM_RECORDING = SAMPLES / "h100_gpm_estimate.parquet"
GPM_RUN = REPO / "tests" / "data" / "device" / "h100_gpm_estimate.json"
IDLE = {"hmma": 0.0, "dmma": 0.0, "fp64": 0.0, "fp32": 0.0, "fp16": 0.0}


def test_each_pipe_maps_to_one_peak_and_one_sample_field():
    assert set(PIPE_PEAKS) == set(PIPE_FIELDS)
    assert PIPE_PEAKS["hmma"] == "fp16_tensor" and PIPE_PEAKS["dmma"] == "fp64_tensor"
    assert all(hasattr(GpuSample(0, "", 0, ""), f) for f in PIPE_FIELDS.values())


def test_estimate_is_activity_times_the_peak_at_the_current_clock():
    spec = match_device_name(H100)  # 989.4 TFLOP/s fp16 tensor, 66.9 fp32, 1980 MHz, 3.35 TB/s
    clock = 0.7 * 1980e6
    assert peak_at_clock(spec, "fp16_tensor", clock) == pytest.approx(0.7 * 989.4e12)
    est = estimate(spec, H100, clock, {**IDLE, "hmma": 0.5, "fp32": 0.25}, 0.4)
    # by hand: 0.5 × 989.4e12 × 0.7 + 0.25 × 66.9e12 × 0.7 = 346.29e12 + 11.7075e12
    assert est.flop_per_s == pytest.approx(357.9975e12)
    assert est.dram_bps == pytest.approx(0.4 * 3350e9)
    assert est.status is None
    fp64 = estimate(spec, H100, 1980e6, {**IDLE, "dmma": 0.1, "fp64": 0.2}, 0.0)
    assert fp64.flop_per_s == pytest.approx(0.1 * 66.9e12 + 0.2 * 33.5e12)
    assert estimate(spec, H100, 1980e6, IDLE, 0.0).flop_per_s == 0.0


def test_no_estimate_is_ever_a_guess():
    h100, nvl, h200_nvl = (
        find_gpu("h100-sxm5-80gb"),
        find_gpu("h100-nvl-94gb"),
        find_gpu("h200-nvl-141gb"),
    )
    mig = estimate(h100, H100, 1980e6, IDLE, 0.5, mig=True)
    assert (mig.flop_per_s, mig.dram_bps, mig.status) == (None, None, MIG_OFF)
    unknown = estimate(None, "NVIDIA Future GPU", 1e9, IDLE, 0.5)
    assert unknown.flop_per_s is None and "NVIDIA Future GPU is not in the GPU table" in (
        unknown.status or ""
    )
    no_clock = estimate(h200_nvl, "NVIDIA H200 NVL", 1.5e9, IDLE, 0.5)  # no datasheet clock
    assert no_clock.flop_per_s is None and no_clock.dram_bps == pytest.approx(0.5 * 4800e9)
    assert "no datasheet clock" in (no_clock.status or "")
    # the NVL table has no CUDA-core fp16 peak: idle, the pipe adds nothing; busy, unknown
    assert estimate(nvl, "NVIDIA H100 NVL", 1.7e9, IDLE, 0.1).flop_per_s == 0.0
    busy = estimate(nvl, "NVIDIA H100 NVL", 1.7e9, {**IDLE, "fp16": 0.3}, 0.1)
    assert busy.flop_per_s is None and "no fp16 peak" in (busy.status or "")
    missing = estimate(h100, H100, 1.9e9, {**IDLE, "hmma": None}, 0.1)
    assert missing.flop_per_s is None and "no HMMA activity" in (missing.status or "")
    assert estimate(h100, H100, None, IDLE, 0.1).flop_per_s is None


def test_fill_estimate_leaves_samples_without_gpm_empty():
    s = GpuSample(0.0, "n", 0, H100, sm_clock_hz=1.98e9, gpm_status="warming up")
    fill_estimate(s, match_device_name(H100))
    assert (s.est_flops, s.est_dram_bps, s.est_status) == (None, None, None)
    s = GpuSample(0.0, "n", 0, H100, sm_clock_hz=1.98e9, dram_bw_util=0.5, mig_mode=False)
    s.hmma_active, s.dmma_active, s.fp64_active, s.fp32_active, s.fp16_active = 1, 0, 0, 0, 0
    fill_estimate(s, match_device_name(H100))
    assert s.est_flops == pytest.approx(989.4e12) and s.est_dram_bps == pytest.approx(1675e9)


def test_estimates_survive_a_recording_round_trip_and_old_recordings_read_empty(tmp_path):
    src = SyntheticSource(gpus=2, estimate=True)
    src.tick = 10
    reading = src.read()
    assert all(s.est_flops and s.est_dram_bps for s in reading.samples)
    table = to_table([(s, reading.processes) for s in reading.samples])
    pq.write_table(table, tmp_path / "one.parquet")
    back = from_table(pq.read_table(tmp_path / "one.parquet"))
    assert [s.as_dict() for s in back.samples] == [s.as_dict() for s in reading.samples]
    old = from_table(read_recording(H100_RECORDING)).samples  # recorded before the estimates
    assert all(s.est_flops is None and s.hmma_active is None for s in old)
    session = load(str(H100_RECORDING))
    assert any("est_flops" in w or "hmma_active" in w for w in session.warnings)
    (g,) = summarise(session.con)
    assert g.est_flops is None and g.tensor_active is not None


@pytest.mark.slow
def test_record_summary_gives_the_mean_estimates(tmp_path):
    src = SyntheticSource(gpus=1, estimate=True)
    samples = [src.read().samples[0] for _ in range(6)]
    _write(tmp_path / "n1.parquet", samples)
    doc = cli("record", "--summary", str(tmp_path / "n1.parquet"), "--format", "json")
    (g,) = json.loads(doc.stdout)["gpus"]
    assert g["est_flops"] == pytest.approx(statistics.fmean(s.est_flops for s in samples))
    assert g["est_flops_max"] == pytest.approx(max(s.est_flops for s in samples))
    assert g["est_dram_bps"] == pytest.approx(statistics.fmean(s.est_dram_bps for s in samples))
    table = cli("record", "--summary", str(tmp_path / "n1.parquet")).stdout
    row = next(line for line in table.splitlines() if "est. TFLOP/s" in line)
    assert f"{g['est_flops'] / 1e12:.1f}" in row
    assert "est. DRAM GB/s" in table


def test_the_h100_run_estimates_within_ten_percent_of_what_torch_achieved():
    """bench/gpm_estimate.py on an H100: bf16 and fp32 (TF32 off) matmuls, then copies."""
    run = json.loads(GPM_RUN.read_text())["phases"]
    samples = [s for s in from_table(read_recording(GPM_RECORDING)).samples if s.gpu == 0]
    phases = {
        "bf16": [s for s in samples if (s.hmma_active or 0) > 0.8],
        "fp32": [s for s in samples if (s.fp32_active or 0) > 0.6],
        "copy": [s for s in samples if (s.dram_bw_util or 0) > 0.8 and not s.hmma_active],
    }
    assert all(len(p) >= 15 for p in phases.values())
    for name in ("bf16", "fp32"):
        est = statistics.median(s.est_flops for s in phases[name])
        assert est == pytest.approx(run[name]["achieved_flop_per_s"], rel=0.10), name
    est = statistics.median(s.est_dram_bps for s in phases["copy"])
    assert est == pytest.approx(run["copy"]["achieved_bytes_per_s"], rel=0.05)
    assert all(s.est_flops == 0 for s in phases["copy"])


def test_node_roofline_draws_a_point_per_gpu_under_datasheet_roofs():
    src = SyntheticSource(gpus=2, estimate=True)
    src.tick = 20
    cards = [(f"GPU{s.gpu}", s) for s in src.read().samples]
    lines = render_node_roofline(cards, 120, ascii_only=True)
    assert lines[0] == TITLE and "est." in lines[0]
    assert lines[-1] == (
        "x: FLOP per DRAM byte · y: FLOP/s · roofs (datasheet): tensor 989 TFLOP/s · "
        "FP32 66.9 TFLOP/s · DRAM 3.35 TB/s"
    )
    chart = "\n".join(lines[1:-1])
    assert "GPU0" in chart and "GPU1" in chart and "@" in chart
    idle = SyntheticSource(gpus=1, gpm=False).read().samples
    assert render_node_roofline([("GPU0", idle[0])], 80) == []


@pytest.mark.slow
async def test_monitor_card_shows_the_estimates_labelled_and_the_live_roofline():
    src = SyntheticSource(gpus=1, estimate=True)
    app = app_with(src)
    async with app.run_test(size=(100, 60)) as pilot:
        await fed(app, pilot, src, 40)
        text = screen_text(app)
    rows = {line[:10].strip(): line for line in text.splitlines()}
    s = src.sample(0)
    tflops = f"{s.est_flops / 1e12:.3g} TF/s"
    assert rows["est. FLOP"].endswith(tflops)
    assert rows["est. DRAM"].endswith(f"{s.est_dram_bps / 1e12:.3g} TB/s")
    assert "est. roofline of the node" in text and "GPU0" in text


async def test_monitor_says_once_why_there_is_no_estimate():
    src = SyntheticSource(gpus=2, estimate=True, mig=True)
    app = app_with(src)
    async with app.run_test(size=(100, 40)) as pilot:
        await fed(app, pilot, src, 5)
        text = screen_text(app)
    assert text.count("est. FLOP/s and DRAM B/s off under MIG") == 1
    assert "est. FLOP" not in text.replace("est. FLOP/s and", "")
    assert "est. roofline" not in text
