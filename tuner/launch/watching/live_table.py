"""The live table: what the terminal shows every few seconds while trials run, through Ray's public
``ProgressReporter``.

Rows are ranked by each trial's best value (as every review ranks them), trials without one last, and that value
has a column of its own beside the last one reported, so the order reads off the table; the status lines
say what is true: the trials the scheduler stopped early, the scheduler's own state (each of tuner's schedulers
says it in its ``debug_string``), the best trial so far (one that breaks a ``--constraint`` never is), and on
several objectives the front, its trials marked in the table. A diagnostic of the run (the OOM fallback's batch
size and retries) is shown only once it says something. Each trial's state is said in words (running,
stopped early, finished, errored) rather than Tune's status names, trials are named by their bare ids as the
review names them, numbers have 4 significant figures, and where a trial runs is shown only on a cluster.
Errored trials are counted here and named with their error files when the sweep ends, so nothing here reads a
trial's folder.
"""

from __future__ import annotations

import heapq
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ray.tune import Callback, ProgressReporter

from tuner.folder.fates import FateFollower
from tuner.folder.pickled import Restored, fresh, none
from tuner.folder.progress_rows import went_back
from tuner.launch.watching.front_marks import OneBest, marks
from tuner.launch.watching.table_cells import (
    ENDED_BY_BUDGET,
    FINISHED,
    NEVER_STARTED,
    NO_REPORT,
    STOPPED_EARLY,
    TO_CONTINUE,
    breaks_constraints,
    cell,
    clock_line,
    ended_by_the_sweep,
    fair_share,
    in_order,
    location,
    lookup,
    metric_columns,
    place_of,
    result_of,
    short,
)
from tuner.launch.watching.table_rows import Ranked, RankKey, TableRows
from tuner.objectives import MODES, Constraint, Mode, Objective, as_mode, pick, sign
from tuner.values import number

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.value_types import Result, Value

EVERY_S = 10.0
MAX_ROWS = 30
MAX_FINAL_ROWS = 100  # the last table shows every trial up to this many; a larger sweep's is bounded too
FLOAT_FORMAT = ".4g"  # four significant figures: enough to rank trials, few enough to read

# Tune's statuses in the words the review uses; a TERMINATED trial is "finished" or "stopped early" by its epochs.
WORDS = {"PENDING": "pending", "RUNNING": "running", "PAUSED": "paused", "ERROR": "errored"}


class LiveTable(Restored, ProgressReporter):
    """Prints the status and the table of trials every ``every_s`` seconds and once when the sweep ends.

    ``columns`` maps each reported metric to its heading (a metric no trial has reported yet is left out);
    ``stopped_label`` names the scheduler on the line that counts the trials it stopped early (None: a
    scheduler that stops none, or one that counts them in its own status line).
    """

    SINCE = {
        "_rows": fresh(TableRows),
        "_loop_ended": fresh(set),
        "_curves": fresh(dict),
        "_went_back": fresh(set),
        "fates": none,
    }

    def __init__(
        self,
        *,
        metric: str,
        mode: Mode,
        parameters: Sequence[str],
        columns: Mapping[str, str],
        max_epochs: int,
        stopped_label: str | None = None,
        objectives: Sequence[Objective] = (),
        constraints: Sequence[Constraint] = (),
        every_s: float = EVERY_S,
        max_rows: int = MAX_ROWS,
        out: Callable[[str], None] | None = None,
        fates: FateFollower | None = None,
    ) -> None:
        self.metric, self.mode = metric, mode
        self.fates = fates  # why trials ended: a budget's or a stall's end is not a scheduler's stop
        self.parameters, self.columns = list(parameters), dict(columns)
        self.max_epochs, self.stopped_label = max_epochs, stopped_label
        self.objectives, self.constraints = tuple(objectives), tuple(constraints)
        self.every_s, self.max_rows, self.out = every_s, max_rows, out
        self.start = time.time()
        self.total: int | None = None
        self._last = float("-inf")
        self._rows = TableRows()  # the finished trials, ranked and counted once
        self._loop_ended: set[str] = set()
        # trial id -> (epoch, value) of each result as its rows stand (``BestSeen``); a report at an epoch it had
        # passed (continued from an older checkpoint, or from the start without one) supersedes the later ones
        self._curves: dict[str, list[tuple[float | None, float | None]]] = {}
        self._went_back: set[str] = set()  # trials that did: Ray's own record of their best counts what went

    def setup(
        self,
        start_time: float | None = None,
        total_samples: int | None = None,
        metric: str | None = None,
        mode: str | None = None,
        **kwargs: object,
    ) -> None:
        self.start = start_time or time.time()
        # a sweep that a budget ends plans no number of trials: Tune's count is then the largest int
        self.total = total_samples if total_samples is not None and total_samples < sys.maxsize else None
        self.metric = metric or self.metric
        self.mode = as_mode(mode) if mode in MODES else self.mode
        self._last = float("-inf")  # a resumed sweep shows its table at once

    def should_report(self, trials: list[Trial], done: bool = False) -> bool:
        now = time.monotonic()
        if done or now - self._last >= self.every_s:
            self._last = now
            return True
        return False

    def report(self, trials: list[Trial], done: bool, *sys_info: str) -> None:
        # print looked up when called: Ray pickles the reporter, and a print replaced since (a notebook's,
        # a test's) would not pickle
        (self.out or print)(self.text(trials, done, *sys_info))

    def text(self, trials: list[Trial], done: bool = False, *sys_info: str) -> str:
        """The whole status: header lines, the table, the error count. What it costs follows the trials still
        open and the rows shown: the finished trials are ranked and counted once (tuner/launch/watching/table_rows.py)."""
        rows = self._rows
        open_ranked = rows.update(
            trials, (self.metric, self.mode), self._key, self.state, place_of, self._point
        )
        rows.recount(self.max_epochs, self.loop_ended, self.state)
        states = rows.states + Counter(self.state(t) for _, _, t in open_ranked)
        groups: dict[str, list[Ranked]] = {}
        for entry in open_ranked:
            groups.setdefault(entry[2].status, []).append(entry)
        groups.update(rows.finished_groups())
        groups = dict(sorted(((s, g) for s, g in groups.items() if g), key=lambda item: item[1][0]))
        lines = ["== Status ==", clock_line(self.start)]
        if self.stopped_label:
            lines.append(f"{self.stopped_label}: {states[STOPPED_EARLY]} trial(s) stopped early so far")
        lines += [line for info in sys_info for line in str(info).splitlines() if line.strip()]
        front = self._front(rows.front, open_ranked)
        first = next(iter(groups.values()))[0] if groups else None
        lines += self._best_line(first, front)
        lines.append(self._counts(len(trials), states))
        # the last table shows every trial of a sweep a terminal can hold; a larger one's, as while it ran
        final = None if len(trials) <= MAX_FINAL_ROWS else self.max_rows
        places = rows.places | {place_of(t) for _, _, t in open_ranked}
        lines += self._table(groups, states, front, places, limit=final if done else self.max_rows)
        if states[WORDS["ERROR"]]:
            lines.append(f"Errored trials: {states[WORDS['ERROR']]} (summarised at the end)")
        return "\n".join(lines) + "\n"

    # --- ranking ---------------------------------------------------------------------------------------------

    def best(self, trial: Trial) -> float | None:
        """A trial's best finite value of the metric so far: from every result this run (``BestSeen``), Ray's
        own tracking for what came before a resume (Ray's is lost at a NaN: it keeps the NaN, then the next
        value, whatever came before), and its last result, which PBT replaces with the donor's when the trial
        takes the donor's checkpoint (so its last is never better than its best)."""
        ray = number((getattr(trial, "metric_analysis", None) or {}).get(self.metric, {}).get(self.mode))
        if trial.trial_id in self._went_back:
            ray = None  # it still counts the results the trial went back past
        last = number(result_of(trial).get(self.metric))
        values = [v for _, v in self._curves.get(trial.trial_id, ()) if v is not None]
        seen = [v for v in (pick(self.mode)(values) if values else None, ray, last) if v is not None]
        return pick(self.mode)(seen) if seen else None

    def saw(self, trial_id: str, result: Result) -> None:
        """A trial's result, each one as it arrives (``read_rows`` reads its rows so afterwards)."""
        epoch = number(result.get("training_iteration"))
        curve = self._curves.setdefault(trial_id, [])
        if went_back(curve, epoch, lambda point: point[0]):
            self._went_back.add(trial_id)
        curve.append((epoch, number(result.get(self.metric))))

    def breaks(self, trial: Trial) -> bool:
        return breaks_constraints(self.constraints, trial)

    def ranked(self, trials: list[Trial]) -> list[Trial]:
        """Best first: trials with a value before those without, those that meet the constraints first, those
        that failed after those that did not."""
        return sorted(trials, key=self._key)

    def _key(self, trial: Trial) -> RankKey:
        best = self.best(trial)
        errored = (
            trial.status == "ERROR"
        )  # a config that crashed is not recommended while one that ran is there
        return (best is None, self.breaks(trial), errored, sign(self.mode) * (best or 0.0))

    # --- lines -----------------------------------------------------------------------------------------------

    @property
    def loop_ended(self) -> set[str]:
        """Trials the trainable's own loop ended (tuner/launch/guards/loop_end.py): finished, whatever their
        epochs."""
        return self._loop_ended

    def state(self, trial: Trial) -> str:
        """A trial's state in words: a TERMINATED trial is stopped early below ``max_epochs`` unless its own loop,
        the budget or a stall ended it, else finished; one without a result never started (the budget ran out as
        it was made), or its trainable returned without a report."""
        epoch = number(result_of(trial).get("training_iteration"))
        if trial.status in ("PAUSED", "PENDING") and epoch is not None and epoch >= self.max_epochs:
            return FINISHED  # paused at its last epoch (HyperBand waits for its bracket): nothing left to run
        if trial.status == "PENDING" and epoch is not None:  # a paused one, continued
            return TO_CONTINUE
        if trial.status != "TERMINATED":
            return WORDS.get(trial.status, trial.status.lower())
        if trial.trial_id in self.loop_ended:
            return FINISHED
        if "training_iteration" not in result_of(trial):  # ended before its first epoch
            cut = ended_by_the_sweep(self.fates, trial.trial_id, 0)
            if cut == ENDED_BY_BUDGET:
                return NEVER_STARTED  # made as the budget ran out
            return cut or NO_REPORT  # a stall's end; else its trainable returned without a report
        if epoch is None or epoch >= self.max_epochs:
            return FINISHED
        return ended_by_the_sweep(self.fates, trial.trial_id, int(epoch)) or STOPPED_EARLY

    def _best_line(self, first: Ranked | None, front: list[Trial]) -> list[str]:
        """``first``: the first trial in rank order (one with a value that meets the constraints, if any has)."""
        if first is None or first[0][0]:
            return []
        if first[0][1]:
            return [f"Best so far: none yet that meets {', '.join(map(str, self.constraints))}"]
        best = first[2]
        order = "lowest" if self.mode == "min" else "highest"
        last = ", those that break a bound last" if self.constraints else ""
        params = "{" + ", ".join(f"'{k}': {short(v)}" for k, v in self._params(best).items()) + "}"
        ranked = f"{order} first{last}"
        value = self.best(best)
        assert value is not None  # ranked first with a value
        return self._marks.best_lines(front, best.trial_id, value, self.metric, ranked, params)

    @property
    def _marks(self) -> OneBest:
        return marks(tuple(self.objectives))

    def _point(self, trial: Trial) -> list[float] | None:
        """A trial's point on the objectives at its last result (none with one objective)."""
        return self._marks.point(trial, self.breaks)

    def _front(
        self, finished_front: list[tuple[Ranked, list[float]]], open_ranked: list[Ranked]
    ) -> list[Trial]:
        """The trials on the front of the results so far (each at its last result), in rank order: the front of
        the finished trials' front and the open trials (none with one objective: no trial has a point)."""
        from tuner import pareto

        candidates = list(finished_front)
        candidates += [(entry, p) for entry in open_ranked if (p := self._point(entry[2])) is not None]
        on_front = [candidates[i][0] for i in pareto.front([p for _, p in candidates])]
        return [t for _, _, t in sorted(on_front)]

    def _counts(self, total: int, states: Counter[str]) -> str:
        counts = ", ".join(f"{n} {state}" for state, n in sorted(states.items(), key=in_order) if n)
        of = f"/{self.total}" if self.total and self.total > 0 else ""
        return f"Number of trials: {total}{of} ({counts})"

    def _params(self, trial: Trial) -> dict[str, Value]:
        from tuner.nesting import flatten

        config = flatten(trial.config or {})
        return {name: config.get(name) for name in self.parameters if name in config}

    # --- the table -------------------------------------------------------------------------------------------

    def _table(
        self,
        groups: dict[str, list[Ranked]],
        states: Counter[str],
        front: list[Trial],
        places: set[object],
        limit: int | None,
    ) -> list[str]:
        """``groups``: each status's trials, best first, the groups in the order of their best trials."""
        from tabulate import tabulate

        # as the status line says: by each trial's best value, whatever its status
        if limit is not None and sum(len(g) for g in groups.values()) > limit:
            shown = [t for _, _, t in sorted(fair_share(groups, limit))]
        else:
            shown = [t for _, _, t in heapq.merge(*groups.values())]
        if not shown:
            return []
        hidden = states - Counter(self.state(t) for t in shown)
        metrics = self._metrics_shown(shown)
        # where a trial runs says something only when trials run on more than one machine
        located = len(places - {None}) > 1
        view = self._marks
        on_front = {t.trial_id for t in front}
        bounded = bool(self.constraints)  # a trial that breaks one ranks last: the column says why
        headers = ["trial", "state", *view.headers, *(["meets bounds"] if bounded else [])]
        headers += ["where"] if located else []
        headers += [*self.parameters, *(self._heading(m) for m in metrics)]
        rows = []
        for t in shown:
            result = result_of(t)
            params = self._params(t)
            rows.append(
                [t.trial_id, self.state(t)]
                + view.cells(t.trial_id, on_front)
                + (
                    [("no" if self.breaks(t) else "yes") if self.best(t) is not None else ""]
                    if bounded
                    else []
                )
                + ([location(result)] if located else [])
                + [cell(params.get(p)) for p in self.parameters]
                + [cell(self.best(t) if m == BEST else lookup(result, m)) for m in metrics]
            )
        # a trial id is text: tabulate read one such as 18587e85 as a number and showed 1.859e+89
        table = tabulate(
            rows,
            headers=headers,
            tablefmt="psql",
            showindex=False,
            floatfmt=FLOAT_FORMAT,
            disable_numparse=[0],
        )
        lines = [table]
        if hidden:
            more = ", ".join(f"{n} {state}" for state, n in sorted(hidden.items(), key=in_order))
            lines.append(f"... {sum(hidden.values())} more trials not shown ({more})")
        return lines

    def _metrics_shown(self, shown: list[Trial]) -> list[str]:
        """The metric columns that say something about the trials shown (``metric_columns``), the best value the
        rows are ranked by just before the metric's own (last) value."""
        ranked_by = {self.metric, *(o.name for o in self.objectives), *(c.metric for c in self.constraints)}
        kept = metric_columns(self.columns, shown, self.metric, ranked_by)
        if any(self.best(t) is not None for t in shown):
            kept.insert(kept.index(self.metric) if self.metric in kept else 0, BEST)
        return kept

    def _heading(self, metric: str) -> str:
        return f"{self.metric} (best)" if metric == BEST else self.columns[metric]


BEST = "\0best"  # the column of each trial's best value of the metric (no reported name can be this)


class SweepReporter(LiveTable):
    """The live table as experiments saved before it was a ``ProgressReporter`` of its own name it (a subclass
    of Ray's CLIReporter, in ``tuner.ray_compat.live_table``): Ray pickles the reporter into the experiment,
    so resuming one of them unpickles this, and it goes on as a ``LiveTable`` with the columns it had."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "columns" in state:  # saved as a LiveTable
            super().__setstate__(state)
            return
        from tuner.ray_compat.live import cli_reporter_settings

        LiveTable.__init__(self, **cli_reporter_settings(state))


class BestSeen(Callback):
    """Hands the live table every result as it arrives, so that it ranks each trial by its best value, which the
    table's own view of the trials (their last results, every few seconds) cannot tell."""

    def __init__(self, table: LiveTable) -> None:
        self.table = table

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        self.table.saw(trial.trial_id, result)
