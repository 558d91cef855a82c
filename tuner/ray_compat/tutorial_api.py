"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

5. The tutorial's API (Ray 2.60): "Hyperparameter tuning with Ray Tune" writes its trainable with
``ray.train.report``, ``ray.train.get_checkpoint`` and ``ray.train.Checkpoint``, which Ray 2.60
refuses inside a Tune function, and older code reports with keywords (``tune.report(loss=...)``).
``tutorial_api`` runs such a trainable with those names bound to ``ray.tune``'s equivalents.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeGuard, TypeVar

from tuner.value_types import ConfigDraft, Result

if TYPE_CHECKING:
    from tuner.spec import TrainableFunction

R = TypeVar("R")
# Where a name the trainable calls is bound: a module (ray.train, ray.tune) or the trainable's own globals.
_Owner: TypeAlias = ModuleType | dict[str, Any]
# A function or class of Ray's API, or what stands in for it.
_ApiName: TypeAlias = Callable[..., object]

_TRAIN_API = re.compile(r"\btrain\.(report|get_checkpoint|get_context|Checkpoint)\b|from ray\.train import")
_KEYWORD_REPORT = re.compile(r"\breport\(\s*[A-Za-z_]\w*\s*=")


def old_api_notice(trainable: TrainableFunction) -> str | None:
    """What a trainable uses of the older APIs, as the one-line notice the sweep prints (None if nothing)."""
    from tuner.ray_compat.trainable_forms import own_code

    own = own_code(trainable)
    try:
        source = inspect.getsource(own)
    except (OSError, TypeError):
        return None
    used = []
    if _TRAIN_API.search(source) or _aliased_train_api(own, source):
        used.append("the ray.train API (train.report, train.get_checkpoint, train.Checkpoint)")
    if _KEYWORD_REPORT.search(source):
        used.append("report(name=value) keywords")
    if not used:
        return None
    return (
        f"note: the trainable uses {' and '.join(used)}, which Ray 2.60 refuses in a sweep; tuner runs it "
        "through ray.tune's equivalents. In new code: from ray import tune; tune.report({...}, "
        "checkpoint=tune.Checkpoint.from_directory(...)); tune.get_checkpoint()"
    )


def _aliased_train_api(function: object, source: str) -> bool:
    """Whether the source calls the ray.train API through another name of the module (``from ray import train as
    rt``; ``rt.report(...)``)."""
    import ray.train

    aliases = [name for name, value in getattr(function, "__globals__", {}).items() if value is ray.train]
    return (
        bool(aliases)
        and re.search(
            rf"\b({'|'.join(map(re.escape, aliases))})\.(report|get_checkpoint|get_context|Checkpoint)\b",
            source,
        )
        is not None
    )


def tutorial_api(trainable: Callable[..., R]) -> Callable[..., R]:
    """``trainable`` with ``ray.train.report``/``get_checkpoint``/``get_context``/``Checkpoint`` and keyword
    reports working as Ray Tune's own, however the trainable imported them, for the length of each call."""

    from tuner.ray_compat.trainable_forms import own_code

    own = own_code(trainable)

    @functools.wraps(trainable)
    def run(config: ConfigDraft, **kwargs: Any) -> R:  # the run settings, passed on untouched
        with _tune_api_for(own):
            return trainable(config, **kwargs)

    return run


@contextlib.contextmanager
def _tune_api_for(function: TrainableFunction) -> Iterator[None]:
    import ray.train
    from ray import tune

    # ``more``: metrics given as keywords, and Ray's own options of its report (dropped)
    def report(
        metrics: Result | None = None, *, checkpoint: ray.train.Checkpoint | None = None, **more: Any
    ) -> None:
        extra = {
            k: v
            for k, v in more.items()
            if k
            not in (
                "checkpoint_dir_name",
                "checkpoint_upload_mode",
                "delete_local_checkpoint_after_upload",
                "checkpoint_upload_fn",
                "validation",
            )
        }
        if checkpoint is not None and not isinstance(checkpoint, tune.Checkpoint):
            checkpoint = tune.Checkpoint(path=checkpoint.path, filesystem=checkpoint.filesystem)
        original_tune_report({**(metrics or {}), **extra}, checkpoint=checkpoint)

    original_tune_report = tune.report
    swaps: dict[_ApiName, _ApiName] = {
        ray.train.report: report,
        ray.train.get_checkpoint: tune.get_checkpoint,
        ray.train.Checkpoint: tune.Checkpoint,
        tune.report: report,
    }
    if hasattr(ray.train, "get_context") and hasattr(tune, "get_context"):
        swaps[ray.train.get_context] = tune.get_context
    targets: list[tuple[_Owner, str]] = [
        (ray.train, name) for name in ("report", "get_checkpoint", "get_context", "Checkpoint")
    ]
    targets += [(tune, "report")]
    globals_ = function.__globals__
    targets += [(globals_, name) for name, value in list(globals_.items()) if _swappable(value, swaps)]
    saved = [(owner, name, _get(owner, name)) for owner, name in targets]
    try:
        for owner, name, value in saved:
            if _swappable(value, swaps):
                _set(owner, name, swaps[value])
        yield
    finally:
        for owner, name, value in saved:
            _set(owner, name, value)


def _swappable(value: Any, swaps: dict[_ApiName, _ApiName]) -> TypeGuard[_ApiName]:  # value: any global's
    try:
        return value in swaps
    except TypeError:  # unhashable
        return False


def _get(owner: _Owner, name: str) -> _ApiName | None:  # one of Ray's names, or a global found swappable
    return owner[name] if isinstance(owner, dict) else getattr(owner, name, None)


def _set(owner: _Owner, name: str, value: _ApiName | None) -> None:
    if value is None:
        return
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)
