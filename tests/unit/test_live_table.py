"""The live table (tuner/launch/watching/live_table.py) on Ray's own Trial objects, fed results as Tune feeds them."""

from __future__ import annotations

import pickle
import re

import pytest

from tuner.launch.watching.live_table import BestSeen, LiveTable, SweepReporter
from tuner.launch.watching.reporting import build_reporter
from tuner.objectives import Constraint, Objective


def trial(trial_id: str, config: dict, *losses: float, status: str = "TERMINATED", **extra):
    from ray.tune.experiment import Trial

    t = Trial("train", config=config, trial_id=trial_id, stub=True)
    for epoch, loss in enumerate(losses, 1):
        t.update_last_result(
            {"loss": loss, "training_iteration": epoch, "node_ip": "10.0.0.1", "pid": 7, **extra}
        )
    t.set_status(status)
    return t


def rows(text: str) -> list[str]:
    """The table's rows (each trial's id is its first cell)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| trial "))
    return [line for line in lines[start + 2 :] if line.startswith("| ")]


def first_cells(text: str) -> list[str]:
    return [r.split()[1] for r in rows(text)]


def test_rows_are_ranked_by_each_trials_best_value_whatever_their_status():
    trials = [
        trial("a", {"x": 1}, 0.9, 0.8),
        trial("b", {"x": 2}, 0.3, 0.5),  # its best (0.3) beats a's, though its last (0.5) does not
        trial("c", {"x": 3}, 0.7, status="RUNNING"),
        trial("d", {"x": 4}, status="PENDING"),
    ]
    text = build_reporter("loss", "min", ["x"], max_epochs=4, stopped_label="ASHA").text(trials, False)
    assert first_cells(text) == ["b", "c", "a", "d"]  # d: no result yet; bare ids, as the review names trials
    assert "Number of trials: 4 (1 running, 1 pending, 2 stopped early)" in text
    assert "ASHA: 2 trial(s) stopped early so far" in text  # a and b ended before epoch 4; c still runs
    assert (
        "Best so far: trial b, loss 0.3 (trials ranked by their best loss, lowest first); parameters={'x': 2}"
        in text
    )
    header = next(line for line in text.splitlines() if line.startswith("| trial "))
    assert (
        " loss (last) " in header and " epoch " in header and " x " in header and " accuracy " not in header
    )
    assert [r.split("|")[2].strip() for r in rows(text)] == [
        "stopped early",
        "running",
        "stopped early",
        "pending",
    ]
    assert "10.0.0.1" not in text and " where " not in header  # one machine: where a trial runs says nothing


def test_a_trial_whose_loss_went_nan_is_ranked_by_the_best_value_it_reached_before():
    """Ray's own record of a trial's best keeps a NaN and then the next value, whatever came before: the table
    ranks by the results themselves, as the summary and the scheduler do."""
    table = build_reporter("loss", "min", ["x"], max_epochs=3)
    diverged = trial("diverged", {"x": 1}, 0.11, float("nan"), 0.9)
    steady = trial("steady", {"x": 2}, 0.7, 0.6, 0.5)
    watch = BestSeen(table)
    for t, losses in ((diverged, (0.11, float("nan"), 0.9)), (steady, (0.7, 0.6, 0.5))):
        for epoch, loss in enumerate(losses, 1):
            watch.on_trial_result(epoch, [diverged, steady], t, {"loss": loss, "training_iteration": epoch})
    text = table.text([diverged, steady], True)
    assert first_cells(text) == ["diverged", "steady"]
    assert "Best so far: trial diverged, loss 0.11 " in text


def test_a_trial_that_starts_over_is_ranked_by_its_new_run_alone():
    """A trial without checkpoints resumed after a signal starts over at epoch 1, and one continued from an older
    checkpoint reports its later epochs again: what it had reported past that epoch is gone (its rows say so, and
    so does tuner results), so neither this table's record nor Ray's own best of the trial counts it."""
    table = build_reporter("loss", "min", ["x"], max_epochs=3)
    restarted, steady = trial("restarted", {"x": 1}), trial("steady", {"x": 2}, 0.65)
    watch = BestSeen(table)

    def reports(*results: tuple[int, float]) -> None:
        for epoch, loss in results:  # as Tune hands each result to the trial, then to the callbacks
            result = {"loss": loss, "training_iteration": epoch}
            restarted.update_last_result(result)
            watch.on_trial_result(epoch, [restarted, steady], restarted, result)

    reports((1, 0.7), (2, 0.602), (1, 0.75), (2, 0.68))  # a SIGTERM, then a start over
    watch.on_trial_result(1, [restarted, steady], steady, {"loss": 0.65, "training_iteration": 1})
    assert restarted.metric_analysis["loss"]["min"] == pytest.approx(0.602)  # Ray's record keeps the lost run
    assert table.best(restarted) == pytest.approx(0.68) and table.best(steady) == pytest.approx(0.65)
    assert first_cells(table.text([restarted, steady], True)) == ["steady", "restarted"]
    reports((3, 0.5), (2, 0.66))  # continued from its epoch-1 checkpoint: its epochs 2 and 3 went
    assert table.best(restarted) == pytest.approx(0.66)


def test_a_trial_that_ran_every_epoch_is_finished_and_one_that_failed_errored():
    trials = [trial("a", {"x": 1}, 0.9, 0.8), trial("b", {"x": 2}, 0.5), trial("c", {"x": 3}, status="ERROR")]
    text = build_reporter("loss", "min", ["x"], max_epochs=2).text(trials, True)
    assert "Number of trials: 3 (1 stopped early, 1 finished, 1 errored)" in text
    assert [r.split("|")[2].strip() for r in rows(text)] == ["stopped early", "finished", "errored"]
    assert "TERMINATED" not in text and "ERROR " not in text


def test_where_a_trial_runs_is_shown_on_a_cluster_and_numbers_have_four_significant_figures():
    here = trial("a", {"lr": 0.003860866271460547}, 0.123456789)
    there = trial("b", {"lr": 0.1}, 0.5, node_ip="10.0.0.2", pid=9)
    text = build_reporter("loss", "min", ["lr"], max_epochs=1).text([here, there])
    header = next(line for line in text.splitlines() if line.startswith("| trial "))
    assert " where " in header and "10.0.0.1:7" in text and "10.0.0.2:9" in text
    assert "0.003861" in text and "0.1235" in text and "0.00386086" not in text and "0.123457" not in text


def test_a_maximised_metric_ranks_the_highest_first_and_the_count_uses_max_epochs():
    trials = [trial("a", {"x": 1}, 0.2, 0.4), trial("b", {"x": 2}, 0.9, 0.6)]
    text = build_reporter("loss", "max", ["x"], max_epochs=2, stopped_label="median rule").text(trials)
    assert first_cells(text) == ["b", "a"]
    assert "median rule: 0 trial(s) stopped early so far" in text
    assert "highest first" in text


def test_a_trial_that_breaks_a_constraint_is_never_the_best():
    cheap = trial("a", {"x": 1}, 0.5, mem=100)
    greedy = trial("b", {"x": 2}, 0.1, mem=9000)
    bound = Constraint.parse("mem<=4000")
    table = build_reporter("loss", "min", ["x"], 1, also=["mem"], constraints=[bound])
    text = table.text([cheap, greedy])
    assert "Best so far: trial a, loss 0.5" in text
    assert "(trials ranked by their best loss, lowest first, those that break a bound last)" in text
    assert first_cells(text) == ["a", "b"]
    # the table says why the better-looking b ranks below a
    assert [r.split("|")[3].strip() for r in rows(text)] == ["yes", "no"] and "meets bounds" in text
    assert f"Best so far: none yet that meets {bound}" in table.text([greedy])


def test_several_objectives_mark_the_front_in_the_table_and_name_its_trials():
    objectives = (Objective("loss", "min"), Objective("ms", "min"))
    trials = [
        trial("a", {"x": 1}, 0.5, ms=10),
        trial("b", {"x": 2}, 0.1, ms=50),
        trial("c", {"x": 3}, 0.6, ms=60),
    ]
    text = build_reporter("loss", "min", ["x"], 1, also=["ms"], objectives=objectives).text(trials)
    assert "Pareto front so far: 2 trial(s) on loss (min), ms (min), marked ● in the table: b, a" in text
    assert "best loss: trial b, 0.1" in text
    marks = {r.split("|")[1].strip(): r.split("|")[3].strip() for r in rows(text)}
    assert marks == {"a": "●", "b": "●", "c": ""}  # c: a beats it on both


def test_the_scheduler_lines_are_shown_as_the_scheduler_says_them_and_errors_are_counted():
    trials = [trial("a", {"x": 1}, 0.5), trial("b", {"x": 2}, status="ERROR")]
    text = build_reporter("loss", "min", ["x"], 1).text(trials, False, "rung cutoffs (loss at most this to go on): "
                                                        "epoch 1: 0.5\n", "Logical resource usage: 1.0/2 CPUs")  # fmt: skip
    assert "rung cutoffs (loss at most this to go on): epoch 1: 0.5" in text
    assert "Logical resource usage: 1.0/2 CPUs" in text
    assert "Errored trials: 1 (summarised at the end)" in text and "error.txt" not in text


def test_a_long_table_keeps_every_status_in_view_and_says_what_it_left_out():
    trials = [trial(f"t{i:02d}", {"x": i}, 1.0 - i / 100) for i in range(40)]
    trials += [trial("r1", {"x": 99}, 0.9, status="RUNNING"), trial("p1", {"x": 98}, status="PENDING")]
    table = LiveTable(
        metric="loss", mode="min", parameters=["x"], columns={"loss": "loss"}, max_epochs=1, max_rows=10
    )
    text = table.text(trials)
    shown = first_cells(text)
    assert len(shown) == 10 and shown[0] == "t39" and shown[-2:] == ["r1", "p1"]  # each state kept in view
    assert "... 32 more trials not shown (32 finished)" in text
    assert len(rows(table.text(trials, True))) == 42  # the last table shows every trial


def test_a_large_sweeps_last_table_is_bounded_too_and_counts_what_it_leaves_out():
    trials = [trial(f"t{i:04d}", {"x": i}, 1.0 - i / 10_000) for i in range(2_000)]
    table = LiveTable(
        metric="loss", mode="min", parameters=["x"], columns={"loss": "loss"}, max_epochs=1, max_rows=30
    )
    text = table.text(trials, True)
    assert len(rows(text)) == 30 and first_cells(text)[0] == "t1999"  # the best, never one line per trial
    assert "... 1970 more trials not shown (1970 finished)" in text
    assert "Number of trials: 2000 (2000 finished)" in text


def test_a_table_reads_the_trials_still_open_and_the_rows_it_shows_not_every_finished_trial_again():
    from ray.tune.experiment import Trial

    reads = {"results": 0}

    class Counted(Trial):  # Ray's own Trial, its last result read through a count
        @property
        def last_result(self):
            reads["results"] += 1
            return Trial.last_result.fget(self)

    def counted(trial_id, loss, status="TERMINATED"):
        t = Counted("train", config={"x": loss}, trial_id=trial_id, stub=True)
        t.update_last_result({"loss": loss, "training_iteration": 1, "node_ip": "10.0.0.1", "pid": 7})
        t.set_status(status)
        return t

    trials = [counted(f"t{i:04d}", (i * 7919 % 2_000) / 2_000) for i in range(2_000)]
    trials.append(counted("r1", 0.9, "RUNNING"))
    table = build_reporter("loss", "min", ["x"], max_epochs=2, stopped_label="ASHA")
    table.text(trials)  # the first table takes the finished trials in
    trials[-1].set_status("TERMINATED")  # one finishes, two come
    trials += [counted("r2", -1.0, "RUNNING"), counted("p1", 0.5, "PENDING")]
    reads["results"] = 0
    text = table.text(trials)
    assert (
        reads["results"] < 400
    )  # the rows shown and the three trials that changed; 2,003 trials read again before
    assert (
        text.split("\n", 2)[2]
        == build_reporter("loss", "min", ["x"], 2, stopped_label="ASHA").text(trials).split("\n", 2)[2]
    )  # as a table made afresh from the same trials says it (the clock aside)
    assert (
        first_cells(text)[0] == "r2"
        and "Number of trials: 2003 (1 running, 1 to continue, 2001 stopped early)" in text  # p1 has a result
    )
    assert "ASHA: 2001 trial(s) stopped early so far" in text


def test_a_trial_paused_at_its_last_epoch_reads_finished():
    """HyperBand holds a trial that reached max epochs paused until its bracket is done: it has nothing left to
    run, so neither "paused" nor "to continue" describes it."""
    trials = [trial("a", {"x": 1}, 0.5, 0.4, 0.3, status="PAUSED"), trial("b", {"x": 2}, 0.6, status="PAUSED"),
              trial("c", {"x": 3}, 0.5, 0.4, 0.35, status="PENDING")]  # fmt: skip
    text = build_reporter("loss", "min", ["x"], max_epochs=3).text(trials, False)
    assert [r.split("|")[2].strip() for r in rows(text)] == ["finished", "finished", "paused"]


def test_the_common_metrics_a_trainable_reports_are_shown_beside_the_sweeps_own_two_at_most():
    """Ray's guides report accuracy as ``mean_accuracy`` and Lightning's as ``val_accuracy``: the table showed only
    ``loss`` and ``accuracy`` beside the metric, so a Lightning sweep's table had no accuracy at all."""

    def heading(text: str) -> list[str]:
        line = next(line for line in text.splitlines() if line.startswith("| trial "))
        return [cell.strip() for cell in line.strip("|").split("|")]

    ray_guide = [trial("a", {"x": 1}, 0.5, mean_accuracy=0.8), trial("b", {"x": 2}, 0.4, mean_accuracy=0.9)]
    shown = heading(build_reporter("loss", "min", ["x"], max_epochs=4).text(ray_guide, False))
    assert shown[-3:] == ["loss (last)", "mean_accuracy", "epoch"], shown
    lightning = [
        trial("a", {"x": 1}, 0.5, accuracy=0.7, val_loss=0.6, val_accuracy=0.65),
        trial("b", {"x": 2}, 0.4, accuracy=0.8, val_loss=0.5, val_accuracy=0.75),
    ]
    shown = heading(build_reporter("val_loss", "min", ["x"], max_epochs=4).text(lightning, False))
    # a validation metric's own kind first: val_accuracy before the training loss
    assert shown[-5:] == ["val_loss (best)", "val_loss (last)", "val_accuracy", "loss", "epoch"], shown
    # a companion the sweep ranks by is its own column, beside two others
    objectives = [Objective("val_loss", "min"), Objective("val_accuracy", "max")]
    front = build_reporter("val_loss", "min", ["x"], max_epochs=4, also=["val_accuracy"], objectives=objectives)
    assert "val_accuracy" in heading(front.text(lightning, False))


def test_a_nested_config_and_long_text_are_shown_by_full_name_and_cut():
    t = trial("a", {"model": {"width": 32}, "note": "x" * 50}, 0.5)
    text = build_reporter("loss", "min", ["model/width", "note"], 1).text([t])
    assert " model/width " in text and re.search(r"\|\s+32 \|", text)
    (row,) = rows(text)
    assert "x" * 19 + "…" in row and "x" * 21 not in row


def test_it_reports_every_few_seconds_and_at_the_end():
    table = build_reporter("loss", "min", ["x"], 1)
    table.setup(start_time=None, total_samples=5, metric="loss", mode="min")
    assert table.should_report([]) and not table.should_report([])
    assert table.should_report([], done=True)
    assert "Number of trials: 1/5 (1 finished)" in table.text([trial("a", {"x": 1}, 0.5)])


def test_it_survives_the_pickle_ray_saves_it_in_and_an_older_experiments_reporter_resumes_as_one():
    table = build_reporter("loss", "min", ["x"], 3, stopped_label="ASHA")
    again = pickle.loads(pickle.dumps(table))
    assert first_cells(again.text([trial("a", {"x": 1}, 0.5)])) == ["a"] and again.stopped_label == "ASHA"
    # what an experiment saved by an earlier tuner holds: a CLIReporter subclass's state under this name
    older = SweepReporter.__new__(SweepReporter)
    older.__setstate__({"_metric": None, "_mode": None, "_parameter_columns": ["x"], "_max_epochs": 3,
                        "_metric_columns": {"loss": "loss (last)", "training_iteration": "iter"}})  # fmt: skip
    older.setup(start_time=None, total_samples=2, metric="loss", mode="min")
    text = older.text([trial("a", {"x": 1}, 0.5)])
    assert "Best so far: trial a, loss 0.5" in text and " loss (last) " in text


@pytest.mark.parametrize("old", ["tuner.ray_compat.live_table"])
def test_the_old_module_of_the_live_table_still_imports(old):
    import importlib

    assert importlib.import_module(old).SweepReporter is SweepReporter


def test_the_value_the_rows_are_ranked_by_is_shown_beside_the_last_one():
    trials = [trial("a", {"x": 1}, 0.9, 0.8), trial("b", {"x": 2}, 0.3, 0.5)]  # b: best 0.3, last 0.5
    text = build_reporter("loss", "min", ["x"], max_epochs=4).text(trials, True)
    header = next(line for line in text.splitlines() if line.startswith("| trial "))
    cells = [c.strip() for c in header.split("|")]
    assert cells.index("loss (best)") + 1 == cells.index("loss (last)")
    best = [float(r.split("|")[cells.index("loss (best)")]) for r in rows(text)]
    last = [float(r.split("|")[cells.index("loss (last)")]) for r in rows(text)]
    assert first_cells(text) == ["b", "a"] and best == sorted(best) == [0.3, 0.8] and last == [0.5, 0.8]


def test_the_oom_fallbacks_columns_are_shown_only_once_a_batch_was_reduced():
    def table(*trials):
        text = build_reporter("loss", "min", ["batch_size"], max_epochs=4).text(list(trials), True)
        header = next(line for line in text.splitlines() if line.startswith("| trial "))
        return [c.strip() for c in header.split("|")]

    calm = trial("a", {"batch_size": 8}, 0.5, batch_size_effective=8, oom_retries=0)
    other = trial("b", {"batch_size": 4}, 0.6, batch_size_effective=4, oom_retries=0)
    quiet = table(calm, other)
    assert "batch" not in quiet and "oom" not in quiet  # they only repeat the batch size and count 0
    halved = trial("c", {"batch_size": 16}, 0.7, batch_size_effective=8, oom_retries=1)
    header = table(calm, other, halved)
    assert "batch" in header and "oom" in header and "batch_size" in header


def test_the_readmes_sample_table_has_the_columns_the_table_prints():
    """The README shows the table of its first sweep: its header is what the table prints for the CIFAR space
    (loss and accuracy reported, no OOM: no batch or oom column)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    shown = next(line for line in readme.splitlines() if line.startswith("| trial "))
    t = trial("a", {"l1": 64, "l2": 128, "lr": 0.004, "batch_size": 4}, 0.3, 0.2, accuracy=0.9,
              batch_size_effective=4, oom_retries=0)  # fmt: skip
    text = build_reporter("loss", "min", ["l1", "l2", "lr", "batch_size"], max_epochs=3).text([t], True)
    printed = next(line for line in text.splitlines() if line.startswith("| trial "))
    assert shown.split() == printed.split()


def test_a_sweep_that_its_budget_ends_counts_its_trials_without_a_planned_total():
    import sys

    table = build_reporter("loss", "min", ["x"], max_epochs=2)
    table.setup(total_samples=sys.maxsize)
    assert "Number of trials: 1 (1 stopped early)" in table.text([trial("a", {"x": 1}, 0.5)], False)
    table.setup(total_samples=8)
    assert "Number of trials: 1/8 (1 stopped early)" in table.text([trial("a", {"x": 1}, 0.5)], False)


def test_a_trial_ended_before_its_first_epoch_never_started_or_ended_without_a_report(tmp_path):
    """Made as the budget ran out, a trial never started; a trainable that returned without reporting (a Lightning
    callback whose metric names were never logged reports nothing) ran and ended without a report."""
    from tuner.folder.fates import BUDGET, FateLog

    folder = str(tmp_path / "exp")
    FateLog(folder).record("c", BUDGET, "never started: the budget was spent first")
    table = build_reporter("loss", "min", ["x"], max_epochs=2, folder=folder)
    text = table.text([trial("a", {"x": 1}, 0.5, 0.4), trial("b", {"x": 2}), trial("c", {"x": 3})], True)
    assert "Number of trials: 3 (1 finished, 1 never started, 1 ended without a report)" in text



def test_a_trial_the_budget_or_a_stall_ended_is_not_counted_as_stopped_early(tmp_path):
    """The table reads why a trial ended from the sweep's fate log, as the summary does: the budget's end (of a
    paused trial too) and a stall's are not a scheduler's stop."""
    from tuner.folder.fates import BUDGET, PAUSED, STALL, STOPPED, FateLog

    folder = str(tmp_path / "exp")
    log = FateLog(folder)
    log.record("p", PAUSED, "paused at epoch 2: waits for the first model of the curves")
    log.record("p", BUDGET, "ended by the budget")
    log.record("b", BUDGET, "ended by the budget")
    log.record("s", STALL, "ended by the stall")
    log.record("a", STOPPED, "stopped early by ASHA at epoch 1 (rung 1)")
    # a second Ctrl-C stops a sweep at once: Tune marks its paused trial ended, its saved state keeps it paused
    log.record("w", PAUSED, "paused at epoch 2: predicted 0.3 ± 0.1")
    trials = [trial("p", {"x": 1}, 0.5, 0.4), trial("b", {"x": 2}, 0.6), trial("s", {"x": 3}, 0.7),
              trial("a", {"x": 4}, 0.9), trial("f", {"x": 5}, 0.8, 0.3, 0.2, 0.1), trial("w", {"x": 6}, 0.6, 0.5)]  # fmt: skip
    text = build_reporter("loss", "min", ["x"], max_epochs=4, stopped_label="ASHA", folder=folder).text(trials, True)
    assert "Number of trials: 6 (1 paused, 1 stopped early, 2 ended by the budget, 1 ended by the stall, 1 finished)" in text
    assert "ASHA: 1 trial(s) stopped early so far" in text


def test_a_trial_id_that_reads_as_a_number_is_shown_as_it_is():
    """Ray's ids are hex: 18587e85 read as a number was shown as 1.859e+89, and the trial could not be found."""
    text = build_reporter("loss", "min", ["x"], max_epochs=2).text([trial("18587e85", {"x": 1}, 0.5)])
    assert first_cells(text) == ["18587e85"]


def test_a_trial_that_failed_ranks_after_those_that_did_not_as_the_summary_ranks_it():
    """The last table named a crashed trial the best so far while the summary under it named another: a config
    that crashes is not recommended while one that ran is there, in the table as in every review."""
    trials = [
        trial("ok", {"x": 1}, 0.9, 0.6),
        trial("bad", {"x": 2}, 0.3, 0.2, status="ERROR"),
        trial("worse", {"x": 3}, 0.8, 0.7),
    ]
    text = build_reporter("loss", "min", ["x"], max_epochs=2).text(trials, True)
    assert first_cells(text) == ["ok", "worse", "bad"]
    assert "Best so far: trial ok, loss 0.6" in text


def test_a_trial_that_took_a_donors_checkpoint_under_pbt_is_ranked_by_the_donors_value_it_now_holds():
    """PBT gives the trial the donor's checkpoint and last result: its last is never shown better than its best."""
    cloned = trial("clone", {"x": 1}, 2.7, 2.6, 2.55, 2.509, status="RUNNING")
    cloned.run_metadata.last_result = {**cloned.last_result, "loss": 0.4116}  # the donor's, as PBT copies it
    other = trial("other", {"x": 2}, 0.9, 0.5, status="RUNNING")
    text = build_reporter("loss", "min", ["x"], max_epochs=8).text([other, cloned])
    assert first_cells(text) == ["clone", "other"]
    assert re.search(r"\| clone +\| running +\| +1 \| +0\.4116 \| +0\.4116 \| +4 \|", text), text


def test_a_paused_trial_chosen_to_go_on_reads_to_continue_not_pending():
    """Tune marks a paused trial it continues PENDING until its worker takes it: beside paused rows, 'pending'
    with two epochs of results read as a trial not yet started."""
    going_on = trial("back", {"x": 1}, 0.5, 0.4, status="PENDING")
    text = build_reporter("loss", "min", ["x"], max_epochs=4).text([going_on, trial("new", {"x": 2}, status="PENDING")])
    assert "Number of trials: 2 (1 to continue, 1 pending)" in text
    assert re.search(r"\| back +\| to continue +\|", text), text
