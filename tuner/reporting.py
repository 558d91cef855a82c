"""What the user watches while a sweep runs: the CLIReporter table, and a guard on the metric name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ray.tune import CLIReporter
from ray.tune.callback import Callback

from tuner.errors import UsageError

# Keys every Tune result carries; they say nothing about what the trainable itself reported.
_AUTO_KEYS = {
    "done", "training_iteration", "trial_id", "date", "timestamp", "time_this_iter_s", "time_total_s",
    "pid", "hostname", "node_ip", "config", "time_since_restore", "iterations_since_restore",
    "checkpoint_dir_name", "should_checkpoint", "experiment_tag",
}  # fmt: skip


# Shown only once some trial reports them (Ray drops empty metric columns): OOM fallbacks and GPU memory.
ADAPTIVE_COLUMNS = {"batch_size_effective": "batch", "oom_retries": "oom", "gpu_memory_peak_mb": "gpu MB"}


def build_reporter(metric: str, mode: str, parameters: Sequence[str]) -> CLIReporter:
    """A live table: the tuned parameters, then loss, accuracy and the epoch count, best trials first."""
    columns = {"loss": "loss", "accuracy": "accuracy"}
    if metric not in columns:
        columns = {metric: metric, **columns}
    columns.update(ADAPTIVE_COLUMNS)
    columns["training_iteration"] = "iter"
    return CLIReporter(
        metric_columns=columns,
        parameter_columns=list(parameters),
        sort_by_metric=True,
        # The table on every refresh, whatever verbosity an earlier run in this process left behind.
        print_intermediate_tables=True,
        max_report_frequency=10,
        max_progress_rows=30,
        max_error_rows=10,
    )


class MetricGuard(Callback):
    """Stops the sweep at the first result that lacks the optimised metric, naming what was reported."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self.problem: str | None = None

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        if self.metric in result:
            return
        reported = sorted(k for k in result if k not in _AUTO_KEYS)
        self.problem = (
            f"the trainable never reports metric {self.metric!r}; it reports: "
            f"{', '.join(reported) or '(nothing)'}; pass --metric with one of those"
        )
        raise UsageError(self.problem)


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
