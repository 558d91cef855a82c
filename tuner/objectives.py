"""What a sweep optimises: one metric or several (``--metric loss,latency_ms --mode min,min``), and the
constraints a trial must meet to count (``--constraint "gpu_memory_peak_mb<=4000"``).

Kept free of Ray and torch: the settings, the review and the launch path all read them from here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import cycle
from typing import Literal, Protocol, TypeVar, overload

from tuner.errors import UsageError
from tuner.value_types import Result
from tuner.values import number

T = TypeVar("T")

Mode = Literal["min", "max"]  # whether a metric is minimised or maximised
MODES: tuple[Mode, ...] = ("min", "max")


def better(a: float, b: float, mode: str) -> bool:
    """Whether ``a`` beats ``b`` (strictly) under ``mode``."""
    return a < b if mode == "min" else a > b


class Picker(Protocol):
    """``min`` or ``max`` as ``pick`` gives them: the better of two values, of several, or of several by a key."""

    @overload
    def __call__(self, a: float, b: float, /) -> float: ...
    @overload
    def __call__(self, values: Iterable[float], /) -> float: ...
    @overload
    def __call__(self, values: Iterable[T], /, *, key: Callable[[T], float]) -> T: ...


def pick(mode: str) -> Picker:
    """``min`` or ``max``: the better of several values under ``mode``."""
    return min if mode == "min" else max


def sign(mode: str) -> int:
    """1 for min, -1 for max: a value times this is in the sign where less is better."""
    return 1 if mode == "min" else -1


def as_mode(text: str) -> Mode:
    """A mode as given (a flag, a file, Ray's own setting), checked."""
    for mode in MODES:
        if text == mode:
            return mode
    raise UsageError(f"unknown mode {text!r}; valid: {', '.join(MODES)}")


OPERATORS = ("<=", ">=", "<", ">")
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w./-]*)\s*(<=|>=|<|>)\s*(\S+)\s*$")


@dataclass(frozen=True)
class Objective:
    name: str
    mode: Mode

    def better(self, a: float, b: float) -> bool:
        return better(a, b, self.mode)

    def as_min(self, value: float) -> float:
        """The value in the sign every comparison uses: less is better."""
        return value * sign(self.mode)

    def __str__(self) -> str:
        return f"{self.name} ({self.mode})"


# What a sweep optimises, in order: one objective is a tuple of one.
Objectives = tuple[Objective, ...]
LOSS: Objectives = (Objective("loss", "min"),)  # what a sweep optimises when nothing says otherwise


def check(objectives: object) -> None:
    """What a sweep optimises is a non-empty tuple of ``Objective``: anything else is a caller's mistake (one
    objective is a tuple of one, never an empty tuple)."""
    if not (
        isinstance(objectives, tuple) and objectives and all(isinstance(o, Objective) for o in objectives)
    ):
        raise TypeError(f"objectives must be a non-empty tuple of Objective, got {objectives!r}")


def single(objectives: Objectives) -> Objective:
    """The one objective of a sweep given to a model of one value (tuner/algorithms.py lets only a
    ``multi_objective`` entry meet several)."""
    try:
        (only,) = objectives
    except ValueError:  # a registry entry's mistake, not the user's
        raise ValueError(f"one objective expected, got {len(objectives)}") from None
    return only


def ray_form(objectives: Objectives) -> tuple[str | list[str], str | list[str]]:
    """``metric`` and ``mode`` as Ray's searchers take them: strings for one objective, lists for several."""
    if len(objectives) == 1:
        return objectives[0].name, objectives[0].mode
    return [o.name for o in objectives], [o.mode for o in objectives]


@dataclass(frozen=True)
class Constraint:
    """``metric op bound``: a trial whose last reported ``metric`` breaks it is infeasible."""

    metric: str
    op: str
    bound: float

    @classmethod
    def parse(cls, text: str) -> Constraint:
        match = _CONSTRAINT.match(str(text))
        if not match:
            raise UsageError(
                f"--constraint {text!r} is not METRIC<=VALUE; e.g. --constraint 'gpu_memory_peak_mb<=4000' "
                f"(operators: {', '.join(OPERATORS)})"
            )
        metric, op, bound = match.groups()
        try:
            number = float(bound)
        except ValueError:
            raise UsageError(f"--constraint {text!r}: {bound!r} is not a number") from None
        if not math.isfinite(number):
            raise UsageError(f"--constraint {text!r}: the bound must be a finite number")
        return cls(metric, op, number)

    def violation(self, value: float | None) -> float:
        """How far ``value`` is beyond the bound (0 when it meets it; infinite when it was not reported or is
        not finite): Optuna's convention, feasible at 0 or less."""
        if value is None or not math.isfinite(value):
            return math.inf
        over = value - self.bound if self.op in ("<=", "<") else self.bound - value
        if self.op in ("<", ">") and over == 0:
            return math.ulp(max(abs(self.bound), 1.0))  # a strict bound met exactly is broken, by the least
        return max(0.0, over)

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.bound:g}"


def check_satisfiable(constraints: Sequence[Constraint]) -> None:
    """Bounds on one metric that no value meets together (score<=1 and score>=2) make every trial infeasible:
    refused as the bad input they are."""
    for c in constraints:
        for other in constraints:
            upper, lower = (c, other) if c.op in ("<=", "<") else (other, c)
            if (
                c.metric == other.metric
                and upper.op in ("<=", "<")
                and lower.op in (">=", ">")
                and (
                    upper.bound < lower.bound
                    or (upper.bound == lower.bound and (upper.op, lower.op) != ("<=", ">="))
                )
            ):
                raise UsageError(f"--constraint {upper} and {lower}: no value of {c.metric} meets both")


Given = str | Sequence[str]  # a flag's "loss,latency_ms", or a YAML list of names (or of modes)


def _items(given: Given) -> list[str]:
    return [str(x).strip() for x in (given.split(",") if isinstance(given, str) else given)]


def metric_names(metric: Given) -> list[str]:
    """``--metric`` as given (comma-separated for several, or a list), each name checked."""
    shown = metric if isinstance(metric, str) else ",".join(map(str, metric))
    names = _items(metric)
    if not any(names):
        raise UsageError(f"--metric {shown!r} names no metric; give one, or several separated by commas")
    if any(not n for n in names):
        raise UsageError(
            f"--metric {shown!r} has an empty name; give names separated by commas, e.g. loss,latency_ms"
        )
    if not isinstance(metric, str) and (joined := next((n for n in names if "," in n), None)):
        raise UsageError(f"metric {list(metric)}: {joined!r} names several; give one metric per list item")
    if spaced := next((n for n in names if len(n.split()) > 1), None):
        raise UsageError(
            f"--metric {shown!r}: {spaced!r} is not one metric's name; give several separated by commas, e.g. "
            f"{','.join(spaced.split())}"
        )
    if len(set(names)) < len(names):
        raise UsageError(f"--metric {shown!r} names a metric twice")
    return names


def objectives_from(metric: Given, mode: Given) -> Objectives:
    """What a sweep optimises, from ``metric`` and ``mode`` as given (comma-separated text or lists): one mode
    for all, or one per metric. The one place the given forms are read; everything after holds the tuple."""
    names = metric_names(metric)
    modes = _items(mode)
    for m in modes:
        if m not in MODES:
            raise UsageError(
                f"unknown mode {m!r}; valid: {', '.join(MODES)} (one per metric, e.g. --mode min,max)"
            )
    if len(modes) not in (1, len(names)):
        raise UsageError(
            f"--metric names {len(names)} metric(s) ({', '.join(names)}) but --mode gives {len(modes)} "
            f"modes; give one mode for all or one per metric, e.g. --mode {','.join(['min'] * len(names))}"
        )
    # one mode for all, or one each: cycling the modes given covers both
    return tuple(Objective(n, as_mode(m)) for n, m in zip(names, cycle(modes)))


def from_mapping(metrics: object, where: str = "space metrics") -> Objectives:
    """``{"loss": "min", "latency_ms": "min"}``: a space's ``metrics``, a sweep file's, and how
    ``tuner_config.yaml`` keeps a sweep's objectives."""
    if not isinstance(metrics, Mapping) or not metrics:
        raise UsageError(f"{where} must map each metric to 'min' or 'max', e.g. {{'loss': 'min'}}")
    try:
        return objectives_from([str(k) for k in metrics], [str(v) for v in metrics.values()])
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None


def as_mapping(objectives: Objectives) -> dict[str, str]:
    """The objectives as ``tuner_config.yaml`` keeps them (``from_mapping`` reads them back)."""
    return {o.name: o.mode for o in objectives}


def named(objectives: Objectives) -> str:
    """``loss (min), latency_ms (min)``: the objectives as every message names them."""
    return ", ".join(map(str, objectives))


def reported(objectives: Sequence[Objective], row: Result) -> dict[str, float] | None:
    """Each objective's value in a result, when every one is a finite number; else None (not a point)."""
    values = {o.name: number(row.get(o.name)) for o in objectives}
    finite = {name: v for name, v in values.items() if v is not None}
    return finite if len(finite) == len(values) else None


def as_point(objectives: Sequence[Objective], values: Mapping[str, float]) -> tuple[float, ...]:
    """A result's objectives as a point where less is better on every axis (tuner/pareto.py)."""
    return tuple(o.as_min(values[o.name]) for o in objectives)


def violations(constraints: Sequence[Constraint], result: Result) -> list[float]:
    """Each constraint's violation by ``result`` (a trial's last reported values)."""
    from tuner.values import number

    return [c.violation(number(result.get(c.metric))) for c in constraints]


def judged(constraints: Sequence[Constraint], rows: Sequence[Result]) -> Result:
    """What a trial's constraints are judged on: its last row, with each constraint's metric as the trial last
    reported it (a figure measured at some epochs only, or once after training, keeps its last value)."""
    last = dict(rows[-1]) if rows else {}
    for c in constraints:
        if last.get(c.metric) in (None, ""):
            earlier = next(
                (row[c.metric] for row in reversed(rows) if row.get(c.metric) not in (None, "")), None
            )
            if earlier is not None:
                last[c.metric] = earlier
    return last


def broken(constraints: Sequence[Constraint], result: Result) -> list[str]:
    """The constraints ``result`` breaks, as the user wrote them, with the value it had."""
    from tuner.values import number

    out = []
    for c, v in zip(constraints, violations(constraints, result), strict=True):
        if v > 0:
            value = number(result.get(c.metric))
            out.append(f"{c.metric} {'not reported' if value is None else f'{value:.4g}'} breaks {c}")
    return out
