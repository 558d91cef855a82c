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


@pytest.fixture(autouse=True, scope="session")
def _storage_outside_home(tmp_path_factory):
    """No test writes into the user's ~/tuner_results, even one that expected an error and got a sweep."""
    import os

    before = os.environ.get("TUNER_STORAGE_PATH")
    os.environ["TUNER_STORAGE_PATH"] = str(tmp_path_factory.mktemp("default-storage"))
    yield
    if before is None:
        os.environ.pop("TUNER_STORAGE_PATH", None)
    else:
        os.environ["TUNER_STORAGE_PATH"] = before


@pytest.fixture(autouse=True, scope="session")
def _no_wandb_leftovers_in_tmp():
    """wandb makes temporary media and artifact folders at import and never removes them from a process
    that is killed (Ray's logging actor): remove the ones this test session made."""
    import shutil
    import tempfile
    from pathlib import Path

    def leftovers() -> set[Path]:
        root = Path(tempfile.gettempdir())
        return {p for pattern in ("*wandb-media", "*wandb-artifacts") for p in root.glob(pattern)}

    before = leftovers()
    yield
    for path in leftovers() - before:
        shutil.rmtree(path, ignore_errors=True)


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


def start_test_ray(**resources) -> None:
    """A fresh local Ray as the tests use it: 2 CPUs (plus ``resources``, e.g. a logical ``num_gpus``)."""
    import ray

    from tuner.launch.placement.cluster import prepare_environment

    prepare_environment()
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        logging_level="WARNING",
        logging_config=ray.LoggingConfig(log_level="WARNING"),
        **resources,
    )


@pytest.fixture(scope="session")
def ray_session():
    """One real local Ray for the whole session, for the tiers that run sweeps (integration, conformance) and the
    unit tests whose dry run joins it."""
    import ray

    start_test_ray()
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright, one per test worker; None where Chromium is missing
    (a test that can check something without it goes on)."""
    import shutil

    if shutil.which("chromium") is None:
        yield None
        return
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def open_report(browser):
    """Open a report file at a width and wait until plotly has drawn ``charts`` figures; returns the page and
    the console errors and uncaught exceptions it raised (waiting on the drawing, never on a clock, so a busy
    machine is only slower)."""
    if browser is None:
        pytest.skip("needs Debian's chromium (.ci/run installs it)")
    pages = []

    def open_(path, width: int = 1300, charts: int = 1):
        page = browser.new_page(viewport={"width": width, "height": 900})
        pages.append(page)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"file://{path}", wait_until="load", timeout=120_000)
        page.wait_for_function(f"document.querySelectorAll('.main-svg').length >= {charts}", timeout=120_000)
        return page, errors

    yield open_
    for page in pages:
        page.close()
