"""Searchers: one registry entry per algorithm, each in its own module beside this one.

Adding a searcher is one new entry (a ``SearcherEntry`` subclass) listed in ``ENTRIES``, plus its tests:
the CLI's choices, ``--help``, the plan, the runner and the guide's table (docs/searchers-schedulers.md) read
from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.searchers.base import SearcherContext, SearcherEntry
from tuner.searchers.bayesopt_gp import BayesOpt
from tuner.searchers.bohb_kde import BohbKde
from tuner.searchers.curve_proposals import CurveProposals
from tuner.searchers.hyperopt_tpe import HyperOpt
from tuner.searchers.optuna_gp import OptunaGP
from tuner.searchers.optuna_tpe import OptunaTPE
from tuner.searchers.plan import CannotSearch, ParamPlan, SearchPlan, describe_domain, initial_random_points
from tuner.searchers.quantile_cqr import QuantileCQR
from tuner.searchers.random_search import RandomSearch
from tuner.value_types import Space, SpaceEntry

if TYPE_CHECKING:
    from ray.tune.search import SearchAlgorithm, Searcher

ENTRIES: tuple[type[SearcherEntry], ...] = (
    OptunaTPE,
    OptunaGP,
    QuantileCQR,
    HyperOpt,
    BayesOpt,
    RandomSearch,
    BohbKde,
    CurveProposals,
)
REGISTRY: dict[str, type[SearcherEntry]] = {e.name: e for e in ENTRIES}
NAMES: tuple[str, ...] = tuple(REGISTRY)
AUTO = "auto"  # not an algorithm: the choice among them for a space and budget (tuner/searchers/auto.py)
CHOICES: tuple[str, ...] = (AUTO, *NAMES)
DEFAULT = AUTO

__all__ = [
    "AUTO",
    "CHOICES",
    "DEFAULT",
    "NAMES",
    "REGISTRY",
    "ParamPlan",
    "SearchPlan",
    "SearcherContext",
    "SearcherEntry",
    "build_searcher",
    "describe_domain",
    "entry",
    "initial_random_points",
    "plan_search",
]


def entry(name: str) -> SearcherEntry:
    if name not in REGISTRY:
        raise UsageError(f"unknown searcher {name!r}; valid: {', '.join(NAMES)}")
    return REGISTRY[name]()


def plan_search(params: Space, name: str, seed: int = 0) -> SearchPlan:
    """How searcher ``name`` treats each parameter; a parameter it cannot search names those that can."""
    from tuner.ray_compat import spec_form_warning_once
    from tuner.searchers.planning import plan_search as plan

    spec_form_warning_once()  # Ray's advice on sample_from(lambda spec: ...) is said once, not at every draw
    try:
        return plan(params, entry(name), seed)
    except CannotSearch as exc:
        if exc.capable is not None:  # already says which searchers can
            raise
        capable = [n for n in NAMES if n != name and _can_search(n, exc.param, exc.value, seed)]
        raise CannotSearch(exc.param, exc.value, name, capable) from None


def _can_search(name: str, param: str, value: SpaceEntry, seed: int) -> bool:
    from tuner.searchers.plan import NothingToSearch
    from tuner.searchers.planning import plan_search as plan

    try:
        plan({param: value}, REGISTRY[name](), seed)
    except NothingToSearch:
        return True  # the parameter itself was fine; alone, it left the model nothing to do
    except UsageError:
        return False
    return True


def build_searcher(plan: SearchPlan, ctx: SearcherContext) -> Searcher | SearchAlgorithm:
    """The Ray searcher for a plan (see ``SearcherEntry.build``)."""
    return entry(plan.searcher).build(plan, ctx)
