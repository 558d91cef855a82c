"""The one reader of an experiment: its settings, trials, statuses, metrics per epoch, best trial, checkpoints.

Plain files only (YAML, JSON, CSV) read through tuner/storage.py, so a local folder and a bucket URI
(``s3://``, ``gs://``, ``file://``) read the same way; no Ray, no torch, so ``tuner results`` is quick and
works on a sweep that is still running or was killed. The end-of-sweep summary and every review command
use the same definition of the best trial: the best value of the metric within each trial.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from tuner import storage
from tuner.errors import UsageError
from tuner.folder import horizon as trial_length
from tuner.folder import plan
from tuner.folder.fates import cut_by_scheduler, family
from tuner.folder.names import STDOUT_FILE
from tuner.folder.progress_rows import Row, config_at, read_rows, result_times
from tuner.nesting import flatten
from tuner.objectives import Mode, pick, sign
from tuner.ray_compat.messages import in_words
from tuner.ray_compat.state_file import saved_trial_states
from tuner.settings import SweepConfig, load_saved_config
from tuner.value_types import ConfigDraft
from tuner.values import number as _number
from tuner.where import locate

if TYPE_CHECKING:
    from collections.abc import Callable

    from tuner.folder.fates import RungRecord
    from tuner.ray_compat.state_file import TrialState


@dataclass
class TrialRecord:
    """One trial as its folder and the experiment state describe it."""

    trial_id: str
    path: str
    status: str
    # by full names (model/width), as params.json holds them; one PBT changed, as its best epoch was trained
    config: ConfigDraft
    rows: list[Row] = field(default_factory=list)
    error: str = ""  # the last line of its error
    error_file: str | None = None  # the whole error, inside the experiment folder
    fate: str = ""  # why it ended where it did (tuner/folder/fates.py)
    loop_end: int | None = None  # the epoch its own loop ended it, below --max-epochs (fates.loop_end)
    rungs: list[RungRecord] = field(default_factory=list)  # each comparison at a rung, as decided
    perturbed: list[str] = field(default_factory=list)  # PBT: each time it took a better trial's checkpoint
    # each metric's finite values, read once: a large sweep's views rank thousands of trials several times
    _values: dict[str, list[float]] = field(default_factory=dict, repr=False, compare=False)
    _best: dict[tuple[str, str], float | None] = field(default_factory=dict, repr=False, compare=False)

    @property
    def epochs(self) -> int:
        return max((int(float(r.get("training_iteration") or 0)) for r in self.rows), default=0)

    def values(self, metric: str) -> list[float]:
        """The finite values of ``metric``, epoch by epoch (the rows are read once, as loaded)."""
        found = self._values.get(metric)
        if found is None:
            found = self._values[metric] = [
                v for v in (_number(r.get(metric)) for r in self.rows) if v is not None
            ]
        return found

    def curve(self, metric: str) -> list[tuple[int, float]]:
        """(epoch, value) for every epoch whose value is a finite number."""
        return [
            (int(float(r.get("training_iteration") or 0)), v)
            for r in self.rows
            if (v := _number(r.get(metric))) is not None
        ]

    def best(self, metric: str, mode: Mode) -> float | None:
        key = (metric, mode)
        if key not in self._best:
            values = self.values(metric)
            self._best[key] = pick(mode)(values) if values else None
        return self._best[key]

    def scored(self, metric: str, mode: Mode) -> float:
        """``best`` for a trial already known to have reported the metric (views that keep only such trials)."""
        value = self.best(metric, mode)
        if value is None:
            raise ValueError(f"trial {self.trial_id} reported no {metric}")
        return value

    def last(self, metric: str) -> float | None:
        values = self.values(metric)
        return values[-1] if values else None

    def last_reported(self, metric: str) -> float | None:
        """The last value reported, NaN or infinite included (what a table shows; never ranked)."""
        for row in reversed(self.rows):
            try:
                return float(row[metric])
            except (KeyError, TypeError, ValueError):
                continue
        return None

    def nonfinite(self, metric: str) -> str:
        """The first NaN or infinite value of ``metric`` the trial reported, in words ("" if none): such a
        value is shown as what it is, and never ranked."""
        for row in self.rows:
            try:
                value = float(row[metric])
            except (KeyError, TypeError, ValueError):
                continue
            if not math.isfinite(value):
                return f"{metric} was {value} at epoch {int(float(row.get('training_iteration') or 0))}"
        return ""

    def times(self) -> list[tuple[float, Row]]:
        """(seconds since the epoch, row) for each result (``progress_rows.result_times``)."""
        return result_times(self.rows)

    def output(self, name: str = STDOUT_FILE) -> str:
        """What the trial printed to standard output (``stdout.log``) or error (``stderr.log``), over all its runs."""
        return storage.read_text(self.path, name) or ""

    def best_row(self, metric: str, mode: Mode) -> Row | None:
        """The epoch of the best value; of epochs tied on it, the latest, whose checkpoint Ray keeps (it keeps the
        newer of equal scores): the first was named best while a later epoch's checkpoint stood in for it."""
        scored = [(v, r) for r in reversed(self.rows) if (v := _number(r.get(metric))) is not None]
        if not scored:
            return None
        return pick(mode)(scored, key=lambda pair: pair[0])[1]


@dataclass
class ExperimentRecord:
    """An experiment as its folder describes it now (tuner.Experiment, the notebook's handle, reads one of these
    afresh each time it is asked)."""

    path: str
    config: SweepConfig
    trials: list[TrialRecord]
    running: bool = False  # a process runs the sweep now: what is read is how it stands at this moment

    @cached_property  # a record is read once and not changed; a report asks these tens of thousands of times
    def metric(self) -> str:
        return self.config.objective.name

    @cached_property
    def mode(self) -> Mode:
        return self.config.objective.mode

    def ranked(self) -> list[TrialRecord]:
        """Trials by the best value of the metric within each, best first; trials with no result last, under
        constraints those that break one after those that do not, and those that failed after those that did
        not (a config that crashes is never recommended while one that ran is there)."""
        return list(self._ranked)

    @cached_property  # a record is read once and not changed; a report ranks its trials a dozen times
    def _ranked(self) -> tuple[TrialRecord, ...]:
        towards = sign(self.mode)
        return tuple(
            sorted(
                self.trials,
                key=lambda t: (
                    t.best(self.metric, self.mode) is None,
                    bool(self.breaks(t)),
                    t.status == "ERROR",
                    towards * (t.best(self.metric, self.mode) or 0.0),
                ),
            )
        )

    @cached_property  # a record is read once and not changed
    def horizon(self) -> int:
        """The epochs a trial runs unless something stops it: ``--max-epochs``, or where the trainable's own
        loop ends trials when that comes sooner and no trial ran further (tuner/folder/horizon.py)."""
        # a trainable that loops to max_epochs ended any trial sooner for a reason of its own (plan.own_loop)
        ends = [t.loop_end for t in self.trials if t.loop_end is not None] if plan.own_loop(self.path) else []
        furthest = max((t.epochs for t in self.trials), default=0)
        return trial_length.horizon(self.config.max_epochs, max(ends, default=0), furthest)

    def fate_counts(self) -> dict[str, int]:
        """How many trials met each fate, by its family ("stopped early by ASHA", "ended by its own loop"),
        most common first: what the summary, ``tuner results`` and ``tuner.load`` count."""
        from collections import Counter

        return dict(Counter(family(t.fate) for t in self.trials).most_common())

    def epochs_cut(self, trial: TrialRecord) -> int:
        """Epochs a scheduler cut from a trial: from where it stopped (or was paused for good) to the horizon;
        none for a trial that ran to its end or that its own loop, the budget or an error ended."""
        return max(self.horizon - trial.epochs, 0) if cut_by_scheduler(trial.fate) else 0

    def breaks(self, trial: TrialRecord) -> list[str]:
        """The constraints (``--constraint``) the trial breaks, in words, each judged on the value it last reported;
        none without constraints."""
        constraints = self.config.constraint_list
        if not constraints or not trial.rows:
            return []
        from tuner.objectives import broken, judged

        return broken(constraints, judged(constraints, trial.rows))

    def best_trial(self) -> TrialRecord | None:
        """The best trial by the first objective; under constraints, the best that meets them all; one that
        failed only when every trial with a result failed."""
        ranked = [
            t for t in self.ranked() if t.best(self.metric, self.mode) is not None and not self.breaks(t)
        ]
        return ranked[0] if ranked else None

    def best_checkpoint(self, trial: TrialRecord) -> str | None:
        """The checkpoint saved at the trial's best epoch; where that epoch saved none, or its checkpoint is
        damaged (tuner/folder/checkpoints.py), the best whole one kept by the metric, else the newest."""
        return self.checkpoint_choice(trial)[0]

    def checkpoint_choice(self, trial: TrialRecord) -> tuple[str | None, str | None]:
        """``best_checkpoint``, and why it is not the best epoch's own, in words (None when it is)."""
        from tuner.folder.checkpoints import choose_for_best

        best = trial.best_row(self.metric, self.mode)
        return choose_for_best(trial.path, trial.rows, best, self.metric, self.mode)

    def at_once(self) -> int | None:
        """The most trials the sweep ran at once (its ``spent.json``, or while it runs the driver's own
        count beside it), None where it was not recorded."""
        from tuner.folder import spent

        return spent.read(self.path).at_once or None

    def clock(self) -> Callable[[float], float]:
        """Seconds since the epoch to seconds of the sweep, what the review plots against: from its first trial's
        start, the time between a stop and its resume left out (``Spent.clock``); an experiment that recorded
        no runs counts from its first trial's start, as its results tell it."""
        from tuner.folder import spent

        timed = [(when, row) for t in self.trials for when, row in t.times()]
        first = min(
            (when - (_number(row.get("time_this_iter_s")) or 0.0) for when, row in timed), default=0.0
        )
        record = spent.read(self.path)
        runs = record.spans()
        if (
            runs
        ):  # results from before runs were recorded (an experiment of an earlier tuner, resumed): one run
            earlier = [when for when, _ in timed if when < runs[0][0]]
            if earlier:
                record.runs = [[first, max(earlier)], *(list(r) for r in runs)]
        sweep = record.clock()
        return sweep if sweep is not None else (lambda when: when - first)

    def epochs_trained(self) -> int:
        """Epochs trained in all, each one run again counted again (a trial continued from a checkpoint older than
        its pause): the sweep's own count (``spent.json``), at least the distinct epochs its trials hold."""
        from tuner.folder import spent

        return max(spent.read(self.path).epochs, sum(t.epochs for t in self.trials))

    def planned_at_once(self) -> int | None:
        """How many trials the plan let run at once, None where no plan was kept (tuner/folder/plan.py)."""
        return plan.trials_at_once(self.path)

    def scales(self) -> dict[str, str]:
        """Each numeric parameter's scale as the space draws it ("log" or "linear"; tuner/folder/plan.py)."""
        return plan.scales(self.path)

    def plan_lines(self) -> list[str]:
        """The plan the sweep printed before its first trial (empty for a sweep made before it was kept)."""
        return plan.lines(self.path)

    def failed(self) -> list[TrialRecord]:
        return [t for t in self.trials if t.status == "ERROR"]

    def trial(self, ref: str) -> TrialRecord:
        """A trial by its id, a unique start of it, or its folder's name; else a one-line error."""
        exact = [t for t in self.trials if ref in (t.trial_id, storage.split(t.path)[1])]
        found = exact or [t for t in self.trials if t.trial_id.startswith(ref)]
        if len(found) == 1:
            return found[0]
        if not found:
            ids = ", ".join(t.trial_id for t in self.trials[:8]) + (", ..." if len(self.trials) > 8 else "")
            raise UsageError(f"no trial {ref!r} in {self.path}; its trials: {ids or '(none)'}")
        raise UsageError(
            f"{ref!r} names {len(found)} trials ({', '.join(t.trial_id for t in found[:4])}); give more of the id"
        )


# --- finding an experiment ---------------------------------------------------------------------------


# --- one trial's files -------------------------------------------------------------------------------


def last_line(text: str) -> str:
    """The last non-empty line of an error or traceback: what a one-line summary shows."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _trial_id(dir_name: str, rows: list[Row], known: dict[str, str]) -> str:
    """The trial id from Ray's state, else from the trial's own results, else from its folder name."""
    if dir_name in known:
        return known[dir_name]
    if rows and rows[0].get("trial_id"):
        return rows[0]["trial_id"]
    return dir_name


def fingerprint(folder: str) -> int | None:
    """A number that changes when a finished local experiment does (a file at its top written or added, a
    folder added or removed); None where only reading it again tells (a bucket, or a sweep running now)."""
    from tuner.claim import held_elsewhere

    local = storage.local_path(folder)
    if local is None or held_elsewhere(folder):
        return None
    try:
        with os.scandir(local) as entries:
            return hash(
                frozenset(
                    (e.name, None) if e.is_dir() else (e.name, e.stat().st_mtime_ns, e.stat().st_size)
                    for e in entries
                )
            )
    except OSError:
        return None


def load(ref: str, running: bool | None = None, storage_path: str | None = None) -> ExperimentRecord:
    """The experiment at ``ref`` (a name is looked for under ``storage_path``: tuner/where.py); ``running`` says
    whether a process runs it now (a live page built by the sweep itself), else its claim tells."""
    from tuner.claim import held_elsewhere
    from tuner.folder import fates, unsaved

    folder = locate(ref, storage_path)
    live = held_elsewhere(folder) if running is None else running
    config = load_saved_config(folder)
    states = saved_trial_states(folder)
    decisions = fates.recorded(folder)
    known = {state["dir"]: trial_id for trial_id, state in states.items() if state["dir"]}
    # a folder Ray's state does not list is a trial's once it has its parameters, unless a restart or a resume
    # replaced it (tuner/folder/unsaved.py)
    dirs = set(known) | unsaved.unlisted(folder, set(known))
    trials = []
    wanted = (*(o.name for o in config.objectives), *(c.metric for c in config.constraint_list))
    asked = plan.inactive_dropped(folder)
    for dir_name in sorted(dirs):
        trial_path = storage.join(folder, dir_name)
        rows = read_rows(trial_path, wanted)
        trial_id = _trial_id(dir_name, rows, known)
        state: TrialState = states.get(trial_id, {})
        try:
            trial_config = json.loads(storage.read_text(trial_path, "params.json") or "{}")
        except ValueError:
            trial_config = {}
        # a trial not started yet has no params.json
        trial_config = trial_config or dict(state.get("config") or {})
        # a nested config's parameters by their full names (model/width), those its branch did not ask left out
        trial_config = asked(flatten(trial_config))
        status = state.get("status") or ("RUNNING" if rows else "PENDING")
        error, error_file = "", None
        decision = decisions.get(trial_id)
        if status == "ERROR":
            name = state.get("error_file") or "error.txt"
            error = fates.failure(decision) or in_words(last_line(storage.read_text(trial_path, name) or ""))
            error_file = storage.join(trial_path, name) if storage.exists(trial_path, name) else None
        record = TrialRecord(trial_id, trial_path, status, trial_config, rows, error, error_file)
        record.rungs = [r for r in (decision or {}).get("rungs", []) if isinstance(r, dict)]
        record.perturbed = list((decision or {}).get("perturbed", []))
        record.fate = fates.fate(
            status,
            record.epochs,
            config.max_epochs,
            error,
            decision,
            record.nonfinite(config.objective.name),
            live,
        )
        record.loop_end = fates.loop_end(status, record.epochs, config.max_epochs, decision)
        if (decision or {}).get("perturbed") and (
            at_best := record.best_row(config.objective.name, config.objective.mode)
        ):
            trained = config_at(trial_path, at_best)  # PBT changed its config: the best epoch's stands
            record.config = asked(flatten(trained)) if trained is not None else record.config
        trials.append(record)
    made = {trial_id: state.get("made") for trial_id, state in states.items()}
    # the order Tune made them
    trials.sort(key=lambda t: (made.get(t.trial_id) is None, made.get(t.trial_id) or 0))
    return ExperimentRecord(folder, config, trials, live)
