"""The report's Pareto panel, built from a small experiment written on disk by hand (no Ray)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tuner.experiment import load
from tuner.review import front
from tuner.review.report import front_panel
from tuner.review.report.page import build

STOPPED = "stopped early by ASHA at epoch 1: dominated by 2 trials at the epoch-1 rung"
COLUMNS = ["loss", "latency_ms", "params_k", "timestamp", "training_iteration", "trial_id", "time_this_iter_s",
           "time_total_s"]  # fmt: skip
# trial id -> (config, one (loss, latency_ms, params_k) a reported epoch, stopped early)
TRIALS = {
    "aaaa0001": ({"lr": 0.01, "width": 64}, [(1.2, 30.0, 100), (0.5, 30.0, 100)], False),  # front
    "aaaa0002": ({"lr": 0.02, "width": 16}, [(1.4, 10.0, 20), (1.0, 10.0, 20)], False),  # front
    "aaaa0003": ({"lr": 0.03, "width": 96}, [(1.1, 40.0, 300), (0.9, 40.0, 300)], False),  # dominated by 0001
    "aaaa0004": ({"lr": 0.04, "width": 80}, [(2.0, 50.0, 200)], True),  # stopped early, dominated
    "aaaa0005": ({"lr": 0.05, "width": 8}, [(1.5, 5.0, 5)], True),  # stopped early, on the front
}


def _experiment(tmp_path, objectives=("loss:min", "latency_ms:min"), constraints=None):
    """An experiment folder as a finished sweep leaves it: settings, Ray's state, each trial's results, fates."""
    folder = tmp_path / "exp"
    folder.mkdir(parents=True)
    metric, mode = objectives[0].split(":")
    settings = {"space": "x.py", "scheduler": "asha", "searcher": "optuna", "num_samples": len(TRIALS),
                "max_epochs": 2, "metric": metric, "mode": mode,
                "objectives": list(objectives) if len(objectives) > 1 else None, "constraints": constraints,
                "name": "exp", "storage_path": str(tmp_path)}  # fmt: skip
    (folder / "tuner_config.yaml").write_text(yaml.safe_dump(settings))
    state, fates = [], {}
    for n, (trial_id, (config, epochs, stopped)) in enumerate(TRIALS.items(), 1):
        name = f"{trial_id}_{n}"
        (folder / name).mkdir()
        (folder / name / "params.json").write_text(json.dumps(config))
        lines = [",".join(COLUMNS)]
        for epoch, (loss, latency, params) in enumerate(epochs, 1):
            stamp = 1000 + 10 * n + epoch
            lines.append(f"{loss},{latency},{params},{stamp},{epoch},{trial_id},1.0,{float(epoch)}")
        (folder / name / "progress.csv").write_text("\n".join(lines) + "\n")
        trial = {"trial_id": trial_id, "status": "TERMINATED", "relative_logdir": name,
                 "experiment_tag": f"{n}_lr={config['lr']}", "config": config}  # fmt: skip
        state.append([json.dumps(trial), json.dumps({"error_filename": None})])
        if stopped:
            fates[trial_id] = {"stopped": STOPPED}
    (folder / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps({"trial_data": state}))
    (folder / "fates.json").write_text(json.dumps(fates))
    return load(str(folder), running=False)


def _trial(hover: str) -> str:
    """The trial id a hover text starts with."""
    return hover.split("</b>")[0].removeprefix("<b>")


def _front_table(page: str) -> str:
    found = re.search(r"<table class=front>.*?</table>", page, re.S)
    assert found, "no front table"
    return found.group(0)


def test_two_objectives_draw_the_front_its_staircase_and_the_hypervolume(tmp_path):
    experiment = _experiment(tmp_path)
    html = front_panel.section(experiment)
    table = _front_table(html)
    for trial_id in ("aaaa0001", "aaaa0002", "aaaa0005"):
        assert trial_id in table
    assert "aaaa0003" not in table and "aaaa0004" not in table  # dominated: drawn, never in the front's table
    assert "aaaa0003" in html and "aaaa0004" in html  # every trial's point is in the scatter
    counts = "Early stopping removed 2 of 5 trials before their last epoch; 3 trials are on the Pareto front"
    assert counts in html
    assert "1 of them was stopped early" in html
    assert "loss (lower is better)" in html and "latency_ms (lower is better)" in html
    assert "Hypervolume over time" in html and "seconds since the sweep started" in html


def test_stopped_early_trials_are_hollow_and_dominated_ones_faded(tmp_path):
    experiment = _experiment(tmp_path)
    found = front.points(experiment)
    best = front.front(experiment)
    fig = front_panel.scatter(experiment.config.objectives, found, best)
    marks = {}
    for trace in fig.data:
        if "markers" not in trace.mode:
            continue
        for text, symbol in zip(trace.hovertext, trace.marker.symbol, strict=True):
            marks[_trial(text)] = (trace.name, symbol, trace.marker.opacity)
    assert marks["aaaa0001"] == ("on the Pareto front", "diamond", 1.0)
    assert marks["aaaa0005"] == ("on the Pareto front", "diamond-open", 1.0)  # on the front, stopped early
    assert marks["aaaa0004"] == ("stopped early, dominated", "circle-open", front_panel.FADED)
    assert marks["aaaa0003"] == ("completed, dominated", "circle", front_panel.FADED)
    (on_front,) = [t for t in fig.data if t.name == "on the Pareto front"]
    assert sorted(on_front.text) == [
        "aaaa0001",
        "aaaa0002",
        "aaaa0005",
    ]  # named on the chart, not only on hover
    hover = next(t for t in fig.data if t.name == "stopped early, dominated").hovertext[0]
    assert "epoch 1" in hover and "lr=0.04, width=80" in hover and STOPPED in hover


def test_the_staircase_steps_towards_the_better_corner_for_either_mode(tmp_path):
    experiment = _experiment(tmp_path)
    objectives = experiment.config.objectives
    xs, ys = front_panel.staircase(front.front(experiment), objectives, front.points(experiment))
    # from the worst latency down to the best loss, a step at each front point, out to the worst loss
    steps = [(0.5, 50.0), (0.5, 30.0), (1.0, 30.0), (1.0, 10.0), (1.5, 10.0), (1.5, 5.0), (2.0, 5.0)]
    assert list(zip(xs, ys, strict=True)) == steps
    maxed = _experiment(tmp_path / "max", objectives=("loss:min", "params_k:max"))
    best = front.front(maxed)
    assert [p.trial.trial_id for p in best] == ["aaaa0001", "aaaa0003"]
    xs, ys = front_panel.staircase(best, maxed.config.objectives, front.points(maxed))
    steps = [(0.5, 5.0), (0.5, 100.0), (0.9, 100.0), (0.9, 300.0), (2.0, 300.0)]  # up is better for params_k
    assert list(zip(xs, ys, strict=True)) == steps


def test_the_hypervolume_figure_ends_at_the_sweeps_hypervolume(tmp_path):
    experiment = _experiment(tmp_path)
    fig = front_panel.hypervolume_figure(experiment)
    assert fig.layout.xaxis.title.text == "seconds since the sweep started"
    assert fig.data[0].x[0] >= 0
    assert fig.data[0].y[-1] == pytest.approx(front.hypervolume(experiment))


def test_constraints_keep_a_trial_off_the_front_and_say_so(tmp_path):
    experiment = _experiment(tmp_path, constraints=["latency_ms>=8"])  # aaaa0005 (5 ms) would be on the front
    html = front_panel.section(experiment)
    table = _front_table(html)
    assert "aaaa0001" in table and "aaaa0002" in table and "aaaa0005" not in table
    assert "breaks a constraint (never on the front)" in html and "1 broke a constraint" in html
    assert "latency_ms 5 breaks latency_ms&gt;=8" in html  # its hover says which, and by how much
    assert "+: failed" not in html and "×: breaks a constraint." in html  # no trial failed: no + to name
    from tuner.review import findings

    assert findings.of(experiment).best_title() == "The best trial by loss that meets every constraint"
    assert findings.of(_experiment(tmp_path / "free")).best_title() == "The best trial by loss"


def test_a_failed_trial_is_never_on_the_front_as_it_is_never_the_best(tmp_path):
    """A trial that crashed after a good first epoch was the whole front, while the best by loss was another."""
    experiment = _experiment(tmp_path)
    state = tmp_path / "exp" / "experiment_state-2026-01-01_00-00-00.json"
    saved = json.loads(state.read_text())
    for entry in saved["trial_data"]:
        trial = json.loads(entry[0])
        if trial["trial_id"] == "aaaa0005":
            entry[0] = json.dumps({**trial, "status": "ERROR"})
    state.write_text(json.dumps(saved))
    experiment = load(str(experiment.path), running=False)
    assert {p.trial.trial_id for p in front.front(experiment)} == {"aaaa0001", "aaaa0002"}
    assert "1 failed, and a config that crashed is never on it" in front_panel.section(experiment)
    assert "+: failed, so never on the front." in front_panel.section(experiment)  # drawn +, and said so
    failed = [p for p in front.points(experiment) if p.trial.trial_id == "aaaa0005"]
    assert [front_panel.group(p, set()) for p in failed] == [front_panel.FAILED]  # not "dominated": it is not

    from types import SimpleNamespace

    from tuner.launch.watching.front_marks import marks
    from tuner.objectives import Objective

    view = marks((Objective("loss", "min"), Objective("latency_ms", "min")))
    ran = SimpleNamespace(status="TERMINATED", last_result={"loss": 1.5, "latency_ms": 5.0})
    assert view.point(ran, lambda t: False) == [1.5, 5.0]
    assert view.point(SimpleNamespace(**{**vars(ran), "status": "ERROR"}), lambda t: False) is None


def test_an_exported_trial_whose_last_epoch_went_nan_keeps_the_values_of_the_epoch_exported(tmp_path):
    from tuner.review.export import best_export

    experiment = _experiment(tmp_path)
    progress = next((tmp_path / "exp").glob("aaaa0001_*")) / "progress.csv"
    lines = progress.read_text().splitlines()
    lines[-1] = "nan" + lines[-1][lines[-1].index(","):]
    progress.write_text("\n".join(lines) + "\n")
    out = best_export(load(str(experiment.path), running=False), pick="aaaa0001")
    assert out["epoch"] == 1 and out["values"] == {"loss": 1.2, "latency_ms": 30.0} and not out["on_front"]


def test_three_objectives_draw_parallel_coordinates_with_the_front_highlighted(tmp_path):
    experiment = _experiment(tmp_path, objectives=("loss:min", "latency_ms:min", "params_k:min"))
    best = {p.trial.trial_id for p in front.front(experiment)}
    assert best == {"aaaa0001", "aaaa0002", "aaaa0005"}
    fig = front_panel.parallel(experiment.config.objectives, front.points(experiment), best)
    highlighted = {_trial(t.hovertext) for t in fig.data if t.name == "on the Pareto front"}
    assert highlighted == best
    dotted = {_trial(t.hovertext) for t in fig.data if t.line.dash == "dot"}
    assert dotted == {"aaaa0004", "aaaa0005"}
    assert "params_k (lower is better)" in front_panel.section(experiment)


def test_the_page_puts_the_front_first_only_with_several_objectives(tmp_path):
    page = build(_experiment(tmp_path / "two"))
    assert page.index('<section id="front">') < page.index('<section id="best">')
    assert "The Pareto front (loss, latency_ms)" in page
    single = build(_experiment(tmp_path / "one", objectives=("loss:min",)))
    assert 'id="front"' not in single and "Pareto" not in single


def test_the_front_printed_at_the_end_shows_configs_to_four_significant_figures():
    out = {
        "objectives": [{"metric": "loss", "mode": "min"}, {"metric": "ms", "mode": "min"}],
        "constraints": [],
        "front": [{"trial_id": "a1", "loss": 0.123456, "ms": 12.3456, "epoch": 4,
                   "config": {"lr": 0.003860866271460547, "model": {"width": 32}, "opt": "sgd"}}],
        "infeasible": 0,
        "hypervolume": 1.5,
        "reference": {"loss": 1.1, "ms": 50.0},
    }  # fmt: skip
    lines = front.format_front(out, "/exp")
    assert '  a1  loss 0.1235, ms 12.35  (epoch 4)  lr=0.003861, model/width=32, opt="sgd"' in lines
    # its scale: 1.5 of the box (1.1 - 0.1235) x (50 - 12.35) = 36.77 between the front's best and the reference
    assert lines[-1] == (
        "hypervolume 1.5 (the region the front dominates up to loss 1.1, ms 50, 4% of the box from the front's "
        "best on each objective to there); saved /exp/pareto.json"
    )


def test_a_rung_ranked_by_fronts_gives_each_trial_its_place_and_a_stopped_one_its_fates_reason():
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.folder.fates import RungRecord
    from tuner.review.report.scheduler_panel import reason
    from tuner.settings import build_config

    config = build_config({"space": "x", "scheduler": "asha", "metric": "loss,ms", "mode": "min,min"})
    went: RungRecord = {"rung": 2, "epoch": 2, "value": 0.5, "values": {"loss": 0.5, "ms": 10.0}, "place": 1,
                        "of": 4, "kept": True, "arrived": 3}  # fmt: skip
    stopped: RungRecord = {"rung": 2, "epoch": 2, "value": 1.17, "values": {"loss": 1.17, "ms": 61.0}, "place": 4,
                           "of": 4, "kept": False, "arrived": 2}  # fmt: skip
    trials = [
        TrialRecord("a", "", "TERMINATED", {}, rungs=[went]),
        TrialRecord(
            "b",
            "",
            "TERMINATED",
            {},
            fate="stopped early by ASHA at epoch 2: dominated by 2 trials at the epoch-2 rung",
            rungs=[stopped],
        ),  # fmt: skip
    ]
    record = ExperimentRecord("/exp", config, trials)
    assert (
        reason({**went, "trial": "a"}, record)
        == "went on: loss 0.5, ms 10: ranked 1 of 4 by fronts; the best 2 go on"
    )
    assert reason({**stopped, "trial": "b"}, record) == (
        "stopped: loss 1.17, ms 61: ranked 4 of 4 by fronts; only the best 2 go on "
        "(dominated by 2 trials at the epoch-2 rung)"
    )


def test_a_stopped_trials_mark_and_cutoff_sit_exactly_on_its_epoch_and_its_hover_tells_it_apart():
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.review.report.curves import curves
    from tuner.settings import SweepConfig

    def rows(*losses):
        return [{"training_iteration": str(i), "loss": str(v)} for i, v in enumerate(losses, 1)]

    stop = {"rung": 1, "epoch": 1, "value": 0.9, "cutoff": 0.6, "kept": False, "arrived": 2}
    trials = [TrialRecord("best", "", "TERMINATED", {}, rows(0.5, 0.3), fate="ran to max epochs (2)")]
    trials += [TrialRecord(f"s{i}", "", "TERMINATED", {}, rows(0.9), fate="stopped early by ASHA at epoch 1: loss "
                           "0.9 > rung cutoff 0.6", rungs=[stop]) for i in range(3)]  # fmt: skip
    fig = curves(ExperimentRecord("/exp", SweepConfig(space="x", scheduler="asha", max_epochs=2), trials))
    stopped = [t for t in fig.data if t.name == "stopped early"]
    assert len(stopped) == 3 and all(list(t.x) == [1.0] for t in stopped)  # the epoch, not beside it
    assert sorted(t.hovertext.split(":")[0] for t in stopped) == ["s0", "s1", "s2"]  # each named in its hover
    assert [t.text[-1] for t in stopped if t.text is not None] == [
        "s0"
    ]  # one label where three would overlap
    (cutoffs,) = [t for t in fig.data if t.name == "cutoff that stopped it"]
    assert list(cutoffs.x) == [1, 1, 1] and list(cutoffs.y) == [0.6, 0.6, 0.6]


def test_the_trial_table_ranks_with_hash_and_marks_the_front_with_two_objectives(tmp_path):
    from tuner.review.report.page import _fates_table, fate_rows

    rows = fate_rows(_experiment(tmp_path))
    assert [row["#"] for row in rows] == [1, 2, 3, 4, 5]  # a rank, best loss first
    assert [row["trial"] for row in rows[:2]] == ["aaaa0001", "aaaa0003"] and rows[0]["made"] == 1
    on = {row["trial"] for row in rows if row["on front"] == "●"}
    assert on == {"aaaa0001", "aaaa0002", "aaaa0005"}  # as the front's table and tuner results say
    assert "latency_ms at best epoch" in rows[0]  # the other objective beside the first
    table = _fates_table(_experiment(tmp_path / "again"))
    assert "<th class=fate>fate</th>" in table and "<td class=fate>stopped early by ASHA" in table


def test_compare_ranks_sweeps_of_several_objectives_with_no_feasible_trial_without_a_hypervolume_to_share(tmp_path):
    """Every trial breaks the bound in both sweeps: no front, no shared reference; each row still says so."""
    from tuner.review import compare

    one, other = (_experiment(tmp_path / name, constraints=["latency_ms>=1000"]) for name in ("one", "other"))
    assert front.shared_reference([one, other]) is None
    rows = compare.summary_rows([one, other])
    assert [(r["front"], r["hypervolume"]) for r in rows] == [(0, 0.0), (0, 0.0)]


def test_compare_puts_two_objective_sweeps_fronts_together_measured_up_to_one_reference(tmp_path):
    from tuner.errors import UsageError
    from tuner.review import compare

    one, other = _experiment(tmp_path / "one"), _experiment(tmp_path / "other")
    # the other sweep's trials all twice as slow: its front is worse on latency, its hypervolume smaller
    for trial in other.trials:
        for row in trial.rows:
            row["latency_ms"] = str(2 * float(row["latency_ms"]))
    ref = front.shared_reference([one, other])
    assert ref == front.reference(one, front.points(one) + front.points(other))  # pooled: one box for both
    named = front.shared_reference_named([one, other])  # as the command says it, each in its own sign
    assert list(named) == [o.name for o in one.config.objectives]
    assert [named[o.name] for o in one.config.objectives] == pytest.approx([o.as_min(v) for o, v in zip(one.config.objectives, ref, strict=True)])
    rows = compare.summary_rows([other, one])
    assert [r["front"] for r in rows] == [3, 3]
    assert rows[0]["hypervolume"] > rows[1]["hypervolume"]  # the larger hypervolume first
    assert rows[0]["hypervolume"] == float(f"{front.hypervolume(one, ref=ref):.4g}")
    out = compare.plot([one, other], tmp_path / "c.png")
    assert out.stat().st_size > 10_000
    from tuner.review.board.charts import fronts_chart

    fronts, volumes = (fronts_chart([one, other], ["one", "other"]).data[i::2] for i in (0, 1))  # the dashboard's
    assert [t.name for t in fronts] == ["one (asha, optuna)", "other (asha, optuna)"]
    assert sorted(fronts[0].text) == ["aaaa0001", "aaaa0002", "aaaa0005"]
    assert list(fronts[1].y) == [2 * y for y in fronts[0].y]  # twice as slow
    assert volumes[0].y[-1] == pytest.approx(front.hypervolume(one, ref=ref)) and volumes[1].y[-1] < volumes[0].y[-1]
    single = _experiment(tmp_path / "single", objectives=("loss:min",))
    with pytest.raises(UsageError, match="optimise different things .*compare sweeps of the same objectives"):
        compare.check_comparable([one, single])


def test_importance_is_given_for_each_objective_and_says_which_way_a_parameter_moves_it(tmp_path):
    from tuner.review.report.page import _importance_section

    section = _importance_section(_experiment(tmp_path))
    assert "<h3>For loss (min)</h3>" in section and "<h3>For latency_ms (min)</h3>" in section
    # wider models are slower: said for the latency, where it holds, not advised as 'better' for the loss
    readable = section.encode().decode("unicode_escape")  # plotly writes its labels JSON-escaped
    assert r"higher width \u2192 higher latency_ms (\u03c1 +0.90)" in section, readable
    assert "better" not in section and "worse" not in section  # they would read as the metric's direction
    assert "share of the variance of latency_ms" in section and "at epoch" not in section


def test_with_two_objectives_each_rung_is_drawn_on_both_and_a_stopped_trial_is_linked_to_who_dominated_it():
    from tuner.experiment import ExperimentRecord
    from tuner.review.report.scheduler_panel import dominators, rung_scatter
    from tuner.settings import build_config

    config = build_config({"space": "x", "scheduler": "asha", "metric": "loss,ms", "mode": "min,min"})
    record = ExperimentRecord("/exp", config, [])

    def event(trial, arrived, loss, ms, kept):
        return {"trial": trial, "rung": 1, "epoch": 1, "value": loss, "values": {"loss": loss, "ms": ms},
                "arrived": arrived, "kept": kept, "place": 1, "of": arrived + 1}  # fmt: skip

    events = [event("a", 0, 0.5, 10.0, True), event("b", 1, 0.4, 30.0, True), event("c", 2, 0.6, 40.0, False),
              event("d", 3, 0.3, 50.0, True)]  # fmt: skip
    assert [e["trial"] for e in dominators(events[2], events, record)] == ["a", "b"]  # d came after it
    fig = rung_scatter(record, events)
    links = [t for t in fig.data if t.mode == "lines"]
    assert sorted((t.x[1], t.y[1]) for t in links) == [(0.4, 30.0), (0.5, 10.0)]
    stopped = next(t for t in fig.data if t.name == "stopped here")
    assert list(stopped.text) == ["c"] and (stopped.x[0], stopped.y[0]) == (0.6, 40.0)
    assert (
        fig.layout.xaxis.title.text == "loss at the rung" and fig.layout.yaxis.title.text == "ms at the rung"
    )
    # a result that broke a bound dominates no one, as the rule itself ranks (it drew a line from c to it)
    events[0]["violation"] = 2.0
    assert [e["trial"] for e in dominators(events[2], events, record)] == ["b"]


def test_every_comparison_is_listed_one_whose_value_was_nan_too():
    from tuner.experiment import ExperimentRecord
    from tuner.review.report.scheduler_panel import _events, _reasons_table
    from tuner.settings import build_config

    record = ExperimentRecord("/exp", build_config({"space": "x", "scheduler": "asha"}), [])
    events = [{"trial": "a", "rung": 1, "epoch": 1, "value": 0.5, "cutoff": None, "arrived": 0, "kept": True},
              {"trial": "b", "rung": 2, "epoch": 2, "value": None, "cutoff": 0.4, "arrived": 0, "kept": False}]  # fmt: skip
    table = _reasons_table(record, events)
    assert "<td>2</td><td>b</td><td>not a number</td><td>stopped: loss was not a number here (ranked last)" in table
    assert _events(record) == []


def test_parallel_coordinates_give_the_second_objective_an_axis(tmp_path):
    from tuner.review.report.params import parallel

    experiment = _experiment(tmp_path)
    fig = parallel(experiment, [t for t in experiment.trials if t.rows])
    labels = [a.text for a in fig.layout.annotations]
    assert "<b>best loss (any epoch)</b>" in labels and "<b>last latency_ms (lower is better)</b>" in labels


def test_a_parameter_plot_names_each_fates_points_and_marks_a_stopped_trials_best_as_an_early_one(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tuner.review.plots import _against_parameter

    experiment = _experiment(tmp_path)
    fig = _against_parameter(plt, experiment, "lr", experiment.best_trial())
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["completed", "stopped early (its best before it stopped)", "best trial (aaaa0001)"]
    plt.close(fig)


def test_the_best_so_far_passes_by_a_trial_that_breaks_a_constraint(tmp_path):
    """A trial that breaks a constraint is never the best: its own best is drawn, the best so far is not made of it."""
    from tuner.review.report.curves import history
    from tuner.review.report.page import _scored

    experiment = _experiment(tmp_path, objectives=("loss:min",), constraints=["latency_ms>=35"])
    assert [t.trial_id for t in experiment.trials if not experiment.breaks(t)] == ["aaaa0003", "aaaa0004"]
    from tuner.review import findings  # the report's title over the best trial says it meets the bounds

    assert findings.of(experiment).best_title() == "The best trial that meets every constraint"
    assert findings.of(_experiment(tmp_path / "free", objectives=("loss:min",))).best_title() == "The best trial"
    figure = history(experiment, _scored(experiment))
    lines = [list(trace.y) for trace in figure.data if trace.name == "best so far"]
    assert len(lines) == 2  # against trials and against wall time
    for line in lines:  # aaaa0001's 0.5 is the lowest loss, but it breaks the bound: 0.9 (aaaa0003) is the best
        assert min(y for y in line if y is not None) == 0.9, line
    # the trials that break it are crosses of their own, named in the legend
    crosses = next(t for t in figure.data if t.name == "breaks a constraint (never the best)")
    assert crosses.marker.symbol == "x" and 0.5 in crosses.y and 0.9 not in crosses.y
    # and `tuner plot` draws the same line
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tuner.review.plots import _best_so_far

    fig = _best_so_far(plt, experiment)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "each trial's best", "breaks a constraint (never the best)", "best so far"
    ]
    drawn = [y for y in ax.lines[0].get_ydata() if y == y]  # NaN where no trial had counted yet
    assert min(drawn) == 0.9, drawn
    plt.close(fig)
    # with no trial within the bound there is no line to name, and the figure says why
    none = _experiment(tmp_path / "none", objectives=("loss:min",), constraints=["latency_ms>=1000"])
    fig = _best_so_far(plt, none)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["breaks a constraint (never the best)"]
    assert [t.get_text() for t in fig.axes[0].texts] == ["no trial within the constraints: no best"]
    plt.close(fig)


def test_compare_passes_by_trials_that_break_a_constraint_and_names_a_sweep_with_none_within(tmp_path):
    """compare's best so far took an infeasible trial's loss as the best, a sweep with none within its bounds drew
    nothing and said nothing, and the right plot's axis label ran into the left plot."""
    from tuner.review.compare_figures import best_so_far

    some = _experiment(tmp_path / "some", objectives=("loss:min",), constraints=["latency_ms>=35"])
    none = _experiment(tmp_path / "none", objectives=("loss:min",), constraints=["latency_ms>=1000"])
    fig = best_so_far([some, none])
    by_trial, by_epoch = fig.axes
    for ax in (by_trial, by_epoch):
        drawn = [y for y in ax.lines[0].get_ydata() if y == y]  # NaN before the first trial within bounds
        assert min(drawn) == 0.9, drawn  # aaaa0001's 0.5 breaks the bound
        assert all(y != y for y in ax.lines[1].get_ydata())
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[1].endswith(": no trial within its constraints") and "no trial" not in labels[0]
    assert by_trial.get_xlim()[0] < 1 and fig.get_layout_engine() is not None
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_when_every_trial_breaks_a_constraint_export_says_so_and_the_front_has_no_hypervolume_line(tmp_path):
    from tuner.errors import UsageError
    from tuner.review.export import best_export

    experiment = _experiment(tmp_path, constraints=["latency_ms>=100"])
    with pytest.raises(UsageError, match=r"every trial that reported 'loss' broke a constraint \(latency_ms>=100\)"):
        best_export(experiment)
    lines = front.format_front(front.write(experiment), str(experiment.path))
    assert not any(line.startswith("hypervolume") for line in lines), lines


def test_the_trade_off_figures_note_names_the_failed_trials_marker_only_where_one_failed():
    """The × of a trial that breaks a constraint was read as the 'cross' the note gave failed trials."""
    from tuner.objectives import Objective
    from tuner.review.report.front_panel import scatter_note

    objectives = (Objective("loss", "min"), Objective("latency_ms", "min"))
    assert scatter_note(objectives, failed=True).endswith("Faded: dominated. +: failed, so never on the front.")
    assert "failed" not in scatter_note(objectives) and "cross" not in scatter_note(objectives, failed=True)


def test_a_replay_of_several_objectives_says_which_of_the_front_it_would_have_stopped(tmp_path):
    """The best trial by the first objective can survive while the front does not: the answer says both."""
    from tuner.replay.whatif import replay_experiment
    from tuner.review.replays import WhatIf, describe

    whatif = replay_experiment(_experiment(tmp_path), "asha")
    assert (whatif.front, whatif.front_lost) == (["aaaa0001", "aaaa0002", "aaaa0005"], ["aaaa0002"])
    said = describe(whatif, "asha")
    assert "  Pareto front: 2 of its 3 trial(s) kept; aaaa0002 would have stopped earlier (below)" in said
    assert "  best trial: kept (aaaa0001, loss 0.5 at epoch 2)" in said
    one = WhatIf(**{**whatif.__dict__, "front": [], "front_lost": []})  # one objective: no front to keep
    assert not any(line.startswith("  Pareto front") for line in describe(one, "asha"))
