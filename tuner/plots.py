"""PNG plots of an experiment: the metric per epoch for every trial, and each parameter against it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LOG_SPAN = 16  # positive values spanning this factor or more read better on a log axis


def log_scale_params(experiment: Any) -> set[str]:
    """Parameters declared log-uniform in the space, plus positive ones spanning a wide range."""
    names: set[str] = set()
    try:
        from ray.tune.search.sample import Domain, LogUniform

        from tuner.registry import load_space

        for name, domain in load_space(experiment.config.space).params.items():
            if isinstance(domain, Domain) and isinstance(domain.get_sampler(), LogUniform):
                names.add(name)
    except Exception:  # the space file may have moved since the sweep; fall back to the values alone
        pass
    for name in {k for t in experiment.trials for k in t.config}:
        values = [t.config.get(name) for t in experiment.trials]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if (
            numbers
            and len(numbers) == len(values)
            and min(numbers) > 0
            and max(numbers) / min(numbers) >= LOG_SPAN
        ):
            names.add(name)
    return names


def plot_experiment(experiment: Any, out_dir: Path) -> list[Path]:
    """Write the plots and return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    out_dir.mkdir(parents=True, exist_ok=True)
    metric, mode = experiment.metric, experiment.mode
    written = []

    fig, ax = plt.subplots(figsize=(8, 5))
    best = experiment.best_trial()
    for trial in experiment.trials:
        points = trial.curve(metric)  # (epoch, value) pairs; a NaN or missing value leaves a gap
        if not points:
            continue
        epochs, values = zip(*points, strict=True)
        is_best = best is not None and trial.trial_id == best.trial_id
        ax.plot(epochs, values, marker="o", markersize=3, linewidth=2.5 if is_best else 1,
                alpha=1.0 if is_best else 0.6, label=f"{trial.trial_id} (best)" if is_best else None)  # fmt: skip
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} per epoch, every trial ({experiment.config.scheduler}: stopped curves end early)")
    ax.grid(alpha=0.3)
    if best is not None:
        ax.legend()
    path = out_dir / f"{metric}_per_epoch.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    written.append(path)

    logs = log_scale_params(experiment)
    params = sorted({k for t in experiment.trials for k in t.config})
    for name in params:
        points = [
            (t.config.get(name), t.last(metric)) for t in experiment.trials if t.last(metric) is not None
        ]
        points = [(x, y) for x, y in points if isinstance(x, (int, float)) and not isinstance(x, bool)]
        if not points:
            continue
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.scatter([p[0] for p in points], [p[1] for p in points], alpha=0.8)
        if name in logs:
            ax.set_xscale("log")
        ax.set_xlabel(name + (" (log scale)" if name in logs else ""))
        ax.set_ylabel(f"final {metric} ({mode})")
        ax.grid(alpha=0.3)
        path = out_dir / f"{name}_vs_{metric}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(path)
    return written
