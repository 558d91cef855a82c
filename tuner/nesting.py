"""Nested configs and spaces by full names (``model/width``) and back: how Ray's searchers and results name a
nested config's leaves, read the same way by every space form and searcher."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar, cast

V = TypeVar("V")  # the values a nested mapping holds (a config's, a space's)

NESTING = "/"  # a nested config's names joined, as Ray's searchers and results join them


def flatten(params: Mapping[str, V], prefix: str = "") -> dict[str, V]:
    """A nested config's leaves by their full names (``model/width``); a ``grid_search`` is a leaf."""
    out: dict[str, V] = {}
    for name, value in params.items():
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and value and set(value) != {"grid_search"}:
            out.update(flatten(value, key + NESTING))
        else:
            out[key] = value
    return out


def unflatten(flat: Mapping[str, V]) -> dict[str, V]:
    """A config by full names back into the nested form the trainable reads (a nested part, a mapping of the
    values, is one of the values itself: a config's ``Value``, a space's ``SpaceEntry``)."""
    out: dict[str, V] = {}
    for key, value in flat.items():
        *path, last = str(key).split(NESTING)
        here = out
        for part in path:
            # each part is a dict made here (a nested config or space is one of the values V)
            here = cast("dict[str, V]", here.setdefault(part, cast(V, {})))
        here[last] = value
    return out
