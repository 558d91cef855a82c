"""Each trial's output in files of its own, so the terminal keeps the live table.

A trainable that prints a line per batch (a progress bar, a print in the loop) would otherwise bury the
table under tens of thousands of lines and keep none of them. For the length of a trial's run, the
process's standard output and error (file descriptors 1 and 2, so C extensions, logging handlers and
child processes such as DDP ranks are caught too) go to ``stdout.log`` and ``stderr.log`` in the trial's
folder, appended across resumes. ``echo`` (``--trial-output``) also passes every line on to where it went
before, which Ray forwards to the terminal.

A reused Ray actor runs one trial after another, and a stopped function trainable's thread can unwind
after the next trial began; so the process's own streams are saved by the run that takes them first, and
given back only by a run that still holds them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from tuner.folder.names import STDERR_FILE, STDOUT_FILE

_lock = threading.Lock()
# the process's own fd 1 and 2 and sys.stdout/err while a run holds them
_process: tuple[int, int, TextIO, TextIO] | None = None
_holder: object | None = None  # the run whose files fd 1 and 2 point at now


@contextlib.contextmanager
def captured(folder: Path | None, echo: bool = False) -> Iterator[None]:
    """Standard output and error into ``folder``'s ``stdout.log`` and ``stderr.log`` while the block runs
    (nothing changes when ``folder`` is None: outside a trial, or no local folder to write to)."""
    if folder is None:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    token = object()
    pumps: list[threading.Thread] = []
    with (
        open(folder / STDOUT_FILE, "ab", buffering=0) as out,
        open(folder / STDERR_FILE, "ab", buffering=0) as err,
    ):
        try:
            targets = [out.fileno(), err.fileno()]
            if echo:
                targets = [
                    _tee(f, original, pumps) for f, original in zip((out, err), _terminal(), strict=True)
                ]
            _take(token, targets)
            for fd in targets if echo else ():
                os.close(fd)  # fd 1 and 2 now hold the pipes' write ends
            yield
        finally:
            _give_back(token)
            for pump in pumps:
                pump.join(timeout=5)


def _terminal() -> tuple[int, int]:
    """Copies of where fd 1 and 2 went before any trial took them (for ``echo``; the pump closes them)."""
    with _lock:
        fds = _process[:2] if _process is not None else (1, 2)
        return os.dup(fds[0]), os.dup(fds[1])


def _take(token: object, targets: list[int]) -> None:
    """fd 1 and 2 onto ``targets``, and Python's streams onto fd 1 and 2, written line by line (a trial that
    dies keeps its last lines; a stream someone replaced, as a notebook or a test runner does, is caught too).
    The process's own are saved by the first run to take them, and given back by the last."""
    global _holder, _process
    with _lock:
        _flush()
        if _process is None:
            _process = (os.dup(1), os.dup(2), sys.stdout, sys.stderr)
        os.dup2(targets[0], 1)
        os.dup2(targets[1], 2)
        sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
        _holder = token


def _give_back(token: object) -> None:
    global _holder, _process
    with _lock:
        if _holder is not token or _process is None:
            return  # a later run holds them now (or none was ever taken)
        _flush()
        os.dup2(_process[0], 1)
        os.dup2(_process[1], 2)
        os.close(_process[0])
        os.close(_process[1])
        sys.stdout, sys.stderr = _process[2], _process[3]
        _holder, _process = None, None


def _tee(file: BinaryIO, original: int, pumps: list[threading.Thread]) -> int:
    """A pipe whose every byte goes to ``file`` and to the ``original`` descriptor; returns its write end."""
    read_end, write_end = os.pipe()

    def pump() -> None:
        with os.fdopen(read_end, "rb", buffering=0) as source:
            while chunk := source.read(65536):
                file.write(chunk)
                with contextlib.suppress(OSError):
                    os.write(original, chunk)
        os.close(original)

    thread = threading.Thread(target=pump, name="tuner-trial-output", daemon=True)
    thread.start()
    pumps.append(thread)
    return write_end


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
