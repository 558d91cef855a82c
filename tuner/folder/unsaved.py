"""Trial folders that no saved state lists: a driver killed (kill -9, a lost machine) between starting a trial
and saving its state leaves one behind, with its parameters and perhaps an epoch or two of results.

Ray cannot continue such a trial (nothing it restores names it), so on resume the search makes a new trial in
its place. While no resume has run, the folder is the only record of a started trial and the review shows it;
once a resume has replaced it, it is listed here and left out of the review (two trials for one place in the
sweep would be one too many), its folder kept as it was.
"""

from __future__ import annotations

import json
from collections.abc import Set

from tuner import storage
from tuner.folder.names import UNSAVED_FILE
from tuner.ray_compat.state_file import replaced_trial_dirs


def unlisted(folder: str, listed: Set[str]) -> set[str]:
    """Trial folders (those holding their parameters) outside the ``listed`` ones of Ray's saved state that
    still stand for a trial: not replaced by ``tuner resume --errored restart``, nor by a resume (``record``)."""
    found = {
        name
        for name in storage.list_dirs(folder)
        if name not in listed and storage.exists(storage.join(folder, name), "params.json")
    }
    if not found:
        return found  # the usual case: Ray's earlier states and this list are not read
    return found - replaced_trial_dirs(folder) - recorded(folder)


def recorded(folder: str) -> set[str]:
    """The trial folders a resume has replaced, as listed in the experiment."""
    try:
        names = json.loads(storage.read_text(folder, UNSAVED_FILE) or "[]")
    except ValueError:
        return set()
    return {name for name in names if isinstance(name, str)} if isinstance(names, list) else set()


def record(folder: str, names: Set[str]) -> None:
    """Add ``names`` to the list of replaced trial folders."""
    storage.write_text(
        folder, UNSAVED_FILE, json.dumps(sorted(recorded(folder) | set(names)), indent=1) + "\n"
    )


def trial_id_of(name: str) -> str:
    """A trial folder's trial id, as its name begins (``<trial id>_<its parameters>``)."""
    return name.split("_", 1)[0]
