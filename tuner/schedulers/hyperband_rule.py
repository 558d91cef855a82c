"""Synchronous HyperBand (and BOHB's brackets), one implementation for one objective or several.

Trials fill brackets in HyperBand's order (tuner/schedulers/brackets.py: Ray's sizes and bracket count, with rounds
that end at max epochs); a trial that reaches its bracket's next round waits (PAUSED) until the bracket's other
trials have, and then the round keeps its best (tuner/schedulers/comparing.py): by one value as Ray's
``HyperBandScheduler`` sorts, or by fronts with several objectives or constraints. The rest stop, each with its
reason in the fate log, and the kept ones go on. Built on Tune's public scheduler interface: a result answered
with PAUSE, ``choose_trial_to_run`` choosing the paused trials a round let go on, ``stop_trial`` for the
trials it drops while they wait.

Where it differs from Ray's, on purpose: the trials a resumed sweep had already finished take no place in a
bracket (Tune adds every restored trial; a bracket would wait for ever on one that never reports), and a bracket
is decided again whenever a trial leaves it (Ray's decides only once per bracket on a removal, so a trial paused
there could wait for ever).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from tuner.folder.fates import DecisionLog, RungRecord
from tuner.schedulers.brackets import bracket_epochs, brackets
from tuner.schedulers.comparing import Comparison, Standing
from tuner.schedulers.pausing import warn_once_if_lost
from tuner.schedulers.result_epoch import EPOCH, epoch_of
from tuner.schedulers.rule_base import Rule
from tuner.schedulers.stopping import compared, stopped

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

    from tuner.value_types import Result, Value

# Tune's statuses as the status line counts them (the rest lower-cased: running, paused, pending)
_IN_WORDS = {Trial.TERMINATED: "ended", Trial.ERROR: "errored"}


class Bracket:
    """Trials that start together and are halved together at each of ``rounds`` (epochs)."""

    def __init__(self, number: int, size: int, rounds: list[int], eta: int) -> None:
        self.number = number  # in the order the brackets were made, from 1
        self.size = size  # trials it takes
        self.rounds = rounds
        self.eta = eta
        self.round = 0  # index in rounds of the next comparison
        self.keep = size  # trials the next round keeps at most: ceil(size / eta**rounds passed)
        self.live: dict[Trial, Result | None] = {}  # trial -> its latest result, while in the bracket
        self.trials: list[Trial] = []  # every trial it took
        self.to_unpause: set[Trial] = set()
        self.work = bracket_epochs(size, size, rounds, eta)
        self.done = 0  # epochs trained so far

    @property
    def at(self) -> int:
        """The epoch of the next comparison (or the last round's: the bracket's end)."""
        return self.rounds[self.round]

    @property
    def last_round(self) -> bool:
        return self.round == len(self.rounds) - 1

    def filled(self) -> bool:
        """No room for another trial: it took as many as its size. A trial that ends before the bracket's
        first round (one whose only round is the last epoch, one that failed) leaves its place empty: a
        bracket refilled as its trials finish would run more trials than the plan says."""
        return len(self.trials) >= self.size

    def epoch(self, trial: Trial) -> int:
        result = self.live.get(trial)
        return 0 if not result else int(epoch_of(result, 0))

    def goes_on(self, trial: Trial) -> bool:
        """Whether a trial has epochs to train before the bracket's next comparison."""
        return self.epoch(trial) < self.at

    def round_done(self) -> bool:
        return all(self.epoch(t) >= self.at for t in self.live)

    def finished(self) -> bool:
        return self.last_round and self.round_done()

    def completion(self) -> float:
        return 1.0 if self.finished() else min(self.done / max(self.work, 1), 1.0)

    def update(self, trial: Trial, result: Result) -> None:
        self.done += max(0, int(epoch_of(result, 0)) - self.epoch(trial))
        self.live[trial] = result
        self.to_unpause.discard(trial)


class HyperBandRule(Rule):
    """HyperBand's brackets up to ``max_t`` epochs, halving by ``reduction_factor``."""

    label = "HyperBand"
    largest_first = False  # BOHB fills a band from its largest bracket down

    def __init__(
        self, max_t: int, reduction_factor: int, comparison: Comparison, fate_log: DecisionLog | None = None
    ) -> None:
        super().__init__()
        self.max_t, self.eta = max_t, reduction_factor
        self.comparison = comparison
        self.fate_log = fate_log
        plan = brackets(max_t, reduction_factor)
        self.band_plan = list(reversed(plan)) if self.largest_first else plan
        self.bands: list[list[Bracket]] = []
        self.of: dict[Trial, Bracket] = {}
        self.made = 0
        self.stopped = 0
        self._deciding: set[int] = set()  # brackets being decided (a stop inside a decision removes a trial)

    @property
    def supports_buffered_results(self) -> bool:
        return False  # a trial must pause at its round before it trains on

    # --- trials in brackets ---------------------------------------------------------------------------------

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        if trial.status in (Trial.TERMINATED, Trial.ERROR):
            return  # finished before a resume: no bracket has a place for it
        current = self.bands[-1][-1] if self.bands else None
        if current is None or current.filled():
            if not self.bands or len(self.bands[-1]) == len(self.band_plan):
                self.bands.append([])
            size, rounds = self.band_plan[len(self.bands[-1])]
            self.made += 1
            current = Bracket(self.made, size, rounds, self.eta)
            self.bands[-1].append(current)
        current.live[trial] = None
        current.trials.append(trial)
        self.of[trial] = current

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: dict[str, Value]) -> str:
        bracket = self.of.get(trial)
        if bracket is None:
            return TrialScheduler.CONTINUE
        bracket.update(trial, result)
        if bracket.goes_on(trial):
            return TrialScheduler.CONTINUE
        action = self._at_round(tune_controller, trial, bracket, result)
        if action == TrialScheduler.PAUSE:
            warn_once_if_lost(trial, result, self.label, self.max_t)
        return action

    def _at_round(
        self, tune_controller: TuneController, trial: Trial, bracket: Bracket, result: dict[str, Value]
    ) -> str:
        """A trial that reached its bracket's next round: wait there, or the round's verdict."""
        return self._decide(tune_controller, bracket)

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        bracket = self.of.get(trial)
        if bracket is None:
            return  # finished before this run
        bracket.live.pop(trial, None)
        bracket.to_unpause.discard(trial)
        if id(bracket) in self._deciding:
            return
        if bracket.finished():
            self._stop_waiting(tune_controller, bracket)
        elif bracket.live:
            self._decide(tune_controller, bracket)

    def on_trial_complete(self, tune_controller: TuneController, trial: Trial, result: Result) -> None:
        self.on_trial_remove(tune_controller, trial)

    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        self.on_trial_remove(tune_controller, trial)

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        for band in self.bands:
            for bracket in self._run_order(band):
                for trial in bracket.live:
                    if self._may_run(bracket, trial):
                        return trial
        return None

    @staticmethod
    def _may_run(bracket: Bracket, trial: Trial) -> bool:
        return trial.status == Trial.PENDING or (trial.status == Trial.PAUSED and trial in bracket.to_unpause)

    def _run_order(self, band: list[Bracket]) -> list[Bracket]:
        """The least complete bracket's trials first, so brackets reach their rounds together."""
        return sorted(band, key=lambda b: b.completion())

    # --- a round ----------------------------------------------------------------------------------------------

    def _decide(self, tune_controller: TuneController, bracket: Bracket) -> str:
        """The answer to the trial that reached the round: PAUSE until every trial of the bracket has, then the
        round's verdict for it; the others are stopped or let go on here."""
        if not bracket.round_done():
            return TrialScheduler.PAUSE
        if bracket.finished():
            self._stop_waiting(tune_controller, bracket)
            return TrialScheduler.STOP
        self._deciding.add(id(bracket))
        try:
            return self._halve(tune_controller, bracket)
        finally:
            self._deciding.discard(id(bracket))

    def _halve(self, tune_controller: TuneController, bracket: Bracket) -> str:
        compared_at = bracket.at
        bracket.keep = int(math.ceil(bracket.keep / self.eta))
        bracket.round += 1
        standings = {t: self.comparison.standing(r or {}) for t, r in bracket.live.items()}
        good, bad = self.comparison.halving(standings, bracket.keep)
        self._record(bracket, compared_at, standings, good, bad)
        action = TrialScheduler.PAUSE
        self.stopped += len(bad)
        for trial in bad:
            if trial.status == Trial.RUNNING and not trial.is_saving:
                bracket.live.pop(trial, None)
                action = TrialScheduler.STOP
            else:
                tune_controller.stop_trial(trial)
        for trial in good:
            if bracket.goes_on(trial):
                if trial.status == Trial.RUNNING and not trial.is_saving:
                    action = TrialScheduler.CONTINUE
                else:
                    self._let_go_on(tune_controller, trial)
                    bracket.to_unpause.add(trial)
            elif bracket.finished():
                if trial.status == Trial.RUNNING and not trial.is_saving:
                    bracket.live.pop(trial, None)
                    action = TrialScheduler.STOP
                else:
                    tune_controller.stop_trial(trial)
        return action

    def _let_go_on(self, tune_controller: TuneController, trial: Trial) -> None:
        """A paused trial the round kept is chosen to run again (``choose_trial_to_run``)."""

    def _stop_waiting(self, tune_controller: TuneController, bracket: Bracket) -> None:
        for trial in list(bracket.live):
            if trial.status == Trial.PAUSED:
                tune_controller.stop_trial(trial)

    def _record(
        self,
        bracket: Bracket,
        compared_at: int,
        standings: dict[Trial, Standing],
        good: list[Trial],
        bad: list[Trial],
    ) -> None:
        if not self.fate_log:
            return
        first = self.comparison.first.name
        for trial in [*good, *bad]:
            result = bracket.live.get(trial) or {}
            value = result.get(first)
            epoch = result.get(EPOCH)
            data: RungRecord = {
                **self.comparison.round_values(result),
                "rung": compared_at,
                "epoch": int(epoch) if isinstance(epoch, (int, float)) else None,
                "bracket": bracket.number,
                "value": float(value) if isinstance(value, (int, float)) else None,
                "kept": trial in good,
                "keep": len(good),
                "of": len(good) + len(bad),
            }
            compared(self.fate_log, trial.trial_id, data)
        for trial in bad:
            epoch = (bracket.live.get(trial) or {}).get(EPOCH)
            why = (
                f"{self.comparison.round_why(trial, standings)} not among the best {len(good)} of "
                f"{len(good) + len(bad)} in its bracket"
            )
            stopped(self.fate_log, trial.trial_id, self.label, epoch, why)

    def debug_string(self) -> str:
        """The live table's status lines: each bracket's trials by status and the epoch of its next round."""
        lines: list[str] = []
        for band in self.bands:
            for bracket in band:
                statuses: dict[str, int] = {}
                for trial in bracket.trials:
                    statuses[trial.status] = statuses.get(trial.status, 0) + 1
                waits = f" until the others reach epoch {bracket.at}" if statuses.get(Trial.PAUSED) else ""
                counts = ", ".join(
                    f"{n} {_IN_WORDS.get(status, status.lower())}{waits if status == Trial.PAUSED else ''}"
                    for status, n in sorted(statuses.items())
                )
                done = bracket.completion()
                if done >= 1:
                    state = "finished"
                elif bracket.last_round:
                    state = f"its trials run to epoch {bracket.at}, {done:.0%} done"
                else:
                    state = f"compared next at epoch {bracket.at}, {done:.0%} done"
                lines.append(
                    f"bracket {bracket.number}: {len(bracket.trials)} trial(s) ({counts or 'none yet'}); {state}"
                )
        return "\n".join(lines)


class BohbRule(HyperBandRule):
    """BOHB's brackets: a band filled from its largest bracket down, its searcher told of every pause and of
    every paused trial a round lets go on, and of the budget each result was reached at."""

    label = "BOHB"
    largest_first = True

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: dict[str, Value]) -> str:
        result["hyperband_info"] = {}
        return super().on_trial_result(tune_controller, trial, result)

    def _at_round(
        self, tune_controller: TuneController, trial: Trial, bracket: Bracket, result: dict[str, Value]
    ) -> str:
        """BOHB decides a round only once its bracket is full and every other trial there waits."""
        # a dict by construction: on_trial_result put it there before HyperBand's handling came here
        cast("dict[str, Value]", result["hyperband_info"])["budget"] = bracket.at
        others_running = any(t.status != Trial.PAUSED for t in bracket.live if t is not trial)
        action = (
            TrialScheduler.PAUSE
            if not bracket.filled() or others_running
            else self._decide(tune_controller, bracket)
        )
        if action == TrialScheduler.PAUSE:
            tune_controller.search_alg.searcher.on_pause(trial.trial_id)
        return action

    def _let_go_on(self, tune_controller: TuneController, trial: Trial) -> None:
        tune_controller.search_alg.searcher.on_unpause(trial.trial_id)

    def _run_order(self, band: list[Bracket]) -> list[Bracket]:
        return band

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        chosen = super().choose_trial_to_run(tune_controller)
        if chosen is not None or any(t.status == Trial.RUNNING for t in tune_controller.get_trials()):
            return chosen
        # nothing runs and nothing may start: decide a bracket whose trials wait, until one may go on
        for band in self.bands:
            for bracket in band:
                if any(t.status == Trial.PAUSED for t in bracket.live):
                    self._decide(tune_controller, bracket)
                    if any(self._may_run(bracket, t) for t in bracket.live):
                        return super().choose_trial_to_run(tune_controller)
        return None
