"""One profiled step of a bundled model: ``python -m roofscope.profiling.step MODEL …``.

This is the program ncu launches. Warm-up steps run first (cuDNN picks its algorithms,
memory is allocated), then ``cudaProfilerStart``, the measured step(s) with NVTX ranges and
phase markers around forward, backward and optimizer, and ``cudaProfilerStop``. With
``--count-kernels`` it runs the same region under torch.profiler instead and prints how many
kernels it launches, which gives the runner its ETA. With ``--compile`` the model runs through
``torch.compile`` (Inductor), compiled by one extra step before the warm-up ones, so neither
the count nor the profiled region sees compilation (run it with
``TORCHINDUCTOR_COMPILE_THREADS=1`` under ncu; ``command.step_env`` sets it). With
``--channels-last`` the model's weights and its input images are in ``torch.channels_last``
(NHWC) memory format before anything runs, so cuDNN's convolutions need no layout transforms.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from roofscope.atomic import write_json
from roofscope.errors import RoofscopeError
from roofscope.profiling import markers
from roofscope.profiling.catalog import MODELS, check_channels_last
from roofscope.profiling.command import MODES, PRECISIONS
from roofscope.profiling.zoo.registry import Workload, workload
from roofscope.regex import search


def _say(key: str, value: object) -> None:
    print(markers.line(key, value), flush=True)


def set_precision(precision: str) -> None:
    """fp32 means fp32: TF32 off for cuBLAS and cuDNN (PyTorch leaves cuDNN's on by default)."""
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def _autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    if precision in ("bf16", "fp16"):
        dtype = torch.bfloat16 if precision == "bf16" else torch.float16
        return torch.autocast(device.type, dtype=dtype)
    return contextlib.nullcontext()


class Phases:
    """NVTX ranges (for nsys and ``ncu --nvtx``) plus a marker line per phase."""

    def __init__(self, device: torch.device, announce: bool):
        self.nvtx = device.type == "cuda"
        self.announce = announce

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        if self.announce:
            _say("phase", name)
        if self.nvtx:
            torch.cuda.nvtx.range_push(name)
        try:
            yield
        finally:
            if self.nvtx:
                torch.cuda.nvtx.range_pop()


def layer_ranges(model: torch.nn.Module) -> list[torch.utils.hooks.RemovableHandle]:
    """An NVTX range per call of each leaf module with parameters, named by its path
    (``layer1.0.conv1``, the names ``analytic.json`` gives its layers), so ``ncu --nvtx`` tells
    which layer launched each forward kernel: the measured FLOPs of a layer beside its analytic
    count (the ``model_flops`` advice)."""
    handles = []
    for path, module in model.named_modules():
        if not path or any(True for _ in module.children()):
            continue
        if not any(True for _ in module.parameters(recurse=False)):
            continue
        handles.append(module.register_forward_pre_hook(_push(path)))
        handles.append(module.register_forward_hook(_pop))
    return handles


def _push(path: str):
    def hook(_module, _inputs):
        torch.cuda.nvtx.range_push(path)

    return hook


def _pop(_module, _inputs, _output):
    torch.cuda.nvtx.range_pop()


class Stepper:
    def __init__(
        self,
        work: Workload,
        precision: str,
        mode: str,
        optimizer: str,
        device,
        compile: bool = False,
    ):
        self.work, self.precision, self.mode, self.device = work, precision, mode, device
        # the compiled module shares the model's parameters: the optimizer steps the same ones
        self.forward = torch.compile(work.model) if compile else work.model
        params = work.model.parameters()
        self.optimizer = (
            torch.optim.Adam(params, lr=1e-4)
            if optimizer == "adam"
            else torch.optim.SGD(params, lr=1e-3, momentum=0.9)
        )
        self.scaler = torch.amp.GradScaler(device.type, enabled=precision == "fp16")
        work.model.train(mode == "train")

    def step(self, phase: Phases) -> None:
        w = self.work
        if self.mode == "infer":
            with torch.inference_mode(), phase("forward"), _autocast(self.precision, self.device):
                self.forward(w.inputs)
            return
        with phase("forward"), _autocast(self.precision, self.device):
            loss = w.loss(self.forward(w.inputs), w.targets)
        with phase("backward"):
            self.scaler.scale(loss).backward()
        with phase("optimizer"):
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _count_kernels(stepper: Stepper, steps: int, device: torch.device, regex: str | None) -> int:
    """Kernels the profiled region launches (memcpy/memset are not profiled by ncu)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            stepper.step(Phases(device, announce=False))
        _sync(device)
    names = [
        e.name
        for e in prof.events()
        if str(e.device_type).endswith("CUDA") and not e.name.startswith(("Memcpy", "Memset"))
    ]
    return sum(search(regex, names, ignore_case=False)) if regex else len(names)


def to_channels_last(work: Workload) -> None:
    """The model's 4-D weights and the input images in NHWC memory format (the targets and
    1-D parameters are left as they are); ``check_channels_last`` refused models without
    convolutions before this runs."""
    work.model.to(memory_format=torch.channels_last)
    if work.inputs.dim() == 4:
        work.inputs = work.inputs.contiguous(memory_format=torch.channels_last)


def run(args: argparse.Namespace) -> int:
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    set_precision(args.precision)
    torch.manual_seed(0)
    work = workload(args.model, args.batch, device, args.image_size, args.seq_len)
    if args.channels_last:
        to_channels_last(work)
    stepper = Stepper(work, args.precision, args.mode, args.optimizer, device, args.compile)
    quiet = Phases(device, announce=False)
    timings = []
    if args.compile:  # one more unprofiled step: the first call compiles
        start = time.perf_counter()
        stepper.step(quiet)
        _sync(device)
        _say("compile_s", f"{time.perf_counter() - start:.3g}")
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    for _ in range(args.warmup):
        _sync(device)
        start = time.perf_counter()
        stepper.step(quiet)
        _sync(device)
        timings.append(time.perf_counter() - start)
    if timings:
        _say("step_time_s", f"{min(timings):.6g}")
    if device.type == "cuda":
        _say("peak_memory_bytes", torch.cuda.max_memory_allocated(device))
        _say("device_memory_bytes", torch.cuda.get_device_properties(device).total_memory)
        _say("device", json.dumps(torch.cuda.get_device_name(device)))
    if args.count_kernels:
        _say("kernels", _count_kernels(stepper, args.steps, device, args.kernel_regex))
        return 0
    _sync(device)
    # per-layer ranges in the profiled steps only; Dynamo would trace the hooks of a compiled model
    layers = layer_ranges(work.model) if device.type == "cuda" and not args.compile else []
    if device.type == "cuda":
        torch.cuda.profiler.start()
    for i in range(args.steps):
        _say("step", i)
        stepper.step(Phases(device, announce=True))
    _sync(device)
    if device.type == "cuda":
        torch.cuda.profiler.stop()
    for handle in layers:
        handle.remove()
    _say("done", args.model)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m roofscope.profiling.step")
    p.add_argument("model", choices=list(MODELS))
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--mode", choices=MODES, default="train")
    p.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    p.add_argument("--image-size", type=int, default=None)
    p.add_argument("--seq-len", type=int, default=None)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--steps", type=int, default=1)
    p.add_argument(
        "--compile", action="store_true", help="torch.compile the model, before the warm-up"
    )
    p.add_argument(
        "--channels-last",
        action="store_true",
        help="model and input images in torch.channels_last memory format",
    )
    p.add_argument("--device", default=None, help="cuda (default when present) or cpu")
    p.add_argument("--count-kernels", action="store_true")
    p.add_argument("--kernel-regex", default=None, help="with --count-kernels: count only these")
    p.add_argument("--analytic-out", type=Path, default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.batch = args.batch or MODELS[args.model].default_batch
    try:
        if args.channels_last:
            check_channels_last(args.model)
        if args.analytic_out:
            from roofscope.profiling.analytic import analytic

            facts = analytic(
                args.model,
                args.batch,
                args.precision,
                args.mode,
                args.optimizer,
                args.image_size,
                args.seq_len,
            )
            write_json(args.analytic_out, facts)
        return run(args)
    except RoofscopeError as err:
        print(err.one_line(), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
