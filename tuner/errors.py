"""Errors the CLI knows how to print (one line, no traceback), and every exit code, in one table.

0 the sweep is done (every trial ran, or its budget was spent); 1 it failed; 2 bad input; 3 it stalled;
4 the storage refused writes (full, or over quota) or could not be reached for longer than the storage timeout,
and the sweep stopped resumably (or a review could not read it); 128 + the signal's number
when a signal stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
"""

import signal

EXIT_DONE, EXIT_FAILED, EXIT_USAGE, EXIT_STALLED, EXIT_STORAGE = 0, 1, 2, 3, 4


def signal_exit(signum: int | None) -> int:
    """The exit code of a sweep a signal stopped (Ctrl-C when none is named)."""
    return 128 + (signum or signal.SIGINT)


class TunerError(Exception):
    """Something went wrong that the user should read about in one sentence."""

    exit_code = EXIT_FAILED


class UsageError(TunerError):
    """Bad input: a flag, a file or a name the user gave. Exits 2, before any trial runs where possible."""

    exit_code = EXIT_USAGE


class StorageRefused(TunerError):
    """The storage refused a write (full, over quota) where no orderly stop could say so: the experiment keeps
    its last good state, and ``tuner resume`` continues it once there is room."""

    exit_code = EXIT_STORAGE


class StorageUnreachable(TunerError, OSError):
    """The storage could not be reached for longer than the storage timeout (tuner/storage_outage.py). An
    OSError too, as the store's own error was, so what meets a failed read or write meets this one."""

    exit_code = EXIT_STORAGE


class SweepEnded(TunerError):
    """A sweep that ended other than done (stalled, stopped by a signal) after saying so in its summary: only
    its exit code is left to give."""

    def __init__(self, exit_code: int) -> None:
        super().__init__("")
        self.exit_code = exit_code


def an(noun: str) -> str:
    """The noun with its article, for messages: "an int", "a dict"."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"
