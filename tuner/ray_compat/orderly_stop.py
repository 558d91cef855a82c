"""Part 25: Ray's orderly stop of a sweep sits on SIGUSR1 while ``fit`` runs. Seen in Ray 2.60, checked on 2.50.0
and 2.55.1.

Ray's private ``ray.tune.tune._setup_signal_catching`` installs, for the length of a run, a handler on SIGINT
(unless ``TUNE_DISABLE_SIGINT_HANDLER`` is set) and on SIGUSR1 that ends the run in order: trials keep their
last checkpoint and the state is saved. Only the SIGINT one is documented. tuner/launch/guards/signals.py takes
SIGINT, SIGTERM and SIGHUP itself (Ray told to leave SIGINT alone) and hands the stop to the SIGUSR1 handler.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType
from typing import TypeAlias

RAY_STOP = signal.SIGUSR1  # where Ray's orderly-stop handler sits while fit runs
RAY_SIGINT_OFF = "TUNE_DISABLE_SIGINT_HANDLER"  # Ray leaves SIGINT alone when this is "1"

# A signal handler that is a function (what it returns is never read)
Handler: TypeAlias = Callable[[int, FrameType | None], object]


def rays_stop(own: Handler) -> Handler | None:
    """Ray's orderly-stop handler while a run is on; None before or after one (or where ``own`` sits there)."""
    handler = signal.getsignal(RAY_STOP)
    return handler if callable(handler) and handler != own else None


def stop_in_order(handler: Handler) -> None:
    """Ask Ray's run to stop in order, as its own SIGUSR1 would."""
    handler(RAY_STOP, None)
