"""Settings resolution: flags > TUNER_* environment > --config YAML > space defaults > built-in defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.errors import UsageError
from tuner.launch.layers import env_settings, read_yaml_settings
from tuner.launch.resolve import resolve
from tuner.objectives import Objective
from tuner.settings import (
    SweepConfig,
    coerce,
    load_saved_config,
    save_config,
)


def test_builtin_defaults_apply_when_nothing_is_given():
    cfg = resolve({"space": "cifar_small"}, environ={})
    # one objective and a trainable that continues from checkpoints: freeze-thaw, whose model proposes too
    assert (cfg.scheduler, cfg.searcher, cfg.num_samples, cfg.gpus_per_trial) == (
        "freeze-thaw",
        "curves",
        8,
        None,
    )
    assert cfg.scheduler_chosen.startswith("auto chose freeze-thaw: ")
    # under ASHA, cifar_small's continuous learning rate gets quantile regression
    assert resolve({"space": "cifar_small", "scheduler": "asha"}, environ={}).searcher == "cqr"
    # the model of the curves takes no earlier trials: a warm start gets a searcher that does, and says why
    warm = resolve({"space": "cifar_small", "warm_start": "first"}, environ={})
    assert (warm.scheduler, warm.searcher) == ("freeze-thaw", "optuna")
    assert warm.searcher_chosen.startswith(
        "auto chose optuna: --warm-start, which freeze-thaw's model of the learning curves does not take; "
    )


def test_auto_keeps_asha_where_freeze_thaw_does_not_apply():
    several = resolve({"space": "cifar_small", "metric": "loss,accuracy", "mode": "min,max"}, environ={})
    assert several.scheduler == "asha" and "fronts" in several.scheduler_chosen
    assert resolve({"space": "cifar_small", "searcher": "bohb"}, environ={}).scheduler == "bohb"
    assert resolve({"space": "cifar_small", "searcher": "curves"}, environ={}).scheduler == "freeze-thaw"

def test_auto_picks_a_searcher_that_weighs_the_bounds_of_a_constrained_sweep():
    """cqr and the GP do not weigh --constraint: where they would be chosen, TPE is, and the plan names both."""
    bounded = {"space": "cifar_small", "constraints": ["accuracy>=0.5"]}
    under_asha = resolve(bounded, environ={})
    assert (under_asha.scheduler, under_asha.searcher) == ("asha", "optuna")
    assert "fronts" in under_asha.scheduler_chosen
    assert under_asha.searcher_chosen.startswith(
        "auto chose optuna: --constraint: Optuna's TPE keeps trials that break a bound out of its good group "
        "(cqr, picked without bounds, does not weigh them)"
    )
    fifo = resolve({**bounded, "scheduler": "fifo", "num_samples": 32}, environ={})
    assert fifo.searcher == "optuna" and "(gp, picked without bounds" in fifo.searcher_chosen
    # freeze-thaw's own model stays (the plan says it does not rank by the bounds)
    assert resolve({**bounded, "scheduler": "freeze-thaw"}, environ={}).searcher == "curves"



def test_resolution_fills_what_the_space_and_names_decide(tmp_path):
    cfg = resolve({"space": "cifar_small", "storage_path": str(tmp_path / "x" / ".." / "s")}, environ={})
    assert cfg.objectives == (Objective("loss", "min"),)
    assert cfg.name.startswith("cifar_small-freeze-thaw-curves-")
    assert cfg.storage_path == str((tmp_path / "s").resolve()) and Path(cfg.data_dir).is_absolute()
    assert resolve({"space": "cifar_small", "scheduler": "bohb"}, environ={}).searcher == "bohb"


def test_a_metric_and_its_mode_travel_together_through_the_layers(tmp_path):
    """A sweep file's mode was meant for its own metric: --metric loss over it takes loss's mode from the space,
    and a mode given beside the metric, or above it, still holds."""
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("space: cifar_small\nmetric: accuracy\nmode: max\n")
    at = {"storage_path": str(tmp_path)}
    assert resolve({**at}, str(sweep), environ={}).objectives == (Objective("accuracy", "max"),)
    assert resolve({**at, "metric": "loss"}, str(sweep), environ={}).objectives == (Objective("loss", "min"),)
    env = {"TUNER_METRIC": "accuracy", "TUNER_MODE": "max"}
    assert resolve({**at, "space": "cifar_small", "metric": "loss"}, environ=env).objectives == (
        Objective("loss", "min"),
    )
    assert resolve({**at, "mode": "max"}, str(sweep), environ={}).objectives == (Objective("accuracy", "max"),)
    restated = resolve({**at, "metric": "accuracy"}, str(sweep), environ={})  # the same metric keeps its mode
    assert restated.objectives == (Objective("accuracy", "max"),)
    with pytest.raises(UsageError, match="--metric accuracy: the space does not say"):
        resolve({**at, "space": "cifar_small", "metric": "accuracy"}, environ={"TUNER_MODE": "max"})


@pytest.mark.parametrize(
    "given, message",
    [
        ({"scheduler": "bohb", "searcher": "optuna"}, "--scheduler bohb brings its own searcher (bohb); drop --searcher optuna"),
        ({"scheduler": "asha", "searcher": "bohb"}, "--searcher bohb works only with --scheduler bohb"),
        ({"scheduler": "sha"}, "unknown scheduler 'sha'; valid: auto, asha, fifo, hyperband, bohb, median, pbt, freeze-thaw"),
        ({"searcher": "nope"}, "unknown searcher 'nope'; valid: auto, "),
    ],
)  # fmt: skip
def test_schedulers_and_searchers_that_belong_together(given, message):
    with pytest.raises(UsageError) as error:
        resolve({"space": "cifar_small", **given}, environ={})
    assert str(error.value).startswith(message)


def test_the_space_file_runs_once_per_process(tmp_path):
    log = tmp_path / "imports.log"
    space = tmp_path / "counted.py"
    space.write_text(
        '"""Counts its imports."""\nfrom ray import tune\nfrom tuner import SearchSpace\n'
        f'open({str(log)!r}, "a").write("imported\\n")\n'
        'SPACE = SearchSpace(trainable="cifar", params={"lr": tune.uniform(0.1, 0.2)})\n'
    )
    from tuner.launch.plan import prepare

    config = resolve({"space": str(space), "dataset": "synthetic", "synthetic_size": 20}, environ={})
    prepare(config, out=lambda line: None)
    assert log.read_text().splitlines() == ["imported"]


def test_a_space_file_imports_a_module_beside_it_and_its_trials_get_that_module_by_value(tmp_path):
    """`from losses import loss_of` in a space file: found beside it, whatever folder the command runs in, and
    shipped to Ray's workers with the trainable (their path does not hold the user's folder)."""
    import subprocess
    import sys

    from ray import cloudpickle

    from tuner.launch.registry import load_space

    (tmp_path / "neighbour_losses.py").write_text("def loss_of(config):\n    return config['lr'] * 2\n")
    space = tmp_path / "uses_neighbour.py"
    space.write_text(
        "from ray import tune\nfrom neighbour_losses import loss_of\nfrom tuner import SearchSpace\n\n\n"
        "def train(config):\n    return loss_of(config)\n\n\n"
        'SPACE = SearchSpace(trainable=train, params={"lr": tune.uniform(0.1, 0.2)})\n'
    )
    shipped = tmp_path / "trainable.pkl"
    shipped.write_bytes(cloudpickle.dumps(load_space(str(space)).trainable))
    assert not (tmp_path / "__pycache__").exists()  # nothing written beside the user's files
    worker = "import pickle, sys; print(pickle.loads(open(sys.argv[1], 'rb').read())({'lr': 0.25}))"
    done = subprocess.run([sys.executable, "-c", worker, str(shipped)], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0 and done.stdout.strip() == "0.5", done.stderr[-2000:]


def test_flag_beats_environment_beats_yaml(tmp_path):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("space: cifar_small\nnum-samples: 3\nmax_epochs: 4\nseed: 9\nsearcher: bayesopt\n")
    env = {"TUNER_NUM_SAMPLES": "5", "TUNER_MAX_EPOCHS": "6"}
    cfg = resolve({"num_samples": 7}, str(sweep), environ=env)
    assert cfg.num_samples == 7  # flag
    assert cfg.max_epochs == 6  # environment over file
    assert cfg.seed == 9  # file over default
    assert cfg.searcher == "bayesopt"


def test_space_defaults_sit_under_the_yaml(tmp_path):
    space = tmp_path / "tiny.py"
    space.write_text(
        '"""Tiny."""\nfrom ray import tune\nfrom tuner import SearchSpace\n'
        'SPACE = SearchSpace(trainable="cifar", params={"lr": tune.uniform(0.1, 0.2)},'
        ' defaults={"max_epochs": 2, "num_samples": 4})\n'
    )
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("num_samples: 6\n")
    cfg = resolve({"space": str(space)}, str(sweep), environ={})
    assert (cfg.max_epochs, cfg.num_samples) == (2, 6)


def test_a_space_whose_defaults_name_an_unknown_setting_is_refused_in_words(tmp_path):
    space = tmp_path / "typo.py"
    space.write_text(
        '"""Typo."""\nfrom ray import tune\nfrom tuner import SearchSpace\n'
        'SPACE = SearchSpace(trainable="cifar", params={"lr": tune.uniform(0.1, 0.2)}, defaults={"max_epoch": 2})\n'
    )
    with pytest.raises(
        UsageError, match=r"space .*typo.py defaults: unknown setting 'max_epoch'; did you mean max_epochs\? valid: "
    ):
        resolve({"space": str(space)}, None, environ={})


def test_environment_values_are_typed_with_clear_errors():
    assert env_settings({"TUNER_GPUS_PER_TRIAL": "0.5", "TUNER_DOWNLOAD": "yes"}) == {
        "gpus_per_trial": 0.5,
        "download": True,
    }
    with pytest.raises(UsageError, match="TUNER_NUM_SAMPLES: num_samples must be a whole number"):
        env_settings({"TUNER_NUM_SAMPLES": "many"})


@pytest.mark.parametrize(
    "text, message",
    [
        ("nmu_samples: 3\n", "unknown setting 'nmu_samples'; did you mean num_samples?"),
        ("num_samples: [1, 2]\n", "num_samples must be a whole number"),
        ("max_epochs: 2.5\n", "max_epochs must be a whole number"),
        ("- a\n- b\n", "must hold a mapping"),
        ("space: [unclosed\n", "is not valid YAML"),
    ],
)
def test_bad_sweep_files_name_the_problem(tmp_path, text, message):
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        read_yaml_settings(path)


def test_a_value_out_of_range_is_named_where_it_was_given(tmp_path):
    """TUNER_NUM_SAMPLES=0 was refused as "--num-samples must be at least 1", a flag the user never typed."""
    from tests.instant import instant_space

    space = str(instant_space(tmp_path))
    sweep_file = tmp_path / "sweep.yaml"
    sweep_file.write_text("num_samples: 0\nmax_epochs: 3\n")

    def refused(given, environ, config_file=None):
        with pytest.raises(UsageError) as caught:
            resolve({"space": space, **given}, config_file, environ=environ)
        return str(caught.value)

    assert refused({}, {"TUNER_NUM_SAMPLES": "0"}) == "environment TUNER_NUM_SAMPLES: num_samples must be at least 1, got 0"
    assert refused({}, {}, str(sweep_file)) == f"config file {sweep_file}: num_samples must be at least 1, got 0"
    over_file = refused({"num_samples": 2}, {"TUNER_MAX_EPOCHS": "0"}, str(sweep_file))  # the file says 3
    assert over_file == "environment TUNER_MAX_EPOCHS: max_epochs must be at least 1, got 0"
    assert refused({"max_epochs": 0}, {"TUNER_MAX_EPOCHS": "2"}) == "--max-epochs must be at least 1, got 0"  # typed
    assert refused({}, {"TUNER_NAME": "a/b"}).startswith("environment TUNER_NAME: name 'a/b' must be a plain folder")


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"num_samples": 0}, "--num-samples must be at least 1"),
        ({"max_epochs": 0}, "--max-epochs must be at least 1"),
        ({"gpus_per_trial": 1.5}, "fractions go up to 1"),
        ({"gpus_per_trial": -1.0}, "must be 0 or more"),
        ({"cpus_per_trial": 0.0}, "more than 0"),
        ({"stall_timeout": 0.0}, "--stall-timeout must be more than 0 seconds"),
        ({"name": "a/b"}, "plain folder name"),
        # each of these crashed with a traceback, --seed after the experiment's folder was made
        ({"seed": -1}, "--seed must be from 0 to 4294967295, got -1"),
        ({"seed": 2**64}, "--seed must be from 0 to 4294967295"),
        ({"gpus_per_trial": float("inf")}, "--gpus-per-trial must be 0 or more and finite, got inf"),
        ({"cpus_per_trial": float("nan")}, "--cpus-per-trial must be more than 0 and finite, got nan"),
        ({"stall_timeout": float("nan")}, "--stall-timeout must be more than 0 seconds and finite, got nan"),
        ({"name": "n" * 300}, "--name is 300 bytes long; a folder name takes at most 200"),
        ({"storage_path": ""}, "--storage-path is empty"),
    ],
)
def test_invalid_settings_are_usage_errors(settings, message):
    with pytest.raises(UsageError, match=message):
        SweepConfig(space="cifar_small", **settings)


def test_fractional_and_whole_gpus_are_valid():
    assert SweepConfig(space="x", gpus_per_trial=0.25).gpus_per_trial == 0.25
    assert SweepConfig(space="x", gpus_per_trial=2.0).gpus_per_trial == 2.0


def test_saved_config_round_trips(tmp_path):
    cfg = SweepConfig(
        space="cifar_small", name="exp", num_samples=3, gpus_per_trial=0.5, storage_path=str(tmp_path)
    )
    (tmp_path / "exp").mkdir()
    save_config(cfg, tmp_path / "exp")
    assert load_saved_config(tmp_path / "exp") == cfg


def test_a_moved_experiment_is_read_where_it_lies_now(tmp_path):
    cfg = SweepConfig(space="cifar_small", name="exp", storage_path=str(tmp_path / "first"))
    (tmp_path / "first" / "exp").mkdir(parents=True)
    save_config(cfg, tmp_path / "first" / "exp")
    (tmp_path / "archive").mkdir()
    (tmp_path / "first" / "exp").rename(tmp_path / "archive" / "kept")
    moved = load_saved_config(tmp_path / "archive" / "kept")
    assert (moved.storage_path, moved.name) == (str(tmp_path / "archive"), "kept")
    assert moved.experiment_path == str(tmp_path / "archive" / "kept")


def test_coerce_optional_none():
    assert coerce("max_concurrent", "none", "x") is None
    with pytest.raises(UsageError):
        coerce("max_epochs", None, "x")


def test_the_trainable_contract_is_read_once_and_a_wrong_declaration_is_named():
    from tuner.spec import contract

    def train(config, *, data=None):
        pass

    train.checkpoints = True
    assert contract(train).checkpoints is True and contract(train).data_loader is None
    train.dataloader = print  # a near miss of data_loader
    with pytest.raises(
        UsageError, match="sets 'dataloader', which tuner does not read; did you mean 'data_loader'"
    ):
        contract(train)
    del train.dataloader
    train.checkpoints = "yes"
    with pytest.raises(UsageError, match="checkpoints must be True or False, not 'yes'"):
        contract(train)


def test_one_warm_start_experiment_given_as_a_string_or_path_is_one_experiment():
    from pathlib import Path

    from tuner.settings import build_config

    assert build_config({"space": "x", "warm_start": "results/first"}).warm_start == ["results/first"]
    assert build_config({"space": "x", "warm_start": (Path("a"), "b")}).warm_start == ["a", "b"]
    assert build_config({"space": "x", "warm_start": []}).warm_start is None


def test_the_storage_timeout_is_one_duration_read_one_way_everywhere(tmp_path, monkeypatch, run_cli):
    """90 or 5m wherever it is given; the sweep's settings and a review's or resume's wait read
    TUNER_STORAGE_TIMEOUT alike, and bad input is one line (exit 2)."""
    from tests.instant import instant_space
    from tuner import storage_outage

    space = str(instant_space(tmp_path))
    assert resolve({"space": space}, environ={"TUNER_STORAGE_TIMEOUT": "5m"}).storage_timeout == 300
    assert resolve({"space": space}, environ={"TUNER_STORAGE_TIMEOUT": "90"}).storage_timeout == 90
    assert resolve({"space": space, "storage_timeout": "2h"}, environ={}).storage_timeout == 7200  # tuner.sweep
    sweep_file = tmp_path / "sweep.yaml"
    sweep_file.write_text("storage_timeout: 90s\n")
    assert resolve({"space": space}, str(sweep_file), environ={}).storage_timeout == 90
    monkeypatch.setenv("TUNER_STORAGE_TIMEOUT", "5m")
    assert storage_outage.timeout_s() == 300  # what a review or a resume waits by
    refused = "environment TUNER_STORAGE_TIMEOUT: storage_timeout 'soon' is not a duration"
    with pytest.raises(UsageError, match=refused):
        resolve({"space": space}, environ={"TUNER_STORAGE_TIMEOUT": "soon"})
    monkeypatch.setenv("TUNER_STORAGE_TIMEOUT", "soon")
    with pytest.raises(UsageError, match=refused):
        storage_outage.timeout_s()
    monkeypatch.delenv("TUNER_STORAGE_TIMEOUT")
    bad = run_cli("sweep", "--space", space, "--storage-timeout", "soon")
    assert (bad.code, bad.err) == (
        2,
        "tuner: error: --storage-timeout 'soon' is not a duration; use seconds or a unit, e.g. 90s, 10m, 2h\n",
    )
    taken = run_cli("sweep", "--space", space, "--storage-timeout", "5m", "--name", "a/b")
    assert taken.code == 2 and "plain folder name" in taken.err, taken.err  # 5m went through; the name did not


def test_a_corrupted_saved_config_is_one_line_naming_where(tmp_path):
    (tmp_path / "tuner_config.yaml").write_text("space: [cifar_small\nscheduler: {asha\n")
    with pytest.raises(UsageError) as raised:
        load_saved_config(tmp_path)
    message = str(raised.value)
    assert "\n" not in message, message
    assert message.startswith(f"{tmp_path}/tuner_config.yaml is corrupted at line 2: "), message


def test_an_experiment_says_its_format_and_an_older_one_is_read_up_to_it(tmp_path, run_cli):
    import yaml

    from tuner.folder import format as folder_format

    space = str(Path(__file__).resolve().parents[2] / "search_spaces" / "cifar_small.py")
    made = resolve({"space": space, "storage_path": str(tmp_path), "name": "now"}, environ={})
    (tmp_path / "now").mkdir()
    save_config(made, tmp_path / "now")
    saved = yaml.safe_load((tmp_path / "now" / "tuner_config.yaml").read_text())
    assert list(saved)[0] == "format" and saved["format"] == folder_format.VERSION
    assert load_saved_config(tmp_path / "now") == made

    # version 1 (no format, no origin), made elsewhere and moved here: it says where it was made
    old = {k: v for k, v in saved.items() if k not in ("format", "origin")}
    old["storage_path"] = "/far/away"
    (tmp_path / "moved").mkdir()
    (tmp_path / "moved" / "tuner_config.yaml").write_text(yaml.safe_dump(old))
    read = load_saved_config(tmp_path / "moved")
    assert read.origin == "/far/away/now" and read.storage_path == str(tmp_path) and read.name == "moved"

    # version 2: the first objective as metric and mode, several listed again as "name:mode" texts
    for metric, mode, listed, objectives in (
        ("loss", "min", ["loss:min", "ms:min"], (Objective("loss", "min"), Objective("ms", "min"))),
        ("accuracy", "max", None, (Objective("accuracy", "max"),)),
    ):
        two = {k: v for k, v in saved.items() if k != "objectives"}
        two.update(format=2, metric=metric, mode=mode, objectives=listed)
        (tmp_path / "two").mkdir(exist_ok=True)
        (tmp_path / "two" / "tuner_config.yaml").write_text(yaml.safe_dump(two))
        assert load_saved_config(tmp_path / "two").objectives == objectives

    saved["format"] = folder_format.VERSION + 1  # from a newer tuner: refused in one line, nothing written
    (tmp_path / "now" / "tuner_config.yaml").write_text(yaml.safe_dump(saved))
    before = sorted(p.name for p in (tmp_path / "now").iterdir())
    refused = run_cli("results", tmp_path / "now")
    assert refused.code == 2 and refused.err.count("\n") == 1, refused.err
    assert f"written by a newer tuner (experiment format {folder_format.VERSION + 1}" in refused.err
    assert sorted(p.name for p in (tmp_path / "now").iterdir()) == before


@pytest.mark.parametrize(
    "at_once, can_pause, shown",
    [
        (1, True, "1 trial at once: first of 15 methods at half the budget and at the end"),
        (2, True, "2 trials at once: second of 15 methods at half the budget and at the end, after its own form"),
        (4, True, "2 trials at once (this sweep runs 4): second of 15"),
        (2, False, "2 trials at once: first of 15 methods at half the budget and at the end"),
        (16, False, "8 trials at once (this sweep runs 16): first of 10 methods at the end (mean rank 2.25"),
    ],
)  # fmt: skip
def test_the_default_comes_with_the_held_out_figure_nearest_the_sweeps_concurrency(at_once, can_pause, shown):
    from tuner.algorithms import held_out_figure

    assert held_out_figure(can_pause, at_once).startswith("on the 17 LCBench tasks the search protocol holds out")
    assert shown in held_out_figure(can_pause, at_once)


@pytest.mark.usefixtures("ray_session")  # a dry run joins a running Ray (tests/conftest.py) rather than start its own
def test_a_dry_run_says_why_auto_chose_freeze_thaw_with_the_figure_for_its_concurrency(run_cli, tmp_path):
    got = run_cli("sweep", "--space", "cifar_small", "--dataset", "synthetic", "--max-concurrent", "1",
                  "--storage-path", tmp_path, "--dry-run")  # fmt: skip
    assert got.code == 0, got.err
    lines = got.out.splitlines()
    chosen = next(i for i, line in enumerate(lines) if line.startswith("  auto chose freeze-thaw: "))
    assert lines[chosen + 1].startswith("  held out: on the 17 LCBench tasks")
    assert "1 trial at once: first of 15 methods" in lines[chosen + 1]
    assert "resources: 1 CPU and 0 GPU per trial; 1 trial(s) at once" in got.out
    assert "  dataset: synthetic" in lines and "not used (" not in got.out
    # the settings say where freeze-thaw weighs a trial first, that it halves by no factor, and what is unset
    assert {"  grace_period: 1 (freeze-thaw weighs a trial first at epoch 2)",
            "  reduction_factor: 2 (not used by freeze-thaw: it weighs a trial again each time its epochs double, at "
            "epochs 2, 4 and 8)",
            "  trial_timeout: none (from the slowest epoch seen: see trial timeout below)", "  constraints: none",
            "  max_concurrent: 1"} <= set(lines), got.out  # fmt: skip
    # the figure is freeze-thaw's with its own searcher: with another, the plan does not claim it
    other = run_cli("sweep", "--space", "cifar_small", "--dataset", "synthetic", "--searcher", "random",
                    "--grace-period", "3", "--storage-path", tmp_path, "--dry-run")  # fmt: skip
    assert other.code == 0 and "auto chose freeze-thaw: " in other.out and "held out:" not in other.out
    assert "  grace_period: 3" in other.out.splitlines()  # as given: freeze-thaw weighs it first there


@pytest.mark.usefixtures("ray_session")  # a dry run joins a running Ray (tests/conftest.py) rather than start its own
def test_a_pbt_population_larger_than_its_slots_is_told_what_taking_turns_costs(run_cli, tmp_path):
    """Ray's PBT pauses a trial at each perturbation while others wait; a class without reset_config then starts
    a new process every turn (a reviewer saw its pid change at every epoch)."""
    space = tmp_path / "cls_space.py"
    space.write_text(
        "from ray import tune\nfrom tuner import SearchSpace\n\n\n"
        "class Train(tune.Trainable):\n"
        "    def setup(self, config):\n        self.x = 0\n"
        "    def step(self):\n        self.x += 1\n        return {'loss': 1.0 / self.x}\n"
        "    def save_checkpoint(self, d):\n        return {'x': self.x}\n"
        "    def load_checkpoint(self, state):\n        self.x = state['x']\n\n\n"
        "SPACE = SearchSpace(trainable=Train, params={'lr': tune.loguniform(1e-4, 1e-1)}, metric='loss', mode='min')\n"
    )
    got = run_cli("sweep", "--space", space, "--scheduler", "pbt", "--num-samples", "4", "--max-epochs", "4",
                  "--storage-path", tmp_path, "--dry-run")  # fmt: skip
    assert got.code == 0, got.err
    assert (
        "  PBT's 4 trials take turns on 2 slot(s): at each perturbation a trial is paused while another waits, and "
        "continued later from its checkpoint; Train has no reset_config, so each turn starts a new process (define "
        "it to reuse one)"
    ) in got.out.splitlines()
    assert "distinct epochs:" not in got.out  # a class saves when it is paused: nothing is run again
    # a trainable that reads no data is not shown a data set it would not read
    assert "  dataset, data_dir, synthetic_size, download: not used (" in got.out and "  dataset:" not in got.out
    function = run_cli("sweep", "--space", "cifar_small", "--dataset", "synthetic", "--scheduler", "hyperband",
                       "--num-samples", "4", "--storage-path", tmp_path, "--dry-run")  # fmt: skip
    assert function.code == 0 and "  distinct epochs: hyperband pauses trials at epochs it sets, and a function " in function.out
    # the settings say which of them the scheduler does not read, and what the plan makes of those left unset
    for out, said in [(got.out, ["  grace_period: 1 (not used by pbt)", "  reduction_factor: 2 (not used by pbt)",
                                 "  max_concurrent: none (2 trial(s) at once: as many as there is room for now)"]),
                      (function.out, ["  grace_period: 1 (not used by hyperband)", "  reduction_factor: 2"])]:  # fmt: skip
        assert set(said) <= set(out.splitlines()), out



@pytest.mark.parametrize("bad, said", [
    ({"num_samples": "abc"}, "tuner.sweep(): num_samples must be a whole number, got 'abc'"),
    ({"max_epochs": 2.5}, "tuner.sweep(): max_epochs must be a whole number, got 2.5"),
    ({"num_samples": True}, "tuner.sweep(): num_samples must be a whole number, got True"),
])  # fmt: skip
def test_the_notebook_api_checks_its_settings_types_as_the_flags_do(bad, said):
    """A raw TypeError ('<' not supported between 'str' and 'int') came out, and max_epochs=2.5 was planned."""
    import tuner

    with pytest.raises(tuner.UsageError) as refused:
        tuner.sweep("cifar_small", dry_run=True, **bad)
    assert str(refused.value) == said


@pytest.mark.parametrize(
    "text, message",
    [
        (b"num_samples: 2\nnum-samples: 3\n", "'num-samples' sets num_samples again; give each setting once"),
        (b"num_samples: 2\nnum_samples: 3\n", "is not valid YAML at line 2: 'num_samples' is given twice"),
        (b"\xff\xfe bad", "is not UTF-8 text"),
    ],
)
def test_a_sweep_file_that_says_a_setting_twice_or_is_not_text_is_refused_in_one_line(tmp_path, text, message):
    """Both forms of a key were taken silently (the last won), and a file not in UTF-8 crashed with a traceback."""
    path = tmp_path / "sweep.yaml"
    path.write_bytes(text)
    with pytest.raises(UsageError, match=message):
        read_yaml_settings(path)


def test_a_tuner_variable_one_letter_off_a_setting_is_named_and_others_are_left_alone(caplog):
    """A misspelt TUNER_NUM_SAMPLE was ignored without a word; a user's own TUNER_MODEL must still run."""
    import logging

    with caplog.at_level(logging.WARNING, logger="tuner.launch.layers"):
        assert env_settings({"TUNER_NUM_SAMPLE": "3", "TUNER_IMAGE": "x", "TUNER_NUM_SAMPLES": "4"}) == {"num_samples": 4}
    assert caplog.messages == [
        "environment TUNER_NUM_SAMPLE is not a tuner setting and is left alone; did you mean TUNER_NUM_SAMPLES?"
    ]


def test_an_experiments_settings_not_in_utf8_are_called_corrupted(tmp_path):
    (tmp_path / "tuner_config.yaml").write_bytes(b"\xff\xfe bad")
    with pytest.raises(UsageError, match="tuner_config.yaml is corrupted: not UTF-8 text"):
        load_saved_config(tmp_path)


def test_a_space_file_a_sweep_file_names_is_found_beside_it_when_not_where_the_command_runs(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "fast.py").write_text("")
    (tmp_path / "sub" / "cfg.yaml").write_text("space: ./fast.py\n")
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path / "other")
    assert read_yaml_settings(tmp_path / "sub" / "cfg.yaml")["space"] == str(tmp_path / "sub" / "fast.py")
    (tmp_path / "other" / "fast.py").write_text("")  # one where the command runs comes first, as before
    assert read_yaml_settings(tmp_path / "sub" / "cfg.yaml")["space"] == "./fast.py"


@pytest.mark.parametrize(
    "constraints, refused",
    [
        (["score<=1", "score>=2"], "--constraint score<=1 and score>=2: no value of score meets both"),
        (["score<1", "score>=1"], "--constraint score<1 and score>=1: no value of score meets both"),
        (["score<=1", "score>=1"], None),
        (["score<=1", "mb>=2"], None),
    ],
)
def test_constraints_no_value_meets_together_are_refused(constraints, refused):
    """Every trial of such a sweep was infeasible, after all its epochs were trained."""
    from tuner.objectives import Constraint, check_satisfiable

    parsed = [Constraint.parse(c) for c in constraints]
    if refused is None:
        check_satisfiable(parsed)
        return
    with pytest.raises(UsageError, match=refused):
        check_satisfiable(parsed)
