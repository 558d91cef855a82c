"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

20. Trials waiting for a slot (Ray 2.60; checked on 2.50.0 and 2.55.1, which keep one waiting under a
ConcurrencyLimiter too): Tune keeps at most one trial waiting for a free slot when the
searcher is not its own variant generator and no ConcurrencyLimiter wraps it, and a trial waits while its
worker process starts (1-2 s on 2 cores). The trials of a first wave then start one after another, and on
a sweep of short trials the first worker can run them all before the second is up, which Tune then waits
for at the end only to stop it. Tune's documented setting ``TUNE_MAX_PENDING_TRIALS_PG`` says how many may
wait; Tune reads it when a run's controller is made, so ``trials_waiting`` sets it for the length of
``Tuner.fit`` and takes it away after. A value the user set is theirs and is left alone.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

SETTING = "TUNE_MAX_PENDING_TRIALS_PG"


@contextlib.contextmanager
def trials_waiting(count: int | None) -> Iterator[None]:
    """Let ``count`` trials wait for a slot at once while the block runs (None: Tune's own rule)."""
    if count is None or SETTING in os.environ:
        yield
        return
    os.environ[SETTING] = str(count)
    try:
        yield
    finally:
        os.environ.pop(SETTING, None)
