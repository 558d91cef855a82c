"""One writer per experiment: ``tuner sweep`` and ``tuner resume`` claim it; a second writer is refused.

Two processes on one experiment (a retried job, a second terminal) both restore Ray's state and write
trials and checkpoints over each other. The claim is ``.tuner-claim`` in the experiment folder, naming the
host, pid, start time and command of its holder; Ray never copies it (it syncs only its own ``.json`` and
``.pkl`` files), and review commands never need it.

- A folder: the claim is an exclusive ``flock`` on that file, held for the run. The kernel releases it when
  the holder dies, however it dies (kill -9 included), so a claim left behind is recognised at once and
  taken over with a notice. Locks on network filesystems follow the filesystem's own locking.
- A bucket (``s3://``, ``gs://``) has no locks: the claim is an object with a lease that its holder renews
  every ``LEASE_S / 3`` seconds. A claim whose lease ran out, or whose holder is gone from this host, is
  taken over with a notice. Two claimants racing for a free one both write and read back; the one whose
  claim is not there is refused.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TypedDict, cast

from tuner import storage
from tuner.errors import UsageError
from tuner.folder.names import CLAIM_FILE

log = logging.getLogger(__name__)
LEASE_S = 60.0
SETTLE_S = 1.0  # a bucket claimant waits this long before reading its claim back


class Holder(TypedDict, total=False):
    """The claim file: who holds the experiment (a bucket's claim adds its lease). Read back from a file, so
    every key may be missing."""

    host: str
    pid: int
    started: float
    command: str
    token: str
    renewed: float  # a bucket's lease: when it was last renewed, for how long
    lease_s: float


def _holder(command: str) -> Holder:
    return {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": time.time(),
        "command": command,
        "token": uuid.uuid4().hex,
    }


def _since(started: float | None) -> str:
    if not started:
        return "an unknown time"
    when = dt.datetime.fromtimestamp(started)
    return when.strftime("%H:%M" if when.date() == dt.date.today() else "%Y-%m-%d %H:%M")


def _name(folder: str) -> str:
    return str(folder).rstrip("/").rsplit("/", 1)[-1]


def _busy(folder: str, holder: Holder) -> UsageError:
    return UsageError(
        f"{_name(folder)} is being run by {describe_holder(holder)}; wait for it, or stop it first"
    )


def _left_behind(folder: str, holder: Holder, why: str) -> None:
    log.warning(
        "%s was left claimed by pid %s on %s since %s, %s; taking it over",
        _name(folder),
        holder.get("pid", "?"),
        holder.get("host", "?"),
        _since(holder.get("started")),
        why,
    )


def _parse(text: str | None) -> Holder | None:
    try:
        holder = json.loads(text) if text else None
    except ValueError:
        return None
    # a mapping in the claim file is a holder as _holder wrote it (its keys are read with .get)
    return cast(Holder, holder) if isinstance(holder, dict) else None


def _gone_from_this_host(holder: Holder) -> bool:
    if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
        return False
    try:
        os.kill(holder["pid"], 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class FolderClaim:
    """An exclusive lock on ``FOLDER/.tuner-claim`` for the length of a run."""

    def __init__(self, folder: str, command: str) -> None:
        self.folder, self.command = folder, command
        self.path = Path(folder) / CLAIM_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        Path(self.folder).mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _parse(self.path.read_text(encoding="utf-8", errors="replace")) or {}
                os.close(fd)
                raise _busy(self.folder, holder) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed the file as we opened it: lock the new one
        left = _parse(os.pread(fd, 65536, 0).decode("utf-8", errors="replace"))
        if left:
            _left_behind(self.folder, left, "which is no longer running")
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(_holder(self.command)).encode("utf-8"), 0)
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()  # unlinked while locked: a waiting claimant sees the inode change and retries
        os.close(self._fd)
        self._fd = None


class LeaseClaim:
    """A claim object in a bucket, renewed by a background thread while the run lasts."""

    def __init__(self, folder: str, command: str, lease_s: float = LEASE_S) -> None:
        self.folder, self.command, self.lease_s = folder, command, lease_s
        self.holder = _holder(command)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> Holder | None:
        return _parse(storage.read_text(self.folder, CLAIM_FILE))

    def _write(self) -> None:
        """Write the claim stamped with the time of the try that lands: a write that waited out an outage longer
        than the lease stamped before it would land expired, for another process to take from a live sweep."""

        def stamped() -> str:
            self.holder["renewed"] = time.time()
            self.holder["lease_s"] = self.lease_s
            return json.dumps(self.holder)

        storage.write_made(self.folder, CLAIM_FILE, stamped)

    def acquire(self) -> None:
        storage.prepare(self.folder)
        current = self._read()
        if current:
            expired = time.time() - float(current.get("renewed") or 0) > float(
                current.get("lease_s") or self.lease_s
            )
            if not expired and not _gone_from_this_host(current):
                raise _busy(self.folder, current)
            _left_behind(
                self.folder, current, "whose lease ran out" if expired else "which is no longer running"
            )
        self._write()
        time.sleep(SETTLE_S)
        if (self._read() or {}).get("token") != self.holder["token"]:
            raise _busy(self.folder, self._read() or {})
        self._thread = threading.Thread(target=self._renew, name="tuner-claim", daemon=True)
        self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                self._write()
            except Exception:  # noqa: BLE001 - a missed renewal is retried; the lease allows two
                log.debug("could not renew the claim on %s", self.folder, exc_info=True)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(Exception):
            if (self._read() or {}).get("token") == self.holder["token"]:
                storage.remove(self.folder, CLAIM_FILE)


def held_elsewhere(folder: str) -> bool:
    """Whether another live process holds the experiment now (a review's question: are its RUNNING trials
    running?). Reads the claim and never takes it; a holder on another host is trusted while its claim stands."""
    return holder_elsewhere(folder) is not None


def holder_elsewhere(folder: str) -> Holder | None:
    """The live process, other than this one, that holds the experiment now; None when none does."""
    holder = _parse(storage.read_text(folder, CLAIM_FILE)) if storage.exists(folder, CLAIM_FILE) else None
    if not holder:
        return None
    if holder.get("host") == socket.gethostname() and holder.get("pid") == os.getpid():
        return None
    if "lease_s" in holder and time.time() - float(holder.get("renewed") or 0) > float(holder["lease_s"]):
        return None
    return None if _gone_from_this_host(holder) else holder


def describe_holder(holder: Holder) -> str:
    """``pid 4242 on host-a since 10:02 (tuner resume)``: who holds an experiment, for messages."""
    return (
        f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} since {_since(holder.get('started'))} "
        f"({holder.get('command', 'tuner')})"
    )


@contextlib.contextmanager
def claimed(folder: str, command: str) -> Iterator[FolderClaim | LeaseClaim]:
    """Hold ``folder`` for one writer while the block runs; a one-line error (exit 2) when another holds it."""
    local = storage.local_path(folder)
    claim: FolderClaim | LeaseClaim = (
        FolderClaim(local, command) if local is not None else LeaseClaim(folder, command)
    )
    claim.acquire()
    try:
        yield claim
    finally:
        claim.release()
