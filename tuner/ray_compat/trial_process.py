"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

9. Ending a hung trial (Ray 2.60): Tune can stop a trial only by asking its actor, which a trial blocked in
a data loader or a collective never answers. ``end_trial_process`` kills the trial's actor (its handle
is ``trial.temporary_state.ray_actor``); Tune then handles the trial as failed, retries included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ray.tune.experiment import Trial


def end_trial_process(trial: Trial) -> bool:
    """Kill the process a trial runs in; False when it has none (not started, or already gone)."""
    import ray

    actor = getattr(getattr(trial, "temporary_state", None), "ray_actor", None)
    if actor is None:
        return False
    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # already dead: Tune is handling it
        return False
    return True
