"""A native space (Optuna's, HyperOpt's, ConfigSpace's) once translated: what tuner searches and how a trial's
config goes back into the space's own shape."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuner.native_spaces.distributions import BranchDraw

if TYPE_CHECKING:
    from tuner.value_types import Config, ConfigDraft, SpaceEntry


@dataclass(frozen=True)
class Translated:
    """A native space as tuner searches it: ``params`` by their flat names, ``shape`` the function that makes a
    trial's config (by those names) into what the trainable expects, ``form`` the space's language in words."""

    params: dict[str, SpaceEntry]
    shape: Callable[[Config], ConfigDraft]
    form: str

    def describe(self) -> str:
        """The plan's line: what the space was written in, and what the trainable gets."""
        conditional = sum(
            1
            for v in self.params.values()
            if isinstance(func := getattr(v, "func", None), BranchDraw) and func.parent
        )
        which = f", {conditional} of them asked on one branch only" if conditional else ""
        return (
            f"the space is {self.form}, searched as the {len(self.params)} parameters above{which}; the trainable "
            "gets each config in the space's own shape"
        )
