"""A bucket's pyarrow filesystem that waits out an outage (tuner/storage_outage.py) in every call it makes.

tuner reads and writes an experiment in a bucket through it (tuner/storage.py), and so does Ray, which is
handed it in place of the filesystem it would make itself (tuner/ray_compat/patient_storage.py): the trial
folders, checkpoints and the experiment's state. Each call is tried again whole: a file is read into a local
spool, then handed over; a file written is spooled locally, then sent to the store in one go when closed, so
a write cut off by an outage is sent again from its start (an object is stored whole or not at all). The
filesystem is pickled into Ray's trials with its bound, so a trial's process waits as long as the driver.
"""

from __future__ import annotations

import tempfile
from typing import IO, TYPE_CHECKING, Any

import pyarrow
import pyarrow.fs

from tuner.storage_outage import patiently, timeout_s

if TYPE_CHECKING:
    from collections.abc import Callable

SPOOL_IN_MEMORY = 16 * 2**20  # bytes of a file held in memory before its spool goes to a local file
CHUNK = 8 * 2**20
REQUEST_TIMEOUT_S = 30.0  # seconds an S3 request may go without a byte (the SDK's own default is 3)


def patient(
    fs: pyarrow.fs.FileSystem,
    scheme: str,
    bound: float | None = None,
    handler: type[PatientHandler] | None = None,
) -> pyarrow.fs.FileSystem:
    """``fs`` waiting out outages for up to ``bound`` seconds (the storage timeout); a local filesystem, or
    one that already waits, is returned as it is. ``scheme`` (``s3``) names the storage in messages;
    ``handler``: a PatientHandler of the caller's own (tuner/ray_compat/patient_storage.py)."""
    if isinstance(fs, pyarrow.fs.LocalFileSystem) or (
        isinstance(fs, pyarrow.fs.PyFileSystem) and isinstance(fs.handler, PatientHandler)
    ):
        return fs
    kind = handler or PatientHandler
    return pyarrow.fs.PyFileSystem(kind(_slow_store_allowed(fs), scheme, bound or timeout_s()))


def write_made(fs: pyarrow.fs.FileSystem, path: str, make: Callable[[], bytes]) -> None:
    """Write ``path`` with what ``make()`` gives at each try: through a waiting filesystem, made again for
    each try while the storage is waited for; through another, made once."""
    handler = fs.handler if isinstance(fs, pyarrow.fs.PyFileSystem) else None
    if isinstance(handler, PatientHandler):
        handler.upload_made(path, make)
        return
    with fs.open_output_stream(path) as stream:
        stream.write(make())


def _slow_store_allowed(fs: pyarrow.fs.FileSystem) -> pyarrow.fs.FileSystem:
    """An S3 filesystem whose requests wait for a slow store longer than the SDK's 3 seconds (which would turn
    each slow answer into an outage), and that sends a file in the thread that closes it. Arrow closes the
    files it copies (``copy_files``: Ray's uploads) on its IO threads, which here run the upload, waits
    included; sent in the background, each would also wait for an IO thread, and with every IO thread so
    waiting, none is left: the copy hung at once."""
    if not isinstance(fs, pyarrow.fs.S3FileSystem):
        return fs
    rebuild, (options,) = fs.__reduce__()
    options = {**options, "background_writes": False}
    if options.get("request_timeout", -1) < 0:
        options["request_timeout"] = REQUEST_TIMEOUT_S
    return rebuild(options)


class PatientHandler(pyarrow.fs.FileSystemHandler):
    """Each call of ``inner`` through ``patiently``."""

    def __init__(self, inner: pyarrow.fs.FileSystem, scheme: str, bound: float) -> None:
        self.inner, self.scheme, self.bound = inner, scheme, bound

    def __reduce__(self) -> tuple[Callable[..., PatientHandler], tuple[pyarrow.fs.FileSystem, str, float]]:
        return type(self), (self.inner, self.scheme, self.bound)

    def _try(self, path: str, call: Callable[[], Any]) -> Any:
        bucket = path.lstrip("/").split("/", 1)[0]
        return patiently(f"{self.scheme}://{bucket}", call, self.bound)

    def _once(self, path: str, call: Callable[[], Any]) -> Any:
        """A call that changes the store, tried again: one that did its work before the connection was cut
        finds nothing left to do, which is no error."""
        first = [True]

        def attempt() -> Any:
            try:
                return call()
            except FileNotFoundError:
                if first[0]:
                    raise
                return None
            finally:
                first[0] = False

        return self._try(path, attempt)

    def get_type_name(self) -> str:
        return f"patient-{self.inner.type_name}"

    def equals(self, other: object) -> bool:
        return isinstance(other, PatientHandler) and self.inner.equals(other.inner)

    def normalize_path(self, path: str) -> str:
        return self.inner.normalize_path(path)

    def get_file_info(self, paths: list[str]) -> list[pyarrow.fs.FileInfo]:
        return self._try(paths[0] if paths else "", lambda: self.inner.get_file_info(paths))

    def get_file_info_selector(self, selector: pyarrow.fs.FileSelector) -> list[pyarrow.fs.FileInfo]:
        return self._try(selector.base_dir, lambda: self.inner.get_file_info(selector))

    def create_dir(self, path: str, recursive: bool) -> None:
        self._try(path, lambda: self.inner.create_dir(path, recursive=recursive))

    def delete_dir(self, path: str) -> None:
        self._once(path, lambda: self.inner.delete_dir(path))

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        self._once(path, lambda: self.inner.delete_dir_contents(path, missing_dir_ok=missing_dir_ok))

    def delete_root_dir_contents(self) -> None:
        self._try("", lambda: self.inner.delete_dir_contents("/", accept_root_dir=True))

    def delete_file(self, path: str) -> None:
        self._once(path, lambda: self.inner.delete_file(path))

    def move(self, src: str, dest: str) -> None:
        self._once(src, lambda: self.inner.move(src, dest))

    def copy_file(self, src: str, dest: str) -> None:
        self._try(src, lambda: self.inner.copy_file(src, dest))

    def open_input_stream(self, path: str) -> pyarrow.NativeFile:
        return pyarrow.PythonFile(self._download(path), mode="r")

    def open_input_file(self, path: str) -> pyarrow.NativeFile:
        return pyarrow.PythonFile(self._download(path), mode="r")

    def open_output_stream(self, path: str, metadata: dict[str, str] | None) -> pyarrow.NativeFile:
        return pyarrow.PythonFile(_SentWhenClosed(self, path, metadata), mode="w")

    def open_append_stream(self, path: str, metadata: dict[str, str] | None) -> pyarrow.NativeFile:
        raise pyarrow.ArrowNotImplementedError("appending to an object in a bucket")

    def _download(self, path: str) -> IO[bytes]:
        def attempt() -> IO[bytes]:
            spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
            try:
                with self.inner.open_input_stream(path) as stream:
                    while chunk := stream.read(CHUNK):
                        spool.write(chunk)
            except BaseException:
                spool.close()
                raise
            spool.seek(0)
            return spool

        return self._try(path, attempt)

    def upload(self, path: str, spool: IO[bytes], metadata: dict[str, str] | None) -> None:
        def attempt() -> None:
            spool.seek(0)
            with self.inner.open_output_stream(path, metadata=metadata) as stream:
                while chunk := spool.read(CHUNK):
                    stream.write(chunk)

        self._try(path, attempt)

    def upload_made(self, path: str, make: Callable[[], bytes]) -> None:
        """Send ``make()``'s bytes to ``path``, made anew for each try (module function ``write_made``)."""

        def attempt() -> None:
            with self.inner.open_output_stream(path) as stream:
                stream.write(make())

        self._try(path, attempt)


class _SentWhenClosed:
    """A file being written: spooled here, sent to the store whole when closed."""

    def __init__(self, handler: PatientHandler, path: str, metadata: dict[str, str] | None) -> None:
        self.handler, self.path, self.metadata = handler, path, metadata
        self.spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
        self.closed = False

    def write(self, data: bytes) -> int:
        return self.spool.write(data)

    def flush(self) -> None:
        pass

    def tell(self) -> int:
        return self.spool.tell()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.handler.upload(self.path, self.spool, self.metadata)
        finally:
            self.spool.close()
