"""Sweep settings: every setting of one sweep as a frozen ``SweepConfig``, its values checked, read from and
written to ``tuner_config.yaml``; values from YAML and the environment turned into their types.

Loading a saved experiment's settings needs nothing else of tuner (a review imports neither the launch path
nor the algorithm registries). Resolving a new sweep's settings (flags > TUNER_* environment > --config
YAML > space defaults, then what the space and the algorithms decide) is the launch path's first step:
tuner/launch/resolve.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeAlias

from tuner import storage
from tuner.errors import UsageError
from tuner.folder import format as folder_format
from tuner.folder.names import CONFIG_FILE
from tuner.limits import Budget, TrialTimeout
from tuner.objectives import (
    LOSS,
    Constraint,
    Objective,
    Objectives,
    as_mapping,
    from_mapping,
    metric_names,
    named,
    objectives_from,
)
from tuner.objectives import (
    check as check_objectives,
)
from tuner.storage_outage import DEFAULT_TIMEOUT_S as DEFAULT_STORAGE_TIMEOUT_S
from tuner.storage_outage import parse_timeout

ENV_PREFIX = "TUNER_"
MAX_SEED = 2**32 - 1
MAX_NAME_BYTES = 200  # a folder name's limit is 255 bytes; Ray names files inside after it too
DEFAULT_STORAGE = "~/tuner_results"
GPUS_AUTO = "auto"
DEFAULT_NUM_SAMPLES = 8
DEFAULT_SCHEDULER = "auto"  # the scheduler registry's DEFAULT; tests/unit/test_registries.py holds them equal

# One setting's value as a SweepConfig holds it and tuner_config.yaml saves it.
Setting: TypeAlias = str | int | float | bool | list[str] | dict[str, str] | None


@dataclass(frozen=True)
class SweepConfig:
    """Every setting of one sweep. ``None`` means "decided later" (from the space or the cluster)."""

    space: str
    scheduler: str = DEFAULT_SCHEDULER
    searcher: str | None = None  # the scheduler's own searcher if it brings one, else what "auto" chooses
    num_samples: int | None = None  # DEFAULT_NUM_SAMPLES, or no cap under a budget
    max_epochs: int = 10
    grace_period: int = 1  # epochs before ASHA's first rung and the median rule's first comparison
    reduction_factor: int = 2  # ASHA, HyperBand and BOHB keep the best 1/reduction_factor at each rung
    cpus_per_trial: float = 1.0
    gpus_per_trial: float | None = (
        None  # or "auto": packed by measured memory (tuner/launch/placement/packing.py)
    )
    # what it optimises, in order (one is a tuple of one): given as --metric and --mode (``settled`` reads them
    # once), the space's own otherwise; tuner_config.yaml keeps them as {name: mode}
    objectives: Objectives = LOSS
    constraints: list[str] | None = None  # "METRIC<=VALUE": a trial that breaks one is never on the front
    name: str | None = None
    storage_path: str = DEFAULT_STORAGE
    seed: int = 0
    max_concurrent: int | None = None
    max_failures: int = 0
    dataset: str = "cifar10"  # a name the trainable's data loader knows
    data_dir: str = "./data"
    synthetic_size: int = 4000
    download: bool = False
    address: str | None = None
    allow_local_storage: bool = False
    dashboard: bool = False
    wandb: bool = False
    wandb_project: str | None = None
    wandb_group: str | None = None
    trial_output: bool = False  # also show trials' own output on the terminal (it is always kept per trial)
    stall_timeout: float = 60.0  # seconds with nothing running or pending before a sweep is ended
    storage_timeout: float = (
        DEFAULT_STORAGE_TIMEOUT_S  # seconds a storage that cannot be reached is waited for
    )
    budget: str | None = None  # wall time, epochs or GPU-hours (tuner/limits.py); None: num_samples decides
    trial_timeout: str | None = None  # seconds a trial may stay silent; None: from the epoch times seen
    warm_start: list[str] | None = None  # earlier experiments whose trials seed the searcher
    searcher_chosen: str | None = None  # why "auto" chose the searcher (the plan prints it)
    scheduler_chosen: str | None = None  # why "auto" chose the scheduler (the plan prints it)
    # where the experiment was made: what its pickled parts (scheduler, callbacks) name
    origin: str | None = None

    def __post_init__(self) -> None:
        """Checks only: the values come settled (``settled``, through ``build_config``); the scheduler and
        searcher names are checked against their registries where a sweep is resolved (tuner/algorithms.py
        ``check_names``), above the settings: a saved experiment is read without the registries."""
        if not isinstance(self.warm_start, (list, type(None))) or not isinstance(
            self.constraints, (list, type(None))
        ):
            raise TypeError("warm_start and constraints are lists: build a SweepConfig with build_config")
        check_objectives(self.objectives)  # a tuple of Objective: build_config reads them from what was given
        for text in self.constraints or []:
            Constraint.parse(text)
        if self.num_samples is not None:
            _check_at_least("num-samples", self.num_samples, 1)
        if self.budget is not None and Budget.parse(self.budget).extra:
            raise UsageError(
                f"--budget {self.budget}: '+' adds to what a sweep spent, for 'tuner resume'; a new "
                f"sweep takes the amount itself ({self.budget.strip().lstrip('+')})"
            )
        TrialTimeout.parse(self.trial_timeout)
        _check_at_least("max-epochs", self.max_epochs, 1)
        _check_at_least("grace-period", self.grace_period, 1)
        _check_at_least("reduction-factor", self.reduction_factor, 2)
        _check_at_least("synthetic-size", self.synthetic_size, 10)
        _check_at_least("max-failures", self.max_failures, 0)
        if self.max_concurrent is not None:
            _check_at_least("max-concurrent", self.max_concurrent, 1)
        if (
            not 0 <= self.seed <= MAX_SEED
        ):  # numpy's and Ray's seeds: refused here, not by numpy after the folder
            raise UsageError(f"--seed must be from 0 to {MAX_SEED}, got {self.seed}")
        for flag, value, unit in (
            ("stall-timeout", self.stall_timeout, " seconds"),
            ("storage-timeout", self.storage_timeout, " seconds"),
            ("cpus-per-trial", self.cpus_per_trial, ""),
        ):
            if not (math.isfinite(value) and value > 0):
                raise UsageError(f"--{flag} must be more than 0{unit} and finite, got {value:g}")
        if isinstance(self.gpus_per_trial, str):
            if self.gpus_per_trial != GPUS_AUTO:
                raise UsageError(f"--gpus-per-trial must be a number or 'auto', got {self.gpus_per_trial!r}")
        elif self.gpus_per_trial is not None:
            g = self.gpus_per_trial
            if not (math.isfinite(g) and g >= 0):
                raise UsageError(f"--gpus-per-trial must be 0 or more and finite, got {g:g}")
            if g > 1 and g != int(g):
                raise UsageError(
                    f"--gpus-per-trial above 1 must be a whole number, got {g:g}; fractions go up to 1"
                )
        if self.name is not None and (not self.name or "/" in self.name or self.name.startswith(".")):
            raise UsageError(
                f"--name {self.name!r} must be a plain folder name (no '/', not starting with '.')"
            )
        if self.name is not None and len(self.name.encode()) > MAX_NAME_BYTES:
            raise UsageError(
                f"--name is {len(self.name.encode())} bytes long; a folder name takes at most {MAX_NAME_BYTES}"
            )
        if not self.storage_path.strip():
            raise UsageError(
                "--storage-path is empty; give a folder (or s3://, gs:// URI) to keep experiments in"
            )

    @property
    def objective(self) -> Objective:
        """The first objective: what a one-objective view (the best trial, its checkpoint) ranks by."""
        return self.objectives[0]

    @property
    def constraint_list(self) -> list[Constraint]:
        return [Constraint.parse(text) for text in self.constraints or []]

    @property
    def experiment_path(self) -> str:
        """STORAGE/NAME, as a local path or a URI (s3://, gs://) when the storage is remote."""
        if self.name is None:
            raise RuntimeError("experiment name not resolved yet")
        if storage.is_uri(self.storage_path):
            return self.storage_path.rstrip("/") + "/" + self.name
        return str(Path(self.storage_path).expanduser().resolve() / self.name)

    @property
    def trials_cap(self) -> int | None:
        """Trials the sweep may create: ``num_samples``, or None when only the budget ends it."""
        if self.num_samples is not None:
            return self.num_samples
        return None if self.budget is not None else DEFAULT_NUM_SAMPLES

    @property
    def planned_trials(self) -> int:
        """A trial count for what needs one to plan with (warm-up draws, bracket tables): the cap, or
        the default where a budget alone ends the sweep."""
        return self.trials_cap or DEFAULT_NUM_SAMPLES

    def as_text(self) -> dict[str, Setting]:
        """The settings as the dry run and the dashboard's comparison show them: the objectives as words."""
        return {**self.to_dict(), "objectives": named(self.objectives)}

    def to_dict(self) -> dict[str, Setting]:
        """The settings as tuner_config.yaml saves them (``load_saved_config`` reads them back)."""
        out: dict[str, Setting] = dataclasses.asdict(self)
        out["objectives"] = as_mapping(self.objectives)
        return out


def check_choice(name: str, value: str, valid: tuple[str, ...]) -> None:
    if value not in valid:
        raise UsageError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")


def _check_at_least(flag: str, value: int, low: int) -> None:
    if value < low:
        raise UsageError(f"--{flag} must be at least {low}, got {value}")


# --- reading values from strings, YAML and the environment ---------------------------------------

# the settings' types as text (annotations are text under __future__); a sweep's objectives are given as
# ``metric`` and ``mode`` (text, or YAML lists) and saved as ``objectives`` ({name: mode})
_GIVEN_AS = {"objectives": {"metric": "str | None", "mode": "str | None"}}
_FIELD_TYPES = {f.name: str(f.type) for f in fields(SweepConfig)}
FIELD_NAMES = tuple(_FIELD_TYPES)
_TYPES = {**_FIELD_TYPES, **{n: t for given in _GIVEN_AS.values() for n, t in given.items()}}
DECIDED = ("searcher_chosen", "scheduler_chosen", "origin")  # settings tuner decides and records, never given
USER_SETTINGS = tuple(
    given for name in FIELD_NAMES if name not in DECIDED for given in _GIVEN_AS.get(name, {name: ""})
)


def unknown_setting(where: str, name: str, *also: str) -> UsageError:
    """The one line for a setting tuner does not have, given in ``where``: the nearest one it has, and all of
    them (``also``: names that place takes besides)."""
    import difflib

    valid = (*USER_SETTINGS, *also)
    near = difflib.get_close_matches(name.replace("-", "_"), valid, n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    return UsageError(f"{where}: unknown setting {name!r}; {hint}valid: {', '.join(valid)}")


def _base_type(annotation: str) -> tuple[str, bool]:
    parts = [p.strip() for p in annotation.split("|")]
    optional = "None" in parts
    base = next(p for p in parts if p != "None")
    return base, optional


def coerce(name: str, value: Any, where: str) -> Setting:
    """Turn a value from YAML or the environment into the field's type, or say clearly why not. (``value`` is
    whatever the file, the environment or the space's defaults hold: anything ``int()``, ``float()`` or
    ``str()`` may read, refused in words otherwise.)"""
    if name == "objectives":  # as tuner_config.yaml keeps them
        return as_mapping(from_mapping(value, f"{where}: objectives"))
    base, optional = _base_type(_TYPES[name])
    if name == "gpus_per_trial" and isinstance(value, str) and value.strip().lower() == GPUS_AUTO:
        return GPUS_AUTO
    if value is None or (
        isinstance(value, str) and value.strip().lower() in ("", "none", "null") and optional
    ):
        if optional:
            return None
        raise UsageError(f"{where}: {name} needs a value")
    if name == "storage_timeout":  # a duration, read as review and resume read TUNER_STORAGE_TIMEOUT
        return parse_timeout(value, f"{where}: {name}")
    try:
        if base == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if base == "int":
            if isinstance(value, bool) or (isinstance(value, float) and value != int(value)):
                raise ValueError
            return int(str(value).strip()) if isinstance(value, str) else int(value)
        if base == "float":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if base.startswith("list"):
            items = value if isinstance(value, (list, tuple)) else str(value).split(",")
            return [str(v).strip() for v in items if str(v).strip()] or None
        if isinstance(value, (list, tuple)) and name in _GIVEN_AS["objectives"]:  # several, as a YAML list
            return [str(v) for v in value]
        if isinstance(value, (dict, list)):
            raise ValueError
        return str(value)
    except (TypeError, ValueError):
        wanted = {"int": "a whole number", "float": "a number", "bool": "true or false"}.get(base, "a string")
        raise UsageError(f"{where}: {name} must be {wanted}, got {value!r}") from None


NO_SPACE = "no search space given; pass --space NAME or --space path/to/space.py (see 'tuner spaces')"


def build_config(settings: Mapping[str, Any]) -> SweepConfig:
    """A validated config from merged settings; unknown names are a programming error, not user input.
    (Each setting has its own field's type, which SweepConfig checks: the mapping is its keywords.)"""
    if not settings.get("space"):
        raise UsageError(NO_SPACE)
    return SweepConfig(**settled(settings))


def settled(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings in the one form a ``SweepConfig`` holds them, each parsed once: earlier experiments as a list
    (``warm_start="results/first"`` is one), bounds as a list (``constraints="mb<=4000"`` is one), the storage
    timeout in seconds (``5m`` is 300), and what the sweep optimises as one tuple, from ``metric`` and ``mode``
    as given (``"loss,latency_ms"`` and ``"min"``, or lists) or ``objectives`` as saved (``{loss: min}``). A
    metric given without a mode is minimised here: a new sweep's mode comes from its space first
    (tuner/launch/resolve.py)."""
    out = dict(settings)
    warm = out.get("warm_start")
    if isinstance(warm, (str, Path)):
        out["warm_start"] = [str(warm)]
    elif warm is not None:
        out["warm_start"] = [str(ref) for ref in warm] or None
    if isinstance(out.get("constraints"), str):
        out["constraints"] = [out["constraints"]]
    if isinstance(out.get("storage_timeout"), str):  # "5m" as the flag or tuner.sweep gives it
        out["storage_timeout"] = parse_timeout(out["storage_timeout"], "--storage-timeout")
    metric, mode = out.pop("metric", None), out.pop("mode", None)
    if isinstance(saved := out.get("objectives"), Mapping):
        out["objectives"] = from_mapping(saved, "objectives")
    if metric is not None or mode is not None:
        if mode is None and metric is not None and len(metric_names(metric)) > 1:
            shown = metric if isinstance(metric, str) else ",".join(metric)
            raise UsageError(
                f"--metric {shown}: say whether to minimise or maximise each (--mode min,max, or one mode for all)"
            )
        out["objectives"] = objectives_from(
            "loss" if metric is None else metric, "min" if mode is None else mode
        )
    return out


def save_config(config: SweepConfig, folder: str | Path) -> str:
    """Write ``tuner_config.yaml`` into the experiment folder (a path or a storage URI)."""
    import yaml

    saved = folder_format.stamp(config.to_dict())
    return storage.write_text(folder, CONFIG_FILE, yaml.safe_dump(saved, sort_keys=False))


def load_saved_config(folder: str | Path) -> SweepConfig:
    """The settings an experiment ran with, from its ``tuner_config.yaml``."""
    import yaml

    where = f"{str(folder).rstrip('/')}/{CONFIG_FILE}"
    try:
        text = storage.read_text(folder, CONFIG_FILE)
    except UnicodeDecodeError:
        raise UsageError(f"{where} is corrupted: not UTF-8 text") from None
    if text is None:
        raise UsageError(f"{folder} is not a tuner experiment: no {CONFIG_FILE}")
    try:
        # libyaml's safe loader where PyYAML has it: the same reading, a tenth of the time (the dashboard reads
        # hundreds of these at its start)
        raw = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(f"{where} is corrupted{at}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(raw, dict):
        raise UsageError(f"{where} is corrupted: expected a mapping of settings")
    known = {k: coerce(k, v, where) for k, v in folder_format.read(raw, where).items() if k in _FIELD_TYPES}
    known.update(_where_it_lies(folder))
    return build_config(known)  # what ran


def _where_it_lies(folder: str | Path) -> dict[str, str]:
    """The storage path and name of the folder the settings were read from: an experiment moved or copied
    elsewhere is reviewed, resumed and grown where it lies now, never where it was made."""
    parent, name = storage.split(str(folder).rstrip("/"))
    if not storage.is_uri(folder):
        parent = str(Path(parent).expanduser().resolve())
    return {"storage_path": parent, "name": name}
