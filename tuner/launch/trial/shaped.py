"""The config a trainable is given, in the shape its space was written in.

A space written in a searcher's language (tuner/native_spaces/) is searched by flat parameter names; its
trainable was written for what that searcher hands over (a HyperOpt choice's chosen dict, a define-by-run
function's answers and constants). Each trial's config is reshaped so, on the way in, for either form of
trainable; what Ray records (``params.json``) keeps the searched names, as the review reads them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

Shape = Callable[[Mapping[str, Any]], dict[str, Any]]


def shaped(trainable: Any, shape: Shape | None) -> Any:
    """``trainable`` given each config through ``shape``, in the form it came in (None: as it is)."""
    if shape is None:
        return trainable
    from tuner.launch.trial.forms import is_class

    if is_class(trainable):
        return _shaped_class(trainable, shape)

    @functools.wraps(trainable)
    def run(config: dict, **kwargs: Any) -> Any:
        return trainable(shape(config), **kwargs)

    return run


def _shaped_class(cls: type, shape: Shape) -> type:
    class Shaped(cls):
        def setup(self, config: dict, **kwargs: Any) -> None:
            super().setup(shape(config), **kwargs)

        def reset_config(self, new_config: dict) -> bool:
            return bool(super().reset_config(shape(new_config)))

    Shaped.__name__ = cls.__name__
    Shaped.__qualname__ = cls.__qualname__
    Shaped.__doc__ = cls.__doc__
    return Shaped
