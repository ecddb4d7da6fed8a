"""Pen-and-paper numbers of a bundled model: FLOPs per layer and a memory estimate by batch.

FLOPs come from torch's ``FlopCounterMode`` run on the ``meta`` device (shapes only: no memory,
no GPU, about a second), so they count matrix multiplies, convolutions and attention at 2 FLOPs
per multiply-add — the work the studies compared with ncu's measured FLOPs. Element-wise work
(activations, norms, the optimizer) is not counted, so measured ÷ analytic is usually a bit above 1.
torch's backward formula for grouped convolutions ignores the groups (MobileNetV2's depthwise
layers came out 19× too high); ``_conv_backward`` replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, conv_flop_count

from roofscope.analysis.batch_memory import estimate_at  # re-exported
from roofscope.profiling.catalog import model_info
from roofscope.profiling.zoo.registry import build_model, workload

_ATEN = torch.ops.aten
# bytes of optimizer state per parameter byte
OPTIMIZER_STATE = {"sgd": 1.0, "adam": 2.0}
_SIXTEEN_BIT = {"bf16", "fp16"}


def _conv_backward(
    grad_out_shape: list[int],
    x_shape: list[int],
    w_shape: list[int],
    _bias: Any,
    _stride: Any,
    _padding: Any,
    _dilation: Any,
    transposed: bool,
    _output_padding: Any,
    _groups: int,
    output_mask: list[bool],
    out_shape: Any,
    **kwargs: Any,
) -> int:
    """Each requested gradient (input, weight) costs the forward convolution's multiply-adds;
    ``w_shape`` already holds in-channels ÷ groups, so grouped convolutions come out right."""
    forward = conv_flop_count(x_shape, w_shape, grad_out_shape, transposed=transposed)
    return forward * (int(bool(output_mask[0])) + int(bool(output_mask[1])))


@dataclass
class FlopCount:
    forward: int
    backward: int
    layers: list[tuple[str, int]] = field(default_factory=list)  # (module path, forward FLOPs)
    ops: dict[str, int] = field(default_factory=dict)  # aten op -> forward FLOPs

    @property
    def train_step(self) -> int:
        return self.forward + self.backward


def _leaf_layers(counts: dict[str, dict[Any, int]]) -> list[tuple[str, int]]:
    """Module paths that do work themselves (no child module with a count), by FLOPs."""
    names = [n for n in counts if n != "Global" and sum(counts[n].values())]
    leaves = [n for n in names if not any(o.startswith(n + ".") for o in names)]
    rows = [(n.split(".", 1)[-1] if "." in n else n, sum(counts[n].values())) for n in leaves]
    return sorted(rows, key=lambda r: -r[1])


def count_flops(
    name: str,
    batch: int = 1,
    image_size: int | None = None,
    seq_len: int | None = None,
    backward: bool = True,
) -> FlopCount:
    """Forward (and backward) FLOPs of one step at ``batch``; shapes only, on ``meta``."""
    with torch.device("meta"):
        work = workload(name, batch, "meta", image_size, seq_len)
    mapping = {_ATEN.convolution_backward: _conv_backward}
    with FlopCounterMode(display=False, custom_mapping=mapping) as fwd:
        loss = work.loss(work.model(work.inputs), work.targets)
    counts = fwd.get_flop_counts()
    ops: dict[str, int] = {}
    for op, n in counts.get("Global", {}).items():
        parts = str(op).split(".")  # aten.convolution(.default)
        key = parts[1] if len(parts) > 1 else parts[0]
        ops[key] = ops.get(key, 0) + n
    back = 0
    if backward:
        with FlopCounterMode(display=False, custom_mapping=mapping) as bwd:
            loss.backward()
        back = bwd.get_total_flops()
    return FlopCount(fwd.get_total_flops(), back, _leaf_layers(counts), ops)


@dataclass
class MemoryEstimate:
    """Bytes a training (or inference) step needs on the GPU, by part, at one batch size."""

    batch: int
    parameters: int
    gradients: int
    optimizer: int
    activations: int
    inputs: int

    @property
    def total(self) -> int:
        return self.parameters + self.gradients + self.optimizer + self.activations + self.inputs


def _saved_bytes(name: str, batch: int, image_size: int | None, seq_len: int | None) -> tuple:
    """(bytes autograd saves for backward, input bytes, parameter count) on ``meta``."""
    with torch.device("meta"):
        work = workload(name, batch, "meta", image_size, seq_len)
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        seen[storage._cdata] = max(seen.get(storage._cdata, 0), storage.nbytes())
        return t

    params = {p.untyped_storage()._cdata for p in work.model.parameters()}
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        work.loss(work.model(work.inputs), work.targets)
    saved = sum(n for k, n in seen.items() if k not in params)
    count = sum(p.numel() for p in work.model.parameters())
    return saved, work.inputs.untyped_storage().nbytes(), count


def memory_model(
    name: str,
    precision: str = "fp32",
    optimizer: str = "sgd",
    mode: str = "train",
    image_size: int | None = None,
    seq_len: int | None = None,
) -> dict[str, float]:
    """Linear model ``bytes(batch) = fixed + per_sample × batch`` from two shape-only passes.

    Parameters stay fp32 (autocast keeps fp32 master weights); activations are what autograd
    saves for backward, halved under 16-bit autocast (an approximation: norms and softmax keep
    fp32). Inference keeps no activations for backward; its estimate is parameters + inputs.
    """
    s1, in1, params = _saved_bytes(name, 1, image_size, seq_len)
    s2, in2, _ = _saved_bytes(name, 2, image_size, seq_len)
    scale = 0.5 if precision in _SIXTEEN_BIT else 1.0
    train = mode == "train"
    per_sample = ((s2 - s1) * scale if train else 0.0) + (in2 - in1)
    fixed_act = max(0.0, (s1 - (s2 - s1)) * scale) if train else 0.0
    weights = 4.0 * params
    fixed = (
        weights
        + (weights + weights * OPTIMIZER_STATE.get(optimizer, 1.0) if train else 0.0)
        + fixed_act
    )
    return {
        "parameters": params,
        "parameter_bytes": weights,
        "gradient_bytes": weights if train else 0.0,
        "optimizer_bytes": weights * OPTIMIZER_STATE.get(optimizer, 1.0) if train else 0.0,
        "fixed_bytes": fixed,
        "per_sample_bytes": per_sample,
    }


def convolutions(
    name: str, image_size: int | None = None, seq_len: int | None = None
) -> list[dict[str, Any]]:
    """Each convolution module's weight shape (out, in per group, kernel…), groups and whether
    it is transposed, in module order: Inductor's channels_last choice is made on them
    (advice/compiled.py ``inductor_keeps_nchw``), and an ncu report does not hold them."""
    with torch.device("meta"):
        model = build_model(name, image_size, seq_len)
    return [
        {
            "layer": path,
            "weight": list(module.weight.shape),
            "groups": int(module.groups),
            "transposed": bool(module.transposed),
        }
        for path, module in model.named_modules()
        if isinstance(module, torch.nn.modules.conv._ConvNd)
    ]


class _CountOps(TorchDispatchMode):
    """Counts the ATen operations a forward pass dispatches."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.count += 1
        return func(*args, **(kwargs or {}))


def forward_ops(name: str, image_size: int | None = None, seq_len: int | None = None) -> int:
    """The ATen operations of one sample's forward pass, on ``meta``: about the nodes of the
    forward graph Inductor lowers, whose count against the convolutions' decides whether it
    tries channels_last at all (advice/compiled.py)."""
    with torch.device("meta"):
        work = workload(name, 1, "meta", image_size, seq_len)
    counter = _CountOps()
    with counter:
        work.model(work.inputs)
    return counter.count


def analytic(
    name: str,
    batch: int,
    precision: str = "fp32",
    mode: str = "train",
    optimizer: str = "sgd",
    image_size: int | None = None,
    seq_len: int | None = None,
    top_layers: int = 25,
) -> dict[str, Any]:
    """Everything the Runs pane and ``profile --estimate`` show beside the measured numbers."""
    info = model_info(name)
    train = mode == "train"
    # every bundled model's work is per sample (no batch-wide op), so one sample is counted
    per = count_flops(name, 1, image_size, seq_len, backward=train)
    mem = memory_model(name, precision, optimizer, mode, image_size, seq_len)
    return {
        "model": name,
        "title": info.title,
        "input": info.input_text(image_size, seq_len),
        "batch": batch,
        "mode": mode,
        "precision": precision,
        "optimizer": optimizer if train else None,
        "flops": {
            "forward": per.forward * batch,
            "backward": per.backward * batch,
            "step": per.train_step * batch,
            "forward_per_sample": per.forward,
            "gmac_per_sample": per.forward / 2e9,
            "by_op": {op: n * batch for op, n in per.ops.items()},
            "convention": "FlopCounterMode: 2 FLOPs per multiply-add of matmul, convolution "
            "and attention; element-wise work not counted",
        },
        "layers": [{"layer": n, "forward_flops": f * batch} for n, f in per.layers[:top_layers]],
        "convolutions": convolutions(name, image_size, seq_len),
        "forward_ops": forward_ops(name, image_size, seq_len),
        "memory": {**mem, "estimate_bytes": estimate_at(mem, batch)},
    }
