"""The Python API: ``tuner.sweep`` and ``tuner.load`` for notebooks, with the CLI's settings and errors.

``sweep`` takes the same settings as ``tuner sweep`` (keyword arguments named like its flags, resolved the
same way: arguments > TUNER_* environment > ``config`` file > the space's defaults), runs the sweep, and
returns an ``Experiment``. ``load`` opens a finished or running one. Errors are the CLI's ``UsageError``s.
An ``Experiment`` reads its folder each time it is asked (a running sweep shows its progress):
``trials`` (a DataFrame, one row a trial, best first), ``history`` (one row an epoch), ``best``, ``fates``
(how many trials met each fate), and ``report()`` for the HTML page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from tuner.errors import UsageError
from tuner.value_types import ConfigDraft
from tuner.values import as_float

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    import pandas as pd

    from tuner.experiment import ExperimentRecord
    from tuner.settings import Setting
    from tuner.spec import SearchSpace

# A keyword of ``sweep``: a flag's value (earlier experiments to warm-start from as paths too), or ``metrics``,
# each objective's name and mode.
SweepSetting: TypeAlias = "Setting | Path | Sequence[str | Path] | Mapping[str, str]"


@dataclass(frozen=True)
class Best:
    """The best trial: its config, its best value of the metric and the epoch it came at, its checkpoint."""

    trial_id: str
    config: ConfigDraft
    metric: str
    value: float
    epoch: int
    checkpoint: str | None


class Experiment:
    """A sweep's folder, read afresh on every question while it changes (so a running sweep shows its
    progress); a finished one is read again only when its files do."""

    def __init__(self, ref: str, storage_path: str | None = None) -> None:
        from tuner import experiment, where

        self.path = where.locate(ref, storage_path)
        self._stamp = experiment.fingerprint(
            self.path
        )  # before reading: a change while it reads shows next time
        self._record = experiment.load(self.path)  # read once now, so a bad folder fails here

    def _read(self) -> ExperimentRecord:
        from tuner import experiment

        stamp = experiment.fingerprint(self.path)
        if stamp is None or stamp != self._stamp:
            self._stamp, self._record = stamp, experiment.load(self.path)
        return self._record

    def __repr__(self) -> str:
        record = self._record
        return f"<tuner.Experiment {self.path}: {len(record.trials)} trials, {record.metric} ({record.mode})>"

    @property
    def metric(self) -> str:
        return self._record.metric

    @property
    def mode(self) -> str:
        return self._record.mode

    @property
    def fates(self) -> dict[str, int]:
        """How many trials met each fate ("stopped early by ASHA", "ended by its own loop", ...), most common
        first: the counts the end-of-sweep summary, ``tuner results`` and the report give."""
        return self._read().fate_counts()

    @property
    def settings(self) -> dict[str, Setting]:
        """Every resolved setting the sweep ran with (its ``tuner_config.yaml``)."""
        return self._record.config.to_dict()

    @property
    def trials(self) -> pd.DataFrame:
        """A DataFrame, one row a trial, best first: its id, config, best and last metric, best epoch, every
        other reported metric at that epoch (``NAME_at_best``), epochs run, status and fate; with several
        objectives also each other objective's last value and whether the trial is on the Pareto front, and
        under constraints whether it meets them."""
        import pandas as pd

        from tuner.review.plots import reported_metrics
        from tuner.review.results import param_columns

        record = self._read()
        metric, mode = record.metric, record.mode
        others = [o.name for o in record.config.objectives[1:]]
        at_best = [m for m in reported_metrics(record) if m != metric]
        own = [
            "trial_id",
            f"best_{metric}",
            f"last_{metric}",
            *(f"last_{n}" for n in others),
            "front",
            "feasible",
        ]
        own += ["best_epoch", *(f"{m}_at_best" for m in at_best), "epochs", "status", "fate"]
        named = param_columns(record, own)
        params = list(named.values())
        from tuner.review import findings

        on_front = findings.of(record).on_front()
        extra = [f"last_{n}" for n in others] + (["front"] if on_front is not None else [])
        extra += ["feasible"] if record.config.constraints else []
        rows = []
        for trial in record.ranked():
            best_row = trial.best_row(metric, mode) or {}
            more: dict[str, float | bool | None] = {f"last_{n}": trial.last_reported(n) for n in others}
            if on_front is not None:
                more["front"] = trial.trial_id in on_front
            if record.config.constraints:
                more["feasible"] = not record.breaks(trial) if trial.rows else None
            rows.append(
                {
                    **more,
                    "trial_id": trial.trial_id,
                    **{column: trial.config.get(p) for p, column in named.items()},
                    f"best_{metric}": trial.best(metric, mode),
                    f"last_{metric}": trial.last_reported(metric),
                    "best_epoch": _int(best_row.get("training_iteration")),
                    **{f"{m}_at_best": _float(best_row.get(m)) for m in at_best},
                    "epochs": trial.epochs,
                    "status": trial.status,
                    "fate": trial.fate,
                }
            )
        columns = [
            "trial_id",
            *params,
            f"best_{metric}",
            f"last_{metric}",
            *extra,
            "best_epoch",
            *(f"{m}_at_best" for m in at_best),
            "epochs",
            "status",
            "fate",
        ]
        return pd.DataFrame(rows, columns=columns).astype({"best_epoch": "Int64"})

    @property
    def pareto(self) -> pd.DataFrame:
        """A DataFrame of the Pareto front, one row a trial, by the first objective: its id, each objective at
        its last epoch, that epoch, its config and fate. With one objective the front has one dimension: the
        best trial, at its best epoch (empty before any trial reported)."""

        from tuner.review import findings
        from tuner.review.results import param_columns

        record = self._read()
        names = [o.name for o in record.config.objectives]
        named = param_columns(record, ["trial_id", *names, "epoch", "fate"])
        columns = ["trial_id", *names, "epoch", *named.values(), "fate"]
        return findings.of(record).frame(columns, named)

    @property
    def history(self) -> pd.DataFrame:
        """A DataFrame, one row an epoch of a trial: trial id, epoch, two clocks, and every metric the trainable
        reported (one named as a column of the frame's own, such as ``epoch``, as ``reported_epoch``).
        ``seconds``: when the epoch ended on the sweep's clock, from its first trial's start, the time between a
        stop and its resume left out (each stretch a trial trained starts to the second as Ray stamps it, plus
        its own training time): what to plot several trials against. ``trial_seconds``: the training time the trial itself had spent by then (Ray's
        ``time_total_s``), waiting for a slot not counted: what one trial's cost is."""
        import pandas as pd

        from tuner.ray_compat.state_file import bookkeeping
        from tuner.review.vocabulary import cell

        record = self._read()
        timed = [(trial, when, row) for trial in record.trials for when, row in trial.times()]
        clock = record.clock()  # the time between a stop and its resume left out
        rows = []
        own = ("trial_id", "epoch", "seconds", "trial_seconds")
        for trial, when, row in timed:
            # a metric named as one of the frame's own columns (Lightning's 0-based ``epoch``) keeps its values
            values = {
                f"reported_{k}" if k in own else k: cell(v) for k, v in row.items() if not bookkeeping(k)
            }
            rows.append(
                {
                    **values,
                    "trial_id": trial.trial_id,
                    "epoch": _int(row.get("training_iteration")),
                    "seconds": clock(when),
                    "trial_seconds": _float(row.get("time_total_s")),
                }
            )
        first = ["trial_id", "epoch", "seconds", "trial_seconds"]
        frame = pd.DataFrame(rows, columns=list(dict.fromkeys([*first, *(k for r in rows for k in r)])))
        return frame.astype({"epoch": "Int64"})

    @property
    def best(self) -> Best | None:
        """The best trial by its best value of the metric (the ranking every review uses); None before any
        trial reported it."""
        from tuner.review.export import best_export

        record = self._read()
        if record.best_trial() is None:
            return None
        best = best_export(record)
        value = as_float(best["value"])  # the best trial reported the metric (best_trial above)
        return Best(
            best["trial_id"], best["config"], best["metric"], value, best["epoch"], best["checkpoint"]
        )

    def report(self, path: str | None = None) -> str:
        """Write the HTML report (default: EXP/report.html) and return its path."""
        from pathlib import Path

        from tuner import storage
        from tuner.review.report.page import build

        record = self._read()
        if path is None:
            local = storage.local_path(record.path)
            path = str(Path(local) / "report.html") if local else f"{Path(record.path).name}-report.html"
        Path(path).write_text(build(record), encoding="utf-8")
        return path


def load(ref: str, storage_path: str | None = None) -> Experiment:
    """A finished or running experiment: a folder, a storage URI, or a name under ``storage_path`` (as
    ``tuner.sweep(storage_path=...)`` kept it; else ``TUNER_STORAGE_PATH``, else ~/tuner_results)."""
    return Experiment(ref, storage_path)


def sweep(
    space: str | SearchSpace, *, config: str | None = None, dry_run: bool = False, **settings: SweepSetting
) -> Experiment | None:
    """Run a sweep as ``tuner sweep`` does and return its experiment (None for ``dry_run``).

    ``space`` is a built-in space name, a path to a space file, a module, or a ``SearchSpace`` object;
    ``settings`` are ``tuner sweep``'s flags as keyword arguments (``scheduler="asha"``, ``num_samples=20``,
    ``max_epochs=10``, ``budget="30m"``...); several objectives as ``metrics={"loss": "min", "latency_ms": "min"}``
    (or lists for ``metric`` and ``mode``), bounds as ``constraints=["gpu_memory_peak_mb<=4000"]``. Ctrl-C (interrupting the kernel) stops the sweep in order; the
    experiment returned holds what ran, and ``tuner resume`` continues it.
    """
    import time

    from tuner.launch.layers import objectives_given
    from tuner.launch.resolve import resolve
    from tuner.launch.runner import run_sweep
    from tuner.settings import USER_SETTINGS, coerce, unknown_setting

    begun = time.time()
    if not isinstance(dry_run, bool):  # "no" is a true value: it planned and ran nothing
        raise UsageError(f"tuner.sweep(): dry_run is True or False, not {dry_run!r}")
    settings = objectives_given(settings, "tuner.sweep()")
    unknown = sorted(set(settings) - set(USER_SETTINGS))
    if unknown:
        raise unknown_setting("tuner.sweep()", unknown[0], "metrics", "config", "dry_run")
    # each in its field's type, as a flag's is: num_samples="3" is read as 3, max_epochs="abc" or 2.5 is refused
    given = {k: coerce(k, v, "tuner.sweep()") for k, v in settings.items() if v is not None}
    given["space"] = _space_ref(space)
    resolved = resolve(given, config)
    from tuner import storage_outage

    with storage_outage.bounded(None):  # the sweep's storage timeout holds for this call, as for a command
        summary = run_sweep(resolved, out=_say, dry_run=dry_run)
    if summary is None:
        return None
    from tuner.review.results import format_summary

    summary.took = time.time() - begun
    for line in format_summary(summary):
        _say(line)
    return Experiment(summary.experiment)


def _say(line: str) -> None:
    """What the sweep prints (a module function: Ray pickles the callbacks that hold it)."""
    print(line, flush=True)


def _space_ref(space: str | SearchSpace) -> str:
    """What the settings save for ``space``: its own reference, or, for an object, a name this process
    keeps it under (``tuner resume`` in another process then needs the space as a file)."""
    from tuner.launch.registry import keep_in_memory
    from tuner.spec import SearchSpace

    if isinstance(space, str):
        return space
    if isinstance(space, SearchSpace):
        return keep_in_memory(space)
    raise UsageError(
        f"tuner.sweep(space=...) takes a space name, a .py path, a module or a SearchSpace, "
        f"not {type(space).__name__}"
    )


def _int(value: str | None) -> int | None:
    number = _float(value)
    return None if number is None else int(number)


def _float(value: str | None) -> float | None:
    if value is None:  # no cell: float() would refuse it
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


__all__ = ["Best", "Experiment", "load", "sweep"]
