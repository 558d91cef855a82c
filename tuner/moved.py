"""Old module names of tuner, kept importable so experiments saved before a move still resume.

Ray pickles a sweep's callbacks, stoppers, searcher and scheduler into the experiment (``tuner.pkl``) by
their module paths. When modules moved into ``tuner/launch`` and ``tuner/review``, an experiment saved
earlier named the old paths; this finder answers an import of an old name with the module now holding it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

MOVED = {
    **{
        f"tuner.{m}": f"tuner.launch.{m}"
        for m in (
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
    },
    **{
        f"tuner.{m}": f"tuner.review.{m}"
        for m in (
            "experiment",
            "ray_state",
            "fates",
            "results",
            "compare",
            "plots",
            "dashboard",
            "vocabulary",
        )
    },
    "tuner.report": "tuner.review.report.page",
    "tuner.config": "tuner.settings",
    "tuner.schedulers.recording": "tuner.ray_compat.schedulers",
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
