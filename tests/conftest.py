"""Shared helpers: run the CLI in-process and capture what a user would see."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tuner.cli import main


@dataclass
class CliRun:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys):
    """Call ``tuner ARGS`` through the real entry point (error mapping included) and capture its output."""

    def run(*args: str) -> CliRun:
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        captured = capsys.readouterr()
        return CliRun(code, captured.out, captured.err)

    return run
