"""The seed tutorial's data path, kept as a yardstick: per-image PIL transforms inside a DataLoader.

The benchmark times it against the in-memory path of ``trainables.loop``, and a test checks that both
reach the same accuracy. It is not used by sweeps.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset
from torchvision import transforms
from torchvision.datasets import CIFAR10

from trainables.data import CifarArrays, train_val_indices
from trainables.models import build_model

TUTORIAL_TRANSFORM = transforms.Compose(
    [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
)


class FolderCIFAR10(CIFAR10):
    """torchvision's CIFAR10 reading the python batches in a folder, without the official checksums.

    Files the project writes (synthetic sets in CIFAR-10's format) carry no official md5; everything else,
    the unpickling and the per-image PIL transform, is torchvision's own code.
    """

    def _check_integrity(self) -> bool:
        folder = Path(self.root) / self.base_folder
        return all((folder / name).is_file() for name, _ in self.train_list + self.test_list)

    def _load_meta(self) -> None:
        self.classes = [str(i) for i in range(10)]
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}


class ArrayImages(Dataset):
    """In-memory uint8 arrays served one PIL image at a time, exactly as torchvision's CIFAR10 serves them."""

    def __init__(self, images: np.ndarray, labels: np.ndarray) -> None:
        self.images = np.ascontiguousarray(images.transpose(0, 2, 3, 1))  # HWC, as CIFAR10.data
        self.labels = labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        from PIL import Image

        return TUTORIAL_TRANSFORM(Image.fromarray(self.images[i])), int(self.labels[i])


def tutorial_loaders(
    train_set: Dataset, seed: int, batch_size: int, num_workers: int
) -> tuple[DataLoader, DataLoader]:
    """The tutorial's 80/20 split into shuffled DataLoaders."""
    train_idx, val_idx = train_val_indices(len(train_set), seed)
    generator = torch.Generator().manual_seed(seed)
    train = DataLoader(
        Subset(train_set, train_idx.tolist()), batch_size=batch_size, shuffle=True, num_workers=num_workers,
        generator=generator, persistent_workers=num_workers > 0,
    )  # fmt: skip
    val = DataLoader(
        Subset(train_set, val_idx.tolist()), batch_size=batch_size, shuffle=False, num_workers=num_workers
    )
    return train, val


def tutorial_epoch(
    model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer, max_batches: int | None = None
) -> tuple[float, int, float]:
    """One training epoch the tutorial's way; returns mean loss, images seen and seconds."""
    criterion = nn.CrossEntropyLoss()
    model.train()
    running, seen = 0.0, 0
    started = time.perf_counter()
    for i, (inputs, labels) in enumerate(loader):
        if max_batches is not None and i >= max_batches:
            break
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        running += loss.item() * len(labels)
        seen += len(labels)
    return running / max(seen, 1), seen, time.perf_counter() - started


def tutorial_evaluate(model: nn.Module, loader: DataLoader) -> tuple[float, float]:
    criterion = nn.CrossEntropyLoss(reduction="sum")
    model.eval()
    loss, correct, total = 0.0, 0, 0
    with torch.no_grad():
        for inputs, labels in loader:
            outputs = model(inputs)
            loss += criterion(outputs, labels).item()
            correct += (outputs.argmax(1) == labels).sum().item()
            total += len(labels)
    return loss / total, correct / total


def tutorial_fit(
    config: dict, data: CifarArrays, max_epochs: int, seed: int = 0, num_workers: int = 0
) -> list[dict]:
    """The whole tutorial loop on in-memory arrays: per-image transforms, DataLoader batches."""
    torch.manual_seed(seed)
    model = build_model(config)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(config["lr"]), momentum=0.9)
    train, val = tutorial_loaders(
        ArrayImages(data.train_images, data.train_labels), seed, int(config["batch_size"]), num_workers
    )
    history = []
    for epoch in range(max_epochs):
        train_loss, _, _ = tutorial_epoch(model, train, optimizer)
        loss, accuracy = tutorial_evaluate(model, val)
        history.append({"epoch": epoch + 1, "loss": loss, "accuracy": accuracy, "train_loss": train_loss})
    return history
