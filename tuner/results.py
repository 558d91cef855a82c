"""Reading what a sweep produced: the best trial, its checkpoint, the failures; ``best_config.json``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

BEST_FILE = "best_config.json"


def _last_error_line(error: BaseException | None) -> str:
    if error is None:
        return ""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(error).__name__


def summarize(grid: Any, metric: str, mode: str, folder: Path) -> dict[str, Any]:
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
            checkpoint=checkpoint.path if checkpoint is not None else None,
            trial_path=best.path,
        )
    (folder / BEST_FILE).write_text(json.dumps(_jsonable(summary), indent=2) + "\n", encoding="utf-8")
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
    return lines
