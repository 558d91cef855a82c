"""A sweep's configs as numbers a model reads, and new configs drawn from the space for it to score.

Each parameter of the space becomes one number in [0, 1] (or one per choice, for choices without an order):
a range as the space draws it (on a log scale where it draws on one), a choice among numbers by its place
in their order, a ``sample_from`` function by the values it gave in a first set of draws. Constants carry
nothing. New configs are drawn from the space itself, as random search draws them (so a ``sample_from``
function that reads another parameter sees it), and near the best configs seen: each range moved a little,
each choice redrawn now and then.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias, cast

import numpy as np
from ray.tune.search.sample import Categorical, Domain, Float, Function, Integer, LogUniform, Quantized

from tuner.nesting import flatten, unflatten
from tuner.values import as_float, plain

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from tuner.value_types import Config, ConfigDraft, Space, SpaceEntry, Value

PILOT = 64  # draws that set the range of a sample_from function's values
NEAR_SCALE = 0.08  # how far a neighbour moves along a range, as a share of it
REDRAW = 0.2  # the chance a neighbour redraws each choice


class _Range:
    """A float or integer range, on the scale the space draws it."""

    def __init__(self, low: float, high: float, log: bool, integer: bool) -> None:
        self.log, self.integer = log, integer
        self.low, self.high = (math.log(low), math.log(high)) if log else (float(low), float(high))
        self.width = 1

    def encode(self, value: Value) -> list[float]:
        v = as_float(value)
        v = math.log(max(v, 1e-300)) if self.log else v
        span = self.high - self.low
        return [0.5 if span <= 0 else min(max((v - self.low) / span, 0.0), 1.0)]

    def decode(self, unit: float) -> float:
        v = self.low + min(max(unit, 0.0), 1.0) * (self.high - self.low)
        return math.exp(v) if self.log else v


class _Choice:
    """A choice: by its place among ordered numbers, else one indicator per category."""

    def __init__(self, categories: Sequence[Value]) -> None:
        self.categories = list(categories)
        self.ordered = all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in self.categories)
        self.order = (  # sorted only when ordered: every category a number
            sorted(range(len(self.categories)), key=lambda i: as_float(self.categories[i]))
            if self.ordered
            else []
        )
        self.width = 1 if self.ordered else len(self.categories)

    def encode(self, value: Value) -> list[float]:
        index = next((i for i, c in enumerate(self.categories) if c == value), None)
        if self.ordered:
            if index is None:
                return [0.5]
            return [self.order.index(index) / max(len(self.categories) - 1, 1)]
        return [1.0 if i == index else 0.0 for i in range(len(self.categories))]


_Part: TypeAlias = _Range | _Choice


class ConfigFeatures:
    """Configs of ``params`` (a space's params, nested or flat) as feature rows; new configs drawn from it."""

    def __init__(self, params: Space, seed: int = 0) -> None:
        self.space: dict[str, SpaceEntry] = flatten(params)
        self.parts: dict[str, _Part] = {}
        pilot: list[ConfigDraft] | None = None
        for name, value in self.space.items():
            if not isinstance(value, Domain):
                continue  # a constant: the same in every config
            part = self._part(value)
            if part is None:
                pilot = pilot if pilot is not None else self.draw(PILOT, np.random.RandomState(seed))
                part = self._from_values([c.get(name) for c in pilot])
            if part is not None:
                self.parts[name] = part
        self.width = sum(p.width for p in self.parts.values())

    @staticmethod
    def _part(domain: Domain) -> _Part | None:
        sampler = domain.get_sampler()
        if isinstance(sampler, Quantized):
            sampler = sampler.get_sampler()
        if isinstance(domain, Categorical):
            return _Choice(domain.categories)
        if isinstance(domain, (Float, Integer)) and not isinstance(domain, Function):
            lower, upper = float(domain.lower), float(domain.upper)
            if isinstance(domain, Integer):
                upper = _highest(domain)
            if math.isfinite(lower) and math.isfinite(upper):
                return _Range(lower, upper, isinstance(sampler, LogUniform), isinstance(domain, Integer))
        return None

    @staticmethod
    def _from_values(values: list[Value]) -> _Part | None:
        """A function's part, from what it drew: a range over numbers (log when they span a wide positive
        range), else a choice among the values seen."""
        numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(values) and numbers:
            low, high = min(numbers), max(numbers)
            return _Range(low, high, low > 0 and high / low >= 8, all(float(v).is_integer() for v in numbers))
        seen: list[Value] = []
        for v in values:
            if isinstance(v, (str, int, float, bool)) and v not in seen:
                seen.append(v)
        return _Choice(seen) if seen else None

    # --- reading configs --------------------------------------------------------------------------------
    def encode(self, config: Config) -> NDArray[np.float64]:
        flat = flatten(config)
        row: list[float] = []
        for name, part in self.parts.items():
            row.extend(part.encode(plain(flat[name])) if name in flat else [0.5] * part.width)
        return np.array(row, float)

    def rows(self, configs: Sequence[Config]) -> NDArray[np.float64]:
        if not configs:
            return np.zeros((0, self.width))
        return np.vstack([self.encode(c) for c in configs])

    # --- new configs --------------------------------------------------------------------------------------
    def draw(self, count: int, rng: np.random.RandomState) -> list[ConfigDraft]:
        """``count`` configs drawn from the space as random search draws them (flat names): each plain domain
        drawn for all of them at once, a ``sample_from`` function once per config (it may read the others)."""
        saved = np.random.get_state()
        np.random.seed(rng.randint(2**31))  # sample_from functions draw from numpy's global generator
        try:
            columns: dict[str, list[Value]] = {}
            for name, value in self.space.items():
                if isinstance(value, Domain) and not isinstance(value, Function):
                    drawn = (
                        value.sample(size=count, random_state=rng)
                        if count > 1
                        else [value.sample(random_state=rng)]
                    )
                    columns[name] = [plain(v) for v in drawn]
            out = []
            for k in range(count):
                config: ConfigDraft = {}
                for name, value in self.space.items():
                    if name in columns:
                        config[name] = columns[name][k]
                    elif isinstance(value, Domain):
                        config[name] = plain(value.sample(config=unflatten(config), random_state=rng))
                    else:
                        config[name] = value
                out.append(config)
            return out
        finally:
            np.random.set_state(saved)

    def near(self, config: Config, count: int, rng: np.random.RandomState) -> list[ConfigDraft]:
        """``count`` neighbours of ``config``: each range moved by a little, each choice sometimes redrawn."""
        flat = flatten(config)
        out = []
        for fresh in self.draw(count, rng):
            moved = dict(flat)
            for name, part in self.parts.items():
                domain = self.space[name]
                if isinstance(part, _Range) and not isinstance(domain, Function) and name in flat:
                    unit = part.encode(flat[name])[0] + rng.normal(0.0, NEAR_SCALE)
                    value = part.decode(unit)
                    # a range that is no function's is a float or integer domain's (_part)
                    moved[name] = plain(_snap(cast("Float | Integer", domain), value))
                elif rng.rand() < REDRAW:
                    moved[name] = fresh[name]
            out.append(moved)
        return out


def _snap(domain: Float | Integer, value: float) -> int | float:
    """A value moved along a range, back on the domain: within its bounds, on its grid, an integer if it is."""
    sampler = domain.get_sampler()
    q = getattr(sampler, "q", None) if isinstance(sampler, Quantized) else None
    if q:
        value = round(value / q) * q
    if isinstance(domain, Integer):
        return int(min(max(round(value), domain.lower), _highest(domain)))
    return float(min(max(value, domain.lower), domain.upper))


def _highest(domain: Integer) -> int:
    """The largest integer an integer domain draws: its upper bound is exclusive, but a quantised one's with a
    step above 1 is inclusive (Ray's randint, lograndint, qrandint)."""
    sampler = domain.get_sampler()
    q = getattr(sampler, "q", 1) if isinstance(sampler, Quantized) else 1
    return int(domain.upper) if q > 1 else int(domain.upper) - 1
