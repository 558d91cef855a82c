"""The replay engine on its own: simulated time, workers, curves that end early, recorded order."""

from __future__ import annotations

from ray import tune

from tuner.objectives import LOSS
from tuner.replay.curves import CurveTable, key
from tuner.replay.engine import Curve, FixedOrder, replay
from tuner.replay.setup import build
from tuner.replay.whatif import RecordedOrder


def _algorithms(scheduler: str, n: int, workers: int = 1, max_epochs: int = 4):
    return build({}, scheduler, None, objectives=LOSS, max_epochs=max_epochs, num_samples=n, seed=0,
                 workers=workers)  # fmt: skip


def _run(curves, scheduler="fifo", workers=1, max_epochs=4):
    algorithms = _algorithms(scheduler, len(curves), workers, max_epochs)
    algorithms.searcher = FixedOrder(c.config for c in curves)
    return replay(RecordedOrder(curves), algorithms, workers=workers, metric="loss", mode="min",
                  num_samples=len(curves), max_epochs=max_epochs)  # fmt: skip


def test_results_arrive_in_simulated_time_order_across_workers():
    slow = Curve({"i": 0}, [{"loss": 1.0}] * 2, [10.0, 10.0])
    fast = Curve({"i": 1}, [{"loss": 2.0}] * 4, [1.0, 1.0, 1.0, 1.0])
    out = _run([slow, fast], workers=2)
    assert [t.timeline for t in out.trials] == [[(10.0, 1.0), (20.0, 1.0)], [(1.0, 2.0), (2.0, 2.0), (3.0, 2.0), (4.0, 2.0)]]
    assert out.wall == 20.0 and out.epochs == 6


def test_one_worker_runs_trials_one_after_another():
    curves = [Curve({"i": i}, [{"loss": float(i)}] * 3, [2.0] * 3) for i in range(3)]
    out = _run(curves, workers=1, max_epochs=3)
    assert [t.started for t in out.trials] == [0.0, 6.0, 12.0] and out.wall == 18.0


def test_a_curve_shorter_than_the_scheduler_grants_is_marked_cut_short():
    curves = [Curve({"i": i}, [{"loss": 1.0 + i}] * (4 if i else 2), [1.0] * 4) for i in range(2)]
    out = _run(curves, workers=1, max_epochs=4)
    assert [t.cut_short for t in out.trials] == [True, False]
    assert [t.epochs for t in out.trials] == [2, 4]


def test_a_curve_its_own_loop_ended_is_whole_whatever_the_others_ran():
    """A loop that differs by config: a trial its loop ended at epoch 2 beside one that ran to max epochs 4.
    Nothing was cut from it; a curve the sweep's scheduler cut stays cut short."""
    looped = Curve({"i": 0}, [{"loss": 1.0}] * 2, [1.0] * 2, whole=True)
    ran = Curve({"i": 1}, [{"loss": 2.0}] * 4, [1.0] * 4)
    cut = Curve({"i": 2}, [{"loss": 3.0}] * 2, [1.0] * 2)
    out = _run([looped, ran, cut], workers=1, max_epochs=4)
    assert [t.cut_short for t in out.trials] == [False, False, True]
    assert [t.epochs for t in out.trials] == [2, 4, 2]


def test_asha_stops_the_worse_trial_at_its_first_rung_with_its_reason():
    curves = [Curve({"i": 0}, [{"loss": 1.0}] * 4, [1.0] * 4), Curve({"i": 1}, [{"loss": 5.0}] * 4, [1.0] * 4)]
    out = _run(curves, scheduler="asha", workers=1, max_epochs=4)
    assert [t.epochs for t in out.trials] == [4, 1]
    assert out.trials[1].fate == "stopped early by ASHA at epoch 1: loss 5 > rung cutoff 1"
    assert out.best_trial() is out.trials[0]


def test_a_searcher_proposes_from_a_table_by_value():
    grid = {"a": [1, 2], "lr": [0.1, 0.01]}
    curves = [Curve({"a": a, "lr": lr}, [{"loss": a * lr}] * 2, [1.0, 1.0]) for a in grid["a"] for lr in grid["lr"]]
    table = CurveTable(curves, ["a", "lr"])
    assert table.curve({"lr": 0.1 + 1e-17, "a": 2}) is curves[2]
    params = {name: tune.choice(values) for name, values in grid.items()}
    algorithms = build(params, "fifo", "random", objectives=LOSS, max_epochs=2, num_samples=6, seed=1,
                       workers=2)  # fmt: skip
    out = replay(table, algorithms, workers=2, metric="loss", mode="min", num_samples=6, max_epochs=2)
    assert len(out.trials) == 6 and not any(t.missing for t in out.trials)
    assert out.best_trial().best("min") == min(t.best("min") for t in out.trials)


def test_a_table_round_trips_through_its_file(tmp_path):
    table = CurveTable([Curve({"a": 0.1}, [{"loss": 1.5}], [2.0])], ["a"])
    table.save(tmp_path / "t.json")
    again = CurveTable.load(tmp_path / "t.json")
    assert again.curve({"a": 0.1}).rows == [{"loss": 1.5}] and key({"a": 0.1}, ["a"]) == "[0.1]"


def test_every_hyperband_bracket_reaches_max_epochs_whatever_the_reduction_factor():
    """Ray's brackets stop short of max_t unless it is a power of eta (27 epochs, eta 2: 26, 24, 16)."""
    from tuner.schedulers.brackets import brackets

    for eta in (2, 3):
        planned = {r for _, rounds in brackets(27, eta) for r in rounds}
        algorithms = build({}, "hyperband", None, objectives=LOSS, max_epochs=27, num_samples=60, seed=0,
                           workers=2, reduction_factor=eta)  # fmt: skip
        curves = [Curve({"i": i}, [{"loss": 1.0 + (i * 7919) % 13 / e} for e in range(1, 28)], [1.0] * 27)
                  for i in range(60)]  # fmt: skip
        algorithms.searcher = FixedOrder(c.config for c in curves)
        out = replay(RecordedOrder(curves), algorithms, workers=2, metric="loss", mode="min", num_samples=60,
                     max_epochs=27)  # fmt: skip
        reached = {t.epochs for t in out.trials}
        assert 27 in reached and reached <= planned, (eta, sorted(reached), sorted(planned))
