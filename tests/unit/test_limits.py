"""Budgets and trial timeouts as users write them, and what the guards decide from them (no Ray needed)."""

from __future__ import annotations

import pytest

from tuner.durations import format_seconds, parse_duration
from tuner.errors import UsageError
from tuner.launch.guards.crashes import RUN_MARKER, death
from tuner.limits import EPOCHS, GPU_HOURS, WALL, Budget, TrialTimeout


@pytest.mark.parametrize(
    "text, kind, amount",
    [("30s", WALL, 30), ("90m", WALL, 5400), ("2h", WALL, 7200), ("1.5h", WALL, 5400), ("45 sec", WALL, 45),
     ("500ep", EPOCHS, 500), ("500epochs", EPOCHS, 500), ("4gpuh", GPU_HOURS, 4), ("0.5 gpuh", GPU_HOURS, 0.5)],
)  # fmt: skip
def test_budgets_in_every_unit_the_issue_names(text, kind, amount):
    budget = Budget.parse(text)
    assert (budget.kind, budget.amount, budget.extra) == (kind, amount, False)


def test_a_plus_budget_is_that_much_more():
    assert Budget.parse("+30m") == Budget(WALL, 1800, extra=True)


def test_a_grown_wall_budget_is_saved_as_spent_plus_the_amount_not_rounded_up():
    more = Budget.parse("+10s")
    assert [more.text_for(total) for total in (22.34, 22.0, 123456.77)] == ["22.3s", "22s", "123456.8s"]
    assert Budget.parse(more.text_for(22.34)) == Budget(WALL, 22.3)


@pytest.mark.parametrize("text, fragment", [("soon", "not a budget"), ("3 parsecs", "unknown unit 'parsecs'"),
                                            ("0s", "more than 0"), ("2.5ep", "whole numbers"), ("-1h", "not a budget"),
                                            ("10", "needs a unit: 10s, 10m, 10h (wall time), 10ep")])  # fmt: skip
def test_bad_budgets_say_what_is_valid(text, fragment):
    with pytest.raises(UsageError) as caught:
        Budget.parse(text)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_durations_and_their_errors():
    assert parse_duration("10m", "--trial-timeout") == 600
    assert parse_duration(90, "--trial-timeout") == 90
    with pytest.raises(UsageError, match="--trial-timeout 'later' is not a duration"):
        parse_duration("later", "--trial-timeout")
    assert [format_seconds(s) for s in (4.2, 42, 725, 12000)] == ["4.2 s", "42 s", "12 min 5 s", "3 h 20 min"]


def test_the_default_timeout_follows_the_slowest_epoch_with_floors():
    timeout = TrialTimeout()
    assert timeout.limit(first_report=True, slowest_epoch=None, slowest_first=None) == 600
    assert timeout.limit(first_report=False, slowest_epoch=3.0, slowest_first=20.0) == 120  # seconds-long epochs
    assert timeout.limit(first_report=False, slowest_epoch=100.0, slowest_first=20.0) == 500
    assert timeout.limit(first_report=True, slowest_epoch=100.0, slowest_first=300.0) == 1500
    fixed = TrialTimeout.parse("90s")
    assert fixed.limit(True, 1000.0, 1000.0) == fixed.limit(False, None, None) == 90
    assert "1 min 30 s" in fixed.describe() and "--trial-timeout" in TrialTimeout().describe()


RAY_DEATH = "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR"


def test_a_death_is_named_by_the_signal_the_stack_file_holds():
    crash = RUN_MARKER + 'Fatal Python error: Segmentation fault\n\nStack:\n  File "train.py", line 8 in train\n'
    text = death(RAY_DEATH, crash, 0, epoch=2, crash_file="T/crash.txt")
    assert text == "died: killed by SIGSEGV (segmentation fault) in epoch 3; the Python stack is in T/crash.txt"


def test_a_death_that_left_no_stack_is_a_sigkill_and_the_oom_counter_says_whose():
    assert death(RAY_DEATH, RUN_MARKER, 0, 0, "c").startswith("died: killed by SIGKILL in epoch 1 (most often")
    assert "out-of-memory killer in epoch 1; use a smaller batch" in death(RAY_DEATH, RUN_MARKER, 1, 0, "c")
    earlier = RUN_MARKER + "Fatal Python error: Aborted\n" + RUN_MARKER  # the retry after an abort died silently
    assert "SIGKILL" in death(RAY_DEATH, earlier, 0, 4, "c")


def test_a_death_on_a_node_this_driver_cannot_read_says_only_what_is_known():
    assert death(RAY_DEATH, None, 0, 1, "c").startswith("died: its process ended without a Python error in epoch 2")


def test_a_completed_trials_open_crash_record_goes_as_it_completes_and_a_signals_stack_stays(tmp_path):
    """A trial stopped at its last epoch never unwinds its run's section; the driver removes the empty record
    when Tune completes the trial, not thousands of them at the sweep's end. A stack a signal wrote stays."""
    from types import SimpleNamespace

    from tuner.launch.guards.crashes import CrashNamer

    for name, text in [("done", RUN_MARKER), ("died", RUN_MARKER + "Fatal Python error: Segmentation fault\n")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "crash.txt").write_text(text)
    namer = CrashNamer(str(tmp_path), None)
    for name in ("done", "died", "never-made"):
        namer.on_trial_complete(0, [], SimpleNamespace(relative_logdir=name))
    assert not (tmp_path / "done" / "crash.txt").exists()
    assert (tmp_path / "died" / "crash.txt").exists()
    CrashNamer(None, None).on_trial_complete(0, [], SimpleNamespace(relative_logdir="done"))  # a bucket: none here


def test_an_ordinary_error_is_not_a_death():
    assert death("ValueError: bad lr", "", 0, 1, "c") is None


def test_the_spending_line_says_how_long_the_command_took_and_what_the_trials_and_a_budget_counted():
    from tuner.folder.spent import Spent
    from tuner.limits import describe_spent

    spent = Spent(wall=8.19, epochs=26)
    # the time a user timed is the headline; the trials' own wall time and epochs are the whole sweep's
    assert describe_spent(spent, None, took=38.2) == (
        "spent: 38 s from the command's start to this summary; the sweep's trials ran for 8.19 s, 26 epochs in all"
    )
    assert describe_spent(spent, None) == "spent: 8.19 s of wall time from the first trial's start, 26 epochs"
    # PBT, HyperBand or BOHB continued a trial from a checkpoint older than its pause: tuner results counts 20
    assert describe_spent(spent, None, took=38.2, distinct=20) == (
        "spent: 38 s from the command's start to this summary; the sweep's trials ran for 8.19 s, 26 epochs (20 "
        "distinct, 6 run again, from an earlier checkpoint or from the start) in all"
    )
    assert describe_spent(spent, None, distinct=26).endswith(", 26 epochs")
    resumed = Spent(wall=28.0, epochs=39, runs=[[100.0, 110.0], [200.0, 218.0]])  # killed, then resumed
    assert describe_spent(resumed, None, took=27.0) == (  # 28 s of trials in a 27 s command: its earlier run too
        "spent: 27 s from the command's start to this summary; the sweep's trials ran for 28 s over its 2 runs, "
        "39 epochs in all"
    )
    ended = Spent(wall=60.0, epochs=9, gpu_hours=0.25, ended_by_budget=True)
    assert describe_spent(ended, "1m", took=71.0) == (
        "budget: 1 min of wall time; spent 1 min of wall time from the first trial's start, 9 epochs, "
        "0.25 GPU-hours; the sweep ended on it; 1 min 11 s from the command's start to this summary"
    )
