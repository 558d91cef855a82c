"""Reviewing a finished sweep: results, export, plots, TensorBoard, wandb, sweep files, failures."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from tests.faults import faulty_space
from tests.integration.conftest import read_best

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One small ASHA sweep, run once for every review test in this module."""
    from tuner.cli import main

    storage = tmp_path_factory.mktemp("review")
    try:
        main(["sweep", "--space", "cifar_small", "--dataset", "synthetic", "--synthetic-size", "300",
              "--num-samples", "4", "--max-epochs", "3", "--scheduler", "asha", "--storage-path", str(storage),
              "--name", "done"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code == 0
    return storage / "done"


def test_results_table_lists_every_trial_best_first(run_cli, finished):
    result = run_cli("results", finished)
    assert result.code == 0, result.err
    lines = result.out.strip().splitlines()
    assert lines[1].split()[:2] == ["trial_id", "state"] and "best_loss" in lines[1] and "epochs" in lines[1]
    assert {line.split("  ")[1].strip() for line in lines[2:]} <= {"finished", "stopped early"}  # the table's words
    rows = list(csv.DictReader(run_cli("results", finished, "--format", "csv").out.splitlines()))
    best = [float(row["best_loss"]) for row in rows]
    assert len(best) == 4 and best == sorted(best) and {row["status"] for row in rows} == {"TERMINATED"}  # Tune's


def test_results_imports_neither_torch_nor_ray(finished):
    code = (
        "import sys; from tuner.cli import main\n"
        "try: main(['results', sys.argv[1]])\n"
        "except SystemExit as exc: assert exc.code == 0, exc.code\n"
        "heavy = [m for m in ('torch', 'ray') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(finished)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "best_loss" in proc.stdout


def test_results_as_json_and_csv_with_top(run_cli, finished):
    rows = json.loads(run_cli("results", finished, "--format", "json", "--top", "2").out)
    assert len(rows) == 2 and {"trial_id", "status", "lr", "best_loss", "last_loss", "epochs"} <= set(rows[0])
    assert rows[0]["best_loss"] <= rows[1]["best_loss"]
    csv_lines = run_cli("results", finished, "--format", "csv").out.strip().splitlines()
    assert csv_lines[0].startswith("trial_id,status") and len(csv_lines) == 5


def test_results_by_name_under_the_storage_path(run_cli, finished, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATH", str(finished.parent))
    assert run_cli("results", "done").code == 0


def test_export_writes_the_best_config_as_yaml_or_json(run_cli, finished, tmp_path):
    assert run_cli("export", finished, "--out", tmp_path / "best.yaml").code == 0
    exported = yaml.safe_load((tmp_path / "best.yaml").read_text())
    best = read_best(finished)
    assert exported["config"] == best["config"] and exported["value"] == pytest.approx(best["best_value"])
    assert os.path.isdir(exported["checkpoint"])
    assert run_cli("export", finished, "--out", tmp_path / "best.json").code == 0
    assert json.loads((tmp_path / "best.json").read_text())["config"] == best["config"]


def test_plot_writes_pngs(run_cli, finished, tmp_path):
    result = run_cli("plot", finished, "--out", tmp_path / "plots")
    paths = result.out.split()
    assert result.code == 0 and any(p.endswith("loss_per_epoch.png") for p in paths)
    assert any(p.endswith("lr_vs_best_loss.png") for p in paths)
    for path in paths:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tensorboard_serves_the_trials_on_loopback_and_stops_on_ctrl_c(finished):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "tensorboard", str(finished), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        announced = proc.stdout.readline()  # printed once TensorBoard answers on the port
        assert f"http://127.0.0.1:{port}/?smoothing=0#timeseries" in announced, announced
        runs, deadline = None, time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/runs", timeout=2) as response:
                    runs = json.loads(response.read())
                if runs:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        assert runs and len(runs) == 4, runs
        assert all(re.fullmatch(r"[0-9a-f]{8}_l1=\d+,l2=\d+,lr=[\d.e-]+,batch_size=\d+", run) for run in runs), runs
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "TensorBoard stopped" in out


def _children(pid: int) -> list[int]:
    return [int(child) for child in open(f"/proc/{pid}/task/{pid}/children").read().split()]


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("started_by", ["a terminal", "a script in the background"])
def test_ctrl_c_while_tensorboard_loads_stops_it_too(finished, started_by):
    """Also when it inherits SIGINT ignored, as a command a script starts with ``&`` does: Python then raises no
    KeyboardInterrupt by itself."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "tensorboard", str(finished), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_ignore_sigint if started_by != "a terminal" else None)  # fmt: skip
    children, deadline = [], time.time() + 30
    while not children and time.time() < deadline and proc.poll() is None:
        children = _children(proc.pid)
        time.sleep(0.01)
    assert children, "tuner tensorboard started no TensorBoard"
    proc.send_signal(signal.SIGINT)  # before TensorBoard has loaded: it takes seconds to import
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "TensorBoard stopped" in out and "http://" not in out
    for child in children:  # stopped and reaped, not left serving with no parent
        with pytest.raises(ProcessLookupError):
            os.kill(child, 0)


def test_wandb_without_a_key_logs_offline_and_says_how_to_sync(sweep, monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    result = sweep("--space", "cifar_small", "--scheduler", "fifo", "--num-samples", "2", "--wandb",
                   "--wandb-project", "tests", name="wb")  # fmt: skip
    assert result.code == 0, result.err[-3000:]
    assert "logging offline" in result.out and "wandb sync" in result.out
    runs = sorted((result.folder / "wandb").glob("offline-run-*"))
    assert len(runs) == 2
    logged = [record for run in runs for record in read_wandb_history(next(run.glob("run-*.wandb")))]
    assert {"loss", "accuracy", "training_iteration"} <= set(logged[-1]), logged[-1]
    assert len(logged) == 4  # two trials, two epochs each


def read_wandb_history(path):
    """The history rows of an offline wandb run file (LevelDB-style log of protobuf records)."""
    import struct

    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", "not a wandb run file"
    records, pending, pos, block = [], b"", 7, 32768
    while pos + 7 <= len(data):
        space = block - pos % block
        if space < 7:  # block trailer padding
            pos += space
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            pending = b""
            if record.WhichOneof("record_type") == "history":
                items = record.history.item
                records.append(
                    {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in items}
                )
    return records


def test_sweep_file_with_flag_override(sweep, tmp_path):
    config = tmp_path / "sweep.yaml"
    config.write_text("space: cifar_small\nscheduler: fifo\nnum_samples: 2\nsearcher: hyperopt\n")
    result = sweep("--config", config, "--num-samples", "1", name="fromfile")
    assert result.code == 0, result.err[-3000:]
    saved = yaml.safe_load((result.folder / "tuner_config.yaml").read_text())
    assert (saved["num_samples"], saved["searcher"], saved["scheduler"]) == (1, "hyperopt", "fifo")


def test_a_trial_that_keeps_failing_is_reported_and_the_sweep_goes_on(sweep, tmp_path):
    space = faulty_space(tmp_path / "fails.py", "{'lr': 0.01, 'batch_size': 8, 'l1': 16, 'l2': 16, "
                         f"'fault': tune.grid_search(['', 'crash@2:{tmp_path / 'marker'}'])}}")  # fmt: skip
    result = sweep("--space", space, "--scheduler", "fifo", "--searcher", "random", "--num-samples", "1", name="fails")
    assert result.code == 0, result.err[-3000:]
    best = read_best(result.folder)
    assert best["trials"] == 2 and len(best["failed"]) == 1
    assert "injected crash at epoch 2" in best["failed"][0]["error"]
    assert "failed:" in result.out and "injected crash at epoch 2" in result.out


@pytest.mark.parametrize("command", ["results", "export", "plot", "resume"])
def test_unknown_or_foreign_experiments_are_one_line_errors(run_cli, tmp_path, command):
    missing = run_cli(command, tmp_path / "nope")
    assert missing.code == 2 and missing.err.startswith("tuner: error: unknown experiment")
    by_name = run_cli(command, "no-such-sweep")  # a name is looked for under the storage path: it says which
    assert by_name.code == 2 and "a name is looked for under --storage-path (storage_path= from Python; else TUNER_STORAGE_PATH" in (
        by_name.err
    )
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    result = run_cli(command, foreign)
    assert result.code == 2 and "is not a tuner experiment" in result.err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("command", ["results", "export", "plot"])
def test_review_commands_read_a_storage_uri_like_a_folder(run_cli, finished, tmp_path, command):
    local = run_cli(command, finished, *(("--out", tmp_path / "a") if command == "plot" else ()))
    by_uri = run_cli(command, f"file://{finished}", *(("--out", tmp_path / "b") if command == "plot" else ()))
    assert local.code == 0 and by_uri.code == 0, by_uri.err
    if command == "plot":
        assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())
    else:
        assert by_uri.out.replace(f"file://{finished}", str(finished)) == local.out


def test_tensorboard_asks_for_a_local_copy_of_a_bucket(run_cli):
    result = run_cli("tensorboard", "s3://bucket/sweeps/exp")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "s3://bucket/sweeps/exp is in remote storage" in result.err and "copy it down" in result.err


def test_resume_by_uri_of_a_foreign_folder_is_a_one_line_error(run_cli, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = run_cli("resume", f"file://{tmp_path}")
    assert result.code == 2 and "is not a tuner experiment" in result.err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_corrupted_experiment_state_is_reported_and_left_alone(run_cli, finished, tmp_path):
    import shutil

    copy = tmp_path / "corrupt"
    shutil.copytree(finished, copy)
    state = sorted(copy.glob("experiment_state-*.json"))[-1]
    state.write_text("{ not json")
    before = sorted((p.relative_to(copy), p.stat().st_mtime_ns) for p in copy.rglob("*"))
    for command in ("results", "resume"):
        result = run_cli(command, copy)
        assert result.code == 2 and "is corrupted" in result.err and len(result.err.strip().splitlines()) == 1
    assert sorted((p.relative_to(copy), p.stat().st_mtime_ns) for p in copy.rglob("*")) == before
