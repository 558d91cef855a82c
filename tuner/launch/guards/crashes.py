"""A trial whose process dies of a signal says which, instead of Ray's list of possible causes.

Ray reports every dead worker the same way ("the actor died unexpectedly ... (1) the OOM killer, (2) ray
stop --force, (3) SIGSEGV ..."). In the trial's process, Python's fault handler writes the stack of a
fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL) to ``crash.txt`` in the trial's folder; on the
driver, ``CrashNamer`` reads it when Tune reports the death and records the trial's fate: killed by that
signal in epoch k. A process that left no stack was killed by SIGKILL, which nothing can catch: on this
machine, the kernel's out-of-memory kill counter says whether the kernel did it. A bucket storage keeps
the crash file on the worker, so there the fate can only say the process died without a Python error.
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ray.tune import Callback

from tuner.folder.fates import DecisionLog
from tuner.folder.names import CRASH_FILE
from tuner.ray_compat.messages import process_died
from tuner.storage import here

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

log = logging.getLogger(__name__)
RUN_MARKER = "--- a run of this trial started; a fatal signal's stack follows when it died of one ---\n"
# Python's fault handler names the signal in its first line: "Fatal Python error: Segmentation fault".
_SIGNALS = {
    "Segmentation fault": ("SIGSEGV", "segmentation fault"),
    "Bus error": ("SIGBUS", "bus error"),
    "Floating-point exception": ("SIGFPE", "arithmetic fault"),
    "Aborted": ("SIGABRT", "abort"),
    "Illegal instruction": ("SIGILL", "illegal instruction"),
}
OOM_EVENTS = "/sys/fs/cgroup/memory.events"


@contextlib.contextmanager
def fatal_signals_to(path: Path | None) -> Iterator[None]:
    """Each run of the trial opens a section of the file; a run that ends in Python (done, or an exception)
    takes its section back, so what stays is the runs that died, and the last one is the newest death."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    offset = path.stat().st_size if path.exists() else 0
    with open(path, "a", encoding="utf-8") as stream:
        stream.write(RUN_MARKER)
        stream.flush()
        faulthandler.enable(file=stream, all_threads=True)
        try:
            yield
        finally:
            faulthandler.enable(file=sys.stderr, all_threads=True)  # as Ray's worker had it
    with contextlib.suppress(OSError):
        os.truncate(path, offset)
        if offset == 0:
            path.unlink()


def tidy(folder: str | None) -> None:
    """Remove the crash files of runs that did not die of a signal: a trial whose process Tune ended before its
    function unwound (stopped at its last epoch, or open when the sweep ended) never took its section back, and
    an empty record would only puzzle whoever opens the folder. ``CrashNamer`` removes a completed trial's as it
    completes, so at a sweep's end only the open trials' are left to remove."""
    if folder is None:
        return
    for path in Path(folder).glob(f"*/{CRASH_FILE}"):
        _remove_if_empty(path)


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        if "Fatal Python error" not in path.read_text(encoding="utf-8", errors="replace"):
            path.unlink()


def death(error_text: str, crash_text: str | None, oom_kills: int, epoch: int, crash_file: str) -> str | None:
    """The fate of a trial whose process died, or None when its error is not a death."""
    if not process_died(error_text):
        return None
    where = f"in epoch {epoch + 1}"
    if crash_text is None:  # the file is on the worker's node
        return (
            f"died: its process ended without a Python error {where} (a signal such as SIGSEGV, or SIGKILL "
            "from the kernel's out-of-memory killer; the worker's log has the rest)"
        )
    last_run = crash_text.rpartition(RUN_MARKER)[2]
    fatal = [line for line in last_run.splitlines() if line.startswith("Fatal Python error: ")]
    if fatal:
        name = fatal[-1].removeprefix("Fatal Python error: ").strip()
        signal, what = _SIGNALS.get(name, (name, name.lower()))
        return f"died: killed by {signal} ({what}) {where}; the Python stack is in {crash_file}"
    if oom_kills > 0:
        return (
            f"died: killed by SIGKILL from the kernel's out-of-memory killer {where}; use a smaller batch or "
            "fewer trials at once"
        )
    return f"died: killed by SIGKILL {where} (most often the kernel's out-of-memory killer, or a kill -9)"


def oom_kill_count() -> int | None:
    """Processes the kernel's out-of-memory killer has killed in this machine's (or container's) cgroup."""
    try:
        for line in Path(OOM_EVENTS).read_text(encoding="utf-8").splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        return None
    return None


def last_failure(error_file: str | None) -> str:
    """The last failure Ray appended to a trial's error file."""
    if not error_file:
        return ""
    try:
        text = Path(error_file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return last_failure_of(text)


def last_failure_of(text: str) -> str:
    """The last of the failures in an error file's text (Ray numbers them ``Failure # n``)."""
    return text.rpartition("Failure # ")[2]


class CrashNamer(Callback):
    """Records the fate of each trial whose process died, as Tune reports it (a retry included)."""

    def __init__(self, folder: str | None, fate_log: DecisionLog | None) -> None:
        self.folder = folder  # the experiment as a local path; None for a bucket
        self.fate_log = fate_log
        self._oom_kills = oom_kill_count()

    def on_trial_recover(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        """A failure Tune retries (``--max-failures``) is said as it happens, and kept in the trial's fate: the
        sweep and every review said nothing of it."""
        died = self._name(trial)
        from tuner.folder.fates import RETRIED
        from tuner.ray_compat.messages import in_words

        lines = [line for line in last_failure(trial.error_file).splitlines() if line.strip()]
        why = in_words(lines[-1]) if lines else "an error"
        epoch = int((trial.last_result or {}).get("training_iteration") or 0)
        if not died and self.fate_log is not None:  # a death is kept in its own words already
            self.fate_log.record(
                trial.trial_id, RETRIED, f"failure {trial.num_failures}, at epoch {epoch} ({why})"
            )
        log.warning(
            "trial %s failed after epoch %d (%s); running it again, failure %d of the %d --max-failures allows",
            trial.trial_id,
            epoch,
            why,
            trial.num_failures,
            trial.max_failures,
        )

    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        self._name(trial)

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        """A trial stopped at its last epoch leaves its run's section open: removed now, one file, rather than
        thousands at the sweep's end (a Ctrl-C at 8,000 trials spent a second there)."""
        if self.folder is not None and trial.relative_logdir:
            _remove_if_empty(Path(here(self.folder), trial.relative_logdir, CRASH_FILE))

    def _name(self, trial: Trial) -> bool:
        """Records a trial whose process died, in words; whether it did."""
        from tuner.folder.fates import DIED

        crash_text = crash_file = None
        if self.folder is not None and trial.relative_logdir:
            path = Path(here(self.folder), trial.relative_logdir, CRASH_FILE)
            crash_file = str(path)
            with contextlib.suppress(OSError):
                crash_text = path.read_text(encoding="utf-8", errors="replace")
        now = oom_kill_count()
        oom_kills = (now - self._oom_kills) if now is not None and self._oom_kills is not None else 0
        self._oom_kills = now
        epoch = int((trial.last_result or {}).get("training_iteration") or 0)
        if self.folder is None:
            crash_text = None
        elif crash_text is None:
            crash_text = ""  # the file is only kept when a signal wrote to it
        text = death(last_failure(trial.error_file), crash_text, oom_kills, epoch, crash_file or CRASH_FILE)
        if text is not None and self.fate_log is not None:
            self.fate_log.record(trial.trial_id, DIED, text)
        return text is not None
