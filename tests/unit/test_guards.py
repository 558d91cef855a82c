"""The stall, hung-trial and budget watches decide from a controller's steps (a fake clock, trials as Tune
shows them to callbacks); the sweeps that prove them end to end are in tests/integration/test_unattended.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

from tuner.folder.fates import FateLog, recorded
from tuner.launch.guards.budget import BudgetStopper, BudgetWatch, load_spent
from tuner.launch.guards.stall import StallStopper, StallWatch
from tuner.launch.guards.watchdog import HungTrialWatch
from tuner.limits import TrialTimeout
from tuner.objectives import LOSS


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def trial(trial_id: str, status: str = "RUNNING", gpus: float = 0.0, epoch: int = 0):
    resources = SimpleNamespace(required_resources={"CPU": 1.0, "GPU": gpus})
    return SimpleNamespace(trial_id=trial_id, status=status, placement_group_factory=resources,
                           last_result={"training_iteration": epoch}, has_reported_at_least_once=epoch > 0,
                           temporary_state=SimpleNamespace(ray_actor=None))  # fmt: skip


def test_the_default_limit_learns_from_epochs_and_ends_only_the_silent_trial(tmp_path):
    clock, log = Clock(), FateLog(str(tmp_path / "exp"))
    watch = HungTrialWatch(TrialTimeout(), log, clock=clock)
    fast, slow = trial("fast"), trial("slow")
    for t in (fast, slow):
        watch.on_trial_start(0, [fast, slow], t)
    clock.now = 30.0  # first reports after 30 s (data loading), then 10 s epochs
    for t in (fast, slow):
        watch.on_trial_result(0, [fast, slow], t, {"training_iteration": 1})
    clock.now = 40.0
    watch.on_trial_result(0, [fast, slow], fast, {"training_iteration": 2})
    assert watch.slowest_epoch == 10.0 and watch.slowest_first == 30.0
    clock.now = 30.0 + 119
    watch.on_step_end(0, [fast, slow])
    assert recorded(str(tmp_path / "exp")) == {}, "within 2 minutes (5x 10 s is less than the floor)"
    clock.now = 30.0 + 121  # fast last reported 111 s ago: still within its limit
    watch.on_step_end(0, [fast, slow])
    decisions = recorded(str(tmp_path / "exp"))
    assert list(decisions) == ["slow"]
    assert decisions["slow"]["failures"] == ["hung: no report for 121 s after epoch 1 (limit 2 min)"]


def test_a_paused_trial_is_not_hung_and_is_timed_afresh_when_it_runs_again(tmp_path):
    clock = Clock()
    watch = HungTrialWatch(TrialTimeout(fixed=10.0), FateLog(str(tmp_path / "exp")), clock=clock)
    paused = trial("p", epoch=2)
    watch.on_trial_start(0, [paused], paused)
    paused.status = "PAUSED"
    clock.now = 100.0
    watch.on_step_end(0, [paused])
    paused.status = "RUNNING"  # HyperBand resumed it: no start event
    watch.on_step_end(0, [paused])
    clock.now = 109.0
    watch.on_step_end(0, [paused])
    assert recorded(str(tmp_path / "exp")) == {}
    clock.now = 111.0
    watch.on_step_end(0, [paused])
    assert recorded(str(tmp_path / "exp"))["p"]["failures"][0].startswith("hung: no report for 11 s after epoch 2")


def test_a_gpu_hour_budget_counts_the_gpus_running_trials_hold(tmp_path):
    folder = str(tmp_path / "exp")
    clock = Clock()
    watch = BudgetWatch(folder, "0.01gpuh", FateLog(folder), clock=clock)  # 36 GPU-seconds
    a, b, waiting = trial("a", gpus=1.0), trial("b", gpus=0.5), trial("w", status="PENDING", gpus=1.0)
    trials = [a, b, waiting]
    watch.on_step_end(0, trials)  # before the first trial's start nothing counts
    clock.now = 100.0
    watch.on_step_end(0, trials)
    assert watch.spent().gpu_hours == 0.0
    watch.on_trial_start(0, trials, a)
    clock.now = 120.0
    watch.on_step_end(0, trials)  # 20 s x 1.5 GPUs = 30 GPU-seconds
    assert not BudgetStopper(watch).stop_all()
    clock.now = 125.0
    watch.on_step_end(0, trials)  # 37.5 GPU-seconds
    assert BudgetStopper(watch).stop_all()
    assert {k: v["budget"] for k, v in recorded(folder).items()} == {t: "ended by the budget" for t in "abw"}
    watch.on_experiment_end(trials)
    saved = load_spent(folder)
    assert saved.ended_by_budget and abs(saved.wall - 25.0) < 1e-9 and abs(saved.gpu_hours - 37.5 / 3600) < 1e-9


def test_a_resumed_run_counts_on_from_what_was_saved(tmp_path):
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "spent.json").write_text(json.dumps({"wall": 5.0, "epochs": 7, "gpu_hours": 0.0}))
    watch = BudgetWatch(str(folder), "9ep")
    assert watch.before.epochs == 0  # read at the run's start only, not each time Ray builds or unpickles it
    watch.setup()  # as Tune starts the run
    t = trial("a")
    watch.on_trial_result(0, [t], t, {"training_iteration": 1})
    assert not watch.ended
    watch.on_trial_result(0, [t], t, {"training_iteration": 2})
    assert watch.ended and watch.spent().epochs == 9


def test_the_watch_waits_its_timeout_and_forgives_any_activity():
    clock = Clock()
    watch = StallWatch(timeout=10, clock=clock)
    watch.observe(["PAUSED", "TERMINATED"])
    clock.now = 9
    watch.observe(["PAUSED", "TERMINATED"])
    assert watch.reason is None and not StallStopper(watch).stop_all()
    watch.observe(["PAUSED", "PENDING"])  # something waits to run: not a stall, the clock restarts
    clock.now = 15
    watch.observe(["PAUSED", "TERMINATED"])
    clock.now = 24
    watch.observe(["PAUSED", "TERMINATED"])
    assert watch.reason is None
    clock.now = 25
    watch.observe(["PAUSED", "TERMINATED"])
    assert watch.reason.startswith("for 10 s no trial ran or waited to run (1 PAUSED, 1 TERMINATED)")
    assert StallStopper(watch).stop_all()


def test_the_fate_follower_reads_only_what_was_appended_and_waits_for_a_whole_line(tmp_path, monkeypatch):
    from tuner import storage
    from tuner.folder.fates import LOG_NAME, RUNG, STOPPED, FateFollower, FateLog, recorded

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = str(tmp_path / "exp")
    log, follower = FateLog(folder), FateFollower(folder)
    assert follower.decisions() == {}
    log.record("a", RUNG, "", {"rung": 1, "value": 0.5})
    assert follower.decisions()["a"]["rungs"] == [{"rung": 1, "value": 0.5}]
    path = storage.sidecar(folder, LOG_NAME)
    with open(path, "a", encoding="utf-8") as f:  # a writer caught half-way through its line
        f.write('{"trial_id": "b", "kind": "stopped", "text": "stopped early by ASHA')
    assert "b" not in follower.decisions()
    with open(path, "a", encoding="utf-8") as f:
        f.write(' at epoch 1"}\n')
    log.record("a", STOPPED, "stopped early by ASHA at epoch 2")
    seen = follower.decisions()
    assert seen["b"]["stopped"] == "stopped early by ASHA at epoch 1" and seen["a"]["stopped"].endswith("epoch 2")
    assert seen == recorded(folder)  # the same as reading the whole log
    path.write_text("")  # the log started over (persisted and removed, then a new run)
    log.record("c", STOPPED, "stopped early by the median rule at epoch 3")
    assert set(follower.decisions()) == {"c"}


def _loop_watch(folder: str):
    """A LoopWatch over ASHA (max 10 epochs, rungs at 1, 2, 4, 8) and the live table, and what it says."""
    from tuner import schedulers
    from tuner.launch.guards.loop_end import LoopWatch, TableLength, followers
    from tuner.launch.watching.reporting import build_reporter
    from tuner.schedulers.base import SchedulerContext

    log = FateLog(folder)
    ctx = SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=8, fate_log=log)
    asha = schedulers.entry("asha").build(ctx)
    table = build_reporter("loss", "min", [], 10)
    said: list[str] = []
    watch = LoopWatch(folder, 10, followers(asha, TableLength(table)), said.append, trials_cap=8)
    return watch, asha, table, said, log


def _reports(watch, asha, trial_id: str, *epochs: int):
    """A trial's results as Tune hands them: to the scheduler first, then to the callbacks."""
    t = trial(trial_id)
    for epoch in epochs:
        result = {"training_iteration": epoch, "loss": 1.0}
        t.last_result = result
        asha.on_trial_result(None, t, result)
        watch.on_trial_result(0, [t], t, result)
    return t


def test_a_trainable_that_loops_to_the_max_epochs_it_is_given_teaches_no_length(tmp_path):
    """A loop to the max_epochs it is given that returned early (good enough, a nan) was taken for the loop's
    length: rungs set aside, the horizon moved, and the user told to write the loop they had written."""
    from tuner.launch.guards.loop_end import LoopWatch, TableLength, followers

    _, asha, table, said, _ = _loop_watch(str(tmp_path / "exp"))
    watch = LoopWatch(str(tmp_path / "exp"), 10, followers(asha, TableLength(table)), said.append, learns=False)
    early = _reports(watch, asha, "early", 1, 2, 3)
    watch.on_trial_complete(0, [early], early)
    assert not said and sorted(asha.live_rungs()) == [1, 2, 4, 8] and table.max_epochs == 10
    assert "early" in table.loop_ended  # its fate is still its own loop's end, not a stop


def test_a_trial_that_passed_a_rung_set_aside_is_not_judged_there_by_a_later_epoch(tmp_path):
    """Rung 2 set aside (a loop ended at epoch 2), a trial passed it, and a later trial past epoch 2 brought it
    back: the trial's epoch-3 loss was judged at rung 2 and set the cutoff another trial was stopped by."""
    watch, asha, table, said, log = _loop_watch(str(tmp_path / "exp"))
    short = _reports(watch, asha, "short", 1, 2)
    watch.on_trial_complete(0, [short], short)
    assert 2 not in asha.live_rungs()
    x = trial("x")
    for epoch, loss in ((1, 0.9), (2, 0.5), (3, 0.2)):
        x.last_result = result = {"training_iteration": epoch, "loss": loss}
        asha.on_trial_result(None, x, result)
        watch.on_trial_result(0, [x], x, result)
    assert 2 in asha.live_rungs() and asha.rungs[2]["x"].values == {"loss": 0.5}  # its epoch-2 value
    from tuner.folder.fates import recorded

    assert all(r["epoch"] == r["rung"] for r in recorded(str(tmp_path / "exp"))["x"]["rungs"])


def test_a_result_marked_done_counts_where_tune_hands_it_to_the_scheduler_only_at_the_end(tmp_path):
    """A tune.Trainable whose step returns done: Tune hands that result to on_trial_complete alone. ASHA left
    it out of the rung it reached (looser cutoffs), and freeze-thaw out of the trial's curve."""
    from tuner import schedulers
    from tuner.schedulers.base import SchedulerContext

    _, asha, _, _, _ = _loop_watch(str(tmp_path / "exp"))
    done = trial("done")
    asha.on_trial_result(None, done, {"training_iteration": 1, "loss": 0.9})
    asha.on_trial_complete(None, done, {"training_iteration": 2, "loss": 0.3, "done": True})
    assert asha.rungs[2]["done"].values == {"loss": 0.3}
    even = trial("even")  # a function reporting the metric at even epochs: its last result, seen already
    for result in ({"training_iteration": 2, "loss": 0.8}, {"training_iteration": 4, "loss": 0.4}):
        asha.on_trial_result(None, even, result)
    asha.on_trial_complete(None, even, {"training_iteration": 4, "loss": 0.4})
    assert "even" not in asha.rungs[1] and asha.rungs[4]["even"].values == {"loss": 0.4}  # no rung it skipped
    for epoch in (5, 6):  # on past rung 4: no decision at rung 1, which it skipped, by a later epoch's value
        asha.on_trial_result(None, even, {"training_iteration": epoch, "loss": 0.1})
    assert "even" not in asha.rungs[1]
    ctx = SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=8)
    freeze = schedulers.entry("freeze-thaw").build(ctx)
    freeze.set_search_properties("loss", "min")
    done.config = {}
    freeze.on_trial_add(None, done)
    freeze.on_trial_result(None, done, {"training_iteration": 1, "loss": 0.9})
    freeze.on_trial_complete(None, done, {"training_iteration": 2, "loss": 0.3, "done": True})
    assert freeze.curves["done"] == [-0.9, -0.3] and freeze.horizon == 2  # a function's own loop, learnt
    given = schedulers.entry("freeze-thaw").build(SchedulerContext(10, LOSS, {}, 8, own_loop=False))
    given.set_search_properties("loss", "min")
    given.on_trial_add(None, done)
    given.on_trial_complete(None, done, {"training_iteration": 3, "loss": 0.3, "done": True})
    assert given.curves["done"][-1] == -0.3 and given.horizon == 10  # a class's done: its own reason


def test_the_first_trial_its_own_loop_ends_teaches_the_sweep_a_trials_length_once(tmp_path):
    from tuner.folder.fates import STOPPED

    watch, asha, table, said, log = _loop_watch(str(tmp_path / "exp"))
    cut = trial("cut", epoch=2)
    log.record("cut", STOPPED, "stopped early by ASHA at epoch 2: loss 3 above the rung cutoff 2")
    watch.on_trial_complete(0, [cut], cut)
    paused = trial("paused", status="PAUSED", epoch=3)  # a waiting trial taken out: stopped, not its loop's end
    watch.on_trial_complete(0, [paused], paused)
    assert not said and sorted(asha.live_rungs()) == [1, 2, 4, 8] and table.max_epochs == 10
    looped = _reports(watch, asha, "looped", 1, 2, 3, 4, 5)
    watch.on_trial_complete(0, [looped], looped)
    assert said == [
        "trial looped ended by its own loop at epoch 5, before --max-epochs 10, and no trial has gone further: the "
        "sweep now takes a trial to end at epoch 5 (ASHA's rung at epoch 8 set aside; at most 40 epochs in all for "
        "8 trials); --max-epochs 5, or a loop to the max_epochs the trainable is given, says so from the start"
    ]
    assert sorted(asha.live_rungs()) == [1, 2, 4] and table.max_epochs == 5
    again = _reports(watch, asha, "again", 1, 2, 3, 4, 5)
    watch.on_trial_complete(0, [again], again)
    assert len(said) == 1, "said once"


def test_a_trial_that_runs_past_the_loops_end_brings_max_epochs_and_the_rungs_back(tmp_path):
    """Loops that differ by config: the first end is at 5, then a trial reports epoch 6 and goes on to 8."""
    watch, asha, table, said, log = _loop_watch(str(tmp_path / "exp"))
    short = _reports(watch, asha, "short", 1, 2, 3, 4, 5)
    watch.on_trial_complete(0, [short], short)
    assert table.max_epochs == 5 and sorted(asha.live_rungs()) == [1, 2, 4]
    longer = _reports(watch, asha, "longer", 1, 2, 3, 4, 5, 6)
    assert said[-1] == (
        "trial longer reported epoch 6, past epoch 5 where the trainable's own loop ended trials so far: its length "
        "differs by config, and the sweep plans by --max-epochs 10 again"
    )
    assert table.max_epochs == 10 and sorted(asha.live_rungs()) == [1, 2, 4, 8] and sorted(asha.rungs) == [1, 2, 4, 8]
    _reports(watch, asha, "longer", 7, 8)
    assert [r["rung"] for r in recorded(str(tmp_path / "exp"))["longer"]["rungs"]] == [1, 2, 4, 8], "judged at 8"
    short.status = "TERMINATED"
    assert table.state(short) == "finished", "its own loop ended it below the 10 epochs the table plans by"
    short.config = {"lr": 0.1}
    status = table.text([short])
    assert "Number of trials: 1 (1 finished)" in status and "stopped early" not in status, status
    longer.last_result = {"training_iteration": 8}
    watch.on_trial_complete(0, [longer], longer)
    assert said[-1] == (
        "trial longer ended by its own loop at epoch 8, and no trial has gone further: the sweep now takes a trial "
        "to end at epoch 8"
    )
    assert table.max_epochs == 8 and sorted(asha.live_rungs()) == [1, 2, 4]


def test_a_loop_end_below_what_a_trial_already_reported_teaches_nothing(tmp_path):
    watch, asha, table, said, _ = _loop_watch(str(tmp_path / "exp"))
    _reports(watch, asha, "long", 1, 2, 3, 4, 5, 6, 7)  # still running
    short = _reports(watch, asha, "short", 1, 2, 3, 4, 5)
    watch.on_trial_complete(0, [short], short)
    assert not said and watch.learnt is None
    assert table.max_epochs == 10 and sorted(asha.live_rungs()) == [1, 2, 4, 8]


def test_a_resumed_sweep_learns_the_loops_end_again_from_one_place(tmp_path):
    """Its followers are unpickled as they were made: LoopWatch tells them what the record says, and
    freeze-thaw's own restore of the curves leaves the horizon to it."""
    from tests.unit.test_fates import written_experiment
    from tuner import schedulers
    from tuner.launch.guards.loop_end import LoopWatch, followers
    from tuner.schedulers.base import SchedulerContext

    def resumed(folder):
        ctx = SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=4,
                               fate_log=FateLog(folder))  # fmt: skip
        scheduler = schedulers.entry("freeze-thaw").build(ctx)
        scheduler._restore()
        restored = scheduler.horizon
        LoopWatch(folder, 10, followers(scheduler)).at_run_start()
        return restored, scheduler.horizon

    looped = written_experiment(tmp_path, {"a": (5, None), "b": (5, None), "c": (3, None)}, name="looped")
    assert resumed(looped) == (10, 5)
    mixed = written_experiment(tmp_path, {"a": (5, None), "b": (10, None)}, name="mixed")
    assert resumed(mixed) == (10, 10), "a trial ran to max epochs: no shorter horizon"


def test_the_stall_records_why_it_ended_each_open_trial(tmp_path):
    """Ray stops every open trial when the stall ends the sweep, with no word of its own: the watch says why."""
    from tuner.folder.fates import fate, loop_end

    folder = str(tmp_path / "exp")
    clock = Clock()
    watch = StallWatch(timeout=10, folder=folder, clock=clock, fate_log=FateLog(folder))
    trials = [trial("waits", status="PAUSED", epoch=3), trial("done", status="TERMINATED", epoch=10)]
    watch.on_step_end(0, trials)
    clock.now = 10
    watch.on_step_end(0, trials)
    assert StallStopper(watch).stop_all()
    decisions = recorded(folder)
    assert list(decisions) == ["waits"]
    assert fate("TERMINATED", 3, 10, "", decisions["waits"]) == "ended by the stall at epoch 3 of 10"
    assert loop_end("TERMINATED", 3, 10, decisions["waits"]) is None


def test_fates_that_cannot_be_read_teach_nothing_and_raise_nothing_into_tune(tmp_path):
    """The storage holding earlier fates is away past its timeout: the loop's end is not learnt from this trial,
    and no OSError leaves Tune's callback (the storage guard is what stops the sweep then)."""
    watch, asha, table, said, _ = _loop_watch(str(tmp_path / "exp"))

    def away():
        raise OSError("the storage could not be reached for 300 s")

    watch.decisions.decisions = away
    looped = _reports(watch, asha, "looped", 1, 2, 3, 4, 5)
    watch.on_trial_complete(0, [looped], looped)
    assert not said and watch.learnt is None and table.max_epochs == 10


def test_a_failure_tune_retries_is_said_as_it_happens(tmp_path, caplog):
    """With --max-failures a crashed trial ran again without a word while the sweep ran."""
    import logging

    from ray.tune.experiment import Trial

    from tuner.launch.guards.crashes import CrashNamer

    error = tmp_path / "error.txt"
    error.write_text("Failure # 1 (occurred at 2026-11-29)\nTraceback (most recent call last):\nRuntimeError: transient failure\n")
    class Stored(Trial):  # a stub trial has no storage; in a sweep Ray's property gives this file
        error_file = str(error)

    trial = Stored("train", trial_id="t1", stub=True, max_failures=2)
    trial.update_last_result({"training_iteration": 3})
    trial.run_metadata.num_failures = 1
    from tuner.folder.fates import FateLog, fate, recorded

    log = FateLog(str(tmp_path))
    with caplog.at_level(logging.WARNING, logger="tuner.launch.guards.crashes"):
        CrashNamer(None, log).on_trial_recover(1, [trial], trial)
    assert caplog.messages == [
        "trial t1 failed after epoch 3 (RuntimeError: transient failure); running it again, failure 1 of the 2 "
        "--max-failures allows"
    ]
    # and every review says it after: the trial's fate keeps the failure it was run again after
    said = fate("TERMINATED", 5, 5, "", recorded(str(tmp_path))["t1"])
    assert said == "ran to max epochs (5); run again after failure 1, at epoch 3 (RuntimeError: transient failure)"


def test_a_trial_tune_made_but_never_gave_a_folder_is_counted_with_those_to_come():
    """After a stop, Tune may hold a pending trial it never started: it has no folder, so the fates do not know
    it; the summary counts it with the trials still to come, and the planned total stays the sweep's."""
    from types import SimpleNamespace

    from tuner.launch.wrap_up import unfinished_trials

    statuses = {"ran": "RUNNING", "waits": "PENDING", "made": "PENDING", "done": "TERMINATED"}
    counts = unfinished_trials(
        SimpleNamespace(trials_cap=6), "unused", statuses, recorded={"ran", "waits", "done"}, ran={"ran", "done"}
    )
    assert counts == (1, 1, 3)  # one unfinished, one not started, and 6 - 3 recorded to come
