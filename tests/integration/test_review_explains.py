"""The review explains the sweep: fates, TensorBoard, the HTML report, plots, compare, growing a sweep.

Instant trials on a real Ray (fast tier), except the report's check in a real headless Chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.instant import instant_space
from tuner import experiment


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """Sweeps of the instant space under ASHA, the median rule, HyperBand and PBT, run once here."""
    from tuner.cli import main

    root = tmp_path_factory.mktemp("explained")
    space = instant_space(root)
    runs = {"asha": ("optuna", 8), "median": ("random", 6), "hyperband": ("random", 12), "pbt": ("random", 4)}
    for scheduler, (searcher, samples) in runs.items():
        try:
            main(["sweep", "--space", str(space), "--scheduler", scheduler, "--searcher", searcher, "--num-samples",
                  str(samples), "--max-epochs", "6", "--storage-path", str(root), "--name", scheduler])  # fmt: skip
        except SystemExit as exc:
            assert exc.code == 0, scheduler
    return root


def _fates(folder) -> dict[str, str]:
    return {t.trial_id: t.fate for t in experiment.load(str(folder)).trials}


def test_every_trial_has_a_fate_that_says_why_it_ended(swept):
    asha = experiment.load(str(swept / "asha"))
    for trial in asha.trials:
        if trial.epochs == 6:
            assert trial.fate == "ran to max epochs (6)"
        else:
            match = re.fullmatch(
                r"stopped early by ASHA at epoch (\d+): loss ([\d.]+) > rung cutoff ([\d.]+)", trial.fate
            )
            assert match, trial.fate
            assert int(match[1]) == trial.epochs and float(match[2]) > float(match[3])
            assert float(match[2]) == pytest.approx(trial.last("loss"), rel=1e-3)
    assert any(t.fate.startswith("stopped early") for t in asha.trials)
    stopped = [f for f in _fates(swept / "median").values() if f.startswith("stopped early")]
    assert all(re.match(r"stopped early by the median rule at epoch \d+: best loss [\d.]+ worse than the median", f)
               for f in stopped), stopped  # fmt: skip
    hyperband = [f for f in _fates(swept / "hyperband").values() if f.startswith("stopped early")]
    assert hyperband and all(re.match(r"stopped early by HyperBand at epoch \d+: loss [\d.]+ not among the best \d+ of \d+",
                                      f) for f in hyperband), hyperband  # fmt: skip
    pbt = " ".join(_fates(swept / "pbt").values())
    assert re.search(
        r"perturbed by PBT at epoch \d+: continued from trial \w+'s epoch-\d+ checkpoint with ", pbt
    ), pbt


def test_results_and_the_summary_show_fates_and_one_ranking(run_cli, swept):
    table = run_cli("results", swept / "asha")
    assert "ranked by each trial's best loss, lowest first" in table.out.splitlines()[0]
    assert table.out.splitlines()[1].split()[-1] == "fate"
    rows = json.loads(run_cli("results", swept / "asha", "--format", "json").out)
    assert all(row["fate"] for row in rows)
    assert [row["best_loss"] for row in rows] == sorted(row["best_loss"] for row in rows)
    csv_head = run_cli("results", swept / "asha", "--format", "csv").out.splitlines()[0]
    assert csv_head.endswith(",fate")
    best = json.loads((swept / "asha" / "best_config.json").read_text())
    assert best["best_value"] == rows[0]["best_loss"] and best["best_trial"] == rows[0]["trial_id"]
    assert best["fates"] and best["best_fate"] == rows[0]["fate"]


def test_tensorboard_holds_the_space_and_the_trainables_metrics_only(swept):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import api_pb2, metadata

    folder = swept / "asha"
    stopped = {t.path for t in experiment.load(str(folder)).trials if t.fate.startswith("stopped early")}
    for run in (p for p in folder.iterdir() if p.is_dir() and list(p.glob("events.out.tfevents.*"))):
        acc = EventAccumulator(str(run)).Reload()
        assert set(acc.Tags()["scalars"]) == {"loss", "accuracy", "best_loss"}, acc.Tags()[
            "scalars"
        ]  # not "epoch"
        steps = [e.step for e in acc.Scalars("loss")]
        assert steps == list(range(1, len(steps) + 1)), "epochs are the steps"
        content = acc.PluginTagToContent("hparams")
        start = metadata.parse_session_start_info_plugin_data(content[metadata.SESSION_START_INFO_TAG])
        assert set(start.hparams) == {"width", "lr", "batch", "fate"}
        assert (
            start.hparams["batch"].number_value in (8, 16, 32)
            and float(start.hparams["batch"].number_value).is_integer()
        )
        info = metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG])
        discrete = {h.name: [v.number_value or v.string_value for v in h.domain_discrete.values]
                    for h in info.hparam_infos if h.HasField("domain_discrete")}  # fmt: skip
        assert discrete["batch"] == [8, 16, 32] and "stopped early" in discrete["fate"]
        end = metadata.parse_session_end_info_plugin_data(content[metadata.SESSION_END_INFO_TAG])
        expected = api_pb2.STATUS_UNKNOWN if str(run) in stopped else api_pb2.STATUS_SUCCESS
        assert end.status == expected, run.name
        assert "fate/text_summary" in acc.Tags()["tensors"]


def test_the_report_is_one_html_file_with_all_its_parts(run_cli, swept, tmp_path):
    out = tmp_path / "report.html"
    result = run_cli("report", swept / "asha", "--out", out)
    assert result.code == 0, result.err
    page = out.read_text()
    for part in ("best", "scheduler", "history", "curves", "parallel", "importance", "fates"):
        assert f'<section id="{part}">' in page
    assert "fANOVA" in page and "stopped early by ASHA" in page
    assert "<script src=" not in page and "https://" not in page.split("</script>")[-1], "nothing to fetch"
    default = run_cli("report", swept / "asha")
    assert default.code == 0 and (swept / "asha" / "report.html").is_file()


@pytest.mark.slow  # a headless browser
def test_the_report_renders_in_a_real_browser_without_errors(run_cli, swept, tmp_path, open_report):
    page = tmp_path / "report.html"
    assert run_cli("report", swept / "asha", "--out", page).code == 0
    tab, errors = open_report(page, width=1300, charts=6)  # every chart drawn
    assert not errors, errors
    shot = tab.screenshot(full_page=True)
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(shot)).convert("RGB").resize((130, 400))
    assert len(set(image.getdata())) > 50, "the screenshot is not blank"
    legends = set(tab.locator(".legendtext").all_text_contents())
    for legend in ("completed", "stopped early", "best trial", "went on", "stopped here", "the rung's cutoff"):
        assert legend in legends, (legend, legends)
    assert tab.get_by_text("WebGL is not supported").count() == 0, "no chart needs WebGL (headless Chromium has none)"


def test_plots_are_titled_per_metric_with_the_best_marked(run_cli, swept, tmp_path):
    result = run_cli("plot", swept / "asha", "--out", tmp_path)
    assert result.code == 0, result.err
    names = {line.rsplit("/", 1)[-1] for line in result.out.splitlines()}
    assert {"loss_per_epoch.png", "accuracy_per_epoch.png", "best_loss_so_far.png", "width_vs_best_loss.png",
            "lr_vs_best_loss.png", "batch_vs_best_loss.png"} <= names  # fmt: skip
    assert "epoch_per_epoch.png" not in names
    only = run_cli("plot", swept / "asha", "--out", tmp_path / "one", "--metric", "accuracy")
    assert [line.rsplit("/", 1)[-1] for line in only.out.splitlines()][0] == "accuracy_per_epoch.png"
    bad = run_cli("plot", swept / "asha", "--metric", "val_acc")
    assert bad.code == 2 and "no trial reported it" in bad.err and "accuracy" in bad.err


def test_power_of_two_values_get_power_of_two_ticks():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tuner.review.plots import _scale_axis

    fig, ax = plt.subplots()
    ax.scatter([4, 16, 256], [1, 2, 3])
    _scale_axis(ax, [4, 16, 256])
    fig.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16", "32", "64", "128", "256"]
    plt.close(fig)


def test_compare_puts_sweeps_of_one_metric_side_by_side(run_cli, swept, tmp_path):
    result = run_cli(
        "compare", swept / "asha", swept / "median", swept / "hyperband", "--out", tmp_path / "c.png"
    )
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split()[:4] == ["experiment", "scheduler", "searcher", "trials"]
    assert {line.split()[0] for line in lines[1:4]} == {"asha", "median", "hyperband"}
    assert (tmp_path / "c.png").stat().st_size > 10_000
    one = run_cli("compare", swept / "asha")
    assert one.code == 2 and "at least two" in one.err


@pytest.mark.slow  # growing; the fast tier resumes
def test_a_finished_sweep_grows_with_the_model_keeping_its_observations(run_cli, tmp_path):
    space = instant_space(tmp_path)
    first = run_cli("sweep", "--space", space, "--searcher", "optuna", "--num-samples", "6", "--max-epochs", "3",
                    "--storage-path", tmp_path, "--name", "grow")  # fmt: skip
    assert first.code == 0, first.err[-2000:]
    folder = tmp_path / "grow"
    before = {t.trial_id: t for t in experiment.load(str(folder)).trials}
    files = {p: p.read_bytes() for t in before.values() for p in Path(t.path).rglob("*") if p.is_file()}
    result = run_cli("resume", folder, "--num-samples", "9")
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "growing the sweep to 9 trials: 3 more" in result.out
    after = experiment.load(str(folder))
    assert len(after.trials) == 9 and after.config.num_samples == 9
    # (Ray copies its staged experiment back over the folder on every run: same bytes, new times)
    assert all(p.read_bytes() == content for p, content in files.items()), "the first six are untouched"
    configs = [json.dumps(t.config, sort_keys=True) for t in after.trials]
    assert len(set(configs)) == 9
    smaller = run_cli("resume", folder, "--num-samples", "5")
    assert smaller.code == 2 and "already has 9" in smaller.err
    none = run_cli("resume", folder, "--num-samples", "0")  # worded as tuner sweep words it
    assert none.code == 2 and none.err.strip().splitlines() == ["tuner: error: --num-samples must be at least 1, got 0"]
    assert len(experiment.load(str(folder)).trials) == 9


def test_asha_writes_down_every_rung_comparison_and_the_panel_explains_them(swept):
    from tuner.review.report.scheduler_panel import reason, savings_line, settings_lines

    asha = experiment.load(str(swept / "asha"))
    events = [(t, e) for t in asha.trials for e in t.rungs]
    assert events and all(e["rung"] in (1, 2, 4) for _, e in events)
    for trial, event in events:
        text = reason(event, asha)
        if event["cutoff"] is None:
            assert event["arrived"] == 0 and text == f"first at rung {event['rung']}: no cutoff yet"
        elif event["kept"]:
            assert event["value"] <= event["cutoff"] and text.startswith("in the best half: ")
        else:
            assert event["value"] > event["cutoff"] and text.startswith("stopped: ")
            assert trial.fate.startswith(f"stopped early by ASHA at epoch {event['epoch']}")
    ran = sum(t.epochs for t in asha.trials)
    cut = sum(6 - t.epochs for t in asha.trials if t.fate.startswith("stopped early by ASHA"))
    assert savings_line(asha).startswith(f"Trials ran {ran} epochs, and would have run {ran + cut} had the scheduler "
                                         f"stopped none (each trial it stopped run on to max epochs): early stopping saved {cut} epochs")  # fmt: skip
    assert settings_lines(asha)[0].startswith("ASHA: rungs at epoch 1, 2, 4 (max 6)")
    hyperband = experiment.load(str(swept / "hyperband"))
    rounds = [e for t in hyperband.trials for e in t.rungs]
    assert rounds and all({"bracket", "keep", "of"} <= set(e) for e in rounds)


@pytest.mark.slow  # a sweep of its own
def test_a_loop_shorter_than_max_epochs_is_counted_alike_in_every_view(run_cli, tmp_path):
    """A trainable whose own loop ends at epoch 3 under --max-epochs 6, with the defaults (freeze-thaw): its
    trials are no early stops, the sweep plans by 3 epochs once it learns so, and every view counts alike."""
    import tuner
    from tuner.folder.fates import kind
    from tuner.review.report.scheduler_panel import savings_line, settings_lines
    from tuner.review.results import fates_line

    space = instant_space(tmp_path, loop=3)
    result = run_cli("sweep", "--space", space, "--num-samples", "8", "--max-epochs", "6",
                     "--storage-path", tmp_path, "--name", "short")  # fmt: skip
    assert result.code == 0, result.err[-2000:]
    folder = tmp_path / "short"
    record = experiment.load(str(folder))
    looped = [t for t in record.trials if t.fate == "ended by its own loop at epoch 3"]
    cut = [t for t in record.trials if t.fate.startswith("stopped early by freeze-thaw")]
    assert looped and len(looped) + len(cut) == 8, [t.fate for t in record.trials]
    assert record.horizon == 3
    notice = (
        "ended by its own loop at epoch 3, before --max-epochs 6, and no trial has gone further: the sweep now takes "
        "a trial to end at epoch 3"
    )
    assert result.out.count(notice) == 1
    assert "freeze-thaw predicts each trial's loss at epoch 3" in result.out
    counts = {"ended by its own loop": len(looped), "stopped early by freeze-thaw": len(cut)}
    counts = {fate: n for fate, n in counts.items() if n}
    assert record.fate_counts() == counts
    # the live table's last count, the summary, tuner results, tuner.load and the report's fates agree
    live = [line for line in result.out.splitlines() if line.startswith("Number of trials: ")][-1]
    states = {state: n for n, state in re.findall(r"(\d+) (stopped early|finished|errored|running)", live)}
    assert states == {"finished": str(len(looped)), **({"stopped early": str(len(cut))} if cut else {})}, live
    line = fates_line(record.fate_counts())  # most common first
    assert line in result.out and line in run_cli("results", folder).out.splitlines()[0]
    assert tuner.load(str(folder)).fates == counts
    assert sorted(kind(t.fate) for t in record.trials) == sorted(
        ["completed"] * len(looped) + ["stopped early"] * len(cut)
    )
    # the saving counts only what freeze-thaw cut, to the loop's end; the report is written and named
    saved = sum(3 - t.epochs for t in cut)
    assert f"(each trial it stopped run on to epoch 3, where the trainable's own loop ends): early stopping saved {saved} epochs" in (
        savings_line(record)
    )
    assert f"trials ended by their own loop before max epochs 6: {len(looped)} at epoch 3" in settings_lines(
        record
    )
    at_once = settings_lines(record)[-1]
    assert at_once.endswith(
        ("at most 2 running at once", "at most 1 running at once (the plan allowed 2)")
    ), at_once
    kept = json.loads((folder / "plan.json").read_text())  # kept as data, not words
    assert kept == {"trials_at_once": 2, "scales": {"lr": "log"}}, kept
    page = folder / "report.html"
    assert page.is_file() and f"report: {page} (written again by: tuner report {folder})" in result.out
    assert "ended by its own loop at epoch 3" in page.read_text()
    # a replay takes a curve that ends where the loop does as whole, not as one the sweep cut
    replayed = run_cli("replay", folder, "--scheduler", "asha")
    assert replayed.code == 0, replayed.err[-2000:]
    gone_on = " ".join(line for line in replayed.out.splitlines() if "would have gone on past" in line)
    assert not any(t.trial_id in gone_on for t in looped), gone_on


def test_the_reports_figures_speak_in_real_units(swept):
    from tuner.review.report.curves import curves
    from tuner.review.report.page import fate_rows
    from tuner.review.report.params import parallel

    asha = experiment.load(str(swept / "asha"))
    legend = [t.name for t in curves(asha).data if t.showlegend is not False]
    best = asha.best_trial()
    others_completed = any(t.epochs == 6 and t.trial_id != best.trial_id for t in asha.trials)
    expected = {"best trial", "stopped early", "cutoff that stopped it"} | (
        {"completed"} if others_completed else set()
    )
    assert expected <= set(legend), legend
    assert len(legend) == len(set(legend)), "one legend entry per fate"
    scored = [t for t in asha.ranked() if t.best("loss", "min") is not None]
    fig = parallel(asha, scored)
    labels = [a.text for a in fig.layout.annotations]
    assert (
        "<b>fate</b>" in labels and "<b>best loss (any epoch)</b>" in labels and "<b>lr (log)</b>" in labels
    )
    widths = {str(t.config["width"]) for t in scored}
    assert widths <= set(labels), "a choice's ticks are its values"
    rows = fate_rows(asha)
    assert "status" not in rows[0] and {"#", "made", "at epoch", "accuracy at best epoch", "fate"} <= set(
        rows[0]
    )
    assert [row["#"] for row in rows] == list(range(1, len(rows) + 1)), "# is the rank, best first"
    assert "on front" not in rows[0]  # one objective: no front


def test_hparams_have_types_and_the_best_metric_first(swept):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import metadata

    run = next(p for p in (swept / "asha").iterdir() if p.is_dir() and list(p.glob("events.out.tfevents.*")))
    content = EventAccumulator(str(run)).Reload().PluginTagToContent("hparams")
    info = metadata.parse_experiment_plugin_data(content[metadata.EXPERIMENT_TAG])
    domains = {h.name: h for h in info.hparam_infos}
    assert domains["lr"].HasField("domain_interval") and domains[
        "lr"
    ].domain_interval.min_value == pytest.approx(1e-4)
    assert [v.number_value for v in domains["width"].domain_discrete.values] == [4, 8, 16, 32]
    assert info.metric_infos[0].name.tag == "best_loss"


def test_a_live_page_reloads_itself_and_the_final_one_does_not(swept, tmp_path):
    from tuner.review.report import page_file

    copy = tmp_path / "asha"
    shutil.copytree(swept / "asha", copy)
    state = sorted(copy.glob("experiment_state-*.json"))[-1]
    data = json.loads(state.read_text())
    first = json.loads(data["trial_data"][0][0])
    data["trial_data"][0][0] = json.dumps({**first, "status": "RUNNING"})  # as the sweep sees it mid-run
    state.write_text(json.dumps(data))
    assert experiment.load(str(copy)).trials and any(
        t.fate.startswith("unfinished") for t in experiment.load(str(copy)).trials
    ), "no process holds it: unfinished"
    assert any(t.fate.startswith("running") for t in experiment.load(str(copy), running=True).trials)
    live = page_file.write(str(copy), refresh_s=30).read_text()
    assert "unfinished: the sweep stopped" not in live, "the sweep writing its live page is running"
    assert '<meta http-equiv="refresh" content="30">' in live and "Live: the sweep is running" in live
    final = page_file.write(str(copy)).read_text()
    assert "http-equiv" not in final and "Live:" not in final


def _niceness(pid: int) -> int:
    """A process's niceness, the 19th field of /proc/PID/stat (a finished child not yet reaped keeps it)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


@pytest.mark.slow  # waits on real time: a page built on a timer
def test_the_live_page_is_built_off_tunes_loop_and_never_after_the_final_one(swept, tmp_path, monkeypatch):
    from ray.tune.experiment import Trial

    from tuner.launch.watching import live_report
    from tuner.launch.wrap_up import final_report
    from tuner.review.report import page_file

    copy = tmp_path / "asha"
    shutil.copytree(swept / "asha", copy)
    page_file.write(
        str(copy)
    )  # the page's imports paid here, so that a build below takes what it takes mid-sweep
    (copy / "report.html").unlink()
    reported = Trial("__fake", stub=True)
    reported.update_last_result({"loss": 1.0, "training_iteration": 1})
    live = live_report.LiveReport(str(copy), every_s=0.3)
    time.sleep(0.1)  # its first page is due a third of the interval in
    live.on_step_end(0, [reported])
    # Tune's loop is back at once: a function trainable waits at its report until the loop takes it.
    assert live_report.building(str(copy)) and not (copy / "report.html").exists()
    child = live_report._building[str(copy)]
    assert child.pid != os.getpid()  # built apart: the driver's interpreter and memory stay the sweep's
    # and at a lower CPU priority: on busy cores the trials go first (read before anything reaps the child)
    deadline = time.monotonic() + 30
    while _niceness(child.pid) == os.nice(0) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _niceness(child.pid) == os.nice(0) + page_file.LIVE_NICENESS
    live.on_step_end(1, [reported])  # one build at a time
    assert live_report._building[str(copy)] is child
    live_report.settle(str(copy))
    assert '<meta http-equiv="refresh"' in (copy / "report.html").read_text()
    # the next page is due after the interval, or ten builds if longer: here one build (a child's imports, seconds)
    monkeypatch.setattr(live_report, "SHARE", 1.0)
    deadline = time.monotonic() + 60
    while not live_report.building(str(copy)) and time.monotonic() < deadline:
        live.on_step_end(2, [reported])  # a build in flight as the sweep ends
        time.sleep(0.05)
    assert live_report.building(str(copy))
    in_flight = live_report._building[str(copy)]
    # the final page stops the live build, which it replaces, and is written
    final_report(str(copy), experiment.load(str(copy)))
    assert in_flight.returncode is not None, "the live build was stopped, not waited for"
    assert not live_report.building(str(copy))
    assert "http-equiv" not in (copy / "report.html").read_text(), "the final page stays final"
    assert not list(copy.glob(".report.html*")), "no unfinished page left"

    # a sweep that ends while its first live page is being built still gets its final page
    (copy / "report.html").unlink()
    first = live_report.LiveReport(str(copy), every_s=0.03)
    time.sleep(0.02)
    first.on_step_end(0, [reported])
    assert live_report.building(str(copy)) and not (copy / "report.html").exists()
    final_report(str(copy), experiment.load(str(copy)))
    assert not live_report.building(str(copy)) and "http-equiv" not in (copy / "report.html").read_text()
