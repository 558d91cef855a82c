"""The README and the user guide (docs/, mkdocs.yml) stay true to the code.

The guide builds in strict mode (a broken link or heading fails), every `tuner ...` command shown in a code block
parses with the CLI as it is now (an unknown flag or a bad choice fails, the command named), and the README stays
short enough to read.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 250

FENCE = re.compile(r"^\s*(```|~~~)")


def fenced_lines(text: str) -> list[str]:
    """The lines inside fenced code blocks, with lines ending in a backslash joined to the next."""
    lines: list[str] = []
    fence: str | None = None
    pending = ""
    for raw in text.splitlines():
        mark = FENCE.match(raw)
        if fence is None:
            if mark:
                fence = mark.group(1)
            continue
        if mark and mark.group(1) == fence:
            fence, pending = None, ""
            continue
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        lines.append(line)
    return lines


def shown_commands() -> list[tuple[str, str]]:
    """(page, command) for every `tuner ...` line in a code block of the README and the guide."""
    return [
        (page.relative_to(ROOT).as_posix(), line)
        for page in PAGES
        for line in fenced_lines(page.read_text())
        if line.startswith("tuner ")
    ]


def parse(args: list[str]) -> None:
    """Parse a command line as `tuner` would, down to its last subcommand, without running anything."""
    command: click.Command = cli
    ctx = command.make_context("tuner", list(args))
    while isinstance(command, click.Group):
        protected = getattr(ctx, "_protected_args", None)  # click >= 8.2 keeps them here
        rest = [*(ctx.protected_args if protected is None else protected), *ctx.args]
        name, sub, rest = command.resolve_command(ctx, rest)
        assert sub is not None and name is not None
        command = sub
        ctx = command.make_context(name, rest, parent=ctx)


COMMANDS = shown_commands()


def test_the_pages_show_commands():
    pages = {page for page, _ in COMMANDS}
    assert "README.md" in pages and len(COMMANDS) >= 30, COMMANDS


@pytest.mark.parametrize(
    ("page", "command"),
    COMMANDS,
    ids=[f"{p}: {shlex.join(shlex.split(c, comments=True))}" for p, c in COMMANDS],
)
def test_every_shown_command_parses(page, command):
    args = shlex.split(command, comments=True)[1:]  # without `tuner` and a trailing comment
    try:
        parse(args)
    except click.exceptions.Exit as done:  # --help or --version: parsed, and nothing else to do
        assert done.exit_code == 0, f"{page}: {command}"
    except click.ClickException as bad:
        pytest.fail(f"{page}: `{command}` does not parse: {bad.format_message()}")


def test_the_readme_stays_short():
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines; move detail into docs/ (at most {README_MAX_LINES})"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs and mkdocs-material are not installed (pip install -e '.[dev]')",
)
def test_the_guide_builds_in_strict_mode(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
