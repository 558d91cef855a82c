"""The command line through its real entry point: help, listing, and bad input caught before Ray starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tuner.errors import UsageError

SWEEP = ("sweep", "--dataset", "synthetic", "--synthetic-size", "50")


def assert_one_line_error(result, *fragments):
    assert result.code == 2, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tuner: error: "), result.err
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in lines[0]


def test_help_lists_commands(run_cli):
    result = run_cli("--help")
    assert result.code == 0 and "sweep" in result.out and "spaces" in result.out
    bare = run_cli()  # asks what tuner can do: the same help, not an error of 25 lines
    assert (bare.code, bare.out, bare.err) == (0, result.out, "")


def test_sweep_help_shows_every_flag(run_cli):
    out = run_cli("sweep", "--help").out
    for flag in ("--space", "--scheduler", "--searcher", "--num-samples", "--max-epochs", "--cpus-per-trial",
                 "--gpus-per-trial", "--metric", "--mode", "--name", "--storage-path", "--seed", "--max-concurrent",
                 "--dataset", "--data-dir", "--synthetic-size", "--address", "--debug", "--config"):  # fmt: skip
        assert flag in out


def test_spaces_lists_each_space_with_trainable_metric_and_mode(run_cli):
    result = run_cli("spaces")
    line = next(line for line in result.out.splitlines() if line.startswith("cifar_small"))
    assert "cifar" in line and "loss (min)" in line and "CIFAR-10" in line


def test_help_and_spaces_import_neither_torch_nor_ray_tune():
    code = (
        "import sys; from tuner.cli import main\n"
        "for args in (['--help'], ['spaces']):\n"
        "    try: main(args)\n"
        "    except SystemExit: pass\n"
        "heavy = [m for m in ('torch', 'ray.tune', 'ray') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.parametrize(
    "args, fragments",
    [
        (("--space", "nope"), ("unknown space 'nope'", "cifar_small")),
        (("--space", "nopkg.x"), ("unknown space 'nopkg.x'", "no module of that name")),
        (("--space", "search_spaces.nope"), ("unknown space 'search_spaces.nope'",)),
        (("--space", "cifar_small", "--scheduler", "sha"), ("'sha' is not one of", "asha", "pbt")),
        (("--space", "cifar_small", "--searcher", "tpe"), ("'tpe' is not one of", "optuna", "hyperopt")),
        (
            ("--space", "cifar_small", "--scheduler", "bohb", "--searcher", "optuna"),
            ("brings its own searcher",),
        ),
        (("--space", "cifar_small", "--stall-timeout", "0"), ("--stall-timeout must be more than 0",)),
        (("--space", "./missing_space.py"), ("space file ./missing_space.py not found",)),
        (("--space", "cifar_small", "--num-samples", "0"), ("--num-samples must be at least 1",)),
        (("--space", "cifar_small", "--max-epochs", "0"), ("--max-epochs must be at least 1",)),
        (("--space", "cifar_small", "--gpus-per-trial", "1.5"), ("fractions go up to 1",)),
        ((), ("no search space given",)),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run_cli, args, fragments):
    assert_one_line_error(run_cli(*SWEEP, *args), *fragments)


def test_space_file_that_does_not_parse(run_cli, tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("SPACE = (\n")
    assert_one_line_error(run_cli(*SWEEP, "--space", path), "does not parse", "line 1")


def test_space_file_without_space(run_cli, tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("x = 1\n")
    assert_one_line_error(run_cli(*SWEEP, "--space", path), "defines no SPACE")


def test_space_file_that_raises_on_import(run_cli, tmp_path):
    path = tmp_path / "raises.py"
    path.write_text("import not_a_real_module_here\n")
    assert_one_line_error(run_cli(*SWEEP, "--space", path), "failed to load at line 1", "not_a_real_module_here")


def test_keywords_near_a_run_setting_but_not_a_typo_of_max_epochs_are_the_trainables_own(run_cli, tmp_path):
    space = tmp_path / "own.py"
    space.write_text(
        "from ray import tune\nfrom tuner import SearchSpace\n"
        "def train(config, datasets=None, num_epochs=3, dataset2=None, downloaded=False, max_epochs_warmup=1):\n"
        "    pass\n"
        'SPACE = SearchSpace(trainable=train, metric="score", mode="max", params={"x": tune.uniform(0, 1)})\n'
    )
    got = run_cli("sweep", "--space", space, "--dry-run", "--storage-path", tmp_path)
    assert "does not give" not in got.err, got.err


def test_a_space_file_failing_inside_the_standard_library_names_its_own_line(run_cli, tmp_path):
    path = tmp_path / "reads.py"
    path.write_text("from pathlib import Path\n\nROWS = Path('no-such-file.csv').read_text()\n")
    assert_one_line_error(run_cli(*SWEEP, "--space", path), "failed to load at line 3: FileNotFoundError")


def test_space_file_that_raises_names_the_users_line(run_cli, tmp_path):
    """A mistake in the space file, or in a module beside it that it imports: the line it is on."""
    path = tmp_path / "typo.py"
    path.write_text("import neighbour\n\nLR = 1e-3\nSPACE = lr_typo\n")
    (tmp_path / "neighbour.py").write_text("OK = 1\n")
    assert_one_line_error(run_cli(*SWEEP, "--space", path), "failed to load at line 4: NameError", "lr_typo")
    (tmp_path / "broken_neighbour.py").write_text("OK = 1\nBAD = 1 / 0\n")
    path.write_text("import broken_neighbour\n")
    assert_one_line_error(
        run_cli(*SWEEP, "--space", path), "failed to load at broken_neighbour.py line 2: ZeroDivisionError"
    )


def test_impossible_searcher_space_pair_fails_before_launch(run_cli, tmp_path):
    path = tmp_path / "grid.py"
    path.write_text(
        "from ray import tune\nfrom tuner import SearchSpace\n"
        "SPACE = SearchSpace(trainable='cifar', params={'lr': tune.grid_search([0.1, 0.01])})\n"
    )
    result = run_cli(*SWEEP, "--space", path, "--searcher", "bayesopt", "--storage-path", tmp_path)
    assert_one_line_error(
        result, "parameter 'lr'", "cannot be searched by bayesopt", "searchers that can: random"
    )
    assert not any(tmp_path.glob("grid-*")), "nothing may be created before the error"


def test_cifar10_without_data_or_download(run_cli, tmp_path):
    result = run_cli(
        "sweep", "--space", "cifar_small", "--dataset", "cifar10", "--data-dir", tmp_path / "none"
    )
    assert_one_line_error(result, "CIFAR-10 not found", "--download")


def test_missing_sweep_file(run_cli, tmp_path):
    assert_one_line_error(run_cli("sweep", "--config", tmp_path / "nope.yaml"), "config file", "not found")


@pytest.mark.parametrize("where", ["before the command", "after it"])
def test_debug_shows_the_traceback_wherever_it_is_typed(where):
    args = (
        ["--debug", "sweep", "--space", "nope"]
        if where == "before the command"
        else ["sweep", "--space", "nope", "--debug"]
    )
    proc = subprocess.run([sys.executable, "-m", "tuner", *args], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" in proc.stderr and "unknown space" in proc.stderr  # the code as without it


def test_classes_pickled_under_their_old_module_names_still_load():
    """Experiments saved before modules moved into launch/ and review/ name the old paths in tuner.pkl."""
    import pickle

    from tuner.folder.fates import FateLog
    from tuner.launch.guards.stall import StallWatch

    assert pickle.loads(b"ctuner.stall\nStallWatch\n.") is StallWatch
    assert pickle.loads(b"ctuner.fates\nFateLog\n.") is FateLog


@pytest.mark.parametrize("old", sorted(__import__("tuner.moved").moved.MOVED))
def test_every_old_module_name_answers_with_the_module_now_holding_it(old):
    import importlib

    from tuner.moved import MOVED

    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


def test_the_review_package_imports_neither_ray_nor_torch_nor_the_launch_path():
    import subprocess
    import sys

    code = ("import importlib, pkgutil, sys, tuner.review as r\n"
            "for m in pkgutil.walk_packages(r.__path__, 'tuner.review.'): importlib.import_module(m.name)\n"
            "print(sorted(n for n in sys.modules if n in ('ray', 'torch') or n.startswith(('tuner.launch', "
            "'tuner.schedulers', 'tuner.searchers'))))")  # fmt: skip
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]", loaded


def test_the_resume_banner_says_what_goes_on_what_is_still_to_come_and_what_becomes_of_errored_trials():
    from tuner.launch.resume import resume_banner

    statuses = {"a": "TERMINATED", "b": "TERMINATED", "c": "RUNNING", "d": "PAUSED", "e": "ERROR"}
    assert resume_banner("/exp", statuses, "skip", 8) == (
        "resuming /exp: 2 of 5 trial(s) ended; 2 go on, from the last checkpoint where there is one; "
        "3 more to come of the 8 planned; 1 errored: left as they are (--errored skip)"
    )
    assert resume_banner("/exp", {"a": "PENDING"}, "skip", 1) == (  # one that never started goes on from its start
        "resuming /exp: 0 of 1 trial(s) ended; 1 goes on, from the last checkpoint where there is one"
    )
    assert resume_banner("/exp", {"a": "TERMINATED"}, "skip", 1) == "resuming /exp: 1 of 1 trial(s) ended"


def test_a_stopped_sweeps_last_line_counts_not_started_trials_as_its_fates_do():
    import signal

    from tuner.folder.summary import Summary
    from tuner.review.results import format_summary

    # 4206 trials created (2 of them never ran) of 10000 planned, none running when SIGINT came
    summary = Summary(
        "loss", "min", 4206, "/x/exp", fates={"ran to max epochs (3)": 4204, "not started yet": 2}
    )
    summary.unfinished, summary.not_started, summary.to_come, summary.signal = 5796, 5796, 5794, signal.SIGINT
    lines = format_summary(summary)
    assert "fates: 4204 ran to max epochs (3), 2 not started yet" in lines
    # no trial was the best: the saved summary is not called a best config, after a line saying there is none
    assert "no trial reported 'loss'; no best config" in lines
    assert "4206 trial(s), 0 failed; saved the summary, with no best trial, in /x/exp/best_config.json" in lines
    assert lines[-1] == (
        "stopped by SIGINT: 0 trial(s) unfinished, 2 not started yet and 5794 more to come of the 10000 planned; "
        "continue with: tuner resume /x/exp"
    )
    summary.unfinished, summary.not_started, summary.to_come = 3, 0, 0
    assert format_summary(summary)[-1].startswith("stopped by SIGINT: 3 trial(s) unfinished; continue with")
    # freeze-thaw's paused trials are counted apart, as the fates line counts them
    summary.fates = {"unfinished": 2, "paused": 1, "not started yet": 1}
    summary.unfinished, summary.not_started = 4, 1
    lines = format_summary(summary)
    assert "fates: 2 unfinished, 1 paused, 1 not started yet" in lines
    assert lines[-1].startswith("stopped by SIGINT: 2 trial(s) unfinished, 1 paused and 1 not started yet;")


def test_every_command_is_found_in_the_module_that_defines_it():
    import importlib

    from tuner.cli import COMMAND_MODULES

    defined = {
        command.name: name
        for name in set(COMMAND_MODULES.values())
        for command in importlib.import_module(name).COMMANDS
    }
    assert defined == COMMAND_MODULES


@pytest.mark.parametrize(
    "signature, message",
    [
        ("train()", "trainable train takes no config: Tune calls it as train(config), a dict of the trial's parameters"),
        ("train(config, lr, max_epochs)", "trainable train asks for lr with no default: Tune gives it only config"),
        ("train(config, max_epoch=10)", "trainable train takes max_epoch, which tuner does not give: did you mean max_epochs"),
    ],
)
def test_a_function_trainable_nothing_could_call_is_refused_before_anything_starts(run_cli, tmp_path, signature, message):
    """def train(a, b, c) passed the dry run, started Ray, failed its trial, and named tuner's own frame as the
    user's code."""
    space = tmp_path / "sig.py"
    space.write_text(
        "from ray import tune\nfrom tuner import SearchSpace\n"
        f"def {signature}:\n    pass\n"
        'SPACE = SearchSpace(trainable=train, metric="score", mode="max", params={"x": tune.uniform(0, 1)})\n'
    )
    assert_one_line_error(run_cli("sweep", "--space", space, "--dry-run", "--storage-path", tmp_path), message)
    assert list(tmp_path.iterdir()) == [space]


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--metric", ","], "--metric ',' names no metric"),
        (["--metric", ""], "--metric is empty; give one, or leave the flag out for the space's own"),
        (["--mode", " "], "--mode is empty"),
    ],
)
def test_an_empty_metric_or_mode_is_refused_not_read_as_the_spaces_own(run_cli, flags, message):
    assert_one_line_error(run_cli("sweep", "--space", "cifar_small", "--dry-run", *flags), message)


def test_a_plain_folder_here_does_not_hide_a_stored_experiment_of_its_name(run_cli, tmp_path, monkeypatch):
    from tuner.where import locate

    stored = tmp_path / "store" / "sig"
    stored.mkdir(parents=True)
    (stored / "tuner_config.yaml").write_text("space: x.py\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sig").mkdir()
    monkeypatch.setenv("TUNER_STORAGE_PATH", str(tmp_path / "store"))
    assert locate("sig") == str(stored)
    with pytest.raises(UsageError, match="an experiment is a folder path, a storage URI or a name, not None"):
        locate(None)


def test_a_storage_folder_given_for_an_experiment_names_the_experiments_it_holds(run_cli, tmp_path):
    for name in ("b", "a", "c", "d"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "tuner_config.yaml").write_text("space: x.py\n")
    (tmp_path / "not-one").mkdir()
    assert_one_line_error(
        run_cli("results", tmp_path),
        f"{tmp_path} is not a tuner experiment (no tuner_config.yaml); it holds 4 experiment(s): a, b, c and 1 more "
        f"(tuner results {tmp_path / 'a'}; tuner dashboard {tmp_path} shows them all)",
    )


def test_the_notebooks_sweep_takes_dry_run_as_a_bool_only():
    import tuner

    with pytest.raises(UsageError, match="dry_run is True or False, not 'no'"):
        tuner.sweep("cifar_small", dry_run="no")


def test_a_space_without_parameters_or_not_a_space_is_named_in_words():
    from tuner import SearchSpace

    with pytest.raises(UsageError, match="space params is empty: give at least one parameter"):
        SearchSpace(trainable=lambda config: None, metric="loss", mode="min", params={})
    from tuner.errors import an

    assert (an("int"), an("dict"), an("SearchSpace")) == ("an int", "a dict", "a SearchSpace")


def test_a_sweep_whose_trials_all_returned_without_a_report_says_where_to_look(tmp_path, monkeypatch):
    """A Lightning callback whose metric names were never logged reports nothing: every trial runs and returns. The
    error says that no trial reported at all, and where each trial's own output is, not only "no result"."""
    from tuner import cli
    from tuner.cli.sweep import print_outcome
    from tuner.errors import TunerError
    from tuner.folder.spent import Spent
    from tuner.folder.summary import Summary

    monkeypatch.setattr(cli, "started", 0.0)
    summary = Summary("loss", "min", 2, str(tmp_path), fates={"ended by its own loop before its first report": 2})
    summary.spent = Spent(wall=0.1, epochs=0)
    with pytest.raises(TunerError) as raised:
        print_outcome(summary)
    assert str(raised.value).startswith("no trial reported a result: each one's trainable returned without calling")
    assert f"stdout.log and stderr.log under {tmp_path} say why" in str(raised.value)
    summary.spent = Spent(wall=0.1, epochs=3)  # it reported, but not the metric: the guard's own error came first
    with pytest.raises(TunerError, match="^the sweep produced no result for its metric$"):
        print_outcome(summary)
