"""What Tune is told about each trial of a sweep: the trainable wrapped with its duties, data and resources, the
checkpoints it keeps, what is synced beside it, and its folder's name. Built here for tuner/launch/runner.py and
tuner/launch/resume.py alike, so a resumed sweep gives its trials what the first run gave them.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from tuner import storage
from tuner.launch.plan import SweepPlan
from tuner.launch.trial import forms
from tuner.settings import SweepConfig

if TYPE_CHECKING:
    from ray.tune import CheckpointConfig, SyncConfig
    from ray.tune.experiment import Trial

    from tuner.launch.trial.forms import TrainableForm


def wrapped_trainable(plan: SweepPlan, packing_key: str | None = None) -> TrainableForm:
    """The trainable with its data and resources; with auto packing, each trial's share is decided when
    the trial is created, so a lowered packing reaches the trials that follow."""
    from ray import tune

    from tuner.launch.placement import packing, resources
    from tuner.launch.trial.in_trial import in_trial
    from tuner.launch.trial.shaped import shaped
    from tuner.ray_compat import refresh_parameters

    cfg = plan.config
    refresh_parameters(plan.trainable)  # this process's earlier Ray session (a notebook's last sweep) is gone
    if packing_key is not None:
        # a function of the config that answers a dict, as Ray takes it (its annotation says a PlacementGroupFactory)
        request: Any = functools.partial(packing.trial_resources, packing_key, cfg.cpus_per_trial)
    else:
        # placed: a number
        request = resources.trial_resources(cfg.cpus_per_trial, float(cfg.gpus_per_trial or 0))
    native = plan.space.native
    trainable = in_trial(
        shaped(plan.trainable, native.shape if native is not None else None),
        storage.local_path(cfg.experiment_path),
        cfg.trial_output,
        cfg.max_epochs,
    )
    return tune.with_resources(tune.with_parameters(trainable, **plan.kwargs), request)


def checkpoint_config(plan: SweepPlan) -> CheckpointConfig:
    """Checkpoints kept per trial, the best by the metric; a class trainable that saves them is asked for one every
    epoch (Tune asks a function nothing: it reports its own), so a stopped sweep resumes where each trial was."""
    from ray import tune

    from tuner.launch.plan import keeps_checkpoints

    cfg = plan.config
    every_epoch = forms.is_class(plan.trainable) and keeps_checkpoints(plan.trainable)
    return tune.CheckpointConfig(
        num_to_keep=plan.scheduler.checkpoints_to_keep,
        checkpoint_score_attribute=cfg.objective.name,
        checkpoint_score_order=cfg.objective.mode,
        checkpoint_frequency=1 if every_epoch else 0,
        checkpoint_at_end=every_epoch,
    )


def sync_config(cfg: SweepConfig) -> SyncConfig:
    """Each trial's working folder is copied beside its results, at each checkpoint and at its end: a trial runs
    in a folder of Ray's session (/tmp/ray/session_*), so the files a trainable writes where it runs (Lightning's
    lightning_logs, a CSV of its own) would otherwise stay there, outside the experiment, on a bucket or not."""
    from ray import tune

    return tune.SyncConfig(sync_artifacts=True)


def trial_folder_name(params: list[str], trial: Trial) -> str:
    """A trial's folder (and its run name in TensorBoard): its id, then its tuned values, short."""
    from tuner.nesting import NESTING, flatten
    from tuner.values import plain

    resolved = {**flatten(trial.config), **(getattr(trial, "evaluated_params", None) or {})}
    parts = []
    for name in params:
        value = plain(resolved.get(name))
        if not isinstance(value, (int, float, str, bool)):
            continue  # drawn later (sample_from), or not a plain value
        if isinstance(value, float):
            value = f"{value:.3g}"
        text = re.sub(r"[^\w.+-]+", "_", str(value))[:16]  # a path or long text stays out of a folder name
        parts.append(f"{name.replace(NESTING, '.')}={text}")  # a nested name never makes a subfolder
    return f"{trial.trial_id}_{','.join(parts)}"[:120]
