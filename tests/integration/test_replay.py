"""``tuner replay``: a finished sweep's own curves under another scheduler, printed, saved and reported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.instant import instant_space

FIFO = (
    "--scheduler",
    "fifo",
    "--searcher",
    "random",
    "--num-samples",
    "6",
    "--max-epochs",
    "4",
    "--seed",
    "2",
)


@pytest.fixture(scope="module")
def fifo_sweep(tmp_path_factory):
    """One FIFO sweep of instant trials, run once for the module."""
    from tuner.cli import main

    folder = tmp_path_factory.mktemp("replay")
    space = instant_space(folder)
    try:
        main(["sweep", "--space", str(space), *FIFO, "--storage-path", str(folder), "--name", "fifo",
              "--dataset", "synthetic"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code == 0
    return folder / "fifo"


def test_a_fifo_sweep_replayed_under_asha_says_what_it_saves_and_is_reported(run_cli, fifo_sweep):
    result = run_cli("replay", fifo_sweep, "--scheduler", "asha")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert (
        lines[0].startswith("replayed under asha, ")
        and "on the sweep's own curves and epoch times" in lines[0]
    )
    assert lines[1].startswith("  ASHA: rungs at epoch 1, 2 (max 4)")
    spent = next(line for line in lines if line.startswith("  epochs: "))
    epochs = int(spent.split()[1])
    assert spent.startswith(f"  epochs: {epochs} against the sweep's 24 under fifo (saves ") and epochs < 24
    assert "best trial: kept" in result.out or "best trial: lost" in result.out
    assert "stopped early by ASHA at epoch" in result.out
    saved = json.loads((fifo_sweep / "replays" / "asha.json").read_text())
    assert saved["epochs"] == epochs and saved["used_epochs"] == 24
    assert run_cli("report", fifo_sweep).code == 0
    page = (fifo_sweep / "report.html").read_text()
    assert "Under other schedulers (tuner replay)" in page and f"{epochs} of 24" in page
    assert page.count(f"{epochs} of 24") == 1 and "  epochs: " not in page  # the answer once, in its row
    assert (
        "<details><summary>asha, " in page and "stopped early by ASHA at epoch" in page
    )  # the rest beneath it


def test_a_replay_under_the_sweeps_own_scheduler_changes_nothing(run_cli, fifo_sweep):
    result = run_cli("replay", fifo_sweep, "--scheduler", "fifo")
    assert result.code == 0, result.err
    assert "epochs: 24 against the sweep's 24 under fifo (the same)" in result.out
    assert "best trial: kept" in result.out and "would have stopped earlier" not in result.out


@pytest.mark.slow  # a sweep of its own; the fast tier replays the fifo sweep
def test_trials_the_sweep_stopped_early_are_named_as_what_the_answer_rests_on(run_cli, tmp_path):
    space = instant_space(tmp_path)
    swept = run_cli("sweep", "--space", space, "--scheduler", "asha", "--searcher", "random", "--num-samples", "6",
                    "--max-epochs", "4", "--seed", "2", "--storage-path", tmp_path, "--name", "asha")  # fmt: skip
    assert swept.code == 0, swept.err
    result = run_cli("replay", tmp_path / "asha", "--scheduler", "fifo")
    assert result.code == 0, result.err
    assert (
        "would have gone on past the last epoch the sweep recorded for them (where it stopped them, or they "
        "failed); their later epochs are unknown" in result.out
    )


def _listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    "args, fragment",
    [(("--scheduler", "pbt"), "pbt changes configs while trials train, so recorded curves cannot stand in"),
     (("--scheduler", "sha"), "unknown scheduler 'sha'; a replay takes: asha, fifo, hyperband, bohb, median"),
     ((), "give --scheduler (another scheduler), --searcher (another searcher), or both"),
     (("--scheduler", "asha", "--searcher", "optuna"), "parameter width is not a choice"),
     (("--scheduler", "asha", "--searcher", "nope"), "unknown searcher 'nope'"),
     (("--scheduler", "asha", "--reduction-factor", "1"), "Invalid value for '--reduction-factor'")],
)  # fmt: skip
def test_bad_replays_are_one_line_and_change_nothing(run_cli, fifo_sweep, args, fragment):
    before = _listing(fifo_sweep)
    result = run_cli("replay", fifo_sweep, *args)
    assert result.code == 2 and fragment in result.err and len(result.err.strip().splitlines()) == 1, (
        result.err
    )
    assert _listing(fifo_sweep) == before


def test_a_running_sweep_is_not_replayed_and_its_results_say_they_are_where_it_stands_now(run_cli, fifo_sweep):
    hold = ("import sys, time\nfrom tuner.claim import claimed\nwith claimed(sys.argv[1], 'tuner resume'):\n"
            "    print('held', flush=True)\n    time.sleep(60)\n")  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", hold, str(fifo_sweep)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        result = run_cli("replay", fifo_sweep, "--scheduler", "asha")
        results = run_cli("results", fifo_sweep)
    finally:
        proc.kill()
        proc.wait()
    assert result.code == 2 and f"is being run by pid {proc.pid}" in result.err
    assert "replay it once the sweep has ended" in result.err
    running = "the sweep is still running: this table is how it stands now; run tuner results again for later results"
    assert results.code == 0 and results.out.splitlines()[1] == running, results.out
    assert running not in run_cli("results", fifo_sweep).out  # ended: nothing more will come


@pytest.mark.slow  # a sweep of its own; the fast tier replays the fifo sweep
def test_a_sweep_without_per_epoch_results_or_checkpoints_says_so(run_cli, tmp_path, fifo_sweep):
    space = instant_space(tmp_path)
    once = run_cli("sweep", "--space", space, *FIFO[:-4], "--max-epochs", "1", "--storage-path", tmp_path,
                   "--name", "once")  # fmt: skip
    assert once.code == 0, once.err
    result = run_cli("replay", tmp_path / "once", "--scheduler", "asha")
    assert result.code == 2 and "one result per trial, not one per epoch" in result.err

    copy = tmp_path / "no-checkpoints"
    shutil.copytree(fifo_sweep, copy)
    for trial in copy.iterdir():
        for checkpoint in trial.glob("checkpoint_*") if trial.is_dir() else []:
            shutil.rmtree(checkpoint)
    result = run_cli("replay", copy, "--scheduler", "hyperband")
    assert result.code == 2 and "pauses trials and continues them from their checkpoints" in result.err
    assert os.path.isdir(copy)


def test_a_replay_under_bohb_runs_on_the_recorded_configs(run_cli, fifo_sweep):
    result = run_cli("replay", fifo_sweep, "--scheduler", "bohb")
    assert result.code == 0, result.err
    assert result.out.startswith("replayed under bohb, ") and "BOHB: synchronous brackets" in result.out


@pytest.mark.slow  # a sweep of its own; the fast tier replays the fifo sweep
def test_a_sweep_that_ran_every_config_replays_under_asha_with_cqr_proposing(run_cli, tmp_path):
    """With ``--searcher``, the replay's configs come from that searcher, looked up among the sweep's curves."""
    from tests.table_space import write_table_space

    grid = {"width": [4, 8, 16], "lr": [1e-3, 1e-2], "batch": [8, 32]}  # 12 configs, each run once below
    space, _ = write_table_space(tmp_path, epochs=4, grid=grid)
    swept = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--searcher", "optuna", "--num-samples", "12",
                    "--max-epochs", "4", "--seed", "1", "--storage-path", tmp_path, "--name", "all")  # fmt: skip
    assert swept.code == 0, swept.err[-2000:]
    result = run_cli("replay", tmp_path / "all", "--scheduler", "asha", "--searcher", "cqr")
    assert result.code == 0, result.err
    assert result.out.startswith("replayed under asha and searcher cqr, "), result.out[:300]
    spent = next(line for line in result.out.splitlines() if line.startswith("  epochs: "))
    assert int(spent.split()[1]) < 48, spent  # ASHA stopped some of what cqr proposed
    saved = json.loads((tmp_path / "all" / "replays" / "asha-cqr.json").read_text())
    assert saved["searcher"] == "cqr" and saved["used_epochs"] == 48
    # under the sweep's own scheduler (FIFO), cqr proposes all 12 configs: the sweep's best is kept, by its id
    same = run_cli("replay", tmp_path / "all", "--searcher", "cqr")
    assert same.code == 0, same.err
    assert same.out.startswith("replayed under fifo and searcher cqr, ") and "best trial: kept (" in same.out
    assert "epochs: 48 against the sweep's 48 under fifo (the same)" in same.out


def test_a_fifo_sweep_replays_under_freeze_thaw_with_its_reasons(run_cli, fifo_sweep):
    result = run_cli("replay", fifo_sweep, "--scheduler", "freeze-thaw")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("replayed under freeze-thaw, ") and lines[1].startswith(
        "  freeze-thaw: a model of"
    )
    spent = next(line for line in lines if line.startswith("  epochs: "))
    assert int(spent.split()[1]) <= 24
    saved = json.loads((fifo_sweep / "replays" / "freeze-thaw.json").read_text())
    assert saved["used_epochs"] == 24
