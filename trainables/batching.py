"""In-memory batching: a split normalised once on its device, batches cut by indexing, no DataLoader.

For small images the per-image Python work of a DataLoader (PIL decode, ToTensor, Normalize, collate)
costs far more than the arithmetic of the seed net; slicing one tensor costs almost nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

# The tutorial's Normalize((0.5,)*3, (0.5,)*3): pixels in [0, 255] -> [-1, 1].
_SCALE = 2.0 / 255.0
_SHIFT = -1.0


@dataclass
class DeviceSplit:
    """Images (float, normalised) and labels of one split, already on the device that trains on them."""

    images: torch.Tensor
    labels: torch.Tensor

    def __len__(self) -> int:
        return int(self.labels.shape[0])


def _as_tensor(array: np.ndarray) -> torch.Tensor:
    # Arrays from Ray's object store are read-only views; we never write to them, only read and copy.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array)


def to_device_split(
    images: np.ndarray, labels: np.ndarray, device: torch.device, channels_last: bool = False
) -> DeviceSplit:
    """Move uint8 images to the device first (4x fewer bytes), then normalise there once."""
    pixels = _as_tensor(images).to(device, non_blocking=True)
    normalised = pixels.to(torch.float32).mul_(_SCALE).add_(_SHIFT)
    if channels_last:
        normalised = normalised.contiguous(memory_format=torch.channels_last)
    return DeviceSplit(normalised, _as_tensor(labels).to(device, dtype=torch.long, non_blocking=True))


def shuffled_indices(split: DeviceSplit, batch_size: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    """One epoch of batch indices (on the split's device) in a fresh random order; the last, smaller one is kept."""
    order = torch.randperm(len(split), generator=generator).to(split.labels.device)
    for start in range(0, len(split), batch_size):
        yield order[start : start + batch_size]


def shuffled_batches(
    split: DeviceSplit, batch_size: int, generator: torch.Generator
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """One epoch of batches in a fresh random order; the last, smaller batch is kept."""
    for index in shuffled_indices(split, batch_size, generator):
        yield split.images[index], split.labels[index]


def ordered_batches(split: DeviceSplit, batch_size: int) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Batches in storage order, as views (no copy), for evaluation."""
    for start in range(0, len(split), batch_size):
        yield split.images[start : start + batch_size], split.labels[start : start + batch_size]


def augment(images: torch.Tensor, generator: torch.Generator, padding: int = 4) -> torch.Tensor:
    """Random crop with zero padding and random horizontal flip, for a whole batch at once."""
    n, _, h, w = images.shape
    device = images.device
    padded = torch.nn.functional.pad(images, (padding, padding, padding, padding))
    dy = torch.randint(0, 2 * padding + 1, (n,), generator=generator).to(device)
    dx = torch.randint(0, 2 * padding + 1, (n,), generator=generator).to(device)
    rows = (dy[:, None] + torch.arange(h, device=device)[None, :])[:, None, :, None]
    cols = (dx[:, None] + torch.arange(w, device=device)[None, :])[:, None, None, :]
    batch = torch.arange(n, device=device)[:, None, None, None]
    channels = torch.arange(images.shape[1], device=device)[None, :, None, None]
    cropped = padded[batch, channels, rows, cols]
    flip = (torch.rand(n, generator=generator) < 0.5).to(device)[:, None, None, None]
    out = torch.where(flip, cropped.flip(3), cropped)
    if images.is_contiguous(memory_format=torch.channels_last):
        out = out.contiguous(memory_format=torch.channels_last)
    return out
