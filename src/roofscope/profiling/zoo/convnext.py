"""ConvNeXt-Tiny as torchvision builds it: 4×4 patchify stem, blocks of depthwise 7×7
convolution, LayerNorm over channels (in a channels-last view), an MLP of 4× width with GELU and
a learned layer scale; stochastic depth is left out (no parameters)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

DEPTHS, DIMS = (3, 3, 9, 3), (96, 192, 384, 768)
EPS = 1e-6


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor (torchvision's: permute, norm, permute)."""

    def forward(self, x: Tensor) -> Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=EPS)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.layer_scale = nn.Parameter(torch.full((dim, 1, 1), 1e-6))

    def forward(self, x: Tensor) -> Tensor:
        y = self.mlp(self.norm(self.dwconv(x).permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
        return x + self.layer_scale * y


class ConvNeXtTiny(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(3, DIMS[0], 4, 4), LayerNorm2d(DIMS[0], eps=EPS)]
        for i, (depth, dim) in enumerate(zip(DEPTHS, DIMS, strict=True)):
            if i:  # downsampling between stages
                layers += [LayerNorm2d(DIMS[i - 1], eps=EPS), nn.Conv2d(DIMS[i - 1], dim, 2, 2)]
            layers += [CNBlock(dim) for _ in range(depth)]
        self.features = nn.Sequential(*layers)
        self.norm = LayerNorm2d(DIMS[-1], eps=EPS)
        self.classifier = nn.Linear(DIMS[-1], classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.norm(nn.functional.adaptive_avg_pool2d(self.features(x), 1))
        return self.classifier(x.flatten(1))
