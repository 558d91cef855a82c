"""Whether a checkpoint is whole: a manifest of its files' sizes and checksums, written when it is registered.

A torn write, a bad disk or a hand that deleted files leaves a checkpoint folder that loads as garbage or not at
all. The manifest (``.tuner-manifest.json`` inside the checkpoint) is written by the sweep's driver once Ray has
stored the checkpoint whole, so a later reader (``tuner resume``, ``tuner export``) can tell a whole checkpoint
from a damaged one before anything loads it. CRC-32 rather than a cryptographic hash: it finds damage, not
tampering, at about a gigabyte a second.

Only a local folder gets a manifest (the driver would have to download a bucket's checkpoints to sum them); a
checkpoint without one is taken as whole when its folder holds files, as every checkpoint was before manifests.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from tuner import storage
from tuner.folder.names import DAMAGED_PREFIX, MANIFEST_FILE
from tuner.objectives import Mode, pick
from tuner.storage import write_atomically
from tuner.values import number

CHUNK = 1 << 20


def _crc32(path: Path) -> int:
    crc = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MANIFEST_FILE)


def write_manifest(folder: str | Path, epoch: int | None = None) -> bool:
    """Record the sizes and checksums of the files in a local checkpoint folder, and the epoch it was saved at
    (a ``tune.Trainable`` class's results do not name their checkpoint, so this is how its best epoch's is
    found); False where there is none to record (a bucket's checkpoint, a folder already gone)."""
    plain = storage.local_path(str(folder))
    if plain is None or not Path(plain).is_dir():
        return False
    root = Path(plain)
    files = {str(p.relative_to(root)): [p.stat().st_size, _crc32(p)] for p in _files(root)}
    saved: dict[str, object] = {"files": files} if epoch is None else {"files": files, "epoch": epoch}
    write_atomically(root / MANIFEST_FILE, json.dumps(saved, indent=1))
    return True


def _saved_at(trial_path: str, name: str) -> int | None:
    """The epoch a checkpoint's manifest says it was saved at, None where it says none."""
    plain = storage.local_path(storage.join(trial_path, name))
    if plain is None:  # a bucket's checkpoints get no manifest
        return None
    try:
        epoch = json.loads(Path(plain, MANIFEST_FILE).read_text(encoding="utf-8")).get("epoch")
    except (OSError, ValueError, AttributeError):
        return None
    return epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None


def named(trial_path: str, rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The trial's rows, each naming the checkpoint saved with it: a function's results name theirs, a class's
    are matched to the epochs its checkpoints' manifests give."""
    if all(r.get("checkpoint_dir_name") for r in rows):
        return rows
    names = [d for d in storage.list_dirs(trial_path) if checkpoint_epoch(d) is not None]
    by_epoch = {str(e): d for d in names if (e := _saved_at(trial_path, d)) is not None}
    return [
        r
        if r.get("checkpoint_dir_name") or (name := by_epoch.get(str(r.get("training_iteration")))) is None
        else {**r, "checkpoint_dir_name": name}
        for r in rows
    ]


def damage(folder: str | Path) -> str | None:
    """None when the checkpoint is whole, else what is wrong with it, in words."""
    plain = storage.local_path(str(folder))
    if plain is None:  # a bucket: only whether it is there
        return None if storage.is_dir(folder) else "its folder is missing"
    root = Path(plain)
    if not root.is_dir():
        return "its folder is missing"
    try:
        manifest = json.loads((root / MANIFEST_FILE).read_text(encoding="utf-8"))["files"]
        expected = {str(name): (int(size), int(crc)) for name, (size, crc) in manifest.items()}
    except FileNotFoundError:
        return None if _files(root) else "its folder is empty"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return f"its {MANIFEST_FILE} is unreadable"
    for name, (size, crc) in sorted(expected.items()):
        path = root / name
        try:
            if not path.is_file():
                return f"{name} is missing"
            if path.stat().st_size != size:
                return f"{name} has {path.stat().st_size:,} bytes where {size:,} were saved"
            if _crc32(path) != crc:
                return f"{name} differs from what was saved"
        except OSError as exc:  # a bad disk: the file is there but cannot be read
            return f"{name} cannot be read ({exc.strerror or exc})"
    return None


def has_manifest(folder: str | Path) -> bool:
    plain = storage.local_path(str(folder))
    return plain is not None and Path(plain, MANIFEST_FILE).is_file()


def checkpoint_epoch(name: str) -> int | None:
    """The index in Ray's name for a checkpoint folder (``checkpoint_000004``: 4), None for other names."""
    head, _, index = name.partition("_")
    return int(index) if head == "checkpoint" and index.isdigit() else None


def set_aside(trial_path: str, name: str) -> str | None:
    """Rename a damaged checkpoint out of every reader's way (nothing is deleted); its new name, or None where
    there was nothing to move."""
    plain = storage.local_path(trial_path)
    if plain is None or not Path(plain, name).is_dir():
        return None
    target = Path(plain, DAMAGED_PREFIX + name)
    n = 1
    while target.exists():
        n += 1
        target = Path(plain, f"{DAMAGED_PREFIX}{n}-{name}")
    Path(plain, name).rename(target)
    return target.name


def newest_whole(trial_path: str, before: str | None = None) -> str | None:
    """The newest whole checkpoint folder in a trial's folder (older than ``before`` when given), or None."""
    for name in whole_checkpoints(trial_path):
        if before is None or (checkpoint_epoch(name) or 0) < (checkpoint_epoch(before) or 0):
            return name
    return None


def whole_checkpoints(trial_path: str) -> Iterator[str]:
    """A trial's whole checkpoint folders, newest first, each checked only when asked for: a folder without a
    manifest beside ones with theirs was cut short before the sweep registered it, and a damaged one is passed
    over."""
    names = [d for d in storage.list_dirs(trial_path) if checkpoint_epoch(d) is not None]
    names.sort(key=lambda d: checkpoint_epoch(d) or 0, reverse=True)
    manifests = any(has_manifest(storage.join(trial_path, d)) for d in names)
    for name in names:
        folder = storage.join(trial_path, name)
        if not (manifests and not has_manifest(folder)) and damage(folder) is None:
            yield name


def choose_for_best(
    trial_path: str, rows: list[dict[str, str]], best: dict[str, str] | None, metric: str, mode: Mode
) -> tuple[str | None, str | None]:
    """The checkpoint that stands for a trial's best epoch (``best``, one of its ``rows``), and why it is not that
    epoch's own when it is not: that epoch saved none, or its checkpoint is damaged or gone. The best whole one
    kept by ``metric`` stands in, else the newest whole one."""
    if not best:
        return None, None
    rows = named(trial_path, rows)
    best = next(
        (r for r in reversed(rows) if r.get("training_iteration") == best.get("training_iteration")), best
    )
    name = best.get("checkpoint_dir_name")
    if not name:
        note = f"no checkpoint was saved at the best epoch ({best.get('training_iteration')})"
    elif storage.is_dir(at_best := storage.join(trial_path, name)):
        why = damage(at_best)
        if why is None:
            return at_best, None
        note = f"the best epoch's checkpoint {name} is damaged ({why})"
    elif storage.is_dir(storage.join(trial_path, DAMAGED_PREFIX + name)):
        note = f"the best epoch's checkpoint {name} was found damaged and set aside by tuner resume"
    else:
        note = f"the best epoch's checkpoint {name} is not kept"
    whole = list(whole_checkpoints(trial_path))  # newest first, each checked once
    kept_whole = set(whole)
    saved = [
        (value, row)
        for row in rows
        if row.get("checkpoint_dir_name") in kept_whole and (value := number(row.get(metric))) is not None
    ]
    if saved:
        value, kept = pick(mode)(saved, key=lambda pair: pair[0])
        stands = f"epoch {kept.get('training_iteration')}'s ({metric} {value:.4g}), the best whole one kept"
        return storage.join(trial_path, kept["checkpoint_dir_name"]), f"{note}; {stands}, stands in"
    newest = whole[0] if whole else None
    if newest is None:
        return None, (None if not name else f"{note}; no whole checkpoint is kept")
    return storage.join(trial_path, newest), f"{note}; the newest whole one, {newest}, stands in"
