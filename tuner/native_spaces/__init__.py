"""Spaces written in a searcher's own language, translated into Tune domains the plan already knows.

A user who tuned with Ray's ``OptunaSearch(space=fn)``, ``HyperOptSearch(space=...)`` or ``TuneBOHB(space=...)``
(a ConfigSpace ``ConfigurationSpace``) brings that space as ``params``. It becomes ordinary parameters (Tune
domains; a parameter asked on one branch only, a ``sample_from`` conditional on its choice, which tuner/searchers/conditional.py searches branch by branch), so
``auto``, every searcher, the plan, replay, warm starts and the report treat it as any other space. The
trainable still receives the config in the space's own shape: a HyperOpt choice over dicts as the chosen dict,
a define-by-run space's answers with its returned constants and nothing it did not ask, a ConfigurationSpace's
active parameters and constants.

No searcher's library is imported unless the space is written in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias, cast

from tuner.native_spaces.translated import Translated as Translated  # saved spaces name it here

if TYPE_CHECKING:
    from ConfigSpace import ConfigurationSpace
    from hyperopt.pyll import Apply

    from tuner.native_spaces.optuna_space import DefineByRun
    from tuner.value_types import SpaceEntry

# ``params`` as a user writes them: Tune's own (names to domains and constants, HyperOpt's hp.* nodes among them
# for a HyperOpt space written as a dict), a HyperOpt expression, an Optuna define-by-run function or a
# ConfigSpace ConfigurationSpace.
NativeSpace: TypeAlias = "Mapping[str, SpaceEntry | Apply] | Apply | DefineByRun | ConfigurationSpace"


def form_of(params: NativeSpace) -> str | None:
    """Which searcher's language ``params`` is written in, or None for Tune's own."""
    if _is_hyperopt(params):
        return "hyperopt"
    if type(params).__module__.startswith("ConfigSpace"):  # a ConfigurationSpace is a Mapping too
        return "configspace"
    if isinstance(params, Mapping):
        return "hyperopt" if any(_is_hyperopt(v) for v in _leaves(params)) else None
    if callable(params):
        return "optuna"
    return None


def translate(params: NativeSpace) -> Translated | None:
    """``params`` translated, or None when it is written in Tune's own language already; a space that cannot
    be followed is a UsageError naming what and the way to write it instead."""
    form = form_of(params)
    if form == "hyperopt":
        from tuner.native_spaces.hyperopt_space import translate_hyperopt

        return translate_hyperopt(params)
    if form == "optuna":
        from tuner.native_spaces.optuna_space import translate_define_by_run

        return translate_define_by_run(cast("DefineByRun", params))  # form_of found a function
    if form == "configspace":
        from tuner.native_spaces.configspace_space import translate_configspace

        return translate_configspace(cast("ConfigurationSpace", params))  # form_of found its module
    return None


def _is_hyperopt(value: NativeSpace | SpaceEntry) -> bool:
    return type(value).__module__.startswith("hyperopt.")


def _leaves(params: Mapping[str, SpaceEntry | Apply]) -> list[SpaceEntry | Apply]:
    out: list[SpaceEntry | Apply] = []
    for value in params.values():
        if isinstance(value, Mapping):
            out.extend(_leaves(value))
        elif isinstance(value, (list, tuple)):
            out.extend(value)
        else:
            out.append(value)
    return out
