"""Conditional parameters: a ``sample_from`` that reads another parameter, searched instead of drawn.

Ray's docs write a parameter that depends on another as ``tune.sample_from(lambda spec: ... if
spec.config.optimizer == "sgd" else ...)``. Such a function cannot run alone, so the plan probes it once per
value of each finite choice in the space: the parent is the choice whose every value lets it run, and each of
the parent's values gives a branch (the child's few values there, or a constant where it does not apply).
A searcher that models spaces defined as they are drawn (Optuna's define-by-run) then searches the child
only in the branches where it varies, under a name per branch (``momentum|optimizer=sgd``), so what it learns
of momentum under SGD is never mixed with another branch; the others draw it at random, and the plan says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tuner.values import plain


@dataclass(frozen=True)
class Branches:
    """A conditional parameter: its parent, and per parent value either the values it is searched over or
    the constant it takes (``values`` None)."""

    parent: str
    values: dict[str, list[Any]] = field(default_factory=dict)  # repr(parent value) -> values searched there
    constants: dict[str, Any] = field(default_factory=dict)  # repr(parent value) -> its one value there

    def key(self, child: str, parent_value: Any) -> str:
        """The name a branch is searched under (never a '/', which Ray would read as nesting)."""
        return f"{child}|{self.parent}={plain(parent_value)}".replace("/", "_")

    def describe(self, entry: str) -> str:
        searched = ", ".join(f"{self.parent}={k.strip(chr(39))} ({_values_text(v)})" for k, v in self.values.items())
        fixed = ", ".join(f"{self.parent}={k.strip(chr(39))}: {v!r}" for k, v in self.constants.items())
        text = f"conditional on {self.parent}: searched by {entry} where {searched}"
        return text + (f"; constant where {fixed}" if fixed else "")


def find_branches(name: str, value: Any, params: Mapping[str, Any], seed: int) -> Branches | None:
    """The parent and branches of a ``sample_from`` that cannot run alone, or None when no single finite
    choice makes it run (it reads something else, or several parameters)."""
    from ray.tune.search.sample import Categorical

    from tuner.searchers.probe import probe_function

    for parent, domain in params.items():
        if parent == name or not isinstance(domain, Categorical):
            continue
        values: dict[str, list[Any]] = {}
        constants: dict[str, Any] = {}
        for category in domain.categories:
            seen, _ = probe_function(value, seed, config={parent: category})
            if seen is None:
                break
            if len(seen) == 1:
                constants[repr(plain(category))] = seen[0]
            else:
                values[repr(plain(category))] = seen
        else:
            if values:
                return Branches(parent, values, constants)
    return None


class DefineByRun:
    """Optuna's define-by-run space for a plan with conditional parameters (picklable: Ray saves searchers).

    ``distributions`` are the unconditional parameters as Optuna distributions; ``conditionals`` name each
    conditional parameter with its branches and how to read its parent's suggestion (the parent's values in
    index order when it is searched through an index, else None).
    """

    def __init__(self, distributions: dict[str, Any], conditionals: list[tuple[str, Branches, list | None]]) -> None:
        self.distributions = distributions
        self.conditionals = conditionals

    def __call__(self, trial: Any) -> None:
        from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

        drawn: dict[str, Any] = {}
        for name, dist in self.distributions.items():
            if isinstance(dist, FloatDistribution):
                drawn[name] = trial.suggest_float(name, dist.low, dist.high, log=dist.log, step=dist.step)
            elif isinstance(dist, IntDistribution):
                drawn[name] = trial.suggest_int(name, dist.low, dist.high, log=dist.log, step=dist.step)
            elif isinstance(dist, CategoricalDistribution):
                drawn[name] = trial.suggest_categorical(name, dist.choices)
        for child, branches, parent_values in self.conditionals:
            raw = drawn[branches.parent]
            parent = parent_values[int(raw)] if parent_values is not None else raw
            searched = branches.values.get(repr(plain(parent)))
            if searched is not None:  # an index over the branch's values, in their order
                trial.suggest_int(branches.key(child, parent), 0, len(searched) - 1)


def decode(child: str, branches: Branches, parent_value: Any, suggestion: Mapping[str, Any]) -> Any:
    """The child's value in a trial: the searched branch's value, or the branch's constant."""
    key = repr(plain(parent_value))
    if key in branches.values:
        return branches.values[key][int(suggestion[branches.key(child, parent_value)])]
    return branches.constants.get(key)


def _values_text(values: list[Any]) -> str:
    from tuner.searchers.probe import values_text

    return values_text(values)
