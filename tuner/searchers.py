"""Searchers, and the plan that says how each parameter will really be searched.

A searcher must never mis-search silently. ``plan_search`` looks at every parameter before any trial
starts and decides, per searcher, whether it is searched natively, searched through a faithful encoding
(log space for log-scale domains, an index for categorical ones: BayesOpt knows only bounded floats),
drawn at random (``sample_from``: an opaque function no model can search), or impossible, which stops
the sweep with an error naming the parameter and the searchers that can handle it.
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ray.tune.search import BasicVariantGenerator, Searcher
from ray.tune.search.sample import (
    Categorical,
    Domain,
    Float,
    Function,
    Integer,
    LogUniform,
    Normal,
    Quantized,
    Uniform,
)

from tuner.config import SEARCHERS
from tuner.errors import UsageError

NATIVE, LOG, INDEX, RANDOM = "native", "log", "index", "random"


@dataclass(frozen=True)
class ParamPlan:
    """How one parameter is searched: ``encoded`` is the domain the searcher sees, ``decode`` maps back."""

    name: str
    domain_text: str
    how: str
    treatment: str
    encoded: Any = None
    decode: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class SearchPlan:
    searcher: str
    params: tuple[ParamPlan, ...]
    raw_space: Mapping[str, Any]

    def lines(self) -> list[str]:
        width = max(len(p.name) for p in self.params)
        dwidth = max(len(p.domain_text) for p in self.params)
        return [f"  {p.name:<{width}}  {p.domain_text:<{dwidth}}  {p.how}" for p in self.params]

    @property
    def searched_space(self) -> dict[str, Any]:
        """The (encoded) domains handed to a model-based searcher."""
        return {p.name: p.encoded for p in self.params if p.treatment in (NATIVE, LOG, INDEX)}


def describe_domain(value: Any) -> str:
    """A short human description of a Tune domain, e.g. ``loguniform(0.0001, 0.1)``."""
    if isinstance(value, dict) and "grid_search" in value:
        return f"grid_search{value['grid_search']}"
    if isinstance(value, Function):
        return "sample_from(fn)"
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


def _is_grid(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"grid_search"}


def _unsupported(name: str, value: Any, searcher: str, capable: list[str]) -> UsageError:
    return UsageError(
        f"parameter {name!r} ({describe_domain(value)}) cannot be searched by {searcher}; "
        f"searchers that can: {', '.join(capable)}"
    )


def _random_plan(name: str, value: Any) -> ParamPlan:
    if not isinstance(value, Domain) and not _is_grid(value):
        return ParamPlan(name, describe_domain(value), "constant", NATIVE, value)
    how = "every value, crossed with the other grids" if _is_grid(value) else "drawn at random"
    return ParamPlan(name, describe_domain(value), how, NATIVE, value)


def _model_free_plan(name: str, value: Any, searcher: str) -> ParamPlan | None:
    """What a model-based searcher does with grids, ``sample_from`` and constants; None for real domains."""
    if _is_grid(value):
        raise _unsupported(name, value, searcher, ["random"])
    text = describe_domain(value)
    if isinstance(value, Function):
        how = f"drawn at random, not searched by {searcher} (sample_from is opaque)"
        return ParamPlan(name, text, how, RANDOM, value)
    if not isinstance(value, Domain):
        return ParamPlan(name, text, "constant", NATIVE, value)
    return None


def _hyperopt_plan(name: str, value: Any) -> ParamPlan:
    if (plan := _model_free_plan(name, value, "hyperopt")) is not None:
        return plan
    text = describe_domain(value)
    sampler = value.get_sampler()
    sampler = sampler.get_sampler() if isinstance(sampler, Quantized) else sampler
    if isinstance(value, Categorical):
        how = "searched by hyperopt as a categorical"
    elif isinstance(sampler, LogUniform):
        how = "searched by hyperopt in log space"
    elif isinstance(sampler, Normal):
        how = "searched by hyperopt with a normal prior"
    else:
        how = "searched by hyperopt"
    return ParamPlan(name, text, how, NATIVE, value)


def _bayesopt_plan(name: str, value: Any) -> ParamPlan:
    """BayesOpt models bounded floats only; encode everything else faithfully or refuse."""
    from ray import tune

    if (plan := _model_free_plan(name, value, "bayesopt")) is not None:
        return plan
    text = describe_domain(value)
    if isinstance(value, Categorical):
        categories = list(value.categories)
        n = len(categories)

        def pick(x: float, categories: list = categories) -> Any:
            return copy.deepcopy(categories[min(int(math.floor(x)), n - 1)])

        how = f"searched by bayesopt through an index over its {n} choices"
        return ParamPlan(name, text, how, INDEX, tune.uniform(0, n), pick)
    sampler = value.get_sampler()
    q = None
    if isinstance(sampler, Quantized):
        q, sampler = sampler.q, sampler.get_sampler()
    if isinstance(sampler, Normal) or not isinstance(sampler, (Uniform, LogUniform)):
        raise _unsupported(name, value, "bayesopt", ["hyperopt", "random"])
    integer = isinstance(value, Integer)
    log_scale = isinstance(sampler, LogUniform)
    # Integers are searched as a continuous value and floored, so each integer keeps its share of the
    # range (Tune's integer upper bounds are exclusive); log-scale domains are searched in log space.
    top = value.upper - 1 if integer else value.upper

    def decode(x: float) -> Any:
        v = math.exp(x) if log_scale else x
        if q is not None:
            v = round(v / q) * q
        elif integer:
            v = math.floor(v)
        v = min(max(v, value.lower), top)
        return int(v) if integer else float(v)

    bounds = (math.log(value.lower), math.log(value.upper)) if log_scale else (value.lower, value.upper)
    how = "searched by bayesopt" + (" in log space" if log_scale else "")
    if integer:
        how += ", floored to an integer"
    if q is not None:
        how += f", rounded to multiples of {q:g}"
    if not (log_scale or integer or q is not None):
        return ParamPlan(name, text, how, NATIVE, value)
    return ParamPlan(name, text, how, LOG if log_scale else NATIVE, tune.uniform(*bounds), decode)


_PLANNERS = dict(zip(SEARCHERS, (_random_plan, _hyperopt_plan, _bayesopt_plan), strict=True))


def plan_search(params: Mapping[str, Any], searcher: str) -> SearchPlan:
    """Decide, before anything runs, how ``searcher`` treats each parameter; raise for impossible pairs."""
    if searcher not in _PLANNERS:
        raise UsageError(f"unknown searcher {searcher!r}; valid: {', '.join(_PLANNERS)}")
    for name, value in params.items():
        if isinstance(value, dict) and not _is_grid(value):
            raise UsageError(f"parameter {name!r} is a nested mapping; flatten it into separate parameters")
    plans = tuple(_PLANNERS[searcher](name, value) for name, value in params.items())
    if searcher != "random" and not any(
        p.treatment in (NATIVE, LOG, INDEX) and isinstance(p.encoded, Domain) for p in plans
    ):
        raise UsageError(
            f"{searcher} has nothing to search in this space: every parameter is a constant or sample_from; "
            "use --searcher random"
        )
    return SearchPlan(searcher, plans, dict(params))


def initial_random_points(num_samples: int) -> int:
    """How many configs a model-based searcher draws at random before its model takes over."""
    return min(10, max(2, num_samples // 4))


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers, so configs print, compare and serialise cleanly."""
    return value.item() if hasattr(value, "item") and getattr(value, "ndim", None) == 0 else value


class PlannedSearcher(Searcher):
    """Wraps a model-based searcher: decodes its suggestions and fills in parameters it does not search.

    The inner searcher keeps its own encoded values (log lr, a category index) keyed by trial id, so
    results flow back to it unchanged; only what trials see is decoded.

    It also remembers each trial's last result: Tune completes a trial that HyperBand stopped while
    paused with no result at all, and BayesOpt would then wait forever for its random phase to finish.
    """

    def __init__(self, inner: Searcher, plan: SearchPlan, seed: int) -> None:
        super().__init__(metric=inner.metric, mode=inner.mode)
        self.inner = inner
        self.plan = plan
        self.seed = seed
        self._draws = 0
        self._last_results: dict[str, dict] = {}

    def set_search_properties(self, metric: str | None, mode: str | None, config: dict, **spec: Any) -> bool:
        return self.inner.set_search_properties(metric, mode, config, **spec)

    def set_max_concurrency(self, max_concurrent: int) -> bool:
        return self.inner.set_max_concurrency(max_concurrent)

    def suggest(self, trial_id: str) -> dict | None:
        suggestion = self.inner.suggest(trial_id)
        if suggestion is None or suggestion == Searcher.FINISHED:
            return suggestion
        import numpy as np

        rng = np.random.RandomState((self.seed * 7919 + self._draws) % (2**32))
        self._draws += 1
        config: dict[str, Any] = {}
        for p in self.plan.params:
            if p.treatment == RANDOM:
                config[p.name] = _plain(p.encoded.sample(config=config, random_state=rng))
            elif isinstance(p.encoded, Domain):
                raw = suggestion[p.name]
                config[p.name] = _plain(p.decode(raw) if p.decode else raw)
            else:
                config[p.name] = p.encoded
        return config

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        self._last_results[trial_id] = result
        self.inner.on_trial_result(trial_id, result)

    def on_trial_complete(self, trial_id: str, result: dict | None = None, error: bool = False) -> None:
        last = self._last_results.pop(trial_id, None)
        if result is None and not error:
            result = last
        self.inner.on_trial_complete(trial_id, result=result, error=error)

    def save(self, checkpoint_path: str) -> None:
        """One file holding the inner searcher's own save and our draw counter."""
        self.inner.save(checkpoint_path)
        with open(checkpoint_path, "rb") as f:
            inner_state = f.read()
        with open(checkpoint_path, "wb") as f:
            pickle.dump({"inner": inner_state, "draws": self._draws}, f)

    def restore(self, checkpoint_path: str) -> None:
        import tempfile

        with open(checkpoint_path, "rb") as f:
            state = pickle.load(f)
        with tempfile.NamedTemporaryFile(suffix=".pkl") as inner_file:
            inner_file.write(state["inner"])
            inner_file.flush()
            self.inner.restore(inner_file.name)
        self._draws = state["draws"]


def build_searcher(
    plan: SearchPlan, metric: str, mode: str, num_samples: int, seed: int, max_concurrent: int | None = None
) -> Searcher:
    """The Ray searcher for a plan. Random search keeps Ray's own generator over the raw space; given
    ``max_concurrent`` it creates trials only as slots free up (Tune ignores its own limit for it)."""
    if plan.searcher == "random":
        return BasicVariantGenerator(random_state=seed, max_concurrent=max_concurrent or 0)
    space = plan.searched_space
    warmup = initial_random_points(num_samples)
    if plan.searcher == "hyperopt":
        from ray.tune.search.hyperopt import HyperOptSearch

        space = HyperOptSearch.convert_search_space(space)
        inner = HyperOptSearch(
            space=space, metric=metric, mode=mode, n_initial_points=warmup, random_state_seed=seed
        )
    else:
        from ray.tune.search.bayesopt import BayesOptSearch

        inner = BayesOptSearch(
            space=BayesOptSearch.convert_search_space(space),
            metric=metric,
            mode=mode,
            random_state=seed,
            random_search_steps=warmup,
            verbose=0,
        )
    return PlannedSearcher(inner, plan, seed)


def searcher_intro(plan: SearchPlan, num_samples: int) -> str:
    if plan.searcher == "random":
        return "search plan (random):"
    model = "TPE" if plan.searcher == "hyperopt" else "a Gaussian process"
    warmup = initial_random_points(num_samples)
    return f"search plan ({plan.searcher}: {warmup} random configs first, then {model}):"
