"""Faults the tests inject through the training loop's ``before_epoch`` hook (never through product code).

``fault_hook("crash@2:/tmp/marker")`` raises at the start of epoch 2 the first time only (the marker file
records that it fired), so a retry from the last checkpoint can be observed; ``oom@N`` raises an
out-of-memory error instead. ``faulty_space`` writes a space file whose own trainable wraps the CIFAR
trainable with that hook, read from the trial's ``fault`` parameter.
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path


def fault_hook(spec: str):
    """A ``before_epoch`` hook raising the fault ``KIND@EPOCH:MARKER`` once; no-op for an empty spec."""
    from pathlib import Path

    if not spec:
        return None
    kind_epoch, _, marker = spec.partition(":")
    kind, _, at = kind_epoch.partition("@")
    if kind not in ("crash", "oom") or not at.isdigit() or not marker:
        raise ValueError(f"bad fault {spec!r}; expected crash@EPOCH:MARKER or oom@EPOCH:MARKER")

    def hook(epoch: int) -> None:
        if epoch != int(at) or Path(marker).exists():
            return
        Path(marker).write_text(f"{kind} at epoch {epoch}\n")
        if kind == "oom":
            import torch

            raise torch.OutOfMemoryError(f"CUDA out of memory (injected at epoch {epoch})")
        raise RuntimeError(f"injected crash at epoch {epoch}")

    return hook


_TRAINABLE = '''
from trainables import cifar


def train(config, *, data, max_epochs=10, seed=0, cpus_per_trial=1, gpus_per_trial=0):
    cifar.train(config, data=data, max_epochs=max_epochs, seed=seed, cpus_per_trial=cpus_per_trial,
                gpus_per_trial=gpus_per_trial, before_epoch=fault_hook(config.get("fault", "")))


train.data_loader = cifar.train.data_loader
train.checkpoints = True
'''


def faulty_space(path: Path, params: str, doc: str = "The seed net with a fault injected.") -> Path:
    """Write a space file at ``path`` whose trainable injects the trial's ``fault``; ``params`` is the
    source of the ``params={...}`` mapping (it may use ``tune``)."""
    source = (
        f'"""{doc}"""\nfrom ray import tune\nfrom tuner import SearchSpace\n\n'
        + textwrap.dedent(inspect.getsource(fault_hook))
        + _TRAINABLE
        + f"\n\nSPACE = SearchSpace(trainable=train, params={params})\n"
    )
    path.write_text(source)
    return path
