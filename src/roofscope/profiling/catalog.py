"""The bundled models as data: what ``profile --list`` and the Runs pane show, without torch.

Each entry names the source study it comes from (``shared/seeds``), the shape of one sample and
how its size can be changed; ``zoo.registry`` builds the torch module behind a name.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofscope.errors import RoofscopeError

MAX_POSITIONS = 512  # BERT's learned positions


@dataclass(frozen=True)
class ModelInfo:
    name: str
    title: str
    study: str
    input_kind: str  # "image" (C, H, W) or "tokens" (sequence length)
    channels: int = 3
    height: int = 224
    width: int = 224
    seq_len: int = 128
    default_batch: int = 32
    note: str = ""
    convs: bool = True  # has convolutions, so --channels-last changes its kernels

    def sample_shape(self, image_size: int | None = None, seq_len: int | None = None) -> tuple:
        """One sample's input shape with the user's size applied (images stay square-scaled)."""
        if self.input_kind == "tokens":
            return (seq_len or self.seq_len,)
        if image_size:
            scale = image_size / self.height
            return (self.channels, image_size, round(self.width * scale))
        return (self.channels, self.height, self.width)

    def input_text(self, image_size: int | None = None, seq_len: int | None = None) -> str:
        shape = self.sample_shape(image_size, seq_len)
        if self.input_kind == "tokens":
            return f"{shape[0]} tokens"
        return "×".join(str(d) for d in shape)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "input": self.input_text(),
            "default_batch": self.default_batch,
            "study": self.study,
            "note": self.note,
        }


_IMAGENET = "ImageNet-sized images, 1000 classes"
MODELS: dict[str, ModelInfo] = {
    m.name: m
    for m in (
        ModelInfo("resnet50", "ResNet-50", "T4/L4/V100 study; NERSC",
                  "image", note=_IMAGENET),
        ModelInfo("resnet18", "ResNet-18", "A100 lab", "image", note=_IMAGENET),
        ModelInfo("mobilenet_v2", "MobileNetV2", "T4/L4/V100 study",
                  "image", note=_IMAGENET),
        ModelInfo("densenet121", "DenseNet-121", "torchvision", "image", note=_IMAGENET),
        ModelInfo("efficientnet_b0", "EfficientNet-B0", "torchvision", "image",
                  note=_IMAGENET),
        ModelInfo("convnext_tiny", "ConvNeXt-Tiny", "torchvision", "image", note=_IMAGENET),
        ModelInfo("vit_b_16", "ViT-B/16", "T4/L4/V100 study", "image",
                  note=_IMAGENET + "; size must be a multiple of 16"),
        ModelInfo("vgg11", "VGG11", "VGG study", "image", note=_IMAGENET),
        ModelInfo("vgg13", "VGG13", "VGG study", "image", note=_IMAGENET),
        ModelInfo("vgg19", "VGG19", "VGG study", "image", note=_IMAGENET),
        ModelInfo("mlp", "SimpleMLP 784-256-128-10", "A100 lab", "image", channels=1,
                  height=28, width=28, default_batch=128, note="MNIST-sized, 10 classes",
                  convs=False),
        ModelInfo("cnn", "SimpleCNN (two 5×5 convs)", "A100 lab", "image", channels=1,
                  height=28, width=28, default_batch=128, note="MNIST-sized, 10 classes"),
        ModelInfo("unet", "Downscaling U-Net (MAELSTROM)", "U-Net study",
                  "image", height=96, width=128, note="two 96×128×1 outputs, MSE loss"),
        ModelInfo("bert", "BERT-base encoder", "A100 lab", "tokens", default_batch=8,
                  note="12×768, 2-class head; --seq-len sets the sequence length", convs=False),
    )
}  # fmt: skip


def model_info(name: str) -> ModelInfo:
    try:
        return MODELS[name]
    except KeyError:
        raise RoofscopeError(
            f"unknown model {name!r}",
            hint=f"choose one of {', '.join(MODELS)} (roofscope profile --list)",
        ) from None


def check_channels_last(name: str) -> None:
    """``--channels-last`` changes only convolutions' layout: refused for a model without any."""
    if not model_info(name).convs:
        with_convs = ", ".join(m.name for m in MODELS.values() if m.convs)
        raise RoofscopeError(
            f"--channels-last does not apply to {name}: it has no convolutions",
            hint=f"leave it out; models with convolutions: {with_convs}",
        )


def check_size(name: str, image_size: int | None, seq_len: int | None) -> None:
    """Refused before anything runs (the step would fail inside ncu otherwise)."""
    info = model_info(name)
    if image_size is not None and info.input_kind != "image":
        raise RoofscopeError(f"{name} takes tokens, not images", hint="use --seq-len")
    if seq_len is not None and not (info.input_kind == "tokens" and 1 <= seq_len <= MAX_POSITIONS):
        raise RoofscopeError(
            f"--seq-len {seq_len} does not fit {name}",
            hint=f"only bert takes a sequence length, 1 to {MAX_POSITIONS}",
        )
    if image_size is None:
        return
    minimum = {"mlp": 28, "cnn": 28, "unet": 24, "vit_b_16": 16}.get(name, 32)
    if name in ("mlp", "cnn") and image_size != 28:
        raise RoofscopeError(f"{name} takes 28×28 images only", hint="leave out --image-size")
    if image_size < minimum or (name in ("vit_b_16",) and image_size % 16):
        raise RoofscopeError(
            f"--image-size {image_size} does not fit {name}",
            hint=f"use at least {minimum}" + (", a multiple of 16" if name == "vit_b_16" else ""),
        )
    if name == "unet" and image_size % 24:
        raise RoofscopeError(
            "--image-size for unet must be a multiple of 24",
            hint="it sets the height; the width stays 4/3 of it and both pool three times",
        )
