"""The saved-state repair: finished trials Ray left marked unfinished are put right, nothing else moves."""

from __future__ import annotations

import json

from tuner.trial_states import StatusRecorder, forget, last_step, repair_saved_statuses


def _write_state(folder, statuses):
    trial_data = [
        [json.dumps({"trial_id": tid, "status": status, "config": {"lr": 0.01}}, indent=2), json.dumps({})]
        for tid, status in statuses.items()
    ]
    path = folder / "experiment_state-2026-01-01_00-00-00.json"
    path.write_text(json.dumps({"trial_data": trial_data, "runner_data": {"x": 1}, "stats": {}}))
    return path


def _saved(path):
    return {
        json.loads(t)["trial_id"]: json.loads(t)["status"]
        for t, _ in json.loads(path.read_text())["trial_data"]
    }


def test_a_paused_trial_the_sweep_finished_is_saved_as_terminated(tmp_path):
    path = _write_state(tmp_path, {"a": "PAUSED", "b": "TERMINATED", "c": "RUNNING"})
    changed = repair_saved_statuses(tmp_path, {"a": "TERMINATED", "b": "TERMINATED", "c": "RUNNING"})
    assert changed == ["a"]
    assert _saved(path) == {"a": "TERMINATED", "b": "TERMINATED", "c": "RUNNING"}
    assert json.loads(path.read_text())["runner_data"] == {"x": 1}
    assert not list(tmp_path.glob(".*repair"))


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


class _Trial:
    def __init__(self, trial_id, status):
        self.trial_id, self.status = trial_id, status


def test_the_recorder_keeps_the_last_step_per_folder_even_through_a_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    recorder = StatusRecorder("exp")
    recorder.on_step_end(iteration=1, trials=[_Trial("a", "RUNNING")])
    recorder.on_step_end(iteration=2, trials=[_Trial("a", "TERMINATED"), _Trial("b", "PENDING")])
    assert last_step(tmp_path / "exp") == {"a": "TERMINATED", "b": "PENDING"}
    forget(tmp_path / "exp")
    assert last_step("exp") is None


def test_the_repair_works_on_a_storage_uri_too(tmp_path):
    path = _write_state(tmp_path, {"a": "PAUSED"})
    assert repair_saved_statuses(f"file://{tmp_path}", {"a": "TERMINATED"}) == ["a"]
    assert _saved(path) == {"a": "TERMINATED"}
