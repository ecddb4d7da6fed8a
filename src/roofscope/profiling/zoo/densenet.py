"""DenseNet-121 as torchvision builds it (growth 32, blocks 6-12-24-16, bottleneck 4×, the
transitions halve the channels): many small BN-ReLU-convolution layers over concatenations."""

from __future__ import annotations

import torch
from torch import Tensor, nn

GROWTH, BLOCKS, STEM, BOTTLENECK = 32, (6, 12, 24, 16), 64, 4


def _bn_relu_conv(inp: int, out: int, kernel: int) -> list[nn.Module]:
    return [nn.BatchNorm2d(inp), nn.ReLU(inplace=True),
            nn.Conv2d(inp, out, kernel, 1, kernel // 2, bias=False)]  # fmt: skip


class DenseLayer(nn.Module):
    def __init__(self, inp: int):
        super().__init__()
        width = BOTTLENECK * GROWTH
        self.layer = nn.Sequential(*_bn_relu_conv(inp, width, 1), *_bn_relu_conv(width, GROWTH, 3))

    def forward(self, features: list[Tensor]) -> Tensor:
        return self.layer(torch.cat(features, 1))


class DenseBlock(nn.Module):
    def __init__(self, layers: int, inp: int):
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(inp + i * GROWTH) for i in range(layers))

    def forward(self, x: Tensor) -> Tensor:
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)


class DenseNet121(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        layers: list[nn.Module] = [
            nn.Conv2d(3, STEM, 7, 2, 3, bias=False), nn.BatchNorm2d(STEM), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        ]  # fmt: skip
        channels = STEM
        for i, n in enumerate(BLOCKS):
            layers.append(DenseBlock(n, channels))
            channels += n * GROWTH
            if i < len(BLOCKS) - 1:  # a transition: BN-ReLU-1×1 convolution to half, 2×2 pool
                layers += [*_bn_relu_conv(channels, channels // 2, 1), nn.AvgPool2d(2, 2)]
                channels //= 2
        layers += [nn.BatchNorm2d(channels), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x: Tensor) -> Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(x.flatten(1))
