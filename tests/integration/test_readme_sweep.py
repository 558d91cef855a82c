"""The README's first sweep, run as written (slow tier): what a newcomer types second, after --dry-run."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.unit.test_docs import README, fenced_lines

pytestmark = pytest.mark.slow


def first_sweep() -> list[str]:
    """The README's first `tuner sweep` that runs trials (not a --dry-run), as its arguments."""
    for line in fenced_lines(README.read_text()):
        args = shlex.split(line, comments=True)
        if args[:2] == ["tuner", "sweep"] and "--dry-run" not in args:
            return args[1:]
    raise AssertionError("the README shows no sweep to run")


def test_the_readmes_first_sweep_runs_as_written_and_ends_with_its_best_trial(run_cli, tmp_path):
    args = first_sweep()
    # only where it is written differs: a test keeps the user's ~/tuner_results as it was
    result = run_cli(*args, "--storage-path", tmp_path, "--name", "first")
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "best trial: " in result.out and "fates: " in result.out and "spent: " in result.out
    assert (Path(tmp_path) / "first" / "best_config.json").is_file()
    table = [line for line in result.out.splitlines() if line.startswith("| trial ")]
    assert table and " state " in table[-1] and " epoch " in table[-1]
