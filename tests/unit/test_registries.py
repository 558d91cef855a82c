"""One entry per algorithm: the CLI's choices, --help and the guide's tables all come from the registries."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner import schedulers, searchers
from tuner.cli import cli
from tuner.objectives import LOSS

GUIDE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "searchers-schedulers.md"
TABLES = GUIDE_PAGE.read_text()


@pytest.mark.parametrize("registry", [searchers, schedulers], ids=["searchers", "schedulers"])
def test_every_entry_is_in_the_guides_table_with_its_summary(registry):
    for name, entry in registry.REGISTRY.items():
        rows = [line for line in TABLES.splitlines() if line.startswith(f"| `{name}`")]
        assert rows, f"docs/searchers-schedulers.md has no row for {name}"
        assert any(entry.summary in row for row in rows), f"docs/searchers-schedulers.md's row for {name} is not its summary"


def test_the_cli_offers_exactly_the_registered_names():
    import click

    sweep = cli.get_command(click.Context(cli), "sweep")  # loaded when asked for, as click asks
    choices = {p.name: list(p.type.choices) for p in sweep.params if p.name in ("searcher", "scheduler")}
    assert choices == {"searcher": list(searchers.CHOICES), "scheduler": list(schedulers.CHOICES)}


def test_each_scheduler_describes_its_plan_and_bounds_its_epochs():
    ctx = schedulers.SchedulerContext(max_epochs=10, objectives=LOSS, params={}, num_samples=16)
    for name in schedulers.NAMES:
        entry = schedulers.entry(name)
        lines = entry.describe(ctx)
        assert lines and lines[0]
        assert 0 < entry.worst_case_epochs(ctx) <= 16 * 10, name


def test_hyperband_brackets_follow_rays_formula():
    from tuner.schedulers.brackets import brackets, fill

    assert brackets(10) == [(4, [10]), (4, [5, 10]), (6, [2, 5, 10]), (8, [1, 2, 5, 10])]  # every bracket reaches 10
    assert fill(6, 10) == [(4, 4, [10]), (2, 4, [5, 10])]


def test_the_settings_default_scheduler_is_the_registrys():
    from tuner.settings import DEFAULT_SCHEDULER

    assert DEFAULT_SCHEDULER == schedulers.DEFAULT


def test_only_a_searcher_that_learns_nothing_gets_a_trial_waiting_per_slot():
    """What a sweep tells Tune (tuner/ray_compat/waiting.py): a model proposes as results come in instead."""
    from ray import tune

    from tuner.algorithms import at_once, trials_waiting

    drawn = searchers.plan_search({"lr": tune.loguniform(1e-4, 1e-1)}, "random", 0)
    crossed = searchers.plan_search({"lr": tune.grid_search([0.1, 0.01])}, "random", 0)
    assert trials_waiting("asha", "random", drawn, 4, at_once("asha", "random", 4)) == 4
    assert trials_waiting("hyperband", "random", drawn, 4, at_once("hyperband", "random", 4)) == 4
    assert trials_waiting("asha", "random", drawn, 1, None) is None  # one slot: nothing to start together
    assert trials_waiting("asha", "random", crossed, 4, None) is None  # Tune's variant generator: its own rule
    assert trials_waiting("pbt", "random", drawn, 4, None) is None  # PBT runs over that generator too
    assert trials_waiting("asha", "random", drawn, 4, 2) == 2  # --max-concurrent: the limit, on every Ray
    model = searchers.plan_search({"lr": tune.loguniform(1e-4, 1e-1)}, "optuna", 0)
    assert trials_waiting("hyperband", "optuna", model, 4, at_once("hyperband", "optuna", 4)) is None
    assert trials_waiting("asha", "optuna", model, 4, at_once("asha", "optuna", 4)) == at_once("asha", "optuna", 4)
