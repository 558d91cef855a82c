"""What the user watches while a sweep runs: the live table's columns, a guard on the metric name, OOM notices."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict

from ray.tune.callback import Callback

from tuner.errors import UsageError
from tuner.folder.fates import FateFollower
from tuner.folder.pickled import Restored, fresh
from tuner.launch.watching.live_table import LiveTable
from tuner.objectives import Constraint, Mode, Objective
from tuner.ray_compat.state_file import bookkeeping
from tuner.settings import SweepConfig
from tuner.values import number

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.value_types import Result

# Shown only once some trial reports them (the table leaves out columns no trial has): OOM fallbacks and GPU memory.
ADAPTIVE_COLUMNS = {"batch_size_effective": "batch", "oom_retries": "oom", "gpu_memory_peak_mb": "gpu MB"}


def build_reporter(
    metric: str,
    mode: Mode,
    parameters: Sequence[str],
    max_epochs: int,
    also: Sequence[str] = (),
    objectives: Sequence[Objective] = (),
    constraints: Sequence[Constraint] = (),
    stopped_label: str | None = None,
    folder: str | None = None,
) -> LiveTable:
    """A live table: the tuned parameters, then loss, accuracy (and ``also``: the other objectives and
    constrained metrics) and the epoch count, best trials first. ``folder``: the experiment, whose fate log
    says which trials the budget or a stall ended."""
    columns = {"loss": "loss", "accuracy": "accuracy"}
    if metric not in columns:
        columns = {metric: metric, **columns}
    columns[metric] = f"{metric} (last)"  # the rows are ranked by each trial's best, the column is its last
    columns.update({name: name for name in also if name not in columns})
    columns.update(ADAPTIVE_COLUMNS)
    columns["training_iteration"] = "epoch"
    return LiveTable(
        metric=metric,
        mode=mode,
        parameters=parameters,
        columns=columns,
        max_epochs=max_epochs,
        stopped_label=stopped_label,
        objectives=objectives,
        constraints=constraints,
        fates=FateFollower(folder) if folder else None,
    )


class MetricNeverReported(UsageError):
    """The trainable does not report a metric the sweep decides on: bad input, found at its first result."""


_noticed: str | None = None  # what the guard of this process's running sweep found (a resumed sweep runs
# the guard Ray restored, which the driver does not hold)


def metric_problem() -> str | None:
    """What a MetricGuard found in the sweep that ran last in this process, else None."""
    return _noticed


def forget_metric_problem() -> None:
    global _noticed
    _noticed = None


class MetricGuard(Restored, Callback):
    """Stops the sweep at the first result that lacks a metric it ranks by (the metric, each objective), and at
    the end of the first trial that never reported a constraint's metric (a constraint is judged on a trial's
    last result, so a figure measured once after training is reported at the last epoch only), naming what was
    reported."""

    SINCE = {"objectives": lambda state: (), "constrained": lambda state: (), "_seen": fresh(dict)}

    def __init__(self, metric: str, *objectives: str, constrained: tuple[str, ...] = ()) -> None:
        self.metric = metric
        self.objectives = objectives
        self.constrained = constrained
        self.problem: str | None = None
        self._seen: dict[str, set[str]] = {}  # trial id -> the constrained metrics it has reported

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        missing = [m for m in (self.metric, *self.objectives) if m not in result]
        if missing:
            self._refuse(missing[0], result, "--metric")
        if self.constrained:
            self._seen.setdefault(trial.trial_id, set()).update(m for m in self.constrained if m in result)

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        """Found here, the problem ends the sweep at the step's end: Ray takes an error raised while it stops a
        trial as the trial's, with a traceback, and goes on."""
        seen = self._seen.pop(trial.trial_id, set())
        missing = [m for m in self.constrained if m not in seen]
        if missing and trial.last_result and self.problem is None:
            self._name(missing[0], trial.last_result, "--constraint")

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        if self.problem is not None:
            raise MetricNeverReported(self.problem)

    def _refuse(self, metric: str, result: Result, flag: str) -> None:
        raise MetricNeverReported(self._name(metric, result, flag))

    def _name(self, metric: str, result: Result, flag: str) -> str:
        global _noticed
        reported = sorted(k for k in result if not bookkeeping(k))
        self.problem = _noticed = (
            f"the trainable never reports metric {metric!r}; it reports: "
            f"{', '.join(reported) or '(nothing)'}; pass {flag} with one of those"
        )
        return self.problem


class OomNotice(Callback):
    """Says on the driver's terminal when a trial fell back to a smaller batch after running out of memory.

    The trainable's own warning travels through Ray's worker logs, which may reach the terminal late or
    not at all when the sweep ends first; the result rows carry the same facts and arrive in order.
    """

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.retries: dict[str, int] = {}

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        retries = int(number(result.get("oom_retries")) or 0)
        if retries <= self.retries.get(trial.trial_id, 0):
            return
        self.retries[trial.trial_id] = retries
        batch = result.get("batch_size_effective")
        now = f"; it goes on at batch size {batch}" if batch is not None else ""
        self.out(
            f"trial {trial.trial_id} ran out of memory in epoch {result.get('training_iteration', '?')} "
            f"({retries} retr{'y' if retries == 1 else 'ies'} so far){now}"
        )


class _WandbPlace(TypedDict, total=False):
    """Where and how wandb logs, when tuner decides it."""

    dir: str
    mode: str


def logger_callbacks(config: SweepConfig, out: Callable[[str], None]) -> list[Callback]:
    """Optional loggers besides the TensorBoard/CSV/JSON files Ray writes for every trial."""
    if not config.wandb:
        return []
    import os

    from ray.air.integrations.wandb import WandbLoggerCallback

    from tuner.storage import is_uri

    kwargs: _WandbPlace = {}
    folder = config.experiment_path
    if not is_uri(folder):
        # Written straight into the experiment folder: Ray's end-of-run sync of trial folders can copy a
        # wandb run before wandb has flushed it.
        kwargs["dir"] = folder
    if not os.environ.get("WANDB_API_KEY") and os.environ.get("WANDB_MODE") != "online":
        os.environ["WANDB_MODE"] = "offline"
        kwargs["mode"] = "offline"
        out(
            f"wandb: no WANDB_API_KEY, logging offline (no network, no prompt) to {folder}/wandb/; "
            f"upload later with: wandb sync {folder}/wandb/offline-run-*"
        )
    return [
        WandbLoggerCallback(
            project=config.wandb_project or "tuner",
            group=config.wandb_group or config.name,
            log_config=True,
            **kwargs,
        )
    ]


def watched_metrics(cfg: SweepConfig) -> list[str]:
    """Every metric the sweep decides on, its first objective first: each objective, each constraint's."""
    names = [o.name for o in cfg.objective_list] + [c.metric for c in cfg.constraint_list]
    return list(dict.fromkeys(names))
