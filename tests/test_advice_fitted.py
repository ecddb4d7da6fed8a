"""The TF32 and torch.compile models (analysis/advice/tensor_math.py, compiled.py; issue 32
items 1-2): kernels classed by name and family, the changes fitted on the fitting pairs only
(bench/tf32_pairs.csv, bench/compile_pairs.csv), every held-out pair advised from its "before"
report as ``advise`` does, Inductor's layout choice from the run's convolutions, and the
classes read apart from roofscope's ingest."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import re

import pytest

from roofscope.analysis.advice import compiled, tensor_math
from roofscope.analysis.advice.evidence import GAIN_SHARE, roofscope_advice
from roofscope.analysis.advice.kernel_classes import Pair
from roofscope.analysis.advice.layout import layout_class
from tests import sample_steps
from tests.conftest import REPO, SAMPLES

_spec = importlib.util.spec_from_file_location("fit_advice", REPO / "bench" / "fit_advice.py")
fit_advice = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(fit_advice)  # type: ignore[union-attr]

# model module, its item's rule, its pairs
MODELS = {
    "tensor_math": (tensor_math, "tensor_cores", fit_advice.read_pairs("tensor_math")),
    "compiled": (compiled, "fusion", fit_advice.read_pairs("compiled")),
}
CHECKED = [
    (name, row)
    for name, (_, _, pairs) in MODELS.items()
    for row in pairs
    if row["set"] != "fitting"
]


# -- classes and Inductor's layout (no report needed) -----------------------------------------
@pytest.mark.parametrize(
    ("group", "kernel", "key"),
    [
        ("GEMM", "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_"
         "aligna4_alignc4_execute_kernel__5x_cublas", "gemm_fp32"),
        ("GEMM", "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)",
         "gemm_fp32"),
        ("GEMM", "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>(…)", None),
        ("GEMM", "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32_warpgroupsize1x1x1",
         None),
        ("conv fprop", "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize32x32"
         "x8_stage3_warpsize1x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn", "conv_fp32"),
        ("conv dgrad", "void detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, 0>(…)", "conv_fp32"),
        ("conv FFT", "void fft2d_r2c_32x32<float, 0, 0, 0>(float2 *, const T1 *, int, int, …)",
         "conv_fp32"),
        ("conv wgrad", "void cnn::wgrad2d_grouped_direct_kernel<0, 1, int, float, float, float>(…)",
         "conv_grouped"),
        ("conv wgrad", "void at::<unnamed>::conv_depthwise2d_grad_weight_kernel<float, unsigned "
         "int>(…)", None),
        ("conv fprop", "conv2d_c1_k1_nhwc", None),
        ("attention", "fmha_cutlassF_f32_aligned_64x64_rf_sm80(…)", None),
    ],
)  # fmt: skip
def test_tf32_classes(group, kernel, key):
    assert tensor_math.TABLE.classify(group, kernel) == key


def test_tf32_is_predicted_for_the_libraries_whose_switch_is_off():
    """PyTorch's defaults: cuDNN's TF32 on, cuBLAS's off. A library whose kernels include TF32
    or 16-bit ones has its switch on: only the other's FP32 kernels are predicted to move."""
    gemm = ("GEMM", "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nt_align1>(…)", "",
            1, 1e-3)  # fmt: skip
    conv = ("conv fprop", "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tile"
            "size32x32x8_stage3_warpsize1x2x1_g1_ffma", "", 1, 1e-3)  # fmt: skip
    conv_tf32 = ("conv fprop", "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc",
                 "", 1, 1e-3)  # fmt: skip
    gemm_tf32 = ("GEMM", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32", "", 1, 1e-3)
    both = tensor_math.predict([gemm, conv])
    assert set(both.before) == {"gemm_fp32", "conv_fp32"}
    cudnn_on = tensor_math.predict([gemm, conv, conv_tf32])
    assert set(cudnn_on.before) == {"gemm_fp32"} and cudnn_on.gain_s > 0
    assert tensor_math.Switches.of([gemm, conv_tf32]) == tensor_math.Switches(False, True)
    bf16 = ("GEMM", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "", 1, 1e-3)
    # a TF32 GEMM: both switches taken as on (cuDNN keeps small convolutions in FP32 with its
    # switch on, as in SimpleCNN's tf32 runs)
    for already in ([gemm, conv, gemm_tf32], [gemm, conv, conv_tf32, gemm_tf32], [conv, bf16]):
        prediction = tensor_math.predict(already)
        assert prediction.gain_s == 0 and "already" in prediction.why_not


def _conv(out: int, inputs: int, k: int = 3, groups: int = 1) -> dict:
    return {"layer": "c", "weight": [out, inputs, k, k], "groups": groups, "transposed": False}


@pytest.mark.parametrize(
    ("convolutions", "keeps"),
    [
        ([_conv(64, 3, 7), _conv(128, 64), _conv(256, 128)], None),  # a ResNet's
        ([_conv(128, 64), _conv(32, 128)], "a 3×3 convolution's weight is 32×128"),
        ([_conv(128, 64), _conv(32, 128, k=1)], None),  # 1×1 reductions are fine
        ([_conv(128, 64), _conv(128, 2, groups=64)], "a grouped convolution has more"),
        ([_conv(128, 64), _conv(128, 1, groups=128)], None),  # depthwise is fine
        ([_conv(32, 3), _conv(64, 32)], "every convolution has 64 channels or fewer"),
        ([], "the model has no convolution"),
    ],
)
def test_inductor_keeps_nchw_as_its_training_heuristic_does(convolutions, keeps):
    why = compiled.inductor_keeps_nchw(convolutions)
    assert why == keeps if keeps is None else why.startswith(keeps)
    # a graph of 300 operations or more per convolution is left as it is
    few = compiled.inductor_keeps_nchw([_conv(768, 3, 16)], forward_ops=718)
    assert few.startswith("718 operations in the forward pass for 1 convolution")
    assert compiled.inductor_keeps_nchw([_conv(768, 3, 16)], forward_ops=299) is None


@pytest.mark.parametrize(
    "analytic",
    [
        None,
        {},
        {"convolutions": "3x3"},
        {"convolutions": [{"weight": "abc"}]},
        {"convolutions": [{"groups": 1}]},
        {"convolutions": [{"weight": [1]}]},
        {"convolutions": [None]},
        {"mode": "infer", "convolutions": [_conv(32, 128)]},
        {"convolutions": []},  # none listed, yet the step may run convolution kernels
        {"convolutions": [{"weight": [float("inf"), 3, 3, 3], "groups": 1}]},
        {"convolutions": [{"weight": [64, 3, 3, 3], "groups": float("inf")}]},
        {"convolutions": [{"weight": "6433", "groups": 1}]},
        {"convolutions": [{"weight": [-5, 300, 3, 3], "groups": 1}]},
        {"convolutions": [{"weight": [True, 300, 3, 3], "groups": 1}]},
        {"convolutions": [{"weight": [64.9, 300, 3, 3], "groups": 1}]},
        {"convolutions": [{"weight": [2**40, 3, 3, 3], "groups": 1}]},
        [],
    ],
)
def test_an_unknown_or_unreadable_layout_is_assumed_channels_last_and_said(analytic):
    layout = compiled.inductor_layout(analytic)
    assert layout.channels_last and not layout.known and "assumed" in layout.said


def test_the_conv_side_changes_only_when_inductor_takes_channels_last():
    transform = ("layout transform", "void cudnn::nchwToNhwcKernel<__nv_bfloat16>(…)", "", 2, 1e-3)
    norm = ("batch norm", "void at::batch_norm_transform_input_kernel<…>(…)", "", 1, 1e-3)
    scale = compiled.CHANGES["fusible"].scale
    conv = ("conv fprop", "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc", "",
            1, 0.0)  # fmt: skip
    cl = compiled.predict([transform, norm, conv], channels_last=True)
    nchw = compiled.predict([transform, norm, conv], channels_last=False)
    assert nchw.gain_s == pytest.approx(1e-3 * (1 - scale))
    assert cl.gain_s == pytest.approx(nchw.gain_s + 1e-3 * (1 - compiled.layout_changes(True)[
        "transform"].scale))  # fmt: skip
    cl_norm = ("batch norm", "void at::batch_norm_transform_input_channels_last_kernel<…>", "",
               1, 1e-3)  # fmt: skip
    already = compiled.inductor_layout(None, [transform, cl_norm])
    assert not already.channels_last and "already" in already.said
    triton = ("element-wise", "triton_poi_fused_add_relu_0", "", 1, 1e-3)
    assert "compiled already" in compiled.predict([transform, norm, triton]).why_not


def test_no_layout_change_without_convolutions_and_no_item_without_matrix_work():
    """A transformer's cuBLAS GEMMs (sm90_xmma_gemm_…, which the channels_last model's class
    of cuDNN's 1×1-convolution GEMMs matches by name) do not change layout under Inductor;
    a capture with no GEMM, convolution or attention (random-number kernels) is no step."""
    gemm = ("GEMM", "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize128x128x32", "", 4, 4e-3)
    norm = ("layer norm", "void at::native::vectorized_layer_norm_kernel<float>(…)", "", 2, 1e-3)
    prediction = compiled.predict([gemm, norm], channels_last=True)
    assert prediction.after["conv_gemm"] == prediction.before["conv_gemm"] == 4e-3
    assert prediction.changed() == ["fusible"]
    rng = ("dropout/RNG", "void at::native::distribution_elementwise_grid_stride_kernel(…)", "",
           4, 1e-3)  # fmt: skip
    assert compiled.predict([rng, norm]).gain_s == 0
    assert "not a model's step" in compiled.predict([rng, norm]).why_not


@pytest.mark.slow
@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize(
    "row",
    [r for r in fit_advice.read_pairs("compiled") if r["gpu"] == "H200"],
    ids=lambda r: f"{r['model']} b{r['batch']}",
)
def test_the_heuristic_on_the_runs_convolutions_says_what_inductor_did(row):
    """Each compile pair whose eager run has NCHW↔NHWC transforms: Inductor removed them
    (channels_last) or kept them exactly when the heuristic on the run's analytic.json says
    (ViT-B/16 by the graph-size check, DenseNet-121 and U-Net by their convolutions)."""
    from roofscope.analysis.advice.run_files import analytic_beside

    pair = Pair(row["model"], _launches(row["before"]), _launches(row["after"]))
    if not any(layout_class(g, k, b) == "transform" for g, k, b, *_ in pair.before):
        pytest.skip("no transforms in the eager step: nothing shows Inductor's choice")
    analytic = analytic_beside(SAMPLES / row["before"])
    assert analytic is not None
    decided = compiled.inductor_layout(analytic, pair.before)
    assert decided.known and decided.channels_last == compiled.converted(pair), decided.said


@pytest.mark.parametrize("model", ["densenet121", "unet", "resnet50", "cnn", "vit_b_16"])
def test_the_committed_analytic_json_holds_the_models_convolutions(model):
    """The samples' analytic.json beside the compile pairs' eager runs (what roofscope profile
    writes; DenseNet's and U-Net's keep Inductor in NCHW, as their compiled runs showed)."""
    torch = pytest.importorskip("torch")  # noqa: F841
    from roofscope.profiling.analytic import convolutions, forward_ops

    batch = 128 if model == "cnn" else 8
    committed = json.loads((SAMPLES / f"{model}_bf16_b{batch}_h200.analytic.json").read_text())
    assert committed["convolutions"] == convolutions(model)
    assert committed["forward_ops"] == forward_ops(model)


# -- real pairs -------------------------------------------------------------------------------


_launches, _step = sample_steps.launches, sample_steps.step


@pytest.mark.slow
@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize("name", list(MODELS))
def test_the_committed_changes_are_the_fit_on_the_fitting_pairs_only(name):
    model, _, pairs = MODELS[name]
    rows = [r for r in pairs if r["set"] == "fitting"]
    held_out = {r["model"] for r in pairs if r["set"] == "held-out"}
    fitted = model.fit(
        [Pair(fit_advice.label(r), _launches(r["before"]), _launches(r["after"])) for r in rows]
    )
    assert fitted.keys() == model.CHANGES.keys()
    for key, change in fitted.items():  # to the rounding the fit keeps
        assert change.scale == pytest.approx(model.CHANGES[key].scale, abs=1.5e-3), key
        assert change.per_launch_s == pytest.approx(model.CHANGES[key].per_launch_s, abs=2e-9)
    # six models or more in each set, the item says which, and no held-out model was fitted on
    assert set(model.FITTED_ON) == {r["model"] for r in rows} and len(model.FITTED_ON) >= 6
    assert set(model.HELD_OUT) == held_out and len(held_out) >= 6
    assert not held_out & set(model.FITTED_ON)


@pytest.mark.slow
@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize(
    ("name", "row"), CHECKED, ids=[f"{n} {fit_advice.label(r)} {r['gpu']}" for n, r in CHECKED]
)
def test_a_held_out_pair_is_advised_when_it_pays_and_within_25_percent(name, row):
    """The issue's goal on each held-out pair: a gain worth 5% of the step or more is advised
    (from the "before" report, as ``advise`` reads it, analytic.json beside included), within
    ±25% of the measured one. The other-GPU rows are reported in docs/performance.md, and
    checked here to be advised."""
    _, rule, _ = MODELS[name]
    before, after = _step(row["before"]), _step(row["after"])
    measured = before.step_s - after.step_s
    items = [a for a in roofscope_advice(before) if a.rule == rule]
    share = 100 * measured / before.step_s
    if share >= 5.0:
        assert items, f"{row['model']}: {rule} saved {share:.1f}% and was not advised"
        if row["set"] == "held-out":
            assert items[0].est_gain_s == pytest.approx(measured, rel=0.25)
    elif share < GAIN_SHARE:
        assert not items, f"{row['model']}: advised for a {share:.1f}% gain"


@pytest.mark.slow
@pytest.mark.usefixtures("shared_sample_cache")
@pytest.mark.parametrize(
    ("pattern", "rule"),
    [("*_tf32_*.ncu-raw.csv*", "tensor_cores"), ("*_bf16_*.ncu-raw.csv*", "tensor_cores"),
     ("*_compile_*.ncu-raw.csv*", "fusion")],
)  # fmt: skip
def test_an_applied_step_is_not_advised_its_change_again(pattern, rule):
    """Every TF32 and bf16 run: TF32 is not advised (its matrix kernels are TF32 or 16-bit
    already); every compiled run: torch.compile is not advised."""
    names = sorted(p.name for p in SAMPLES.glob(pattern))
    assert len(names) >= 8
    for name in names:
        assert rule not in {a.rule for a in roofscope_advice(_step(name))}, name


@pytest.mark.slow
@pytest.mark.usefixtures("shared_sample_cache")
def test_the_tf32_prediction_from_the_kernels_read_apart_from_ingest():
    """VGG19's FP32 export read with the csv module: its FP32 GEMMs (ffma, sgemm) and FP32
    convolutions (by the same words as ncu names them, grouped by hand; the complex GEMMs of
    cuDNN's FFT convolutions with them) give the item's gain by the model's formula."""
    name = "vgg19_fp32_b8_h200.ncu-raw.csv.gz"
    times = {"gemm_fp32": [], "conv_fp32": []}
    with gzip.open(SAMPLES / name, "rt", newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header, units = next(reader), next(reader)
        kernel, duration = header.index("Kernel Name"), header.index("gpu__time_duration.sum")
        assert units[duration] == "ns"
        for row in reader:
            seconds, n = float(row[duration].replace(",", "")) * 1e-9, row[kernel]
            if re.search(r"splitKreduce|tf32|depthwise", n):
                continue
            if re.search(r"(?:fprop|dgrad|wgrad)\w*_f32f32_f32f32|winograd|convolve_sgemm"
                         r"|dgrad_engine|wgrad_alg\d_engine|fft2d_|gemm_cf32cf32", n):  # fmt: skip
                times["conv_fp32"].append(seconds)
            elif re.search(r"gemm_f32f32_f32f32|simt_sgemm|\bsgemm", n):
                times["gemm_fp32"].append(seconds)
    prediction = tensor_math.predict(_step(name).kernel_times)
    expected = 0.0
    for key, launches in times.items():
        change = tensor_math.CHANGES[key]
        assert prediction.before[key] == pytest.approx(sum(launches), rel=1e-9)
        assert prediction.launches[key] == len(launches)
        expected += sum(launches) * (1 - change.scale) - change.per_launch_s * len(launches)
    assert prediction.gain_s == pytest.approx(expected, rel=1e-9)
    # VGG19's step: mostly FP32 convolutions
    assert sum(times["conv_fp32"]) > 10e-3 and sum(times["gemm_fp32"]) > 1e-3


def test_a_folders_plain_analytic_json_is_only_its_own_runs(tmp_path):
    """The named analytic.json beside an export is its run's; a folder's plain one only when
    the export is named after its model (roofscope profile's names) or the folder's run.json
    ran that model (the run folder's report.ncu-rep): in a folder of several exports it is
    another run's, and its convolutions would decide Inductor's layout for the wrong model."""
    from roofscope.analysis.advice.run_files import analytic_beside

    unet = json.loads((SAMPLES / "unet_bf16_b8_h200.analytic.json").read_text())
    (tmp_path / "analytic.json").write_text(json.dumps(unet))
    assert analytic_beside(tmp_path / "unet_bf16_b8_roofline.ncu-raw.csv") is not None
    assert analytic_beside(tmp_path / "resnet50_bf16_b8_h200.ncu-raw.csv.gz") is None
    assert analytic_beside(tmp_path / "report.ncu-rep") is None
    (tmp_path / "run.json").write_text(json.dumps({"spec": {"model": "unet"}, "facts": {}}))
    assert analytic_beside(tmp_path / "report.ncu-rep") is not None
    (tmp_path / "run.json").write_text(json.dumps({"spec": {"model": "vgg11"}, "facts": {}}))
    assert analytic_beside(tmp_path / "report.ncu-rep") is None
    # the one named after the export is taken whatever its model
    (tmp_path / "mine_h200.analytic.json").write_text(json.dumps(unet))
    assert analytic_beside(tmp_path / "mine_h200.ncu-raw.csv") == unet


@pytest.mark.parametrize(
    "text",
    [
        '{"layers": [], "convolutions": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"layers": [], "convolutions": [{"weight": [1e400, 3, 3, 3], "groups": 1}]}',
        '{"layers": [], "convolutions": [{"weight": [64, 3, 3, 3], "groups": Infinity}]}',
        '{"layers": [], "convolutions": [{"weight": "6433", "groups": 1}]}',
    ],
    ids=["deep", "inf-weight", "inf-groups", "string"],
)
def test_a_hostile_analytic_json_beside_a_report_is_not_read_as_shapes(
    text, tmp_path, shared_sample_cache
):
    """advise reads the analytic.json beside the report: nested 100,000 deep, infinite or
    string shapes, it is unreadable (the layout assumed and said), never a traceback."""
    import shutil

    import roofscope

    export = tmp_path / "unet_bf16_b8_h200.ncu-raw.csv.gz"
    shutil.copy(SAMPLES / export.name, export)
    (tmp_path / "unet_bf16_b8_h200.analytic.json").write_text(text)
    session = roofscope.load(export)
    try:
        [item] = [a for a in session.reports[0].advice() if a.rule == "fusion"]
    finally:
        session.close()
    assert "channels_last, assumed" in item.evidence[1]
