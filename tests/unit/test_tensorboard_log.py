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
