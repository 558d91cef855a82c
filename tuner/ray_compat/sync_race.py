"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

3. A benign sync race (Ray 2.60): Ray saves searcher state to ``.<uuid>-tmp-…`` and renames it while the
previous upload of the experiment folder may still list files; that upload fails on the vanished
name, and the next sync (forced at the end of every sweep) copies it anyway. Its traceback is hidden.
"""

from __future__ import annotations

import logging

from tuner.ray_compat.logfilters import install_filter


class _SkipRenamedScratchFileSync(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Saving experiment state to storage"):
            return True
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, FileNotFoundError) and "-tmp-" in str(error))


SYNC_LOGGER = "ray.tune.execution.experiment_state"


def quiet_benign_sync_races() -> None:
    """Install the filter once on the logger Ray reports experiment-state syncs through."""
    install_filter(SYNC_LOGGER, _SkipRenamedScratchFileSync())
