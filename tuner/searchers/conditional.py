"""Conditional parameters: a ``sample_from`` that reads another parameter, searched instead of drawn.

Ray's docs write a parameter that depends on another as ``tune.sample_from(lambda spec: ... if
spec.config.optimizer == "sgd" else ...)``. Such a function cannot run alone, so the plan probes it once per
value of each finite choice in the space: the parent is the choice whose every value lets it run, and each of
the parent's values gives a branch: the child's few values there, the one random draw it makes there (a
continuous branch, such as ``np.random.uniform(0.5, 0.99)``: tuner/searchers/traced.py), or a constant
where it does not apply.
A searcher that models spaces defined as they are drawn (Optuna's define-by-run) then searches the child
only in the branches where it varies, under a name per branch (``momentum|optimizer=sgd``), so what it learns
of momentum under SGD is never mixed with another branch; the others draw it at random, and the plan says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tuner.folder.pickled import Restored, fresh
from tuner.value_types import Config, Scalar, Space, Value
from tuner.values import as_float, plain

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution
    from optuna.trial import Trial
    from ray.tune.search.sample import Function

    from tuner.searchers.draws import Draw


@dataclass(frozen=True)
class Branches(Restored):
    """A conditional parameter: its parent, and per parent value the few values it is searched over, the one
    random draw it is searched through (a continuous branch), or the constant it takes."""

    SINCE = {"draws": fresh(dict)}  # plans saved before continuous branches have none

    parent: str
    # repr(parent value) -> values searched there
    values: dict[str, list[Value]] = field(default_factory=dict)
    constants: dict[str, Value] = field(default_factory=dict)  # repr(parent value) -> its one value there
    # repr(parent value) -> the traced.Draw searched there
    draws: dict[str, Draw] = field(default_factory=dict)

    def key(self, child: str, parent_value: Value) -> str:
        """The name a branch is searched under (never a '/', which Ray would read as nesting)."""
        return f"{child}|{self.parent}={plain(parent_value)}".replace("/", "_")

    def describe(self, entry: str) -> str:
        searched = [f"{self.parent}={k.strip(chr(39))} ({_values_text(v)})" for k, v in self.values.items()]
        searched += [f"{self.parent}={k.strip(chr(39))} (its draw {d.text()})" for k, d in self.draws.items()]
        fixed = ", ".join(
            f"{self.parent}={k.strip(chr(39))}: {v!r}" for k, v in self.constants.items() if v is not None
        )
        unasked = ", ".join(
            f"{self.parent}={k.strip(chr(39))}" for k, v in self.constants.items() if v is None
        )
        text = f"conditional on {self.parent}: searched by {entry} where {', '.join(searched)}"
        return (
            text
            + (f"; constant where {fixed}" if fixed else "")
            + (f"; not asked where {unasked}" if unasked else "")
        )

    @property
    def searched(self) -> bool:
        return bool(self.values or self.draws)


def find_branches(name: str, value: Function, params: Space, seed: int) -> Branches | str:
    """The parent and branches of a ``sample_from`` that cannot run alone, or why it cannot be searched
    branch by branch, in words a user can act on."""
    from ray.tune.search.sample import Categorical

    from tuner.searchers.probe import probe_function
    from tuner.searchers.traced import trace

    reasons = []
    for parent, domain in params.items():
        if parent == name or not isinstance(domain, Categorical):
            continue
        values: dict[str, list[Value]] = {}
        constants: dict[str, Value] = {}
        draws: dict[str, Draw] = {}
        for category in domain.categories:
            key = repr(plain(category))
            seen, _ = probe_function(value, seed, config={parent: category})
            if seen is None:
                traced = trace(value, seed, config={parent: category})
                if isinstance(traced, str):
                    reasons.append(f"where {parent}={plain(category)}, {traced}")
                    break
                draws[key] = traced.its_draw
            elif len(seen) == 1:
                constants[key] = seen[0]
            else:
                values[key] = seen
        else:
            branches = Branches(parent, values, constants, draws)
            if branches.searched:
                return branches
            reasons.append(f"it is a constant under every value of {parent}")
    return reasons[0] if reasons else _what_it_reads(value, params)


def _what_it_reads(value: Function, params: Space) -> str:
    """Why a function that cannot run alone has no branches: the name it reads and what that name is."""
    import re

    from tuner.ray_compat import spec_form_warnings_off

    try:
        with spec_form_warnings_off():
            value.sample(config={})
    except KeyError as exc:
        read = str(exc.args[0]) if exc.args else ""
    except AttributeError as exc:
        found = re.findall(r"attribute '(\w+)'", str(exc))
        read = found[-1] if found else ""
    except Exception as exc:  # noqa: BLE001 - it fails for another reason: say which, in a line
        return f"it fails when drawn alone: {type(exc).__name__}: {exc}"
    else:
        return "it cannot be drawn alone"
    if not read:
        return "it reads the config drawn so far, and tuner could not tell which parameter"
    if read not in params:
        return f"it reads {read!r}, which the space does not define"
    return (
        f"it depends on {read}, which is not a tune.choice; tuner searches a parameter that depends on one "
        "choice, branch by branch"
    )


class DefineByRun:
    """Optuna's define-by-run space for a plan with conditional parameters (picklable: Ray saves searchers).

    ``distributions`` are the unconditional parameters as Optuna distributions; ``conditionals`` name each
    conditional parameter with its branches and how to read its parent's suggestion (the parent's values in
    index order when it is searched through an index, else None).
    """

    def __init__(
        self,
        distributions: dict[str, BaseDistribution],
        conditionals: list[tuple[str, Branches, list[Value] | None]],
    ) -> None:
        self.distributions = distributions
        self.conditionals = conditionals

    def __call__(self, trial: Trial) -> None:
        drawn = {name: _suggest(trial, name, dist) for name, dist in self.distributions.items()}
        for child, branches, parent_values in self.conditionals:
            raw = drawn[branches.parent]
            # an index where the parent's values are listed (Optuna searches it through integer_index)
            parent = parent_values[int(as_float(raw))] if parent_values is not None else raw
            key = repr(plain(parent))
            if key in branches.values:  # an index over the branch's values, in their order
                trial.suggest_int(branches.key(child, parent), 0, len(branches.values[key]) - 1)
            elif key in branches.draws:  # the branch's own draw, in its own range
                from ray.tune.search.optuna import OptunaSearch

                name = branches.key(child, parent)
                dist = OptunaSearch.convert_search_space({name: branches.draws[key].domain()})[name]
                _suggest(trial, name, dist)


def _suggest(trial: Trial, name: str, dist: BaseDistribution) -> Scalar:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    if isinstance(dist, FloatDistribution):
        return trial.suggest_float(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, IntDistribution):
        return trial.suggest_int(name, dist.low, dist.high, log=dist.log, step=dist.step)
    if isinstance(dist, CategoricalDistribution):
        return trial.suggest_categorical(name, dist.choices)
    raise TypeError(f"no suggestion for {type(dist).__name__}")


def decode(
    child: str,
    branches: Branches,
    parent_value: Value,
    suggestion: Mapping[str, Value],
    function: Function | None = None,
    config: Config | None = None,
) -> Value:
    """The child's value in a trial: the searched branch's value, the function run on the branch's searched
    draw (given the trial's ``config``), or the branch's constant."""
    key = repr(plain(parent_value))
    if key in branches.values:
        return branches.values[key][int(as_float(suggestion[branches.key(child, parent_value)]))]
    draws = branches.draws
    if key in draws and function is not None:
        from tuner.searchers.traced import replay

        draw = draws[key]
        return replay(function, dict(config or {}), draw.value(suggestion[branches.key(child, parent_value)]))
    return branches.constants.get(key)


def _values_text(values: list[Value]) -> str:
    from tuner.searchers.probe import values_text

    return values_text(values)
