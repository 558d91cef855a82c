"""The layers a new sweep's settings come from, read into the settings' own types: ``TUNER_*`` variables, a
``--config`` sweep file, and the several-objectives forms (``metrics: {loss: min, ...}``) they and
``tuner.sweep`` accept; later layers win (tuner/launch/resolve.py stacks them)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tuner.errors import UsageError
from tuner.settings import ENV_PREFIX, USER_SETTINGS, coerce


def env_settings(environ: Mapping[str, str]) -> dict[str, Any]:
    """Settings from TUNER_* variables (TUNER_NUM_SAMPLES=20 sets num_samples)."""
    out = {}
    for name in USER_SETTINGS:
        key = ENV_PREFIX + name.upper()
        if key in environ:
            out[name] = coerce(name, environ[key], f"environment {key}")
    return out


def read_yaml_settings(path: str | Path) -> dict[str, Any]:
    """Settings from a sweep file: every sweep flag as a key (dashes or underscores)."""
    import yaml

    path = Path(path).expanduser()
    if not path.is_file():
        raise UsageError(f"config file {path} not found")
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UsageError(
            f"config file {path} is not valid YAML{where}: {getattr(exc, 'problem', exc)}"
        ) from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise UsageError(f"config file {path} must hold a mapping of settings, not a {type(loaded).__name__}")
    out = {}
    loaded = objectives_given(loaded, f"config file {path}")
    for key, value in loaded.items():
        name = str(key).replace("-", "_")
        if name not in USER_SETTINGS:
            raise UsageError(
                f"config file {path}: unknown key {key!r}; valid keys: {', '.join(USER_SETTINGS)}"
            )
        out[name] = coerce(name, value, f"config file {path}")
    return out


def objectives_given(settings: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``metrics: {loss: min, latency_ms: min}`` (a sweep file, ``tuner.sweep(metrics=...)``) as the metric and
    mode every other layer gives; lists of metrics or modes joined as the flags take them."""
    out = dict(settings)
    if "metrics" in out:
        if "metric" in out or "mode" in out:
            raise UsageError(f"{where}: give metrics (names and modes) or metric and mode, not both")
        from tuner.objectives import from_mapping

        out["metric"], out["mode"] = from_mapping(out.pop("metrics"))
    for name in ("metric", "mode"):
        if isinstance(out.get(name), (list, tuple)):
            out[name] = ",".join(str(v).strip() for v in out[name])
    return out


def merge_layers(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Later layers win: pass them lowest priority first."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update({k: v for k, v in layer.items()})
    return merged
