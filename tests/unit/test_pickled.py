"""Objects an earlier tuner pickled into an experiment get, as they are unpickled, the attributes their class
gained since (tuner/folder/pickled.py), and then work as new ones do."""

from __future__ import annotations

import pickle

from tuner.folder.horizon import LoopEnds
from tuner.launch.watching.live_table import LiveTable
from tuner.launch.watching.reporting import MetricGuard
from tuner.objectives import Objective
from tuner.schedulers.asha_rule import AshaRule
from tuner.schedulers.comparing import Comparison, Standing


def _as_saved_before(obj: object, *missing: str) -> object:
    """``obj`` pickled and unpickled as an earlier tuner, whose class had none of ``missing``, would have saved it."""
    for name in missing:
        del obj.__dict__[name]
    return pickle.loads(pickle.dumps(obj))


def test_an_asha_rule_saved_before_its_signed_values_and_loop_ends_gets_them_and_ranks_as_a_new_one():
    def rule() -> AshaRule:
        return AshaRule(8, [1, 2, 4], 2, Comparison.of((Objective("loss", "min"),)))

    old = _as_saved_before(rule(), "_signed", "loop")
    assert isinstance(old, AshaRule)
    assert old._signed == {} and isinstance(old.loop, LoopEnds) and old.loop_ends.horizon == 8
    new = rule()
    at = {f"t{i}": Standing((v,), 0.0, {"loss": v}) for i, v in enumerate([0.3, 0.1, 0.2])}
    assert old._signed_at(1, at).values().tolist() == new._signed_at(1, at).values().tolist()


def test_a_live_table_and_a_metric_guard_saved_before_their_attributes_get_empty_ones():
    table = LiveTable(metric="loss", mode="min", parameters=["lr"], columns={"loss": "loss"}, max_epochs=3)
    old = _as_saved_before(table, "_rows", "_loop_ended")
    assert old.loop_ended == set() and "Number of trials: 0" in old.text([])

    guard = _as_saved_before(MetricGuard("loss", "size", constrained=("mem",)), "objectives", "constrained")
    assert guard.objectives == () and guard.constrained == ()
    guard.on_trial_result(0, [], None, {"loss": 0.1})  # the metric alone is what it then checks
    assert guard.problem is None


def test_an_attribute_saved_is_kept_as_saved():
    rule = AshaRule(8, [1, 2, 4], 2, Comparison.of((Objective("loss", "min"),)))
    rule.loop.ended(3)
    again = pickle.loads(pickle.dumps(rule))
    assert again.loop.horizon == rule.loop.horizon == 3


def test_a_loop_watch_and_freeze_thaw_saved_before_they_knew_whose_loop_it_is_learn_as_they_did(tmp_path):
    from tuner import schedulers
    from tuner.launch.guards.loop_end import LoopWatch
    from tuner.objectives import LOSS
    from tuner.schedulers.base import SchedulerContext

    watch = _as_saved_before(LoopWatch(str(tmp_path / "exp"), 10, [], learns=False), "learns")
    assert watch.learns is True
    ctx = SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=8, own_loop=False)
    freeze = _as_saved_before(schedulers.entry("freeze-thaw").build(ctx), "own_loop")
    assert freeze.own_loop is True
