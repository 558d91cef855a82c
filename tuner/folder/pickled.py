"""Objects Ray pickles into an experiment (``tuner.pkl``: the searcher, the scheduler, the callbacks), completed
in one place as a resume unpickles them.

Ray saves those objects whole, so one saved by an earlier tuner lacks every attribute added to its class since.
A class Ray pickles inherits ``Restored`` and lists those attributes in ``SINCE``, each with what makes it for
an old object (what a new one starts with); its methods then read plain attributes and never ask whether one is
there. Modules that moved are answered by tuner/moved.py; schedulers from before the rules were tuner's own are
converted by tuner/schedulers/saved_before.py. docs/resume.md says which experiments resume.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar, TypeAlias

from tuner.folder.horizon import LoopEnds

# what makes an attribute an old object lacks, from the rest of its saved state
Filler: TypeAlias = Callable[[dict[str, object]], object]


class Restored:
    """An object Ray pickles into an experiment: one saved before an attribute of ``SINCE`` existed gets it."""

    # attribute -> what makes it for an object saved before it existed; each class lists its own
    SINCE: ClassVar[Mapping[str, Filler]] = {}

    def __setstate__(self, state: dict[str, object]) -> None:
        for cls in reversed(type(self).__mro__):
            for name, make in vars(cls).get("SINCE", {}).items():
                if name not in state:
                    state[name] = make(state)
        self.__dict__.update(state)


def fresh(kind: Callable[[], object]) -> Filler:
    """A new empty value (``dict``, ``list``, ``set``) for each old object."""
    return lambda state: kind()


def none(state: dict[str, object]) -> None:
    """Not known for an old object (what its class does without it, it says)."""
    return None


def loop_ends(state: dict[str, object]) -> LoopEnds:
    """Where trials end by their own loop, learnt anew from the next results (``max_t``: the sweep's epochs)."""
    max_t = state["max_t"]
    if not isinstance(max_t, int):
        raise TypeError(f"a scheduler saved with max_t {max_t!r} cannot learn where trials end")
    return LoopEnds(max_t)
