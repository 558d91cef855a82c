"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

7. Worker log lines (Ray 2.60): with a ``LoggingConfig`` (how tuner keeps Ray's INFO chatter out of the
terminal), a worker's log line reaches the driver without the ``(pid=…)`` prefix but with eight
context ids appended (job, worker, node, actor, task…). ``plain_formatting`` formats the trainable's
warnings in the worker as ``(trial ID) WARNING: message`` (tuner/launch/trial/in_trial.py sets it per trial).
"""

from __future__ import annotations

import logging


def plain_formatting(fmt: str) -> None:
    """Replace Ray's context-id formatter (ray/_common/formatters.py) on the root logger's handlers."""
    for handler in logging.getLogger().handlers:
        kind = type(handler.formatter)
        if (kind.__name__ == "TextFormatter" and kind.__module__.startswith("ray.")) or hasattr(
            handler, "_plain"
        ):
            handler.setFormatter(logging.Formatter(fmt))
            vars(handler)["_plain"] = True  # a mark on Ray's handler: formatted once
