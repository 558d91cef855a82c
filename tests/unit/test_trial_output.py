"""A trial's output goes to its own files: Python prints, raw writes, child processes; the terminal gets it back."""

from __future__ import annotations

import os
import subprocess
import sys

from tuner.launch.trial.trial_output import captured
from tuner.review.output import failure_tail, tail


def test_everything_a_trial_prints_goes_to_its_files_and_the_process_gets_its_streams_back(tmp_path, capfd):
    folder = tmp_path / "trial"
    with captured(folder):
        print("epoch 1 batch 7 loss 0.5")
        print("a warning", file=sys.stderr)
        os.write(1, b"from C code\n")
        subprocess.run([sys.executable, "-c", "print('a DDP rank says hi')"], check=True)
    print("back on the terminal")
    assert (folder / "stdout.log").read_text().splitlines() == ["epoch 1 batch 7 loss 0.5", "from C code",
                                                               "a DDP rank says hi"]  # fmt: skip
    assert (folder / "stderr.log").read_text() == "a warning\n"
    seen = capfd.readouterr()
    assert "back on the terminal" in seen.out and "epoch 1" not in seen.out and "a warning" not in seen.err


def test_a_resumed_trial_appends(tmp_path):
    for epoch in (1, 2):
        with captured(tmp_path):
            print(f"epoch {epoch}")
    assert (tmp_path / "stdout.log").read_text() == "epoch 1\nepoch 2\n"


def test_a_run_that_unwinds_after_the_next_began_leaves_the_next_ones_files_in_place(tmp_path, capfd):
    """A reused actor: trial A's thread unwinds after trial B took the streams; B keeps them until it ends."""
    first, second = captured(tmp_path / "a"), captured(tmp_path / "b")
    first.__enter__()
    print("from a")
    second.__enter__()
    first.__exit__(None, None, None)
    print("from b, after a unwound")
    second.__exit__(None, None, None)
    print("terminal again")
    assert (tmp_path / "a" / "stdout.log").read_text() == "from a\n"
    assert (tmp_path / "b" / "stdout.log").read_text() == "from b, after a unwound\n"
    assert "terminal again" in capfd.readouterr().out


def test_echo_keeps_the_files_and_passes_every_line_on(tmp_path, capfd):
    with captured(tmp_path, echo=True):
        print("shown and kept")
    assert (tmp_path / "stdout.log").read_text() == "shown and kept\n"
    assert "shown and kept" in capfd.readouterr().out


def test_outside_a_trial_nothing_is_captured(capfd):
    with captured(None):
        print("plain")
    assert capfd.readouterr().out == "plain\n"


def test_a_failed_trials_tail_shows_a_progress_bars_last_state_and_names_its_files(tmp_path):
    (tmp_path / "stdout.log").write_text("".join(f"step {i}\n" for i in range(100)))
    (tmp_path / "stderr.log").write_text(" 10%|#   |\r 50%|####|\r 90%|########|\nTraceback: boom\n")
    lines = failure_tail(str(tmp_path), lines=3)
    assert lines == [f"its last 3 line(s) of stdout.log ({tmp_path / 'stdout.log'}):", "  step 97", "  step 98",
                     "  step 99", f"its last 3 line(s) of stderr.log ({tmp_path / 'stderr.log'}):", "   50%|####|",
                     "   90%|########|", "  Traceback: boom"]  # fmt: skip
    assert tail("a\r\rb\n\n", 5) == ["a", "b"]


def test_a_trial_that_printed_nothing_shows_no_tail(tmp_path):
    assert failure_tail(str(tmp_path)) == []
