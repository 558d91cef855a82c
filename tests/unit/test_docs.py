"""The README and the user guide (docs/, mkdocs.yml) stay true to the code.

The guide builds in strict mode (a broken link or heading fails), every `tuner ...` command shown in a code block
parses with the CLI as it is now (an unknown flag or a bad choice fails, the command named), and the README stays
short enough to read. Every fenced shell and Python block runs: the Python blocks that sweep nothing here, the
shell blocks and those that sweep in tests/integration/test_docs_run.py (slow tier), on the synthetic set with a
tiny budget (``small`` says how a command is made small), so a snippet that fails fails CI.

A block that cannot run here says so in an HTML comment just above it, which the rendered page does not show:

- ``<!-- docs-test: skip: REASON -->``: the block is not run (a cluster, the network, a long run, a change to
  the machine); ``<!-- docs-test: skip PREFIX: REASON -->``: nor are its lines that start with PREFIX;
- ``<!-- docs-test: gpu -->`` (or ``gpu PREFIX`` for some lines): run only on a machine with a CUDA GPU, under
  the ``gpu`` marker;
- ``<!-- docs-test: file NAME -->``: the block is the file NAME, which the pages' commands use (written into the
  folder each page's commands run in).

A page's Python blocks run in order in one namespace, as a reader pastes them into one session.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
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

MARK = re.compile(r"^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
OPENING = re.compile(r"^(\s*)(```|~~~)\s*([\w+-]*)")
LANGUAGES = {"bash": "shell", "sh": "shell", "shell": "shell", "python": "python"}
# Lines a reader types that the tests have done already: they run inside the repository's .venv
DONE_ALREADY = {". .venv/bin/activate", "source .venv/bin/activate"}

# How a command is made small for the tests: each flag's value replaced by this one (and --num-samples and
# --max-epochs added to a sweep that leaves them to the defaults, --synthetic-size to one on the synthetic set).
SMALL = {"--num-samples": "2", "--max-epochs": "2", "--synthetic-size": "200"}
GROWN = "3"  # `tuner resume EXP --num-samples N` grows the two trials of a small sweep by one
SWEEPING = ("sweep", "submit")  # the commands that start a sweep


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: where it starts, its language, its text and the marks above it."""

    page: str
    line: int
    lang: str
    text: str
    marks: tuple[str, ...]

    @property
    def kind(self) -> str | None:
        """``shell`` or ``python`` for a block that runs; None for output, a layout or a config file."""
        return LANGUAGES.get(self.lang)

    @property
    def file(self) -> str | None:
        return next((m.split(None, 1)[1] for m in self.marks if m.startswith("file ")), None)

    def where(self) -> str:
        return f"{self.page}:{self.line}"

    def skipped(self, line: str = "") -> str | None:
        """Why the block, or this line of it, is not run here; None when it runs."""
        for mark in self.marks:
            if mark.startswith("skip"):
                prefix, _, reason = mark[len("skip") :].partition(":")
                if not prefix.strip() or line.startswith(prefix.strip()):
                    return reason.strip()
        return None

    def on_gpu(self, line: str = "") -> bool:
        """Whether the block, or this line of it, needs a CUDA GPU."""
        return any(
            m == "gpu" or (m.startswith("gpu ") and line.startswith(m[4:].strip())) for m in self.marks
        )

    def commands(self) -> list[str]:
        """A shell block's command lines: continuations joined, blank lines and comments left out."""
        return [line for line in fenced_lines(f"```\n{self.text}\n```") if line and not line.startswith("#")]


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, with the ``docs-test`` marks in the comments just above it."""
    found: list[Block] = []
    lines = page.read_text().splitlines()
    marks: list[str] = []
    i = 0
    while i < len(lines):
        mark = MARK.match(lines[i])
        opening = OPENING.match(lines[i])
        if mark:
            marks.append(mark.group(1))
        elif opening:
            indent, fence, lang = opening.groups()
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence)
            text = "\n".join(line[len(indent) :] for line in lines[i + 1 : end])
            found.append(Block(page.relative_to(ROOT).as_posix(), i + 1, lang, text, tuple(marks)))
            marks, i = [], end
        elif lines[i].strip():
            marks = []  # a mark belongs to the block right below it
        i += 1
    return found


BLOCKS = [b for page in PAGES for b in blocks(page)]
FILES = {b.file: b.text + "\n" for b in BLOCKS if b.file}


def sweeps_here(block: Block) -> bool:
    """Whether running the block starts a sweep (those run in the slow tier, on a real Ray)."""
    if block.kind == "python":
        return "tuner.sweep(" in block.text
    return block.kind == "shell"


def small(args: list[str]) -> list[str]:
    """A `tuner` command (without `tuner`) as the tests run it: a sweep's samples, epochs and synthetic set
    made ``SMALL`` (added where the command leaves them to the defaults), a resume that grows a sweep growing
    it by one trial; every other argument as written."""
    args = list(args)
    command = args[0] if args else ""
    if command == "resume":
        wanted, add = {"--num-samples": GROWN}, False
    elif command in SWEEPING:
        wanted, add = dict(SMALL), True
        if "synthetic" not in args:  # the set's size means something on the synthetic set only
            del wanted["--synthetic-size"]
    else:
        return args
    for flag, value in wanted.items():
        if flag in args:
            args[args.index(flag) + 1] = value
        elif add:
            args += [flag, value]
    return args


def run_python(block: Block, namespace: dict) -> None:
    """Run a Python block in a page's namespace, a sweep in it made small as ``small`` makes a command: its
    ``num_samples=`` and ``max_epochs=`` given ``SMALL``'s values."""

    def made_small(line: str) -> str:
        if "tuner.sweep(" not in line:
            return line
        return re.sub(
            r"\b(num_samples|max_epochs)=\d+",
            lambda m: f"{m.group(1)}={SMALL['--' + m.group(1).replace('_', '-')]}",
            line,
        )

    text = "\n".join(made_small(line) for line in block.text.splitlines())
    exec(compile(text, block.where(), "exec"), namespace)


def test_every_shell_line_runs_here_or_its_block_says_why_not():
    """A shell line is a `tuner` command, one the tests have done already, or marked: nothing is left out
    silently."""
    unmarked = [
        f"{b.where()}: `{line}`"
        for b in BLOCKS
        if b.kind == "shell"
        for line in b.commands()
        if not line.startswith("tuner ")
        and line not in DONE_ALREADY
        and b.skipped(line) is None
        and not b.on_gpu(line)
    ]
    assert not unmarked, (
        "shell lines the docs test cannot run; run them through `tuner`, or mark the block "
        f"(<!-- docs-test: skip: REASON -->): {unmarked}"
    )
    reasons = [b.skipped(line) for b in BLOCKS for line in ["", *b.commands()] if b.skipped(line) is not None]
    assert all(reasons), "every skip says why"


def test_every_mark_is_one_the_docs_test_knows():
    known = ("skip", "gpu", "file ")
    odd = [f"{b.where()}: {m}" for b in BLOCKS for m in b.marks if not m.startswith(known)]
    assert not odd, odd
    assert {"my_space.py"} <= set(FILES), sorted(FILES)


PYTHON_HERE = sorted(
    {b.page for b in BLOCKS if b.kind == "python" and not sweeps_here(b) and not b.skipped()}
)


@pytest.mark.parametrize("page", PYTHON_HERE)
def test_every_python_block_runs(page, tmp_path, monkeypatch):
    """Each Python block of a page that starts no sweep runs, in order, in one namespace."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_page"}
    for block in (b for b in BLOCKS if b.page == page and b.kind == "python"):
        if block.skipped() is None and not block.on_gpu():
            run_python(block, namespace)


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


def test_the_test_times_the_pages_give_are_benchmarks_figures():
    """The times of `make test` and `make test-fast` are BENCHMARKS.md's, rounded to minutes, never retyped."""
    benchmarks = (ROOT / "BENCHMARKS.md").read_text()
    whole = re.search(r"^\| The whole suite, two pytest processes \| (\d+) min (\d+) s", benchmarks, re.M)
    fast = re.search(
        r"^\| The fast test tier, two pytest processes \| [\d,]+ passed in (\d+) s", benchmarks, re.M
    )
    assert whole and fast, "BENCHMARKS.md's rows of the test times moved"
    minutes = {"whole": round(int(whole[1]) + int(whole[2]) / 60), "fast": round(int(fast[1]) / 60)}
    for page in (README, ROOT / "docs" / "getting-started.md", ROOT / "docs" / "development.md"):
        said = re.findall(r"about (\d+) minutes on 2 cores", page.read_text())
        assert said and set(map(int, said)) <= set(minutes.values()), (page.name, said, minutes)
    assert f"about {minutes['whole']} minutes" in README.read_text()
    assert f"about {minutes['fast']} minutes" in README.read_text()
