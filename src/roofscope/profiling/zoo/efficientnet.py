"""EfficientNet-B0 as torchvision builds it: MBConv blocks (1×1 expansion, depthwise k×k,
squeeze-and-excitation, 1×1 projection), SiLU, batch norm; stochastic depth is left out (no
parameters, and a profiled step should not drop blocks at random)."""

from __future__ import annotations

from torch import Tensor, nn

# expansion, kernel, first stride, input channels, output channels, repeats
_STAGES = ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
           (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1))  # fmt: skip


def _conv_bn(inp: int, out: int, kernel: int, stride: int = 1, groups: int = 1,
             act: bool = True) -> list[nn.Module]:  # fmt: skip
    layers = [nn.Conv2d(inp, out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(out)]  # fmt: skip
    return [*layers, nn.SiLU(inplace=True)] if act else layers


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x: Tensor) -> Tensor:
        scale = nn.functional.adaptive_avg_pool2d(x, 1)
        scale = self.fc2(nn.functional.silu(self.fc1(scale)))
        return x * scale.sigmoid()


class MBConv(nn.Module):
    def __init__(self, expand: int, kernel: int, stride: int, inp: int, out: int):
        super().__init__()
        hidden = inp * expand
        layers = _conv_bn(inp, hidden, 1) if expand != 1 else []
        layers += [
            *_conv_bn(hidden, hidden, kernel, stride, groups=hidden),
            SqueezeExcitation(hidden, max(1, inp // 4)),
            *_conv_bn(hidden, out, 1, act=False),
        ]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and inp == out

    def forward(self, x: Tensor) -> Tensor:
        return x + self.block(x) if self.residual else self.block(x)


class EfficientNetB0(nn.Module):
    def __init__(self, classes: int = 1000):
        super().__init__()
        layers: list[nn.Module] = [*_conv_bn(3, 32, 3, 2)]
        for expand, kernel, stride, inp, out, repeats in _STAGES:
            for i in range(repeats):
                layers.append(MBConv(expand, kernel, stride if i == 0 else 1,
                                     inp if i == 0 else out, out))  # fmt: skip
        layers += _conv_bn(320, 1280, 1)
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

    def forward(self, x: Tensor) -> Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(x.flatten(1))
