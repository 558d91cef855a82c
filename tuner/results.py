"""Reading what a sweep produced: the best trial, its checkpoint, the failures; ``best_config.json``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tuner.storage import located, write_text

BEST_FILE = "best_config.json"


def _last_error_line(error: BaseException | None) -> str:
    if error is None:
        return ""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(error).__name__


def summarize(grid: Any, metric: str, mode: str, folder: str | Path) -> dict[str, Any]:
    """The best trial of a finished ``ResultGrid``, written to ``best_config.json`` in the experiment folder."""
    failed = [
        {"trial_id": r.metrics.get("trial_id") or Path(r.path).name, "error": _last_error_line(r.error)}
        for r in grid
        if r.error is not None
    ]
    summary: dict[str, Any] = {
        "metric": metric,
        "mode": mode,
        "trials": len(grid),
        "failed": failed,
        "experiment": str(folder),
    }
    scored = [r for r in grid if r.metrics_dataframe is not None and metric in r.metrics_dataframe]
    if scored:
        best = grid.get_best_result(metric=metric, mode=mode, scope="all", filter_nan_and_inf=True)
        frame = best.metrics_dataframe
        values = frame[metric]
        row = frame.loc[values.idxmin() if mode == "min" else values.idxmax()]
        checkpoint = best.get_best_checkpoint(metric=metric, mode=mode) if best.best_checkpoints else None
        summary.update(
            best_trial=best.metrics.get("trial_id"),
            best_value=float(row[metric]),
            best_epoch=int(row["training_iteration"]),
            config=best.config,
            checkpoint=located(folder, checkpoint.path) if checkpoint is not None else None,
            trial_path=located(folder, best.path),
        )
    write_text(folder, BEST_FILE, json.dumps(_jsonable(summary), indent=2) + "\n")
    return summary


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def format_summary(summary: dict[str, Any]) -> list[str]:
    """The lines printed when a sweep ends."""
    lines = []
    if "config" in summary:
        lines += [
            f"best trial: {summary['best_trial']} ({summary['metric']} {summary['best_value']:.4g} "
            f"at epoch {summary['best_epoch']})",
            f"  config: {json.dumps(_jsonable(summary['config']), sort_keys=True)}",
            f"  checkpoint: {summary['checkpoint']}",
        ]
    else:
        lines.append(f"no trial reported {summary['metric']!r}; no best config")
    for failure in summary["failed"]:
        lines.append(f"failed: {failure['trial_id']}: {failure['error']}")
    lines.append(
        f"{summary['trials']} trial(s), {len(summary['failed'])} failed; saved {summary['experiment']}/{BEST_FILE}"
    )
    if summary.get("unfinished"):
        lines.append(
            f"interrupted: {summary['unfinished']} trial(s) unfinished; "
            f"continue with: tuner resume {summary['experiment']}"
        )
    return lines


# --- reviewing an experiment folder (no Ray, no torch) ---------------------------------------------

FORMATS = ("table", "csv", "json")


def trial_rows(experiment: Any, top: int | None = None) -> list[dict[str, Any]]:
    """One row per trial, best first: id, status, parameters, best and last metric, epochs run."""
    metric, mode = experiment.metric, experiment.mode
    params = sorted({k for t in experiment.trials for k in t.config if not k.startswith("_")})
    rows = []
    for trial in experiment.ranked()[:top]:
        row: dict[str, Any] = {"trial_id": trial.trial_id, "status": trial.status}
        row.update({p: trial.config.get(p) for p in params})
        row[f"best_{metric}"] = trial.best(metric, mode)
        row[f"last_{metric}"] = trial.last(metric)
        row["epochs"] = trial.epochs
        if trial.error:
            row["error"] = trial.error
        rows.append(row)
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render(rows: list[dict[str, Any]], fmt: str, empty: str = "(no trials yet)") -> str:
    """Rows as an aligned text table, CSV or JSON."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if fmt == "json":
        return json.dumps(_jsonable(rows), indent=2)
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().rstrip("\n")
    if not rows:
        return empty
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def best_export(experiment: Any) -> dict[str, Any]:
    """What a training run needs from the sweep: the best config, its metric and checkpoint."""
    from tuner.errors import UsageError

    best = experiment.best_trial()
    if best is None:
        raise UsageError(f"{experiment.path} has no trial that reported {experiment.metric!r} yet")
    row = best.best_row(experiment.metric, experiment.mode) or {}
    checkpoint = experiment.best_checkpoint(best)
    return {
        "config": {k: v for k, v in best.config.items() if not k.startswith("_")},
        "metric": experiment.metric,
        "mode": experiment.mode,
        "value": best.best(experiment.metric, experiment.mode),
        "epoch": int(float(row.get("training_iteration") or 0)),
        "trial_id": best.trial_id,
        "checkpoint": str(checkpoint) if checkpoint else None,
        "experiment": str(experiment.path),
    }
