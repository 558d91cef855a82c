"""A ``sample_from`` function searched through the one random draw it makes.

``tune.sample_from(lambda _: 10 ** np.random.uniform(-4, -1))``, or a branch that returns
``np.random.uniform(0.5, 0.99)``, gives a new value at every call, so probing cannot list its values. But
its randomness is one call to a distribution a model can search. tuner runs the function with numpy's and
Python's random functions watched; when every run makes the same single draw (the same distribution with
the same arguments) and the function gives back exactly what it gave when the draw is replayed, the model
searches the draw (a uniform's range, an integer range, a choice, a normal's quantile) and the function is
run on the model's value to give the parameter. Whatever the function does with its draw (a power of ten, a
rounding) is kept exactly; the model searches the space the author drew in.
"""

from __future__ import annotations

import contextlib
import math
import random as pyrandom
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

# Draw is pickled with searchers under this module's name: it is imported here, not only used
from tuner.searchers.draws import (  # noqa: F401
    NUMPY_FUNCTIONS,
    PYTHON_FUNCTIONS,
    Draw,
    _numpy_draw,
    _python_draw,
)
from tuner.searchers.normal_quantile import QUANTILE_EDGE
from tuner.value_types import Config, Value
from tuner.values import as_float

if TYPE_CHECKING:
    import numpy as np
    from ray.tune.search.sample import Function

TRACE_RUNS = 200


@dataclass(frozen=True)
class Traced:
    """A function that makes one draw: the draw, and an example of the values it gives."""

    draw: Draw | None  # None: it makes no draw, its value is a function of the other parameters
    low: float | None = None  # the smallest and largest values seen, for the plan
    high: float | None = None

    @property
    def its_draw(self) -> Draw:
        """The draw of a function traced on one config or none, where it always makes one (``trace``)."""
        if self.draw is None:
            raise ValueError("a function traced on one config makes a draw; this one made none")
        return self.draw


class _Watch:
    """Records or replays the random draws made while it is installed."""

    def __init__(self, replay: list[Value] | None = None) -> None:
        self.calls: list[Draw | str] = []  # a Draw, or the name of a call it cannot follow
        # what each call gave back: numpy's or Python's result, handed to the user's function as it is
        self.results: list[Any] = []
        self.replay = replay

    def restart(self) -> None:
        self.calls, self.results = [], []

    # ``original`` is numpy's or Python's random function: the user's call's arguments and its result pass
    # through untouched
    def called(
        self,
        name: str,
        draw: Draw | None,
        original: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> Any:
        self.calls.append(draw if draw is not None else name)
        if self.replay is not None and draw is not None and len(self.calls) <= len(self.replay):
            result = self.replay[len(self.calls) - 1]
        else:
            result = original(*args, **kwargs)
        self.results.append(result)
        return result


def _plain(value: Value) -> Value:
    from tuner.values import plain

    return plain(value)


@contextlib.contextmanager
def _watching(watch: _Watch, function: Callable[..., Value]) -> Iterator[None]:
    """numpy's and Python's random functions routed through ``watch`` (as module attributes, and as names the
    function's module imported from them), restored after."""
    import numpy as np

    swaps: dict[int, Callable[..., Any]] = {}  # id of a random function -> its watched stand-in
    targets: list[tuple[ModuleType | dict[str, Any], str, Callable[..., Any]]] = []  # (owner, name, function)
    for module, names, reader in (
        (np.random, NUMPY_FUNCTIONS, _numpy_draw),
        (pyrandom, PYTHON_FUNCTIONS, _python_draw),
    ):
        for name in names:
            original = getattr(module, name, None)
            if original is None:
                continue
            swaps[id(original)] = _watched(watch, f"{module.__name__}.{name}", original, reader)
            targets.append((module, name, original))
    module_globals = getattr(function, "__globals__", None)
    if isinstance(module_globals, dict):
        for name, value in list(module_globals.items()):
            if callable(value) and id(value) in swaps:
                targets.append((module_globals, name, value))
    try:
        for owner, name, original in targets:
            _set(owner, name, swaps[id(original)])
        yield
    finally:
        for owner, name, original in targets:
            _set(owner, name, original)


def _watched(
    watch: _Watch,
    name: str,
    original: Callable[..., Any],
    reader: Callable[[str, tuple[Any, ...], dict[str, Any]], Draw | None],
) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            draw = reader(name.rpartition(".")[2], args, kwargs)
        except (KeyError, TypeError, ValueError):
            draw = None
        return watch.called(name, draw, original, args, kwargs)

    return call


def _set(owner: ModuleType | dict[str, Any], name: str, value: Callable[..., Any]) -> None:
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)


def _run(domain: Function, config: Config, watch: _Watch) -> Value:
    """The function's value on ``config``, called as Tune calls it: with the config, or, where that fails, with
    the older ``spec`` whose ``spec.config.name`` reads the config (its draws made before it failed forgotten)."""
    from tuner.nesting import unflatten

    config = unflatten(config)  # a nested space's function reads config["model"]["width"]
    with _watching(watch, domain.func):
        if not domain.pass_config:
            return _plain(domain.func())
        try:
            return _plain(domain.func(dict(config)))
        except (AttributeError, KeyError):
            watch.restart()
            return _plain(domain.func(_Spec(config=_Spec(config))))


class _Spec(dict[str, Value]):
    """The older ``sample_from(lambda spec: spec.config.x)`` argument: a mapping read by attribute too."""

    def __getattr__(self, name: str) -> Value:
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(name) from None
        return _Spec(value) if isinstance(value, dict) and not isinstance(value, _Spec) else value


def replay(domain: Function, config: Config, draw: Value) -> Value:
    """The function's value when its draw is ``draw``."""
    return _run(domain, config, _Watch(replay=[draw]))


def trace(
    domain: Function,
    seed: int,
    config: Config | None = None,
    configs: Callable[[np.random.RandomState], dict[str, Value]] | None = None,
) -> Traced | str:
    """The one draw a ``sample_from`` function makes, or why it cannot be searched through one, in words a
    user can act on. Runs it ``TRACE_RUNS`` times, seeded, the global generators restored after, on ``config``
    or on a config ``configs`` draws afresh for each run (from a seeded generator it is given)."""
    import numpy as np

    state, py_state = np.random.get_state(), pyrandom.getstate()
    np.random.seed(seed)
    pyrandom.seed(seed)
    rng = np.random.RandomState(seed + 1)
    # each run's calls, what they gave back, the function's output, and the config it was given
    runs: list[tuple[list[Draw | str], list[Any], Value, dict[str, Value]]] = []
    try:
        for _ in range(TRACE_RUNS):
            given = configs(rng) if configs is not None else dict(config or {})
            watch = _Watch()
            output = _run(domain, given, watch)
            runs.append((watch.calls, watch.results, output, given))
        shapes = {tuple(calls) for calls, _, _, _ in runs}
        unfollowed = sorted({c for calls, _, _, _ in runs for c in calls if isinstance(c, str)})
        if unfollowed:
            return (
                f"it calls {unfollowed[0]} in a form tuner does not follow (an array, or arguments it cannot "
                "read); draw one value per call"
            )
        counts = {len(calls) for calls, _, _, _ in runs}
        if counts == {0}:
            if configs is not None and all(
                _same(_run(domain, given, _Watch()), output) for _, _, output, given in runs[:20]
            ):
                return Traced(None)  # no draw of its own: a function of the other parameters
            return (
                "its values come from a random source tuner does not follow; draw with numpy.random (uniform, "
                "randint, normal, choice...) or Python's random module"
            )
        if len(counts) > 1:
            return "it makes a different number of random draws from one call to the next"
        if counts != {1}:
            return (
                f"it makes {counts.pop()} random draws each time; tuner searches a function through one draw: "
                "make each draw a parameter of its own"
            )
        if len(shapes) > 1:
            kinds = sorted({calls[0].text() for calls, _, _, _ in runs if isinstance(calls[0], Draw)})[:2]
            return (
                f"its one draw changes from call to call ({' and '.join(kinds)}...): the arguments of its draw "
                "should be fixed"
            )
        draw = runs[0][0][0]
        assert isinstance(draw, Draw)
        for _, results, output, given in runs[:20]:
            if not _same(replay(domain, given, results[0]), output):
                return (
                    "its values come from a random source tuner does not follow besides its draw; draw with "
                    "numpy.random or Python's random module only"
                )
    except Exception as exc:  # noqa: BLE001 - the user's function failed: say it in a line
        return f"it fails when drawn: {type(exc).__name__}: {exc}"
    finally:
        np.random.set_state(state)
        pyrandom.setstate(py_state)
    outputs = [output for _, _, output, _ in runs]
    numbers = [o for o in outputs if isinstance(o, (int, float)) and not isinstance(o, bool)]
    low, high = (min(numbers), max(numbers)) if len(numbers) == len(outputs) else (None, None)
    return Traced(draw, low, high)


def _same(a: Value, b: Value) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)
    return a == b


class TracedDecode:
    """A model's value for the draw -> the parameter (picklable, as Ray saves searchers)."""

    def __init__(
        self, domain: Function, draw: Draw | None, inner: Callable[[Value], Value] | None = None
    ) -> None:
        self.domain, self.draw, self.inner = domain, draw, inner

    def __call__(self, raw: Value, config: Config | None = None) -> Value:
        if self.draw is None:  # computed from the config alone
            return _run(self.domain, config or {}, _Watch())
        searched = self.inner(raw) if self.inner is not None else raw
        return replay(self.domain, config or {}, self.draw.value(searched))


class TracedEncode:
    """A parameter's value -> the model's value for the draw that gives it (warm starts): every value of a
    discrete draw tried, a continuous draw inverted where the function is monotonic; ValueError otherwise."""

    GRID = 257

    def __init__(self, domain: Function, draw: Draw, inner: Callable[[Value], Value] | None = None) -> None:
        self.domain, self.draw, self.inner = domain, draw, inner

    def __call__(self, value: Value, config: Config | None = None) -> Value:
        draw = self._draw_for(value, dict(config or {}))
        if self.inner is None:
            return draw
        return self.inner(draw)

    def _draw_for(self, value: Value, config: Config) -> Value:
        kind, args = self.draw.kind, self.draw.args
        if kind in ("choice", "randint"):
            if kind == "choice":
                candidates: list[Value] | range = list(args)
            else:
                first, last = (int(b) for b in self.draw.bounds())
                candidates = range(first, min(last, first + 4096))
            for candidate in candidates:
                if _same(_plain(replay(self.domain, config, candidate)), _plain(value)):
                    return candidate
            raise ValueError(f"{value!r} is not a value this function gives")
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise ValueError(f"{value!r} is not a number")
        low, high = self.draw.bounds() if kind == "uniform" else (QUANTILE_EDGE, 1 - QUANTILE_EDGE)
        points = [low + (high - low) * i / (self.GRID - 1) for i in range(self.GRID)]
        values = [replay(self.domain, config, self.draw.value(p)) for p in points]
        outputs = [float(o) for o in values if isinstance(o, (int, float))]
        if len(outputs) < len(values):
            raise ValueError("not a numeric function")
        rising = all(b > a for a, b in zip(outputs, outputs[1:], strict=False))
        if not rising and not all(b < a for a, b in zip(outputs, outputs[1:], strict=False)):
            raise ValueError("the function is not monotonic in its draw")
        lo, hi = (points[0], points[-1]) if rising else (points[-1], points[0])
        if not min(outputs) <= value <= max(outputs):
            raise ValueError(f"{value!r} is outside the function's values")
        for _ in range(80):
            middle = (lo + hi) / 2
            if as_float(replay(self.domain, config, self.draw.value(middle))) < value:
                lo = middle
            else:
                hi = middle
        found = (lo + hi) / 2
        if not math.isclose(
            as_float(replay(self.domain, config, self.draw.value(found))),
            value,
            rel_tol=1e-6,
            abs_tol=1e-12,
        ):
            raise ValueError(f"{value!r} is not a value this function gives")
        return found  # the uniform's own value, or the quantile the model sees for the other kinds
