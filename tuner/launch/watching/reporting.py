"""What the user watches while a sweep runs: the live table's columns, a guard on the metric name, OOM notices."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict

from ray.tune.callback import Callback

from tuner.errors import UsageError
from tuner.folder.fates import FateFollower
from tuner.folder.pickled import Restored, fresh
from tuner.launch.watching.live_table import LiveTable
from tuner.launch.watching.table_cells import COMPANIONS
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
    """A live table: the tuned parameters, then the metric, two common ones beside it (loss, accuracy, or what
    the trials report of ``COMPANIONS``), ``also`` (the other objectives and constrained metrics) and the epoch
    count, best trials first. ``folder``: the experiment, whose fate log says which trials the budget or a stall
    ended."""
    # the rows are ranked by each trial's best, the metric's column is its last
    kind = metric.partition("_")[0] + "_" if metric.startswith("val_") else ""  # a validation metric's first
    companions = sorted(COMPANIONS, key=lambda name: not (kind and name.startswith(kind)))
    columns = {metric: f"{metric} (last)", **{name: name for name in companions if name != metric}}
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
    """The trainable does not report a metric the sweep decides on: bad input. ``keep``: found after results
    worth keeping (a later epoch lacked it), so the experiment stays for ``tuner resume`` once the trainable is
    fixed; found at a first result, the experiment this sweep made goes, as a wrong flag changes nothing."""

    def __init__(self, message: str, keep: bool = False) -> None:
        super().__init__(message)
        self.keep = keep


_noticed: MetricNeverReported | None = None  # what the guard of this process's running sweep found (a
# resumed sweep runs the guard Ray restored, which the driver does not hold)


def metric_problem() -> MetricNeverReported | None:
    """What a MetricGuard found in the sweep that ran last in this process, else None."""
    return _noticed


def forget_metric_problem() -> None:
    global _noticed
    _noticed = None


class MetricGuard(Restored, Callback):
    """Stops the sweep at a result that lacks a metric it ranks by (the metric, each objective): every result must
    carry them, as Ray Tune requires (its searchers read them from every result). A constraint is judged on a
    trial's last result, so a figure measured once after training may come at the last epoch only: the guard
    stops the sweep only when a trial that ran all ``max_epochs`` never reported it and no trial has."""

    SINCE = {
        "objectives": lambda state: (),
        "constrained": lambda state: (),
        "_seen": fresh(dict),
        "max_epochs": lambda state: None,
        "_carried": fresh(set),
        "_reported": fresh(set),
    }

    def __init__(
        self, metric: str, *objectives: str, constrained: tuple[str, ...] = (), max_epochs: int | None = None
    ) -> None:
        self.metric = metric
        self.objectives = objectives
        self.constrained = constrained
        self.max_epochs = max_epochs
        self.problem: MetricNeverReported | None = None
        self._seen: dict[str, set[str]] = {}  # trial id -> the constrained metrics it has reported
        self._carried: set[str] = set()  # the ranked metrics some result has carried
        self._reported: set[str] = set()  # the constrained metrics some trial has reported

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        if _counts_its_own(result):
            problem = MetricNeverReported(
                f"trial {trial.trial_id} reports its own training_iteration ({result.get('training_iteration')!r} "
                "at its first report, where Tune counts 1): that key is Tune's count of reports, which the "
                "schedulers and every review read as epochs; report your own count under another name, e.g. 'epoch'"
            )
            self._set(problem)
            raise problem
        ranked = (self.metric, *self.objectives)
        missing = [m for m in ranked if m not in result]
        if missing:
            self._refuse_missing(missing[0], trial, result)
        self._carried.update(ranked)
        if self.constrained:
            here = {m for m in self.constrained if m in result}
            self._seen.setdefault(trial.trial_id, set()).update(here)
            self._reported |= here

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        """Found here, the problem ends the sweep at the step's end: Ray takes an error raised while it stops a
        trial as the trial's, with a traceback, and goes on. A trial stopped early may not have reached the
        epoch where its loop reports a constraint's metric: only a whole one says the name is wrong."""
        seen = self._seen.pop(trial.trial_id, set())
        missing = [m for m in self.constrained if m not in seen and m not in self._reported]
        last = trial.last_result or {}
        whole = self.max_epochs is None or (number(last.get("training_iteration")) or 0) >= self.max_epochs
        if missing and last and whole and self.problem is None:
            # every metric the trial reported, not only its last result's (Tune keeps each one's last value)
            ever = {**dict.fromkeys(getattr(trial, "metric_analysis", None) or {}, 0.0), **last}
            self._set(MetricNeverReported(self._never(missing[0], ever, "--constraint")))

    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        """A metric reported as a torch tensor fails the trial in Ray's ``report``; every other trial would fail
        alike, so the sweep ends at the step's end, saying what to report instead."""
        from tuner.launch.guards.crashes import last_failure
        from tuner.ray_compat.messages import TENSOR_METRIC, in_words

        failure = last_failure(trial.error_file)
        if TENSOR_METRIC in failure and self.problem is None:
            line = next((ln.strip() for ln in failure.splitlines() if TENSOR_METRIC in ln), failure.strip())
            self._set(
                MetricNeverReported(f"trial {trial.trial_id}: {in_words(line)}", keep=bool(self._carried))
            )

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        if self.problem is not None:
            raise self.problem

    def _refuse_missing(self, metric: str, trial: Trial, result: Result) -> None:
        epoch = result.get("training_iteration")
        if metric not in self._carried:
            problem = MetricNeverReported(
                f"trial {trial.trial_id}'s result at epoch {epoch} has no metric {metric!r}; it reports: "
                f"{_reported(result)}; pass --metric with one of those, or report {metric!r} at every epoch: every "
                "result must carry the metrics a sweep ranks by, as in Ray Tune"
            )
        else:
            problem = MetricNeverReported(
                f"trial {trial.trial_id}'s result at epoch {epoch} has no metric {metric!r}, which earlier results "
                f"carried; every result must carry the metrics a sweep ranks by, as in Ray Tune (report the last "
                f"value again at epochs that measure none); the results so far are kept: fix the trainable and "
                f"continue with tuner resume",
                keep=True,
            )
        self._set(problem)
        raise problem

    def _set(self, problem: MetricNeverReported) -> None:
        global _noticed
        self.problem = _noticed = problem

    @staticmethod
    def _never(metric: str, result: Result, flag: str) -> str:
        return f"the trainable never reports metric {metric!r}; it reports: {_reported(result)}; pass {flag} with one of those"


def _counts_its_own(result: Result) -> bool:
    """Whether a trial's first result since it started afresh carries a training_iteration of the trainable's
    own: Tune fills the key only where the trainable left it out, and counts 1 at a first report (a trial
    continued from a checkpoint has run longer than since it was restored, and counts on from there)."""
    fresh = result.get("iterations_since_restore") == 1 and result.get("time_total_s") == result.get(
        "time_since_restore"
    )
    return fresh and result.get("training_iteration") != 1


def _reported(result: Result) -> str:
    return ", ".join(sorted(k for k in result if not bookkeeping(k))) or "(nothing)"


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
    names = [o.name for o in cfg.objectives] + [c.metric for c in cfg.constraint_list]
    return list(dict.fromkeys(names))
