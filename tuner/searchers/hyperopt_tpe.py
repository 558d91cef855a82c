"""HyperOpt's Tree-structured Parzen Estimator, through Ray's HyperOptSearch.

A conditional parameter is written the way HyperOpt itself writes one: inside its parent's ``hp.choice``, one
option per parent value holding the branch's own parameters, so TPE models each branch only from the trials
that took it. Ray hands back the chosen option as a dict; ``BranchedHyperOptSearch`` lifts it to the plan's
flat names (the parent's index, each branch parameter by its branch name).

Ray is imported inside functions: the registry that names searchers must stay cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.objectives import Objectives, single
from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import ParamPlan, SearchPlan
from tuner.values import plain

if TYPE_CHECKING:
    from hyperopt.pyll import Apply
    from ray.tune.search import Searcher
    from ray.tune.search.sample import Domain


class HyperOpt(SearcherEntry):
    name = "hyperopt"
    summary = "HyperOpt's TPE: one density model per parameter"
    model = "TPE"
    models_conditionals = True  # each branch's parameters inside its parent's hp.choice option

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan:
        return self.plan_native(name, value, text, normal="with a normal prior")

    def space_for(self, plan: SearchPlan) -> dict[str, Apply]:
        """The searched domains as HyperOpt nodes; each parent of conditional parameters an ``hp.choice`` whose
        options hold their branches."""
        from ray.tune.search.hyperopt import HyperOptSearch

        space = HyperOptSearch.convert_search_space(self.nested_domains(plan))
        if not plan.conditionals:
            return space
        from hyperopt import hp

        from tuner.searchers.hyperopt_branches import INDEX

        for parent in dict.fromkeys(p.branches.parent for p in plan.conditionals):
            values = plan.parent_values(parent)
            if values is None or "/" in parent:  # the plan always indexes a parent's values; no nested parent
                raise ValueError(f"hyperopt cannot hold the branches of {parent!r}")
            options = []
            for index, value in enumerate(values):
                option: dict[str, int | Apply] = {INDEX: index}
                for child in (p for p in plan.conditionals if p.branches.parent == parent):
                    branches, key = child.branches, repr(plain(value))
                    name = branches.key(child.name, value)
                    if key in branches.values:  # an index over the branch's few values
                        option[name] = hp.randint(name, len(branches.values[key]))
                    elif key in branches.draws:  # the branch's own draw, in its own range
                        option[name] = HyperOptSearch.convert_search_space(
                            {name: branches.draws[key].domain()}
                        )[name]
                options.append(option)
            space[parent] = hp.choice(parent, options)
        return space

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        from tuner.searchers.hyperopt_branches import BranchedHyperOptSearch

        space = self.space_for(plan)
        parents = tuple(k for k, v in space.items() if _holds_branches(v))
        return BranchedHyperOptSearch(
            space=space,
            metric=single(objectives).name,
            mode=single(objectives).mode,
            n_initial_points=warmup,
            random_state_seed=seed,
            parents=parents,
        )


def _holds_branches(node: Apply) -> bool:
    """Whether a HyperOpt node is a parent's hp.choice over options holding branches."""
    from tuner.searchers.hyperopt_branches import INDEX

    try:
        return node.name == "switch" and any(
            getattr(o, "name", "") == "dict" and INDEX in dict(o.named_args) for o in node.pos_args[1:]
        )
    except (AttributeError, TypeError):
        return False
