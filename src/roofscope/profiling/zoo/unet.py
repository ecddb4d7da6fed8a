"""The MAELSTROM temperature-downscaling U-Net (seed 000): 96×128×3 in, two 96×128×1 out.

Rebuilt from the MAELSTROM AP5 model: 3×3 "same" convolutions with batch norm and swish,
channels 56/112/224, a 448-channel bridge, 2×2 transposed convolutions with skip connections,
and 1×1 heads for temperature and elevation. Its counts match the study exactly: 3,525,650
trainable parameters and 3,360 non-trainable (the batch-norm running statistics).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def _block(inp: int, out: int) -> list[nn.Module]:
    return [nn.Conv2d(inp, out, 3, padding=1), nn.BatchNorm2d(out), nn.SiLU(inplace=True)]


class Up(nn.Module):
    def __init__(self, inp: int, out: int):
        super().__init__()
        self.up = nn.ConvTranspose2d(inp, out, 2, 2)
        self.conv = nn.Sequential(*_block(2 * out, out), *_block(out, out))

    def forward(self, x: Tensor, skip: Tensor) -> Tensor:
        return self.conv(torch.cat([self.up(x), skip], dim=1))


class DownscalingUNet(nn.Module):
    def __init__(self, start: int = 56):
        super().__init__()
        c1, c2, c3, c4 = start, 2 * start, 4 * start, 8 * start
        self.enc1 = nn.Sequential(*_block(3, c1), *_block(c1, c1))
        self.enc2 = nn.Sequential(*_block(c1, c2))
        self.enc3 = nn.Sequential(*_block(c2, c3))
        self.pool = nn.MaxPool2d(2)
        self.bridge = nn.Sequential(*_block(c3, c4))
        self.up1, self.up2, self.up3 = Up(c4, c3), Up(c3, c2), Up(c2, c1)
        self.out_temp = nn.Conv2d(c1, 1, 1)
        self.out_z = nn.Conv2d(c1, 1, 1)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        s1 = self.enc1(x)
        s2 = self.enc2(self.pool(s1))
        s3 = self.enc3(self.pool(s2))
        d = self.bridge(self.pool(s3))
        d = self.up3(self.up2(self.up1(d, s3), s2), s1)
        return self.out_temp(d), self.out_z(d)
