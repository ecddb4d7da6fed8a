"""The SimpleMLP and SimpleCNN of the A100 lab study (seed 003), on 28×28 single-channel images."""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn import functional as F


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x: Tensor) -> Tensor:
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc3(F.relu(self.fc2(x)))


class SimpleCNN(nn.Module):
    """conv 5×5 (1→1), pool, conv 5×5 (1→1), pool, 16→100→10: 28 → 24 → 12 → 8 → 4."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 1, 5)
        self.conv2 = nn.Conv2d(1, 1, 5)
        self.fc1 = nn.Linear(1 * 4 * 4, 100)
        self.fc2 = nn.Linear(100, 10)

    def forward(self, x: Tensor) -> Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))
