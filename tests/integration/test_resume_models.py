"""Resuming model-based sweeps and errored trials, repeating a sweep by its seed, plots of a NaN loss."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.instant import instant_space
from tests.integration.killing import kill_9_when
from tuner import experiment
from tuner.objectives import LOSS
from tuner.ray_compat.state_file import saved_trial_states

pytestmark = pytest.mark.slow


def _reported(folder: Path, trials: int) -> bool:
    return sum(1 for p in folder.glob("*/progress.csv") if len(p.read_text().splitlines()) >= 2) >= trials


def _observations(searcher: str, folder: Path) -> int:
    """How many finished trials the saved model knows, read from the searcher state Ray saved last."""
    from tuner.launch.registry import load_space
    from tuner.searchers import SearcherContext, build_searcher, plan_search

    config = experiment.load(str(folder)).config
    plan = plan_search(load_space(config.space).params, searcher, config.seed)
    restored = build_searcher(plan, SearcherContext(LOSS, config.num_samples, config.seed))
    restored.restore(str(sorted(folder.glob("searcher-state-*.pkl"))[-1]))
    inner = restored.inner
    if searcher == "optuna":
        return sum(t.state.name == "COMPLETE" for t in inner._ot_study.trials)
    return len(inner.optimizer.space)  # bayesopt (its random-phase buffer is registered there too)


# Two of Ray's wrappers on a real kill: an Optuna study (cqr keeps one too) and BayesOpt's optimizer, whose saved
# state the contract test (tests/unit/test_scheduler_contract.py) cannot always tell from a fresh one, as it may
# propose nothing new. HyperOpt's save is held to proposing as the original did there, on the simulated clock.
@pytest.mark.parametrize("searcher", ["optuna", "bayesopt"])
def test_a_model_based_sweep_killed_with_9_resumes_its_model_to_exactly_num_samples(
    run_cli, tmp_path, searcher
):
    space = instant_space(tmp_path, sleep=0.3)
    folder = tmp_path / "killed"
    args = ["sweep", "--space", space, "--searcher", searcher, "--scheduler", "fifo", "--num-samples", "6",
            "--max-epochs", "3", "--storage-path", tmp_path, "--name", "killed"]  # fmt: skip
    kill_9_when([str(a) for a in args], lambda: _reported(folder, 3), timeout=120)
    before = experiment.load(str(folder))
    assert len(before.trials) < 6 or any(t.status != "TERMINATED" for t in before.trials), "killed too late"

    result = run_cli("resume", folder)
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    after = experiment.load(str(folder))
    assert len(after.trials) == 6 and {t.status for t in after.trials} == {"TERMINATED"}
    configs = [json.dumps(t.config, sort_keys=True) for t in after.trials]
    assert len(set(configs)) == 6, "no config proposed twice"
    for trial in after.trials:
        assert [int(float(r["epoch"])) for r in trial.rows] == [1, 2, 3], trial.trial_id  # none run twice
    assert _observations(searcher, folder) == 6, "the model kept what it learnt before the kill"


def test_a_trial_started_after_the_last_saved_state_is_run_again_once_and_its_folder_kept(run_cli, tmp_path):
    """A kill -9 between a trial's start and the next save of Ray's state leaves a trial folder no state lists
    (made here from a reported trial's folder under a new id, as the kill leaves it): shown until a resume, which
    runs a new trial in its place and leaves the old folder, kept as it was, out of the review."""
    space = instant_space(tmp_path, sleep=0.3)
    folder = tmp_path / "killed"
    args = ["sweep", "--space", space, "--searcher", "optuna", "--scheduler", "fifo", "--num-samples", "4",
            "--max-epochs", "3", "--storage-path", tmp_path, "--name", "killed"]  # fmt: skip
    kill_9_when([str(a) for a in args], lambda: _reported(folder, 1), timeout=120)
    listed = {state["dir"] for state in saved_trial_states(folder).values()}
    source = next(d for d in sorted(folder.iterdir()) if d.name in listed and (d / "progress.csv").is_file())
    trial_id = source.name.split("_", 1)[0]
    unsaved = folder / ("feedf00d" + source.name[len(trial_id):])
    unsaved.mkdir()
    for name in ("params.json", "progress.csv", "result.json"):
        if (source / name).is_file():
            (unsaved / name).write_text((source / name).read_text().replace(trial_id, "feedf00d"))
    copied = (unsaved / "progress.csv").read_text()
    assert "feedf00d" in {t.trial_id for t in experiment.load(str(folder)).trials}  # a started trial, until resumed

    result = run_cli("resume", folder)
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert (
        f"trial feedf00d: started after the last saved state, so it cannot be continued; the search runs a new "
        f"trial in its place (its folder {unsaved.name} is kept, left out of the review)"
    ) in result.out.splitlines(), result.out[-3000:]
    after = experiment.load(str(folder))
    assert len(after.trials) == 4 and {t.status for t in after.trials} == {"TERMINATED"}, after.trials
    assert "feedf00d" not in {t.trial_id for t in after.trials}
    assert (unsaved / "progress.csv").read_text() == copied
    listed = run_cli("results", folder, "--format", "json")
    assert len(json.loads(listed.out)) == 4
    again = run_cli("resume", folder)  # nothing left to run, and the folder is not named a second time
    assert "feedf00d" not in again.out, again.out[-2000:]


@pytest.mark.parametrize("errored", ["resume", "restart", "skip"])
def test_resume_decides_what_happens_to_errored_trials(run_cli, tmp_path, errored):
    space = instant_space(tmp_path, crash_at=2)
    result = run_cli("sweep", "--space", space, "--searcher", "random", "--scheduler", "fifo", "--num-samples", "1",
                     "--max-epochs", "3", "--storage-path", tmp_path, "--name", "errored")  # fmt: skip
    folder = tmp_path / "errored"
    assert [t.status for t in experiment.load(str(folder)).trials] == ["ERROR"]
    result = run_cli("resume", folder, "--errored", errored)
    trial = experiment.load(str(folder)).trials[0]
    epochs = [int(float(r["epoch"])) for r in trial.rows]
    if errored == "skip":  # its only trial failed and stays failed: no success to report
        assert result.code == 1 and "every trial failed (1 of 1)" in result.err, result.err[-2000:]
        assert trial.status == "ERROR" and epochs == [1]
    else:
        assert result.code == 0, result.err[-2000:]
        assert trial.status == "TERMINATED" and epochs == [1, 2, 3]
        # resume goes on from the epoch-1 checkpoint (2 epochs since); restart trains all 3 again
        assert int(trial.rows[-1]["iterations_since_restore"]) == (2 if errored == "resume" else 3)


def test_the_same_seed_proposes_the_same_configs_when_trials_run_one_at_a_time(run_cli, tmp_path):
    space = instant_space(tmp_path)
    runs = []
    for name in ("first", "second"):
        result = run_cli("sweep", "--space", space, "--searcher", "optuna", "--scheduler", "fifo", "--num-samples", "5",
                         "--max-concurrent", "1", "--seed", "7", "--storage-path", tmp_path, "--name", name)  # fmt: skip
        assert result.code == 0, result.err[-2000:]
        states = saved_trial_states(str(tmp_path / name))
        trials = {t.trial_id: t for t in experiment.load(str(tmp_path / name)).trials}
        runs.append([trials[tid].config for tid in states])  # Ray saves trials in the order it created them
    assert runs[0] == runs[1]


def test_plots_draw_a_trial_whose_loss_became_nan(run_cli, tmp_path):
    space = instant_space(tmp_path, nan_at=2)
    result = run_cli("sweep", "--space", space, "--searcher", "random", "--scheduler", "fifo", "--num-samples", "2",
                     "--max-epochs", "3", "--storage-path", tmp_path, "--name", "nan")  # fmt: skip
    assert result.code == 0, result.err[-2000:]
    plotted = run_cli("plot", tmp_path / "nan", "--out", tmp_path / "plots")
    assert plotted.code == 0, plotted.err
    assert (tmp_path / "plots" / "loss_per_epoch.png").stat().st_size > 1000


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_whole_process_group_ends_the_sweep_resumably_with_its_code(
    run_cli, tmp_path, signum
):
    """Plain ``timeout`` and a closed terminal signal every process of the group, the local Ray's too: the
    sweep ends within seconds with the resume command and 128 + the signal (Ray's core would wait a minute
    for its GCS and exit 1), and resumes to every trial with no epoch run twice."""
    space = instant_space(tmp_path, sleep=0.3)
    folder = tmp_path / "grouped"
    driver = subprocess.Popen(
        [sys.executable, "-m", "tuner", "sweep", "--space", str(space), "--searcher", "random", "--scheduler", "fifo",
         "--num-samples", "6", "--max-epochs", "3", "--storage-path", str(tmp_path), "--name", "grouped"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.time() + 120
        while not _reported(folder, 2):
            assert time.time() < deadline and driver.poll() is None, "the sweep never got that far"
            time.sleep(0.2)
        signalled = time.time()
        os.killpg(driver.pid, signum)
        out, err = driver.communicate(timeout=60)
        took = time.time() - signalled
    finally:
        try:
            os.killpg(driver.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert driver.returncode == 128 + signum, out[-1500:] + err[-1500:]
    assert f"continue with: tuner resume {folder}" in out + err and "Failed to connect to GCS" not in err
    assert took < 30, took
    result = run_cli("resume", folder)
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    after = experiment.load(str(folder))
    assert len(after.trials) == 6 and {t.status for t in after.trials} == {"TERMINATED"}
    for trial in after.trials:
        assert [int(float(r["epoch"])) for r in trial.rows] == [1, 2, 3], trial.trial_id


def test_a_freeze_thaw_sweep_killed_with_9_resumes_to_every_epoch_once(run_cli, tmp_path):
    """Paused trials, the model's curves and the trial cap all come back: the resumed sweep ends by itself
    with every trial finished or stopped, and no trial ran an epoch twice or skipped one."""
    space = instant_space(tmp_path, sleep=0.3)
    folder = tmp_path / "killed"
    args = ["sweep", "--space", space, "--scheduler", "freeze-thaw", "--num-samples", "10", "--max-epochs", "6",
            "--storage-path", tmp_path, "--name", "killed"]  # fmt: skip
    kill_9_when([str(a) for a in args], lambda: _reported(folder, 6), timeout=120)
    before = experiment.load(str(folder))
    assert len(before.trials) < 10 or any(t.status != "TERMINATED" for t in before.trials), "killed too late"

    result = run_cli("resume", folder)
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    after = experiment.load(str(folder))
    assert len(after.trials) == 10 and {t.status for t in after.trials} == {"TERMINATED"}
    for trial in after.trials:
        epochs = [int(float(r["epoch"])) for r in trial.rows]
        assert epochs == list(range(1, len(epochs) + 1)), (trial.trial_id, epochs)
    assert any(len(t.rows) < 6 for t in after.trials), "freeze-thaw should have stopped some trials early"
