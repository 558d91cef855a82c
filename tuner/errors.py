"""Errors the CLI knows how to print: one line, a fixed exit code, no traceback."""


class TunerError(Exception):
    """Something went wrong that the user should read about in one sentence."""

    exit_code = 1


class UsageError(TunerError):
    """Bad input: a flag, a file or a name the user gave. Exits 2, before any trial runs where possible."""

    exit_code = 2
