"""Fault injection for tests: a trial config key makes the train loop fail once at a chosen epoch.

``{"_test_fault": "crash@2:/tmp/marker"}`` raises at the start of epoch 2 the first time only (the marker
file records that it fired), so a retry from the last checkpoint can be observed. ``oom@N`` raises an
out-of-memory error instead. Not a user-facing option: spaces written by users never set it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CONFIG_KEY = "_test_fault"


class InjectedCrash(RuntimeError):
    """The failure a test asked for."""


def parse(spec: str) -> tuple[str, int, Path]:
    kind_epoch, _, marker = spec.partition(":")
    kind, _, epoch = kind_epoch.partition("@")
    if kind not in ("crash", "oom") or not epoch.isdigit() or not marker:
        raise ValueError(f"bad {CONFIG_KEY} spec {spec!r}; expected crash@EPOCH:MARKER or oom@EPOCH:MARKER")
    return kind, int(epoch), Path(marker)


def maybe_fail(config: dict[str, Any], epoch: int) -> None:
    """Raise the configured fault when ``epoch`` (1-based) starts, once per marker file."""
    spec = config.get(CONFIG_KEY)
    if not spec:
        return
    kind, at, marker = parse(spec)
    if epoch != at or marker.exists():
        return
    marker.write_text(f"{kind} at epoch {epoch}\n")
    if kind == "oom":
        import torch

        raise torch.OutOfMemoryError(f"CUDA out of memory (injected at epoch {epoch})")
    raise InjectedCrash(f"injected crash at epoch {epoch}")
