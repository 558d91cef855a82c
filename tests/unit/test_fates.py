"""One rule decides a trial's fate (tuner/folder/fates.py); the views count its families and kinds, and the
sweep learns the trainable's own loop from it."""

from __future__ import annotations

from tuner.folder.fates import cut_by_scheduler, family, fate, kind, loop_end

STOPPED = {"stopped": "stopped early by freeze-thaw at epoch 2: predicted 0.5 ± 0.1 at epoch 5, best so far 0.2"}


def test_a_trial_its_own_loop_ended_before_max_epochs_is_no_early_stop():
    text = fate("TERMINATED", 5, 10, "", {})
    assert text == "ended by its own loop at epoch 5"
    assert family(text) == "ended by its own loop" and kind(text) == "completed"
    assert loop_end("TERMINATED", 5, 10, {}) == 5
    assert not cut_by_scheduler(text)


def test_a_loop_ended_trial_that_was_paused_and_continued_is_still_its_loops():
    # freeze-thaw paused it, then continued it (a thaw takes the pause back): its loop ended it at 5
    assert loop_end("TERMINATED", 5, 10, {"rungs": [{"rung": 2, "verdict": "paused"}]}) == 5


def test_what_a_scheduler_guard_or_budget_ended_is_not_the_loops_end():
    assert loop_end("TERMINATED", 2, 10, STOPPED) is None
    assert cut_by_scheduler(fate("TERMINATED", 2, 10, "", STOPPED))
    budget = {"budget": "ended by the budget"}
    assert loop_end("TERMINATED", 3, 10, budget) is None
    assert kind(fate("TERMINATED", 3, 10, "", budget)) == "stopped early"
    assert not cut_by_scheduler(fate("TERMINATED", 3, 10, "", budget)), "the budget's end is no scheduler's saving"
    paused = {"paused": "paused at epoch 4: trial a promises more: an expected gain of 0.03 against this trial's 0.001"}
    ended_paused = fate("TERMINATED", 4, 10, "", paused)
    assert loop_end("TERMINATED", 4, 10, paused) is None and cut_by_scheduler(ended_paused)
    assert loop_end("ERROR", 3, 10, {}) is None
    assert loop_end("RUNNING", 3, 10, {}) is None and loop_end("PAUSED", 3, 10, {}) is None


def test_a_trial_at_max_epochs_ran_to_them_and_one_that_never_reported_teaches_no_length():
    assert fate("TERMINATED", 10, 10, "", {}) == "ran to max epochs (10)"
    assert loop_end("TERMINATED", 10, 10, {}) is None
    assert fate("TERMINATED", 0, 10, "", {}) == "ended by its own loop before its first report"
    assert loop_end("TERMINATED", 0, 10, {}) is None


def test_a_pause_the_trial_trained_past_no_longer_stands():
    """A trial paused at epoch 2 and continued without its thaw recorded (a resumed sweep's) that its loop
    ended at 3 was not paused when the sweep ended."""
    paused = {
        "paused": "paused at epoch 2: waits for the first model of the curves (fitted once 6 trials have results)",
        "rungs": [{"rung": 2, "epoch": 2, "verdict": "paused"}],
    }
    assert fate("TERMINATED", 2, 6, "", paused).endswith("; the sweep ended before it was continued")
    assert fate("TERMINATED", 3, 6, "", paused) == "ended by its own loop at epoch 3"
    assert loop_end("TERMINATED", 3, 6, paused) == 3


def test_a_trial_open_when_the_sweep_stalled_was_ended_by_the_stall_not_its_loop():
    """Ray stops every open trial when the stall guard ends the sweep; the guard's decision names why."""
    stall = {"stall": "ended by the stall"}
    text = fate("TERMINATED", 3, 10, "", stall)
    assert text == "ended by the stall at epoch 3 of 10" and family(text) == "ended by the stall"
    assert loop_end("TERMINATED", 3, 10, stall) is None
    assert kind(text) == "stopped early" and not cut_by_scheduler(text)
    assert fate("TERMINATED", 10, 10, "", stall) == "ran to max epochs (10)", "one at its last epoch ran them all"
    # stopped by a signal: open in the saved state, unfinished, never the loop's end
    assert fate("RUNNING", 3, 10, "", {}, live=False).startswith("unfinished")
