"""What the user watches while a sweep runs: the CLIReporter table, a guard on the metric name, OOM notices."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ray.tune import CLIReporter
from ray.tune.callback import Callback

from tuner.errors import UsageError
from tuner.ray_compat import name_trial_folders
from tuner.review.ray_state import bookkeeping

# Shown only once some trial reports them (Ray drops empty metric columns): OOM fallbacks and GPU memory.
ADAPTIVE_COLUMNS = {"batch_size_effective": "batch", "oom_retries": "oom", "gpu_memory_peak_mb": "gpu MB"}


def build_reporter(metric: str, mode: str, parameters: Sequence[str], max_epochs: int) -> CLIReporter:
    """A live table: the tuned parameters, then loss, accuracy and the epoch count, best trials first."""
    columns = {"loss": "loss", "accuracy": "accuracy"}
    if metric not in columns:
        columns = {metric: metric, **columns}
    columns[metric] = f"{metric} (last)"  # the rows are ranked by each trial's best, the column is its last
    columns.update(ADAPTIVE_COLUMNS)
    columns["training_iteration"] = "iter"
    return SweepReporter(  # metric and mode come from the sweep's TuneConfig
        max_epochs=max_epochs,
        metric_columns=columns,
        parameter_columns=list(parameters),
        sort_by_metric=False,  # SweepReporter ranks by each trial's best value, as every review does
        # The table on every refresh, whatever verbosity an earlier run in this process left behind.
        print_intermediate_tables=True,
        max_report_frequency=10,
        max_progress_rows=30,
        max_error_rows=1,
    )


_LONG_FLOAT = re.compile(r"-?\d+\.\d{5,}(?:e[-+]?\d+)?")
_SCHEDULER_LINE = re.compile(r"^Using (\w+): num_stopped=\d+.*$")
_RUNG = re.compile(r"Iter (\d+)\.0+: (-?[\d.e+-]+|None)")
_LABELS = {"AsyncHyperBand": "ASHA", "HyperBand": "HyperBand", "HyperBandForBOHB": "BOHB"}


class SweepReporter(CLIReporter):
    """Ray's CLIReporter with its status lines made true and readable.

    Ray 2.60's lines count decisions rather than stopped trials ("num_stopped=6" for 3), show ASHA's rung
    cutoffs negated for a metric to minimise, print the best value with 17 digits, and point at its own
    session folder ("Result logdir"), which is not where the experiment is.
    """

    def __init__(self, *, max_epochs: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._max_epochs = max_epochs

    def _best(self, trial: Any) -> float | None:
        value = (getattr(trial, "metric_analysis", None) or {}).get(self._metric, {}).get(self._mode)
        return value if isinstance(value, (int, float)) and value == value else None

    def _current_best_trial(self, trials: list) -> tuple[Any, str | None]:
        ranked = [t for t in self._ranked(trials) if self._best(t) is not None]
        return (ranked[0] if ranked else None), self._metric

    def _ranked(self, trials: list) -> list:
        sign = 1 if self._mode == "min" else -1
        return sorted(trials, key=lambda t: (self._best(t) is None, sign * (self._best(t) or 0.0)))

    def _progress_str(self, trials: list, done: bool, *sys_info: str, fmt: str = "psql", delim: str = "\n") -> str:
        name_trial_folders(trials)  # Ray's error table reads every trial's folder (tuner/ray_compat.py, part 8)
        if not self._metric or not self._mode:
            return super()._progress_str(trials, done, *sys_info, fmt=fmt, delim=delim)
        trials = self._ranked(trials)
        text = super()._progress_str(trials, done, *sys_info, fmt=fmt, delim=delim)
        lines, errors = [], "none"  # none -> before (blank lines) -> table -> none
        for line in text.split(delim):
            if line.startswith("Number of errored trials:"):
                # Ray's error table points at its session folder, gone once Ray stops; the sweep's end
                # names each failure with its error file inside the experiment folder.
                lines.append(line.replace("Number of errored trials", "Errored trials") + " (summarised at the end)")
                errors = "before"
                continue
            if errors != "none":
                if line.startswith(("+", "|")):
                    errors = "table"
                    continue
                if errors == "before" and (not line.strip() or line.startswith("Table truncated")):
                    continue
                errors = "none"
            if not line.startswith("Result logdir:"):
                lines.append(self._tidy(line, trials))
        return delim.join(lines)

    def _tidy(self, line: str, trials: list) -> str:
        if match := _SCHEDULER_LINE.match(line):
            label = _LABELS.get(match.group(1), match.group(1))
            return f"{label}: {stopped_early(trials, self._max_epochs)} trial(s) stopped early so far"
        if line.startswith("Bracket: ") and "Iter " in line:
            return self._rung_cutoffs(line)
        if line.startswith("Current best trial:"):
            best = self._current_best_trial(trials)[0]
            order = "lowest" if self._mode == "min" else "highest"
            line = _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.4g}", line)
            head, _, params = line.partition(" and parameters=")
            return (f"Best so far: trial {best.trial_id}, {self._metric} {self._best(best):.4g} (trials ranked by their "
                    f"best {self._metric}, {order} first); parameters={params}")  # fmt: skip
        return line

    def _rung_cutoffs(self, line: str) -> str:
        """ASHA compares a trial with the cutoff of its rung (Ray keeps them negated for min metrics)."""
        sign = -1 if self._mode == "min" else 1
        cutoffs = []
        for epoch, value in sorted(((int(e), v) for e, v in _RUNG.findall(line))):
            if epoch >= self._max_epochs:  # Ray keeps a rung at max_t, where trials end rather than compare
                continue
            cutoffs.append(f"epoch {epoch}: " + ("-" if value == "None" else f"{sign * float(value):.4g}"))
        relation = "at most" if self._mode == "min" else "at least"
        return f"rung cutoffs ({self._metric} {relation} this to go on): {', '.join(cutoffs)}"


def stopped_early(trials: list, max_epochs: int) -> int:
    """Trials that finished before their last epoch without an error: what a scheduler stopped."""
    return sum(
        1
        for t in trials
        if t.status == "TERMINATED" and (t.last_result or {}).get("training_iteration", max_epochs) < max_epochs
    )


class MetricGuard(Callback):
    """Stops the sweep at the first result that lacks the optimised metric, naming what was reported."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self.problem: str | None = None

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        if self.metric in result:
            return
        reported = sorted(k for k in result if not bookkeeping(k))
        self.problem = (
            f"the trainable never reports metric {self.metric!r}; it reports: "
            f"{', '.join(reported) or '(nothing)'}; pass --metric with one of those"
        )
        raise UsageError(self.problem)


class OomNotice(Callback):
    """Says on the driver's terminal when a trial fell back to a smaller batch after running out of memory.

    The trainable's own warning travels through Ray's worker logs, which may reach the terminal late or
    not at all when the sweep ends first; the result rows carry the same facts and arrive in order.
    """

    def __init__(self, out: Callable[[str], None]) -> None:
        self.out = out
        self.retries: dict[str, int] = {}

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        retries = int(result.get("oom_retries") or 0)
        if retries <= self.retries.get(trial.trial_id, 0):
            return
        self.retries[trial.trial_id] = retries
        batch = result.get("batch_size_effective")
        now = f"; it goes on at batch size {batch}" if batch is not None else ""
        self.out(f"trial {trial.trial_id} ran out of memory in epoch {result.get('training_iteration', '?')} "
                 f"({retries} retr{'y' if retries == 1 else 'ies'} so far){now}")  # fmt: skip


def logger_callbacks(config: Any, out: Any) -> list[Callback]:
    """Optional loggers besides the TensorBoard/CSV/JSON files Ray writes for every trial."""
    if not config.wandb:
        return []
    import os

    from ray.air.integrations.wandb import WandbLoggerCallback

    from tuner.storage import is_uri

    kwargs: dict[str, Any] = {}
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
