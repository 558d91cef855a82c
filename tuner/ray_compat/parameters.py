"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

19. ``tune.with_parameters`` data in a later Ray session (Ray 2.60): its registry (``_ParameterRegistry``) puts
the data in the object store once, at the first ``ray.init``, and forgets the values. A second sweep in the
same process (a notebook's next ``tuner.sweep``, a resume right after a sweep) runs on a new local Ray, where
those references point at nothing and the trainable cannot even be pickled. ``keep_parameters`` makes the
registries keep their values; ``refresh_parameters`` puts them again in the running session.
"""

from __future__ import annotations

import inspect
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ray.tune.registry import _ParameterRegistry

    from tuner.spec import TrainableFunction

# Registry -> (its values, the session they were put in). Beside the registry, not in it: Ray pickles the
# registry by value with the trainable, and the values must go through the object store, never the pickle.
# The values are the user's own data (or references to it), whatever ``tune.with_parameters`` was given.
_KEPT: weakref.WeakKeyDictionary[_ParameterRegistry, tuple[dict[str, Any], str | None]] = (
    weakref.WeakKeyDictionary()
)


def keep_parameters() -> None:
    """Registries made from now on keep the values they put (installed once per process)."""
    from ray.tune import registry

    flush = registry._ParameterRegistry.flush
    if getattr(flush, "_tuner_keeps", False):
        return

    def keeping_flush(self: _ParameterRegistry) -> None:
        if self.to_flush:  # Ray runs it again at every ray.init, with nothing to put then: only a put counts
            values, _ = _KEPT.get(self, ({}, None))
            _KEPT[self] = ({**values, **self.to_flush}, _session())
        flush(self)

    vars(keeping_flush)["_tuner_keeps"] = True  # a mark on the function: installed once
    registry._ParameterRegistry.flush = keeping_flush  # type: ignore[method-assign]  # the part: Ray's method replaced


def refresh_parameters(trainable: TrainableFunction) -> int:
    """Put the data of every ``with_parameters`` wrapper around ``trainable`` in the running Ray session again
    where it was put in an earlier one; returns how many values were put."""
    import ray

    now, put = _session(), 0
    for registry in _registries(trainable):
        kept, session = _KEPT.get(registry, ({}, None))
        if not kept or session == now:
            continue
        for key, value in kept.items():
            registry.references[key] = value if isinstance(value, ray.ObjectRef) else ray.put(value)
            put += 1
        _KEPT[registry] = (kept, now)
    return put


def _session() -> str | None:
    import ray

    if not ray.is_initialized():
        return None
    context = ray.get_runtime_context()
    return f"{context.gcs_address}/{context.get_node_id()}"


def _registries(trainable: TrainableFunction) -> list[_ParameterRegistry]:
    """The parameter registries in the closures of ``with_parameters`` wrappers (a function's ``inner``, a class
    wrapper's ``setup``), however deep the wrapping."""
    from ray.tune import registry

    found, seen, todo = [], set(), [trainable]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current = inspect.unwrap(current) if callable(current) else current
        if inspect.isclass(current):
            todo += [klass.__dict__["setup"] for klass in current.__mro__ if "setup" in klass.__dict__]
            continue
        for cell in getattr(current, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, registry._ParameterRegistry):
                found.append(value)
            elif callable(value):
                todo.append(value)
    return found
