"""A trainable that runs a Ray Train trainer in each trial, as Ray Train's guide to tuning writes it: a driver
function builds a ``TorchTrainer`` with a ``ScalingConfig`` and reports through ``TuneReportCallback``.

The trainer's workers are not the trial's: they ask the cluster for their own resources once the trial holds its
own, so the trials at once must leave room for them, or every trial waits for workers that never start. Their
size is read from the ``ScalingConfig(...)`` call in the function's source (its literal arguments, or module
constants), and summed by Ray's own ``ScalingConfig``."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

LITERALS = (int, float, bool, str, dict, tuple, list, type(None))


@dataclass(frozen=True)
class TrainerWorkers:
    """The workers of the trainer each trial runs: all of them together, or None where they cannot be read."""

    cpus: float | None
    gpus: float | None

    @property
    def known(self) -> bool:
        return self.cpus is not None and self.gpus is not None

    def trials_at_once(self, cpus_per_trial: float, gpus_per_trial: float, cpus: float, gpus: float) -> int:
        """Trials whose own share and whose trainer's workers fit in the cluster's ``cpus`` and ``gpus`` together."""
        need_cpus, need_gpus = cpus_per_trial + (self.cpus or 0.0), gpus_per_trial + (self.gpus or 0.0)
        fit = math.floor(cpus / need_cpus + 1e-9) if need_cpus > 0 else 10**6
        return min(fit, math.floor(gpus / need_gpus + 1e-9)) if need_gpus > 0 else fit

    def describe(self) -> str:
        if not self.known:
            return (
                "its workers' size cannot be read from its ScalingConfig(...) (arguments that are not literals or "
                "module constants): if trials wait without starting, lower --max-concurrent so that their workers fit"
            )
        size = f"{self.cpus:g} CPU" + (f" and {self.gpus:g} GPU" if self.gpus else "")
        return f"its workers take {size} beside the trial's own"


def trainer_workers(function: Callable[..., object]) -> TrainerWorkers | None:
    """The workers of the Ray Train trainer the function (or a function of its module it calls) builds, None where
    it builds none."""
    calls = _scaling_calls(function, depth=2)
    if not calls:
        return _built_elsewhere(function)
    if len(calls) > 1:  # which one runs is the code's business
        return TrainerWorkers(None, None)
    call, names = calls[0]
    kwargs: dict[str, object] = {}
    for keyword in call.keywords:
        value = _literal(keyword.value, names)
        if keyword.arg is None or value is _UNREAD:
            return TrainerWorkers(None, None)
        kwargs[keyword.arg] = value
    if call.args:
        return TrainerWorkers(None, None)
    try:
        from ray.train import ScalingConfig

        scaling: Callable[..., ScalingConfig] = ScalingConfig  # which checks the values read
        total = scaling(**kwargs).total_resources
    except Exception:  # noqa: BLE001 - what Ray refuses it refuses again when the trial runs, in its own words
        return TrainerWorkers(None, None)
    return TrainerWorkers(float(total.get("CPU", 0.0)), float(total.get("GPU", 0.0)))


_UNREAD = object()


def _built_elsewhere(function: Callable[..., object]) -> TrainerWorkers | None:
    """A trainer whose ``ScalingConfig`` is a module constant (its size known), or that the function builds
    without one or through a name tuner cannot follow (its size unknown); None where it builds no trainer."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None
    names: dict[str, object] = getattr(function, "__globals__", {})
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    scaling = [names[n] for n in used if n in names and type(names[n]).__name__ == "ScalingConfig"]
    if len(scaling) == 1 and hasattr(scaling[0], "total_resources"):
        total = scaling[0].total_resources
        return TrainerWorkers(float(total.get("CPU", 0.0)), float(total.get("GPU", 0.0)))
    called = {
        node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    trainer = any(name.endswith("Trainer") for name in called) and "TuneReportCallback" in called
    return TrainerWorkers(None, None) if trainer or scaling else None


def _literal(node: ast.expr, names: dict[str, object]) -> object:
    """A keyword's value where the source fixes it: a literal, or a module constant of a literal's type."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        pass
    if isinstance(node, ast.Name) and node.id in names and isinstance(names[node.id], LITERALS):
        return names[node.id]
    return _UNREAD


def _scaling_calls(function: Callable[..., object], depth: int) -> list[tuple[ast.Call, dict[str, object]]]:
    """``ScalingConfig(...)`` calls in the function's source, then in the functions of its module it calls."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return []
    names: dict[str, object] = getattr(function, "__globals__", {})
    found = [
        (node, names)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", ""))
        == "ScalingConfig"
    ]
    if found or depth == 0:
        return found
    module = getattr(function, "__module__", None)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            helper = names.get(node.func.id)
            if inspect.isfunction(helper) and helper.__module__ == module and helper is not function:
                found += _scaling_calls(helper, depth - 1)
    return found
