"""21. Ray 2.60 (checked on 2.50.0, 2.55.1 and 2.60.0): Tune restores a trial from the latest checkpoint its saved
state names, whole or not. A deleted folder fails in ``Trainable.restore`` and a damaged file in the trainable's
own load; either way the trial errors and its epochs are lost. Before a resume, ``fall_back_from_damaged`` points
each such trial at its newest whole checkpoint still kept, or at none (it starts over), in the checkpoint manager
pickled in its run metadata (``_TrainingRunMetadata``, ``_CheckpointManager._latest_checkpoint_result`` and
``_checkpoint_results``): no public API names the checkpoint a restored trial starts from.

Tune takes the epoch count from the checkpoint it restores, so the rerun epochs report the same
``training_iteration`` as the lost ones and the experiment reader keeps the later row of each.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from tuner import storage

if TYPE_CHECKING:
    from ray.train import Checkpoint
    from ray.train._internal.session import _TrainingResult
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    from tuner.ray_compat.state_file import RayState


@dataclass(frozen=True)
class Fallback:
    """A trial whose latest checkpoint was damaged, and where it goes on from (``to`` None: the start)."""

    trial_id: str
    trial_dir: str
    damaged: str  # the latest checkpoint's folder name
    why: str
    to: str | None
    epoch: int  # the epochs ``to`` holds; 0 for the start
    lost: tuple[str, ...]  # every damaged checkpoint folder the trial had, the latest included


def _name(result: _TrainingResult) -> str:
    checkpoint = cast("Checkpoint", result.checkpoint)  # a checkpoint manager's results each hold theirs
    return posixpath.basename(str(checkpoint.path).rstrip("/"))


def _index(result: _TrainingResult) -> int:
    """Ray's index in the checkpoint's folder name (``checkpoint_000004``: 4): the order it was saved in."""
    tail = _name(result).rpartition("_")[2]
    return int(tail) if tail.isdigit() else -1


def _epoch(result: _TrainingResult) -> int:
    """The epochs the checkpoint holds (its index + 1 where Ray kept only the score of its metrics)."""
    return int(result.metrics.get("training_iteration") or _index(result) + 1)


def _saved_trials(state: RayState) -> Iterator[tuple[dict, list, _TrainingRunMetadata]]:
    """Each trial of a saved state: its description, its entry (to write back) and its run metadata."""
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    for entry in state["trial_data"]:
        yield json.loads(entry[0]), entry, _TrainingRunMetadata.from_json_state(entry[1])


def _latest(metadata: _TrainingRunMetadata) -> _TrainingResult | None:
    """The checkpoint a restore starts the trial from."""
    manager = metadata.checkpoint_manager
    return manager._latest_checkpoint_result if manager is not None else None


def restored_from(folder: str) -> dict[str, str]:
    """Each saved trial's id -> the checkpoint a resume restores it from, by Ray's newest saved state. Not the
    checkpoint its last result names: Ray saves a function trainable's checkpoint after the result that carries
    it, and its state may be written in between."""
    from tuner.ray_compat.state_file import latest_state_name, read_state

    name = latest_state_name(folder)
    if name is None:
        return {}
    return {
        trial["trial_id"]: _name(latest)
        for trial, _, metadata in _saved_trials(read_state(folder, name))
        if (latest := _latest(metadata)) is not None
    }


def fall_back_from_damaged(
    folder: str, trial_ids: Iterable[str], damage: Callable[[str], str | None]
) -> list[Fallback]:
    """Rewrite Ray's newest saved state so that each of ``trial_ids`` whose latest checkpoint ``damage`` finds
    damaged (a reason in words) restores from its newest whole one; written whole, only when something changed."""
    from tuner.ray_compat.state_file import latest_state_name, read_state

    name = latest_state_name(folder)
    if name is None:
        return []
    wanted = set(trial_ids)
    state = read_state(folder, name)
    fallbacks = []
    for trial, entry, metadata in _saved_trials(state):
        manager, latest = metadata.checkpoint_manager, _latest(metadata)
        if (
            trial.get("trial_id") not in wanted
            or not trial.get("relative_logdir")
            or manager is None
            or latest is None
        ):
            continue
        trial_path = storage.join(folder, trial["relative_logdir"])
        why = damage(storage.join(trial_path, _name(latest)))
        if why is None:
            continue
        kept = {_name(r): r for r in [*manager._checkpoint_results, latest]}
        broken = {n for n in kept if n == _name(latest) or damage(storage.join(trial_path, n)) is not None}
        good = max((r for n, r in kept.items() if n not in broken), key=_index, default=None)
        manager._checkpoint_results = [r for r in manager._checkpoint_results if _name(r) not in broken]
        manager._latest_checkpoint_result = good
        entry[1] = metadata.get_json_state()
        fallbacks.append(
            Fallback(
                trial_id=trial["trial_id"],
                trial_dir=trial["relative_logdir"],
                damaged=_name(latest),
                why=why,
                to=_name(good) if good is not None else None,
                epoch=_epoch(good) if good is not None else 0,
                lost=tuple(sorted(broken)),
            )
        )
    if fallbacks:
        storage.write_text(folder, name, json.dumps(state))
    return fallbacks
