"""VGG11/13/19 (configurations A, B, E; no batch norm), as in the VGG study and torchvision."""

from __future__ import annotations

from torch import Tensor, nn

CONFIGS: dict[str, list[int | str]] = {
    "vgg11": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg13": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "vgg19": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M",
              512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}  # fmt: skip


class VGG(nn.Module):
    def __init__(self, config: list[int | str], classes: int = 1000):
        super().__init__()
        layers: list[nn.Module] = []
        inp = 3
        for item in config:
            if item == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(inp, int(item), 3, padding=1), nn.ReLU(inplace=True)]
                inp = int(item)
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(7)
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(inplace=True), nn.Dropout(),
            nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(),
            nn.Linear(4096, classes),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.pool(self.features(x)).flatten(1))


def vgg(name: str) -> VGG:
    return VGG(CONFIGS[name])
