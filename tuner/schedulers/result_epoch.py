"""The epoch a result was reported at, as every early-stopping rule and freeze-thaw read it."""

from __future__ import annotations

from typing import cast, overload

from tuner.value_types import Result

EPOCH = "training_iteration"


@overload
def epoch_of(result: Result) -> int | None: ...
@overload
def epoch_of(result: Result, default: int) -> int: ...
def epoch_of(result: Result, default: int | None = None) -> int | None:
    """The epoch a result was reported at (``training_iteration``, else ``default``): Tune counts it, so it is an
    int by construction."""
    return cast("int | None", result.get(EPOCH, default))
