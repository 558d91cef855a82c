"""What a searcher entry is, and the wrapper that lets a model search encoded domains.

An entry (one module per algorithm beside this one) says what the searcher can model (``plan_domain``),
how it is built from a plan (``build_inner``) and how it introduces itself. The runner, the CLI's choices,
the plan printed before a sweep and the README table all read the registry in ``__init__``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tuner.searchers.plan import ParamPlan, SearchPlan, initial_random_points


class SearcherEntry:
    """One searching algorithm. Model-free entries (random) override ``build`` and leave the rest."""

    name: ClassVar[str]
    summary: ClassVar[str]
    model: ClassVar[str] = ""  # what it fits to the results, for the plan's first line
    model_based: ClassVar[bool] = True
    requires_scheduler: ClassVar[str | None] = None  # e.g. BOHB's searcher only works under its scheduler
    # Whether the model takes a trial a scheduler stopped early as pruned: ranked below every trial that ran
    # all its epochs, then by how far it got (Optuna's own treatment of pruned trials), instead of as if
    # its early loss were a final one.
    stopped_as_pruned: ClassVar[bool] = False
    takes_earlier_results: ClassVar[bool] = False  # --warm-start: the model accepts evaluated points
    models_conditionals: ClassVar[bool] = False  # searches a parameter only where its parent makes it vary

    def ordered(self, n: int) -> tuple[Any, Any, Any]:
        """How this model sees a choice among ``n`` ordered values: a domain, the index a point decodes to,
        and the point an index encodes to.

        By default an integer index: Optuna, HyperOpt and BOHB keep integer domains discrete and ordered,
        so no trial goes to a position that decodes to a value already tried (on HPOLib, multivariate TPE
        found clearly better configs this way than on a floored float).
        """
        from tuner.searchers.plan import integer_index

        return integer_index(n)

    def plan_domain(self, name: str, value: Any, text: str) -> ParamPlan:
        """How a real Tune domain (float, integer, choice) is searched; raise ``plan.unsupported`` if not."""
        raise NotImplementedError

    def build_inner(self, space: dict[str, Any], metric: str, mode: str, warmup: int, seed: int) -> Any:
        """Ray's searcher over the plan's (encoded) domains."""
        raise NotImplementedError

    def build(
        self,
        plan: SearchPlan,
        metric: str,
        mode: str,
        num_samples: int,
        seed: int,
        max_concurrent: int | None,
        never_wait: bool = False,
        full_epochs: int | None = None,
    ) -> Any:
        """The searcher Tune runs; ``never_wait`` when a scheduler holds trials until more trials join;
        ``full_epochs``: a trial that ends before them without an error was stopped by the scheduler."""
        from tuner.searchers.planned import PlannedSearcher

        warmup = initial_random_points(num_samples)
        inner = self.build_inner(self.space_for(plan), metric, mode, warmup, seed)
        pruned_below = full_epochs if self.stopped_as_pruned else None
        return PlannedSearcher(inner, plan, seed, never_wait=never_wait, pruned_below=pruned_below)

    def space_for(self, plan: SearchPlan) -> Any:
        """What ``build_inner`` models: the plan's searched domains (a searcher with conditionals: more)."""
        return plan.searched_space

    def intro(self, num_samples: int) -> str:
        return f"search plan ({self.name}: {initial_random_points(num_samples)} random configs first, then {self.model}):"
