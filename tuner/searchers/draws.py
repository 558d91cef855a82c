"""Which random calls a traced ``sample_from`` function can make, and the ``Draw`` each one is: numpy's and
Python's random functions read as a distribution with its arguments, a Tune domain a model can search
(tuner/searchers/traced.py runs the function with them watched)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tuner.searchers.normal_quantile import QUANTILE_EDGE, NormalQuantile
from tuner.value_types import Value
from tuner.values import as_float
from tuner.values import plain as _plain

if TYPE_CHECKING:
    from ray.tune.search.sample import Domain


@dataclass(frozen=True)
class Draw:
    """One random draw: its distribution (``uniform``, ``randint``, ``choice``, ``normal``, ``lognormal``,
    ``exponential``, ``weighted``) and arguments, as a Tune domain a model can search."""

    kind: str
    # a range's bounds (a normal's mean and sd, an exponential's scale), a choice's values, or (values, weights)
    args: tuple[Value, ...]

    def domain(self) -> Domain:
        """What the model searches: the draw's own range, or its quantile where the range is unbounded."""
        from ray import tune

        if self.kind == "uniform":
            return tune.uniform(*self.bounds())
        if self.kind == "randint":
            low, high = self.bounds()
            return tune.randint(int(low), int(high))
        if self.kind == "choice":
            return tune.choice(list(self.args))
        return tune.uniform(QUANTILE_EDGE, 1 - QUANTILE_EDGE)

    def value(self, searched: Value) -> Value:
        """The draw a searched value stands for."""
        if self.kind in ("uniform", "choice"):
            return searched
        # the other kinds are searched through a number: an integer range, or a quantile (``domain``)
        position = as_float(searched)
        if self.kind == "randint":
            return int(position)
        if self.kind in ("normal", "lognormal"):
            mean, sd = self.bounds()
            drawn = NormalQuantile(mean, sd, q=None, integer=False).decode(position)
            return drawn if self.kind == "normal" else math.exp(drawn)
        if self.kind == "exponential":
            return -as_float(self.args[0]) * math.log1p(-position)
        # weighted: a choice drawn with probabilities, searched through their sum
        values, weights = self.weighted()
        total = 0.0
        for value, weight in zip(values, weights, strict=True):
            total += weight
            if position < total:
                return value
        return values[-1]

    def bounds(self) -> tuple[float, float]:
        """A range's two bounds (a normal's mean and sd)."""
        return as_float(self.args[0]), as_float(self.args[1])

    def weighted(self) -> tuple[Sequence[Value], list[float]]:
        """A weighted choice's values and their weights."""
        values, weights = self.args
        if not isinstance(values, Sequence) or not isinstance(weights, Sequence):
            raise TypeError(f"a weighted draw holds its values and weights, not {self.args!r}")
        return values, [as_float(w) for w in weights]

    @property
    def quantile(self) -> bool:
        return self.kind not in ("uniform", "randint", "choice")

    def text(self) -> str:
        if self.kind == "weighted":
            return f"choice of {len(self.weighted()[0])} with weights, through its quantile"
        if self.kind == "choice":
            return f"choice of {len(self.args)}"
        args = ", ".join(f"{a:g}" if isinstance(a, (int, float)) else repr(a) for a in self.args)
        return f"{self.kind}({args})" + (", through its quantile" if self.quantile else "")


def _numpy_draw(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Draw | None:
    """The draw a call to ``numpy.random.NAME`` makes, or None (arrays, or a form not followed). ``args`` and
    ``kwargs`` are the user's call's own, whatever it passed: read with float() and int(), a TypeError or
    ValueError meaning a form not followed (traced.py)."""
    bound = dict(zip(_NUMPY_ARGS.get(name, ()), args, strict=False)) | kwargs
    if bound.get("size") is not None:  # an array of draws, not one
        return None
    if name in ("rand", "random", "random_sample", "ranf", "sample"):
        return Draw("uniform", (0.0, 1.0)) if not args and not kwargs else None
    if name == "uniform":
        return _uniform(float(bound.get("low", 0.0)), float(bound.get("high", 1.0)))
    if name == "randint":
        low, high = bound["low"], bound.get("high")
        return Draw("randint", (0, int(low)) if high is None else (int(low), int(high)))
    if name in ("normal", "randn", "standard_normal"):
        if name != "normal" and (args or kwargs):
            return None
        return Draw("normal", (float(bound.get("loc", 0.0)), float(bound.get("scale", 1.0))))
    if name == "lognormal":
        return Draw("lognormal", (float(bound.get("mean", 0.0)), float(bound.get("sigma", 1.0))))
    if name == "exponential":
        return Draw("exponential", (float(bound.get("scale", 1.0)),))
    if name == "choice":
        population = bound["a"]
        values = (
            tuple(range(population)) if isinstance(population, int) else tuple(_plain(v) for v in population)
        )
        if bound.get("p") is not None:
            return Draw("weighted", (values, tuple(float(w) for w in bound["p"])))
        return Draw("choice", values)
    return None


_NUMPY_ARGS = {
    "uniform": ("low", "high", "size"),
    "randint": ("low", "high", "size"),
    "normal": ("loc", "scale", "size"),
    "lognormal": ("mean", "sigma", "size"),
    "exponential": ("scale", "size"),
    "choice": ("a", "size", "replace", "p"),
}
NUMPY_FUNCTIONS = (
    "rand",
    "random",
    "random_sample",
    "ranf",
    "sample",
    "uniform",
    "randint",
    "normal",
    "randn",
    "standard_normal",
    "lognormal",
    "exponential",
    "choice",
)


def _python_draw(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Draw | None:
    """The draw a call to Python's ``random.NAME`` makes, or None."""
    if kwargs:
        return None
    if name == "random" and not args:
        return Draw("uniform", (0.0, 1.0))
    if name == "uniform" and len(args) == 2:
        return _uniform(float(args[0]), float(args[1]))
    if name == "randint" and len(args) == 2:
        return Draw("randint", (int(args[0]), int(args[1]) + 1))  # Python's upper bound is included
    if name == "randrange" and 1 <= len(args) <= 2:
        return Draw("randint", (0, int(args[0])) if len(args) == 1 else (int(args[0]), int(args[1])))
    if name == "choice" and len(args) == 1:
        return Draw("choice", tuple(_plain(v) for v in args[0]))
    if name in ("gauss", "normalvariate"):
        return Draw("normal", tuple(float(a) for a in args) or (0.0, 1.0))
    if name == "lognormvariate" and len(args) == 2:
        return Draw("lognormal", (float(args[0]), float(args[1])))
    if name == "expovariate" and len(args) == 1:
        return Draw("exponential", (1.0 / float(args[0]),))
    return None


PYTHON_FUNCTIONS = (
    "random",
    "uniform",
    "randint",
    "randrange",
    "choice",
    "gauss",
    "normalvariate",
    "lognormvariate",
    "expovariate",
)


def _uniform(low: float, high: float) -> Draw:
    """``uniform(100)`` (Ray's docs write it so) draws between 1 and 100: the same range, in order."""
    return Draw("uniform", (min(low, high), max(low, high)))
