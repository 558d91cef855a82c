"""An experiment saved before ASHA, HyperBand, BOHB and the median rule were tuner's own still resumes.

The fixture holds the schedulers such an experiment pickled (``tuner.pkl``), as tuner built them then for a sweep
of 8 epochs (a fate log in a folder that does not exist): one objective (loss, min) and two (loss and ms, with mb<=100). Each unpickles as today's rule
with the same settings and decides as a rule built today does.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import tuner.moved
from tuner.objectives import LOSS, Constraint, Objective
from tuner.schedulers import REGISTRY
from tuner.schedulers.base import SchedulerContext

from .test_rules_decide_as_ray import decisions

SAVED = Path(__file__).parent.parent / "fixtures" / "schedulers_saved_before.pkl"
ONE = dict(max_epochs=8, objectives=LOSS, params={}, num_samples=16)
TWO = dict(
    ONE,
    objectives=(Objective("loss", "min"), Objective("ms", "min")),
    constraints=(Constraint.parse("mb<=100"),),
)


@pytest.mark.parametrize("name", sorted(pickle.load(SAVED.open("rb"))))
def test_a_scheduler_saved_before_unpickles_as_todays_rule_and_decides_alike(name):
    tuner.moved.install()
    old = pickle.loads(pickle.load(SAVED.open("rb"))[name])
    scheduler, objectives = name.split(", ")
    today = REGISTRY[scheduler]().build(SchedulerContext(**(ONE if objectives == "one objective" else TWO)))
    assert type(old) is type(today)
    assert old.set_search_properties("loss", "min")  # as Tune does when the resumed sweep starts
    assert old.comparison.objectives == today.comparison.objectives
    assert old.comparison.constraints == today.comparison.constraints
    assert old.fate_log.folder == "/nonexistent/experiment"  # the old object's log, kept
    old.fate_log = None  # nothing written there here
    if scheduler == "median":  # saved before the rule ended trials at --max-epochs: it goes on deciding without
        today.max_t = None  # (a trainable with a loop of its own may run past them, as then)
    if scheduler != "bohb":  # BOHB's brackets wait on its own searcher
        assert decisions(old, seed=1) == decisions(today, seed=1)
