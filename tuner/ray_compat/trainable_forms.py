"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

17. Wrapped trainables (Ray 2.60): ``tune.with_parameters`` returns a new function (``inner(config)``, the
user's function held in its closure as ``trainable``) or a subclass (``_Inner``) of the user's class;
``tune.with_resources`` keeps its request on a function as the attribute ``_resources``, or returns a
subclass (``ResourceTrainable``) whose ``default_resource_request`` gives it. ``own_code`` finds the
user's function or class behind those wrappers (whose source says whether it checkpoints), and
``declared_resources`` reads a fixed request, so a space written as Ray's docs write it plans like any other.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.spec import TrainableFunction

_PARAMETER_FUNCTION = "with_parameters.<locals>.inner"
_WRAPPER_CLASSES = ("with_parameters.<locals>._Inner", "with_resources.<locals>.ResourceTrainable")


def own_code(trainable: TrainableFunction) -> TrainableFunction:
    """The user's own function or class behind functools' and Ray's wrappers."""
    current, seen = trainable, set[int]()
    while id(current) not in seen:
        seen.add(id(current))
        if inspect.isclass(current):
            if current.__qualname__.endswith(_WRAPPER_CLASSES) and len(current.__mro__) > 1:
                current = current.__mro__[1]
                continue
            return current
        current = inspect.unwrap(current)
        code = getattr(current, "__code__", None)
        if code is not None and current.__qualname__.endswith(_PARAMETER_FUNCTION):
            cells = dict(zip(code.co_freevars, current.__closure__ or (), strict=False))
            if "trainable" in cells:
                current = cells["trainable"].cell_contents
                continue
        return current
    return current


def declared_resources(trainable: TrainableFunction) -> dict[str, float] | None:
    """What ``tune.with_resources`` asked for each trial (``{"CPU": 2, "GPU": 0.5}``), when it is a fixed
    request; None when nothing was declared or it depends on the config."""
    from ray.tune import PlacementGroupFactory, Trainable

    request: PlacementGroupFactory | dict[str, float] | None = None  # a dict: what a function was given
    if inspect.isclass(trainable):
        overrides = any(
            "default_resource_request" in vars(k) for k in trainable.__mro__ if k is not Trainable
        )
        if issubclass(trainable, Trainable) and overrides:
            try:
                request = trainable.default_resource_request({})
            except Exception:  # noqa: BLE001 - a request that reads the config: not a fixed one
                return None
    else:
        request = getattr(trainable, "_resources", None)
    if isinstance(request, dict):
        request = PlacementGroupFactory([request])
    if not isinstance(request, PlacementGroupFactory):
        return None
    return {str(k).upper(): float(v) for k, v in request.required_resources.items()}
