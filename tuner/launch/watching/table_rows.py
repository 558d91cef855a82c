"""The live table's trials, kept ranked as they finish, so that a table costs what the trials still open and the
rows it shows cost, not every trial the sweep has had.

A finished trial (TERMINATED or ERROR) keeps its best value, its last result and its status for the rest of a
run, so its place in the ranking, its state in words, where it ran and its point on the front are worked out
once, when it finishes, and kept: the finished trials of each status in rank order, the count of each state,
the machines trials ran on, the front of the finished ones. A table then ranks the open trials, takes the
first rows of each status, and counts the rest. A trial's state changes with the length the sweep plans by
(tuner/launch/guards/loop_end.py), so a new length counts the finished trials' states again, and a trial its
own loop ended is counted again once the table learns it. Ties keep the order trials were first seen, as
Tune's list has them. A resumed run hands a new list: the rows start again from it.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from tuner.open_trials import OpenTrials

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

# (no value yet, breaks a constraint, errored, value in the sign where less is better): as every review ranks
RankKey = tuple[bool, bool, bool, float]
Ranked = tuple[RankKey, int, "Trial"]  # a trial's key, then the order it was first seen in: unique


class TableRows:
    """Follows Tune's list of trials from table to table; see the module's docstring."""

    def __init__(self) -> None:
        self._start_again(None, None)

    def __getstate__(self) -> dict[str, object]:
        return {}  # Ray pickles the table with the experiment: a resumed run starts from the list it is handed

    def __setstate__(self, state: dict[str, object]) -> None:
        self._start_again(None, None)

    def _start_again(self, trials: list[Trial] | None, basis: object) -> None:
        self._list, self._basis = trials, basis
        self._view = OpenTrials()
        self._length_seen = 0  # the list's length at the last update (a shorter one is a new list)
        self._order: dict[str, int] = {}  # trial id -> when it was first seen
        self._finished: dict[str, list[Ranked]] = {}  # status -> its finished trials, best first
        self._states: dict[str, str] = {}  # finished trial id -> its state in words
        self._by_id: dict[str, Trial] = {}  # the finished trials by id
        self._ended: set[str] = set()  # the loop-ended trials the states were counted with
        self._length: int | None = None  # the length the states were counted by
        self.states: Counter[str] = Counter()  # the finished trials' states
        self.places: set[object] = set()  # the machines finished trials ran on
        self.front: list[tuple[Ranked, list[float]]] = []  # the front of the finished trials' points

    def update(
        self,
        trials: list[Trial],
        basis: object,
        key: Callable[[Trial], RankKey],
        state: Callable[[Trial], str],
        place: Callable[[Trial], object],
        point: Callable[[Trial], list[float] | None],
    ) -> list[Ranked]:
        """Take in what changed since the last table; the open trials, ranked. ``basis`` stands for what the
        ranking depends on (the metric, its direction): a new one ranks every trial again."""
        if trials is not self._list or basis != self._basis or len(trials) < self._length_seen:
            self._start_again(trials, basis)
        open_trials = self._view.update(trials)
        self._length_seen = len(trials)
        for trial in self._view.added:
            self._order.setdefault(trial.trial_id, len(self._order))
        finished = []
        for trial in self._view.finished_now:
            if trial.trial_id in self._by_id:
                continue
            self._order.setdefault(trial.trial_id, len(self._order))
            entry = (key(trial), self._order[trial.trial_id], trial)
            insort(self._finished.setdefault(trial.status, []), entry)
            finished.append(entry)
            self._by_id[trial.trial_id] = trial
            self._count(trial, state(trial))
            self.places.add(place(trial))
        self._add_to_front(finished, point)
        return sorted((key(t), self._order[t.trial_id], t) for t in open_trials)

    def recount(self, length: int, ended: Collection[str], state: Callable[[Trial], str]) -> None:
        """The finished trials' states again where the length the sweep plans by changed, or the table learnt
        that a finished trial's own loop ended it."""
        if length != self._length:
            self._length, self._ended = length, set(ended)
            self.states, self._states = Counter(), {}
            for trial in self._by_id.values():
                self._count(trial, state(trial))
            return
        learnt = set(ended) - self._ended
        self._ended |= learnt
        for trial_id in learnt & self._by_id.keys():
            self._count(self._by_id[trial_id], state(self._by_id[trial_id]))

    def _count(self, trial: Trial, state: str) -> None:
        before = self._states.get(trial.trial_id)
        if before is not None:
            self.states[before] -= 1
        self._states[trial.trial_id] = state
        self.states[state] += 1

    def _add_to_front(self, finished: Iterable[Ranked], point: Callable[[Trial], list[float] | None]) -> None:
        from tuner import pareto

        added = [(entry, p) for entry in finished if (p := point(entry[2])) is not None]
        if not added:
            return
        candidates = self.front + added
        self.front = [candidates[i] for i in pareto.front([p for _, p in candidates])]

    def finished_groups(self) -> dict[str, list[Ranked]]:
        """The finished trials of each status, best first (the lists kept: not to be changed)."""
        return self._finished
