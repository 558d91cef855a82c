"""The search plan's vocabulary: how one parameter is searched (ParamPlan), the whole plan (SearchPlan), and the
faithful encodings a model searches through (an ordered index, a normal's quantile, a rounded log domain).
tuner/searchers/planning.py decides the plan of a space from them.

A searcher must never mis-search silently. Every parameter is searched natively, searched through a faithful
encoding (log space for log-scale domains, an index for categorical ones, an ordered index for a
``sample_from`` whose values were probed), drawn at random (a ``sample_from`` with too many values), a
constant, or impossible, which stops the sweep with an error naming the parameter and the searchers that can.

Ray is imported inside functions: the registry that names searchers must stay cheap to import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol, TypeGuard, cast

from tuner.errors import UsageError
from tuner.searchers.normal_quantile import QUANTILE_EDGE, NormalQuantile  # saved searchers name it here
from tuner.searchers.probe import is_number
from tuner.value_types import Space, SpaceEntry, Value

if TYPE_CHECKING:
    from ray.tune.search.sample import Categorical, Domain, Float, Function, Integer

    from tuner.searchers.conditional import Branches

NATIVE, ENCODED, RANDOM, CONSTANT = "native", "encoded", "random", "constant"
CONDITIONAL = "conditional"  # searched only where its parent makes it vary (tuner/searchers/conditional.py)
# searched through its one draw, its value made from the trial's other parameters (traced.py)
DERIVED = "derived"
COMPUTED = "computed"  # no draw of its own: its value is made from the trial's other parameters
SEARCHED = (NATIVE, ENCODED, DERIVED)  # what a model sees as a dimension of its own


class Planner(Protocol):
    """What the plan needs of a searcher entry (tuner/searchers/base.py)."""

    name: ClassVar[str]
    model_based: ClassVar[bool]

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan: ...

    def ordered(self, n: int) -> tuple[Domain, Callable[[float], int], Callable[[int], float]]: ...


@dataclass(frozen=True)
class ParamPlan:
    """How one parameter is searched: ``encoded`` is the domain the searcher sees, ``decode`` maps back."""

    name: str
    domain_text: str
    how: str
    treatment: str
    # what the model searches (a Tune domain), the constant, or the function drawn, computed or branched
    encoded: SpaceEntry = None
    # (searched value) -> config value; DERIVED and COMPUTED take the config too
    decode: Callable[..., Value] | None = None
    # a value the space allows -> what the model sees (warm starts); DERIVED takes the config too
    encode: Callable[..., Value] | None = None
    branches: Branches | None = None  # a CONDITIONAL parameter's parent and branches

    @property
    def domain(self) -> Domain:
        """``encoded`` where it is a Tune domain: what a model searches, or a function drawn at random."""
        from ray.tune.search.sample import Domain

        if not isinstance(self.encoded, Domain):
            raise TypeError(f"{self.name} ({self.treatment}) is searched through no Tune domain")
        return self.encoded


class ConditionalPlan(Protocol):
    """A CONDITIONAL parameter's plan as ``SearchPlan.conditionals`` gives it: function_plan.py always gives
    it its branches, and it searches the ``sample_from`` function it was planned from."""

    @property
    def name(self) -> str: ...

    @property
    def encoded(self) -> Function: ...

    @property
    def branches(self) -> Branches: ...


@dataclass(frozen=True)
class SearchPlan:
    searcher: str
    params: tuple[ParamPlan, ...]
    raw_space: Space

    def lines(self) -> list[str]:
        width = max(len(p.name) for p in self.params)
        dwidth = max(len(p.domain_text) for p in self.params)
        return [f"  {p.name:<{width}}  {p.domain_text:<{dwidth}}  {p.how}" for p in self.params]

    @property
    def conditionals(self) -> list[ConditionalPlan]:
        # function_plan.py makes every CONDITIONAL plan with its branches and its function
        return cast("list[ConditionalPlan]", [p for p in self.params if p.treatment == CONDITIONAL])

    def parent_values(self, name: str) -> list[Value] | None:
        """A parent's values in index order where the model sees it through an index, else None."""
        plan = next(p for p in self.params if p.name == name)
        if plan.treatment != ENCODED or not plan.decode:
            return None
        from ray.tune.search.sample import Float, Integer

        index = plan.domain  # a choice's index: Planner.ordered's, or bayesopt's
        if not isinstance(index, (Float, Integer)):
            raise TypeError(f"{name} is searched through {type(index).__name__}, not an index")
        return [plan.decode(i) for i in range(int(index.upper))]

    @property
    def searched_space(self) -> dict[str, Domain]:
        """The (encoded) domains a model-based searcher models."""
        # a model-based plan searches Tune domains only (planning.py refuses it grids)
        return {p.name: p.domain for p in self.params if p.treatment in SEARCHED}


def describe_domain(value: SpaceEntry) -> str:
    """A short human description of a Tune domain, e.g. ``loguniform(0.0001, 0.1)``."""
    from ray.tune.search.sample import (
        Categorical,
        Domain,
        Float,
        Function,
        Integer,
        LogUniform,
        Normal,
        Quantized,
    )

    if is_grid(value):
        return f"grid_search{value['grid_search']}"
    if isinstance(value, Function):
        described = getattr(value.func, "describe", None)  # a native space's branch (tuner/native_spaces/)
        return str(described()) if callable(described) else "sample_from(fn)"
    if isinstance(value, Categorical):
        return f"choice{list(value.categories)}"
    if isinstance(value, (Float, Integer)):
        sampler = value.get_sampler()
        q = ""
        if isinstance(sampler, Quantized):
            q, sampler = f", q={sampler.q:g}", sampler.get_sampler()
        kind = "int" if isinstance(value, Integer) else ""
        if isinstance(sampler, Normal):
            return f"randn{kind}(mean={sampler.mean:g}, sd={sampler.sd:g}{q})"
        prefix = "log" if isinstance(sampler, LogUniform) else ""
        name = f"{prefix}randint" if kind else f"{prefix}uniform"
        return f"{name}({value.lower:g}, {value.upper:g}{q})"
    if isinstance(value, Domain):
        return type(value).__name__
    return f"= {value!r}"


def is_grid(value: SpaceEntry) -> TypeGuard[Mapping[str, Sequence[Value]]]:
    return isinstance(value, dict) and set(value) == {"grid_search"}


def grid_points(params: Space) -> int:
    """Configs the grids of a space cross into: each of ``num_samples`` repeats all of them, as in Ray."""
    return math.prod(len(value["grid_search"]) for value in params.values() if is_grid(value))


class CannotSearch(UsageError):
    """A parameter this searcher cannot model; the registry adds which searchers can."""

    def __init__(self, name: str, value: SpaceEntry, searcher: str, capable: list[str] | None = None) -> None:
        self.param, self.value, self.searcher, self.capable = name, value, searcher, capable
        tail = f"; searchers that can: {', '.join(capable)}" if capable else ""
        super().__init__(
            f"parameter {name!r} ({describe_domain(value)}) cannot be searched by {searcher}{tail}"
        )


class NothingToSearch(UsageError):
    """A model-based searcher given a space of constants and unsearchable functions only."""


def unsupported(
    name: str, value: SpaceEntry, searcher: str, capable: list[str] | None = None
) -> CannotSearch:
    return CannotSearch(name, value, searcher, capable)


def ordered_index(
    values: Sequence[Value], planner: Planner
) -> tuple[Domain, Callable[[float], Value], Callable[[Value], float]]:
    """An ordered encoding of a sorted value list: one number the model sees, decoded to the value.

    Every searcher models it as one ordered number (neighbouring values are neighbours), and each value
    keeps an equal share of the range, as an equally likely draw had. Which number (an integer index, a
    position in [0, n)) is the model's choice (``Planner.ordered``).
    """
    domain, to_index, from_index = planner.ordered(len(values))

    def decode(x: float, values: Sequence[Value] = values) -> Value:
        return values[to_index(x)]

    def encode(value: Value, values: Sequence[Value] = values) -> float:
        return from_index(index_of(values, value))

    return domain, decode, encode


def index_of(values: Sequence[Value], value: Value) -> int:
    """Where ``value`` sits in ``values`` (numbers compared as numbers); ValueError when it is not there."""
    from tuner.values import plain

    value = plain(value)
    for i, v in enumerate(values):
        if v == value or (is_number(v) and is_number(value) and math.isclose(v, value, rel_tol=1e-9)):
            return i
    raise ValueError(f"{value!r} is not one of {values!r}")


def floor_index(n: int) -> tuple[Float, Callable[[float], int], Callable[[int], float]]:
    """A uniform position in [0, n), floored: an index for models of bounded floats (index i is i + 0.5)."""
    from ray import tune

    return tune.uniform(0, n), lambda x: min(max(int(math.floor(float(x))), 0), n - 1), lambda i: i + 0.5


def integer_index(n: int) -> tuple[Integer, Callable[[float], int], Callable[[int], int]]:
    """An integer in [0, n): an index for models with discrete, ordered integer domains."""
    from ray import tune

    return tune.randint(0, n), lambda x: min(max(int(x), 0), n - 1), lambda i: i


def categorical(values: Sequence[Value]) -> Categorical:
    from ray import tune

    return tune.choice(list(values))


def domain_plan(name: str, value: Domain, text: str, entry: Planner) -> ParamPlan:
    """How ``entry`` searches a Tune domain: a choice through an index where that serves it, else as the
    entry models it (tuner/searchers/base.py)."""
    indexed = _choice_as_index(value)
    if indexed is None:
        return entry.plan_domain(name, value, text)
    values, how = indexed
    encoded, decode, encode = ordered_index(values, entry)
    return ParamPlan(name, text, f"searched by {entry.name} as {how}", ENCODED, encoded, decode, encode)


def normal_quantile(name: str, value: Domain, text: str, searcher: str) -> ParamPlan:
    """An unbounded normal (``tune.randn``, ``tune.qrandn``) searched by a model of bounded domains."""
    from ray import tune
    from ray.tune.search.sample import Integer, Quantized

    sampler = value.get_sampler()
    q = None
    if isinstance(sampler, Quantized):
        q, sampler = sampler.q, sampler.get_sampler()
    quantile = NormalQuantile(sampler.mean, sampler.sd, q, isinstance(value, Integer))
    how = (
        f"searched by {searcher} through its quantile (a normal has no bounds; each quantile equally likely)"
    )
    return ParamPlan(
        name,
        text,
        how,
        ENCODED,
        tune.uniform(QUANTILE_EDGE, 1 - QUANTILE_EDGE),
        quantile.decode,
        quantile.encode,
    )


class Rounded:
    """A value rounded to a multiple of ``q`` within [lower, upper] (picklable: Ray saves searchers)."""

    def __init__(self, q: float, lower: float, upper: float, integer: bool) -> None:
        self.q, self.lower, self.upper, self.integer = q, lower, upper, integer

    def __call__(self, x: float) -> float:
        value = min(max(round(float(x) / self.q) * self.q, self.lower), self.upper)
        return int(round(value)) if self.integer else value


def within(domain: Float | Integer) -> Rounded:
    """A number brought into a numeric domain as Tune draws it: onto its step (none: 1 for integers), inside its
    bounds moved onto that step (Tune's integer upper bound is exclusive, but with a step above 1 it is drawn)."""
    from ray.tune.search.sample import Integer, Quantized

    sampler = domain.get_sampler()
    integer = isinstance(domain, Integer)
    q = sampler.q if isinstance(sampler, Quantized) else None
    top = domain.upper - 1 if integer and (q is None or q == 1) else domain.upper
    if q is None:
        return Rounded(1, domain.lower, top, True) if integer else Clamped(domain.lower, top)
    return Rounded(q, math.ceil(domain.lower / q) * q, math.floor(top / q) * q, integer)


class Clamped(Rounded):
    """A float kept within [lower, upper], on no step."""

    def __init__(self, lower: float, upper: float) -> None:
        super().__init__(0.0, lower, upper, False)

    def __call__(self, x: float) -> float:
        return min(max(float(x), self.lower), self.upper)


def stepped(name: str, value: Float | Integer, text: str, searcher: str) -> ParamPlan:
    """A domain with a step (``tune.quniform``, ``tune.qrandint``, ``tune.qloguniform``...) for a model that takes
    none, or none on a log scale: searched without it, each value rounded to the step as Tune's draw is."""
    from ray import tune
    from ray.tune.search.sample import Integer, LogUniform

    sampler = value.get_sampler()
    q, log = sampler.q, isinstance(sampler.get_sampler(), LogUniform)
    integer = isinstance(value, Integer)
    if integer:
        encoded = (tune.lograndint if log else tune.randint)(int(value.lower), int(value.upper))
    else:
        encoded = (tune.loguniform if log else tune.uniform)(value.lower, value.upper)
    how = f"searched by {searcher}{' in log space' if log else ''}, rounded to a multiple of {q:g}"
    return ParamPlan(name, text, how, ENCODED, encoded, within(value))


def _numeric_choice(value: Domain) -> TypeGuard[Categorical]:
    """A choice among numbers (batch sizes, widths, rates): searched in their order, which is what makes
    them numbers; a model that took them as unrelated labels would learn nothing from neighbours."""
    from ray.tune.search.sample import Categorical

    if not isinstance(value, Categorical):
        return False
    categories = list(value.categories)
    return len(set(categories)) == len(categories) >= 3 and all(is_number(v) for v in categories)


def _choice_as_index(value: Domain) -> tuple[list[Value], str] | None:
    """A choice searched through an index: its values in index order and how the plan says it, or None.

    Numbers in their order (see ``_numeric_choice``). Two options as listed: an index 0/1 loses nothing (two
    options have no order to get wrong), and TPE commits to the better one sooner than with a categorical
    kernel (on HPOLib's four tables, the median best loss was better on five of eight, e.g. 0.0079 against
    0.0098 on parkinsons at 64 trials).
    """
    from ray.tune.search.sample import Categorical

    if _numeric_choice(value):
        return sorted(value.categories), "an ordered choice"
    if (
        isinstance(value, Categorical)
        and len(value.categories) == 2
        and len(set(map(repr, value.categories))) == 2
    ):
        return list(value.categories), "a two-way choice (an index)"
    return None


def initial_random_points(num_samples: int) -> int:
    """How many configs a model-based searcher draws at random before its model takes over: Optuna's own
    10 once a sweep has 30 trials or more, a third of smaller ones (fewer random starts were within the
    seed-to-seed spread on HPOLib)."""
    return min(10, max(2, num_samples // 3))
