"""Old module names of tuner, kept importable so experiments saved before a move still resume.

Ray pickles a sweep's callbacks, stoppers, searcher and scheduler into the experiment (``tuner.pkl``) by
their module paths. When modules moved into ``tuner/launch`` and ``tuner/review``, an experiment saved
earlier named the old paths (and again when launch/ was split by phase into guards/, placement/, watching/ and
trial/, and when the fates and Ray's state reader moved into tuner/folder/); this finder answers an import of an old name with the module now holding it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

# Where each launch module lies now: at launch/ itself, or in the sub-package of its phase.
_LAUNCH = {
    **{m: f"tuner.launch.{m}" for m in ("plan", "runner", "registry", "warm_start", "resolve", "resume")},
    **{
        m: f"tuner.launch.guards.{m}"
        for m in ("stall", "watchdog", "budget", "crashes", "signals", "disk", "epoch_limit")
    },
    **{m: f"tuner.launch.placement.{m}" for m in ("cluster", "resources", "packing", "auth", "jobs")},
    **{m: f"tuner.launch.watching.{m}" for m in ("reporting", "tensorboard_log", "live_report")},
    **{m: f"tuner.launch.trial.{m}" for m in ("forms", "in_trial", "trial_output")},
}
_FIRST_MOVE = (
    "plan",
    "runner",
    "registry",
    "cluster",
    "resources",
    "packing",
    "auth",
    "jobs",
    "reporting",
    "tensorboard_log",
    "live_report",
    "warm_start",
    "stall",
    "watchdog",
    "budget",
    "crashes",
    "signals",
)
_REVIEW = ("experiment", "ray_state", "fates", "results", "compare", "plots", "dashboard", "vocabulary")
# Review modules that became part of the experiment folder's format (tuner/folder/).
_FOLDER = {m: f"tuner.folder.{m}" for m in ("fates", "ray_state")}

MOVED = {
    # tuner/X.py, before launch/ and review/ existed
    **{f"tuner.{m}": _LAUNCH[m] for m in _FIRST_MOVE},
    **{f"tuner.{m}": _FOLDER.get(m, f"tuner.review.{m}") for m in _REVIEW},
    # tuner/review/X.py, before tuner/folder/ owned the format
    **{f"tuner.review.{m}": now for m, now in _FOLDER.items()},
    # tuner/launch/X.py, before launch/ was split by phase
    **{f"tuner.launch.{m}": now for m, now in _LAUNCH.items() if now != f"tuner.launch.{m}"},
    "tuner.report": "tuner.review.report.page",
    "tuner.config": "tuner.settings",
    "tuner.schedulers.recording": "tuner.ray_compat.schedulers",
    # the live table, once a rewritten CLIReporter (its SweepReporter resumes as a LiveTable)
    "tuner.ray_compat.live_table": "tuner.launch.watching.live_table",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: Any) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        pass  # the module it answers with has run already


def install() -> None:
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())
