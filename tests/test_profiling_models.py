"""The bundled models: architectures (parameter counts), analytic FLOPs against published values,
the memory model, and one tiny real step of every model on CPU in each precision."""

from __future__ import annotations

import subprocess
import sys
from itertools import islice

import pytest

torch = pytest.importorskip("torch")

from roofscope.analysis.batch_memory import estimate_at, largest_batch  # noqa: E402
from roofscope.errors import RoofscopeError  # noqa: E402
from roofscope.profiling import analytic  # noqa: E402
from roofscope.profiling.catalog import MODELS  # noqa: E402
from roofscope.profiling.step import Phases, Stepper, set_precision  # noqa: E402
from roofscope.profiling.zoo.registry import build_model, workload  # noqa: E402

pytestmark = pytest.mark.slow  # loads real reports, drives the TUI or starts processes

# torchvision's parameter counts (its docs and model cards); the U-Net's from the MAELSTROM
# study (3,525,650 trainable); BERT-base with pooler (109,482,240) + a 2-class head (1,538).
PARAMETERS = {
    "resnet18": 11_689_512,
    "resnet50": 25_557_032,
    "mobilenet_v2": 3_504_872,
    "densenet121": 7_978_856,
    "efficientnet_b0": 5_288_548,
    "convnext_tiny": 28_589_128,
    "vit_b_16": 86_567_656,
    "vgg11": 132_863_336,
    "vgg13": 133_047_848,
    "vgg19": 143_667_240,
    "mlp": 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10,
    "cnn": 2 * (25 + 1) + 16 * 100 + 100 + 100 * 10 + 10,
    "unet": 3_525_650,
    "bert": 109_482_240 + 768 * 2 + 2,
}
# forward GMAC per 224² image as torchvision publishes them ("GFLOPS" in its tables are MACs)
GMAC = {
    "resnet18": 1.814,
    "resnet50": 4.089,
    "mobilenet_v2": 0.301,
    "vit_b_16": 17.564,
    "vgg11": 7.609,
    "vgg13": 11.308,
    "vgg19": 19.632,
}
# the same, published with two decimals only
GMAC_TWO_DECIMALS = {"densenet121": 2.83, "efficientnet_b0": 0.39, "convnext_tiny": 4.46}


def test_every_catalogued_model_is_built():
    assert set(PARAMETERS) == set(MODELS)


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_parameter_counts_match_published_architectures(name):
    with torch.device("meta"):
        model = build_model(name)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert trainable == PARAMETERS[name]


def test_unet_non_trainable_counts_match_the_study():
    """3,360 non-trainable parameters = the batch norms' running mean and variance."""
    with torch.device("meta"):
        model = build_model("unet")
    stats = sum(b.numel() for n, b in model.named_buffers() if "running_" in n)
    assert stats == 3360


@pytest.mark.parametrize("name", sorted(GMAC))
def test_forward_flops_match_published_gmac(name):
    count = analytic.count_flops(name, batch=1, backward=False)
    assert count.forward / 2e9 == pytest.approx(GMAC[name], rel=0.005)


@pytest.mark.parametrize("name", sorted(GMAC_TWO_DECIMALS))
def test_forward_flops_round_to_published_gmac(name):
    count = analytic.count_flops(name, batch=1, backward=False)
    assert round(count.forward / 2e9, 2) == GMAC_TWO_DECIMALS[name]


def test_backward_is_twice_forward_also_for_depthwise_convolutions():
    """torch's own formula ignores groups (MobileNetV2 came out 19× its forward)."""
    for name in ("mobilenet_v2", "resnet18"):
        count = analytic.count_flops(name, batch=2)
        assert 1.9 < count.backward / count.forward < 2.01, name


def test_flops_scale_with_batch_and_list_layers():
    one, four = analytic.count_flops("resnet18", 1), analytic.count_flops("resnet18", 4)
    assert four.forward == 4 * one.forward
    assert one.layers[0][1] == max(f for _, f in one.layers)
    assert sum(f for _, f in one.layers) == one.forward
    assert {"convolution", "addmm"} <= set(one.ops)


def test_bert_flops_follow_the_sequence_length():
    short = analytic.count_flops("bert", 1, seq_len=64, backward=False).forward
    long = analytic.count_flops("bert", 1, seq_len=128, backward=False).forward
    # linear layers scale with tokens, attention with tokens²: a bit over 2×
    assert 2.0 < long / short < 2.2
    # ≈ 2 × 85 M encoder weights × 128 tokens ≈ 21.8 GFLOP (+ attention)
    assert long == pytest.approx(2 * 85_054_464 * 128 + 2 * 2 * 128 * 128 * 768 * 12, rel=0.01)


def test_memory_model_is_linear_in_batch_and_counts_optimizer_state():
    sgd = analytic.memory_model("resnet18", "fp32", "sgd")
    adam = analytic.memory_model("resnet18", "fp32", "adam")
    half = analytic.memory_model("resnet18", "bf16", "sgd")
    infer = analytic.memory_model("resnet18", "fp32", mode="infer")
    weights = 4 * 11_689_512
    assert sgd["parameter_bytes"] == weights and sgd["optimizer_bytes"] == weights
    assert adam["optimizer_bytes"] == 2 * weights
    assert half["per_sample_bytes"] < sgd["per_sample_bytes"]
    assert infer["gradient_bytes"] == 0 and infer["per_sample_bytes"] < sgd["per_sample_bytes"]
    # ResNet-18 saves tens of MB of activations per 224² image for backward
    assert 20e6 < sgd["per_sample_bytes"] < 200e6
    at = [estimate_at(sgd, b) for b in (1, 2, 3)]
    assert at[2] - at[1] == pytest.approx(at[1] - at[0])
    fits = largest_batch(sgd, 80e9)
    assert estimate_at(sgd, fits) <= 0.8 * 80e9 < estimate_at(sgd, fits + 1)
    # anchored on a peak measured at batch 8 that is 100 MB above the model's estimate there
    anchored = largest_batch(sgd, 80e9, measured=(8, estimate_at(sgd, 8) + 1e8))
    assert anchored == int((0.8 * 80e9 - sgd["fixed_bytes"] - 1e8) // sgd["per_sample_bytes"])


TINY = {  # one small, fast step of every model on 2 CPU cores
    "resnet18": {"image_size": 32},
    "resnet50": {"image_size": 32},
    "mobilenet_v2": {"image_size": 32},
    "densenet121": {"image_size": 32},
    "efficientnet_b0": {"image_size": 32},
    "convnext_tiny": {"image_size": 32},
    "vit_b_16": {"image_size": 32},
    "vgg11": {"image_size": 32},
    "vgg13": {"image_size": 32},
    "vgg19": {"image_size": 32},
    "mlp": {},
    "cnn": {},
    "unet": {"image_size": 24},
    "bert": {"seq_len": 8},
}


def _step(name: str, precision: str, mode: str = "train") -> list[str]:
    set_precision(precision)
    torch.manual_seed(0)
    work = workload(name, 2, "cpu", **TINY[name])
    # the first three weights, not a copy of all of them (143 M values for VGG-19)
    before = [p.detach().clone() for p in islice(work.model.parameters(), 3)]
    stepper = Stepper(work, precision, mode, "sgd", torch.device("cpu"))
    seen: list[str] = []

    class Recording(Phases):
        def __call__(self, phase):  # type: ignore[override]
            seen.append(phase)
            return super().__call__(phase)

    stepper.step(Recording(torch.device("cpu"), announce=False))
    after = list(work.model.parameters())[:3]
    changed = any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))
    assert changed == (mode == "train"), name
    return seen


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_model_runs_a_tiny_training_step_on_cpu(name):
    assert _step(name, "fp32") == ["forward", "backward", "optimizer"]


@pytest.mark.parametrize("precision", ["tf32", "bf16", "fp16"])
def test_precisions_run(precision):
    assert _step("cnn", precision) == ["forward", "backward", "optimizer"]
    assert _step("bert", precision, "infer") == ["forward"]


def test_fp32_turns_tf32_off_and_tf32_on():
    set_precision("tf32")
    assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    set_precision("fp32")
    assert not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32


@pytest.mark.parametrize(
    ("name", "options"),
    [("vit_b_16", {"image_size": 40}), ("unet", {"image_size": 50}), ("mlp", {"image_size": 32}),
     ("resnet18", {"seq_len": 8}), ("bert", {"image_size": 64}), ("bert", {"seq_len": 600})],
)  # fmt: skip
def test_sizes_a_model_cannot_take_are_refused(name, options):
    with pytest.raises(RoofscopeError):
        build_model(name, **options)


def test_compile_happens_before_the_warm_up_and_never_in_the_profiled_steps(monkeypatch):
    """--compile: torch.compile wraps the model and its one extra step compiles it, so the
    warm-up and the profiled steps run compiled code without compiling (a Dynamo frame count,
    with aot_eager instead of Inductor's C++ build, which takes 20 s on 2 cores)."""
    from torch._dynamo.testing import CompileCounterWithBackend

    from roofscope.profiling import step

    counter = CompileCounterWithBackend("aot_eager")
    real_compile = torch.compile
    wrapped: list[object] = []

    def compile_spy(model, **kwargs):
        wrapped.append(model)
        return real_compile(model, backend=counter)

    said: list[tuple[str, int]] = []
    monkeypatch.setattr(torch, "compile", compile_spy)
    monkeypatch.setattr(step, "_say", lambda key, value: said.append((key, counter.frame_count)))
    torch._dynamo.reset()
    args = step.build_parser().parse_args(
        ["mlp", "--batch", "2", "--device", "cpu", "--warmup", "2", "--steps", "2", "--compile"]
    )
    try:
        assert step.run(args) == 0
    finally:
        torch._dynamo.reset()
    assert len(wrapped) == 1 and isinstance(wrapped[0], torch.nn.Module)
    keys = [k for k, _ in said]
    assert keys == ["compile_s", "step_time_s", "step", "phase", "phase", "phase", "step",
                    "phase", "phase", "phase", "done"]  # fmt: skip
    compiled = said[0][1]
    assert compiled >= 1 and all(n == compiled for _, n in said)


def test_channels_last_step_trains_the_model_in_nhwc(monkeypatch):
    """--channels-last: the real step puts the conv weights and the images in channels_last
    before its warm-up, and they are still NHWC after the optimizer's steps."""
    from roofscope.profiling import step

    built = []
    real_workload = step.workload

    def keep(*args, **kwargs):
        built.append(real_workload(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(step, "workload", keep)
    monkeypatch.setattr(step, "_say", lambda key, value: None)
    args = step.build_parser().parse_args(
        [
            "unet",
            "--batch",
            "1",
            "--image-size",
            "24",
            "--device",
            "cpu",
            "--warmup",
            "1",
            "--channels-last",
        ]
    )
    assert step.run(args) == 0
    [work] = built
    convs = [m.weight for m in work.model.modules() if isinstance(m, torch.nn.Conv2d)]
    assert convs and all(w.is_contiguous(memory_format=torch.channels_last) for w in convs)
    assert not all(w.is_contiguous() for w in convs)  # really NHWC, not both by accident
    assert work.inputs.is_contiguous(memory_format=torch.channels_last)
    args = step.build_parser().parse_args(
        ["unet", "--batch", "1", "--image-size", "24", "--device", "cpu", "--warmup", "1"]
    )
    built.clear()
    assert step.run(args) == 0
    assert all(m.weight.is_contiguous() for m in built[0].model.modules()
               if isinstance(m, torch.nn.Conv2d))  # fmt: skip


@pytest.mark.parametrize("name", ["bert", "mlp"])
def test_channels_last_is_refused_for_models_without_convolutions(name, capsys):
    from roofscope.profiling import step

    assert step.main([name, "--device", "cpu", "--channels-last"]) == 2
    err = capsys.readouterr().err
    assert f"--channels-last does not apply to {name}" in err and len(err.splitlines()) == 1


def test_step_program_prints_phase_markers_and_writes_the_analytic_model(tmp_path):
    out = tmp_path / "analytic.json"
    proc = subprocess.run(
        [sys.executable, "-m", "roofscope.profiling.step", "mlp", "--batch", "4", "--device",
         "cpu", "--warmup", "1", "--analytic-out", str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("==ROOFSCOPE== phase")]
    assert [ln.split()[-1] for ln in lines] == ["forward", "backward", "optimizer"]
    import json

    facts = json.loads(out.read_text())
    assert facts["flops"]["forward"] == 2 * 4 * (784 * 256 + 256 * 128 + 128 * 10)
    assert facts["memory"]["parameters"] == PARAMETERS["mlp"]
