"""Compare and diff (issue 6): matching, every Δ against numbers computed here, the CLI gate."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofscope
from roofscope.analysis.compare import KernelInfo, match_kernels
from roofscope.cli import main
from tests.conftest import SAMPLES
from tests.ncu_builder import raw_page, write

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_sample_cache")]

RESNET_FP32 = str(SAMPLES / "resnet18_fp32_h100.ncu-raw.csv")
RESNET_BF16 = str(SAMPLES / "resnet18_bf16_h100.ncu-raw.csv")
MOBILENET = str(SAMPLES / "mobilenetv2_fp32_h100.ncu-raw.csv")

UNITS = {
    "gpu__time_duration.sum": "nsecond",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst",
    "dram__bytes.sum": "byte",
}
GPU = {"device__attribute_display_name": "NVIDIA H100 80GB HBM3"}


def launch(kernel: str, ns: int, ffma: int, dram: int) -> tuple[str, dict[str, str]]:
    return kernel, {
        "gpu__time_duration.sum": str(ns),
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": str(ffma),
        "dram__bytes.sum": str(dram),
        **GPU,
    }


# before: sgemm 2×(100 µs, 1e9 FMA), relu 3×10 µs, old_copy 5 µs (vanishes)
BEFORE = [
    launch("volta_sgemm_128x64_nn", 100_000, 1_000_000_000, 50_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 10_000, 0, 8_000_000),
    launch("volta_sgemm_128x64_nn", 100_000, 1_000_000_000, 50_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 10_000, 0, 8_000_000),
    launch("old_copy_kernel", 5_000, 0, 1_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 10_000, 0, 8_000_000),
]
# after: sgemm 2×(60 µs), relu 4×12 µs (one launch more), new_softmax_kernel 7 µs
AFTER = [
    launch("volta_sgemm_128x64_nn", 60_000, 1_000_000_000, 50_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 12_000, 0, 8_000_000),
    launch("volta_sgemm_128x64_nn", 60_000, 1_000_000_000, 50_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 12_000, 0, 8_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 12_000, 0, 8_000_000),
    launch("void at::vectorized_elementwise_kernel<4, relu<float>>(int)", 12_000, 0, 8_000_000),
    launch("new_softmax_kernel", 7_000, 0, 2_000_000),
]


@pytest.fixture
def built(tmp_path):
    a = write(tmp_path / "before.csv", raw_page(BEFORE, UNITS))
    b = write(tmp_path / "after.csv", raw_page(AFTER, UNITS))
    session = roofscope.load(a, b, use_cache=False)
    yield session, a, b
    session.close()


def _attainable(session, report: int, flops: float, dram: float) -> float:
    roofs = {c.name: c.value for c in session.reports[report].ceilings}
    return min(roofs["fp32"], flops / dram * roofs["dram"])


def test_group_deltas_match_numbers_computed_here(built):
    session, _, _ = built
    diff = session.diff(0, 1, "group")
    rows = {r.name: r for r in diff.rows}
    gemm = rows["GEMM"]
    assert gemm.matched_by == "group"
    assert gemm.before["time_s"] == pytest.approx(200e-6)
    assert gemm.after["time_s"] == pytest.approx(120e-6)
    assert gemm.delta_time_s == pytest.approx(-80e-6)
    assert gemm.delta_time_pct == pytest.approx(-40.0)
    assert gemm.speedup == pytest.approx(200 / 120)
    flops = 2 * 2 * 1e9  # 2 launches × 2 FLOP per FMA × 1e9 FMA
    assert gemm.delta_flop_per_s == pytest.approx(flops / 120e-6 - flops / 200e-6)
    roof_before = 100 * (flops / 200e-6) / _attainable(session, 0, flops, 100e6)
    roof_after = 100 * (flops / 120e-6) / _attainable(session, 1, flops, 100e6)
    assert gemm.delta_roof_pp == pytest.approx(roof_after - roof_before)
    ew = rows["element-wise"]
    assert ew.delta_time_s == pytest.approx(48e-6 - 30e-6)
    assert ew.delta_time_pct == pytest.approx(60.0)
    # 0 FFMA measured, tensor, FP16 and FP64 not: FLOP/s unknown on both sides, no delta
    assert ew.before["flop_per_s"] is None and ew.delta_flop_per_s is None
    assert diff.total["delta_time_s"] == pytest.approx((120 + 48 + 7 - 235) * 1e-6)
    assert diff.total["delta_time_pct"] == pytest.approx(100 * (175 - 235) / 235)
    # Σ row Δ = the step's Δ: nothing is lost or counted twice
    assert sum(r.delta_time_s for r in diff.rows) == pytest.approx(diff.total["delta_time_s"])


def test_new_and_vanished_kernels_and_groups(built):
    session, _, _ = built
    diff = session.diff(0, 1, "group")
    assert diff.kernels.new == ["new_softmax_kernel"]
    assert diff.kernels.vanished == ["old_copy_kernel"]
    by_status = {r.name: r.status for r in diff.rows}
    assert by_status["softmax"] == "new"
    assert by_status["old_copy_kernel"] == "vanished"  # no rule matches: its base name
    gone = next(r for r in diff.rows if r.status == "vanished")
    assert gone.delta_time_s == pytest.approx(-5e-6)
    assert gone.vanished_kernels == ["old_copy_kernel"]
    assert next(r for r in diff.rows if r.name == "softmax").new_kernels == ["new_softmax_kernel"]


def test_launch_order_pairs_the_kth_launch_and_reports_the_extra_one(built):
    session, _, _ = built
    diff = session.diff(0, 1, "launch")
    relu = [r for r in diff.rows if "relu" in r.name]
    assert len(relu) == 4
    paired = [r for r in relu if r.matched_by == "launch order"]
    assert len(paired) == 3
    assert all(r.delta_time_s == pytest.approx(2e-6) for r in paired)
    (extra,) = [r for r in relu if r.status == "new"]
    assert extra.name.endswith("#4") and extra.delta_time_s == pytest.approx(12e-6)
    assert sum(r.delta_time_s for r in diff.rows) == pytest.approx(diff.total["delta_time_s"])


def test_kernels_match_across_data_types_within_a_group():
    fp32 = [
        KernelInfo("void max_pool_forward_nchw<float, int>(T2)", "pooling", 1),
        KernelInfo("void cutlass::Kernel<conv_fprop_f32>(T1)", "conv fprop", 2),
        KernelInfo("void cutlass::Kernel<ReduceSplitK<float>>(T1)", "reduction", 3),
        KernelInfo("void engines_precompiled::nchwToNhwcKernel<float>(P)", "layout", 4),
        KernelInfo("same_name", "GEMM", 5),
    ]
    bf16 = [
        KernelInfo("same_name", "GEMM", 1),
        KernelInfo("void max_pool_forward_nchw<c10::BFloat16, int>(T2)", "pooling", 2),
        KernelInfo("void cutlass::Kernel<conv_fprop_bf16_s16816>(T1)", "conv fprop", 3),
        KernelInfo("void cudnn::nchwToNhwcKernel<__nv_bfloat16>(P)", "layout", 4),
    ]
    m = match_kernels(fp32, bf16)
    how = {a: h for a, _, h in m.pairs}
    assert how["same_name"] == "name"
    assert how["void max_pool_forward_nchw<float, int>(T2)"] == "types"
    assert how["void cutlass::Kernel<conv_fprop_f32>(T1)"] == "base name"
    assert how["void engines_precompiled::nchwToNhwcKernel<float>(P)"] == "short name"
    # the split-K reduction shares the cutlass::Kernel base name but not the group
    assert m.vanished == ["void cutlass::Kernel<ReduceSplitK<float>>(T1)"]
    assert m.new == []


names = st.sampled_from(["a<float>", "a<c10::BFloat16>", "b", "ns::b", "c<1>", "c<2>", "d"])
kernel_sets = st.lists(st.tuples(names, st.sampled_from(["g1", "g2"])), unique_by=lambda t: t[0])


@settings(max_examples=200, deadline=None)
@given(kernel_sets, kernel_sets)
def test_every_kernel_is_matched_new_or_vanished_exactly_once(a, b):
    before = [KernelInfo(n, g, i) for i, (n, g) in enumerate(a)]
    after = [KernelInfo(n, g, i) for i, (n, g) in enumerate(b)]
    m = match_kernels(before, after)
    left = [p[0] for p in m.pairs] + m.vanished
    right = [p[1] for p in m.pairs] + m.new
    assert sorted(left) == sorted(n for n, _ in a)
    assert sorted(right) == sorted(n for n, _ in b)
    assert all(x == y for x, y, how in m.pairs if how == "name")


def test_h100_resnet18_fp32_against_bf16():
    session = roofscope.load(RESNET_FP32, RESNET_BF16)
    try:
        diff = session.diff(0, 1, "group")
        t0, t1 = session.reports[0].totals()["time_s"], session.reports[1].totals()["time_s"]
        own = [{r["name"]: r for r in session.reports[i].rows("group")} for i in (0, 1)]
    finally:
        session.close()
    assert diff.total["delta_time_s"] == pytest.approx(t1 - t0)
    assert diff.total["speedup"] == pytest.approx(t0 / t1)
    assert sum(r.delta_time_s for r in diff.rows) == pytest.approx(t1 - t0)
    for row in diff.rows:  # each side is exactly what the report shows on its own
        if row.before is not None:
            assert row.before["time_s"] == own[0][row.name]["time_s"]
        if row.after is not None:
            assert row.after["time_s"] == own[1][row.name]["time_s"]
    rows = {r.name: r for r in diff.rows}
    # bf16 moves the convolutions onto the bf16 tensor path: all three got faster
    for conv in ("conv fprop", "conv dgrad", "conv wgrad"):
        assert rows[conv].delta_time_s < 0 and rows[conv].delta_flop_per_s > 0
    assert rows["memcpy/memset"].status == "new"  # fp32→bf16 casts of the weights
    assert diff.warnings == []


def test_h100_mobilenet_against_resnet18_conserves_time():
    session = roofscope.load(MOBILENET, RESNET_FP32)
    try:
        for by in ("group", "kernel", "launch"):
            diff = session.diff(0, 1, by)
            total = session.reports[1].totals()["time_s"] - session.reports[0].totals()["time_s"]
            assert sum(r.delta_time_s for r in diff.rows) == pytest.approx(total)
            matched = len(diff.kernels.pairs)
            assert matched + len(diff.kernels.vanished) == session.reports[0].totals()["kernels"]
            assert matched + len(diff.kernels.new) == session.reports[1].totals()["kernels"]
    finally:
        session.close()


def test_cli_fail_if_slower_gates_on_the_threshold(capsys):
    # fp32 after bf16 is 5.5% slower
    assert main(["diff", RESNET_BF16, RESNET_FP32, "--fail-if-slower", "5"]) == 1
    assert "slower by 5.5% (threshold 5%)" in capsys.readouterr().err
    assert main(["diff", RESNET_BF16, RESNET_FP32, "--fail-if-slower", "6"]) == 0
    assert main(["diff", RESNET_FP32, RESNET_BF16, "--fail-if-slower", "0"]) == 0  # faster


def test_gate_refuses_an_export_without_kernel_time(tmp_path, capsys):
    empty = write(
        tmp_path / "no_time.csv",
        raw_page([("k", {"dram__bytes.sum": "100", **GPU})], {"dram__bytes.sum": "byte"}),
    )
    assert main(["diff", RESNET_FP32, str(empty), "--fail-if-slower", "5"]) == 2
    assert "cannot gate: one of the two exports has no kernel time" in capsys.readouterr().err
    assert main(["diff", RESNET_FP32, RESNET_BF16, "--fail-if-slower", "nan"]) == 2


def test_cli_json_and_markdown(capsys):
    assert main(["diff", RESNET_FP32, RESNET_BF16, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == 1 and doc["by"] == "group"
    assert doc["total"]["delta_time_pct"] == pytest.approx(-5.2, abs=0.05)
    assert {r["status"] for r in doc["rows"]} == {"matched", "new"}
    assert main(["diff", RESNET_BF16, RESNET_FP32, "--format", "json"]) == 0
    backwards = json.loads(capsys.readouterr().out)  # bf16's copies are not in the fp32 step
    assert {r["status"] for r in backwards["rows"]} == {"matched", "vanished"}
    assert main(["diff", RESNET_FP32, RESNET_BF16, "--format", "md", "--top", "3"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("### roofscope diff: `resnet18_fp32_h100.ncu-raw.csv`")
    assert "| group | before | after | Δtime | Δ% | % of roof | ΔFLOP/s | kernels |" in md
    assert md.count("\n| ") == 4  # header + 3 rows
    assert "<details><summary>New kernels (29)</summary>" in md


def test_cli_diff_errors_are_one_line(capsys, tmp_path):
    assert main(["diff", RESNET_FP32, str(tmp_path / "missing.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "missing.csv" in err
    rec = str(SAMPLES / "h100_matmul.parquet")
    assert main(["diff", RESNET_FP32, rec]) == 2
    assert "is a GPU recording, not a kernel profile" in capsys.readouterr().err
