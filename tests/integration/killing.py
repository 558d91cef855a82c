"""A sweep's driver killed with SIGKILL, as a crash or an OOM killer would, for the tests of resuming one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable


def kill_9_when(args: list[str], ready: Callable[[], bool], timeout: float = 180) -> int:
    """Run ``tuner ARGS`` and kill -9 its driver once ``ready()``, then whatever its local Ray left running (its
    process group); the driver's pid. Fails when the sweep ends first or never gets there."""
    driver = subprocess.Popen([sys.executable, "-m", "tuner", *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        deadline = time.time() + timeout
        while not ready():
            assert driver.poll() is None, "the sweep ended before it could be killed"
            assert time.time() < deadline, "the sweep never reached the point to kill it at"
            time.sleep(0.1)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        try:
            os.killpg(driver.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return driver.pid
