"""A finished sweep's experiment: its best trial is one whose config ran (a trial that failed is recommended only
when every trial with a result failed), and resuming it runs nothing. Experiments written on disk by hand (no
Ray), as a sweep with failures leaves them."""

from __future__ import annotations

import json

import pytest
import yaml

from tuner.experiment import load
from tuner.objectives import Objective

COLUMNS = "loss,training_iteration,trial_id"


def _experiment(tmp_path, trials: dict[str, tuple[str, list[float]]]):
    """``trials``: trial id -> (its status, its loss at each epoch)."""
    folder = tmp_path / "exp"
    folder.mkdir()
    settings = {"space": "x.py", "scheduler": "fifo", "searcher": "random", "num_samples": len(trials),
                "max_epochs": 4, "metric": "loss", "mode": "min", "name": "exp", "storage_path": str(tmp_path)}  # fmt: skip
    (folder / "tuner_config.yaml").write_text(yaml.safe_dump(settings))
    state = []
    for trial_id, (status, losses) in trials.items():
        (folder / trial_id).mkdir()
        (folder / trial_id / "params.json").write_text(json.dumps({"width": 128 if status == "ERROR" else 32}))
        rows = [COLUMNS] + [f"{loss},{epoch},{trial_id}" for epoch, loss in enumerate(losses, 1)]
        (folder / trial_id / "progress.csv").write_text("\n".join(rows) + "\n")
        error = None
        if status == "ERROR":
            error = "error.txt"
            (folder / trial_id / error).write_text("RuntimeError: width 128 fails at epoch 2\n")
        trial = {"trial_id": trial_id, "status": status, "relative_logdir": trial_id, "config": {}}
        state.append([json.dumps(trial), json.dumps({"error_filename": error})])
    (folder / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps({"trial_data": state}))
    (folder / "tuner.pkl").write_bytes(b"")  # Ray's pickle of the sweep: only a resume that runs reads it
    return load(str(folder), running=False)


def test_a_parameter_named_as_a_column_of_the_tables_own_keeps_its_value(tmp_path):
    """A parameter ``epochs`` (the commonest name for one) was overwritten by the epochs each trial ran."""
    import tuner
    from tuner.review.results import trial_rows

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    (tmp_path / "exp" / "a" / "params.json").write_text(json.dumps({"epochs": 6, "width": 32}))
    experiment = load(str(experiment.path), running=False)
    row = trial_rows(experiment)[0]
    assert row["config/epochs"] == 6 and row["epochs"] == 2 and row["width"] == 32
    frame = tuner.load(str(experiment.path)).trials
    assert list(frame["config/epochs"]) == [6] and list(frame["epochs"]) == [2] and frame.columns.is_unique


def test_a_trial_that_failed_is_not_the_best_while_one_that_ran_has_a_result(tmp_path):
    experiment = _experiment(tmp_path, {"crashed": ("ERROR", [0.09]), "ran": ("TERMINATED", [0.9, 0.5, 0.3, 0.2])})
    best = experiment.best_trial()
    assert best is not None and best.trial_id == "ran"
    assert [t.trial_id for t in experiment.ranked()] == ["ran", "crashed"]


def test_when_every_trial_with_a_result_failed_the_best_of_them_is_still_named(tmp_path):
    experiment = _experiment(tmp_path, {"a": ("ERROR", [0.4]), "b": ("ERROR", [0.2]), "none": ("TERMINATED", [])})
    best = experiment.best_trial()
    assert best is not None and best.trial_id == "b"


def test_resuming_a_finished_sweep_says_so_and_starts_nothing(tmp_path):
    """No Ray is started (none runs in this test) and nothing of Ray's is written: the summary is read back."""
    from tuner.launch.resume import resume_sweep

    experiment = _experiment(tmp_path, {"ran": ("TERMINATED", [0.5, 0.3]), "crashed": ("ERROR", [0.1])})
    (tmp_path / "exp" / "search_gen_state-2026-01-01_00-00-00.json").write_text("{}")  # a searcher's: it can grow
    before = sorted(p.name for p in (tmp_path / "exp").iterdir())
    said: list[str] = []
    summary = resume_sweep(str(experiment.path), out=said.append)
    assert said[0].endswith(
        "the sweep finished, every one of its 2 trial(s) ended, so nothing is left to resume; --num-samples N "
        "(more than 2) grows it (with --budget, a larger budget for the new trials); --errored resume or restart "
        "runs its 1 errored trial(s) again"
    )
    assert summary.best is not None and summary.best.trial_id == "ran"
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == sorted([*before, "best_config.json"])


def test_a_larger_budget_for_a_sweep_with_every_trial_ended_is_refused_and_changes_nothing(tmp_path):
    import pytest

    from tuner.errors import UsageError
    from tuner.launch.resume import resume_sweep

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3]), "b": ("TERMINATED", [0.4]),
                                        "c": ("TERMINATED", [])})  # fmt: skip
    from tuner.folder.fates import BUDGET, FateLog, persist

    for trial_id in "bc":  # the budget ran out while b trained and as c was made: c never started
        FateLog(str(experiment.path)).record(trial_id, BUDGET, "ended by the budget")
    persist(str(experiment.path))
    saved = (tmp_path / "exp" / "tuner_config.yaml").read_text()
    with pytest.raises(UsageError) as refused:
        resume_sweep(str(experiment.path), budget="+5ep")
    assert str(refused.value).startswith(
        "--budget +5ep: every one of the 3 trial(s) the sweep plans was made and has ended, 2 of them by the "
        "budget, 1 of them before its first epoch (never started); a trial the budget ended does not go on"
    )
    assert (tmp_path / "exp" / "tuner_config.yaml").read_text() == saved


def test_compare_counts_the_time_a_sweep_ran_not_the_pause_between_a_stop_and_its_resume(tmp_path):
    from tuner.review.compare import summary_rows

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    (tmp_path / "exp" / "spent.json").write_text(json.dumps({"wall": 12.5, "epochs": 2}))
    assert summary_rows([experiment])[0]["wall_s"] == 12.5


def test_a_pbt_sweep_cannot_seed_another_search(tmp_path):
    import pytest
    from ray import tune

    from tuner.errors import UsageError
    from tuner.launch.warm_start import gather

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    saved = yaml.safe_load((tmp_path / "exp" / "tuner_config.yaml").read_text())
    (tmp_path / "exp" / "tuner_config.yaml").write_text(yaml.safe_dump({**saved, "scheduler": "pbt"}))
    with pytest.raises(UsageError, match="it ran PBT, whose trials took other trials' checkpoints and configs"):
        gather([str(experiment.path)], {"width": tune.choice([32, 128])}, Objective("loss", "min"))


def test_a_name_is_found_under_the_storage_path_a_review_resume_load_or_warm_start_is_given(
    tmp_path, run_cli, monkeypatch
):
    """A sweep kept with --storage-path is found by name wherever a name is taken, not only under the default
    storage (the suite's own, which does not hold it)."""
    from ray import tune

    import tuner
    from tuner.errors import UsageError
    from tuner.launch.resume import resume_sweep
    from tuner.launch.warm_start import gather

    _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3]), "b": ("TERMINATED", [0.4, 0.35])})
    monkeypatch.chdir(tmp_path / "exp")  # no folder named exp here
    missed = run_cli("results", "exp")
    assert missed.code == 2 and "pass the storage path, or the experiment's path" in missed.err
    found = run_cli("results", "exp", "--storage-path", tmp_path, "--format", "csv")
    assert found.code == 0 and [row.split(",")[0] for row in found.out.splitlines()[1:]] == ["a", "b"]
    assert tuner.load("exp", storage_path=str(tmp_path)).path == str(tmp_path / "exp")
    assert tuner.load("exp", storage_path=f"file://{tmp_path}/").path == f"file://{tmp_path}/exp"  # a URI too
    said: list[str] = []
    resume_sweep("exp", out=said.append, storage_path=str(tmp_path))
    assert "nothing is left to resume" in said[0]
    with pytest.raises(UsageError, match="and has ended; a larger budget has nothing to run; "):
        resume_sweep("exp", budget="+5ep", storage_path=str(tmp_path))  # no budget ended a trial of it
    warm = gather(["exp"], {"width": tune.choice([32, 128])}, Objective("loss", "min"), str(tmp_path))
    assert sorted(o.value for o in warm.observations) == [0.3, 0.35]
    # a copy of it here (as `aws s3 sync` leaves one) beside the one stored: which one is meant is asked
    import shutil

    shutil.copytree(tmp_path / "exp", tmp_path / "elsewhere" / "exp")
    monkeypatch.chdir(tmp_path / "elsewhere")
    both = run_cli("results", "exp", "--storage-path", tmp_path)
    assert both.code == 2 and "'exp' names two experiments" in both.err and "give the one meant by its path" in both.err
    assert run_cli("results", "./exp", "--storage-path", tmp_path).code == 0


def test_a_pbt_sweep_is_not_replayed_under_another_scheduler(tmp_path):
    import pytest

    from tuner.errors import UsageError
    from tuner.experiment import load
    from tuner.replay.whatif import check_replayable

    _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    saved = yaml.safe_load((tmp_path / "exp" / "tuner_config.yaml").read_text())
    (tmp_path / "exp" / "tuner_config.yaml").write_text(yaml.safe_dump({**saved, "scheduler": "pbt"}))
    with pytest.raises(UsageError, match="ran pbt, whose trials changed configs as they trained"):
        check_replayable(load(str(tmp_path / "exp"), running=False), "asha")


def test_the_page_of_a_sweep_running_now_does_not_send_its_reader_to_tuner_resume(tmp_path):
    from tuner.review.report.page import build

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3]), "b": ("RUNNING", [0.4])})
    assert "Not finished: " in build(experiment) and "tuner resume" in build(experiment)
    page = build(experiment, running=True)
    assert "Live: the sweep is running" in page and "Not finished: " not in page


def test_the_sweeps_clock_leaves_out_the_time_between_a_stop_and_its_resume(tmp_path):
    """Trial a trained 2 epochs, the sweep was stopped, and resumed an hour later: a trained 2 more and b started.
    Read at one start, a's later epochs came an hour early; b's an hour late against the sweep's own time."""
    import tuner

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.4, 0.3, 0.2]), "b": ("TERMINATED", [0.6, 0.1])})
    stamps = {"a": [(1001, 1.0), (1002, 2.0), (4602, 3.0), (4603, 4.0)], "b": [(4602, 1.0), (4603, 2.0)]}
    for trial_id, rows in stamps.items():
        losses = [0.5, 0.4, 0.3, 0.2] if trial_id == "a" else [0.6, 0.1]
        lines = ["loss,training_iteration,trial_id,timestamp,time_total_s,time_this_iter_s"] + [
            f"{loss},{n},{trial_id},{stamp},{total},1.0" for n, (loss, (stamp, total)) in enumerate(zip(losses, rows, strict=True), 1)
        ]
        (tmp_path / "exp" / trial_id / "progress.csv").write_text("\n".join(lines) + "\n")
    spent = {"wall": 5.0, "epochs": 6, "runs": [[1000.0, 1002.5], [4600.5, 4603.5]]}
    (tmp_path / "exp" / "spent.json").write_text(json.dumps(spent))
    record = load(str(experiment.path), running=False)
    assert [when for when, _ in record.trial("a").times()] == [1001, 1002, 4602, 4603]  # two stretches
    clock = record.clock()
    assert [clock(when) for when, _ in record.trial("a").times()] == [1.0, 2.0, 4.0, 5.0]
    assert [clock(when) for when, _ in record.trial("b").times()] == [4.0, 5.0]
    history = tuner.load(str(experiment.path)).history
    assert history["seconds"].max() == 5.0
    # an experiment of an earlier tuner, resumed by this one, recorded only the resume's run: its results before
    # that run count as one run from the first trial's start to its last result there
    (tmp_path / "exp" / "spent.json").write_text(json.dumps({**spent, "runs": [[4600.5, 4603.5]]}))
    clock = load(str(experiment.path), running=False).clock()
    assert [clock(when) for when, _ in record.trial("a").times()] == [1.0, 2.0, 3.5, 4.5]


def test_epochs_run_again_from_an_earlier_checkpoint_are_counted_where_the_report_counts_epochs(tmp_path):
    """A function trainable paused (or killed) after its last checkpoint runs the epochs since again: its rows keep
    each epoch once, the sweep's own count has every one it trained."""
    from tuner.review.report.scheduler_panel import savings_line

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.4, 0.3]), "b": ("TERMINATED", [0.6, 0.1])})
    (tmp_path / "exp" / "spent.json").write_text(json.dumps({"wall": 3.0, "epochs": 7}))
    record = load(str(experiment.path), running=False)
    assert record.epochs_trained() == 7
    assert savings_line(record) == (
        "No early stopping: FIFO runs every trial to its end (5 epochs in all; 7 trained, 2 of them run again, from "
        "an earlier checkpoint or from the start)."
    )
    saved = yaml.safe_load((tmp_path / "exp" / "tuner_config.yaml").read_text())
    (tmp_path / "exp" / "tuner_config.yaml").write_text(yaml.safe_dump({**saved, "scheduler": "pbt"}))
    assert savings_line(load(str(experiment.path), running=False)).startswith(  # PBT stops none either
        "No early stopping: PBT runs every trial to its end, a worse one on from a better one's checkpoint"
    )


def test_a_trial_whose_progress_csv_is_gone_is_read_from_its_result_json(tmp_path):
    """One lost file made another trial the best everywhere, silently: Ray's result.json holds the same results."""
    experiment = _experiment(tmp_path, {"best": ("TERMINATED", [0.5, 0.2]), "other": ("TERMINATED", [0.6, 0.4])})
    trial = tmp_path / "exp" / "best"
    (trial / "progress.csv").unlink()
    results = [{"loss": loss, "training_iteration": n, "trial_id": "best", "config": {"lr": 0.1}}
               for n, loss in enumerate([0.5, 0.2], 1)]  # fmt: skip
    (trial / "result.json").write_text("".join(json.dumps(r) + "\n" for r in results) + '{"loss": 0.1, "trai')
    record = load(str(experiment.path), running=False)
    best = record.best_trial()
    assert best is not None and best.trial_id == "best" and best.epochs == 2
    assert record.trial("best").rows[-1] == {"loss": "0.2", "training_iteration": "2", "trial_id": "best"}  # as the CSV


def test_an_out_file_goes_into_folders_made_for_it_or_is_refused_in_one_line(tmp_path, run_cli):
    """export and report wrote into a folder that did not exist with a traceback, where plot and compare made it."""
    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    exported = run_cli("export", experiment.path, "--out", tmp_path / "new" / "deeper" / "best.json")
    assert exported.code == 0 and json.loads((tmp_path / "new" / "deeper" / "best.json").read_text())["trial_id"] == "a"
    (tmp_path / "afile").write_text("")
    for command, name in (("export", "best.json"), ("report", "r.html")):
        refused = run_cli(command, experiment.path, "--out", tmp_path / "afile" / name)
        assert refused.code == 2 and refused.err.strip() == (
            f"tuner: error: --out {tmp_path / 'afile' / name}: cannot make the folder {tmp_path / 'afile'}: "
            f"{tmp_path / 'afile'} is a file, not a folder"
        )


def test_a_file_given_as_an_experiment_is_called_a_file(tmp_path, run_cli):
    (tmp_path / "notes.txt").write_text("")
    result = run_cli("results", tmp_path / "notes.txt")
    assert result.code == 2 and result.err.strip() == f"tuner: error: {tmp_path / 'notes.txt'} is a file, not an experiment's folder"


def test_a_constraints_metric_reported_after_the_first_epoch_is_read_and_judged(tmp_path):
    """Ray's CSV keeps the columns of a trial's first result: a figure measured once after training, reported with
    the last epoch only, is in result.json alone. It was judged as not reported, so every trial broke mem<=5."""
    from tuner.launch.watching.reporting import MetricGuard, MetricNeverReported

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    config = yaml.safe_load((tmp_path / "exp" / "tuner_config.yaml").read_text())
    (tmp_path / "exp" / "tuner_config.yaml").write_text(yaml.safe_dump({**config, "constraints": ["mem<=5"]}))
    results = [{"loss": 0.5, "training_iteration": 1, "trial_id": "a"},
               {"loss": 0.3, "training_iteration": 2, "trial_id": "a", "mem": 2.5}]  # fmt: skip
    (tmp_path / "exp" / "a" / "result.json").write_text("".join(json.dumps(r) + "\n" for r in results))
    record = load(str(experiment.path), running=False)
    assert record.trial("a").rows[-1]["mem"] == "2.5" and record.breaks(record.trial("a")) == []
    assert record.best_trial() is not None and record.best_trial().trial_id == "a"
    from tuner.review.report.page import fate_rows

    assert [row["breaks"] for row in fate_rows(record)] == [""]  # the report's table says what each trial breaks

    # the sweep's guard: a constraint's metric missing from a result is no error until the trial ends without it
    from types import SimpleNamespace

    guard = MetricGuard("loss", constrained=("mem",), max_epochs=2)
    trial = SimpleNamespace(trial_id="a", last_result=results[-1])
    guard.on_trial_result(0, [], trial, results[0])
    guard.on_trial_result(0, [], trial, results[1])
    guard.on_trial_complete(0, [], trial)
    never = SimpleNamespace(trial_id="b", last_result={"loss": 0.4, "training_iteration": 2})
    guard.on_trial_result(0, [], never, never.last_result)
    guard.on_trial_complete(0, [], never)  # another trial reported mem: the name is right, this one broke it
    guard.on_step_end(0, [])
    # no trial ever reported it: a trial stopped early may not have reached the epoch that measures it ...
    fresh = MetricGuard("loss", constrained=("mem",), max_epochs=2)
    early = SimpleNamespace(trial_id="c", last_result=results[0])
    fresh.on_trial_result(0, [], early, results[0])
    fresh.on_trial_complete(0, [], early)
    fresh.on_step_end(0, [])
    # ... but one that ran all its epochs without it says the name is wrong: named at its end, raised at the
    # step's end (Ray swallows an error raised at a trial's end)
    whole = SimpleNamespace(trial_id="d", last_result={"loss": 0.4, "training_iteration": 2})
    fresh.on_trial_result(0, [], whole, whole.last_result)
    fresh.on_trial_complete(0, [], whole)
    with pytest.raises(MetricNeverReported, match="never reports metric 'mem'; it reports: loss; pass --constraint"):
        fresh.on_step_end(0, [])


def test_a_metric_reported_as_a_tensor_ends_the_sweep_at_the_first_trial_it_fails(tmp_path):
    """Every trial fails alike in Ray's report: the first one's failure ends the sweep, saying what to report."""
    from types import SimpleNamespace

    from tuner.launch.watching.reporting import MetricGuard, MetricNeverReported

    error = tmp_path / "error.txt"
    error.write_text("Failure # 1\nTraceback ...\nValueError: Passing objects containg Torch tensors as metrics is not supported.\n")
    guard = MetricGuard("loss")
    guard.on_trial_error(0, [], SimpleNamespace(trial_id="a", error_file=str(error)))
    with pytest.raises(MetricNeverReported, match=r"^trial a: a metric was reported as a torch tensor; report a number") as ended:
        guard.on_step_end(0, [])
    assert not ended.value.keep  # no result came: bad input, the experiment goes
    other = tmp_path / "other.txt"
    other.write_text("Failure # 1\nValueError: bad lr\n")
    calm = MetricGuard("loss")
    calm.on_trial_error(0, [], SimpleNamespace(trial_id="b", error_file=str(other)))
    calm.on_step_end(0, [])  # a trial's own error is the trial's: the sweep goes on


def test_a_trainable_that_reports_its_own_training_iteration_is_refused_at_its_first_report():
    """{"training_iteration": e * 7} replaced Tune's count: a trial of 2 reports read as 7 epochs, 'ran to max
    epochs', and the summary and the report disagreed on the sweep's epochs."""
    from types import SimpleNamespace

    from tuner.launch.watching.reporting import MetricGuard, MetricNeverReported

    trial = SimpleNamespace(trial_id="a", last_result=None)
    first = {"loss": 0.5, "iterations_since_restore": 1, "time_total_s": 0.2, "time_since_restore": 0.2}
    with pytest.raises(MetricNeverReported, match=r"trial a reports its own training_iteration \(0 at its first"):
        MetricGuard("loss").on_trial_result(0, [], trial, {**first, "training_iteration": 0})
    MetricGuard("loss").on_trial_result(0, [], trial, {**first, "training_iteration": 1})  # Tune's own count
    restored = {**first, "time_total_s": 9.0, "training_iteration": 4}  # continued from epoch 3's checkpoint
    MetricGuard("loss").on_trial_result(0, [], trial, restored)


def test_a_result_without_a_ranked_metric_is_refused_in_words_that_are_true():
    """Every result must carry the metrics a sweep ranks by (Ray Tune's rule; its searchers read them from each
    result). At the first result the name may be wrong; after results that carried it, the experiment is kept."""
    from types import SimpleNamespace

    from tuner.launch.watching.reporting import MetricGuard, MetricNeverReported

    trial = SimpleNamespace(trial_id="a", last_result=None)
    guard = MetricGuard("loss")
    with pytest.raises(MetricNeverReported) as first:
        guard.on_trial_result(0, [], trial, {"train_loss": 0.5, "training_iteration": 1})
    assert str(first.value) == (
        "trial a's result at epoch 1 has no metric 'loss'; it reports: train_loss; pass --metric with one of "
        "those, or report 'loss' at every epoch: every result must carry the metrics a sweep ranks by, as in Ray Tune"
    )
    assert not first.value.keep  # bad input, as a wrong flag: the experiment this sweep made goes
    guard = MetricGuard("loss", "latency_ms")
    guard.on_trial_result(0, [], trial, {"loss": 0.5, "latency_ms": 3.0, "training_iteration": 1})
    with pytest.raises(MetricNeverReported, match=r"trial a's result at epoch 2 has no metric 'latency_ms', which earlier results carried;") as later:
        guard.on_trial_result(0, [], trial, {"loss": 0.4, "training_iteration": 2})
    assert later.value.keep and "continue with tuner resume" in str(later.value)


def test_a_finished_sweep_that_planned_every_trial_is_told_to_start_anew_not_to_grow(tmp_path):
    """A grid's or PBT's trials are Tune's variants, made at the start: --num-samples and --budget are refused
    there, so the hint must not offer them."""
    from tuner.launch.resume import resume_sweep

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    (tmp_path / "exp" / "basic-variant-state-2026-01-01_00-00-00.json").write_text("{}")
    said: list[str] = []
    resume_sweep(str(experiment.path), out=said.append)
    assert said[0].endswith("nothing is left to resume; it planned every trial at its start (a grid, or PBT) and "
                            "cannot grow: start a new sweep for more")  # fmt: skip


def test_a_best_epoch_that_saved_no_checkpoint_gets_the_best_kept_one_and_says_so(tmp_path):
    """A trainable that saves every second epoch: its best epoch (1) saved none. The newest checkpoint (epoch 4,
    ten times worse) was named as the best's, silently; the best one kept stands in, and every view says which."""
    from tuner.review.export import best_export
    from tuner.review.results import format_summary, summarize

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.01, 0.03, 0.05, 0.1])})
    trial = tmp_path / "exp" / "a"
    rows = ["loss,training_iteration,trial_id,checkpoint_dir_name"]
    rows += [f"{loss},{n},a,{f'checkpoint_00000{n // 2 - 1}' if n % 2 == 0 else ''}"
             for n, loss in enumerate([0.01, 0.03, 0.05, 0.1], 1)]  # fmt: skip
    (trial / "progress.csv").write_text("\n".join(rows) + "\n")
    for name in ("checkpoint_000000", "checkpoint_000001"):
        (trial / name).mkdir()
        (trial / name / "state.json").write_text("{}")
    record = load(str(experiment.path), running=False)
    best = record.trial("a")
    assert record.best_checkpoint(best) == str(trial / "checkpoint_000000")  # epoch 2's, not epoch 4's
    note = "no checkpoint was saved at the best epoch (1); epoch 2's (loss 0.03), the best whole one kept, stands in"
    assert record.checkpoint_choice(best) == (str(trial / "checkpoint_000000"), note)
    summary = summarize(record)
    assert f"    ({note})" in format_summary(summary)
    assert json.loads((tmp_path / "exp" / "best_config.json").read_text())["checkpoint_note"] == note
    assert best_export(record)["checkpoint_note"] == note


def test_of_epochs_tied_on_the_best_value_the_one_whose_checkpoint_ray_kept_is_the_best(tmp_path):
    """The best value at epochs 2, 3 and 4 (an accuracy on a small set often repeats): Ray keeps the newer checkpoints
    of equal scores, so epoch 2's was gone and the API named epoch 2 beside epoch 3's checkpoint, without the note
    the command line printed."""
    from tuner.review.export import best_export

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.9, 0.5, 0.5, 0.5])})  # a loss, tied at its best
    trial = tmp_path / "exp" / "a"
    rows = ["loss,training_iteration,trial_id,checkpoint_dir_name"]
    rows += [f"{v},{n},a,checkpoint_00000{n - 1}" for n, v in enumerate([0.9, 0.5, 0.5, 0.5], 1)]
    (trial / "progress.csv").write_text("\n".join(rows) + "\n")
    for name in ("checkpoint_000002", "checkpoint_000003"):  # the two Ray kept (num_to_keep 2, by score)
        (trial / name).mkdir()
        (trial / name / "state.json").write_text("{}")
    record = load(str(experiment.path), running=False)
    best = record.trial("a")
    assert record.checkpoint_choice(best) == (str(trial / "checkpoint_000003"), None)
    exported = best_export(record)
    assert (exported["epoch"], exported["checkpoint"]) == (4, str(trial / "checkpoint_000003"))
    assert "checkpoint_note" not in exported


def test_a_class_trainables_best_epoch_gets_its_own_checkpoint_from_the_manifests(tmp_path):
    """A tune.Trainable class's results do not name their checkpoint: its best epoch's own was said to be missing,
    and the newest stood in, whatever epoch it was. The manifest written as Tune registers a checkpoint keeps
    the epoch."""
    from tuner.folder.checkpoints import write_manifest

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.3, 0.1, 0.2])})
    trial = tmp_path / "exp" / "a"
    rows = ["loss,training_iteration,trial_id"] + [f"{v},{n},a" for n, v in enumerate([0.3, 0.1, 0.2], 1)]
    (trial / "progress.csv").write_text("\n".join(rows) + "\n")
    for name, epoch in (("checkpoint_000001", 2), ("checkpoint_000002", 3)):
        (trial / name).mkdir()
        (trial / name / "s.json").write_text(json.dumps({"epoch": epoch}))
        write_manifest(trial / name, epoch)
    record = load(str(experiment.path), running=False)
    assert record.checkpoint_choice(record.trial("a")) == (str(trial / "checkpoint_000001"), None)


def test_a_trial_pbt_changed_after_its_best_epoch_shows_the_config_that_epoch_trained_with(tmp_path):
    """PBT continued the trial with k 0 -> 3 after its best epoch: the best config was said to be k=3, which never
    reached that value. result.json keeps each result's config."""
    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.01, 1.3, 1.3]), "b": ("TERMINATED", [1.1, 1.1, 1.1])})
    trial = tmp_path / "exp" / "a"
    (trial / "params.json").write_text(json.dumps({"k": 3}))
    results = [{"loss": loss, "training_iteration": n, "trial_id": "a", "config": {"k": 0 if n == 1 else 3}}
               for n, loss in enumerate([0.01, 1.3, 1.3], 1)]  # fmt: skip
    (trial / "result.json").write_text("".join(json.dumps(r) + "\n" for r in results))
    fates = {"a": {"perturbed": ["perturbed by PBT at epoch 1: continued from trial b's epoch-1 checkpoint with k 0 -> 3"]}}
    (tmp_path / "exp" / "fates.json").write_text(json.dumps(fates))
    record = load(str(experiment.path), running=False)
    best = record.best_trial()
    assert best is not None and best.trial_id == "a" and best.config == {"k": 0}
    assert "perturbed by PBT" in best.fate


def test_an_out_file_inside_an_experiment_is_refused_and_nothing_there_changes(tmp_path, run_cli):
    """export --out EXP/tuner_config.yaml wrote over the experiment's settings and left it unreadable."""
    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    settings = (tmp_path / "exp" / "tuner_config.yaml").read_text()
    for command, name in (("export", "tuner_config.yaml"), ("export", "a/best.json"), ("report", "mine.html")):
        refused = run_cli(command, experiment.path, "--out", tmp_path / "exp" / name)
        assert refused.code == 2 and refused.err.strip() == (
            f"tuner: error: --out {tmp_path / 'exp' / name} is inside the experiment {tmp_path / 'exp'}, whose "
            "files are tuner's; write it elsewhere"
        )
    assert (tmp_path / "exp" / "tuner_config.yaml").read_text() == settings
    assert run_cli("report", experiment.path).code == 0  # its own report.html is the experiment's to keep


def test_compare_in_csv_writes_no_figure_unasked_and_refuses_one_sweep_given_twice(tmp_path, run_cli, monkeypatch):
    """compare --format csv wrote over ./compare.png without a word."""
    first = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3])})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compare.png").write_text("my own figure")
    twice = run_cli("compare", first.path, first.path, "--format", "csv")
    assert twice.code == 2 and twice.err.strip() == f"tuner: error: {first.path} is given more than once; compare different sweeps"
    assert (tmp_path / "compare.png").read_text() == "my own figure"


def test_plot_of_an_experiment_without_results_is_refused_in_one_line(tmp_path, run_cli):
    experiment = _experiment(tmp_path, {"a": ("ERROR", [])})
    result = run_cli("plot", experiment.path)
    assert result.code == 2 and result.err.strip() == (
        f"tuner: error: {experiment.path} has no results to plot: no trial reported a metric"
    )
    assert not (tmp_path / "exp" / "plots").exists()


def test_hyperbands_rung_figure_draws_each_brackets_round_apart(tmp_path):
    """Each bracket keeps its own best: pooled in one 'rung at epoch 4' panel, a 2.28 that went on stood beside a
    stopped 0.55 of another bracket."""
    from tuner.review.report.scheduler_panel import rung_figure

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3]), "b": ("TERMINATED", [2.3])})
    events = [{"trial": "a", "rung": 4, "value": 0.55, "kept": False, "bracket": 2, "keep": 1, "of": 2},
              {"trial": "b", "rung": 4, "value": 2.28, "kept": True, "bracket": 3, "keep": 1, "of": 2},
              {"trial": "b", "rung": 1, "value": 2.9, "kept": True, "bracket": 3, "keep": 2, "of": 4}]  # fmt: skip
    titles = [a.text for a in rung_figure(experiment, events).layout.annotations]
    assert titles == ["bracket 2, epoch 4", "bracket 3, epoch 1", "bracket 3, epoch 4"]
    asha = [{k: v for k, v in e.items() if k not in ("bracket", "keep", "of")} for e in events]
    assert [a.text for a in rung_figure(experiment, asha).layout.annotations] == ["rung at epoch 1", "rung at epoch 4"]


def test_freeze_thaws_rung_figure_tells_a_pause_the_trial_went_on_from(tmp_path):
    """The best trial, paused at its first decision and continued later, was drawn as only 'paused here', as if it
    had ended there; a paused trial weighed again at its rung shows twice, which the axis now says."""
    from tuner.review.report.scheduler_panel import rung_figure

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.2, 0.1]), "b": ("TERMINATED", [0.9, 0.8])})
    events = [{"trial": "a", "rung": 2, "value": 0.2, "kept": False, "verdict": "paused", "arrived": 1},
              {"trial": "b", "rung": 2, "value": 0.8, "kept": False, "verdict": "paused", "arrived": 2},
              {"trial": "b", "rung": 2, "value": 0.8, "kept": False, "verdict": "stopped", "arrived": 3}]  # fmt: skip
    figure = rung_figure(experiment, events)
    drawn = {trace.name: [h.split(":")[0] for h in trace.hovertext] for trace in figure.data if trace.hovertext}
    assert drawn == {"paused here": ["b"], "paused here, continued later": ["a"], "stopped here": ["b"]}
    assert figure.layout.xaxis.title.text.startswith("decisions at this rung, in order (a paused trial weighed again")


def test_a_trainable_that_reports_twice_an_epoch_is_told_that_each_report_counts_as_one():
    """Reports at epoch 0.5, 1.0, 1.5 under --max-epochs 3: every count said 3 epochs, and "ran to max epochs (3)",
    for a trainable that had trained one and a half, without a word; Lightning's 0-based count says nothing."""
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.folder.summary import Summary
    from tuner.review.results import epochs_apart, format_summary
    from tuner.settings import SweepConfig

    def record(own_epochs):
        rows = [{"training_iteration": str(n), "loss": "0.5", "epoch": str(e)} for n, e in enumerate(own_epochs, 1)]
        trials = [TrialRecord(t, "", "TERMINATED", {"x": 1}, rows, fate="ran to max epochs (3)") for t in "ab"]
        return ExperimentRecord("/exp", SweepConfig(space="x", max_epochs=3), trials)

    said = epochs_apart(record([0.5, 1.0, 1.5]))
    assert said == ("the trials report their own epoch 0.5 apart, about 2 reports an epoch; tuner counts each report "
                    "as an epoch (--max-epochs 3 is 3 reports), so report once an epoch, or scale --max-epochs")  # fmt: skip
    assert epochs_apart(record([0, 1, 2])) is None and epochs_apart(record([1, 2, 3])) is None
    summary = Summary("loss", "min", 2, "/exp", counts=said)
    assert f"note: {said}" in format_summary(summary)


def test_the_results_table_says_each_trials_state_in_the_live_tables_words_and_csv_keeps_tunes(tmp_path, run_cli):
    import re

    from tuner.folder.fates import BUDGET, PAUSED, STOPPED, FateLog, persist

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [0.5, 0.3, 0.2, 0.1]), "b": ("TERMINATED", [0.9]),
                                        "c": ("TERMINATED", [0.95]), "w": ("TERMINATED", [0.96, 0.97]),
                                        "r": ("RUNNING", [0.98]), "d": ("ERROR", [0.7])})  # fmt: skip
    FateLog(str(experiment.path)).record("b", STOPPED, "stopped early by ASHA at epoch 1: loss 0.9 > rung cutoff 0.5")
    FateLog(str(experiment.path)).record("c", BUDGET, "ended by the budget")
    FateLog(str(experiment.path)).record("w", PAUSED, "paused at epoch 2: waits for the first model")  # never continued
    persist(str(experiment.path))
    table = run_cli("results", experiment.path).out.splitlines()
    assert table[1].split()[:2] == ["trial_id", "state"]
    states = {line.split()[0]: re.split(r" {2,}", line)[1] for line in table[2:]}
    assert states == {"a": "finished", "b": "stopped early", "c": "ended by the budget", "w": "paused",
                      "r": "unfinished", "d": "errored"}  # fmt: skip
    rows = run_cli("results", experiment.path, "--format", "csv").out.splitlines()
    assert rows[0].startswith("trial_id,status,") and rows[1].startswith("a,TERMINATED,")
    assert rows[0].split(",")[2] == "state" and rows[5].startswith("r,RUNNING,unfinished,")  # and the state beside


def test_a_pbt_trials_curve_is_marked_where_it_goes_on_from_a_better_trials_checkpoint(tmp_path):
    """The drop there is the other trial's training: unmarked, it read as this trial's."""
    from tuner.folder.fates import PERTURBED, FateLog, persist
    from tuner.review.report.curves import curves

    experiment = _experiment(tmp_path, {"a": ("TERMINATED", [2.6, 2.5, 0.9, 0.8]), "b": ("TERMINATED", [1.0, 0.95])})
    FateLog(str(experiment.path)).record(
        "a", PERTURBED, "perturbed by PBT at epoch 4: continued from trial b's epoch-2 checkpoint with lr 0.1 -> 0.08"
    )
    persist(str(experiment.path))
    record = load(str(experiment.path), running=False)
    assert record.trial("a").perturbed and not record.trial("b").perturbed
    (marks,) = [t for t in curves(record).data if t.name == "took a better trial's checkpoint (PBT)"]
    assert list(marks.x) == [3.0] and list(marks.y) == [0.9]
    assert marks.hovertext == ("a from here: trial b's epoch-2 checkpoint",)
