"""Freeze-thaw on the simulated clock: the model of the curves, the features it reads, and what the scheduler
decides with them (pause, continue, stop, which trial or new config runs next)."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest
from ray import tune

from tuner.objectives import Objective
from tuner.replay.engine import Curve, replay
from tuner.replay.setup import build
from tuner.schedulers.config_features import ConfigFeatures
from tuner.schedulers.curve_fitting import MIN_TRIALS
from tuner.schedulers.curve_model import Observations, PowerLawEnsemble

EPOCHS = 12


class SlowStarters:
    """Curves whose best configs start worst: a config's final accuracy peaks at x = 0.8, y = 0.3, and the
    higher x, the lower its curve starts (at epoch 1 the best configs look among the worst; by epoch 3 they
    have caught up)."""

    def curve(self, config):
        x, y = float(config["x"]), float(config["y"])
        final = 0.9 - 0.6 * (x - 0.8) ** 2 - 0.6 * (y - 0.3) ** 2
        rows = [{"acc": final - 0.8 * x * t**-2.0} for t in range(1, EPOCHS + 1)]
        return Curve(dict(config), rows, [1.0] * EPOCHS)


ACC = (Objective("acc", "max"),)
SPACE = {"x": tune.uniform(0, 1), "y": tune.uniform(0, 1), "width": tune.choice([8, 16, 32]), "fixed": 3}


def _replay(scheduler="freeze-thaw", searcher="auto", *, workers=2, seed=0, budget=240, cap=None, can_pause=True):
    algorithms = build(SPACE, scheduler, searcher, objectives=ACC, max_epochs=EPOCHS, num_samples=cap or 64,
                       seed=seed, workers=workers, trials_cap=cap, can_pause=can_pause)  # fmt: skip
    out = replay(SlowStarters(), algorithms, workers=workers, metric="acc", mode="max", max_epochs=EPOCHS,
                 num_samples=cap, epoch_budget=None if cap else budget)  # fmt: skip
    return out, algorithms


@functools.cache
def _shared_replay(scheduler="freeze-thaw", searcher="auto", *, seed=0, cap=None, can_pause=True):
    """``_replay`` once for the tests that only read it (a replay takes seconds; several tests ask the same)."""
    return _replay(scheduler, searcher, seed=seed, cap=cap, can_pause=can_pause)


# --- the model --------------------------------------------------------------------------------------------


def test_the_power_law_ensemble_learns_where_configs_end_from_partial_curves():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(80, 2))
    finals = 0.8 - 0.6 * (x[:, 0] - 0.6) ** 2 - 0.4 * (x[:, 1] - 0.4) ** 2
    seen = rng.integers(1, 6, size=80)  # most configs seen for a few epochs only
    rows = np.concatenate([[i] * n for i, n in enumerate(seen)])
    epochs = np.concatenate([np.arange(1, n + 1) for n in seen])
    values = finals[rows] - 0.3 * epochs**-0.7
    model = PowerLawEnsemble(2, seed=1)
    model.fit(Observations(x, rows, epochs, values))
    model.fit(Observations(x, rows, epochs, values))  # a later fit starts from the last one's weights
    fresh = rng.uniform(size=(40, 2))
    truth = 0.8 - 0.6 * (fresh[:, 0] - 0.6) ** 2 - 0.4 * (fresh[:, 1] - 0.4) ** 2
    predicted = model.curves(fresh, np.array([EPOCHS]))[:, :, 0].mean(0)
    assert np.corrcoef(predicted, truth)[0, 1] > 0.9
    a, b, c = model.shapes(fresh)
    assert (b >= 0).all() and (c >= 0).all()  # every member's curve rises with the epochs


def test_a_fit_from_the_same_seed_and_data_is_the_same_fit():
    x = np.linspace(0, 1, 20)[:, None]
    data = Observations(x, np.repeat(np.arange(20), 3), np.tile([1, 2, 3], 20), np.repeat(x[:, 0], 3))
    first, second = PowerLawEnsemble(1, seed=5), PowerLawEnsemble(1, seed=5)
    first.fit(data)
    second.fit(data)
    for name in first.params:
        assert np.array_equal(first.params[name], second.params[name])


# --- the features -----------------------------------------------------------------------------------------


def test_features_read_each_kind_of_parameter_on_the_scale_it_is_drawn():
    params = {
        "lr": tune.loguniform(1e-4, 1e-1),
        "layers": tune.randint(1, 6),
        "act": tune.choice(["relu", "tanh"]),
        "batch": tune.choice([64, 16, 32]),
        "width": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
        "model": {"dropout": tune.uniform(0.0, 0.5)},
        "seed": 7,
    }
    features = ConfigFeatures(params, seed=0)
    row = features.encode({"lr": 1e-2, "layers": 5, "act": "tanh", "batch": 32, "width": 4, "model": {"dropout": 0.25},
                           "seed": 7})  # fmt: skip
    assert features.width == len(row) == 7  # lr, layers, act (two indicators), batch, width, dropout
    assert row[0] == pytest.approx(2 / 3)  # 1e-2 is two thirds of the way from 1e-4 to 1e-1 on a log scale
    assert row[1] == 1.0 and list(row[2:4]) == [0.0, 1.0] and row[4] == 0.5 and row[6] == 0.5
    for config in features.draw(50, np.random.RandomState(0)) + features.near(
        {"lr": 1e-4, "layers": 1, "act": "relu", "batch": 16, "width": 8, "model/dropout": 0.0, "seed": 7}, 50,
        np.random.RandomState(1),
    ):  # fmt: skip
        assert 1e-4 <= config["lr"] <= 1e-1 and config["layers"] in range(1, 6) and config["seed"] == 7
        assert 0.0 <= config["model/dropout"] <= 0.5 and config["width"] in {4, 8, 16, 32, 64, 128, 256}
        assert math.isfinite(features.encode(config).sum())


# --- decisions --------------------------------------------------------------------------------------------


def test_freeze_thaw_rescues_the_slow_starters_that_asha_stops():
    """The best configs (x near 0.8) look among the worst after one epoch: ASHA's first rung stops them, and
    its best trials come from faster starters; freeze-thaw's best trials are the slow starters."""
    ft = [_shared_replay(seed=s)[0] for s in range(3)]
    asha = [_shared_replay("asha", "random", seed=s)[0] for s in range(3)]

    def past_two(outcomes):  # of the trials with a slow-starting config, the share that ran past epoch 2
        slow = [t for out in outcomes for t in out.trials if t.config["x"] >= 0.75]
        return sum(t.epochs > 2 for t in slow) / len(slow)

    assert past_two(ft) > 2 * past_two(asha)
    assert np.median([out.best_trial().config["x"] for out in ft]) >= 0.75
    assert np.median([out.best_trial().config["x"] for out in asha]) < 0.75


def test_a_paused_trial_is_continued_later_from_where_it_was():
    out, _ = _shared_replay(seed=1)
    thawed = [t for t in out.trials if "PAUSE" in [d for _, d in t.decisions[:-1]] and t.epochs > 1]
    assert thawed, "no paused trial was ever continued"
    for trial in thawed:
        assert [e for e, _ in trial.decisions] == list(range(1, trial.epochs + 1))  # every epoch once, in order


def test_without_checkpoints_a_trial_is_stopped_never_paused():
    out, algorithms = _shared_replay(seed=0, can_pause=False)
    decisions = {d for t in out.trials for _, d in t.decisions}
    assert "PAUSE" not in decisions and "STOP" in decisions
    assert "pause" not in algorithms.scheduler.debug_string()  # the live status line counts no pauses either
    from tuner.schedulers.curve_scheduler import FreezeThawScheduler

    assert "0 pause(s), " in FreezeThawScheduler(EPOCHS, ConfigFeatures(SPACE, 0)).debug_string()  # one that can
    assert not out.stalled


def test_without_checkpoints_the_random_start_stops_what_asha_would_stop():
    """No trial can wait paused for the first model, so until it comes a trial goes on only while in the better
    half of the trials at its check (it used to run to its end)."""
    out, algorithms = _shared_replay(seed=0, can_pause=False)
    early = [r for rs in algorithms.fate_log.rungs.values() for r in rs if r.get("predicted") is None]
    assert early, "no trial was stopped before the first model"
    assert all("outside the better half" in r["reason"] and "not fitted yet" in r["reason"] for r in early)
    first = out.trials[:MIN_TRIALS]
    assert sum(t.epochs for t in first) < MIN_TRIALS * EPOCHS
    assert any(t.epochs > 2 for t in first), "the better half of the random start went on"


def _scheduler_with(curves, mode="min"):
    """A freeze-thaw scheduler for a trainable without checkpoints, told each trial's values (None: no value)."""
    from tuner.schedulers.curve_scheduler import FreezeThawScheduler

    scheduler = FreezeThawScheduler(EPOCHS, ConfigFeatures(SPACE, 0), can_pause=False, grace=2, growth=2.0,
                                    metric="loss", mode=mode)  # fmt: skip
    for trial_id, values in curves.items():
        for epoch, value in enumerate(values, 1):
            scheduler._take(trial_id, epoch, value)
    return scheduler


def test_the_better_half_counts_every_trial_at_the_epoch_by_its_best_so_far_and_keeps_ties():
    scheduler = _scheduler_with({"a": [0.9, 0.5], "b": [0.8, 0.6], "c": [0.7, 0.7], "d": [0.6, 0.65], "e": [1.0]})
    at_two = {t: scheduler._among_better(t, 2) for t in "abcd"}  # best so far: 0.5, 0.6, 0.7, 0.6 (d's 0.6 from epoch 1)
    assert [at_two[t].kept for t in "abcd"] == [True, True, False, True]  # fewer than 4 / 2 strictly better
    assert str(at_two["b"]) == "its best loss so far, 0.6, ranks 2 of 4 at epoch 2, within the better half (cutoff 0.6)"
    assert str(at_two["c"]) == "its best loss so far, 0.7, ranks 4 of 4 at epoch 2, outside the better half (cutoff 0.6)"
    at_one = [scheduler._among_better(t, 1) for t in "abcde"]  # 5 trials: fewer than 2.5 better is within
    assert [s.kept for s in at_one] == [False, True, True, True, False] and at_one[0].cutoff == 0.8
    assert _scheduler_with({"alone": [3.0]})._among_better("alone", 1).kept  # a trial alone at its epoch goes on
    nothing = _scheduler_with({"a": [0.5], "nan": [None]})._among_better("nan", 1)
    assert not nothing.kept and str(nothing) == "it has reported no finite loss by epoch 1"
    higher = _scheduler_with({"a": [0.9], "b": [0.5]}, mode="max")  # the sign follows the mode
    assert higher._among_better("a", 1).kept and not higher._among_better("b", 1).kept


def test_the_plan_says_how_freeze_thaw_decides_without_checkpoints():
    from tuner.objectives import LOSS
    from tuner.schedulers import REGISTRY
    from tuner.schedulers.base import SchedulerContext

    entry = REGISTRY["freeze-thaw"]()
    pausing, stopping = (entry.describe(SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=8,
                                                         can_pause=can)) for can in (True, False))  # fmt: skip
    assert "otherwise it is paused" in pausing[1] and "the first 6 trial(s) wait for the first model" in pausing[2]
    assert "in the better half of all trials' at that epoch" in stopping[1] and "otherwise it is stopped" in stopping[1]
    assert "no trial is paused and a stop is final" in stopping[2] and "the better half alone decides" in stopping[2]
    # a sweep of fewer trials than the model needs: what happens instead, not a model that never comes
    small = [entry.describe(SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=4, can_pause=can,
                                             trials_cap=4))[2] for can in (True, False)]  # fmt: skip
    assert small[0] == ("  the model needs 6 trials with results, more than this sweep's 4: each trial pauses at "
                        "epoch 2 until all have started, then runs to its end")  # fmt: skip
    assert "no model is fitted (it needs 6 trials with results, more than this sweep's 4), so the better half" in small[1]
    # the dry run's settings agree with the plan where no epoch before the last is left to weigh a trial at
    short = SchedulerContext(max_epochs=2, objectives=LOSS, params={}, num_samples=8)
    assert "every trial runs all 2" in entry.describe(short)[1]
    assert entry.settings_said(short) == {"grace_period": "freeze-thaw weighs no trial: every one runs all 2 epochs",
                                          "reduction_factor": "not used by freeze-thaw"}  # fmt: skip


def test_without_checkpoints_a_trial_asha_would_keep_is_never_stopped_for_a_new_config():
    from ray.tune.experiment import Trial
    from ray.tune.schedulers import TrialScheduler

    _, algorithms = _replay(seed=0, can_pause=False)
    scheduler = algorithms.scheduler
    scheduler._pool_means = np.full_like(scheduler._pool_means, 2.0)  # every new config beats everything
    scheduler._version += 1
    scheduler._hopeless = lambda mine, epoch: False  # the share decides here, not the hopeless rule
    at = 4
    reached = sorted((c[at - 1], tid) for tid, c in scheduler.curves.items() if len(c) >= at)
    for value, trial_id in (reached[-1], reached[0]):  # the best at epoch 4, and the worst
        scheduler.next_check.pop(trial_id, None)
        decision = scheduler._decide(_Trials(), _trial(trial_id, Trial.RUNNING), at, value)
        reason = algorithms.fate_log.rungs[trial_id][-1]["reason"]
        if trial_id == reached[-1][1]:
            assert decision == TrialScheduler.CONTINUE
            assert f"ranks 1 of {len(reached)} at epoch 4, within the better half" in reason, reason
        else:
            assert decision == TrialScheduler.STOP and "a new config promises more" in reason, reason


def test_a_sweep_with_a_trial_cap_ends_with_every_trial_done_or_stopped():
    out, algorithms = _shared_replay(seed=2, cap=24)
    assert len(out.trials) == 24 and not out.stalled
    assert all(t.epochs >= 1 for t in out.trials)
    assert out.epochs < 24 * EPOCHS  # it stopped some rather than run every trial to the end


def test_a_replay_decides_the_same_every_time():
    first, second = _replay(seed=3)[0], _replay(seed=3)[0]
    assert [(t.config, t.decisions) for t in first.trials] == [(t.config, t.decisions) for t in second.trials]


def test_each_pause_and_stop_says_why_in_the_metric_s_units():
    out, algorithms = _shared_replay(seed=0, can_pause=False)
    stopped = [t.fate for t in out.trials if t.fate.startswith("stopped early by freeze-thaw")]
    assert stopped
    predicted = [fate for fate in stopped if "predicted" in fate]
    assert predicted and all(f" at epoch {EPOCHS}, best so far " in fate for fate in predicted)
    before_the_model = [fate for fate in stopped if fate not in predicted]  # the better half alone decided
    assert all(re.search(r"best acc so far, [\d.]+, ranks \d+ of \d+ .*cutoff [\d.]+", f) for f in before_the_model)
    comparisons = [r for rungs in algorithms.fate_log.rungs.values() for r in rungs]
    assert comparisons and all(r["reason"].startswith(("goes on", "stopped", "paused")) for r in comparisons)


class _Trials:
    """Tune's controller as a scheduler reads it when choosing: the trials and their statuses."""

    def __init__(self, *trials):
        self.trials = list(trials)

    def get_trials(self):
        return self.trials


def _trial(trial_id, status):
    from ray.tune.experiment import Trial

    trial = Trial("replay", config={}, trial_id=trial_id, stub=True)
    trial.set_status(status)
    return trial


def test_a_new_trial_is_made_only_when_it_promises_at_least_what_every_paused_one_does():
    from ray.tune.experiment import Trial

    out, algorithms = _replay(seed=4)
    scheduler = algorithms.scheduler
    promising = max(scheduler.rows, key=lambda t: scheduler.predict(t).gain)
    paused = _trial(promising, Trial.PAUSED)
    scheduler.frozen, scheduler.ended = {promising}, set()

    scheduler._pool_means = np.full_like(scheduler._pool_means, -1.0)  # every new config predicted hopeless
    scheduler._version += 1
    assert not scheduler.wants_new_trial()  # the gate holds the searcher back ...
    assert scheduler.choose_trial_to_run(_Trials(paused)) is paused  # ... and the paused trial goes on
    assert promising not in scheduler.frozen  # continued: its pause no longer stands

    scheduler.frozen = {promising}
    scheduler._pool_means = np.full_like(scheduler._pool_means, 2.0)  # every new config beats everything
    scheduler._version += 1
    assert scheduler.wants_new_trial()
    scheduler.frozen = set()
    assert scheduler.wants_new_trial()  # nothing paused: new trials come as Tune asks for them


# --- a trainable whose own loop ends before max_epochs -----------------------------------------------------

LOOP = 6  # the trainable's own loop: half of EPOCHS


class ShortLoop(SlowStarters):
    """The slow starters from a trainable that loops ``range(LOOP)`` whatever max_epochs says."""

    def curve(self, config):
        whole = super().curve(config)
        return Curve(whole.config, whole.rows[:LOOP], whole.seconds[:LOOP])


@functools.cache
def _short_loop_replay(seed=0):
    algorithms = build(SPACE, "freeze-thaw", "auto", objectives=ACC, max_epochs=EPOCHS, num_samples=16,
                       seed=seed, workers=2, trials_cap=16)  # fmt: skip
    log, written = algorithms.fate_log, []
    keep = log.record

    def record(trial_id, kind, text, data=None):  # the log as written, in order, besides what it keeps
        written.append((trial_id, kind, dict(data or {})))
        keep(trial_id, kind, text, data)

    log.record, log.written = record, written
    out = replay(ShortLoop(), algorithms, workers=2, metric="acc", mode="max", max_epochs=EPOCHS, num_samples=16)
    return out, algorithms


def test_the_model_predicts_where_the_trainables_own_loop_ends_once_a_trial_ended_there():
    out, algorithms = _short_loop_replay()
    scheduler = algorithms.scheduler
    assert scheduler.horizon == LOOP and scheduler.max_t == EPOCHS
    assert any(t.epochs == LOOP for t in out.trials), "some trial ran its whole loop"
    records = sorted((r for rungs in algorithms.fate_log.rungs.values() for r in rungs), key=lambda r: r["arrived"])
    said = [r["reason"] for r in records if "predicted" in r["reason"]]
    first = next(i for i, reason in enumerate(said) if f" at epoch {LOOP}, best so far" in reason)
    assert all(f" at epoch {EPOCHS}," not in reason for reason in said[first:]), "predictions past the loop's end"
    known = min(t.ended for t in out.trials if t.epochs == LOOP)  # when the first trial ended by its loop
    ended = {t.trial_id: t.ended for t in out.trials}
    stops = [text for tid, text in algorithms.fate_log.texts.items()
             if text.startswith("stopped early") and ended[tid] > known]  # fmt: skip
    assert stops and all(f"at epoch {LOOP}, best so far" in text for text in stops)
    assert f"predicting epoch {LOOP} (the trainable's own loop ends there)" in scheduler.debug_string()


def test_a_trial_at_its_loops_end_is_neither_paused_nor_stopped():
    """Once the loop's end is known, a trial there (one continued after a resume, or due a check there) is left
    to end by itself: a pause or a stop would cut nothing and read as an early stop."""
    from types import SimpleNamespace

    from ray.tune.schedulers import TrialScheduler

    _, algorithms = _short_loop_replay()
    scheduler = algorithms.scheduler
    trial_id = min(scheduler.rows, key=lambda t: scheduler.predict(t).gain)  # the least promising
    scheduler.next_check[trial_id] = LOOP  # due to be weighed at its loop's last epoch
    decided = scheduler._decide(None, SimpleNamespace(trial_id=trial_id), LOOP, 0.0)
    assert decided == TrialScheduler.CONTINUE


def test_a_trial_that_runs_past_the_loops_end_raises_the_horizon_and_is_weighed_there():
    """Loops that differ by config: the horizon is where freeze-thaw predicts to, never a line past which it
    judges no trial. One that reports past it raises the horizon to max epochs and is weighed as any other."""
    import copy
    from types import SimpleNamespace

    _, algorithms = _short_loop_replay()
    scheduler = copy.deepcopy(algorithms.scheduler)  # the replay is shared with other tests
    assert scheduler.horizon == LOOP and scheduler.model is not None
    decided = []
    scheduler.fate_log = SimpleNamespace(record=lambda tid, kind, text, data=None: decided.append((tid, kind, data)))
    trial_id = next(t for t, curve in scheduler.curves.items() if len(curve) == LOOP)  # it ran its whole loop
    scheduler.next_check[trial_id] = LOOP + 1
    controller = SimpleNamespace(get_trials=lambda: [])
    result = {"training_iteration": LOOP + 1, "acc": 0.5}
    scheduler.on_trial_result(controller, SimpleNamespace(trial_id=trial_id), result)
    assert scheduler.horizon == EPOCHS
    weighed = [data for tid, kind, data in decided if tid == trial_id and kind == "rung"]
    assert weighed and weighed[0]["epoch"] == LOOP + 1 and f" at epoch {EPOCHS}, best so far" in weighed[0]["reason"]


def test_a_chance_reads_as_the_reasons_say():
    from tuner.schedulers.curve_fitting import chance_said as _chance

    shown = [_chance(0.042), _chance(0.00042), _chance(0.00001)]
    assert shown == ["a 4.20%", "a 0.04%", "under a 0.01%"]
    assert re.findall(r'"([^"]+)"', _chance.__doc__) == shown, "the docstring's examples are what it writes"


def test_a_reason_never_weighs_a_trial_against_one_stopped_at_the_same_check_and_its_numbers_differ():
    compared = 0
    for seed in range(3):
        _, algorithms = _short_loop_replay(seed)
        rungs = algorithms.fate_log.rungs
        stopped_at = {(tid, r["arrived"]) for tid, rs in rungs.items() for r in rs if r["verdict"] == "stopped"}
        for tid, records in rungs.items():
            for r in records:
                reason = r["reason"]
                if "promises more:" not in reason and " against trial " not in reason:
                    continue
                compared += 1
                named = re.search(r"\btrial (\w+)", reason)  # or "a new config"
                if named:
                    rival = named.group(1)
                    assert rival != tid and (rival, r["arrived"]) not in stopped_at, reason
                mine, theirs = _gains(reason)
                assert mine != theirs, reason
    assert compared, "no reason weighed one trial against another"


def test_hopeless_paused_trials_are_stopped_before_the_trial_at_hand_is_weighed_against_them():
    """A check stops the paused trials the model gives no chance first, then decides the trial that reported:
    its reason can only name a rival still in the running."""
    same_check = 0
    for seed in (0, 1, 2, 6):  # 6: a check there stops a paused trial before deciding the one that reported
        _, algorithms = _short_loop_replay(seed)
        checks = {}
        for trial_id, kind, data in algorithms.fate_log.written:
            if kind == "rung":
                checks.setdefault(data["arrived"], []).append((trial_id, data["verdict"]))
        for records in checks.values():
            decided = next((i for i, (_, verdict) in enumerate(records) if verdict != "stopped"), None)
            if decided is None:
                continue
            same_check += decided > 0
            assert all(tid == records[decided][0] for tid, _ in records[decided:]), records
    assert same_check, "no check stopped a paused trial before deciding the one that reported"


def _gains(reason):
    """(this trial's expected gain, the rival's) as a reason gives them."""
    if "promises more:" in reason:
        theirs, mine = reason.split("an expected gain of ")[1].split(" against this trial's ")
    else:
        mine, theirs = reason.split("its expected gain ")[1].split(" against ")
        theirs = theirs.split("'s ")[1]
    return mine.strip(), theirs.strip()


def test_a_resumed_sweep_keeps_its_counts_and_its_model_before_its_first_choice(tmp_path):
    """Tune keeps no state of freeze-thaw's that it can use: the pauses and stops it decided and the model of the
    curves so far come back from the experiment, so the status line does not start over at a random start."""
    from tests.unit.test_fates import written_experiment
    from tuner import schedulers
    from tuner.folder.fates import FateLog
    from tuner.objectives import LOSS
    from tuner.schedulers.base import SchedulerContext

    paused = {"rungs": [{"rung": 2, "verdict": "paused", "kept": False}, {"rung": 4, "verdict": "goes on", "kept": True}]}
    stopped = {"rungs": [{"rung": 2, "verdict": "stopped", "kept": False}],
               "stopped": "stopped early by freeze-thaw at epoch 2: a 0.1% chance to beat the best"}  # fmt: skip
    folder = written_experiment(tmp_path, {**{f"t{i}": (6, None) for i in range(6)}, "p": (4, paused), "s": (2, stopped)})
    ctx = SchedulerContext(max_epochs=10, objectives=LOSS, params={"x": tune.uniform(0, 10)}, num_samples=8,
                           fate_log=FateLog(folder))  # fmt: skip
    scheduler = schedulers.entry("freeze-thaw").build(ctx)
    assert scheduler.debug_string().startswith("freeze-thaw: 0 pause(s), 0 trial(s) stopped early so far; random start")
    scheduler._restore()
    assert scheduler.model is not None and scheduler.fitted_points == 6 * 6 + 4 + 2
    assert scheduler.debug_string().startswith(
        "freeze-thaw: 1 pause(s), 1 trial(s) stopped early so far; model fitted on 42 epochs"
    )


def test_gains_too_small_to_tell_apart_both_read_about_0_and_one_that_is_not_reads_as_it_is():
    """8.2e-14 against 0 is the model's rounding: a reason says neither promises a gain, not which is larger."""
    scheduler = _scheduler_with({"a": [0.5, 0.4]})
    assert scheduler._gains_said(8.2e-14, 0.0) == ["about 0", "about 0"]
    small, none = scheduler._gains_said(0.25, 1e-9)
    assert none == "about 0" and small != "about 0"


@pytest.mark.parametrize("max_t, first_hopeless", [(3, 2), (4, 3), (12, 4)])
def test_a_hopeless_trial_is_stopped_from_its_fourth_epoch_or_the_one_before_a_shorter_sweeps_last(max_t, first_hopeless):
    """In a 3-epoch sweep a trial never reached epoch 4: a flat curve with no chance was paused, continued and run
    to its end while new trials could still come."""
    from tuner.schedulers.curve_fitting import Prediction
    from tuner.schedulers.curve_scheduler import FreezeThawScheduler

    scheduler = FreezeThawScheduler(max_t, ConfigFeatures(SPACE, 0), metric="loss", mode="min")
    none, some = Prediction(0.1, 0.01, 0.0, 1e-6), Prediction(0.1, 0.01, 0.0, 0.01)
    assert [scheduler._hopeless(none, e) for e in range(1, max_t)] == [e >= first_hopeless for e in range(1, max_t)]
    assert not scheduler._hopeless(some, max_t - 1)
    scheduler.searching = False  # no new trial can come: from its first weighing
    assert scheduler._hopeless(none, 1)
