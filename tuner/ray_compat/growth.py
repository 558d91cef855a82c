"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

6. A restored sweep cannot grow, nor make its new trials where it now lies (Ray 2.60): ``Tuner.restore`` takes
the number of trials from the saved search state, and the storage of the experiment saved in it, so a moved
or copied experiment's new trials would go to its old folder (``relocate_saved_search`` points it at the
new one). ``extend_saved_search`` raises it there (the searcher's own state, with everything its
model learnt, is untouched), so ``tuner resume --num-samples N`` runs the extra trials. Sweeps over Tune's
variant generator (grids, PBT) keep their planned variants and cannot grow. A sweep that its budget or a
stall ended stopped its open trials without telling the searcher, so the saved concurrency limit
(``ConcurrencyLimiter.live_trials``) still counts them as running and would propose nothing; the trials
that finished are taken out of it.

Ray writes the experiment state and the search state to a staging folder, then copies them to the
experiment in a background thread, file by file; a kill -9 during that copy leaves a search state newer (or
older) than the trials saved beside it: its counter says it made a trial the saved state never held, so the
resumed sweep ended one short ("1 not started yet"). ``reconcile_saved_search`` sets the counter, and the
concurrency limit's running trials, to the trials the experiment state holds.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from pathlib import Path
from typing import Any, TypeAlias

from tuner.ray_compat.state_file import SEARCH_STATE_PREFIX, VARIANT_STATE_PREFIX

# A searcher's saved state, unpickled: Ray's own objects by name, whatever the searcher keeps.
SearchState: TypeAlias = dict[str, Any]


def can_grow(folder: str) -> bool:
    """Whether the sweep's trials come from a searcher (which can propose more) rather than planned variants."""
    from tuner import storage

    return bool(storage.list_names(folder, SEARCH_STATE_PREFIX)) and not storage.list_names(
        folder, VARIANT_STATE_PREFIX
    )


def extend_saved_search(folder: str, total: int, finished: Set[str] = frozenset()) -> None:
    """Let the saved search propose trials until ``total`` exist (it was finished at its old total); the
    ``finished`` trial ids no longer count against its concurrency limit."""

    def grow(state: SearchState) -> bool:
        state["total_samples"] = total
        state["finished"] = False
        _keep_live(state, lambda trial_id: trial_id not in finished)
        return True

    if not _edit_saved_search(folder, grow):
        raise RuntimeError(f"{folder} has no saved search state")


def reconcile_saved_search(folder: str, saved: Set[str]) -> bool:
    """Make the saved search agree with the ``saved`` trial ids of the experiment state beside it (see the
    module's docstring): True when they disagreed."""

    def agree(state: SearchState) -> bool:
        changed = state.get("counter") != len(saved)
        state["counter"] = len(saved)
        return _keep_live(state, lambda trial_id: trial_id in saved) or changed

    return _edit_saved_search(folder, agree)


def _keep_live(state: SearchState, keep: Callable[[str], bool]) -> bool:
    """Keep only the ``keep`` trials among the concurrency limit's running ones: True when some went."""
    dropped = False
    for key, part in state.items():
        if key.startswith("name:ConcurrencyLimiter") and isinstance(part, dict) and "live_trials" in part:
            still = {trial_id for trial_id in part["live_trials"] if keep(trial_id)}
            gone = len(part["live_trials"]) - len(still)
            part["num_unfinished_live_trials"] = max(0, part.get("num_unfinished_live_trials", 0) - gone)
            part["live_trials"] = still
            dropped = dropped or gone > 0
    return dropped


def relocate_saved_search(folder: str) -> bool:
    """Point the saved search's experiment at where the experiment lies now: ``Tuner.restore`` moves the
    trials it restores, but the searcher creates new ones (a grown sweep, trials not started yet) in the
    storage it was saved with, which a moved or copied experiment no longer has. True when it was moved."""
    from tuner import storage

    parent, name = storage.split(str(folder).rstrip("/"))

    def move(state: SearchState) -> bool:
        experiment = state.get("experiment")
        old = getattr(experiment, "storage", None)
        if (
            experiment is None
            or old is None
            or (str(old.storage_fs_path).rstrip("/"), old.experiment_dir_name) == (_fs_path(parent), name)
        ):
            return False
        import copy

        moved = copy.copy(old)  # as Ray moves the trials it restores: its staging folder (timestamp) kept
        moved.storage_fs_path, moved.experiment_dir_name = _fs_path(parent), name
        experiment.storage = moved
        if isinstance(getattr(experiment, "spec", None), dict) and "storage" in experiment.spec:
            experiment.spec["storage"] = moved
        return True

    return _edit_saved_search(folder, move)


def _fs_path(location: str) -> str:
    """A storage location as Ray's StorageContext keeps it (a bucket without its scheme)."""
    from tuner import storage

    local = storage.local_path(location)
    return (local if local is not None else location.split("://", 1)[1]).rstrip("/")


def _edit_saved_search(folder: str, edit: Callable[[SearchState], bool]) -> bool:
    """Load the newest saved search state, apply ``edit`` (True when it changed something) and save it whole."""
    import io

    from ray import cloudpickle

    from tuner import storage

    names = storage.list_names(folder, SEARCH_STATE_PREFIX)
    if not names:
        return False
    name = names[-1]
    local = storage.local_path(folder)
    if local is not None:
        raw = Path(local, name).read_bytes()
    else:
        fs, path = storage.filesystem(storage.join(folder, name))
        with fs.open_input_stream(path) as stream:
            raw = stream.read()
    state = cloudpickle.load(io.BytesIO(raw))
    if not edit(state):
        return False
    data = cloudpickle.dumps(state)
    if local is not None:
        storage.write_atomically(Path(local, name), data)
    else:
        fs, path = storage.filesystem(storage.join(folder, name))
        with fs.open_output_stream(path) as stream:
            stream.write(data)
    return True
