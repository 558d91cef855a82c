"""Resolving a new sweep's settings in one step: flags > TUNER_* environment > --config YAML > space defaults,
then what the space and the algorithms decide (metric, mode, the searcher, the experiment's name).

The result is a frozen ``SweepConfig`` (tuner/settings.py) with nothing left open but the cluster's facts
(filled when the plan meets the cluster, tuner/launch/plan.py). The runner saves it as ``tuner_config.yaml``
in the experiment folder, so ``tuner resume`` and a colleague reading the folder see exactly what ran.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tuner import algorithms, schedulers, searchers, storage, storage_outage
from tuner.errors import UsageError
from tuner.launch.layers import env_settings, merge_layers, read_yaml_settings
from tuner.objectives import Given, as_mapping, metric_names, named
from tuner.settings import (
    ENV_PREFIX,
    NO_SPACE,
    USER_SETTINGS,
    SweepConfig,
    build_config,
    coerce,
    unknown_setting,
)

if TYPE_CHECKING:
    from tuner.launch.layers import GivenSetting
    from tuner.spec import SearchSpace


def default_name(space_label: str, scheduler: str, searcher: str) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", space_label)
    return f"{safe}-{scheduler}-{searcher}-{stamp}"


def resolve(
    given: Mapping[str, GivenSetting],
    config_file: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> SweepConfig:
    """The settings of a new sweep, in one step.

    flags (``given``: only what the user typed) > TUNER_* environment > the ``--config`` YAML > the space's
    ``defaults`` > what the trainable asked through ``tune.with_resources`` > built-in defaults; then what the space and the names decide (metric, mode, the searcher a
    scheduler brings, the experiment name, absolute paths). The space is imported once per process. A new
    sweep starts here: an outage an earlier sweep in this process gave up on is forgotten before the storage
    is read (is the name free there?).
    """
    from tuner.launch.registry import load_space

    storage_outage.start_afresh()

    env = env_settings(os.environ if environ is None else environ)
    from_file = read_yaml_settings(config_file) if config_file else {}
    space_ref = given.get("space") or env.get("space") or from_file.get("space")
    if not space_ref:
        raise UsageError(NO_SPACE)
    # text in every layer (a flag, a coerced setting, the reference tuner.sweep keeps)
    space = load_space(str(space_ref))
    unknown = sorted(str(k) for k in space.defaults if k not in USER_SETTINGS)
    if unknown:
        raise unknown_setting(f"space {space_ref} defaults", unknown[0])
    space_defaults = {k: coerce(k, v, f"space {space_ref} defaults") for k, v in space.defaults.items()}
    asked = _trainable_resources(space)
    settings: dict[str, GivenSetting] = merge_layers(
        asked, space_defaults, from_file, env, given, {"space": space_ref}
    )
    metric = settings.get("metric")
    if not isinstance(metric, (str, list)) or not metric:  # the space's own, unless --mode says otherwise
        settings["metric"] = metric = [o.name for o in space.objectives]
    settings["mode"] = settings.get("mode") or _modes_by_name(metric, space)
    below_flags = {  # lowest first, as merged
        f"space {space_ref} defaults": space_defaults,
        f"config file {Path(config_file or '').expanduser()}": from_file,
        "environment": env,
    }
    try:
        config = build_config(settings)
    except UsageError as exc:
        raise _as_given(exc, given, below_flags) from None
    algorithms.check_names(config.scheduler, config.searcher)
    return complete(config, space)


def _as_given(
    exc: UsageError, given: Mapping[str, object], below_flags: Mapping[str, Mapping[str, object]]
) -> UsageError:
    """A refused value named where it was given: "--num-samples must be at least 1" blamed a flag the user never
    typed for TUNER_NUM_SAMPLES=0 or a sweep file's ``num_samples: 0``; their wrong types were already named so."""
    flagged = re.match(r"--([a-z][a-z-]*) (.*)", str(exc), re.S)
    if flagged is None or (name := flagged[1].replace("-", "_")) in given:
        return exc
    for where, layer in reversed(
        list(below_flags.items())
    ):  # the highest layer that gave it is the one merged
        if name in layer:
            label = f"environment {ENV_PREFIX}{name.upper()}" if where == "environment" else where
            return UsageError(f"{label}: {name} {flagged[2]}")
    return exc


def _trainable_resources(space: SearchSpace) -> dict[str, float]:
    """What a trainable wrapped in ``tune.with_resources`` asked for each trial: the lowest layer of settings,
    under the space's defaults."""
    if not callable(space.trainable):
        return {}
    from tuner.launch.trial.forms import declared_resources

    return declared_resources(space.trainable)


class _Completed(TypedDict, total=False):
    """The settings ``complete`` makes absolute or decides."""

    data_dir: str
    num_samples: int | None
    space: str
    storage_path: str


def complete(config: SweepConfig, space: SearchSpace) -> SweepConfig:
    """Fill what the space and the names decide, leaving only the cluster's facts open."""
    from tuner.launch.registry import is_space_path, space_label

    updates: _Completed = {
        "data_dir": str(Path(config.data_dir).expanduser().resolve()),
        "num_samples": config.trials_cap,
    }
    if is_space_path(config.space):
        updates["space"] = str(Path(config.space).expanduser().resolve())
    if not storage.is_uri(config.storage_path):
        updates["storage_path"] = str(Path(config.storage_path).expanduser().resolve())
    config = dataclasses.replace(config, **updates)
    config = _choose_scheduler(config, space)
    config = _choose_searcher(config, space)
    algorithms.for_objectives(config.objectives).check(
        config.scheduler, config.searcher, bool(config.warm_start)
    )
    if config.name is None:
        config = dataclasses.replace(config, name=_free_name(config, space_label(config.space)))
    return dataclasses.replace(config, origin=config.experiment_path)


def _choose_scheduler(config: SweepConfig, space: SearchSpace) -> SweepConfig:
    """A scheduler for every sweep: the one given, the one a given searcher needs, or what ``auto`` chooses for
    the objectives, the space and whether the trainable continues from checkpoints (and why)."""
    if config.scheduler != schedulers.AUTO:
        return config
    needs = (
        searchers.REGISTRY[config.searcher].requires_scheduler
        if config.searcher in searchers.REGISTRY
        else None
    )
    if needs:
        return dataclasses.replace(config, scheduler=needs)
    from tuner.launch.plan import keeps_checkpoints
    from tuner.launch.registry import resolve_trainable
    from tuner.searchers.plan import is_grid

    name, why = algorithms.for_objectives(config.objectives, config.constraint_list).scheduler(
        algorithms.default_scheduler(
            can_pause=keeps_checkpoints(resolve_trainable(space.trainable)),
            grids=[k for k, v in space.flat_params.items() if is_grid(v)],
        )
    )
    return dataclasses.replace(config, scheduler=name, scheduler_chosen=f"auto chose {name}: {why}")


def _choose_searcher(config: SweepConfig, space: SearchSpace) -> SweepConfig:
    """A searcher for every sweep: the one given, the scheduler's own, or what ``auto`` chooses (and why)."""
    name, why = algorithms.choose_searcher(
        config.scheduler,
        config.searcher,
        space.flat_params,
        planned_trials=config.planned_trials,
        budgeted=config.num_samples is None,
        objectives=config.objectives,
        constraints=config.constraint_list,
        warm_start=bool(config.warm_start),
    )
    chosen = f"auto chose {name}: {why}" if why else config.searcher_chosen
    return dataclasses.replace(config, searcher=name, searcher_chosen=chosen)


def _modes_by_name(metric: Given, space: SearchSpace) -> list[str]:
    """The space's mode for each metric named (``--metric`` alone may reorder or pick among the space's
    ``metrics``); a metric the space does not name needs ``--mode`` (taking the space's mode for loss, a sweep
    of ``--metric accuracy`` looked for the lowest accuracy)."""
    declared = as_mapping(space.objectives)
    modes = []
    for name in metric_names(metric):
        if name not in declared:
            close = difflib.get_close_matches(name, list(declared), n=1)
            typo = f"did you mean {close[0]}? If not, " if close else ""
            raise UsageError(
                f"--metric {name}: the space does not say whether to minimise or maximise it (it declares "
                f"{named(space.objectives)}); {typo}pass --mode min or --mode max (one per metric, e.g. "
                "--mode min,max)"
            )
        modes.append(declared[name])
    return modes


def _free_name(config: SweepConfig, label: str) -> str:
    """A generated experiment name no experiment under the storage path has yet (two sweeps started in the
    same second get -2, -3, ...)."""
    base = default_name(label, config.scheduler, config.searcher or searchers.AUTO)
    name, n = base, 1
    while _taken(config.storage_path, name):
        n += 1
        name = f"{base}-{n}"
    return name


def _taken(storage_path: str, name: str) -> bool:
    try:
        return storage.holds_experiment(storage.join(storage_path, name))
    except UsageError:
        return False  # an unusable storage path is reported on its own, with what to do
