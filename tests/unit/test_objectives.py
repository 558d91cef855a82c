"""Several objectives and constraints: parsing, settings, Pareto arithmetic and ASHA's decisions by fronts."""

from __future__ import annotations

import itertools
import math
import random
from types import SimpleNamespace

import pytest

from tuner import pareto
from tuner.errors import UsageError
from tuner.launch.layers import read_yaml_settings
from tuner.objectives import LOSS, Constraint, Objective, objectives_from
from tuner.settings import SweepConfig

# --- parsing -----------------------------------------------------------------------------------------------


def test_one_mode_serves_every_metric_and_one_per_metric_is_kept_in_order():
    assert objectives_from("loss,latency_ms", "min") == (Objective("loss", "min"), Objective("latency_ms", "min"))
    assert objectives_from("loss, acc", "min, max") == (Objective("loss", "min"), Objective("acc", "max"))
    assert objectives_from(["loss", "acc"], ["min", "max"]) == objectives_from("loss,acc", "min,max")


@pytest.mark.parametrize("metric, mode, fragment", [
    ("loss,latency_ms", "min,max,min", "gives 3 modes"),
    ("loss,,x", "min", "empty name"),
    ("loss,loss", "min", "twice"),
    ("loss,x", "min,best", "unknown mode 'best'"),
    ("loss latency_ms", "min", "'loss latency_ms' is not one metric's name; give several separated by commas, e.g. loss,latency_ms"),
])  # fmt: skip
def test_bad_objectives_are_one_line_each(metric, mode, fragment):
    with pytest.raises(UsageError, match=fragment):
        objectives_from(metric, mode)


@pytest.mark.parametrize("text, value, over", [
    ("gpu_memory_peak_mb<=4000", 3999.0, 0.0), ("gpu_memory_peak_mb<=4000", 4100.0, 100.0),
    ("accuracy>=0.9", 0.85, 0.05), ("accuracy>=0.9", 0.95, 0.0), ("size < 10", 12.0, 2.0),
])  # fmt: skip
def test_a_constraint_says_how_far_a_value_breaks_it(text, value, over):
    assert Constraint.parse(text).violation(value) == pytest.approx(over)


def test_a_strict_bound_met_exactly_is_broken_and_a_missing_value_breaks_every_bound():
    assert Constraint.parse("size<10").violation(10.0) > 0
    assert Constraint.parse("size<=10").violation(None) == math.inf
    assert Constraint.parse("size<=10").violation(float("nan")) == math.inf

def test_a_constraint_is_judged_on_the_value_last_reported_and_not_at_a_rung_before_it_is_reported():
    """A figure measured at some epochs only (or once after training) keeps its last value for the summary; at a
    rung, a result that does not carry it yet is not judged on it."""
    from tuner.objectives import broken, judged
    from tuner.schedulers.comparing import Comparison

    mem = [Constraint.parse("mem<=100")]
    rows = [{"loss": "0.5", "mem": "51.2", "training_iteration": "1"}, {"loss": "0.3", "mem": "", "training_iteration": "2"}]
    assert judged(mem, rows) == {"loss": "0.3", "mem": "51.2", "training_iteration": "2"}
    assert broken(mem, judged(mem, rows)) == []
    assert broken(mem, judged(mem, [{"loss": "0.3"}])) == ["mem not reported breaks mem<=100"]
    ranking = Comparison.of((Objective("loss", "min"),), mem)
    assert ranking.standing({"loss": 0.3}).violation == 0 and ranking.standing({"loss": 0.3}).broke == ()
    assert ranking.standing({"loss": 0.3, "mem": 150.0}).violation == 50.0
    assert math.isinf(ranking.standing({"loss": 0.3, "mem": float("nan")}).violation)  # reported, not a number


def test_a_nan_objective_ranks_last_by_fronts_and_says_so_not_that_another_trial_dominated_it():
    from tuner.schedulers.comparing import Comparison

    fronts = Comparison.of((Objective("loss", "min"), Objective("ms", "min")))
    at = {
        "b": fronts.standing({"loss": 0.3, "ms": 2.0}),
        "c": fronts.standing({"loss": 0.2, "ms": 3.0}),
        "a": fronts.standing({"loss": float("nan"), "ms": 1.0}),
    }
    verdict = fronts.at_rung("a", at, 2, 1)
    assert not verdict.kept and verdict.why == "loss not a finite number (ranked last)"



@pytest.mark.parametrize("text, fragment", [("latency=3", "is not METRIC<=VALUE"), ("x<=fast", "not a number"),
                                            ("x<=inf", "finite")])  # fmt: skip
def test_bad_constraints_are_one_line_each(text, fragment):
    with pytest.raises(UsageError, match=fragment):
        Constraint.parse(text)


# --- settings ---------------------------------------------------------------------------------------------


def test_several_metrics_are_one_value_that_reads_back_alike():
    from tuner.settings import build_config

    config = build_config({"space": "s", "metric": "loss,latency_ms", "mode": "min,min"})
    assert config.objectives == (Objective("loss", "min"), Objective("latency_ms", "min"))
    assert len(config.objectives) == 2 and config.objective == Objective("loss", "min")
    assert config.to_dict()["objectives"] == {"loss": "min", "latency_ms": "min"}  # as tuner_config.yaml keeps it
    assert build_config(config.to_dict()) == config


def test_one_metric_is_a_tuple_of_one():
    from tuner.settings import build_config

    config = build_config({"space": "s", "metric": ["acc"], "mode": "max"})
    assert config.objectives == (Objective("acc", "max"),)
    assert SweepConfig(space="s").objectives == (Objective("loss", "min"),)


def test_objectives_read_from_a_file_say_where_and_a_list_takes_one_metric_an_item(tmp_path):
    from tuner.settings import build_config, load_saved_config, save_config

    saved = build_config({"space": "s", "name": "exp", "storage_path": str(tmp_path), "metric": "acc", "mode": "max"})
    (tmp_path / "exp").mkdir()
    save_config(saved, tmp_path / "exp")
    text = (tmp_path / "exp" / "tuner_config.yaml").read_text()
    assert "objectives:\n  acc: max\n" in text and saved.as_text()["objectives"] == "acc (max)"
    (tmp_path / "exp" / "tuner_config.yaml").write_text(text.replace("acc: max", "acc: MAX"))
    with pytest.raises(UsageError, match=r"exp/tuner_config.yaml: objectives: unknown mode 'MAX'"):
        load_saved_config(tmp_path / "exp")
    with pytest.raises(UsageError, match="'loss,acc' names several; give one metric per list item"):
        objectives_from(["loss,acc"], "min")


def test_a_sweep_file_takes_metrics_as_a_mapping_or_lists(tmp_path):
    by_map = tmp_path / "a.yaml"
    by_map.write_text("metrics: {loss: min, accuracy: max}\nconstraints: ['params_k<=50']\n")
    settings = read_yaml_settings(by_map)
    assert settings["metric"] == ["loss", "accuracy"] and settings["mode"] == ["min", "max"]
    assert settings["constraints"] == ["params_k<=50"]
    by_list = tmp_path / "b.yaml"
    by_list.write_text("metric: [loss, latency_ms]\nmode: min\n")
    assert read_yaml_settings(by_list)["metric"] == ["loss", "latency_ms"]
    both = tmp_path / "c.yaml"
    both.write_text("metrics: {loss: min}\nmetric: loss\n")
    with pytest.raises(UsageError, match="not both"):
        read_yaml_settings(both)


def test_a_space_declares_several_metrics_with_their_modes():
    from ray import tune

    from tuner.spec import SearchSpace

    space = SearchSpace(
        trainable=print, params={"x": tune.uniform(0, 1)}, metrics={"loss": "min", "ms": "min"}
    )
    assert space.objectives == (Objective("loss", "min"), Objective("ms", "min"))
    with pytest.raises(UsageError, match="unknown mode 'lowest'"):
        SearchSpace(trainable=print, params={"x": tune.uniform(0, 1)}, metrics={"loss": "lowest"})


def test_a_space_names_the_mode_of_any_metric_but_loss():
    """metric="mean_accuracy" without a mode was minimised, silently; --metric on the command line is refused so."""
    from ray import tune

    from tuner.spec import SearchSpace

    params = {"x": tune.uniform(0, 1)}
    assert SearchSpace(trainable=print, params=params).objectives == (Objective("loss", "min"),)
    assert SearchSpace(trainable=print, params=params, metric="loss").mode == "min"
    assert SearchSpace(trainable=print, params=params, metric="acc", mode="max").objectives == (Objective("acc", "max"),)
    with pytest.raises(UsageError, match=r"^space metric 'mean_accuracy' has no mode: say whether to minimise or "
                                         r"maximise it, mode='min' or mode='max' \(only loss is minimised unsaid\)$"):
        SearchSpace(trainable=print, params=params, metric="mean_accuracy")


def test_a_constraint_is_checked_when_the_settings_are_made():
    with pytest.raises(UsageError, match="is not METRIC<=VALUE"):
        SweepConfig(space="s", constraints=["memory 4000"])


# --- Pareto arithmetic --------------------------------------------------------------------------------------


def test_fronts_by_non_dominated_sorting():
    points = [(1, 5), (2, 2), (5, 1), (3, 3), (4, 4), (6, 6)]
    assert pareto.ranks(points) == [0, 0, 0, 1, 2, 3]
    assert pareto.front(points) == [0, 1, 2]
    assert pareto.dominated_by(4, points) == 2  # (2, 2) and (3, 3)
    assert pareto.dominated_by(5, points) == 5


def test_crowding_prefers_the_ends_and_the_lonely():
    points = [(0, 10), (1, 9), (5, 5), (10, 0)]
    room = pareto.crowding(points)
    assert room[0] == room[3] == math.inf and room[2] > room[1]


def test_order_puts_every_feasible_point_ahead_of_the_infeasible_least_broken_first():
    points = [(1, 1), (2, 2), (0, 0), (0.5, 0.5)]
    assert pareto.order(points, [0, 0, 3.0, 1.0]) == [0, 1, 3, 2]
    assert pareto.front(points, [0, 0, 3.0, 1.0]) == [0]


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_hypervolume_matches_a_count_on_a_grid(dims):
    rng = random.Random(dims)
    points = [tuple(rng.randint(0, 7) for _ in range(dims)) for _ in range(6)]
    reference = (8,) * dims
    cells = sum(1 for cell in itertools.product(range(8), repeat=dims)
                if any(all(p[k] <= cell[k] for k in range(dims)) for p in points))  # fmt: skip
    assert pareto.hypervolume(points, reference) == pytest.approx(cells)


def test_points_beyond_the_reference_add_nothing():
    assert pareto.hypervolume([(5, 5)], (4, 10)) == 0.0
    assert pareto.hypervolume([(1, 1), (5, 5)], (4, 4)) == pytest.approx(9.0)


# --- ASHA by fronts -------------------------------------------------------------------------------------------


class Fates:
    def __init__(self) -> None:
        self.entries: list[tuple[str, str, str, dict | None]] = []
        self.folder = None

    def record(self, trial_id, kind, text, data=None):
        self.entries.append((trial_id, kind, text, data))

    def stopped(self, trial_id):
        return next(
            (text for tid, kind, text, _ in self.entries if tid == trial_id and kind == "stopped"), ""
        )


def asha(objectives, constraints=(), eta=2):
    from tuner.schedulers.asha import rungs
    from tuner.schedulers.asha_rule import AshaRule
    from tuner.schedulers.comparing import Comparison

    fates = Fates()
    return AshaRule(8, rungs(8, 1, eta), eta, Comparison.of(objectives, constraints), fate_log=fates), fates


def report(scheduler, trial_id, epoch, **values):
    return scheduler.on_trial_result(
        None, SimpleNamespace(trial_id=trial_id), {"training_iteration": epoch, **values}
    )


def test_a_dominated_trial_stops_at_the_rung_and_its_fate_says_by_how_many():
    scheduler, fates = asha([Objective("loss", "min"), Objective("ms", "min")])
    assert report(scheduler, "a", 1, loss=1.0, ms=10) == "CONTINUE"
    assert report(scheduler, "b", 1, loss=0.5, ms=20) == "CONTINUE"  # on the front with a; room at its end
    assert report(scheduler, "c", 1, loss=2.0, ms=30) == "STOP"
    assert fates.stopped("c") == "stopped early by ASHA at epoch 1: dominated by 2 trials at the epoch-1 rung"
    rung = next(data for tid, kind, _, data in fates.entries if tid == "c" and kind == "rung")
    assert rung["values"] == {"loss": 2.0, "ms": 30} and rung["kept"] is False and rung["of"] == 3


def test_a_maximised_objective_is_ranked_the_right_way_round():
    scheduler, fates = asha([Objective("acc", "max"), Objective("ms", "min")])
    report(scheduler, "a", 1, acc=0.9, ms=10)
    assert report(scheduler, "b", 1, acc=0.5, ms=10) == "STOP"
    assert "dominated by 1 trial " in fates.stopped("b")


def test_on_the_front_but_crowded_out_says_so():
    scheduler, fates = asha([Objective("loss", "min"), Objective("ms", "min")])
    for trial_id, loss, ms in [("a", 0.0, 10), ("b", 10.0, 0), ("c", 5.0, 5)]:
        report(scheduler, trial_id, 1, loss=loss, ms=ms)
    assert report(scheduler, "d", 1, loss=4.9, ms=5.1) == "STOP"  # on the front, beside c
    assert "on the front at the epoch-1 rung" in fates.stopped("d")
    assert "ranked behind them there (by crowding distance, then loss)" in fates.stopped("d")


def test_an_infeasible_trial_ranks_last_and_its_fate_names_the_bound():
    scheduler, fates = asha([Objective("loss", "min")], [Constraint.parse("mb<=100")])
    report(scheduler, "a", 1, loss=5.0, mb=50)
    assert report(scheduler, "b", 1, loss=0.1, mb=500) == "STOP"
    assert fates.stopped("b") == "stopped early by ASHA at epoch 1: infeasible (mb 500 breaks mb<=100)"


def test_a_trial_goes_to_the_highest_rung_it_reached_once_and_ends_at_max_epochs():
    scheduler, _ = asha([Objective("loss", "min"), Objective("ms", "min")])
    assert report(scheduler, "a", 1, loss=1, ms=1) == "CONTINUE"
    assert report(scheduler, "a", 3, loss=1, ms=1) == "CONTINUE"  # recorded at rung 2
    assert set(scheduler.rungs[2]) == {"a"} and set(scheduler.rungs[1]) == {"a"}
    assert report(scheduler, "a", 8, loss=1, ms=1) == "STOP"


def test_a_resumed_scheduler_gets_its_rungs_back_from_the_fate_log(tmp_path):
    from tuner.folder.fates import FateLog
    from tuner.schedulers.asha_rule import AshaRule
    from tuner.schedulers.comparing import Comparison

    objectives = Comparison.of((Objective("loss", "min"), Objective("ms", "min")))
    first = AshaRule(8, [1, 2, 4], 2, objectives, fate_log=FateLog(str(tmp_path)))
    report(first, "a", 1, loss=1.0, ms=1.0)
    report(first, "b", 1, loss=0.5, ms=0.5)
    resumed = AshaRule(8, [1, 2, 4], 2, objectives, fate_log=FateLog(str(tmp_path)))
    resumed.on_trial_add(SimpleNamespace(get_trials=lambda: []), SimpleNamespace(trial_id="c"))
    assert set(resumed.rungs[1]) == {"a", "b"}
    assert report(resumed, "c", 1, loss=2.0, ms=2.0) == "STOP"  # compared with what ran before the stop


def test_a_comparison_saved_when_one_class_held_both_rankings_loads_as_its_own():
    import pickle

    from tuner.schedulers.comparing import ByFronts, ByValue, Comparison, Constrained

    for several, ranking in ((True, ByFronts), (False, ByValue)):
        objectives = (Objective("loss", "min"), Objective("ms", "min"))[: 1 + several]
        saved = Comparison.__new__(Comparison)  # as an experiment of the older class holds it
        saved.__dict__.update(objectives=objectives, constraints=(), first=objectives[0], by_fronts=several)
        loaded = pickle.loads(pickle.dumps(saved))
        assert type(loaded) is ranking and loaded.reported({}) is several  # by value it needs the metric
    # inside a saved rule, and one objective under constraints (ranked by fronts)
    from tuner.objectives import Constraint
    from tuner.schedulers.median_rule import MedianRule

    loss = (Objective("loss", "min"),)
    saved = Comparison.__new__(Comparison)
    saved.__dict__.update(objectives=loss, constraints=(Constraint.parse("mb<=100"),), first=loss[0], by_fronts=True)
    rule = pickle.loads(pickle.dumps(MedianRule(1, 3, saved)))
    assert type(rule.comparison) is Constrained and rule.debug_string().startswith("median rule by fronts")
    # a ByFronts saved with one objective under constraints loads as the class that ranks one value
    fronts = ByFronts(loss, (Constraint.parse("mb<=100"),))
    assert type(pickle.loads(pickle.dumps(fronts))) is Constrained
    with pytest.raises(TypeError, match="Comparison.of"):
        Comparison(loss)


# --- the median rule and HyperBand by fronts ---------------------------------------------------------------------


def test_the_median_rule_by_fronts_stops_the_worse_half_once_enough_trials_reported_the_epoch():
    from tuner.schedulers.comparing import Comparison
    from tuner.schedulers.median_rule import MedianRule

    fates = Fates()
    rule = MedianRule(1, 3, Comparison.of((Objective("loss", "min"), Objective("ms", "min"))), fate_log=fates)
    for trial_id, loss, ms in [("a", 1.0, 1.0), ("b", 2.0, 2.0), ("c", 3.0, 3.0)]:
        assert report(rule, trial_id, 2, loss=loss, ms=ms) == "CONTINUE"  # too few others yet
    assert report(rule, "d", 1, loss=9.0, ms=9.0) == "CONTINUE"  # no other trial reported epoch 1
    assert report(rule, "d", 2, loss=2.5, ms=2.5) == "STOP"  # 3rd of 4 at epoch 2
    assert fates.stopped("d") == ("stopped early by the median rule at epoch 2: in the worse half of the 4 trials at "
                                  "that epoch by fronts (dominated by 2 trials)")  # fmt: skip
    assert report(rule, "e", 2, loss=0.5, ms=0.5) == "CONTINUE"


def test_a_hyperband_round_keeps_the_best_by_fronts_and_says_why_the_others_stop():
    from types import SimpleNamespace

    from ray.tune.experiment import Trial

    from tuner.schedulers.comparing import Comparison
    from tuner.schedulers.hyperband_rule import HyperBandRule

    fates = Fates()
    comparison = Comparison.of((Objective("loss", "min"), Objective("ms", "min")))
    scheduler = HyperBandRule(4, 2, comparison, fate_log=fates)
    stopped: list[str] = []
    controller = SimpleNamespace(stop_trial=lambda t: stopped.append(t.trial_id))
    trials = [Trial("t", config={}, trial_id=name, stub=True) for name in "xyzuvwabcd"]
    for trial in trials:
        scheduler.on_trial_add(controller, trial)
    round_of_four = trials[6:]  # the third bracket: four trials, rounds at epochs 1, 2 and 4
    assert {scheduler.of[t].size for t in round_of_four} == {4} and scheduler.of[trials[6]].rounds == [
        1,
        2,
        4,
    ]
    values = {"a": (1.0, 9.0), "b": (9.0, 1.0), "c": (5.0, 5.0), "d": (6.0, 6.0)}
    answers = []
    for trial in round_of_four:
        trial.set_status(Trial.RUNNING)
        loss, ms = values[trial.trial_id]
        answers.append(
            scheduler.on_trial_result(controller, trial, {"training_iteration": 1, "loss": loss, "ms": ms})
        )
        if answers[-1] == "PAUSE":
            trial.set_status(Trial.PAUSED)
    assert answers == ["PAUSE", "PAUSE", "PAUSE", "STOP"]  # the last to arrive decides the round: d stops
    assert stopped == ["c"]  # c waited, paused; the ends of the front go on (loss alone would keep a and c)
    assert "dominated by 1 trial, not among the best 2 of 4" in fates.stopped("d")
    assert "on the front but ranked behind (by crowding distance, then loss)" in fates.stopped("c")


# --- the searcher ----------------------------------------------------------------------------------------------


def test_optuna_models_several_objectives_and_is_told_each_trials_constraints():
    from ray import tune

    from tuner import searchers
    from tuner.searchers import SearcherContext

    plan = searchers.plan_search({"x": tune.uniform(0, 1), "y": tune.uniform(0, 1)}, "optuna")
    objectives = (Objective("f1", "min"), Objective("f2", "max"))
    built = searchers.build_searcher(plan, SearcherContext(objectives, 12,
                                                           constraints=(Constraint.parse("g<=0.5"),)))  # fmt: skip
    for i in range(12):
        config = built.suggest(f"t{i}")
        result = {
            "f1": config["x"],
            "f2": config["y"],
            "g": config["x"] + config["y"],
            "training_iteration": 3,
        }
        built.on_trial_result(f"t{i}", result)
        built.on_trial_complete(f"t{i}", result)
    study = built.inner._ot_study  # Ray's OptunaSearch: its study and its trials by Ray's ids
    assert len(study.directions) == 2
    done = study.get_trials(deepcopy=False)
    assert all(len(t.values) == 2 for t in done)
    broken = [t for t in done if t.params["x"] + t.params["y"] > 0.5]
    assert broken and all(t.system_attrs["constraints:g<=0.5"] > 0 for t in broken)
    assert built.inner._ot_trials  # where tuner finds the Optuna trial of a Ray trial to tell its constraints


def test_a_replays_best_trial_meets_the_sweeps_constraints():
    from tuner.replay.engine import ReplayedTrial, ReplayOutcome

    fast = ReplayedTrial("a", {}, values=[0.5], last={"loss": 0.5, "mb": 900})
    slow = ReplayedTrial("b", {}, values=[0.7], last={"loss": 0.7, "mb": 100})
    outcome = ReplayOutcome([fast, slow], "loss", "min", workers=1, wall=1.0)
    assert outcome.best_trial().trial_id == "a"
    assert outcome.best_trial([Constraint.parse("mb<=500")]).trial_id == "b"
    assert outcome.points(
        [Objective("loss", "min"), Objective("mb", "min")], [Constraint.parse("mb<=500")]
    ) == [(0.7, 100)]


def test_the_median_rule_never_pauses_a_trial_while_too_few_others_reported():
    """Ray's rule "yields time" then to waiting trials: a trainable without checkpoints started over and reported
    its epochs again (seen in a sweep of 8 trials under --scheduler median)."""
    from ray.tune.experiment import Trial

    from tuner.schedulers import SchedulerContext
    from tuner.schedulers.median import Median

    rule = Median().build(SchedulerContext(6, LOSS, {}, 8))
    rule.set_search_properties("loss", "min")
    running = [Trial("t", config={}, trial_id=f"r{i}", stub=True) for i in range(2)]
    waiting = [Trial("t", config={}, trial_id=f"w{i}", stub=True) for i in range(6)]
    controller = SimpleNamespace(get_live_trials=lambda: running + waiting)  # six trials wait for a slot
    for trial in running + waiting:
        rule.on_trial_add(controller, trial)
    for epoch in (1, 2, 3):
        for trial in running:
            result = {"training_iteration": epoch, "loss": 1.0 / epoch + int(trial.trial_id[1:])}
            assert rule.on_trial_result(controller, trial, result) == "CONTINUE"
