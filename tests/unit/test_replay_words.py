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
