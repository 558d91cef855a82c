"""Old module names of tuner, kept importable so experiments saved before a move still resume.

Ray pickles a sweep's callbacks, stoppers, searcher and scheduler into the experiment (``tuner.pkl``) by
their module paths. When modules moved into ``tuner/launch`` and ``tuner/review``, an experiment saved
earlier named the old paths (and again when launch/ was split by phase into guards/, placement/, watching/ and
trial/, when the fates and Ray's state reader moved into tuner/folder/, and when the experiment's reader moved
from tuner/review/ to tuner/experiment.py); this finder answers an import of an old name with the module now
holding it.
A class that left a module which still exists (``MOVED_NAMES``) is answered by that module's attribute lookup,
added here as the module loads, so the old module never imports the new one (no import circle).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, cast

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
# Review modules that left tuner/review/: into the experiment folder's format (tuner/folder/), or, the reader
# and where.py, to the top of the package.
_FOLDER = {
    "fates": "tuner.folder.fates",
    "ray_state": "tuner.ray_compat.state_file",
    "progress_rows": "tuner.folder.progress_rows",
    # the experiment's one reader, back at the top of the package (where it began, as tuner/experiment.py)
    "experiment": "tuner.experiment",
    "where": "tuner.where",
}

MOVED = {
    # tuner/X.py, before launch/ and review/ existed
    **{f"tuner.{m}": _LAUNCH[m] for m in _FIRST_MOVE},
    **{f"tuner.{m}": _FOLDER.get(m, f"tuner.review.{m}") for m in _REVIEW if m != "experiment"},
    # tuner/review/X.py, before tuner/folder/ owned the format
    **{f"tuner.review.{m}": now for m, now in _FOLDER.items()},
    # tuner/launch/X.py, before launch/ was split by phase
    **{f"tuner.launch.{m}": now for m, now in _LAUNCH.items() if now != f"tuner.launch.{m}"},
    "tuner.folder.ray_state": "tuner.ray_compat.state_file",  # Ray's state file, a part of the quarantine
    "tuner.report": "tuner.review.report.page",
    "tuner.config": "tuner.settings",
    "tuner.schedulers.recording": "tuner.ray_compat.schedulers",
    # ASHA and the median rule by fronts, before each rule was one implementation for any number of objectives
    "tuner.schedulers.pareto_asha": "tuner.schedulers.saved_before",
    "tuner.schedulers.pareto_median": "tuner.schedulers.saved_before",
    # the live table, once a rewritten CLIReporter (its SweepReporter resumes as a LiveTable)
    "tuner.ray_compat.live_table": "tuner.launch.watching.live_table",
}

# Old module (still there) -> {class name: the module holding that class now}.
MOVED_NAMES = {
    # the GP, before it left the Optuna sampler rules for a module of its own
    "tuner.searchers.optuna_samplers": {"WarpedGP": "tuner.searchers.warped_gp"},
    # Ray's schedulers with tuner's records, before ASHA, HyperBand, BOHB and the median rule were tuner's own
    "tuner.ray_compat.schedulers": {
        name: "tuner.schedulers.saved_before"
        for name in ("RecordingASHA", "RecordingMedian", "RecordingHyperBand", "RecordingBOHB")
    },
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        pass  # the module it answers with has run already


def _answer_old_names(module: ModuleType) -> None:
    """Give ``module`` a lookup that answers the names of the classes that left it (PEP 562)."""
    names = MOVED_NAMES[module.__name__]

    def __getattr__(name: str) -> Any:  # a class MOVED_NAMES names, whatever it is
        if name in names:
            return getattr(importlib.import_module(names[name]), name)
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")

    vars(module)["__getattr__"] = __getattr__  # PEP 562: looked up in the module's namespace


class _OldNamesLoader(importlib.abc.Loader):
    """Runs a module's own loader, then adds the lookup of its moved classes."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)  # get_source, get_filename, ... as the real loader answers them

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        _answer_old_names(module)


class _OldNamesFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in MOVED_NAMES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                # a module MOVED_NAMES names is a plain module, which a loader loads
                spec.loader = _OldNamesLoader(cast(importlib.abc.Loader, spec.loader))
                return spec
        return None


def install() -> None:
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())
    if not any(isinstance(finder, _OldNamesFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldNamesFinder())  # before the finder that would load the module plainly
    for name in MOVED_NAMES:
        if name in sys.modules:  # imported before install(): answer its old names all the same
            _answer_old_names(sys.modules[name])
