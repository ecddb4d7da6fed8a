"""Every real export loads; H100 totals match sums computed here from the raw CSV values."""

from __future__ import annotations

import csv
import math

import pytest

import roofscope
from roofscope.errors import RoofscopeError
from tests.conftest import SAMPLES, SHARED

pytestmark = pytest.mark.usefixtures("shared_sample_cache")

SCALE = {
    "": 1,
    "ns": 1e-9,
    "us": 1e-6,
    "byte": 1,
    "Kbyte": 1e3,
    "Mbyte": 1e6,
    "Gbyte": 1e9,
    "inst": 1,
    "hz": 1,
    "Ghz": 1e9,
    "inst/cycle": 1,
}


def _raw_table(path):
    rows = list(csv.reader(path.open(encoding="utf-8")))
    header, units, data = rows[0], rows[1], rows[2:]
    return header, units, [r for r in data if r and r[0].isdigit()]


def _column(header, units, data, name):
    i = header.index(name)
    return [float(r[i].replace(",", "")) * SCALE[units[i]] for r in data]


def test_mobilenet_raw_totals_match_independent_sums(in_tmp_cwd):
    path = SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv"
    header, units, data = _raw_table(path)
    col = lambda n: _column(header, units, data, n)  # noqa: E731
    time = sum(col("gpu__time_duration.sum"))
    op = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
    fp32 = sum(
        a + m + 2 * f
        for a, m, f in zip(
            col(op.format("fadd")), col(op.format("fmul")), col(op.format("ffma")), strict=True
        )
    )
    dram = sum(col("dram__bytes_read.sum")) + sum(col("dram__bytes_write.sum"))
    report = roofscope.load(path).report_dict()["reports"][0]
    assert report["launches"] == len(data) == 459
    assert report["time_s"] == pytest.approx(time, rel=1e-9)
    assert report["flops"]["fp32"] == pytest.approx(fp32, rel=1e-9)
    assert report["bytes"]["dram"] == pytest.approx(dram, rel=1e-9)
    assert report["gpu"] == {
        "name": "NVIDIA H100 80GB HBM3",
        "cc": "9.0",
        "sm_count": 132,
        "spec": "h100-sxm5-80gb",
    }


def test_mobilenet_auto_and_base_units_agree(in_tmp_cwd):
    auto = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv").reports[0].totals()
    base = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw-base.csv").reports[0].totals()
    assert auto["launches"] == base["launches"]
    assert auto["time_s"] == pytest.approx(base["time_s"], rel=1e-6)
    assert auto["flops"]["fp32"] == pytest.approx(base["flops"]["fp32"], rel=1e-6)
    # auto units print 6 decimals of Mbyte, so allow their rounding
    assert auto["bytes"]["dram"] == pytest.approx(base["bytes"]["dram"], rel=1e-4)


def test_mobilenet_details_page_agrees_with_raw(in_tmp_cwd):
    raw = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw-base.csv").reports[0].totals()
    det = roofscope.load(SAMPLES / "mobilenetv2_fp32_h100.ncu-details.csv").reports[0].totals()
    assert det["launches"] == raw["launches"]
    # the details page prints 2 decimals of auto-scaled units (e.g. "20.99" us)
    assert det["time_s"] == pytest.approx(raw["time_s"], rel=1e-3)
    assert det["flops"]["fp32"] == pytest.approx(raw["flops"]["fp32"], rel=1e-3)


def test_resnet18_rate_form_totals(in_tmp_cwd):
    """The roofline-section export has rates: FLOPs = Σ per_cycle_elapsed × clock × time."""
    path = SAMPLES / "resnet18_fp32_h100.ncu-raw.csv"
    header, units, data = _raw_table(path)
    col = lambda n: _column(header, units, data, n)  # noqa: E731
    time = col("gpu__time_duration.sum")
    clock = col("smsp__cycles_elapsed.avg.per_second")
    rate = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum.per_cycle_elapsed"
    fp32 = sum(
        (a + m + 2 * f) * c * t
        for a, m, f, c, t in zip(
            col(rate.format("fadd")),
            col(rate.format("fmul")),
            col(rate.format("ffma")),
            clock,
            time,
            strict=True,
        )
    )
    tensor = sum(col("sm__ops_path_tensor_src_tf32_dst_fp32.sum"))
    report = roofscope.load(path).report_dict()["reports"][0]
    assert report["launches"] == 361
    assert report["time_s"] == pytest.approx(sum(time), rel=1e-9)
    assert report["flops"]["fp32"] == pytest.approx(fp32, rel=1e-9)
    assert report["flops"]["tensor"] >= tensor > 0
    names = {c["name"] for c in report["ceilings"]}
    assert {"fp32", "fp64", "fp16", "tensor", "dram", "l2", "l1"} <= names
    assert all(
        c["source"].startswith("report:")
        for c in report["ceilings"]
        if c["name"] in {"fp32", "dram", "l2", "l1"}
    )


def test_resnet18_groups_and_histogram_are_consistent(in_tmp_cwd):
    report = roofscope.load(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv").report_dict()
    r = report["reports"][0]
    groups = r["groups"]
    assert sum(g["launches"] for g in groups) == r["launches"]
    assert sum(g["time_s"] for g in groups) == pytest.approx(r["time_s"])
    assert sum(g["time_pct"] for g in groups) == pytest.approx(100.0)
    assert {"GEMM", "conv fprop", "conv dgrad", "conv wgrad", "batch norm"} <= {
        g["name"] for g in groups
    }
    bins = r["efficiency"]["bins"]
    assert len(bins) == 10
    known = sum(b["time_s"] for b in bins)
    assert known + r["efficiency"]["unknown"]["time_s"] == pytest.approx(r["time_s"])
    floor = sum(b["time_x_efficiency_s"] for b in bins)
    assert r["efficiency"]["potential_speedup"] == pytest.approx(known / floor)
    assert all(0 <= g["efficiency"] <= 1 for g in groups if g["efficiency"] is not None)
    for g in groups:
        if g["efficiency"] is not None:
            assert g["headroom_s"] == pytest.approx(g["time_s"] * (1 - g["efficiency"]))


def _shared_exports():
    if not SHARED.exists():
        return []
    return sorted(
        p
        for p in SHARED.rglob("*")
        if p.is_file() and p.suffix in {".csv", ".txt"} and "nsys" not in p.parent.name
    )


@pytest.mark.parametrize("path", _shared_exports(), ids=lambda p: p.name[:60])
@pytest.mark.slow
def test_every_shared_ncu_export_loads_or_is_refused_cleanly(path, in_tmp_cwd):
    """ncu exports load with launches > 0; anything else gives a RoofscopeError, no crash."""
    try:
        session = roofscope.load(path, use_cache=False)
    except RoofscopeError as exc:
        assert "ncu" in exc.one_line() or "Nsight" in exc.one_line() or "session" in str(exc)
        return
    doc = session.report_dict()
    report = doc["reports"][0]
    if report["format"].startswith("nsys"):
        return  # an nsys stats file among the public samples: tests/test_nsys_samples.py
    assert report["launches"] > 0
    assert report["kernels"] > 0
    for g in report["groups"]:
        for v in (g["time_s"], g["flop_per_s"], g["efficiency"]):
            assert v is None or math.isfinite(v)


@pytest.mark.slow
def test_public_exports_with_known_counts(in_tmp_cwd):
    from tests.conftest import shared

    t4 = roofscope.load(shared("public", "cissieAB__pinn-heat-equation__Tesla-T4_1run_time.csv"))
    assert t4.reports[0].totals()["launches"] == 681
    assert t4.reports[0].totals()["kernels"] == 31
    gpt2 = roofscope.load(
        shared(
            "public",
            "leleucas__Actual-Parameter-Collection-for-Machine-Learning-Operators__gpt2_flashattn"
            "_nsight.csv",
        )
    )
    assert gpt2.reports[0].totals()["launches"] == 10
    assert gpt2.reports[0].totals()["kernels"] == 7
    nvtx = roofscope.load(
        shared("public", "YKTian-x2b__AI4Materials_EvaluationTool__metrics_713_paddle_.csv")
    )
    launches = nvtx.launches()
    assert len(launches) == 2
    assert launches["nvtx"].str.contains("linear_nvtx").all()
    failed = roofscope.load(
        shared("public", "rashwanth__RooflineAnalysis_On_NVIDIA_GPU__custom-scripts_output8.csv")
    )
    assert failed.reports[0].totals()["launches"] == 1
    # "nan" values are NULL, not numbers
    assert failed.reports[0].totals()["flops"]["fp32"] in (None, 0)
