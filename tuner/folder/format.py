"""The experiment folder's format version, written into every ``tuner_config.yaml``, and the migrations that
bring an older experiment's settings up to it as they are read.

Each migration takes the saved settings of one version to the next; ``read`` applies those the folder needs,
in order, so every reader sees today's keys. docs/resume.md lists the versions. Ray's pickles (``tuner.pkl``)
name tuner's classes by module path: those names are kept importable by tuner/moved.py and
tuner/schedulers/saved_before.py, which only a resume reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tuner import storage
from tuner.errors import UsageError

VERSION = 3
KEY = "format"


def _origin(saved: dict[str, object]) -> dict[str, object]:
    """1 -> 2: where the experiment was made, saved since version 2 (a moved or copied experiment is resumed
    where it lies and says where it came from); a version 1 folder was made at its saved storage path and name."""
    if not saved.get("origin") and saved.get("storage_path") and saved.get("name"):
        saved = {
            **saved,
            "origin": storage.join(str(saved["storage_path"]), str(saved["name"])),
        }
    return saved


def _objectives(saved: dict[str, object]) -> dict[str, object]:
    """2 -> 3: what the sweep optimises as one mapping, ``objectives: {loss: min, latency_ms: min}``; before,
    the first objective was ``metric`` and ``mode`` and several were listed again as ``"name:mode"`` texts."""
    out = {k: v for k, v in saved.items() if k not in ("metric", "mode", "objectives")}
    listed = saved.get("objectives")
    if isinstance(listed, Mapping):  # already in today's form
        out["objectives"] = listed
    elif isinstance(listed, list) and listed:
        pairs = [str(item).rpartition(":") for item in listed]
        out["objectives"] = {name: mode for name, _, mode in pairs}
    else:
        out["objectives"] = {str(saved.get("metric") or "loss"): str(saved.get("mode") or "min")}
    return out


# version -> the migration from it to the next
MIGRATIONS: dict[int, Callable[[dict[str, object]], dict[str, object]]] = {1: _origin, 2: _objectives}


def version_of(saved: dict[str, object], where: str) -> int:
    """The folder's format version: 1 before versions were written; a newer one than this tuner reads is refused."""
    found = saved.get(KEY, 1)
    if isinstance(found, bool) or not isinstance(found, int) or found < 1:
        raise UsageError(f"{where} is corrupted: {KEY}: {found!r} is not a format version")
    if found > VERSION:
        raise UsageError(
            f"{where} was written by a newer tuner (experiment format {found}; this tuner reads up to "
            f"{VERSION}): upgrade tuner to read it"
        )
    return found


def read(saved: Mapping[str, object], where: str) -> dict[str, object]:
    """The saved settings brought up to ``VERSION``, without the version key."""
    settings = dict(saved)
    for step in range(version_of(settings, where), VERSION):
        settings = MIGRATIONS[step](settings)
    return {k: v for k, v in settings.items() if k != KEY}


def stamp(settings: Mapping[str, object]) -> dict[str, object]:
    """The settings as saved: the format version first."""
    return {KEY: VERSION, **settings}
