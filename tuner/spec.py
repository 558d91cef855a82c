"""The search-space contract: what a module under ``search_spaces/`` (or a user's file) declares.

Kept free of Ray and torch so that listing spaces and reading results stay fast.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from tuner.errors import UsageError, an
from tuner.nesting import flatten
from tuner.objectives import LOSS, MODES, Mode, Objectives, from_mapping, objectives_from
from tuner.value_types import ConfigDraft, Result, Space, SpaceEntry, Value

if TYPE_CHECKING:
    from tuner.native_spaces import Translated

# A trainable as a space gives it, once resolved: a function ``train(config, **settings)`` or a
# ``tune.Trainable`` class (calling it makes one), called by Tune alone: what a call returns is Tune's, never
# read here.
TrainableFunction: TypeAlias = Callable[..., object]


# What a trainable may report beside its learning metrics about the run itself (the out-of-memory fallback's
# batch size and retries, GPU memory and use): the live table and TensorBoard show them; plots and the
# report's learning views leave them out unless asked.
DIAGNOSTICS = ("batch_size_effective", "oom_retries", "gpu_memory_peak_mb", "gpu_utilization")


@dataclass(frozen=True)
class SearchSpace:
    """A declarative sweep: which trainable, which metric to optimise (or ``metrics``, several with their
    modes), and the parameter domains.

    ``trainable`` is the name of a module under ``trainables/`` (which defines ``train``), a
    ``"package.module:function"`` reference, or the function itself. ``params`` maps names to Ray Tune
    domains (``tune.loguniform``, ``tune.choice``, ``tune.sample_from``, ...) or constants.
    A config may nest (``{"model": {"width": ...}, "optim": {"lr": ...}}``): the plan, the searchers and the
    review name its parameters ``model/width``, and the trainable receives it nested, as written.
    ``params`` may also be written in a searcher's own language, as a user who tuned with Ray's searchers
    has it: a HyperOpt space (``hp.choice`` over dicts, ``hp.uniform``, ...) or an Optuna define-by-run
    function. It is translated into Tune domains (tuner/native_spaces/) and ``native`` keeps how the
    trainable gets its config back in the space's own shape.
    ``defaults`` holds run settings the space prefers (``max_epochs``, ``num_samples``, ...); flags,
    environment and sweep files override them.
    """

    trainable: str | TrainableFunction
    params: Space  # as written, also a HyperOpt space or an Optuna function: translated to a Space at init
    metric: str = "loss"
    mode: Mode | None = None  # "min" for loss; any other metric says its own (an accuracy was minimised)
    description: str = ""
    defaults: Mapping[str, Value] = field(default_factory=dict)
    metrics: Mapping[str, str] | None = None  # several objectives: {"loss": "min", "latency_ms": "min"}
    native: Translated | None = field(default=None, init=False, repr=False, compare=False)
    # what it optimises, read once from ``metrics`` or ``metric`` and ``mode``: what every reader takes
    objectives: Objectives = field(default=LOSS, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.metrics is not None:  # metric and mode then name the first, as for a sweep
            object.__setattr__(self, "objectives", from_mapping(self.metrics))
            object.__setattr__(self, "metric", self.objectives[0].name)
            object.__setattr__(self, "mode", self.objectives[0].mode)
        else:
            if not self.metric or not isinstance(self.metric, str):
                raise UsageError("space metric must be a non-empty string, e.g. metric='loss'")
            if self.mode is None:
                if self.metric != "loss":
                    raise UsageError(
                        f"space metric {self.metric!r} has no mode: say whether to minimise or maximise it, "
                        "mode='min' or mode='max' (only loss is minimised unsaid)"
                    )
                object.__setattr__(self, "mode", "min")
            if not isinstance(self.mode, str) or any(m.strip() not in MODES for m in self.mode.split(",")):
                raise UsageError(f"space mode {self.mode!r} is not valid; use one of: {', '.join(MODES)}")
            object.__setattr__(self, "objectives", objectives_from(self.metric, self.mode))
        if not isinstance(self.trainable, str) and not callable(self.trainable):
            raise UsageError(
                f"space trainable must be a name under trainables/ or a function, not {type(self.trainable).__name__}"
            )
        from tuner.native_spaces import form_of, translate

        translated = translate(self.params) if form_of(self.params) is not None else None
        if translated is not None:
            object.__setattr__(self, "params", translated.params)
            object.__setattr__(self, "native", translated)
        if isinstance(self.params, Mapping) and not self.params:
            raise UsageError("space params is empty: give at least one parameter to search (a Tune domain)")
        if not isinstance(self.params, Mapping):
            raise UsageError(
                "space params must be a mapping of parameter names to Tune domains, a HyperOpt space, "
                f"or an Optuna define-by-run function, not {an(type(self.params).__name__)}"
            )

    @property
    def flat_params(self) -> dict[str, SpaceEntry]:
        """The parameters by their full names: a nested config (``{"model": {"width": ...}}``) as
        ``model/width``, the names Ray's searchers and its results use; a flat space as it is."""
        return flatten(self.params)

    @property
    def trainable_name(self) -> str:
        """A printable name for the trainable, whether it is a reference or a function."""
        if isinstance(self.trainable, str):
            return self.trainable
        return getattr(self.trainable, "__qualname__", repr(self.trainable))


class Trainable(Protocol):
    """The trainable contract: a Ray Tune trainable and what it may declare about itself.

    ``train(config, **settings)`` reports once per epoch with ``ray.tune.report({...}, checkpoint=...)`` and
    continues from ``ray.tune.get_checkpoint()``; it receives as keywords only the run settings it declares
    (``max_epochs``, ``data_dir``, ``seed``, ``data``, ...). A ``tune.Trainable`` class is the other form
    (its ``step`` is an epoch, ``save_checkpoint``/``load_checkpoint`` its checkpoints, its ``setup`` takes
    the settings it declares); tuner/launch/trial/forms.py tells them apart. Optional attributes, set on the
    function or class:

    - ``checkpoints`` (bool): whether it continues from a checkpoint; HyperBand, BOHB and PBT need it.
      Undeclared, tuner reads a function's source for ``get_checkpoint``, or sees whether a class defines
      ``save_checkpoint`` and ``load_checkpoint``.
    - ``data_loader`` (callable): loads the ``data`` keyword once in the driver, shared with every trial.
    - ``memory_probe`` (callable ``(config, **settings)``): a few steps of ``config`` on a GPU, measured for
      ``--gpus-per-trial auto``.
    """

    # ``settings`` are the run settings it declares: numbers and text, and ``data``, its loader's own object
    def __call__(self, config: ConfigDraft, **settings: Any) -> Result | None: ...


@dataclass(frozen=True)
class TrainableContract:
    """What one trainable declares, read once and checked (``contract``)."""

    checkpoints: bool | None = None
    # returns the user's own data object, passed untouched to the trainable as ``data``
    data_loader: Callable[..., Any] | None = None
    memory_probe: Callable[..., None] | None = None  # run for its GPU memory footprint


CONTRACT_ATTRIBUTES = {"checkpoints": bool, "data_loader": Callable, "memory_probe": Callable}


def _method_of(owner: TrainableFunction, value: Any) -> bool:
    """A method a class trainable defines (its ``step``, ``save_checkpoint``...): code, not a declaration.
    (``value`` is any attribute the trainable holds.)"""
    qualname = getattr(getattr(value, "__func__", value), "__qualname__", "")
    return isinstance(owner, type) and qualname.startswith(f"{owner.__qualname__}.")


def contract(trainable: TrainableFunction) -> TrainableContract:
    """The trainable's declarations, or a one-line error naming an attribute of the wrong kind or a near miss
    of a contract name (``train.dataloader`` for ``train.data_loader``)."""
    import difflib

    name = getattr(trainable, "__qualname__", "the trainable")
    found: dict[str, Any] = {}  # each declaration, its kind checked below, as TrainableContract's keywords
    for attribute, value in (vars(trainable) if hasattr(trainable, "__dict__") else {}).items():
        if attribute in CONTRACT_ATTRIBUTES or attribute.startswith("_") or _method_of(trainable, value):
            continue
        near = difflib.get_close_matches(attribute, CONTRACT_ATTRIBUTES, n=1, cutoff=0.8)
        if near:
            raise UsageError(
                f"trainable {name} sets {attribute!r}, which tuner does not read; did you mean "
                f"{near[0]!r}? (the contract: {', '.join(CONTRACT_ATTRIBUTES)})"
            )
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
