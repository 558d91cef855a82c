"""The search-space contract: what a module under ``search_spaces/`` (or a user's file) declares.

Kept free of Ray and torch so that listing spaces and reading results stay fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tuner.errors import UsageError

MODES = ("min", "max")
# What a trainable may report beside its learning metrics about the run itself (the out-of-memory fallback's
# batch size and retries, GPU memory and use): the live table and TensorBoard show them; plots and the
# report's learning views leave them out unless asked.
DIAGNOSTICS = ("batch_size_effective", "oom_retries", "gpu_memory_peak_mb", "gpu_utilization")


@dataclass(frozen=True)
class SearchSpace:
    """A declarative sweep: which trainable, which metric to optimise, and the parameter domains.

    ``trainable`` is the name of a module under ``trainables/`` (which defines ``train``), a
    ``"package.module:function"`` reference, or the function itself. ``params`` maps names to Ray Tune
    domains (``tune.loguniform``, ``tune.choice``, ``tune.sample_from``, ...) or constants.
    ``defaults`` holds run settings the space prefers (``max_epochs``, ``num_samples``, ...); flags,
    environment and sweep files override them.
    """

    trainable: str | Callable[..., Any]
    params: Mapping[str, Any]
    metric: str = "loss"
    mode: str = "min"
    description: str = ""
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UsageError(f"space mode {self.mode!r} is not valid; use one of: {', '.join(MODES)}")
        if not self.metric or not isinstance(self.metric, str):
            raise UsageError("space metric must be a non-empty string, e.g. metric='loss'")
        if not isinstance(self.trainable, str) and not callable(self.trainable):
            raise UsageError(
                f"space trainable must be a name under trainables/ or a function, not {type(self.trainable).__name__}"
            )
        if not isinstance(self.params, Mapping) or not self.params:
            raise UsageError("space params must be a non-empty mapping of parameter names to domains")

    @property
    def trainable_name(self) -> str:
        """A printable name for the trainable, whether it is a reference or a function."""
        if isinstance(self.trainable, str):
            return self.trainable
        return getattr(self.trainable, "__qualname__", repr(self.trainable))
