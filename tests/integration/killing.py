"""A sweep's driver killed with SIGKILL, as a crash or an OOM killer would, for the tests of resuming one."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (each thread's ``children`` in /proc: Ray starts some from threads)."""
    out, todo = set(), [pid]
    while todo:
        for listing in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                for child in map(int, listing.read_text().split()):
                    if child not in out:
                        out.add(child)
                        todo.append(child)
    return out


def _gone(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # dead, waiting for a parent to reap it


def kill_9_when(args: list[str], ready: Callable[[], bool], timeout: float = 180) -> int:
    """Run ``tuner ARGS`` and kill -9 its driver once ``ready()``, then whatever its local Ray left running (its
    process group, and the trial workers the Ray started in groups of their own, which would otherwise go on
    writing into the experiment for a while); the driver's pid, once all of them are gone. Fails when the sweep
    ends first or never gets there."""
    driver = subprocess.Popen([sys.executable, "-m", "tuner", *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    below: set[int] = set()
    try:
        deadline = time.time() + timeout
        while not ready():
            assert driver.poll() is None, "the sweep ended before it could be killed"
            assert time.time() < deadline, "the sweep never reached the point to kill it at"
            time.sleep(0.1)
        below = _descendants(driver.pid)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        try:
            os.killpg(driver.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.time() + 30
        while not all(_gone(pid) for pid in below) and time.time() < deadline:
            time.sleep(0.05)
    return driver.pid
