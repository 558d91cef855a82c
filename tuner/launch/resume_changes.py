"""What ``tuner resume`` changes of a sweep's saved settings: more trials (``--num-samples``), a larger budget
(``--budget``), each refused in one line when the sweep cannot take it; and the check that a sweep has budget
left to continue on."""

from __future__ import annotations

import dataclasses

from tuner.errors import UsageError
from tuner.settings import SweepConfig


def extended(folder: str, config: SweepConfig, text: str) -> SweepConfig:
    """The saved settings with a larger budget: ``text`` is a new total, or ``+AMOUNT`` more than spent."""
    from tuner.launch.guards.budget import load_spent
    from tuner.limits import Budget

    wanted = Budget.parse(text)
    if config.budget is not None and Budget.parse(config.budget).kind != wanted.kind:
        saved = Budget.parse(config.budget)
        raise UsageError(
            f"--budget {text}: this sweep's budget is {saved.describe()}; extend it in the same unit, "
            f"e.g. --budget {saved.example_more()}"
        )
    spent = load_spent(folder).of(wanted.kind)
    total = spent + wanted.amount if wanted.extra else wanted.amount
    if total <= spent:
        raise UsageError(
            f"--budget {text}: the sweep has already spent {wanted.describe(spent)}; pass a larger "
            f"total, or +{text.lstrip('+')} for that much more"
        )
    return dataclasses.replace(config, budget=wanted.text_for(total))


def check_budget_left(folder: str, config: SweepConfig) -> None:
    """A sweep that spent its budget has nothing left to run: say how to extend it."""
    from tuner.launch.guards.budget import load_spent
    from tuner.limits import Budget

    if config.budget is None:
        return
    limit = Budget.parse(config.budget)
    if limit.spent_of(load_spent(folder)) >= limit.amount:
        raise UsageError(
            f"{folder} has spent its budget ({limit.describe()}); extend it with --budget "
            f"+AMOUNT (e.g. --budget {limit.example_more()}) or a larger total"
        )


def grown(folder: str, config: SweepConfig, num_samples: int) -> SweepConfig:
    """The saved settings with more trials, or a one-line error saying why the sweep cannot grow."""
    from tuner.ray_compat import can_grow

    if config.num_samples is not None and num_samples <= config.num_samples:
        raise UsageError(
            f"--num-samples {num_samples}: the sweep already has {config.num_samples}; pass more to grow it"
        )
    if not can_grow(folder):
        raise UsageError(
            f"{folder} crosses a grid or runs PBT, whose trials were all planned at the start; it "
            "cannot grow: start a new sweep instead"
        )
    return dataclasses.replace(config, num_samples=num_samples)
