"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

4. Terminal noise (Ray 2.60): every local start warns that token authentication is on and how to turn it
off; tuner keeps it on, so the line (an invitation to weaken security) is dropped. Each failed trial's
traceback is logged whole, Ray's frames first, once per trial; tuner reports the user's own frames
once at the end, with the error file inside the experiment folder. On a stop signal Ray advises
``Tuner.restore(...)``; tuner prints its own ``tuner resume`` command instead. A trial that a budget or a
signal ended before its first report makes Ray warn at the end that it found no results for it; that
warning is dropped (any other trial it lists keeps it). When the disk fills, Ray logs a traceback for each
state save and each trial's refused write; tuner says it in one line (tuner/launch/guards/disk.py), so those go. Under
PBT, Ray warns of results "not found" for a trial restarted from a checkpoint before any were synced, and
advises reuse_actors where a class trainable has no reset_config: both dropped.

11. A worker's crash, forwarded (Ray 2.60): a trial process killed by a signal prints the C++ core's crash
report (``*** SIGSEGV received at time=…``, ``PC: @ 0x…``, its stack addresses, and the same again through
``logging.cc``), the raylet adds a paragraph that "a worker died or was killed" (guessing at OOM), and a
worker stopped at shutdown can print Python's "Exception ignored in" traceback of Ray's own
``sigterm_handler``. The driver's log forwarder (the "ray_print_logs" handler of
``global_worker_stdstream_dispatcher``) and the raylet's error listener (through ``print_to_stdstream``)
print them all. tuner names each death itself (tuner/launch/guards/crashes.py,
with the trial's Python stack in its crash.txt), so ``quiet_worker_crashes`` drops those lines from the
forwarder and passes every other line on.

12. The older ``sample_from(lambda spec: spec.config.x)`` form (Ray 2.60): Ray warns that it is deprecated
at every draw. The search plan draws such a function a thousand times per branch to probe it, so
``spec_form_warnings_off`` holds that one logger back while tuner probes, and ``spec_form_warning_once``
lets each of its messages through once a process: the form of Ray's own docs flooded the terminal with 400
copies of the advice before the plan (the plan's other draws, then one per trial).
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypedDict

from tuner.ray_compat.logfilters import install_filter

TOKEN_LOGGER = "ray._private.authentication.authentication_token_setup"
TOKEN_WARNING = "Token authentication is enabled for this Ray cluster"
TRIAL_LOGGER = "ray.tune.execution.tune_controller"
TRIAL_FAILURE = "Trial task failed for trial"
SWEEP_LOGGER = "ray.tune.tune"
SWEEP_FAILURES = "Trials did not complete"
# Ray's words on a stop signal, which tuner says itself (tuner/launch/guards/signals.py) with the tuner resume command.
INTERRUPT_NOTICES = ("Stop signal received", "Experiment has been interrupted")
# At the end of fit Ray reads every trial's results again; a trial that a budget or a stop signal ended
# before its first report has none, and Ray warns about it. tuner reads results itself (tuner/experiment.py).
ANALYSIS_LOGGER = "ray.tune.analysis.experiment_analysis"
NO_METRICS = "Failed to fetch metrics for"
NEVER_REPORTED = "both result.json and progress.csv were not found"


class LogBatch(TypedDict, total=False):
    """A batch of a worker's output lines as Ray's log monitor publishes it."""

    ip: str
    pid: int | str  # a worker's process id, or "raylet", "autoscaler"
    job: str
    is_err: bool
    lines: list[str]
    actor_name: str
    task_name: str


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str | tuple[str, ...]) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefix)


class _DropTokenWarning(_DropMessage):
    def __init__(self) -> None:
        super().__init__(TOKEN_WARNING)


class _DropTrialTracebacks(_DropMessage):
    def __init__(self) -> None:
        super().__init__(TRIAL_FAILURE)


class _DropFailureList(_DropMessage):
    def __init__(self) -> None:
        super().__init__(SWEEP_FAILURES)


class _DropInterruptNotices(_DropMessage):
    def __init__(self) -> None:
        super().__init__(INTERRUPT_NOTICES)


class _DropNeverReported(logging.Filter):
    """Ray's warning about trials with no results, when every one it lists simply never reported."""

    def filter(self, record: logging.LogRecord) -> bool:
        lines = record.getMessage().splitlines()
        if not lines or not lines[0].startswith(NO_METRICS):
            return True
        return not all(NEVER_REPORTED in line for line in lines[1:])


STATE_LOGGER = "ray.tune.execution.experiment_state"  # "Saving experiment state to storage at ... failed"
# A trial PBT restarts from a checkpoint makes Ray look for its results in the storage before they were ever
# synced there ("Remote file not found"), and a class trainable PBT cannot reuse (no reset_config) makes Ray
# advise reuse_actors, which tuner already sets wherever Ray can use it (docs/trainables.md: the forms).
RESULTS_LOGGER, NOT_SYNCED_YET = "ray.tune.logger.logger", "Remote file not found"
PBT_REUSE_ADVICE = "Consider boosting PBT performance"
WORKER_LOGGER = "ray._private.worker"  # "Unhandled error (suppress with ...)": a trial's error nobody awaited
REFUSED_WRITE = ("No space left on device", "Disk quota exceeded")


class _DropNotSyncedYet(_DropMessage):
    def __init__(self) -> None:
        super().__init__(NOT_SYNCED_YET)


class _DropRefusedWrites(logging.Filter):
    """Ray's tracebacks for a write the storage refused (a full disk): tuner names the full storage itself, in
    one line with the resume command (tuner/launch/guards/disk.py); Ray's other errors pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" {record.exc_info[1]}"
        return not any(mark in text for mark in REFUSED_WRITE)


def quiet_terminal() -> None:
    """Drop Ray's token-auth opt-out advice, its per-trial failure tracebacks, its own stop-signal notices,
    its warning about trials that never reported and its tracebacks of writes a full disk refused (all
    logged in the driver)."""
    install_filter(TOKEN_LOGGER, _DropTokenWarning())
    spec_form_warning_once()
    install_filter(TRIAL_LOGGER, _DropTrialTracebacks())
    install_filter(SWEEP_LOGGER, _DropFailureList())
    install_filter(SWEEP_LOGGER, _DropInterruptNotices())
    install_filter(ANALYSIS_LOGGER, _DropNeverReported())
    install_filter(STATE_LOGGER, _DropRefusedWrites())
    install_filter(WORKER_LOGGER, _DropRefusedWrites())
    install_filter(RESULTS_LOGGER, _DropNotSyncedYet())
    warnings.filterwarnings("ignore", message=PBT_REUSE_ADVICE, category=UserWarning)


FORWARDER = "ray_print_logs"
_CRASH_LINE = re.compile(
    r"(\*\*\* SIG[A-Z]+ received at time=|PC: @ +0x[0-9a-f]+|(^|logging\.cc:\d+:)\s*@ +0x[0-9a-f]+ |"
    r"A worker died or was killed while executing a task by an unexpected system error)"
)


def crash_noise(lines: list[str]) -> list[str]:
    """``lines`` without the crash report of a signal-killed worker, the raylet's guess about it, and the
    traceback of Ray's SIGTERM handler in a worker stopped at shutdown."""
    kept, held = crash_noise_so_far(lines)
    return kept + held


def crash_noise_so_far(lines: list[str], held: list[str] | None = None) -> tuple[list[str], list[str]]:
    """``crash_noise`` over a stream that arrives in batches: ``held`` is an "Exception ignored in" traceback a
    batch ended inside (whose it is shows only in the next batch); returns what to print now and what to hold."""
    kept: list[str] = []
    held = list(held or [])
    skipping = bool(held)
    for line in lines:
        if line.startswith("Exception ignored in"):
            skipping = True  # held until we know whose traceback it is
            held = [line]
            continue
        if skipping:
            held.append(line)
            ends = line.strip() and not line.startswith((" ", "Traceback"))  # a blank line is still inside it
            if line.startswith(("SystemExit", "KeyboardInterrupt")) or ends:
                skipping = False
                if not any("sigterm_handler" in h for h in held):
                    kept.extend(held)
                held = []
            continue
        if not _CRASH_LINE.search(line):
            kept.append(line)
    if skipping and any("sigterm_handler" in h for h in held):
        return kept, []  # its handler already shows: the rest of it is noise too
    return kept, held if skipping else []


def _filtering(printer: Callable[..., None]) -> Callable[..., None]:
    held: dict[int | str | None, list[str]] = {}  # per worker: a traceback a batch ended inside

    # the printer's other arguments (Ray's, which differ by printer), passed on untouched
    def filtered(data: LogBatch, *args: Any, **kwargs: Any) -> None:
        source = data.get("pid")
        lines, held[source] = crash_noise_so_far(list(data.get("lines") or []), held.pop(source, None))
        if not held[source]:
            del held[source]
        if lines:
            printer({**data, "lines": lines}, *args, **kwargs)

    vars(filtered)["_tuner_filtered"] = True  # a mark on the function: installed once
    return filtered


def quiet_worker_crashes() -> bool:
    """Filter the driver's log forwarder and its printer of the raylet's error messages (after ``ray.init``);
    False when Ray forwards no logs here."""
    import ray._private.worker as worker
    from ray._private.ray_logging import global_worker_stdstream_dispatcher as dispatcher

    if not getattr(worker.print_to_stdstream, "_tuner_filtered", False):
        # the raylet's messages go through it
        worker.print_to_stdstream = _filtering(worker.print_to_stdstream)
    with dispatcher._lock:
        for i, (name, handler) in enumerate(dispatcher.handlers):
            if name != FORWARDER or getattr(handler, "_tuner_filtered", False):
                continue

            dispatcher.handlers[i] = (name, _filtering(handler))
            return True
    return False


SAMPLE_LOGGER = "ray.tune.search.sample"


class _OnceEach(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


def spec_form_warning_once() -> None:
    install_filter(SAMPLE_LOGGER, _OnceEach())


@contextlib.contextmanager
def spec_form_warnings_off() -> Iterator[None]:
    logger = logging.getLogger(SAMPLE_LOGGER)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
