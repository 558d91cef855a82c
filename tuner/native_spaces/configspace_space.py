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
from typing import Any

from tuner.errors import UsageError
from tuner.native_spaces import Translated
from tuner.native_spaces.distributions import BranchDraw, Dist
from tuner.spec import flatten, unflatten
from tuner.values import plain

ALTERNATIVE = "write the space with Tune domains, or as an Optuna define-by-run function"


def translate_configspace(space: Any) -> Translated:
    if list(getattr(space, "forbidden_clauses", []) or []):
        raise UsageError(
            f"space params: the ConfigurationSpace has forbidden clauses, which tuner does not follow; {ALTERNATIVE}"
        )
    hyperparameters = list(space.values())
    constants = {h.name: plain(h.value) for h in hyperparameters if type(h).__name__ == "Constant"}
    dists = {h.name: _dist(h) for h in hyperparameters if h.name not in constants}
    conditions = {_child(c): c for c in space.conditions}
    params: dict[str, Any] = {}
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

    def __init__(self, constants: Mapping[str, Any], conditions: Mapping[str, tuple[str, list[Any]]]) -> None:
        self.constants = dict(constants)
        self.conditions = dict(conditions)

    def __call__(self, config: Mapping[str, Any]) -> dict[str, Any]:
        flat = flatten(config)
        active = {
            name: value
            for name, value in flat.items()
            if name not in self.conditions or flat.get(self.conditions[name][0]) in self.conditions[name][1]
        }
        return unflatten({**active, **self.constants})


def _child(condition: Any) -> str:
    if not hasattr(condition, "child"):  # AndConjunction / OrConjunction
        raise UsageError(
            f"space params: the ConfigurationSpace has a conjunction of conditions ({condition}), which tuner does "
            f"not follow; {ALTERNATIVE}"
        )
    kind = type(condition).__name__
    if kind not in ("EqualsCondition", "InCondition"):
        raise UsageError(
            f"space params: ConfigSpace {kind} on {condition.child.name!r} is not followed; tuner follows "
            f"EqualsCondition and InCondition on a categorical ({ALTERNATIVE})"
        )
    return str(condition.child.name)


def _values(condition: Any) -> list[Any]:
    return [plain(v) for v in (condition.values if hasattr(condition, "values") else [condition.value])]


def _dist(h: Any) -> Dist:
    kind = type(h).__name__
    if kind in ("CategoricalHyperparameter", "OrdinalHyperparameter"):
        values = h.choices if kind == "CategoricalHyperparameter" else h.sequence
        return Dist("choice", tuple(plain(v) for v in values))
    if kind == "UniformFloatHyperparameter":
        return Dist("loguniform" if h.log else "uniform", (float(h.lower), float(h.upper)))
    if kind == "UniformIntegerHyperparameter":
        return Dist("lograndint" if h.log else "randint", (int(h.lower), int(h.upper) + 1))
    if kind == "NormalFloatHyperparameter" and not h.log:  # ConfigSpace 1.x bounds every normal
        bounds = (float(h.lower), float(h.upper))
        if all(math.isfinite(b) for b in bounds):
            return Dist("boundednormal", (float(h.mu), float(h.sigma), *bounds))
        return Dist("normal", (float(h.mu), float(h.sigma)))
    raise UsageError(
        f"space params: ConfigSpace {kind} {h.name!r} is not followed; tuner translates uniform floats and integers "
        f"(log or not), normal floats, categorical, ordinal and constant parameters ({ALTERNATIVE})"
    )
