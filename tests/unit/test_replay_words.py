"""What ``tuner replay`` prints (tuner/review/replays.py:describe): bounds said once, as bounds."""

from __future__ import annotations

from tuner.review.replays import ReplayBest, WhatIf, describe


def _whatif(**changes) -> WhatIf:
    best = ReplayBest("a", 0.3, 4)
    fields = dict(experiment="/exp", scheduler="hyperband", searcher=None, options={}, workers=2, metric="loss",
                  mode="min", used_epochs=26, used_seconds=44.0, epochs=20, seconds=30.0, best_before=best,
                  best_after=best)  # fmt: skip
    return WhatIf(**{**fields, **changes})


def test_a_replay_that_runs_trials_past_the_sweeps_curves_gives_lower_bounds_and_says_why():
    lines = describe(_whatif(epochs=26, seconds=37.0, cut_short=["b", "c"]), "asha")
    epochs = next(line for line in lines if line.startswith("  epochs: "))
    assert epochs == (
        "  epochs: at least 26 against the sweep's 26 under asha (2 trial(s) would have run past the epochs the "
        "sweep has; how far is unknown)"
    )
    wall = next(line for line in lines if line.startswith("  wall time: "))
    assert wall.startswith("  wall time: at least 37 s against 44 s; both simulated") and "about" not in wall


def test_a_replay_within_the_sweeps_curves_gives_its_saving():
    lines = describe(_whatif(), "asha")
    assert "  epochs: 20 against the sweep's 26 under asha (saves 23%)" in lines
    assert any(line.startswith("  wall time: about 30 s against 44 s (saves 32%)") for line in lines)


def test_a_replay_under_hyperband_shows_its_brackets():
    from tuner.experiment import ExperimentRecord
    from tuner.replay.whatif import _rungs
    from tuner.settings import SweepConfig

    record = ExperimentRecord(
        "/exp", SweepConfig(space="x", max_epochs=9, reduction_factor=3, grace_period=1), []
    )
    lines = _rungs(record, "hyperband", 12, None, None)
    assert lines[0].startswith("HyperBand: synchronous brackets up to 9 epochs, reduction factor 3")
    assert lines[1:] == ["bracket 1: 3 trial(s), epoch 9; 27 epochs", "bracket 2: 5 trial(s), epoch 3 -> epoch 9; 27 "
                         "epochs", "bracket 3: 4 trial(s), epoch 1 -> epoch 3 -> epoch 9; 16 epochs"]  # fmt: skip
    assert (
        len(_rungs(record, "asha", 12, None, None)) == 1
    )  # the rule alone: its estimate is the replay's to say


def test_a_replay_that_stops_thousands_names_twenty_and_counts_the_rest():
    stopped = [{"trial": f"t{i:04d}", "epochs": 3, "at": 1, "why": "below the cutoff"} for i in range(2500)]
    lines = describe(_whatif(stopped=stopped, cut_short=[f"c{i}" for i in range(30)]), "asha")
    named = [line for line in lines if line.startswith("    t")]
    assert [line.split(":")[0].strip() for line in named] == [f"t{i:04d}" for i in range(20)]
    assert "    ... and 2480 more (the replay saved in the experiment's replays/ folder lists every one)" in lines
    assert "  2500 trial(s) would have stopped earlier:" in lines
    cut = next(line for line in lines if "would have gone on past" in line)
    assert "c19, and 10 more)" in cut and "c20" not in cut
