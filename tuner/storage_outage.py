"""A storage that cannot be reached for a while (a store restarting, a network blip, throttling) is waited out.

Every read and write tuner and Ray make to a bucket goes through ``patiently``: an error that says the store
could not be reached (no connection, a connection cut, a timeout, a 503) is tried again with a growing pause,
for up to the storage timeout (``--storage-timeout``, ``TUNER_STORAGE_TIMEOUT``, five minutes unless set).
Past it, one error names the storage and what it said (``StorageUnreachable``, exit code 4), and the sweep
stops as it does on a full disk: resumably, its last saved state whole (an object is written whole or not at
all). Other errors (a missing file, access denied) are never waited on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from tuner.durations import format_seconds, parse_duration
from tuner.errors import StorageUnreachable

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_TIMEOUT_S = 300.0
ENV = "TUNER_STORAGE_TIMEOUT"
FIRST_PAUSE_S, LONGEST_PAUSE_S = 0.5, 8.0
NOTICE_AFTER_S = 5.0  # a wait shorter than this passes unsaid
# What an error from the store's client says when the store could not be reached (curl's and the AWS and
# Google SDKs' words), rather than that it answered no.
_UNREACHABLE = (
    "NETWORK_CONNECTION",
    "curlCode",
    "Could not connect",
    "Couldn't connect",
    "Connection refused",
    "Connection reset",
    "Connection aborted",
    "Broken pipe",
    "Timeout was reached",
    "timed out",
    "Could not resolve",
    "SERVICE_UNAVAILABLE",
    "Service Unavailable",
    "SLOW_DOWN",
    "SlowDown",
    "THROTTLING",
    "RequestTimeout",
    "INTERNAL_FAILURE",
    "InternalError",
)
# the words of StorageUnreachable, as a trial's error file or a log holds them
_GAVE_UP = re.compile(r"the storage (\S+) could not be reached for (.+?) \((.*?)\)(?=$|[;:\n])", re.M)

_timeout_s: float | None = None  # set for this process by a sweep's settings
_given_up: dict[str, str] = {}  # storage -> why this process gave up waiting for it (until it answers again)
_outages: dict[str, float] = {}  # storage -> since when this process has found it unreachable
_told: set[str] = set()  # the storages whose outage this process has told of
_lock = threading.Lock()


def set_timeout(seconds: float | None) -> None:
    """The bound for this process (a sweep's ``storage_timeout``); None: the environment's or the default."""
    global _timeout_s
    _timeout_s = seconds


def timeout_s() -> float:
    """How long a storage that cannot be reached is waited for: as set, else TUNER_STORAGE_TIMEOUT, else 5 min."""
    if _timeout_s is not None:
        return _timeout_s
    text = os.environ.get(ENV)
    if not text:
        return DEFAULT_TIMEOUT_S
    return parse_timeout(text, f"environment {ENV}: storage_timeout")  # as the sweep's settings say it


def parse_timeout(value: str | float, where: str) -> float:
    """The storage timeout in seconds from ``90``, ``90s`` or ``5m``, wherever it is given (a flag, the
    environment, a sweep file, ``tuner.sweep``): one reading for the sweep and for a review or resume."""
    return parse_duration(value, where)


def start_afresh() -> None:
    """Forget what this process met of storages before (a sweep starts): an earlier sweep's outage, given up
    on in the same process (a notebook), neither stops this one nor spares its storage the wait."""
    with _lock:
        _given_up.clear()
        _outages.clear()
        _told.clear()


def is_unreachable(exc: BaseException) -> bool:
    """Whether an error says the store could not be reached (worth waiting for), not that it refused."""
    if isinstance(exc, StorageUnreachable):
        return False  # already waited for
    if not isinstance(exc, OSError) or isinstance(
        exc, (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError)
    ):
        return False
    text = str(exc)
    return any(mark in text for mark in _UNREACHABLE)


def cause(exc: BaseException) -> str:
    """The store's own words, short: the SDK's error, without the request's ids and curl's details."""
    text = " ".join(str(exc).split())
    found = re.search(r"AWS Error .*", text)
    text = found.group(0) if found else text
    text = re.split(r"; Details:| \(Request ID", text)[0]
    return text[:200].rstrip(" ;,.")


def unreachable_error(storage: str, waited: float, exc: BaseException) -> StorageUnreachable:
    return StorageUnreachable(
        f"the storage {storage} could not be reached for {_seconds(waited)} ({cause(exc)})"
    )


def gave_up(storage: str) -> str | None:
    """Why this process gave up waiting for ``storage`` (``s3://bucket``: StorageUnreachable's words), while it
    still does; None for a storage it has not given up on."""
    with _lock:
        return _given_up.get(storage)


def waiting() -> bool:
    """Whether this process is waiting for a storage now (an outage began and it has not answered since)."""
    with _lock:
        return bool(_outages)


def gave_up_in(text: str) -> str | None:
    """StorageUnreachable's words where ``text`` (a trial's error, a log line) holds them; None otherwise."""
    found = _GAVE_UP.search(text)
    return None if found is None else found.group(0)


def patiently(storage: str, call: Callable[[], T], bound: float | None = None, answers: bool = True) -> T:
    """``call()``, tried again while ``storage`` cannot be reached, for up to ``bound`` seconds (the storage
    timeout); then StorageUnreachable. A storage this process has given up on is tried once, not waited for
    again, until it answers (``answers``: a call that succeeds only when the storage answered it). An outage
    is told once a process, once it has kept a call waiting NOTICE_AFTER_S: a blip passes unsaid."""
    bound = timeout_s() if bound is None else bound
    start = time.monotonic()
    pause = FIRST_PAUSE_S
    while True:
        try:
            result = call()
        except OSError as exc:
            if not is_unreachable(exc):
                raise
            waited = time.monotonic() - start
            with _lock:
                given_up = storage in _given_up
                _outages.setdefault(storage, time.monotonic())
            if given_up or waited >= bound:
                error = unreachable_error(storage, waited if not given_up else bound, exc)
                with _lock:
                    _given_up.setdefault(storage, str(error))
                raise error from exc
            with _lock:
                tell = waited >= NOTICE_AFTER_S and storage not in _told
                if tell:
                    _told.add(storage)
            if tell:
                log.warning(
                    "the storage %s cannot be reached (%s); waiting for it up to %s",
                    storage,
                    cause(exc),
                    _seconds(bound),
                )
            time.sleep(min(pause, bound - waited))
            pause = min(pause * 2, LONGEST_PAUSE_S)
            continue
        if answers and storage in _outages:
            with _lock:
                since: float | None = _outages.pop(storage, None)
                _given_up.pop(storage, None)
                told = storage in _told
                _told.discard(storage)
            if since is not None and told:
                log.warning(
                    "the storage %s answers again, after %s", storage, _seconds(time.monotonic() - since)
                )
        return result


@contextlib.contextmanager
def bounded(seconds: float | None) -> Iterator[None]:
    """``set_timeout`` for the length of a block (a command), the earlier bound back after it."""
    global _timeout_s
    before = _timeout_s
    _timeout_s = seconds if seconds is not None else before
    try:
        yield
    finally:
        _timeout_s = before


def _seconds(seconds: float) -> str:
    return format_seconds(seconds)


def how_to_continue(reason: str) -> str:
    """The words before ``continue with: tuner resume …`` after a sweep stopped by its storage."""
    return "once it can be reached again," if gave_up_in(reason) else "free space, then"


def for_resume(saved: float) -> float:
    """The bound a resumed sweep waits by: TUNER_STORAGE_TIMEOUT when set, else the one it was run with."""
    text = os.environ.get(ENV)
    return parse_timeout(text, f"environment {ENV}: storage_timeout") if text else saved
