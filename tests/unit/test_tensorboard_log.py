"""The driver's TensorBoard writer comes without torch, and torch stays importable after it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

SCRIPT = textwrap.dedent(
    """
    import sys

    from tuner.launch.watching.tensorboard_log import import_tensorboardx_without_torch

    import_tensorboardx_without_torch()
    assert "tensorboardX" in sys.modules and "torch" not in sys.modules, sorted(sys.modules)
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(sys.argv[1])
    writer.add_scalar("loss", 0.5, global_step=1)
    import torch  # a trainable's module, after the writer: imported as usual

    writer.add_scalar("loss", torch.tensor(0.25), global_step=2)  # tensorboardX takes a tensor by itself
    writer.close()
    print("torch", torch.__version__)
    """
)


def test_the_writer_imports_without_torch_and_torch_imports_after_it(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("torch ")
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("loss")] == [(1, 0.5), (2, 0.25)]


def _fate_written(folder, trial_id, unreadable=False):
    """One trial's run through the sweep's TensorBoard logger (stopped by a scheduler at epoch 3 of 10); the fate
    text its event file keeps."""
    from ray import tune
    from ray.tune.experiment import Trial
    from tensorboardX import SummaryWriter

    from tuner.folder.fates import FateLog
    from tuner.launch.watching.tensorboard_log import TensorBoardLogger

    FateLog(folder).record(trial_id, "stopped", "stopped early by ASHA at epoch 3 (rung 3)")
    logger = TensorBoardLogger(folder, {"lr": tune.uniform(0.01, 0.1)}, "loss", "min", max_epochs=10)
    if unreadable:  # the storage holding the fates is away past its timeout

        def away():
            raise OSError("the storage s3://sweeps could not be reached for 5 min (NETWORK_CONNECTION)")

        logger.fates.decisions = away
    trial = Trial("train", config={"lr": 0.05}, trial_id=trial_id, stub=True)
    events = f"{folder}/{trial_id}"
    logger._writers[trial], logger._last[trial] = SummaryWriter(events), {}
    for epoch in (1, 2, 3):
        result = {"training_iteration": epoch, "loss": 1.0 / epoch}
        trial.update_last_result(result)  # as Tune does before its loggers see the result
        logger.log_trial_result(epoch, trial, result)
    logger.log_trial_end(trial)
    accumulator = EventAccumulator(events, size_guidance={"tensors": 0})
    accumulator.Reload()
    [text] = accumulator.Tensors("fate/text_summary")
    return text.tensor_proto.string_val[0].decode()


def test_a_fate_that_cannot_be_read_is_written_as_not_known_never_guessed(tmp_path):
    """What the logger writes stays in the event file: without the scheduler's word, a trial it stopped at epoch 3
    must not read as ended by its own loop there."""
    folder = str(tmp_path / "exp")
    assert _fate_written(folder, "read").startswith("stopped early by ASHA at epoch 3")
    unknown = _fate_written(folder, "unread", unreadable=True)
    assert unknown == "fate unknown: the storage could not be read; tuner results reads it later"


def test_a_trial_left_paused_when_the_run_ends_keeps_every_epoch_it_reported(tmp_path):
    """A Ctrl-C ends Tune's run with trials paused, and no trial end comes for them: their writers must still write
    out the epochs in tensorboardX's queue (its flush does not), so the curve has the epoch before the stop."""
    from ray import tune
    from ray.tune.experiment import Trial
    from tensorboardX import SummaryWriter

    from tuner.launch.watching.tensorboard_log import TensorBoardLogger

    folder = str(tmp_path / "exp")
    logger = TensorBoardLogger(folder, {"lr": tune.uniform(0.01, 0.1)}, "loss", "min", max_epochs=10)
    trials = [Trial("train", config={"lr": 0.05}, trial_id=f"t{i}", stub=True) for i in range(2)]
    for trial in trials:  # as log_trial_start makes them, in a folder of the test's
        logger._writers[trial], logger._last[trial] = SummaryWriter(f"{folder}/{trial.trial_id}", flush_secs=30), {}
    import numpy as np

    for epoch in (1, 2, 3):
        for trial in trials:
            # numpy scalars, as a loop reports them without .item(): np.float32 is no float, np.int64 no int
            result = {"training_iteration": epoch, "loss": np.float32(1.0 / epoch), "n": np.int64(epoch), "ok": True}
            trial.update_last_result(result)
            logger.log_trial_result(epoch, trial, result)
    logger.on_experiment_end(trials)
    assert not logger._writers
    for trial in trials:
        accumulator = EventAccumulator(f"{folder}/{trial.trial_id}")
        accumulator.Reload()
        assert [e.step for e in accumulator.Scalars("loss")] == [1, 2, 3], trial.trial_id
        assert [e.value for e in accumulator.Scalars("n")] == [1, 2, 3] and "ok" not in accumulator.Tags()["scalars"]


def test_events_the_full_storage_refuses_stay_where_they_are_said_in_words(tmp_path, monkeypatch, caplog):
    """pyarrow reports a full disk as "[Errno 28] Error writing bytes to file. Detail: ...": the warning says what it
    means, as every other refusal of the storage does, and the sweep goes on."""
    from types import SimpleNamespace

    from pyarrow import fs

    from tuner.launch.watching import tensorboard_log

    local, stored = tmp_path / "staging", tmp_path / "storage"
    local.mkdir()
    stored.mkdir()
    (local / "events.out.tfevents.1.host").write_bytes(b"events")

    def refused(*args, **kwargs):
        raise OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(fs, "copy_files", refused)
    trial = SimpleNamespace(trial_id="t1", local_path=str(local), path=str(stored), storage=SimpleNamespace())
    trial.storage.storage_filesystem = fs.LocalFileSystem()
    with caplog.at_level("WARNING", logger=tensorboard_log.log.name):
        tensorboard_log._copy_events_to_storage(trial)  # type: ignore[arg-type]
    [said] = [r.getMessage() for r in caplog.records]
    assert said == f"trial t1's last TensorBoard events stay in {local}: the storage is full (no space left on device)"
