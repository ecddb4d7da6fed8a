"""Scaling, cost and MIG advice (issue 6): every number against one computed here."""

from __future__ import annotations

import json
import tomllib

import pytest

import roofscope
from roofscope.analysis.cost import example_text, load_prices
from roofscope.analysis.mig import advise, slowdown
from roofscope.analysis.scaling import infer_setting
from roofscope.cli import main
from roofscope.hardware.specs import find_gpu
from tests.conftest import SAMPLES
from tests.ncu_builder import raw_page, write

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]

B8 = str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")
B16 = str(SAMPLES / "resnet18_bf16_b16_h100.ncu-raw.csv.gz")
B32 = str(SAMPLES / "resnet18_bf16_b32_h100.ncu-raw.csv.gz")
RECORDING = str(SAMPLES / "h100_matmul.parquet")
UNITS = {"gpu__time_duration.sum": "nsecond"}


def one_kernel(tmp_path, name: str, gpu: str, ns: int) -> str:
    values = {"gpu__time_duration.sum": str(ns), "device__attribute_display_name": gpu}
    return str(write(tmp_path / name, raw_page([("volta_sgemm_128x64_nn", values)], UNITS)))


@pytest.mark.parametrize(
    ("name", "batch", "precision", "gpus"),
    [
        ("resnet18_bf16_b32_h100.ncu-raw.csv.gz", 32, "bf16", 1),
        ("vit-fp16-bs128-8gpu.csv", 128, "fp16", 8),
        ("run.batch64.tf32.gpus4.sqlite", 64, "tf32", 4),
        ("resnet18_fp32_h100.ncu-raw.csv", None, "fp32", 1),
        ("bert_b8x.csv", None, None, 1),  # "b8x" is not a batch size
        ("llama_bf16_b200.csv", None, "bf16", 1),  # the B200, not batch 200
        ("x_b16_gpu0.csv", 16, None, 1),  # a GPU index, not zero GPUs
    ],
)
def test_settings_from_file_names(name, batch, precision, gpus):
    s = infer_setting(name)
    assert (s.batch, s.precision, s.gpus) == (batch, precision, gpus)


def test_h100_bf16_batch_scaling_matches_the_reports_own_totals(capsys):
    assert main(["scaling", B8, B16, B32, "--batch", "8", "16", "32", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["varying"] == ["batch"]
    session = roofscope.load(B8, B16, B32)
    try:
        totals = [session.reports[i].totals() for i in range(3)]
    finally:
        session.close()
    rows = doc["rows"]
    assert [r["setting"]["batch"] for r in rows] == [8, 16, 32]
    for r, t, batch in zip(rows, totals, (8, 16, 32), strict=True):
        flops = sum(v for v in t["flops"].values() if v is not None)
        assert r["step_time_s"] == pytest.approx(t["time_s"])
        assert r["time_per_sample_s"] == pytest.approx(t["time_s"] / batch)
        assert r["samples_per_s"] == pytest.approx(batch / t["time_s"])
        assert r["flop_per_s"] == pytest.approx(flops / t["time_s"])
        assert r["speedup"] == pytest.approx((batch / t["time_s"]) / (8 / totals[0]["time_s"]))
        assert 0 < r["efficiency"] < 1 and 0 < r["roof_pct"] < 100
    # measured on the H100: a bigger batch keeps the GPU busier per sample
    assert rows[0]["samples_per_s"] < rows[1]["samples_per_s"] < rows[2]["samples_per_s"]
    assert rows[0]["scaling_efficiency"] is None  # one GPU throughout


def test_gpu_count_scaling_efficiency(tmp_path, capsys):
    one = one_kernel(tmp_path, "one.csv", "NVIDIA H100 80GB HBM3", 100_000)
    four = one_kernel(tmp_path, "four.csv", "NVIDIA H100 80GB HBM3", 125_000)
    args = ["scaling", one, four, "--batch", "32", "--gpus", "1", "4", "--format", "json"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    speedup = (4 * 32 / 125e-6) / (32 / 100e-6)
    assert rows[1]["speedup"] == pytest.approx(speedup)
    assert rows[1]["scaling_efficiency"] == pytest.approx(speedup / 4)


def test_scaling_table_and_chart_at_80_columns(capsys):
    assert main(["scaling", B8, B16, B32, "--batch", "8", "16", "32"]) == 0
    out = capsys.readouterr().out
    assert "samples/s (more is better)" in out
    bars = [line for line in out.splitlines() if line.startswith("bf16 b")]
    assert len(bars) == 6  # three table rows, three bars
    assert max(len(line) for line in out.splitlines()) <= 80
    lengths = [line.count("█") for line in bars[3:]]
    assert lengths[0] < lengths[1] < lengths[2]


def test_cost_across_gpu_types_from_a_price_file(tmp_path, capsys):
    h100 = one_kernel(tmp_path, "h100.csv", "NVIDIA H100 80GB HBM3", 200_000)
    a100 = one_kernel(tmp_path, "a100.csv", "NVIDIA A100-SXM4-40GB", 500_000)
    l4 = one_kernel(tmp_path, "l4.csv", "NVIDIA L4", 900_000)
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[[price]]\ngpu = "H100 SXM"\noffer = "ours"\nusd_per_gpu_hour = 2.5\ndate = "2026-11"\n'
        '[[price]]\ngpu = "a100-sxm4-40gb"\nusd_per_gpu_hour = 1.2\n',
        encoding="utf-8",
    )
    args = ["cost", h100, a100, l4, "--batch", "64", "--gpus", "8", "--epochs", "10"]
    args += ["--samples", "1000000", "--prices", str(prices), "--format", "json"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    steps = -(-10 * 1_000_000 // (64 * 8))  # ceil
    by_gpu = {r["gpu"]: r for r in doc["rows"]}
    h = by_gpu["NVIDIA H100 80GB HBM3"]
    assert h["steps"] == steps
    assert h["gpu_hours"] == pytest.approx(steps * 200e-6 * 8 / 3600)
    assert h["cost_usd"] == pytest.approx(steps * 200e-6 * 8 / 3600 * 2.5)
    a = by_gpu["NVIDIA A100-SXM4-40GB"]
    assert a["cost_usd"] == pytest.approx(steps * 500e-6 * 8 / 3600 * 1.2)
    assert by_gpu["NVIDIA L4"]["cost_usd"] is None  # no price: no cost, never a borrowed one
    assert [r["gpu"] for r in doc["rows"]][-1] == "NVIDIA L4"
    assert any("no price for NVIDIA L4" in w for w in doc["warnings"])
    assert doc["prices"] == {"origin": str(prices), "examples_only": False}


def test_example_prices_are_dated_sourced_and_marked(tmp_path, monkeypatch, capsys):
    data = tomllib.loads(example_text())
    assert len(data["price"]) >= 6
    for p in data["price"]:
        assert p["example"] is True and p["date"] and p["source"].startswith("https://")
    assert "examples, not quotes" in example_text()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    table = load_prices()
    assert table.examples_only and table.origin.startswith("the example table")
    assert main(["cost", "--example-prices"]) == 0
    (tmp_path / "roofscope").mkdir()
    (tmp_path / "roofscope" / "prices.toml").write_text(capsys.readouterr().out, "utf-8")
    assert load_prices().origin == str(tmp_path / "roofscope" / "prices.toml")


def test_cost_with_one_price_and_the_example_warning(capsys):
    assert main(["cost", B32, "--run-steps", "1000", "--usd-per-gpu-hour", "2"]) == 0
    out = capsys.readouterr().out
    assert "a run of 1,000 steps" in out and "EXAMPLES" not in out
    assert main(["cost", B32, "--run-steps", "1000"]) == 0
    assert "EXAMPLES, not quotes" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cost", B32], "say how long the run is"),
        (["cost", "--run-steps", "10"], "cost needs exports"),
        (["cost", B32, "--run-steps", "0"], "--run-steps needs a positive number"),
        (["cost", B32, "--run-steps", "9", "--batch", "8", "16"], "--batch has 2 values"),
        (["mig"], "give a recording, or --gpu, --util and --memory"),
        (["mig", "--gpu", "H100 SXM", "--util", "140", "--memory", "1"], "is a percentage"),
        (["mig", B32], "not a roofscope recording"),
        (["mig", "--gpu", "t4", "--util", "50", "--memory", "4"], "Tesla T4 has no MIG"),
        (["mig", "--gpu", "h100-sxm5-80gb", "--util", "5", "--memory", "-4"], "--memory needs"),
        (["mig", RECORDING, "--tolerance", "nan"], "--tolerance is a slowdown factor"),
        (["cost", B32, "--epochs", "inf", "--samples", "9"], "--epochs needs a positive"),
        (["cost", B32, "--run-steps", "9", "--usd-per-gpu-hour", "inf"], "needs a positive"),
        (["scaling", RECORDING], "no kernel profiles among the files"),
    ],
)
def test_user_errors_are_one_line(args, message, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_bad_price_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "p.toml"
    bad.write_text('[[price]]\ngpu = "Voodoo 3"\nusd_per_gpu_hour = 1\n', encoding="utf-8")
    assert main(["cost", B32, "--run-steps", "9", "--prices", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "[[price]] entry 1: unknown GPU 'Voodoo 3'" in err


def test_unknown_batch_sorts_last_and_the_baseline_has_a_throughput(capsys):
    assert main(["scaling", B8, B16, B32, "--format", "json"]) == 0  # B8's name has no batch
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["setting"]["batch"] for r in rows] == [16, 32, None]
    assert rows[0]["speedup"] == pytest.approx(1.0)
    assert rows[1]["speedup"] == pytest.approx(rows[1]["samples_per_s"] / rows[0]["samples_per_s"])
    assert rows[2]["speedup"] is None


def test_mig_instances_per_gpu_follow_the_memory_slices():
    from roofscope.hardware.mig import PROFILES

    h100 = {p.name: p.max_instances for p in PROFILES["h100-sxm5-80gb"]}
    assert h100 == {
        "1g.10gb": 7, "1g.10gb+me": 1, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2,
        "4g.40gb": 1, "7g.80gb": 1,
    }  # fmt: skip
    a30 = {p.name: p.max_instances for p in PROFILES["a30"]}
    assert a30["1g.6gb"] == 4 and a30["2g.12gb"] == 2 and a30["4g.24gb"] == 1


def test_slowdown_model():
    f = 32 / 132
    assert slowdown(0.35, 0.22, f) == pytest.approx(0.65 + 0.35 * (0.22 / 0.35) / f)
    assert slowdown(0.35, None, f) == pytest.approx(0.65 + 0.35 / f)  # kernels fill the GPU
    assert slowdown(0.2, 0.01, 0.5) == 1.0  # kernels never needed more than the slice


def test_mig_picks_the_smallest_slice_that_fits():
    h100 = find_gpu("H100 SXM")
    # kernels occupy 25% of the SMs while running, busy 20% of the time
    small = advise(h100, 0.20, 5e9, 0.05)
    assert small.suggestion is not None and small.suggestion.profile.name == "1g.20gb"
    one_g = next(f for f in small.fits if f.profile.name == "1g.10gb")
    assert one_g.slowdown == pytest.approx(0.8 + 0.2 * 0.25 / (16 / 132))  # 1.21× > 1.10
    # 19 GB + 10% no longer fits a 20 GB slice: the next one that does
    big = advise(h100, 0.20, 19e9, 0.05)
    assert big.suggestion.profile.name == "3g.40gb"
    assert any("memory: peak 19.0 GB + 10% headroom = 20.9 GB" in r for r in big.reasoning)
    too_big = advise(h100, 0.9, 95e9, 0.9)
    assert too_big.suggestion is None and "no slice has enough memory" in too_big.reasoning[-1]


def test_mig_from_the_h100_recording(capsys):
    assert main(["mig", RECORDING, "--format", "json"]) == 0
    (advice,) = json.loads(capsys.readouterr().out)["advice"]
    assert main(["record", "--summary", RECORDING, "--format", "json"]) == 0
    (g,) = json.loads(capsys.readouterr().out)["gpus"]
    # the matmul phases filled the GPU: no slice runs them within 10%
    assert advice["suggestion"]["profile"] == "7g.80gb"
    two = next(p for p in advice["profiles"] if p["profile"] == "2g.20gb")
    expected = slowdown(g["util_gpu"], g["sm_active"], 32 / 132)
    assert two["expected_slowdown"] == pytest.approx(expected)
    assert any(f"busy {g['util_gpu']:.0%}" in r for r in advice["reasoning"])
    assert main(["mig", RECORDING]) == 0
    assert "→ 7g.80gb (ID 0)" in capsys.readouterr().out


def test_session_cost_and_recording_summaries_are_what_the_front_ends_read():
    """The Compare pane's cost (scaling measured once, default prices) and ``record --summary``
    (every recording) come from the session, equal to what it gives piece by piece."""
    session = roofscope.load(B8, B16, RECORDING)
    try:
        measured = session.scaling()
        shared = session.cost(epochs=1, samples=1_000_000, measured=measured)
        assert shared == session.cost(load_prices(), epochs=1, samples=1_000_000)
        per_report = [g for r in session.reports for g in r.recording_summary()]
        assert session.recording_summaries() == per_report and len(per_report) == 1
    finally:
        session.close()
