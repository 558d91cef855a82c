"""Population Based Training: the worse trials copy a better trial's checkpoint and perturb its settings.

PBT changes parameters while trials train, so it perturbs only what can change mid-training: the space's
continuous domains and declared choices (learning rate, batch size). ``sample_from`` parameters and
constants stay as drawn (for the seed space: layer widths, which a checkpoint's shapes fix), and so does a
parameter whose name says it shapes the model (``layer_1_size``, ``hidden_dim``, ``num_layers``): a trial
continued from another's checkpoint with a new one would fail to load its tensors.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.schedulers.base import SchedulerContext, SchedulerEntry
from tuner.schedulers.pausing import warn_once_if_lost

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler
    from ray.tune.search.sample import Float, Integer

    from tuner.value_types import Space, Value

# Words in a parameter's name that say it shapes the model (Ray's own guide to Lightning searches layer_1_size
# with tune.choice, which a perturbation would turn into a checkpoint whose tensors no longer fit).
SHAPES_THE_MODEL = re.compile(
    r"width|hidden|layer|units|channel|depth|dim|heads|filter|kernel|neuron|embed", re.I
)
QUANTILE = 0.25
RESAMPLE_PROBABILITY = 0.25


def interval(max_epochs: int) -> int:
    """Epochs between perturbations: five rounds over a trial's life, at least one epoch apart."""
    return max(1, round(max_epochs / 5))


def mutations(params: Space) -> dict[str, list[Value] | Float | Integer]:
    """The parameters PBT may perturb, in the form Ray's PBT takes (a list of choices, or a domain)."""
    from ray.tune.search.sample import Categorical, Float, Integer

    out: dict[str, list[Value] | Float | Integer] = {}
    for name, value in params.items():
        if SHAPES_THE_MODEL.search(name):
            continue
        if isinstance(value, Categorical):
            out[name] = list(value.categories)
        elif isinstance(value, (Float, Integer)):
            out[name] = value
    return out


class WithinDomains:
    """PBT's explore step, kept inside the space: Ray's multiplies a value by 0.8 or 1.2 and leaves it there, so a
    width drawn from ``qrandint(8, 64, 8)`` became 77. Each perturbed number is brought back within its domain's
    bounds and onto its step (Ray's ``custom_explore_fn``, applied after its own perturbation; picklable, as Ray
    saves the scheduler)."""

    def __init__(self, domains: dict[str, Float | Integer]) -> None:
        self.domains = domains

    def __call__(self, config: dict[str, Value]) -> dict[str, Value]:
        from tuner.searchers.plan import within

        for name, domain in self.domains.items():
            value = config.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                config[name] = within(domain)(value)
        return config


class Pbt(SchedulerEntry):
    name = "pbt"
    reads = ()  # it perturbs at its own interval
    summary = (
        "population based training: the worse quarter copies a better trial's checkpoint and perturbs it"
    )
    needs_checkpoints = True
    runs_epochs_again = True
    # PBT explores by perturbing its population; Ray runs it only over random draws.
    requires_searcher = "random"
    takes_no_searcher = True
    checkpoints_to_keep = None  # a worse trial may copy a better one's latest checkpoint at any perturbation
    ends_at_max_epochs = True

    def build(self, ctx: SchedulerContext) -> TrialScheduler:
        from tuner.ray_compat.schedulers import RecordingPBT

        mutable = mutations(dict(ctx.params))
        if not mutable:
            raise UsageError("pbt has nothing to perturb: the space has no continuous or choice parameter")
        every = interval(ctx.max_epochs)
        return RecordingPBT(
            time_attr="training_iteration",
            perturbation_interval=every,
            burn_in_period=every,
            hyperparam_mutations=mutable,
            quantile_fraction=QUANTILE,
            resample_probability=RESAMPLE_PROBABILITY,
            custom_explore_fn=WithinDomains(
                {name: d for name, d in mutable.items() if not isinstance(d, list)}
            ),
            log_config=True,
            fate_log=ctx.fate_log,
            on_pause=functools.partial(warn_once_if_lost, scheduler="PBT", max_t=ctx.max_epochs),
        )

    def describe(self, ctx: SchedulerContext) -> list[str]:
        mutable = ", ".join(mutations(dict(ctx.params))) or "(nothing: pbt will refuse this space)"
        every = interval(ctx.max_epochs)
        shapes = [name for name in ctx.params if SHAPES_THE_MODEL.search(name)]
        kept = (
            f"; kept as drawn: {', '.join(shapes)} (by its name it shapes the model, which a checkpoint's tensors fix)"
            if shapes
            else ""
        )
        return [
            f"PBT: every {every} epoch(s), a trial in the worst {QUANTILE:.0%} continues from the checkpoint of one "
            f"in the best {QUANTILE:.0%} with perturbed {mutable} (x0.8 or x1.2 within its domain and step, a neighbouring choice, or "
            f"redrawn {RESAMPLE_PROBABILITY:.0%} of the time){kept}; every trial runs {ctx.max_epochs} epochs"
        ]
