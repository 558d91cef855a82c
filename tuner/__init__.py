"""tuner: hyperparameter sweeps for PyTorch training loops on Ray Tune.

From Python (a notebook): ``exp = tuner.sweep("cifar_small", scheduler="asha", num_samples=20)``, then
``exp.trials`` (a DataFrame), ``exp.history``, ``exp.best``, ``exp.report()``; ``tuner.load(EXP)`` opens one.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from tuner import moved
from tuner.errors import TunerError, UsageError

if TYPE_CHECKING:
    from tuner.api import Experiment, load, sweep
    from tuner.spec import SearchSpace

moved.install()

__all__ = ["Experiment", "SearchSpace", "TunerError", "UsageError", "load", "sweep"]
__version__ = "0.1.0"
# The notebook API, imported when first asked for: a module of tuner (tuner.storage) loads without the whole
# launch path behind it, and nothing below the API imports its way back up through this package's face.
_API = {"Experiment": "tuner.api", "load": "tuner.api", "sweep": "tuner.api", "SearchSpace": "tuner.spec"}


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'tuner' has no attribute {name!r}")
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value
    return value
