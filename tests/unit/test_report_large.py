"""A large sweep's report: the best trials in detail, the others summed up or on demand, none lost.

Experiments written on disk by hand (no Ray), as a finished FIFO or ASHA sweep leaves them.
"""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest
import yaml

from tuner.experiment import load
from tuner.review.report import detail
from tuner.review.report.axes import axis_for
from tuner.review.report.curves import curves, history
from tuner.review.report.page import build
from tuner.review.report.params import parallel

COLUMNS = ["loss", "timestamp", "training_iteration", "trial_id", "time_this_iter_s", "time_total_s"]


def _experiment(tmp_path, trials: int, epochs: int = 3, widths=(8, 16, 32)):
    """``trials`` trials of a 1-D space; a loss that falls with the epochs towards (x - 0.3)^2; every third
    trial stopped early after its first epoch, as ASHA leaves it."""
    folder = tmp_path / "exp"
    folder.mkdir(parents=True)
    settings = {"space": "x.py", "scheduler": "asha", "searcher": "random", "num_samples": trials,
                "max_epochs": epochs, "metric": "loss", "mode": "min", "name": "exp",
                "storage_path": str(tmp_path)}  # fmt: skip
    (folder / "tuner_config.yaml").write_text(yaml.safe_dump(settings))
    draw = random.Random(1)
    state, fates = [], {}
    for n in range(1, trials + 1):
        trial_id, x = f"t{n:05d}", draw.random()
        name = f"{trial_id}_x={x:.3g}"
        (folder / name).mkdir()
        (folder / name / "params.json").write_text(json.dumps({"x": x, "width": draw.choice(widths)}))
        stopped = n % 3 == 0
        lines = [",".join(COLUMNS)]
        for epoch in range(1, (1 if stopped else epochs) + 1):
            lines.append(f"{(x - 0.3) ** 2 + 1 / epoch},{1000 + n},{epoch},{trial_id},0.1,{0.1 * epoch}")
        (folder / name / "progress.csv").write_text("\n".join(lines) + "\n")
        trial = {"trial_id": trial_id, "status": "TERMINATED", "relative_logdir": name,
                 "experiment_tag": f"{n}_x={x:.3g}", "config": {"x": x}}  # fmt: skip
        state.append([json.dumps(trial), json.dumps({"error_filename": None})])
        if stopped:
            fates[trial_id] = {"stopped": "stopped early by ASHA at epoch 1: below the cutoff"}
    (folder / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps({"trial_data": state}))
    (folder / "fates.json").write_text(json.dumps(fates))
    return load(str(folder), running=False)


def _curve_ids(fig) -> set[str]:
    """The trials with a curve of their own (each trace's hover names its trial)."""
    return {str(t.hovertext).split(":")[0] for t in fig.data if isinstance(t.hovertext, str)}


def test_a_sweep_up_to_the_detail_limit_draws_every_trial(tmp_path):
    experiment = _experiment(tmp_path, 60)
    assert _curve_ids(curves(experiment)) == {t.trial_id for t in experiment.trials}
    page = build(experiment)
    assert "drawn at random" not in page and "as bands" not in page and "other-trials" not in page
    assert all(t.trial_id in page for t in experiment.trials)


def test_a_large_sweep_draws_its_best_trials_and_sums_up_the_rest(tmp_path):
    experiment = _experiment(tmp_path, detail.IN_DETAIL + 250)
    ranked = experiment.ranked()
    best = {t.trial_id for t in ranked[: detail.IN_DETAIL]}

    fig = curves(experiment)
    assert _curve_ids(fig) == best  # the best ones one by one, the best trial among them
    bands = [t for t in fig.data if str(t.name or "").endswith("(median, middle 80%)")]
    # the other 250 (the 150 stopped early end an epoch behind, so the best 200 all completed), a band each
    assert sorted(b.name for b in bands) == [
        "completed, the other 100 (median, middle 80%)",
        "stopped early, the other 150 (median, middle 80%)",
    ]
    completed = next(b for b in bands if b.name.startswith("completed"))
    assert list(completed.x) == [1.0, 2.0, 3.0] and [c[0] for c in completed.customdata] == [100, 100, 100]
    stopped = next(b for b in bands if b.name.startswith("stopped"))
    assert list(stopped.x) == [1.0] and stopped.customdata[0][0] == 150

    lines = parallel(experiment, [t for t in ranked if t.best("loss", "min") is not None])
    hovered = [t for t in lines.data if t.hoverinfo == "text"]
    assert len(hovered) == detail.IN_DETAIL
    faint = [t for t in lines.data if t.hoverinfo == "skip" and t.mode == "lines"]
    assert (
        sum(list(t.x).count(None) for t in faint) == 250
    )  # every other trial, one line each (none sampled out)

    page = build(experiment)
    assert f"The best {detail.IN_DETAIL} trials have a curve each; the other 250 as bands" in page
    table = re.search(r"<table class=fates>.*?</table>", page, re.S).group(0)
    assert table.count("<tr class=") == detail.IN_DETAIL
    data = json.loads(re.search(r"id=other-trials>(.*?)</script>", page, re.S).group(1))
    assert len(data) == 250 and {row[2] for row in data} | best == {t.trial_id for t in experiment.trials}
    assert "List the other 250 trials" in page and "(150 stopped early, 100 completed)" in page


def test_an_axis_is_log_only_where_the_values_lie_evenly_on_it(tmp_path):
    experiment = _experiment(tmp_path, 300)  # x drawn uniformly from 0 to 1: it spans a factor of hundreds
    scored = [t for t in experiment.ranked() if t.best("loss", "min") is not None]
    labels = [a.text for a in parallel(experiment, scored).layout.annotations]
    assert "<b>x</b>" in labels and "<b>x (log)</b>" not in labels
    draw = random.Random(3)
    assert axis_for("lr", [10 ** draw.uniform(-4, -1) for _ in range(8)]).label == "lr (log)"
    assert axis_for("steps", [n + 0.5 for n in range(20)]).label == "steps"  # 0.5 to 19.5, evenly
    # a handful of trials cannot tell the draws apart: the scale the space draws on decides (plan.json)
    few_lr, few_width = [0.0003297, 0.01594, 0.03154, 0.047, 0.09], [1.2, 2.5, 3.1, 19.0, 20.0]
    assert axis_for("lr", few_lr, scale="log").label == "lr (log)"
    assert axis_for("width", few_width, scale="linear").label == "width"
    assert axis_for("width", few_width).label == "width (log)"  # what the guess alone said of these five


def test_a_parameter_some_trials_did_not_ask_keeps_its_units_and_a_mark_of_its_own():
    """momentum, asked only where optimizer=sgd: it was drawn as categories (0.7689 and 0.7699 a step apart) and
    the page said "lowest mean loss at 0.9738", one trial's value, for a number whose direction can be tested."""
    from tuner.experiment import TrialRecord
    from tuner.objectives import LOSS
    from tuner.review.report.importance import direction

    momenta = [0.7136, None, 0.7689, 0.7699, None, 0.9738]
    axis = axis_for("momentum", momenta)
    assert axis.ticks[0] == (0.0, "not asked") and [axis.positions[i] for i in (1, 4)] == [0.0, 0.0]
    asked = [axis.positions[i] for i in (0, 2, 3, 5)]
    assert asked[0] == pytest.approx(0.15) and asked[-1] == pytest.approx(1.0)
    assert asked[2] - asked[1] < 0.01  # 0.7689 and 0.7699 side by side, in the parameter's units
    trials = [TrialRecord(f"t{n}", "", "TERMINATED", {} if m is None else {"momentum": m},
                          [{"training_iteration": "1", "loss": str(1.0 - (m or 0.5) / 2)}], fate="ran to max epochs (1)")
              for n, m in enumerate(momenta)]  # fmt: skip
    said = direction(trials, "momentum", LOSS[0])
    assert said.startswith("higher momentum → lower loss (ρ -1.00)") and said.endswith(" in the 4 trials that asked it")


def test_the_best_so_far_is_drawn_by_its_steps(tmp_path):
    experiment = _experiment(tmp_path, 300)
    scored = [t for t in experiment.ranked() if t.best("loss", "min") is not None]
    fig = history(experiment, scored)
    each, so_far, by_time = fig.data
    assert len(each.x) == 300  # every trial's best, as a point
    ys = list(so_far.y)
    steps = ys[:-1]  # a point where it improves, and the last trial's to end the line
    assert steps == sorted(set(steps), reverse=True) and len(steps) < 30
    assert so_far.x[-1] == 300 and ys[-1] == min(t.best("loss", "min") for t in scored)
    assert len(by_time.y) < len(each.x)


def test_a_sample_is_the_same_each_time_and_keeps_the_order(tmp_path):
    experiment = _experiment(tmp_path, 30)
    picked = detail.sample(experiment.trials, at_most=10)
    assert picked == detail.sample(experiment.trials, at_most=10)
    assert len(picked) == 10 and picked == sorted(picked, key=experiment.trials.index)


def test_one_varying_parameter_holds_all_the_variance_without_a_forest(tmp_path):
    """With one parameter varying, its share is all of it: what Optuna's fANOVA gives after fitting a forest,
    given at once (fitting it took seconds at a few hundred trials)."""
    import optuna
    from optuna.distributions import FloatDistribution
    from optuna.importance import FanovaImportanceEvaluator

    from tuner.review.report.importance import importance, value_of

    experiment = _experiment(tmp_path, 40, widths=(16,))
    objective = experiment.config.objective
    found = importance(experiment.trials, objective)
    assert found is not None and found.scores == {"x": 1.0} and found.fitted == 0
    assert found.compared == 40  # every trial, each at its best: those stopped after epoch 1 too

    study = optuna.create_study()
    for t in experiment.trials:
        study.add_trial(optuna.trial.create_trial(params={"x": t.config["x"]},
                                                  distributions={"x": FloatDistribution(0, 1)},
                                                  value=value_of(t, objective)))  # fmt: skip
    assert optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0)) == {
        "x": 1.0
    }
    page = build(experiment)
    assert "Only x varied, so all of the variance is its own" in page and "random forest" not in page

    two = _experiment(tmp_path / "two", 40)
    found = importance(two.trials, two.config.objective)
    assert found is not None and set(found.scores) == {"x", "width"} and found.fitted == found.compared


def test_importance_compares_each_trial_at_its_best_where_the_trials_differ(tmp_path):
    """Most trials stopped at epoch 1 near one loss, the rest went on and parted: the trials are compared at
    their bests, where lr tells them apart, and the page says which way lr moves the loss in those words."""
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.review.report.importance import direction, importance
    from tuner.settings import SweepConfig

    def rows(*losses):
        return [{"training_iteration": str(i), "loss": str(v)} for i, v in enumerate(losses, 1)]

    draw = random.Random(5)
    lrs = sorted(10 ** draw.uniform(-4, -1) for _ in range(12))
    trials = []
    for n, lr in enumerate(lrs):
        went_on = n >= 8  # the scheduler kept the four with the highest lr
        # at epoch 1 all sit at about 2.30 whatever their lr; those that went on fall the more the higher it is
        curve = [2.30 + 0.001 * draw.random()] + ([1.0 - 5 * lr, 0.5 - 5 * lr] if went_on else [])
        config = {"lr": lr, "width": draw.choice([16, 32, 64])}
        fate = "ran to max epochs (3)" if went_on else "stopped early by ASHA at epoch 1"
        trials.append(TrialRecord(f"t{n:02d}", "", "TERMINATED", config, rows(*curve), fate=fate))
    record = ExperimentRecord("/exp", SweepConfig(space="x", scheduler="asha", max_epochs=3), trials)
    found = importance(trials, record.config.objective)
    assert found is not None and found.compared == 12 and max(found.scores, key=found.scores.get) == "lr"
    assert direction(trials, "lr", record.config.objective).startswith("higher lr → lower loss (ρ -")


def test_an_objective_every_trial_reached_alike_has_no_importance_and_no_error():
    """A second objective such as the epoch count, the same for every trial: fANOVA refuses zero variance, so
    the page says nothing of it rather than failing (tuner report of --metric loss,epoch failed so)."""
    from tuner.experiment import TrialRecord
    from tuner.objectives import Objective
    from tuner.review.report.importance import importance

    rows = [{"training_iteration": "1", "loss": "1.0", "epoch": "2"}, {"training_iteration": "2", "loss": "0.5", "epoch": "2"}]
    trials = [TrialRecord(f"t{n}", "", "TERMINATED", {"lr": 10.0**-n, "width": 8 * n}, rows) for n in range(1, 7)]
    assert importance(trials, Objective("epoch", "min")) is None
    assert importance(trials, Objective("loss", "min")) is None  # the loss does not vary either


def test_the_rank_correlation_agrees_with_scipys_spearman_ties_included():
    """The page ranks by itself (scipy.stats' import is a second of every page): the same rho and p-value
    as ``scipy.stats.spearmanr``, with tied values, a side that does not vary, and too few trials to say."""
    from scipy.stats import spearmanr

    from tuner.review.report.importance import _spearman

    draw = random.Random(7)
    for n in (3, 5, 12, 40, 300):
        xs = [draw.choice([1, 2, 2, 3, 4.5]) for _ in range(n)]
        ys = [x * draw.uniform(-1, 2) + draw.gauss(0, 1) for x in xs]
        rho, p = _spearman(xs, ys)
        expected = spearmanr(xs, ys)
        if expected.statistic != expected.statistic:  # scipy: nan where a side does not vary
            assert (rho, p) == (0.0, 1.0)
            continue
        assert abs(rho - expected.statistic) < 1e-9 and abs(p - expected.pvalue) < 1e-9, (n, rho, p, expected)
    assert _spearman([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0]) == (0.0, 1.0)
    assert _spearman([1.0, 2.0], [3.0, 5.0]) == (0.0, 1.0)  # two trials say nothing of a direction
    assert _spearman([1.0, 2.0, 3.0, 4.0], [8.0, 6.0, 4.0, 2.0]) == (-1.0, 0.0)


def test_trials_stopped_at_one_rung_near_one_value_are_not_a_smear_of_labels():
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.review.report.curves import LABEL_GAP, LABELS_PER_EPOCH, curves
    from tuner.settings import SweepConfig

    def rows(*losses):
        return [{"training_iteration": str(i), "loss": str(v)} for i, v in enumerate(losses, 1)]

    stopped = "stopped early by ASHA at epoch 1: below the cutoff"
    trials = [TrialRecord("best", "", "TERMINATED", {}, rows(1.2, 0.3), fate="ran to max epochs (2)")]
    trials += [
        TrialRecord(f"near{i}", "", "TERMINATED", {}, rows(2.30 + i / 1000), fate=stopped) for i in range(9)
    ]
    trials += [TrialRecord("apart", "", "TERMINATED", {}, rows(1.0), fate=stopped)]
    fig = curves(ExperimentRecord("/exp", SweepConfig(space="x", scheduler="asha", max_epochs=2), trials))
    labels = {t.text[-1]: t.y[-1] for t in fig.data if t.text is not None and t.text[-1]}
    assert "apart" in labels and len(labels) <= LABELS_PER_EPOCH  # the best stopped there is named
    assert len([name for name in labels if name.startswith("near")]) == 1  # one of the nine about 2.30
    ys = sorted(labels.values())
    assert all(b - a >= LABEL_GAP * (2.308 - 0.3) for a, b in itertools.pairwise(ys))  # no two labels overlap
    assert len([t for t in fig.data if t.name == "stopped early"]) == 10  # each still drawn, named on hover
