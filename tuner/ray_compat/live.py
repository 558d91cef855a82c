"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

10. A resumed sweep's stopper (Ray 2.60): Tune saves its stopper inside the experiment state and a restored
run uses that copy, not the run config's, so a stopper holding the callback that decides (a stall, a
spent budget) would consult a dead copy. Such callbacks register the live instance with
``register_live``; stoppers look it up with ``live``, by the experiment they belong to.
"""

from __future__ import annotations

from typing import Any

_LIVE: dict[str, Any] = {}


def register_live(key: str, callback: Any) -> None:
    """This process's deciding instance for ``key`` (e.g. a budget watch and its experiment)."""
    _LIVE[key] = callback


def live(key: str, fallback: Any) -> Any:
    """The instance registered for ``key`` in this process, else ``fallback``."""
    return _LIVE.get(key, fallback)
