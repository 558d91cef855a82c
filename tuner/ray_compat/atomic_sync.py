"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

18. Uploads that overwrite in place (Ray 2.60): the driver keeps the experiment's state (``experiment_state-*.json``,
the searcher's state, ``tuner.pkl``) in a staging folder and copies it over the experiment folder after
each step with ``pyarrow.fs.copy_files`` (through ``ray.train._internal.storage._pyarrow_fs_copy_files``),
which writes each file in place: when the disk fills mid-copy the good state is replaced by a truncated one
and the experiment can no longer be resumed. ``atomic_local_copies`` makes each copy into a local folder
write a hidden temporary file and rename it over the old one, so a copy cut short leaves the last good
file as it was. Ray also writes ``experiment_state-*.json`` in place in the staging folder while its
background copy of the previous one may still be reading it (a ``kill -9`` then left an empty state behind):
a state that does not parse is never copied over a good one. The same copy carries each trial's result rows
(``result.json``, ``progress.csv``) from the staging folder, in whatever order the folder lists them: a kill
after the state was copied and before a trial's rows were left a state whose checkpoint was newer than the
rows (the resumed trial went on from it, its last epoch's row lost). The state is copied last, so a state
never runs ahead of the rows it counts (rows ahead of the state are read as the epochs reported again that
they are). A copy to a bucket is left to Ray but for its order, the state last too: an object store
replaces an object only once it is whole, and an outage that cut a copy short (tuner/storage_outage.py) left
a state newer than the rows it counts.

Ray copies the whole staging folder at every sync, every trial's rows included, and it syncs as often as the
last copy lets it. Written in Python, that grew with the trials: 400 trials in, the copy held the driver's
interpreter most of the time and the sweep ran three times slower. So a trial's file that has not changed since
this process copied it (same size and modification time) is not copied again; the files at the top of the
folder (the experiment's and the searcher's state, rewritten whole) always are.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tuner.ray_compat.state_file import STATE_PREFIX

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem

_MODULE = "ray.train._internal.storage"
_FUNCTION = "_pyarrow_fs_copy_files"
CHUNK = 16 * 2**20
# A copied file -> (size, modification time in ns) of the source it was copied from, in this process.
_copied: dict[str, tuple[int, int]] = {}
_made: set[str] = set()  # folders this process made (or found) in a target


def atomic_local_copies() -> None:
    """Install the renaming copy in this process (once; a no-op after the first call)."""
    import importlib

    module = importlib.import_module(_MODULE)
    original = getattr(module, _FUNCTION)
    if getattr(original, "_tuner_atomic", False):
        return

    def copy_files(
        source: str,
        destination: str,
        source_filesystem: FileSystem | None = None,
        destination_filesystem: FileSystem | None = None,
        **kwargs: Any,  # pyarrow's copy_files options, passed on untouched
    ) -> None:
        target_fs, target = _resolve(destination, destination_filesystem)
        if target_fs is not None and not _is_local(target_fs):
            return _state_last(original, source, target, source_filesystem, target_fs, **kwargs)
        if target_fs is None:
            return original(
                source,
                destination,
                source_filesystem=source_filesystem,
                destination_filesystem=destination_filesystem,
                **kwargs,
            )
        origin_fs, origin = _resolve(source, source_filesystem)
        if origin_fs is None:
            return original(
                source,
                destination,
                source_filesystem=source_filesystem,
                destination_filesystem=destination_filesystem,
                **kwargs,
            )
        copy_renaming(origin_fs, origin, target)
        return None

    vars(copy_files)["_tuner_atomic"] = True  # a mark on the function: installed once
    setattr(module, _FUNCTION, copy_files)


def _state_last(
    original: Callable[..., None],
    source: str,
    destination: str,
    source_filesystem: FileSystem | None,
    target_fs: FileSystem,
    **kwargs: Any,
) -> None:
    """A copy of the driver's staging folder to a bucket: everything but Ray's state, then the state. Ray copies
    the folder's files in any order, and an outage that cut a copy short left a state in the bucket newer than
    the trials' rows it counts, which the resumed trials went on from: their earlier epochs were lost."""
    import pyarrow.fs
    from ray.train._internal.storage import _ExcludingLocalFilesystem

    handler = getattr(source_filesystem, "handler", None)
    excluding = getattr(handler, "fs", None)
    if isinstance(excluding, _ExcludingLocalFilesystem):  # Ray's sync leaves out the checkpoints so
        root, exclude = str(excluding._root_path), list(excluding._exclude)
    elif source_filesystem is None or _is_local(source_filesystem):
        root, exclude = str(source), []
    else:
        root = ""
    if not root or not os.path.isdir(root):
        return original(
            source,
            destination,
            source_filesystem=source_filesystem,
            destination_filesystem=target_fs,
            **kwargs,
        )
    states = sorted(name for name in os.listdir(root) if name.startswith(STATE_PREFIX))
    rest = _ExcludingLocalFilesystem(root_path=Path(root), exclude=[*exclude, f"{STATE_PREFIX}*"])
    rest_fs = pyarrow.fs.PyFileSystem(pyarrow.fs.FSSpecHandler(rest))
    original(source, destination, source_filesystem=rest_fs, destination_filesystem=target_fs, **kwargs)
    for name in states:
        original(
            os.path.join(root, name),
            posixpath.join(destination, name),
            destination_filesystem=target_fs,
            **kwargs,
        )


def _resolve(path: str, filesystem: FileSystem | None) -> tuple[FileSystem | None, str]:
    import pyarrow.fs

    if filesystem is not None:
        return filesystem, str(path)
    try:
        return pyarrow.fs.FileSystem.from_uri(str(path))
    except (pyarrow.ArrowInvalid, pyarrow.ArrowNotImplementedError, OSError):
        return None, str(path)


def _is_local(filesystem: FileSystem) -> bool:
    import pyarrow.fs

    return isinstance(filesystem, pyarrow.fs.LocalFileSystem)


def copy_renaming(source_fs: FileSystem, source: str, target: str) -> None:
    """Copy a file or a folder's files from ``source_fs`` to the local ``target``, each file written under a
    hidden temporary name and renamed into place."""
    import pyarrow.fs

    info = source_fs.get_file_info(source)
    if info.type == pyarrow.fs.FileType.File:
        pairs = [(source, target)]
    elif info.type == pyarrow.fs.FileType.Directory:
        os.makedirs(target, exist_ok=True)
        found = source_fs.get_file_info(pyarrow.fs.FileSelector(source, recursive=True))
        pairs = []
        start = len(source.rstrip("/")) + 1
        for entry in found:
            inside = (
                entry.path[start:] if entry.path.startswith(source) else posixpath.relpath(entry.path, source)
            )
            destination = os.path.join(target, inside)
            if entry.type == pyarrow.fs.FileType.Directory:
                if destination not in _made:
                    os.makedirs(destination, exist_ok=True)
                    _made.add(destination)
            elif entry.type == pyarrow.fs.FileType.File:
                if "/" not in inside or _copied.get(destination) != (entry.size, entry.mtime_ns):
                    pairs.append((entry.path, destination))
    else:
        raise FileNotFoundError(source)
    pairs.sort(key=lambda pair: os.path.basename(pair[1]).startswith(STATE_PREFIX))  # the state last
    for origin, destination in pairs:
        _copy_one(source_fs, origin, destination)


def _copy_one(source_fs: FileSystem, origin: str, destination: str) -> None:
    folder, name = os.path.split(destination)
    os.makedirs(folder or ".", exist_ok=True)
    scratch = os.path.join(folder, f".{name}.partial")
    _copied.pop(destination, None)
    try:
        before = source_fs.get_file_info(origin)  # what is copied is at least this new
        with source_fs.open_input_stream(origin) as stream, open(scratch, "wb") as out:
            shutil.copyfileobj(stream, out, CHUNK)
            written = out.tell()
        if name.startswith(STATE_PREFIX) and not _whole_json(scratch):
            os.remove(scratch)  # caught mid-write in the staging folder: the last good state stays
            return
        os.replace(scratch, destination)
        if written == before.size:  # not written to while it was read
            _copied[destination] = (before.size, before.mtime_ns)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(scratch)
        raise


def _whole_json(path: str) -> bool:
    """Whether the file parses whole. Parsing Ray's state takes about three times its size (tens of megabytes
    on a sweep of thousands of trials); the memory is handed back to the system after, or the driver would keep
    the largest such parse for the rest of the sweep."""
    import json

    try:
        with open(path, encoding="utf-8") as stream:
            json.load(stream)
    except (OSError, ValueError):
        return False
    finally:
        _hand_back_memory()
    return True


def _hand_back_memory() -> None:
    """Return freed heap memory to the system where the C library can (glibc's ``malloc_trim``); else nothing."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], object] | None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
