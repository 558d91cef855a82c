"""The Ray workarounds on their own: status repair, the status file, completion results, the sync filter."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from tuner.ray_compat import (
    SYNC_LOGGER,
    LastResultOnCompletion,
    StatusRecorder,
    forget_last_step,
    last_step,
    quiet_benign_sync_races,
    repair_saved_statuses,
    settle_saved_statuses,
)


def _write_state(folder, statuses):
    trial_data = [
        [json.dumps({"trial_id": tid, "status": status, "config": {"lr": 0.01}}, indent=2), json.dumps({})]
        for tid, status in statuses.items()
    ]
    path = folder / "experiment_state-2026-01-01_00-00-00.json"
    path.write_text(json.dumps({"trial_data": trial_data, "runner_data": {"x": 1}, "stats": {}}))
    return path


def _saved(path):
    return {json.loads(t)["trial_id"]: json.loads(t)["status"] for t, _ in json.loads(path.read_text())["trial_data"]}


def test_a_paused_trial_the_sweep_finished_is_saved_as_terminated(tmp_path):
    path = _write_state(tmp_path, {"a": "PAUSED", "b": "TERMINATED", "c": "RUNNING"})
    changed = repair_saved_statuses(tmp_path, {"a": "TERMINATED", "b": "TERMINATED", "c": "RUNNING"})
    assert changed == ["a"]
    assert _saved(path) == {"a": "TERMINATED", "b": "TERMINATED", "c": "RUNNING"}
    assert json.loads(path.read_text())["runner_data"] == {"x": 1}
    assert not list(tmp_path.glob(".*partial"))


def test_nothing_is_rewritten_when_the_saved_state_already_agrees(tmp_path):
    path = _write_state(tmp_path, {"a": "TERMINATED", "b": "ERROR"})
    before = path.read_bytes()
    assert repair_saved_statuses(tmp_path, {"a": "TERMINATED", "b": "ERROR"}) == []
    assert path.read_bytes() == before


def test_a_finished_trial_is_never_reopened(tmp_path):
    path = _write_state(tmp_path, {"a": "TERMINATED"})
    assert repair_saved_statuses(tmp_path, {"a": "RUNNING"}) == []
    assert _saved(path) == {"a": "TERMINATED"}


def test_a_folder_without_saved_state_is_left_alone(tmp_path):
    assert repair_saved_statuses(tmp_path, {"a": "TERMINATED"}) == []
    assert list(tmp_path.iterdir()) == []


def test_the_repair_works_on_a_storage_uri_too(tmp_path):
    path = _write_state(tmp_path, {"a": "PAUSED"})
    assert repair_saved_statuses(f"file://{tmp_path}", {"a": "TERMINATED"}) == ["a"]
    assert _saved(path) == {"a": "TERMINATED"}


def test_a_sweeps_end_repairs_and_reopens_in_one_write(tmp_path):
    """Finished trials the state still holds open are marked finished, and errored trials whose failure was a
    refused write are reopened; one trial that failed in its own code stays failed."""
    trial_data = [
        [json.dumps({"trial_id": tid, "status": status, "relative_logdir": f"t_{tid}"}), runtime]
        for tid, status, runtime in [
            ("a", "PAUSED", "{}"),
            ("b", "ERROR", '{\n  "error_filename": "error.txt",\n  "last_result": {}\n}'),
            ("c", "ERROR", '{"error_filename": "own.txt"}'),
        ]
    ]
    path = tmp_path / "experiment_state-2026-01-01_00-00-00.json"
    path.write_text(json.dumps({"trial_data": trial_data, "runner_data": {}, "stats": {}}))
    asked = []

    def refused(trial_dir, error_file):
        asked.append((trial_dir, error_file))
        return trial_dir == "t_b"

    assert settle_saved_statuses(tmp_path, {"a": "TERMINATED", "b": "ERROR", "c": "ERROR"}, refused) == ["b"]
    assert _saved(path) == {"a": "TERMINATED", "b": "PAUSED", "c": "ERROR"}
    assert asked == [("t_b", "error.txt"), ("t_c", "own.txt")]  # each errored trial's own error file, by name
    assert settle_saved_statuses(tmp_path, None, lambda *_: False) == []  # no last step: nothing to repair


class _Trial:
    def __init__(self, trial_id, status):
        self.trial_id, self.status = trial_id, status


@pytest.mark.parametrize("folder", ["exp", "s3://bucket/sweeps/exp"])
def test_the_recorder_keeps_the_last_step_on_this_machine_outside_the_experiment(tmp_path, monkeypatch, folder):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    recorder = StatusRecorder(folder)
    assert last_step(folder) is None, "a run that never stepped leaves nothing to misread"
    recorder.on_step_end(iteration=1, trials=[_Trial("a", "RUNNING")])
    recorder.on_step_end(iteration=2, trials=[_Trial("a", "TERMINATED"), _Trial("b", "PAUSED")])
    recorder.on_experiment_end(trials=[_Trial("a", "TERMINATED"), _Trial("b", "TERMINATED")])  # after Ray's clean-up
    assert last_step(folder) == {"a": "TERMINATED", "b": "PAUSED"}
    if "://" in folder:
        assert last_step("s3://bucket/sweeps/other") is None, "each experiment in a bucket keeps its own"
    else:
        assert last_step(str(tmp_path / "exp")) == last_step(folder), "a relative and an absolute path: one experiment"
    assert not (tmp_path / "exp").exists(), "Ray syncs its staged copy over the experiment folder"
    forget_last_step(folder)  # the next run of the same experiment (a resume) starts clean
    assert last_step(folder) is None


def test_a_completion_without_a_result_gets_the_last_one():
    searcher = LastResultOnCompletion()
    searcher.remember("a", {"loss": 0.4})
    searcher.remember("a", {"loss": 0.3})
    assert searcher.completed("a", None, error=False) == {"loss": 0.3}
    searcher.remember("b", {"loss": 0.9})
    assert searcher.completed("b", {"loss": 0.8}, error=False) == {"loss": 0.8}, "a real result wins"
    searcher.remember("c", {"loss": 0.9})
    assert searcher.completed("c", None, error=True) is None, "an errored trial teaches nothing"
    assert searcher.last_results == {}


def _sync_failure(error: Exception) -> logging.LogRecord:
    try:
        raise error
    except Exception:
        exc_info = sys.exc_info()
    return logging.LogRecord(
        SYNC_LOGGER, logging.ERROR, __file__, 1,
        "Saving experiment state to storage at '/x/exp' failed with exception: ", None, exc_info,
    )  # fmt: skip


@pytest.fixture
def ray_logger():
    logger = logging.getLogger(SYNC_LOGGER)
    before = list(logger.filters)
    logger.filters[:] = []
    quiet_benign_sync_races()
    quiet_benign_sync_races()  # twice: still one filter
    yield logger
    logger.filters[:] = before


def test_a_vanished_scratch_file_is_not_reported(ray_logger):
    gone = FileNotFoundError("Failed to open local file '/s/.4f-tmp-searcher-state-2026.pkl'")
    assert not ray_logger.filter(_sync_failure(gone))
    assert len(ray_logger.filters) == 1


@pytest.mark.parametrize(
    "error",
    [FileNotFoundError("Failed to open local file '/s/experiment_state.json'"), PermissionError("-tmp- denied")],
)
def test_other_sync_failures_still_show(ray_logger, error):
    assert ray_logger.filter(_sync_failure(error))


def test_ray_still_reports_syncs_through_that_logger_with_that_message():
    """If this fails, Ray moved the sync message: re-check ray_compat part 3 against the new Ray."""
    import inspect

    import ray.tune.execution.experiment_state as module

    assert module.logger.name == SYNC_LOGGER
    assert "Saving experiment state to storage" in inspect.getsource(module)


def _analysis_warning(*failures: str) -> logging.LogRecord:
    from tuner.ray_compat.terminal import ANALYSIS_LOGGER

    lines = "\n".join(f"- train_{i}: {text}" for i, text in enumerate(failures))
    message = f"Failed to fetch metrics for {len(failures)} trial(s):\n{lines}"
    return logging.LogRecord(ANALYSIS_LOGGER, logging.WARNING, __file__, 1, message, None, None)


def test_a_trial_that_never_reported_is_not_warned_about():
    from tuner.ray_compat.terminal import _DropNeverReported

    never = "FileNotFoundError('Could not fetch metrics for x: both result.json and progress.csv were not found at /e')"
    assert not _DropNeverReported().filter(_analysis_warning(never, never))
    assert _DropNeverReported().filter(_analysis_warning(never, "PermissionError('denied')"))


def test_ray_still_warns_about_trials_without_results_that_way():
    """If this fails, Ray moved its no-results warning: re-check ray_compat part 4 against the new Ray."""
    import inspect

    import ray.tune.analysis.experiment_analysis as module
    from ray.tune.analysis.experiment_analysis import ExperimentAnalysis

    from tuner.ray_compat.terminal import ANALYSIS_LOGGER, NEVER_REPORTED, NO_METRICS

    assert module.logger.name == ANALYSIS_LOGGER
    assert NO_METRICS in inspect.getsource(module)
    from ray.tune.analysis import experiment_analysis as constants

    words = f"both {constants.EXPR_RESULT_FILE} and {constants.EXPR_PROGRESS_FILE} were not found"
    assert words == NEVER_REPORTED
    assert "both {EXPR_RESULT_FILE} and" in inspect.getsource(ExperimentAnalysis._fetch_trial_dataframe)


SEGV_REPORT = [
    "*** SIGSEGV received at time=1795454683 on cpu 1 ***",
    "PC: @     0x7f52b6585ad8  (unknown)  (unknown)",
    "    @     0x7f52b6585ad8       3120  (unknown)",
    "[2026-11-23 17:29:31,437 E 30143 30181] logging.cc:474:     @     0x7fcd19c5a050  (unknown)  (unknown)",
    "[2026-11-23 17:24:43,123 E 4242 4242] logging.cc:474: *** SIGSEGV received at time=1795454683 on cpu 1 ***",
    "[2026-11-23 17:24:43,123 E 4242 4242] logging.cc:474: PC: @     0x7f52b6585ad8  (unknown)  (unknown)",
]
SIGTERM_TRACEBACK = [
    "Exception ignored in: <function WeakSet.__init__.<locals>._remove at 0x7f>",
    "Traceback (most recent call last):",
    '  File "/x/ray/_private/worker.py", line 1063, in sigterm_handler',
    "    raise_sys_exit_with_custom_error_message(",
    "SystemExit: 1",
]


def test_a_worker_crash_report_and_rays_sigterm_traceback_are_dropped():
    from tuner.ray_compat.terminal import crash_noise

    died = ("A worker died or was killed while executing a task by an unexpected system error. To troubleshoot "
            "the problem, check the logs for the dead worker.")  # fmt: skip
    assert crash_noise([*SEGV_REPORT, died, *SIGTERM_TRACEBACK]) == []


def test_rays_sigterm_traceback_is_dropped_when_it_arrives_in_two_batches_with_a_blank_line():
    from tuner.ray_compat.terminal import crash_noise_so_far

    seen = ["Exception ignored in: <function WeakSet.__init__.<locals>._remove at 0x7f08e3792520>",
            "Traceback (most recent call last):", '  File "/x/_weakrefset.py", line 39, in _remove',
            "    def _remove(item, selfref=ref(self)):", "",
            '  File "/x/ray/_private/worker.py", line 1063, in sigterm_handler',
            "    raise_sys_exit_with_custom_error_message(", "SystemExit: 1", "(trial 1f15) WARNING: next"]  # fmt: skip
    first, held = crash_noise_so_far(seen[:4])
    assert first == [] and held == seen[:4]
    second, held = crash_noise_so_far(seen[4:], held)
    assert second == ["(trial 1f15) WARNING: next"] and held == []


def test_the_users_own_lines_and_tracebacks_pass():
    from tuner.ray_compat.terminal import crash_noise

    own = ["(trial 1f15) WARNING: loss is high", "Exception ignored in: <generator object x>",
           "Traceback (most recent call last):", '  File "train.py", line 3, in x', "ValueError: bad"]  # fmt: skip
    assert crash_noise([SEGV_REPORT[0], *own]) == own


def test_ray_still_forwards_worker_logs_through_that_dispatcher():
    """If this fails, Ray moved its log forwarder: re-check ray_compat part 11 against the new Ray."""
    import inspect

    import ray._private.worker as worker
    from ray._private.ray_logging import global_worker_stdstream_dispatcher as dispatcher

    from tuner.ray_compat.terminal import FORWARDER

    assert hasattr(dispatcher, "_lock") and isinstance(dispatcher.handlers, list)
    assert f'"{FORWARDER}"' in inspect.getsource(worker.connect)
    assert '"The process receives a SIGTERM."' in inspect.getsource(worker.Worker.main_loop)
    assert "print_to_stdstream(" in inspect.getsource(worker.listen_error_messages)


def test_an_epoch_reported_again_after_a_resume_is_read_once(tmp_path):
    """A trial stopped by a signal after reporting epoch 5 but before its checkpoint was saved reports epoch 5
    again when resumed from epoch 4: the reader keeps the later report, so nothing looks duplicated."""
    from tuner.folder.progress_rows import read_rows as _read_rows

    rows = ["training_iteration,loss,timestamp", "4,1.0,10", "5,0.9,11", "5,0.8,20", "6,0.7,21"]
    (tmp_path / "progress.csv").write_text("\n".join(rows) + "\n")
    read = _read_rows(str(tmp_path))
    assert [(r["training_iteration"], r["loss"]) for r in read] == [("4", "1.0"), ("5", "0.8"), ("6", "0.7")]


def test_a_trial_that_went_back_is_read_as_its_curve_stands(tmp_path):
    """Resumed without a checkpoint, a trial starts over at epoch 1; stopped at epoch 2 this time, its earlier
    run's epoch 3 is no longer its own: a report at an epoch it had passed supersedes that epoch and the later
    ones."""
    from tuner.folder.progress_rows import read_rows as _read_rows

    rows = ["training_iteration,loss,timestamp", "1,1.0,10", "2,0.9,11", "3,0.5,12", "1,1.1,20", "2,0.95,21"]
    (tmp_path / "progress.csv").write_text("\n".join(rows) + "\n")
    read = _read_rows(str(tmp_path))
    assert [(r["training_iteration"], r["loss"]) for r in read] == [("1", "1.1"), ("2", "0.95")]


def test_probing_the_older_spec_form_does_not_flood_the_terminal(caplog):
    """If this fails, Ray moved its deprecation warning: re-check ray_compat part 12."""
    import numpy as np
    from ray import tune

    from tuner.ray_compat.terminal import SAMPLE_LOGGER, spec_form_warning_once
    from tuner.searchers.probe import probe_function

    domain = tune.sample_from(lambda spec: np.random.choice([1, 2]) if spec.config.x == "a" else 0)
    logger = logging.getLogger(SAMPLE_LOGGER)
    installed, logger.filters = logger.filters, []  # as in a fresh process
    try:
        with caplog.at_level(logging.WARNING, logger=SAMPLE_LOGGER):
            assert probe_function(domain, 0, config={"x": "a"})[0] == [1, 2]
            assert not caplog.records
            domain.sample(config={"x": "a"})  # a draw outside probing still warns, as Ray decided
            assert "deprecated" in caplog.text and caplog.records[0].name == SAMPLE_LOGGER
            spec_form_warning_once()
            for _ in range(3):
                domain.sample(config={"x": "a"})
            assert len(caplog.records) == 2  # Ray's first, then once more for tuner's filter's first sight
    finally:
        logger.filters = installed
