"""The types a sweep's values travel as, named once: what a trial's config and a result hold, what a search
space maps a name to. Real unions rather than ``Any``, so that a use which assumes a number narrows first
(``values.number``) and a use which assumes a nested space checks for a mapping."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias, Union

if TYPE_CHECKING:
    from ray.tune.search.sample import Domain

Scalar: TypeAlias = bool | int | float | str | None

# One value of a config or a result: a number, text, a list or nested mapping of such, or a Python object a
# space chose among (a class, a function).
Value: TypeAlias = Scalar | Sequence["Value"] | Mapping[str, "Value"] | Callable[..., object]

# A trial's parameters as drawn, read through (a searcher's suggestion, Tune's trial.config).
Config: TypeAlias = Mapping[str, Value]

# A config being built or filled in.
ConfigDraft: TypeAlias = dict[str, Value]

# One report of a trial as Tune records it: the trainable's metrics and Tune's own (training_iteration,
# time_total_s, config, ...).
Result: TypeAlias = Mapping[str, Value]

# What a search space maps a name to: a Tune domain (sample_from included), a grid, a nested space or a
# constant.
SpaceEntry: TypeAlias = Union["Domain", Value]

# A search space as Ray's docs write one: names to entries, nested spaces as mappings.
Space: TypeAlias = Mapping[str, SpaceEntry]
