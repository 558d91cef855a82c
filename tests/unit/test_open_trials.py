"""The view of Tune's trial list that a step's callbacks share: only open trials looked at again, none missed."""

from __future__ import annotations

import pickle
from collections import Counter
from dataclasses import dataclass

from tuner.open_trials import OpenTrials, view_of


@dataclass
class FakeTrial:
    """What the view reads of a Tune trial: its id and status."""

    trial_id: str
    status: str = "PENDING"


class Watched:
    """Counts every status read, to show that finished trials are not read again."""

    def __init__(self, trial_id: str, status: str = "PENDING") -> None:
        self.trial_id, self._status, self.reads = trial_id, status, 0

    @property
    def status(self) -> str:
        self.reads += 1
        return self._status

    @status.setter
    def status(self, value: str) -> None:
        self._status = value


def test_open_trials_follow_the_list_and_finished_ones_are_not_read_again():
    trials = [Watched(f"t{i}") for i in range(4)]
    view = OpenTrials()
    assert [t.trial_id for t in view.update(trials)] == ["t0", "t1", "t2", "t3"]
    trials[0].status, trials[1].status = "TERMINATED", "RUNNING"
    trials[2].status = "ERROR"
    assert [t.trial_id for t in view.update(trials)] == ["t1", "t3"]
    reads = trials[0].reads
    trials.append(Watched("t4", "RUNNING"))
    assert [t.trial_id for t in view.update(trials)] == ["t1", "t3", "t4"]
    assert trials[0].reads == reads  # finished: never read again
    assert view.statuses == {"t0": "TERMINATED", "t1": "RUNNING", "t2": "ERROR", "t3": "PENDING", "t4": "RUNNING"}
    assert view.counts() == Counter({"TERMINATED": 1, "RUNNING": 2, "ERROR": 1, "PENDING": 1})


def test_a_retried_trial_moved_to_the_end_misses_none_added_with_it():
    trials = [FakeTrial("a", "TERMINATED"), FakeTrial("b", "RUNNING"), FakeTrial("c", "TERMINATED")]
    view = OpenTrials()
    view.update(trials)
    trials.append(FakeTrial("d"))  # added, then b is retried as Tune does it: taken out, put back at the end
    b = trials.pop(1)
    b.status = "PENDING"
    trials.append(b)
    assert sorted(t.trial_id for t in view.update(trials)) == ["b", "d"]
    assert view.counts() == Counter({"TERMINATED": 2, "PENDING": 2})


def test_a_new_list_is_a_new_run_and_a_pickled_view_starts_again():
    first = [FakeTrial("a", "TERMINATED"), FakeTrial("b", "RUNNING")]
    view = OpenTrials()
    view.update(first)
    resumed = [FakeTrial("a", "TERMINATED"), FakeTrial("b", "PENDING")]
    assert [t.trial_id for t in view.update(resumed)] == ["b"]
    assert view.statuses == {"a": "TERMINATED", "b": "PENDING"}
    copy = pickle.loads(pickle.dumps(view))
    assert copy.statuses == {} and [t.trial_id for t in copy.update(resumed)] == ["b"]


def test_a_callback_without_a_view_gets_one_and_keeps_it():
    class Callback:
        pass

    callback = Callback()
    assert view_of(callback) is view_of(callback)


class Controller:
    """What a scheduler's choice asks of Tune's controller: its list of trials."""

    def __init__(self) -> None:
        self.trials: list[FakeTrial] = []

    def get_trials(self) -> list[FakeTrial]:
        return self.trials


def test_the_fifo_choice_among_open_trials_is_tunes_choice():
    import random

    from ray.tune.schedulers import FIFOScheduler

    from tuner.schedulers.rule_base import OpenFirstFIFO

    draw = random.Random(3)
    ours, ray = OpenFirstFIFO(), FIFOScheduler()
    tune = Controller()
    for step in range(400):
        for _ in range(draw.choice([0, 0, 1, 2])):
            tune.trials.append(FakeTrial(f"t{len(tune.trials)}", draw.choice(["PENDING", "PAUSED"])))
        for trial in tune.trials:
            if trial.status not in ("TERMINATED", "ERROR") and draw.random() < 0.3:
                trial.status = draw.choice(["PENDING", "RUNNING", "PAUSED", "TERMINATED", "ERROR"])
        assert ours.choose_trial_to_run(tune) is ray.choose_trial_to_run(tune), f"step {step}"
    assert sum(t.status == "TERMINATED" for t in tune.trials) > 50  # the walk got past many finished trials
