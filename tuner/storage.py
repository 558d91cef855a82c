"""An experiment's own files (settings, best config) where Ray keeps the trials: a folder or a URI.

On a cluster the storage is often a bucket (``s3://``, ``gs://``); Ray writes trials there through
pyarrow, and so do we, so the experiment stays in one place whichever the storage is.
"""

from __future__ import annotations

import contextlib
import functools
import os
import posixpath
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from tuner.errors import StorageUnreachable, UsageError

if TYPE_CHECKING:
    from pyarrow.fs import FileSystem


def is_uri(location: str | Path) -> bool:
    return "://" in str(location)


def local_path(location: str) -> str | None:
    """The plain path of a ``file://`` URI (or of a plain path); None for remote storage."""
    if not is_uri(location):
        return location
    if location.startswith("file://"):
        return location[len("file://") :]
    return None


def storage_name(uri: str) -> str:
    """The storage a URI lies in, as messages name it: ``s3://bucket``."""
    scheme, _, rest = str(uri).partition("://")
    return f"{scheme}://{rest.lstrip('/').split('/', 1)[0].split('?', 1)[0]}"


def filesystem(uri: str) -> tuple[FileSystem, str]:
    """The filesystem of a storage URI and the path in it; every call it makes waits out an outage of the
    storage for up to the storage timeout (tuner/storage_outage.py)."""
    import pyarrow.fs

    from tuner.patient_filesystem import patient
    from tuner.storage_outage import patiently

    try:
        # made without the store's answer (most often): its success says nothing of an outage
        fs, path = patiently(storage_name(uri), lambda: pyarrow.fs.FileSystem.from_uri(uri), answers=False)
    except StorageUnreachable:
        raise
    except (pyarrow.ArrowInvalid, pyarrow.ArrowNotImplementedError, OSError) as exc:
        raise UsageError(f"cannot open storage {uri}: {exc}") from None
    return patient(fs, str(uri).partition("://")[0]), path


def check_usable(storage_path: str) -> None:
    """Refuse, before anything starts, a storage path that cannot hold experiments: a file, a folder this
    user cannot write, a bucket that does not exist."""
    import os

    plain = local_path(storage_path)
    if plain is not None:
        path = Path(plain)
        if path.exists() and not path.is_dir():
            raise UsageError(
                f"--storage-path {storage_path} is a file, not a folder; pass a folder for experiments"
            )
        existing = next(p for p in [path, *path.parents] if p.exists())
        if not existing.is_dir():
            raise UsageError(
                f"--storage-path {storage_path}: {existing} is a file, so no folder can be made in it"
            )
        if not os.access(existing, os.W_OK | os.X_OK):
            raise UsageError(f"--storage-path {storage_path}: {existing} is not writable by this user")
        try:  # what the permissions do not tell (a root user, /proc, a read-only mount): make a folder there
            import tempfile

            os.rmdir(tempfile.mkdtemp(prefix=".tuner-check-", dir=existing))
        except OSError as exc:
            raise UsageError(
                f"--storage-path {storage_path}: cannot make a folder in {existing} ({exc.strerror or exc})"
            ) from None
        return
    import pyarrow.fs

    fs, inside = filesystem(storage_path)
    bucket = inside.split("/", 1)[0]
    try:
        info = fs.get_file_info(bucket)
    except StorageUnreachable:
        raise
    except OSError as exc:
        raise UsageError(f"--storage-path {storage_path}: {' '.join(str(exc).split())[:200]}") from None
    if info.type == pyarrow.fs.FileType.NotFound:
        raise UsageError(f"--storage-path {storage_path}: the bucket {bucket!r} does not exist")


def holds_experiment(location: str) -> bool:
    """Whether ``location`` already holds an experiment (or anything: a non-empty folder is never reused)."""
    if not is_uri(location) or location.startswith("file://"):
        path = Path(local_path(location) or location)
        return path.exists() and (not path.is_dir() or any(path.iterdir()))
    return is_dir(location) or exists(location, "tuner_config.yaml")


def prepare(location: str) -> None:
    """Create the experiment folder (a no-op for object stores, which have none)."""
    if not is_uri(location):
        Path(location).mkdir(parents=True, exist_ok=True)
        return
    fs, path = filesystem(location)
    fs.create_dir(path, recursive=True)


def remove_if_empty(location: str) -> None:
    """Remove a local experiment folder that holds nothing (a sweep refused before its first trial)."""
    import contextlib

    if not is_uri(location):
        with contextlib.suppress(OSError):
            Path(location).rmdir()


def remove_tree(location: str) -> None:
    """Remove an experiment folder this process made and everything in it (a sweep ended as bad input)."""
    import contextlib
    import shutil

    if not is_uri(location):
        shutil.rmtree(location, ignore_errors=True)
        return
    fs, path = filesystem(location)
    with contextlib.suppress(OSError):
        fs.delete_dir(path)


def write_text(location: str | Path, name: str, text: str) -> str:
    """Write ``name`` into the experiment folder; returns where it went."""
    if not is_uri(location):
        target = Path(location) / name
        # a write cut short (a full disk) never replaces the file it was to replace
        write_atomically(target, text)
        return str(target)
    fs, path = filesystem(str(location))
    with fs.open_output_stream(posixpath.join(path, name)) as stream:
        stream.write(text.encode("utf-8"))
    return str(location).rstrip("/") + "/" + name


def write_made(location: str | Path, name: str, make: Callable[[], str]) -> str:
    """Write ``name`` with the text ``make()`` gives when the write is tried, and again at each try while the
    storage is waited for (tuner/storage_outage.py): a time stamp in it (a claim's lease) is that of the write
    that landed, not of the first try before an outage. Returns where it went."""
    if not is_uri(location):
        return write_text(location, name, make())
    from tuner.patient_filesystem import write_made as write_made_patiently

    fs, path = filesystem(str(location))
    write_made_patiently(fs, posixpath.join(path, name), lambda: make().encode("utf-8"))
    return str(location).rstrip("/") + "/" + name


def remove(location: str | Path, name: str) -> None:
    """Delete ``name`` from the experiment folder (nothing when it is not there)."""
    if not is_uri(location):
        Path(location, name).unlink(missing_ok=True)
        return
    fs, path = filesystem(str(location))
    with contextlib.suppress(FileNotFoundError):
        fs.delete_file(posixpath.join(path, name))


def exists(location: str | Path, name: str) -> bool:
    if not is_uri(location):
        return (Path(location) / name).is_file()
    import pyarrow.fs

    fs, path = filesystem(str(location))
    return fs.get_file_info(posixpath.join(path, name)).type == pyarrow.fs.FileType.File


def read_text(location: str | Path, name: str) -> str | None:
    """The text of ``name`` in the experiment folder, or None when it is not there."""
    if not is_uri(location):
        try:  # one open, no stat first: a large sweep's review reads two files a trial
            with open(os.path.join(location, name), encoding="utf-8") as stream:
                return stream.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
    if not exists(location, name):
        return None
    fs, path = filesystem(str(location))
    with fs.open_input_stream(posixpath.join(path, name)) as stream:
        return stream.read().decode("utf-8")


def split(path: str | Path) -> tuple[str, str]:
    """A file's folder and name, for a plain path or a URI."""
    if is_uri(path):
        folder, _, name = str(path).rstrip("/").rpartition("/")
        return folder, name
    return str(Path(path).parent), Path(path).name


def join(location: str | Path, *parts: str) -> str:
    """A path or URI inside ``location``."""
    if not is_uri(location):
        return str(Path(location, *parts))
    return posixpath.join(str(location).rstrip("/"), *parts)


def is_dir(location: str | Path) -> bool:
    if not is_uri(location):
        return Path(location).is_dir()
    import pyarrow.fs

    fs, path = filesystem(str(location))
    return fs.get_file_info(path).type == pyarrow.fs.FileType.Directory


def list_dirs(location: str | Path) -> list[str]:
    """Names of the folders directly in ``location``, sorted."""
    if not is_uri(location):
        try:
            with os.scandir(location) as entries:
                return sorted(e.name for e in entries if e.is_dir())
        except (FileNotFoundError, NotADirectoryError):
            return []
    import pyarrow.fs

    fs, path = filesystem(str(location))
    infos = fs.get_file_info(pyarrow.fs.FileSelector(path, allow_not_found=True))
    return sorted(posixpath.basename(i.path) for i in infos if i.type == pyarrow.fs.FileType.Directory)


def list_names(location: str | Path, pattern_prefix: str) -> list[str]:
    """File names directly in the experiment folder that start with ``pattern_prefix``, sorted."""
    if not is_uri(location):
        folder = Path(location)
        return sorted(p.name for p in folder.glob(f"{pattern_prefix}*")) if folder.is_dir() else []
    import pyarrow.fs

    fs, path = filesystem(str(location))
    infos = fs.get_file_info(pyarrow.fs.FileSelector(path, allow_not_found=True))
    return sorted(
        posixpath.basename(i.path)
        for i in infos
        if i.type == pyarrow.fs.FileType.File and posixpath.basename(i.path).startswith(pattern_prefix)
    )


_MOVED: dict[str, str] = {}  # an experiment's first folder -> where this process runs it now


def _key(location: str | Path) -> str:
    text = str(location).rstrip("/")
    if is_uri(text):
        return text
    return _resolved(text) if text.startswith("/") else str(Path(text).expanduser().resolve())


@functools.lru_cache(maxsize=1024)
def _resolved(path: str) -> str:
    """An absolute path resolved once per process: the sweep's guards ask for their files at every step, and
    a resolve is a system call per part of the path."""
    return str(Path(path).resolve())


def moved(origin: str, now: str) -> None:
    """This process runs the experiment made in ``origin`` where it lies ``now`` (moved or copied): the parts
    of it Ray saved and restores (its scheduler, its callbacks) still name ``origin``, and write ``now``."""
    if _key(origin) != _key(now):
        _MOVED[_key(origin)] = now


@contextlib.contextmanager
def moved_while(origin: str | None, now: str) -> Iterator[None]:
    """``moved`` for the length of a block (a resume), forgotten after it: a later sweep in this process may be
    made in ``origin`` again."""
    if origin is None or _key(origin) == _key(now):
        yield
        return
    moved(origin, now)
    try:
        yield
    finally:
        _MOVED.pop(_key(origin), None)


@overload
def here(location: str) -> str: ...
@overload
def here(location: None) -> None: ...
def here(location: str | None) -> str | None:
    """Where the experiment a saved part names lies now (itself, unless this process runs it moved)."""
    if location is None:
        return None
    return _MOVED.get(_key(location), location)


def sidecar(location: str, name: str) -> Path:
    """A local file the driver keeps about an experiment, outside its folder.

    Not inside it: Ray stages the experiment folder's files on the driver and syncs that copy back over
    the folder (after a resume, a stale copy), so a file the driver writes there directly can be undone.
    """
    import os

    cache = os.environ.get("XDG_CACHE_HOME") or _home_cache(os.environ.get("HOME"))
    return _sidecar_in(cache, _key(here(str(location))), name)


@functools.lru_cache(maxsize=8)
def _home_cache(home: str | None) -> str:
    return str(Path.home() / ".cache")


@functools.lru_cache(maxsize=1024)
def _sidecar_in(cache: str, key: str, name: str) -> Path:
    """The sidecar's path, made once per process: the sweep's guards ask for it at every step."""
    import hashlib

    return Path(cache) / "tuner" / "sweeps" / f"{hashlib.sha1(key.encode()).hexdigest()[:16]}{name}"


def sidecar_of(state: dict[str, Any], name: str) -> str | None:
    """The sidecar a part of a sweep that Ray saves (a fate log, a recorder) writes: beside its experiment where
    that lies now. ``state`` is the part's ``__dict__`` (whatever else it holds, ``folder`` or ``path`` is text
    or None); parts pickled before they kept their folder hold the path itself."""
    if "folder" not in state:
        return state.get("path")
    return str(sidecar(state["folder"], name)) if state["folder"] else None


def write_atomically(path: str | Path, text: str | bytes) -> None:
    """Swap a local file in one step: a reader (or a crash) never meets half of it."""
    import os

    target = Path(path)
    scratch = target.with_name(f".{target.name}.partial")
    try:
        if isinstance(text, bytes):
            scratch.write_bytes(text)
        else:
            scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, target)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
