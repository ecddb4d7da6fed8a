"""Build a bundled model with random weights and a batch of random data for one step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from roofscope.profiling.catalog import check_size, model_info
from roofscope.profiling.zoo import (
    bert,
    convnext,
    densenet,
    efficientnet,
    lab,
    mobilenet,
    resnet,
    unet,
    vgg,
    vit,
)


@dataclass
class Workload:
    """A model with what one training step needs: inputs, targets and the loss."""

    name: str
    model: nn.Module
    inputs: Tensor
    targets: Tensor | tuple[Tensor, ...]
    loss: Callable[[object, object], Tensor]


def _classes(out: Tensor, target: Tensor) -> Tensor:
    return F.cross_entropy(out, target)


def _two_fields(out: tuple[Tensor, Tensor], target: tuple[Tensor, Tensor]) -> Tensor:
    return F.mse_loss(out[0], target[0]) + F.mse_loss(out[1], target[1])


_BUILDERS: dict[str, Callable[[int | None], nn.Module]] = {
    "resnet18": lambda size: resnet.resnet18(),
    "resnet50": lambda size: resnet.resnet50(),
    "mobilenet_v2": lambda size: mobilenet.MobileNetV2(),
    "densenet121": lambda size: densenet.DenseNet121(),
    "efficientnet_b0": lambda size: efficientnet.EfficientNetB0(),
    "convnext_tiny": lambda size: convnext.ConvNeXtTiny(),
    "vit_b_16": lambda size: vit.vit_b_16(size or 224),
    "vgg11": lambda size: vgg.vgg("vgg11"),
    "vgg13": lambda size: vgg.vgg("vgg13"),
    "vgg19": lambda size: vgg.vgg("vgg19"),
    "mlp": lambda size: lab.SimpleMLP(),
    "cnn": lambda size: lab.SimpleCNN(),
    "unet": lambda size: unet.DownscalingUNet(),
    "bert": lambda size: bert.BertEncoder(),
}


def build_model(name: str, image_size: int | None = None, seq_len: int | None = None) -> nn.Module:
    """The module alone (on the current default device, e.g. ``meta`` for counting)."""
    check_size(name, image_size, seq_len)
    return _BUILDERS[name](image_size)


def random_batch(
    name: str,
    batch: int,
    device: torch.device | str,
    image_size: int | None = None,
    seq_len: int | None = None,
) -> tuple[Tensor, Tensor | tuple[Tensor, ...]]:
    """Random inputs and targets of the right shapes (nothing is downloaded)."""
    info = model_info(name)
    shape = info.sample_shape(image_size, seq_len)
    if info.input_kind == "tokens":
        inputs = torch.randint(0, bert.VOCAB, (batch, *shape), device=device)
        return inputs, torch.randint(0, 2, (batch,), device=device)
    inputs = torch.randn(batch, *shape, device=device)
    if name == "unet":
        field = (batch, 1, *shape[1:])
        return inputs, (torch.randn(field, device=device), torch.randn(field, device=device))
    classes = 10 if name in ("mlp", "cnn") else 1000
    return inputs, torch.randint(0, classes, (batch,), device=device)


def workload(
    name: str,
    batch: int,
    device: torch.device | str = "cpu",
    image_size: int | None = None,
    seq_len: int | None = None,
) -> Workload:
    model = build_model(name, image_size, seq_len).to(device)
    inputs, targets = random_batch(name, batch, device, image_size, seq_len)
    loss = _two_fields if name == "unet" else _classes
    return Workload(name, model, inputs, targets, loss)  # type: ignore[arg-type]
