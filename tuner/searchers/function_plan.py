"""How a ``sample_from`` function is searched: probed for the few values it keeps to, followed through the one
random draw it makes (tuner/searchers/traced.py), searched branch by branch under the choice it depends on
(tuner/searchers/conditional.py), made from the other parameters, or drawn at random with the reason why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.searchers.plan import (
    COMPUTED,
    CONDITIONAL,
    CONSTANT,
    DERIVED,
    ENCODED,
    RANDOM,
    CannotSearch,
    ParamPlan,
    Planner,
    categorical,
    domain_plan,
    ordered_index,
)
from tuner.searchers.probe import CANNOT_RUN_ALONE, is_number, probe_function, values_text
from tuner.value_types import Space, Value

if TYPE_CHECKING:
    import numpy as np
    from ray.tune.search.sample import Function

    from tuner.searchers.draws import Draw


def function_plan(
    name: str, value: Function, text: str, entry: Planner, seed: int, params: Space
) -> ParamPlan:
    """How ``entry`` searches the ``sample_from`` parameter ``name`` of a space with ``params`` (module docstring)."""
    values, why = probe_function(value, seed)
    if values is None and why == CANNOT_RUN_ALONE:
        from tuner.searchers.conditional import find_branches

        branches = find_branches(name, value, params, seed)
        if not isinstance(branches, str) and getattr(entry, "models_conditionals", False):
            return ParamPlan(name, text, branches.describe(entry.name), CONDITIONAL, value, branches=branches)
        if isinstance(branches, str):
            return _derived_plan(name, value, text, entry, seed, params, branches)
        why = f"conditional on {branches.parent}, which {entry.name} cannot model; optuna can"
    elif values is None:
        return _traced_plan(name, value, text, entry, seed)
    if values is None:
        return ParamPlan(name, text, f"drawn at random, not searched by {entry.name}: {why}", RANDOM, value)
    if len(values) == 1:
        return ParamPlan(name, text, f"probed: always {values[0]!r}, a constant", CONSTANT, values[0])
    probed = f"probed: {values_text(values)}"
    if all(is_number(v) for v in values):
        encoded, decode, encode = ordered_index(values, entry)
        return ParamPlan(
            name,
            text,
            f"{probed}, searched by {entry.name} as an ordered choice",
            ENCODED,
            encoded,
            decode,
            encode,
        )
    plan = entry.plan_domain(name, categorical(values), text)
    return ParamPlan(
        name, text, f"{probed}, {plan.how}", plan.treatment, plan.encoded, plan.decode, plan.encode
    )


def _traced_plan(name: str, value: Function, text: str, entry: Planner, seed: int) -> ParamPlan:
    """A function with many values, searched through the one random draw it makes (tuner/searchers/traced.py)."""
    from tuner.searchers.traced import trace

    traced = trace(value, seed)
    if isinstance(traced, str):
        return ParamPlan(
            name, text, f"drawn at random, not searched by {entry.name}: {traced}", RANDOM, value
        )
    span = f", values {traced.low:g}…{traced.high:g}" if traced.low is not None else ""
    return _through_draw(name, value, text, entry, traced.its_draw, ENCODED, span)


def _derived_plan(
    name: str,
    value: Function,
    text: str,
    entry: Planner,
    seed: int,
    params: Space,
    why_not_branches: str,
) -> ParamPlan:
    """A function of other parameters that are not one choice (``spec.config.alpha * np.random.normal()``):
    searched through its one draw when that draw is the same whatever the others are, its value made from the
    trial's config once the others are decided."""
    from tuner.searchers.traced import TracedDecode, trace

    def others(rng: np.random.RandomState) -> dict[str, Value]:
        return _draw_others(params, name, rng)

    traced = trace(value, seed, configs=others)
    if isinstance(traced, str):
        why = (
            traced
            if why_not_branches.startswith("it depends on") and not traced.startswith("it fails")
            else why_not_branches
        )
        return ParamPlan(name, text, f"drawn at random, not searched by {entry.name}: {why}", RANDOM, value)
    if traced.draw is None:
        return ParamPlan(
            name,
            text,
            "computed from the other parameters in each trial (it draws nothing itself)",
            COMPUTED,
            value,
            TracedDecode(value, None),
        )
    return _through_draw(name, value, text, entry, traced.draw, DERIVED, ", given the other parameters")


def _through_draw(
    name: str, value: Function, text: str, entry: Planner, draw: Draw, treatment: str, note: str
) -> ParamPlan:
    """``value`` searched by ``entry`` through its ``draw``: the model sees the draw's domain as it sees any, the
    function is run on the model's value (``TracedDecode``) and an earlier value found back (``TracedEncode``)."""
    from tuner.searchers.traced import TracedDecode, TracedEncode

    try:
        inner = domain_plan(name, draw.domain(), draw.text(), entry)
    except CannotSearch:
        return ParamPlan(
            name,
            text,
            f"drawn at random: its draw {draw.text()} cannot be searched by {entry.name}",
            RANDOM,
            value,
        )
    return ParamPlan(
        name,
        text,
        f"follows its draw {draw.text()}{note}: {inner.how}",
        treatment,
        inner.encoded,
        TracedDecode(value, draw, inner.decode),
        TracedEncode(value, draw, inner.encode),
    )


def _draw_others(params: Space, name: str, rng: np.random.RandomState) -> dict[str, Value]:
    """A random config of every parameter but ``name``, in the space's order (each function given what came
    before it); one that cannot be drawn is left out."""
    from ray.tune.search.sample import Domain

    from tuner.values import plain

    config: dict[str, Value] = {}
    for other, domain in params.items():
        if other == name:
            continue
        if not isinstance(domain, Domain):
            config[other] = domain
            continue
        try:
            config[other] = plain(domain.sample(config=dict(config), random_state=rng))
        except Exception:  # noqa: BLE001 - it reads the parameter being planned, or fails: leave it out
            continue
    return config
