"""One parameter of a searcher-native space, as Tune searches it and as a conditional branch draws it.

A HyperOpt node or an Optuna suggestion becomes a ``Dist``: unconditional, it is a Tune domain the plan and every
searcher already know; inside a branch, ``BranchDraw`` makes its one draw with numpy's global generator, the form
tuner/searchers/traced.py follows, so a model searches the branch's own range (a log range for a log domain).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ray.tune.search.sample import Domain

    from tuner.value_types import Config, Value

# kind -> what its args are; bounds are the values' own (never a log), an upper bound as Tune's domain takes it
KINDS = {
    "uniform": "low, high",
    "loguniform": "low, high",
    "quniform": "low, high, q",
    "qloguniform": "low, high, q",
    "randint": "low, high (excluded)",
    "lograndint": "low, high (excluded)",
    "qrandint": "low, high (included), q",
    "normal": "mean, sigma",
    "boundednormal": "mean, sigma, low, high (a draw outside is moved to the nearer bound)",
    "qnormal": "mean, sigma, q",
    "lognormal": "mean, sigma of its log",
    "choice": "the values",
}


@dataclass(frozen=True)
class Dist:
    """A parameter's distribution (``kind`` one of KINDS) and its arguments."""

    kind: str
    # by kind (KINDS): numbers for a range, the values themselves (any a config holds) for a choice
    args: tuple[Any, ...]

    def domain(self) -> Domain:
        """The Tune domain searched where the parameter is always asked."""
        from ray import tune

        a = self.args
        simple: dict[str, Callable[..., Domain]] = {
            "uniform": tune.uniform,
            "loguniform": tune.loguniform,
            "quniform": tune.quniform,
            "qloguniform": tune.qloguniform,
            "randint": tune.randint,
            "lograndint": tune.lograndint,
            "qrandint": tune.qrandint,
            "normal": tune.randn,
            "qnormal": tune.qrandn,
        }
        if self.kind in simple:
            return simple[self.kind](*a)
        if self.kind == "choice":
            return tune.choice(list(a))
        return tune.sample_from(
            BranchDraw("", {"": self})
        )  # lognormal, boundednormal: Tune has no domain; traced follows the one draw

    def text(self) -> str:
        if self.kind == "choice":
            return f"choice{list(self.args)}"
        if self.kind == "boundednormal":
            return f"normal({self.args[0]:g}, {self.args[1]:g}) within [{self.args[2]:g}, {self.args[3]:g}]"
        return f"{self.kind}({', '.join(f'{a:g}' for a in self.args)})"

    def draw(self) -> Value:
        """One value, from numpy's global generator: one call tuner's tracing reads as the distribution."""
        import numpy as np

        a = self.args
        if self.kind == "uniform":
            return float(np.random.uniform(a[0], a[1]))
        if self.kind in ("loguniform", "qloguniform"):
            value = math.exp(np.random.uniform(math.log(a[0]), math.log(a[1])))
            return _rounded(value, a[2]) if self.kind == "qloguniform" else value
        if self.kind == "quniform":
            return _rounded(float(np.random.uniform(a[0], a[1])), a[2])
        if self.kind == "randint":
            return int(np.random.randint(a[0], a[1]))
        if self.kind == "lograndint":
            return min(int(round(math.exp(np.random.uniform(math.log(a[0]), math.log(a[1] - 1))))), a[1] - 1)
        if self.kind == "qrandint":
            return int(a[0] + a[2] * np.random.randint(0, (a[1] - a[0]) // a[2] + 1))
        if self.kind == "normal":
            return float(np.random.normal(a[0], a[1]))
        if self.kind == "boundednormal":
            return min(max(float(np.random.normal(a[0], a[1])), a[2]), a[3])
        if self.kind == "qnormal":
            return _rounded(float(np.random.normal(a[0], a[1])), a[2])
        if self.kind == "lognormal":
            return float(np.random.lognormal(a[0], a[1]))
        if self.kind == "choice":
            return a[int(np.random.choice(len(a)))]
        raise ValueError(f"no draw for {self.kind!r}")


def _rounded(value: float, q: float) -> float:
    return float(round(value / q) * q)


class BranchDraw:
    """A parameter asked only under some values of a choice (its ``parent``): Tune's ``sample_from`` function
    that draws from the branch the trial's parent value selects, and gives None where it is not asked.

    A module-level class, not a closure: Ray pickles the space, and tuner's plans with it."""

    def __init__(self, parent: str, branches: Mapping[Value, Dist]) -> None:
        self.parent = parent
        self.branches = dict(branches)

    def __call__(self, config: Config) -> Value:
        if not self.parent:
            return self.branches[""].draw()
        dist = self.branches.get(read(config, self.parent))
        return dist.draw() if dist is not None else None

    def describe(self) -> str:
        """For the plan: each branch's distribution, where it is asked."""
        if not self.parent:
            return self.branches[""].text()
        return "; ".join(
            f"{dist.text()} where {self.parent}={value}" for value, dist in self.branches.items()
        )

    def __repr__(self) -> str:
        return f"BranchDraw({self.parent!r}, {sorted(map(str, self.branches))})"


def read(config: Config, name: str) -> Value:
    """A parameter of a config that may be nested (``model/width`` is ``config["model"]["width"]``)."""
    if name in config:
        return config[name]
    here: Value = config
    for part in name.split("/"):
        here = cast("Config", here)[part]  # a nested config: each part but the last names a mapping
    return here
