"""What a searcher entry is, and the wrapper that lets a model search encoded domains.

An entry (one module per algorithm beside this one) says what the searcher can model (``plan_domain``),
how it is built from a plan (``build_inner``) and how it introduces itself. The runner, the CLI's choices,
the plan printed before a sweep and the guide's table (docs/searchers-schedulers.md) all read the registry in
``__init__``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tuner.objectives import Constraint, Objective, Objectives
from tuner.objectives import check as check_objectives
from tuner.searchers.plan import NATIVE, ParamPlan, SearchPlan, initial_random_points

if TYPE_CHECKING:
    from ray.tune.search import SearchAlgorithm, Searcher
    from ray.tune.search.sample import Domain


# plan_native: this model takes bounded domains, so a normal is searched through its quantile
QUANTILE = "quantile"


@dataclass(frozen=True)
class SearcherContext:
    """What a searcher is built from, as a scheduler is built from its SchedulerContext."""

    objectives: Objectives  # as SchedulerContext.objectives
    num_samples: int  # trials the sweep plans (the random start is sized from it)
    seed: int = 0
    max_concurrent: int | None = None
    # a scheduler holds trials until more join (sync brackets): never block on a model
    never_wait: bool = False
    generator_only: bool = False  # the scheduler runs over Tune's variant generator only (PBT)
    full_epochs: int | None = None  # a trial that ends before them without an error was stopped early
    constraints: tuple[Constraint, ...] = ()  # bounds told to a model that takes them

    def __post_init__(self) -> None:
        check_objectives(self.objectives)

    @property
    def objective(self) -> Objective:
        """The first objective: what a searcher of one value is told (tuner/algorithms.py lets only a
        ``multi_objective`` entry meet several)."""
        return self.objectives[0]


class SearcherEntry:
    """One searching algorithm. Model-free entries (random) override ``build`` and leave the rest."""

    name: ClassVar[str]
    summary: ClassVar[str]
    model: ClassVar[str] = ""  # what it fits to the results, for the plan's first line
    model_based: ClassVar[bool] = True
    requires_scheduler: ClassVar[str | None] = None  # e.g. BOHB's searcher only works under its scheduler
    # Whether the model takes a trial a scheduler stopped early as pruned: ranked by how far it got and its
    # value there (tuner/searchers/optuna_samplers.py), instead of as if its early loss were a final one.
    stopped_as_pruned: ClassVar[bool] = False
    takes_earlier_results: ClassVar[bool] = False  # --warm-start: the model accepts evaluated points
    models_conditionals: ClassVar[bool] = False  # searches a parameter only where its parent makes it vary
    multi_objective: ClassVar[bool] = False  # models several objectives at once (a front, not one value)
    # told which trials broke a --constraint, and keeps away from them
    takes_constraints: ClassVar[bool] = False

    def ordered(self, n: int) -> tuple[Domain, Callable[[float], int], Callable[[int], float]]:
        """How this model sees a choice among ``n`` ordered values: a domain, the index a point decodes to,
        and the point an index encodes to.

        By default an integer index: Optuna, HyperOpt and BOHB keep integer domains discrete and ordered,
        so no trial goes to a position that decodes to a value already tried.
        """
        from tuner.searchers.plan import integer_index

        return integer_index(n)

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan:
        """How a real Tune domain (float, integer, choice) is searched; raise ``plan.unsupported`` if not."""
        raise NotImplementedError

    def plan_native(self, name: str, value: Domain, text: str, normal: str | None = None) -> ParamPlan:
        """The ladder the models that take Tune's domains as they are share: a choice as a categorical, a
        log-scale domain in log space, an unbounded normal as ``normal`` says (``QUANTILE``: through its
        quantile, for models of bounded domains), the rest as it is."""
        from ray.tune.search.sample import Categorical, LogUniform, Normal, Quantized

        from tuner.searchers.plan import normal_quantile

        sampler = value.get_sampler()
        sampler = sampler.get_sampler() if isinstance(sampler, Quantized) else sampler
        if isinstance(sampler, Normal) and normal == QUANTILE:
            return normal_quantile(name, value, text, self.name)
        if isinstance(value, Categorical):
            how = f"searched by {self.name} as a categorical"
        elif isinstance(sampler, LogUniform):
            how = f"searched by {self.name} in log space"
        elif isinstance(sampler, Normal) and normal:
            how = f"searched by {self.name} {normal}"
        else:
            how = f"searched by {self.name}"
        return ParamPlan(name, text, how, NATIVE, value)

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        """Ray's searcher over the plan's (encoded) domains, in the form its model takes them (``nested_domains``,
        or HyperOpt's nodes, Optuna's define-by-run function, BOHB's ConfigurationSpace made from them); several
        ``objectives`` are given only to a ``multi_objective`` entry (tuner/algorithms.py)."""
        raise NotImplementedError

    @classmethod
    def runs_as_generator(cls, plan: SearchPlan, generator_only: bool) -> bool:
        """Whether ``build`` gives Tune's own variant generator (it gets the raw space and its own limits)."""
        return False

    def build(self, plan: SearchPlan, ctx: SearcherContext) -> Searcher | SearchAlgorithm:
        """The searcher Tune runs: the model seen through the plan (tuner/searchers/planned.py)."""
        from tuner.searchers.planned import PlannedSearcher

        warmup = initial_random_points(ctx.num_samples)
        inner = self.build_inner(plan, ctx.objectives, warmup, ctx.seed)
        pruned_below = ctx.full_epochs if self.stopped_as_pruned else None
        constraints = ctx.constraints if self.takes_constraints else ()
        return PlannedSearcher(
            inner,
            plan,
            ctx.seed,
            never_wait=ctx.never_wait,
            pruned_below=pruned_below,
            constraints=constraints,
        )

    @staticmethod
    def nested_domains(plan: SearchPlan) -> dict[str, Domain]:
        """The plan's searched domains, nested as Ray's searchers take a nested config (they name its leaves
        ``model/width`` again)."""
        from tuner.nesting import unflatten

        return unflatten(plan.searched_space)

    def intro(self, num_samples: int, earlier: int = 0) -> str:
        """The plan's heading. A warm start's ``earlier`` trials are results that stand in for the random start,
        and its best config runs first."""
        random_first = initial_random_points(num_samples)
        if not earlier:
            return f"search plan ({self.name}: {random_first} random configs first, then {self.model}):"
        still_random = max(0, random_first - earlier - 1)
        if not still_random:
            return (
                f"search plan ({self.name}: {self.model} on the earlier trials, after their best runs again):"
            )
        return (
            f"search plan ({self.name}: the earlier best, {still_random} random config(s), then {self.model} on "
            "these and the earlier trials):"
        )
