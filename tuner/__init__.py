"""tuner: hyperparameter sweeps for PyTorch training loops on Ray Tune."""

from tuner.errors import TunerError, UsageError
from tuner.spec import SearchSpace

__all__ = ["SearchSpace", "TunerError", "UsageError"]
__version__ = "0.1.0"
