"""The search-space contract: what a module under ``search_spaces/`` (or a user's file) declares.

Kept free of Ray and torch so that listing spaces and reading results stay fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

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


class Trainable(Protocol):
    """The trainable contract: a Ray Tune function trainable and what it may declare about itself.

    ``train(config, **settings)`` reports once per epoch with ``ray.tune.report({...}, checkpoint=...)`` and
    continues from ``ray.tune.get_checkpoint()``; it receives as keywords only the run settings it declares
    (``max_epochs``, ``data_dir``, ``seed``, ``data``, ...). Optional attributes, set on the function:

    - ``checkpoints`` (bool): whether it continues from a checkpoint; HyperBand, BOHB and PBT need it.
      Undeclared, tuner reads its source for ``get_checkpoint``.
    - ``data_loader`` (callable): loads the ``data`` keyword once in the driver, shared with every trial.
    - ``memory_probe`` (callable ``(config, **settings)``): a few steps of ``config`` on a GPU, measured for
      ``--gpus-per-trial auto``.
    """

    def __call__(self, config: dict[str, Any], **settings: Any) -> Any: ...


@dataclass(frozen=True)
class TrainableContract:
    """What one trainable declares, read once and checked (``contract``)."""

    checkpoints: bool | None = None
    data_loader: Callable[..., Any] | None = None
    memory_probe: Callable[..., Any] | None = None


CONTRACT_ATTRIBUTES = {"checkpoints": bool, "data_loader": Callable, "memory_probe": Callable}


def contract(trainable: Callable[..., Any]) -> TrainableContract:
    """The trainable's declarations, or a one-line error naming an attribute of the wrong kind or a near miss
    of a contract name (``train.dataloader`` for ``train.data_loader``)."""
    import difflib

    name = getattr(trainable, "__qualname__", "the trainable")
    found: dict[str, Any] = {}
    for attribute in vars(trainable) if hasattr(trainable, "__dict__") else {}:
        if attribute in CONTRACT_ATTRIBUTES or attribute.startswith("_"):
            continue
        near = difflib.get_close_matches(attribute, CONTRACT_ATTRIBUTES, n=1, cutoff=0.8)
        if near:
            raise UsageError(f"trainable {name} sets {attribute!r}, which tuner does not read; did you mean "
                             f"{near[0]!r}? (the contract: {', '.join(CONTRACT_ATTRIBUTES)})")  # fmt: skip
    for attribute, kind in CONTRACT_ATTRIBUTES.items():
        value = getattr(trainable, attribute, None)
        if value is None:
            continue
        if kind is bool and not isinstance(value, bool):
            raise UsageError(f"trainable {name}: {attribute} must be True or False, not {value!r}")
        if kind is Callable and not callable(value):
            raise UsageError(f"trainable {name}: {attribute} must be a function, not {type(value).__name__}")
        found[attribute] = value
    return TrainableContract(**found)
