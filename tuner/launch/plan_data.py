"""What the plan keeps as data beside its printed lines (tuner/folder/plan.py), for the review: the parameters a
branch did not ask, and each range parameter's scale."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.folder.plan import Unasked

if TYPE_CHECKING:
    from tuner.launch.plan import SweepPlan
    from tuner.value_types import Space


def unasked(plan: SweepPlan) -> Unasked:
    """Each conditional parameter's parent and the parent values where it is not asked, for the review to leave
    it out of those configs as the trainable had them: a native space's conditions as written (an Optuna
    define-by-run's, a HyperOpt branch's, a ConfigSpace condition's), and those the search plan traced in a
    ``sample_from``."""
    from tuner.native_spaces.distributions import BranchDraw
    from tuner.values import plain

    out: Unasked = {
        p.name: {"parent": p.branches.parent, "where": where}
        for p in plan.search_plan.conditionals
        if (where := [key for key, value in p.branches.constants.items() if value is None])
    }
    params = plan.space.flat_params
    for name, value in params.items():
        draw = getattr(value, "func", None)
        if name in out or not isinstance(draw, BranchDraw) or not draw.parent:
            continue
        choices = getattr(params.get(draw.parent), "categories", None) or []
        where = [repr(plain(c)) for c in choices if plain(c) not in draw.branches]
        if where:
            out[name] = {"parent": draw.parent, "where": where}
    return out


def scales(params: Space) -> dict[str, str]:
    """Each range parameter's scale as the space draws it, for the report's axes: a handful of trials cannot
    tell a log-uniform draw from a uniform one."""
    from ray.tune.search.sample import Float, Integer, LogUniform, Quantized

    out = {}
    for name, value in params.items():
        if isinstance(value, (Float, Integer)):
            sampler = value.get_sampler()
            inner = sampler.get_sampler() if isinstance(sampler, Quantized) else sampler
            out[name] = "log" if isinstance(inner, LogUniform) else "linear"
    return out
