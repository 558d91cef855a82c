"""Probing a ``sample_from`` function: draw it many times (seeded) and see whether it keeps to a few values.

The search plan (tuner/searchers/plan.py) searches such a function as a choice over exactly those values;
conditional parameters (tuner/searchers/conditional.py) are probed once per value of their parent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

from tuner.value_types import Config, Value

if TYPE_CHECKING:
    from ray.tune.search.sample import Function

PROBE_DRAWS = 1000
PROBE_MAX_VALUES = 64
CANNOT_RUN_ALONE = "it cannot run alone"  # it reads the config drawn so far (conditional.py names what)


def probe_function(
    domain: Function, seed: int, config: Config | None = None
) -> tuple[list[Value] | None, str]:
    """Draw a ``sample_from`` function many times (seeded, the global generator restored after).

    Returns its values, sorted where numeric, when it keeps returning the same small set (no new value
    in the second half of the draws, at most ``PROBE_MAX_VALUES``); otherwise None and why.
    """
    import numpy as np

    from tuner.nesting import unflatten
    from tuner.ray_compat import spec_form_warnings_off

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with spec_form_warnings_off():
            draws = [_hashable(domain.sample(config=unflatten(config or {}))) for _ in range(PROBE_DRAWS)]
    except Exception:  # it reads other parameters, or fails on an empty config
        return None, CANNOT_RUN_ALONE
    finally:
        np.random.set_state(state)
    seen = list(dict.fromkeys(draws))
    early = set(draws[: PROBE_DRAWS // 2])
    if len(seen) > PROBE_MAX_VALUES or len(early) < len(seen):
        return None, f"more than {PROBE_MAX_VALUES} values in {PROBE_DRAWS} draws"
    numbers = [v for v in seen if is_number(v)]
    if len(numbers) == len(seen):
        seen = [*sorted(numbers)]
    return seen, ""


def _hashable(value: Value) -> Value:
    from tuner.values import plain

    value = plain(value)
    return tuple(value) if isinstance(value, list) else value


def is_number(value: Value) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def values_text(values: Sequence[Value]) -> str:
    if len(values) > 1 and all(is_number(v) for v in values):
        return f"{len(values)} values {values[0]:g}…{values[-1]:g}"
    return f"{len(values)} values"
