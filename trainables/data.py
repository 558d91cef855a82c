"""CIFAR-shaped datasets as uint8 arrays: the real CIFAR-10 batches, or a synthetic set made here.

Everything stays numpy (no torch import) so the sweep driver can decode the data once and hand the
same arrays to every trial through Ray's object store.
"""

from __future__ import annotations

import logging
import os
import pickle
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tuner import UsageError

log = logging.getLogger(__name__)

CIFAR_FOLDER = "cifar-10-batches-py"
TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))
TEST_BATCH = "test_batch"
CIFAR_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")

DEFAULT_SYNTHETIC_SIZE = 4000
SYNTHETIC_CHUNK = 2048  # images drawn per task when a synthetic set is made
DATASETS = ("synthetic", "cifar10")


@dataclass(frozen=True)
class CifarArrays:
    """Images as uint8 ``(N, 3, 32, 32)`` and labels as int64 ``(N,)``, for a train and a test part."""

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    classes: tuple[str, ...] = CIFAR_CLASSES
    name: str = "cifar10"

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def nbytes(self) -> int:
        return sum(
            a.nbytes for a in (self.train_images, self.train_labels, self.test_images, self.test_labels)
        )


def train_val_indices(n: int, seed: int, train_fraction: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """A fixed split of the training set into train and validation parts (80/20 by default)."""
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(n * train_fraction))
    return np.sort(order[:cut]), np.sort(order[cut:])


# --- CIFAR-10's python-format batches -------------------------------------------------------------


def _read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with path.open("rb") as f:
        entry = pickle.load(f, encoding="bytes")
    data = entry.get(b"data", entry.get("data"))
    labels = entry.get(b"labels", entry.get("labels", entry.get(b"fine_labels")))
    if data is None or labels is None:
        raise UsageError(f"{path} is not a CIFAR-10 python batch (no data/labels entries)")
    images = np.asarray(data, dtype=np.uint8).reshape(-1, 3, 32, 32)
    return images, np.asarray(labels, dtype=np.int64)


def _read_classes(folder: Path) -> tuple[str, ...]:
    meta = folder / "batches.meta"
    if not meta.exists():
        return CIFAR_CLASSES
    with meta.open("rb") as f:
        entry = pickle.load(f, encoding="bytes")
    names = entry.get(b"label_names", entry.get("label_names", CIFAR_CLASSES))
    return tuple(n.decode() if isinstance(n, bytes) else str(n) for n in names)


def cifar10_folder(data_dir: str | Path) -> Path:
    return Path(data_dir).expanduser() / CIFAR_FOLDER


def cifar10_present(data_dir: str | Path) -> bool:
    folder = cifar10_folder(data_dir)
    return all((folder / name).is_file() for name in (*TRAIN_BATCHES, TEST_BATCH))


def download_cifar10(data_dir: str | Path) -> None:
    """Fetch CIFAR-10 with torchvision (needs network access to its mirror)."""
    from torchvision.datasets import CIFAR10

    Path(data_dir).expanduser().mkdir(parents=True, exist_ok=True)
    try:
        CIFAR10(root=str(Path(data_dir).expanduser()), train=True, download=True)
    except Exception as exc:  # network errors come in many types
        raise UsageError(f"could not download CIFAR-10 into {data_dir}: {exc}") from exc


def load_cifar10(data_dir: str | Path, download: bool = False) -> CifarArrays:
    """Read CIFAR-10's five training batches and its test batch into memory, decoded once."""
    folder = cifar10_folder(data_dir)
    if not cifar10_present(data_dir):
        if not download:
            raise UsageError(
                f"CIFAR-10 not found: expected {folder}/data_batch_1..5 and test_batch; "
                "pass --download to fetch it, --data-dir to point at it, or use --dataset synthetic"
            )
        download_cifar10(data_dir)
    parts = [_read_batch(folder / name) for name in TRAIN_BATCHES]
    test_images, test_labels = _read_batch(folder / TEST_BATCH)
    return CifarArrays(
        train_images=np.concatenate([p[0] for p in parts]),
        train_labels=np.concatenate([p[1] for p in parts]),
        test_images=test_images,
        test_labels=test_labels,
        classes=_read_classes(folder),
        name="cifar10",
    )


def write_cifar10_batches(arrays: CifarArrays, data_dir: str | Path) -> Path:
    """Write arrays in CIFAR-10's python format (five train batches, a test batch, batches.meta)."""
    folder = cifar10_folder(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    chunks = np.array_split(np.arange(len(arrays.train_labels)), len(TRAIN_BATCHES))
    for name, idx in zip(TRAIN_BATCHES, chunks, strict=True):
        _write_batch(folder / name, arrays.train_images[idx], arrays.train_labels[idx], name)
    _write_batch(folder / TEST_BATCH, arrays.test_images, arrays.test_labels, TEST_BATCH)
    with (folder / "batches.meta").open("wb") as f:
        pickle.dump({"label_names": list(arrays.classes), "num_vis": 3072}, f)
    return folder


def _write_batch(path: Path, images: np.ndarray, labels: np.ndarray, name: str) -> None:
    # str keys: what CIFAR-10's Python 2 pickles decode to under torchvision's encoding="latin1".
    entry = {
        "batch_label": name,
        "labels": [int(v) for v in labels],
        "data": np.ascontiguousarray(images.reshape(len(images), -1), dtype=np.uint8),
        "filenames": [f"{name}_{i}.png" for i in range(len(images))],
    }
    with path.open("wb") as f:
        pickle.dump(entry, f, protocol=4)


# --- synthetic CIFAR-shaped data -----------------------------------------------------------------


def make_synthetic(
    size: int = DEFAULT_SYNTHETIC_SIZE, seed: int = 0, test_size: int | None = None
) -> CifarArrays:
    """A deterministic 10-class set of 3x32x32 images that a small conv net can learn in an epoch or two.

    Each class is a smooth colour pattern; every image is its class pattern at a random contrast, shifted by
    a few pixels, under strong per-pixel noise. With a good learning rate the seed net reaches 80-95%
    validation accuracy in two epochs, while a poor one stays near 10%: schedulers and searchers get a
    real signal to act on.
    """
    if size < 10:
        raise UsageError(f"--synthetic-size must be at least 10 (one image per class), got {size}")
    test_size = max(10, size // 5) if test_size is None else test_size
    rng = np.random.default_rng(seed)
    coarse = rng.normal(size=(10, 3, 8, 8))
    patterns = np.repeat(np.repeat(coarse, 4, axis=2), 4, axis=3)
    patterns = (
        patterns + np.roll(patterns, 1, 2) + np.roll(patterns, 1, 3) + np.roll(patterns, (1, 1), (2, 3))
    ) / 4
    # Every class pattern under every shift, scaled to pixels once: an image is then one row lookup, a
    # contrast and the noise, in float32, a chunk at a time on every core (each chunk has its own seeded
    # stream, so the set depends on the seed only).
    offsets = [(dy, dx) for dy in range(-3, 4) for dx in range(-3, 4)]
    shifted = np.stack([np.roll(patterns, s, axis=(2, 3)) for s in offsets], axis=1).astype(np.float32) * 48

    def fill(pixels: np.ndarray, labels: np.ndarray, stream: np.random.SeedSequence) -> None:
        chunk_rng = np.random.default_rng(stream)
        n = len(pixels)
        contrast = chunk_rng.uniform(0.6, 1.4, size=(n, 1, 1, 1)).astype(np.float32)
        shifts = chunk_rng.integers(0, len(offsets), size=n)
        values = chunk_rng.standard_normal(size=pixels.shape, dtype=np.float32)
        values *= 48 * 3.0
        values += shifted[labels, shifts] * contrast
        values += 128
        np.clip(values, 0, 255, out=values)
        pixels[...] = values

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = rng.integers(0, 10, size=n)
        pixels = np.empty((n, 3, 32, 32), dtype=np.uint8)
        starts = range(0, n, SYNTHETIC_CHUNK)
        streams = np.random.SeedSequence(int(rng.integers(2**63))).spawn(len(starts))
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # numpy lets go of the GIL here
            list(pool.map(lambda a, s: fill(pixels[a : a + SYNTHETIC_CHUNK], labels[a : a + SYNTHETIC_CHUNK], s),
                          starts, streams))  # fmt: skip
        return pixels, labels.astype(np.int64)

    train_images, train_labels = draw(size)
    test_images, test_labels = draw(test_size)
    return CifarArrays(train_images, train_labels, test_images, test_labels, CIFAR_CLASSES, name="synthetic")


def load_dataset(
    dataset: str,
    data_dir: str | Path = "./data",
    synthetic_size: int = DEFAULT_SYNTHETIC_SIZE,
    download: bool = False,
    seed: int = 0,
) -> CifarArrays:
    """The dataset a sweep trains on, decoded once into memory."""
    if dataset == "synthetic":
        return make_synthetic(synthetic_size, seed=seed)
    if dataset == "cifar10":
        return load_cifar10(data_dir, download=download)
    raise UsageError(f"unknown dataset {dataset!r}; valid: {', '.join(DATASETS)}")
