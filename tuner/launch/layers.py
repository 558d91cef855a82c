"""The layers a new sweep's settings come from, read into the settings' own types: ``TUNER_*`` variables, a
``--config`` sweep file, and the several-objectives forms (``metrics: {loss: min, ...}``) they and
``tuner.sweep`` accept; later layers win (tuner/launch/resolve.py stacks them)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from tuner.errors import UsageError
from tuner.settings import ENV_PREFIX, USER_SETTINGS, coerce, unknown_setting

if TYPE_CHECKING:
    from tuner.settings import Setting
    from tuner.value_types import Value

# A setting as a caller gives it, before ``build_config`` settles it: a flag's value (``metrics``: each
# objective's name and mode), earlier experiments as paths too.
GivenSetting: TypeAlias = "Value | Path | Sequence[str | Path]"
V = TypeVar("V")


def env_settings(environ: Mapping[str, str]) -> dict[str, Setting]:
    """Settings from TUNER_* variables (TUNER_NUM_SAMPLES=20 sets num_samples). A variable one letter or so off a
    setting's (TUNER_NUM_SAMPLE) is named with the setting it may mean, a warning only: TUNER_* names of the
    user's own (TUNER_MODEL) are not tuner's to refuse."""
    import difflib

    out = {}
    for name in USER_SETTINGS:
        key = ENV_PREFIX + name.upper()
        if key in environ:
            out[name] = coerce(name, environ[key], f"environment {key}")
    for key in environ:
        name = key[len(ENV_PREFIX) :].lower()
        if key.startswith(ENV_PREFIX) and name not in USER_SETTINGS:
            near = difflib.get_close_matches(name, USER_SETTINGS, n=1, cutoff=0.8)
            if near:
                logging.getLogger(__name__).warning(
                    "environment %s is not a tuner setting and is left alone; did you mean %s%s?",
                    key,
                    ENV_PREFIX,
                    near[0].upper(),
                )
    return out


def read_yaml_settings(path: str | Path) -> dict[str, Setting]:
    """Settings from a sweep file: every sweep flag as a key (dashes or underscores)."""
    import yaml

    path = Path(path).expanduser()
    if not path.is_file():
        raise UsageError(f"config file {path} not found")
    try:
        loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=_once_each_loader())  # noqa: S506 - a safe loader
    except UnicodeDecodeError:
        raise UsageError(f"config file {path} is not UTF-8 text") from None
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
            raise unknown_setting(f"config file {path}", str(key), "metrics")
        if name in out:
            raise UsageError(f"config file {path}: {key!r} sets {name} again; give each setting once")
        out[name] = coerce(name, value, f"config file {path}")
    return _beside(out, path)


def _beside(settings: dict[str, Setting], path: Path) -> dict[str, Setting]:
    """A relative space file a sweep file names is read from where the command runs, or else from beside the
    sweep file (it was "not found" when the command ran elsewhere)."""
    space = settings.get("space")
    if isinstance(space, str) and space.endswith(".py") and not Path(space).expanduser().is_absolute():
        if not Path(space).exists() and (path.parent / space).is_file():
            settings["space"] = str(path.parent / space)
    return settings


def _once_each_loader() -> type:
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last silently)."""
    import yaml

    class OnceEach(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[object, object]:
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"{key!r} is given twice", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return OnceEach


def objectives_given(settings: Mapping[str, V], where: str) -> dict[str, V | list[str]]:
    """``metrics: {loss: min, latency_ms: min}`` (a sweep file, ``tuner.sweep(metrics=...)``) as the metric and
    mode every other layer gives, each a list: ``settled`` reads them into the sweep's objectives."""
    out: dict[str, V | list[str]] = dict(settings)
    if "metrics" in out:
        if "metric" in out or "mode" in out:
            raise UsageError(f"{where}: give metrics (names and modes) or metric and mode, not both")
        from tuner.objectives import from_mapping

        # from_mapping checks that it is one, and says so in words when it is not
        objectives = from_mapping(out.pop("metrics"), f"{where}: metrics")
        out["metric"], out["mode"] = [o.name for o in objectives], [o.mode for o in objectives]
    return out


def merge_layers(*layers: Mapping[str, V]) -> dict[str, V]:
    """Later layers win: pass them lowest priority first. A metric and its mode are one objective: a layer that
    names another metric without its mode drops the modes of the layers below it (a sweep file's ``mode: max`` was
    meant for its own metric, not for ``--metric loss``); the space then says the mode, or ``--mode`` must."""
    merged: dict[str, V] = {}
    for layer in layers:
        if "metric" in layer and "mode" not in layer and layer["metric"] != merged.get("metric"):
            merged.pop("mode", None)
        merged.update({k: v for k, v in layer.items()})
    return merged
