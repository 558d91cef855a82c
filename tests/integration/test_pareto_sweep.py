"""Several objectives end to end on a real Ray: the front found under ASHA by fronts, shown, saved, exported."""

from __future__ import annotations

import json
import textwrap

import pytest

import tuner

SPACE = textwrap.dedent('''
    """A wider net learns more and costs more: loss against size."""
    import math
    from ray import tune
    from tuner import SearchSpace


    def train(config, *, max_epochs=4):
        size = config["width"] * config["depth"]
        for epoch in range(1, max_epochs + 1):
            floor = abs(math.log10(config["lr"]) + 2.5) + 16 / config["width"]
            tune.report({"loss": floor + 2.0 / epoch, "size": size, "mb": config["width"] * 10})


    SPACE = SearchSpace(
        trainable=train,
        metrics={"loss": "min", "size": "min"},
        params={"width": tune.randint(4, 64), "depth": tune.randint(1, 4), "lr": tune.loguniform(1e-4, 1e-1)},
    )
''')


@pytest.fixture(scope="module")
def space_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pareto") / "two.py"
    path.write_text(SPACE)
    return path


@pytest.fixture(scope="module")
def swept(space_file, tmp_path_factory):
    """One two-objective sweep under ASHA (the default), with a bound on memory."""
    from tuner.cli import main

    storage = tmp_path_factory.mktemp("runs")
    try:
        main(["sweep", "--space", str(space_file), "--storage-path", str(storage), "--name", "front",
              "--num-samples", "12", "--max-epochs", "4", "--constraint", "mb<=500"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code in (0, None)
    return storage / "front"


def test_the_front_is_printed_saved_and_returned_as_a_dataframe(swept):
    saved = json.loads((swept / "pareto.json").read_text())
    assert [o["metric"] for o in saved["objectives"]] == ["loss", "size"]
    front = saved["front"]
    assert front and all(row["config"]["width"] * 10 <= 500 for row in front)  # never an infeasible trial
    assert saved["hypervolume"] > 0 and saved["constraints"] == ["mb<=500"]
    exp = tuner.load(str(swept))
    frame = exp.pareto
    assert frame["trial_id"].tolist() == [row["trial_id"] for row in front]
    assert list(frame.columns[:4]) == ["trial_id", "loss", "size", "epoch"]
    assert frame["loss"].is_monotonic_increasing and frame["size"].is_monotonic_decreasing  # a real front
    trials = exp.trials
    assert {"last_size", "front", "feasible"} <= set(trials.columns)
    assert sorted(trials.loc[trials["front"], "trial_id"]) == sorted(row["trial_id"] for row in front)
    best = json.loads((swept / "best_config.json").read_text())
    assert best["best_trial"] == front[0]["trial_id"]  # the best by the first objective is the front's first


def test_dominated_and_infeasible_trials_are_stopped_with_their_reason(swept):
    fates = [t.fate for t in tuner.load(str(swept))._read().trials]
    stopped = [f for f in fates if f.startswith("stopped early by ASHA")]
    assert stopped, fates
    assert all(("dominated by" in f or "ranked behind" in f or "infeasible (mb" in f) for f in stopped), stopped


def test_results_and_export_read_the_front(swept, run_cli):
    table = run_cli("results", swept)
    assert table.code == 0 and "front" in table.out.splitlines()[1] and "last_size" in table.out
    front = json.loads((swept / "pareto.json").read_text())["front"]
    small = run_cli("export", swept, "--weights", "size=1,loss=0")
    assert small.code == 0
    picked = json.loads(small.out)
    assert picked["on_front"] and picked["values"]["size"] == min(row["size"] for row in front)
    other = run_cli("export", swept, "--pick", front[-1]["trial_id"])
    assert json.loads(other.out)["trial_id"] == front[-1]["trial_id"]
    wrong = run_cli("export", swept, "--weights", "speed=1")
    assert wrong.code == 2 and "not an objective of this sweep (loss, size)" in wrong.err


def test_a_replay_decides_by_fronts_too(swept, run_cli):
    replayed = run_cli("replay", swept, "--scheduler", "asha")
    assert replayed.code == 0 and "ranked by fronts of loss (min), size (min)" in replayed.out


@pytest.mark.parametrize("args, fragment", [
    (("--scheduler", "pbt"), "--scheduler pbt ranks trials by one value and cannot decide on 2 objectives"),
    (("--searcher", "gp"), "--searcher gp models one value and cannot search 2 objectives"),
    (("--mode", "min,max,min"), "but --mode gives 3 modes"),
    (("--constraint", "mb=3"), "is not METRIC<=VALUE"),
    (("--warm-start", "."), "a sweep on several objectives starts without it"),
])  # fmt: skip
def test_what_cannot_decide_on_several_objectives_is_one_line(space_file, run_cli, tmp_path, args, fragment):
    result = run_cli("sweep", "--space", space_file, "--storage-path", tmp_path, "--dry-run", *args)
    assert result.code == 2 and fragment in result.err and len(result.err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_the_plan_says_how_several_objectives_are_searched(space_file, run_cli, tmp_path):
    plan = run_cli("sweep", "--space", space_file, "--storage-path", tmp_path, "--dry-run", "--constraint", "mb<=500")
    assert plan.code == 0
    assert "auto chose optuna: 2 objectives" in plan.out
    assert "objectives: loss (min), size (min): the sweep finds the Pareto front" in plan.out
    assert "constraints: mb<=500 on each trial's last result" in plan.out and "told to optuna" in plan.out


CHECKPOINTED = textwrap.dedent('''
    """Loss against size, continuing from checkpoints (HyperBand pauses trials)."""
    import json, math, os, tempfile
    from ray import tune
    from tuner import SearchSpace


    def train(config, *, max_epochs=4):
        start, size = 0, config["width"] * config["depth"]
        if tune.get_checkpoint() is not None:
            with tune.get_checkpoint().as_directory() as folder:
                start = json.load(open(os.path.join(folder, "state.json")))["epoch"]
        for epoch in range(start + 1, max_epochs + 1):
            floor = abs(math.log10(config["lr"]) + 2.5) + 16 / config["width"]
            with tempfile.TemporaryDirectory() as folder:
                json.dump({"epoch": epoch}, open(os.path.join(folder, "state.json"), "w"))
                tune.report({"loss": floor + 2.0 / epoch, "size": size, "mb": config["width"] * 10},
                            checkpoint=tune.Checkpoint.from_directory(folder))


    SPACE = SearchSpace(
        trainable=train,
        metrics={"loss": "min", "size": "min"},
        params={"width": tune.randint(4, 64), "depth": tune.randint(1, 4), "lr": tune.loguniform(1e-4, 1e-1)},
    )
''')


@pytest.mark.slow  # their decisions by fronts: tests/unit/test_objectives.py
@pytest.mark.parametrize("scheduler, by", [("hyperband", "HyperBand"), ("median", "the median rule")])
def test_hyperband_and_the_median_rule_decide_by_fronts_too(tmp_path, run_cli, scheduler, by):
    space = tmp_path / "checkpointed.py"
    space.write_text(CHECKPOINTED)
    result = run_cli("sweep", "--space", space, "--storage-path", tmp_path, "--name", scheduler, "--scheduler",
                     scheduler, "--num-samples", "10", "--max-epochs", "4", "--constraint", "mb<=500")  # fmt: skip
    assert result.code == 0, result.err
    assert "by fronts of loss (min), size (min)" in result.out
    fates = [t.fate for t in tuner.load(str(tmp_path / scheduler))._read().trials]
    stopped = [f for f in fates if f.startswith(f"stopped early by {by}")]
    assert stopped and all(("dominated by" in f or "ranked behind" in f or "infeasible (mb" in f) for f in stopped), fates
    front = json.loads((tmp_path / scheduler / "pareto.json").read_text())["front"]
    assert front and all(row["config"]["width"] * 10 <= 500 for row in front)


def test_metric_alone_takes_each_metrics_mode_from_the_space_by_name(tmp_path, run_cli):
    space = tmp_path / "acc.py"
    space.write_text(SPACE.replace('metrics={"loss": "min", "size": "min"}', 'metrics={"acc": "max", "size": "min"}'))
    swapped = run_cli("sweep", "--space", space, "--storage-path", tmp_path, "--dry-run", "--metric", "size,acc")
    assert swapped.code == 0 and "objectives: size (min), acc (max)" in swapped.out
    one = run_cli("sweep", "--space", space, "--storage-path", tmp_path, "--dry-run", "--metric", "acc")
    assert one.code == 0 and "objectives: acc (max)\n" in one.out
    unknown = run_cli("sweep", "--space", space, "--storage-path", tmp_path, "--dry-run", "--metric", "loss")
    assert unknown.code == 2 and "maximise it (it declares acc (max), size (min)); pass --mode min or --mode max" in unknown.err
    typo = run_cli("sweep", "--space", space, "--storage-path", tmp_path, "--dry-run", "--metric", "acx")
    assert typo.code == 2 and "size (min)); did you mean acc? If not, pass --mode min or --mode max" in typo.err
