"""The seed CIFAR-10 conv net: two conv layers, then three linear layers of widths l1 and l2."""

from __future__ import annotations

import torch
from torch import nn


class SeedNet(nn.Module):
    """LeNet-style net from the Ray Tune tutorial; ``l1``/``l2`` are the hidden widths being tuned."""

    def __init__(self, l1: int = 120, l2: int = 84, num_classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, int(l1))
        self.fc2 = nn.Linear(int(l1), int(l2))
        self.fc3 = nn.Linear(int(l2), num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.conv1(x)))
        x = self.pool(torch.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def build_model(config: dict) -> nn.Module:
    """The model a trial trains, from the tuned widths (defaults match the tutorial's fixed net)."""
    return SeedNet(l1=config.get("l1", 120), l2=config.get("l2", 84))
