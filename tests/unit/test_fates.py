"""One rule decides a trial's fate (tuner/folder/fates.py); the views count its families and kinds, and the
sweep learns the trainable's own loop from it."""

from __future__ import annotations

import json

import yaml

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


def test_a_trial_still_paused_when_the_budget_ran_out_was_ended_by_the_budget_not_cut_by_the_scheduler():
    """Freeze-thaw's random start pauses trials until its first model; a budget spent then ended them there, and
    the report credited early stopping with their epochs."""
    paused = {"paused": "paused at epoch 3: waits for the first model of the curves (fitted once 6 trials have "
                        "results; 4 have)", "rungs": [{"rung": 3, "epoch": 3, "verdict": "paused"}],
              "budget": "ended by the budget"}  # fmt: skip
    text = fate("TERMINATED", 3, 8, "", paused)
    assert text == f"ended by the budget at epoch 3 of 8, while {paused['paused']}"
    assert not cut_by_scheduler(text) and kind(text) == "stopped early" and loop_end("TERMINATED", 3, 8, paused) is None


def test_a_trial_at_max_epochs_ran_to_them_and_one_that_never_reported_teaches_no_length():
    assert fate("TERMINATED", 10, 10, "", {}) == "ran to max epochs (10)"
    assert loop_end("TERMINATED", 10, 10, {}) is None
    assert fate("TERMINATED", 0, 10, "", {}) == "ended by its own loop before its first report"
    assert loop_end("TERMINATED", 0, 10, {}) is None


def test_a_trial_paused_at_its_last_epoch_ran_to_max_epochs_however_the_sweep_stopped():
    """HyperBand pauses a trial that reached max epochs until its bracket is done; after Ctrl-C it read
    "unfinished: the sweep stopped; tuner resume continues it" though nothing was left to run."""
    paused = {"paused": "paused at epoch 3: waits for its bracket"}
    for live in (True, False):
        assert fate("PAUSED", 3, 3, "", paused, live=live) == "ran to max epochs (3)"
        assert fate("PENDING", 3, 3, "", {}, live=live) == "ran to max epochs (3)"
    assert fate("PAUSED", 2, 3, "", {}, live=False) == "unfinished: the sweep stopped; tuner resume continues it"
    # a running one may hold no checkpoint of its last epoch: a resume may run it again
    assert fate("RUNNING", 3, 3, "", {}, live=False) == "unfinished: the sweep stopped; tuner resume continues it"


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


COLUMNS = "loss,training_iteration,trial_id,time_this_iter_s"


def written_experiment(tmp_path, trials, max_epochs=10, scheduler="freeze-thaw", name="exp"):
    """An experiment on disk as a finished sweep leaves it (no Ray): ``trials`` maps each trial id to its epochs
    and the decision recorded for it (None: none, as for a trial that ran to its end)."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    settings = {"space": "x.py", "scheduler": scheduler, "searcher": "random", "num_samples": len(trials),
                "max_epochs": max_epochs, "metric": "loss", "mode": "min", "name": name,
                "storage_path": str(tmp_path)}  # fmt: skip
    (folder / "tuner_config.yaml").write_text(yaml.safe_dump(settings))
    state, decisions = [], {}
    for n, (trial_id, (epochs, decision)) in enumerate(trials.items()):
        (folder / trial_id).mkdir()
        (folder / trial_id / "params.json").write_text(json.dumps({"x": n}))
        rows = [f"{n + 1 / e},{e},{trial_id},0.5" for e in range(1, epochs + 1)]
        (folder / trial_id / "progress.csv").write_text("\n".join([COLUMNS, *rows]) + "\n")
        trial = {"trial_id": trial_id, "status": "TERMINATED", "relative_logdir": trial_id,
                 "experiment_tag": f"{n + 1}_x={n}", "config": {"x": n}}  # fmt: skip
        state.append([json.dumps(trial), json.dumps({"error_filename": None})])
        if decision:
            decisions[trial_id] = decision
    (folder / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps({"trial_data": state}))
    (folder / "fates.json").write_text(json.dumps(decisions))
    return str(folder)


def test_no_horizon_comes_below_a_trial_that_ran_further(tmp_path):
    """A loop whose length differs by config: one trial its loop ended at 5, nine that ran to max epochs. Every
    trial is taken to run 10 epochs unless stopped, and a cut is counted to there."""
    from tuner.experiment import load
    from tuner.review.report.scheduler_panel import loop_ends_line, savings_line, settings_lines

    trials = {"short": (5, None), **{f"long{i}": (10, None) for i in range(8)}, "cut": (2, STOPPED)}
    record = load(written_experiment(tmp_path, trials), running=False)
    assert [t.loop_end for t in record.trials][0] == 5 and record.trial("short").fate == "ended by its own loop at epoch 5"
    assert record.horizon == 10
    assert record.epochs_cut(record.trial("cut")) == 8, "cut from epoch 2 to the 10 the others ran"
    assert "(each trial it stopped run on to max epochs): early stopping saved up to 8 epochs" in savings_line(record)
    assert "own loop ended trials at epoch 5 and others ran to 10, so a stopped trial's own loop may have ended it" in (
        savings_line(record)
    )
    said = loop_ends_line(record)
    assert said == "trials ended by their own loop before max epochs 10: 1 at epoch 5" and said in settings_lines(record)
    assert not any("took a trial to end" in line for line in settings_lines(record))
    # loops of 3 and 5 with none further: trials end by epoch 5; one stopped at 7 says loops go further
    ends = {"a": (3, None), "b": (5, None), "c": (5, None), "cut": (2, STOPPED)}
    assert load(written_experiment(tmp_path, ends, name="ends"), running=False).horizon == 5
    past = {**ends, "later": (7, {"stopped": "stopped early by ASHA at epoch 7: loss 3 > rung cutoff 2"})}
    record = load(written_experiment(tmp_path, past, name="past"), running=False)
    assert record.horizon == 10 and loop_ends_line(record).endswith(": 1 at epoch 3, 2 at epoch 5")
    # a trainable that loops to the max_epochs it is given: trials that ended sooner teach no horizon
    from tuner.folder import plan

    folder = written_experiment(tmp_path, ends, name="given")
    plan.write(folder, ["plan"], 2, own_loop=False)
    assert load(folder, running=False).horizon == 10


def test_the_plan_keeps_its_trials_at_once_as_data_and_an_older_one_is_read_from_its_words(tmp_path):
    from tuner.experiment import load
    from tuner.folder import plan

    folder = written_experiment(tmp_path, {"a": (3, None)})
    assert load(folder, running=False).planned_at_once() is None, "a sweep made before plans were kept"
    (tmp_path / "exp" / "plan.txt").write_text("resources: 1 CPU and 0 GPU per trial; 4 trial(s) at once\n")
    assert load(folder, running=False).planned_at_once() == 4, "made before the number was kept as data"
    plan.write(folder, ["resources: 1 CPU and 0 GPU per trial (the words may change)"], 3)
    record = load(folder, running=False)
    assert record.planned_at_once() == 3 and record.plan_lines() == [
        "resources: 1 CPU and 0 GPU per trial (the words may change)"
    ]


def test_a_new_sweep_at_a_path_forgets_what_the_driver_kept_for_an_earlier_one_there(tmp_path, monkeypatch):
    """A sweep refused at its first result had its folder removed but left its rung decisions beside it, and the
    next sweep of that name compared its trials with them."""
    from tuner import storage
    from tuner.folder.fates import FateLog, recorded
    from tuner.folder.names import SIDECARS
    from tuner.launch.runner import forget_sidecars

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = str(tmp_path / "exp")
    FateLog(folder).record("old", "rung", "", {"rung": 1, "value": 0.5, "kept": True})
    for name in SIDECARS:
        storage.sidecar(folder, name).parent.mkdir(parents=True, exist_ok=True)
        storage.sidecar(folder, name).write_text("{}")
    forget_sidecars(folder)
    assert not any(storage.sidecar(folder, name).exists() for name in SIDECARS)
    assert recorded(folder) == {}


def test_the_fates_file_is_written_even_when_nothing_decided_a_trials_end(tmp_path, monkeypatch):
    """docs/review.md lists fates.json in every experiment; a sweep whose trials all ran to their end had none."""
    import json

    from tuner.folder.fates import persist

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "exp").mkdir()
    persist(str(tmp_path / "exp"))
    assert json.loads((tmp_path / "exp" / "fates.json").read_text()) == {}
