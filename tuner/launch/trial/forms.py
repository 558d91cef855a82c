"""The forms a trainable comes in, as Ray Tune documents them, and what the plan needs to know of each.

A function ``train(config, **settings)`` that reports per epoch, or a ``tune.Trainable`` class (``setup``,
``step``, ``save_checkpoint``, ``load_checkpoint``); either may be wrapped by ``tune.with_parameters`` or
``tune.with_resources``. The plan asks the same questions of every form: which run settings it takes as
keywords, whether it continues from a checkpoint, what resources it asked for.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias, TypeGuard

from tuner.errors import UsageError

if TYPE_CHECKING:
    from ray.tune import Trainable

# A trainable in any of its forms: a function ``train(config, **settings)``, whose return Tune takes as it is,
# or a ``tune.Trainable`` class (calling it makes one); either may be wrapped by ``tune.with_parameters`` or
# ``tune.with_resources``.
TrainableForm: TypeAlias = Callable[..., object]


def is_class(trainable: TrainableForm) -> TypeGuard[type[Trainable]]:
    """A ``tune.Trainable`` subclass: Tune calls its ``step`` once per epoch and checkpoints it itself."""
    if not inspect.isclass(trainable):
        return False
    from ray.tune import Trainable

    return issubclass(trainable, Trainable)


def loop_is_its_own(trainable: TrainableForm) -> bool:
    """Whether the trainable's own loop may end trials before ``--max-epochs``: a function not given
    ``max_epochs`` (one that takes ``**kwargs`` may loop by it or not: it is taken as its own). A class runs to
    ``max_epochs`` (tuner ends it there), as does a function given it; a trial of theirs that ended sooner ended
    for a reason of its own (a return once good enough, a break at a nan), which no other trial is planned by."""
    if is_class(trainable):
        return False
    declared = settings_keywords(trainable)
    return declared is None or "max_epochs" not in declared


def check_form(trainable: TrainableForm, name: str, settings: tuple[str, ...] = ()) -> None:
    """A class that is not a ``tune.Trainable``, or one without ``step``, is one line before anything starts; so is
    a function that takes no config, or asks for an argument nothing gives it (``settings``: the run settings
    tuner gives by name): it failed in every trial, with tuner's own frame named as the user's code."""
    if not inspect.isclass(trainable):
        _check_function(trainable, name, settings)
        return
    if not is_class(trainable):
        raise UsageError(
            f"trainable {name} is a class but not a ray.tune.Trainable; subclass tune.Trainable "
            "(setup, step, save_checkpoint, load_checkpoint) or pass a function"
        )
    from ray.tune import Trainable

    if getattr(trainable, "step", None) is Trainable.step:
        raise UsageError(
            f"trainable {name} defines no step(); Tune calls step() once per epoch and reads the "
            "metrics it returns"
        )


def _check_function(trainable: TrainableForm, name: str, settings: tuple[str, ...]) -> None:
    from tuner.ray_compat import own_code

    own = own_code(trainable)
    try:
        params = list(inspect.signature(own).parameters.values())
    except (TypeError, ValueError):
        return  # no signature to read (a builtin, a C extension): let it run
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if not params or params[0].kind not in (*positional, inspect.Parameter.VAR_POSITIONAL):
        raise UsageError(
            f"trainable {name} takes no config: Tune calls it as {name}(config), a dict of the trial's parameters"
        )
    if own is not trainable:
        return  # tune.with_parameters gives it more by name, which only Tune knows
    missing = [
        p.name
        for p in params[1:]
        if p.default is inspect.Parameter.empty
        and p.kind in (*positional, inspect.Parameter.KEYWORD_ONLY)
        and p.name
        not in (*settings, "data")  # data: what its loader gives, loaded once (tuner/launch/plan.py)
    ]
    if missing:
        raise UsageError(
            f"trainable {name} asks for {', '.join(missing)} with no default: Tune gives it only config, and tuner "
            f"the run settings it names ({', '.join(settings)}); give {'it' if len(missing) == 1 else 'them'} a "
            f"default, or pass {'it' if len(missing) == 1 else 'them'} with tune.with_parameters"
        )
    import difflib

    for p in params[1:]:  # `max_epoch=10`: a typo would run its own default, whatever --max-epochs says
        near = difflib.get_close_matches(p.name, [s for s in settings if s == "max_epochs"], n=1, cutoff=0.85)
        if near and p.name not in settings and p.default is not inspect.Parameter.empty:
            raise UsageError(
                f"trainable {name} takes {p.name}, which tuner does not give: did you mean {near[0]}, a run "
                f"setting tuner passes by name? Rename it, or pass it with tune.with_parameters"
            )


def settings_keywords(trainable: TrainableForm) -> set[str] | None:
    """The run settings a trainable takes as keywords after its config (a class: in ``setup``); None when it
    takes ``**kwargs``."""
    if is_class(trainable):
        setup: Callable[..., object] = trainable.setup  # read for its signature, never called
        return declared_keywords(functools.partial(setup, None))  # past ``self``
    return declared_keywords(trainable)


def keeps_checkpoints(trainable: TrainableForm, declared: bool | None) -> bool:
    """Whether the trainable continues from a checkpoint: as it declares (``train.checkpoints``); a class when it
    defines ``save_checkpoint`` and ``load_checkpoint``; a function when its source asks Tune for one."""
    from tuner.ray_compat import own_code

    if declared is not None:
        return bool(declared)
    own = own_code(trainable)
    if is_class(own):
        from ray.tune import Trainable

        return (
            own.save_checkpoint is not Trainable.save_checkpoint
            and own.load_checkpoint is not Trainable.load_checkpoint
        )
    return asks_for_checkpoint(own) and not _saves_none(own)


def _saves_none(function: Callable[..., object]) -> bool:
    """Whether the function tells Ray's Lightning callback to save no checkpoint (``save_checkpoints=False``): it
    may still ask Tune for one, but none ever comes, so a pause would wait for it in vain."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(
        isinstance(node, ast.keyword)
        and node.arg == "save_checkpoints"
        and isinstance(node.value, ast.Constant)
        and node.value.value is False
        for node in ast.walk(tree)
    )


def asks_for_checkpoint(function: Callable[..., object], depth: int = 3) -> bool:
    """Whether a function's source, or that of a function of its own module it calls (a ``load_state`` helper,
    a few calls deep), asks Tune for a checkpoint; True where there is no source to read (let it run)."""
    import ast
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return True
    if "get_checkpoint" in source:
        return True
    if depth == 0:
        return False
    module = getattr(function, "__module__", None)
    names = getattr(function, "__globals__", {})
    called = {
        node.func.id
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    helpers = [
        f
        for name in called
        if inspect.isfunction(f := names.get(name)) and f.__module__ == module and f is not function
    ]
    return any(asks_for_checkpoint(f, depth - 1) for f in helpers)


def reusable(trainable: TrainableForm) -> bool:
    """Whether one Ray actor may run trial after trial: for a function unless it runs a Ray Train trainer (its
    thread outlives the trial's end while the trainer shuts down, and Tune fails the next trial when the thread
    is not done within 2 s); for a class only when it defines ``reset_config`` (Tune fails a trial whose reused
    class cannot take a new config)."""
    from tuner.launch.trial.ray_train import trainer_workers
    from tuner.ray_compat import own_code

    own = own_code(trainable)
    if not is_class(own):
        return trainer_workers(own) is None
    from ray.tune import Trainable

    return own.reset_config is not Trainable.reset_config


def checkpoint_advice(trainable: TrainableForm) -> str:
    """What to add so that a trainable continues from a checkpoint, in its own form's words."""
    from tuner.ray_compat import own_code

    own = own_code(trainable)
    if is_class(own):
        return "define save_checkpoint(checkpoint_dir) and load_checkpoint(checkpoint_dir) on the class"
    name = getattr(own, "__name__", "train")
    if asks_for_checkpoint(own) and _saves_none(own):
        return "drop save_checkpoints=False from Ray's Lightning callback: tune.get_checkpoint() then has one to give"
    return (
        "report checkpoints and continue from tune.get_checkpoint() (if it does, where tuner cannot see it, "
        f"say so: {name}.checkpoints = True)"
    )


def declared_resources(trainable: TrainableForm) -> dict[str, float]:
    """The per-trial CPUs and GPUs ``tune.with_resources`` fixed, as sweep settings (empty when none)."""
    from tuner.ray_compat import declared_resources as requested

    request = requested(trainable) or {}
    out = {}
    if request.get("CPU"):
        out["cpus_per_trial"] = request["CPU"]
    if "GPU" in request:
        out["gpus_per_trial"] = request["GPU"]
    return out


def declared_keywords(function: Callable[..., object], after_config: bool = True) -> set[str] | None:
    """Keyword arguments a function accepts (a trainable's besides its first, ``config``); ``None`` means
    it takes ``**kwargs``."""
    params = list(inspect.signature(function).parameters.values())[1 if after_config else 0 :]
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return {p.name for p in params if p.kind in kinds}
