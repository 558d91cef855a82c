"""Every fenced shell block of the README and the guide runs as written (slow tier), made small by
``tests.unit.test_docs.small``, and so does every Python block that starts a sweep; the marks and the rules are
tests/unit/test_docs.py's. A page's blocks run in order, in a folder of their own that holds the pages' files
(``<!-- docs-test: file NAME -->``), on the session's Ray, each command through the real entry point.

What a command names that only a reader's machine has is given the test's own:

- ``EXP``, ``EXP1``: the experiment the page's last sweep made; on a page that makes none, a copy of one small
  sweep of cifar_small on the synthetic set, made once for all pages; ``EXP2``: a copy of that experiment beside
  it (tuner compare refuses one sweep given twice);
- an experiment's name as tuner makes it (``cifar_small-freeze-thaw-curves-20261123-101500``, with or without
  ``~/tuner_results/``): the experiment of that space, scheduler and searcher the page made, whatever its time
  stamp; a name no sweep of the page made fails the test, so the docs show only names tuner really produces;
  ``./results/demo-TIMESTAMP`` (make demo's folder) is ``EXP``;
- a trial's id (8 hex digits): ``EXP``'s best trial;
- ``--storage-path`` (a local one): the folder the page's experiments go to, ``TUNER_STORAGE_PATH`` too.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.unit.test_docs import BLOCKS, DONE_ALREADY, FILES, Block, run_python, small, sweeps_here

pytestmark = pytest.mark.slow

STAMPED = re.compile(r"^(?:~/tuner_results/|\./results/)?([\w.]+(?:-[\w.]+)*?)-(\d{8}-\d{6})$")
TRIAL_ID = re.compile(r"^[0-9a-f]{8}$")
PLACEHOLDERS = {"EXP", "EXP1", "EXP2", "EXPERIMENT"}

PAGES_RUN = sorted({b.page for b in BLOCKS if sweeps_here(b) and b.skipped() is None and not b.on_gpu()})


# A sweep made small is run once in the module: the same command on another page (the README's first sweep is
# also the guide's and `tuner --help`'s) gets a copy of its experiment and its output. Keyed by its words.
SWEPT: dict[tuple[str, ...], tuple[Path, str]] = {}


def first_sweep() -> list[str]:
    """The README's first `tuner sweep` that runs trials (not a --dry-run), as its arguments."""
    readme = next(
        b for b in BLOCKS if b.page == "README.md" and b.kind == "shell" and "tuner sweep" in b.text
    )
    for line in readme.commands():
        args = shlex.split(line, comments=True)
        if args[:2] == ["tuner", "sweep"] and "--dry-run" not in args and readme.skipped(line) is None:
            return args[1:]
    raise AssertionError("the README shows no sweep to run")


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """The README's first sweep, made small: the pages that make no experiment of their own review, resume
    and grow a copy of it."""
    import io
    from contextlib import redirect_stdout

    from tuner.cli import main

    storage = tmp_path_factory.mktemp("docs-shared")
    args = small(first_sweep())
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            main([*args, "--storage-path", str(storage)])
    except SystemExit as done:
        assert done.code == 0, out.getvalue()[-2500:]
    (folder,) = storage.iterdir()  # named as tuner names it, as the pages show it
    SWEPT[tuple(sorted(args))] = (folder, out.getvalue())
    return folder


class Page:
    """A page's blocks run in order, each command with the reader's names given the test's own."""

    def __init__(self, page: str, folder: Path, shared: Path, run_cli) -> None:
        self.page, self.folder, self.shared, self.run_cli = page, folder, shared, run_cli
        self.storage = folder / "results"
        self.made: list[Path] = []  # the experiments the page's sweeps made, in order
        self.outputs: list[str] = []
        self._copy: Path | None = None

    def exp(self) -> Path:
        if self.made:
            return self.made[-1]
        if self._copy is None:
            self._copy = self.storage / "copied"
            shutil.copytree(self.shared, self._copy)
        return self._copy

    def given(self, word: str) -> str:
        """A word of a command with the reader's names given the test's own (the module's docstring)."""
        if word == "EXP2":
            second = self.storage / f"{self.exp().name}-second"
            if not second.exists():
                shutil.copytree(self.exp(), second)
            return str(second)
        if word in PLACEHOLDERS:
            return str(self.exp())
        stamped = STAMPED.match(word)
        if stamped:
            if word.startswith("./results/demo-"):
                return str(self.exp())
            stem = stamped.group(1)
            found = [p for p in self.made if STAMPED.match(p.name) and STAMPED.match(p.name).group(1) == stem]
            assert found, (
                f"{self.page} names {word}, which no sweep of the page made: {[p.name for p in self.made]}"
            )
            return str(found[-1])
        if TRIAL_ID.match(word):
            from tuner.experiment import load

            return load(str(self.exp())).best_trial().trial_id
        return word

    def shell(self, block: Block, gpu: bool = False) -> None:
        for line in block.commands():
            if line in DONE_ALREADY or block.skipped(line) is not None or block.on_gpu(line) != gpu:
                continue
            args = small([self.given(w) for w in shlex.split(line, comments=True)[1:]])
            if "--storage-path" in args and "://" not in args[args.index("--storage-path") + 1]:
                args[args.index("--storage-path") + 1] = str(self.storage)
            self.run(block, line, args)

    def run(self, block: Block, line: str, args: list[str]) -> None:
        key = tuple(sorted(args))
        if args[0] == "sweep" and key in SWEPT:  # run on another page already: a copy of what it made
            folder, out = SWEPT[key]
            shutil.copytree(folder, self.storage / folder.name)
            self.made.append(self.storage / folder.name)
            self.outputs.append(out)
            return
        before = set(self.storage.iterdir())
        result = self.run_cli(*args)
        self.outputs.append(result.out)
        assert result.code == 0, (
            f"{block.where()}: `{line}` ran as `tuner {shlex.join(args)}` and failed:\n"
            + (result.out[-2500:] + result.err[-2500:])
        )
        made = self._new(before)
        if args[0] == "sweep" and len(made) == 1:
            SWEPT[key] = (made[0], result.out)

    def python(self, block: Block, namespace: dict) -> None:
        before = set(self.storage.iterdir())
        run_python(block, namespace)
        self._new(before)

    def _new(self, before: set[Path]) -> list[Path]:
        """The experiments made since ``before`` (the storage's folders then), now the page's latest."""
        made = sorted(p for p in set(self.storage.iterdir()) - before if (p / "tuner_config.yaml").is_file())
        self.made += made
        return made


@pytest.fixture
def page_folder(tmp_path, monkeypatch):
    """A folder of the reader's own: the pages' files in it, the experiments under its results/."""
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATH", str(tmp_path / "results"))
    (tmp_path / "results").mkdir()
    return tmp_path


@pytest.mark.parametrize("page", PAGES_RUN)
def test_every_block_of_the_page_runs_as_written(page, page_folder, shared, run_cli):
    runner = Page(page, page_folder, shared, run_cli)
    namespace: dict = {"__name__": "docs_page"}
    for block in (b for b in BLOCKS if b.page == page and b.skipped() is None and not b.on_gpu()):
        if block.kind == "shell":
            runner.shell(block)
        elif block.kind == "python":
            runner.python(block, namespace)
    if page == "README.md":  # the first sweep a newcomer runs ends with its table, its best trial, its fates
        first = next(out for out in runner.outputs if "best trial: " in out)
        assert "fates: " in first and "spent: " in first
        header = [line for line in first.splitlines() if line.startswith("| trial ")][-1]
        assert " loss (best) " in header and " loss (last) " in header and " epoch " in header


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


GPU_PAGES = sorted(
    {b.page for b in BLOCKS if b.kind == "shell" and any(b.on_gpu(line) for line in b.commands())}
)


@pytest.mark.gpu
@pytest.mark.skipif(not _cuda(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("page", GPU_PAGES)
def test_the_pages_gpu_commands_run_on_a_gpu(page, page_folder, shared, run_cli):
    runner = Page(page, page_folder, shared, run_cli)
    for block in (b for b in BLOCKS if b.page == page and b.kind == "shell" and b.skipped() is None):
        runner.shell(block, gpu=True)


def test_the_help_texts_examples_run(page_folder, shared, run_cli):
    """`tuner --help` opens with a few commands: each runs as shown (its sweep made small), on a fresh machine
    too (no CIFAR-10 to read)."""
    from click.testing import CliRunner

    from tuner.cli import cli

    text = CliRunner().invoke(cli, ["--help"]).output
    examples = [line.strip() for line in text.splitlines() if line.strip().startswith("tuner ")]
    assert examples and examples[0].startswith("tuner sweep "), text
    help_page = Block("tuner --help", 1, "bash", "\n".join(examples), ())
    runner = Page("tuner --help", page_folder, shared, run_cli)
    runner.shell(help_page)
    assert len(runner.outputs) == len(examples) >= 4, examples
