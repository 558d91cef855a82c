"""tuner: hyperparameter sweeps for PyTorch training loops on Ray Tune.

From Python (a notebook): ``exp = tuner.sweep("cifar_small", scheduler="asha", num_samples=20)``, then
``exp.trials`` (a DataFrame), ``exp.history``, ``exp.best``, ``exp.report()``; ``tuner.load(EXP)`` opens one.
"""

from tuner import moved
from tuner.api import Experiment, load, sweep
from tuner.errors import TunerError, UsageError
from tuner.spec import SearchSpace

moved.install()

__all__ = ["Experiment", "SearchSpace", "TunerError", "UsageError", "load", "sweep"]
__version__ = "0.1.0"
