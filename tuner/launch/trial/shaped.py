"""The config a trainable is given, in the shape its space was written in.

A space written in a searcher's language (tuner/native_spaces/) is searched by flat parameter names; its
trainable was written for what that searcher hands over (a HyperOpt choice's chosen dict, a define-by-run
function's answers and constants). Each trial's config is reshaped so, on the way in, for either form of
trainable; what Ray records (``params.json``) keeps the searched names, as the review reads them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from tuner.launch.trial.forms import TrainableForm
    from tuner.value_types import Config, ConfigDraft

Shape: TypeAlias = "Callable[[Config], ConfigDraft]"


def shaped(trainable: TrainableForm, shape: Shape | None) -> TrainableForm:
    """``trainable`` given each config through ``shape``, in the form it came in (None: as it is)."""
    if shape is None:
        return trainable
    from tuner.launch.trial.forms import is_class

    if is_class(trainable):
        return _shaped_class(trainable, shape)

    @functools.wraps(trainable)
    def run(config: Config, **kwargs: Any) -> object:  # the settings go to the trainable untouched
        return trainable(shape(config), **kwargs)

    return run


def _shaped_class(cls: type, shape: Shape) -> type:
    class Shaped(cls):
        def setup(self, config: ConfigDraft, **kwargs: Any) -> None:  # the settings go to its setup untouched
            super().setup(shape(config), **kwargs)

        def reset_config(self, new_config: ConfigDraft) -> bool:
            return bool(super().reset_config(shape(new_config)))

    Shaped.__name__ = cls.__name__
    Shaped.__qualname__ = cls.__qualname__
    Shaped.__doc__ = cls.__doc__
    return Shaped
