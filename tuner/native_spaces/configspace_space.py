"""A ConfigSpace ``ConfigurationSpace`` (as Ray's TuneBOHB takes it) as tuner's parameters.

Uniform floats and integers (on a log scale or not), normal floats, categorical and ordinal choices become Tune
domains; a constant stays in the config only. A parameter under an ``EqualsCondition`` or ``InCondition`` on a
categorical or ordinal that is always active is asked only where its parent takes those values. The trainable
gets what a ``Configuration`` holds: the active parameters and the constants, nothing inactive. Forbidden
clauses, conjunctions of conditions and conditions on numeric parents are one line, with the alternative.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.native_spaces.distributions import BranchDraw, Dist
from tuner.native_spaces.translated import Translated
from tuner.nesting import flatten, unflatten
from tuner.values import plain

if TYPE_CHECKING:
    from ConfigSpace import (
        ConfigurationSpace,
        EqualsCondition,
        InCondition,
    )
    from ConfigSpace.conditions import ConditionLike
    from ConfigSpace.hyperparameters import Hyperparameter

    from tuner.value_types import Config, ConfigDraft, SpaceEntry, Value

ALTERNATIVE = "write the space with Tune domains, or as an Optuna define-by-run function"


def translate_configspace(space: ConfigurationSpace) -> Translated:
    if list(getattr(space, "forbidden_clauses", []) or []):
        raise UsageError(
            f"space params: the ConfigurationSpace has forbidden clauses, which tuner does not follow; {ALTERNATIVE}"
        )
    from ConfigSpace import Constant

    hyperparameters = list(space.values())
    constants = {h.name: plain(h.value) for h in hyperparameters if type(h) is Constant}
    dists = {h.name: _dist(h) for h in hyperparameters if h.name not in constants}
    conditions = {str(c.child.name): c for c in map(_followed, space.conditions)}
    params: dict[str, SpaceEntry] = {}
    for name, dist in dists.items():
        condition = conditions.get(name)
        if condition is None:
            params[name] = dist.domain()
            continue
        parent = condition.parent.name
        if parent in conditions or dists.get(parent, Dist("", ())).kind != "choice":
            raise UsageError(
                f"space params: ConfigSpace parameter {name!r} is conditional on {parent!r}, which is not an "
                f"always-active categorical; tuner follows one level of conditions on a choice ({ALTERNATIVE})"
            )
        values = condition.values if hasattr(condition, "values") else [condition.value]
        from ray import tune

        params[name] = tune.sample_from(BranchDraw(parent, {plain(v): dist for v in values}))
    if not params:
        raise UsageError("space params is a ConfigurationSpace with nothing to search")
    return Translated(
        params=params,
        shape=ConfigurationShape(
            constants, {c: (cond.parent.name, _values(cond)) for c, cond in conditions.items()}
        ),
        form="a ConfigSpace ConfigurationSpace",
    )


class ConfigurationShape:
    """A trial's config as a ``Configuration`` holds it: active parameters and constants."""

    def __init__(
        self, constants: Mapping[str, Value], conditions: Mapping[str, tuple[str, list[Value]]]
    ) -> None:
        self.constants = dict(constants)
        self.conditions = dict(conditions)

    def __call__(self, config: Config) -> ConfigDraft:
        flat = flatten(config)
        active = {
            name: value
            for name, value in flat.items()
            if name not in self.conditions or flat.get(self.conditions[name][0]) in self.conditions[name][1]
        }
        return unflatten({**active, **self.constants})


def _followed(condition: ConditionLike) -> EqualsCondition | InCondition:
    """The condition, of a kind tuner follows; any other is refused in a line that names it."""
    from ConfigSpace import EqualsCondition, InCondition

    if not hasattr(condition, "child"):  # AndConjunction / OrConjunction
        raise UsageError(
            f"space params: the ConfigurationSpace has a conjunction of conditions ({condition}), which tuner does "
            f"not follow; {ALTERNATIVE}"
        )
    if type(condition) is EqualsCondition or type(condition) is InCondition:
        return condition
    raise UsageError(
        f"space params: ConfigSpace {type(condition).__name__} on {condition.child.name!r} is not followed; tuner "
        f"follows EqualsCondition and InCondition on a categorical ({ALTERNATIVE})"
    )


def _values(condition: EqualsCondition | InCondition) -> list[Value]:
    return [plain(v) for v in (condition.values if hasattr(condition, "values") else [condition.value])]


def _dist(h: Hyperparameter) -> Dist:
    """Exact kinds only: a subclass of one of these may draw otherwise, and is refused."""
    from ConfigSpace import (
        CategoricalHyperparameter,
        NormalFloatHyperparameter,
        OrdinalHyperparameter,
        UniformFloatHyperparameter,
        UniformIntegerHyperparameter,
    )

    if type(h) is CategoricalHyperparameter:
        return Dist("choice", tuple(plain(v) for v in h.choices))
    if type(h) is OrdinalHyperparameter:
        return Dist("choice", tuple(plain(v) for v in h.sequence))
    if type(h) is UniformFloatHyperparameter:
        return Dist("loguniform" if h.log else "uniform", (float(h.lower), float(h.upper)))
    if type(h) is UniformIntegerHyperparameter:
        return Dist("lograndint" if h.log else "randint", (int(h.lower), int(h.upper) + 1))
    if type(h) is NormalFloatHyperparameter and not h.log:  # ConfigSpace 1.x bounds every normal
        bounds = (float(h.lower), float(h.upper))
        if all(math.isfinite(b) for b in bounds):
            return Dist("boundednormal", (float(h.mu), float(h.sigma), *bounds))
        return Dist("normal", (float(h.mu), float(h.sigma)))
    raise UsageError(
        f"space params: ConfigSpace {type(h).__name__} {h.name!r} is not followed; tuner translates uniform floats and integers "
        f"(log or not), normal floats, categorical, ordinal and constant parameters ({ALTERNATIVE})"
    )
