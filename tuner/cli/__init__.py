"""The ``tuner`` command line: parse flags, call one function, map errors to exit codes.

Heavy imports (Ray, torch) happen inside commands, so ``tuner --help``, ``tuner spaces`` and the review
commands start fast. Bad input is one line on stderr (``tuner: error: ...``) and exit code 2; ``--debug``
(anywhere on the line) shows the traceback instead.
"""

from __future__ import annotations

import logging
import sys
import time
import traceback
from collections.abc import Sequence

import click

from tuner import storage_outage
from tuner.errors import EXIT_STORAGE, EXIT_USAGE, TunerError, signal_exit

log = logging.getLogger("tuner")
_debug = False
started = time.time()  # when this command began: a sweep's summary says how long it took from here


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is now, not the stream it was created with (which may be closed
    when ``main`` runs again in the same process, as in tests or an embedding program)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def _setup_logging(debug: bool) -> None:
    handler = _StderrHandler()
    handler.setFormatter(
        logging.Formatter("%(levelname)s %(name)s: %(message)s" if debug else "tuner: %(message)s")
    )
    for name in ("tuner", "trainables"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(logging.DEBUG if debug else logging.INFO)
        logger.propagate = False


def _turn_on_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    global _debug
    if value:
        _debug = True
        _setup_logging(True)


DEBUG_OPTION = click.Option(
    ["--debug"],
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_turn_on_debug,
    help="Show tracebacks and debug logs.",
)


class _Group(click.Group):
    """Every command takes ``--debug`` too (one option, declared here), wherever the user types it."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if isinstance(cmd, click.Group):
            cmd.__class__ = _Group
            for sub in cmd.commands.values():
                _with_debug(sub)
        _with_debug(cmd)
        super().add_command(cmd, name)


def _with_debug(cmd: click.Command) -> None:
    if DEBUG_OPTION not in cmd.params:
        cmd.params.append(DEBUG_OPTION)


# Each command's module: a command imports only its own (``tuner results`` skips the sweep's options and the
# schedulers they list). tests/unit/test_cli.py checks this against each module's COMMANDS.
COMMAND_MODULES = {
    **dict.fromkeys(("sweep", "resume", "spaces"), "tuner.cli.sweep"),
    **dict.fromkeys(
        ("results", "export", "plot", "report", "compare", "tensorboard", "dashboard", "replay", "logs"),
        "tuner.cli.review",
    ),
    **dict.fromkeys(("submit", "jobs"), "tuner.cli.jobs"),
}


class _Commands(_Group):
    """The ``tuner`` group: a command's module is imported when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            import importlib

            for command in importlib.import_module(COMMAND_MODULES[cmd_name]).COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.version_option(package_name="tuner", prog_name="tuner")
def cli() -> None:
    """Hyperparameter sweeps for PyTorch training loops on Ray Tune.

    \b
    tuner sweep --space cifar_small --dataset synthetic --num-samples 8 --max-epochs 3
    tuner results EXPERIMENT --top 5
    tuner report EXPERIMENT
    tuner resume EXPERIMENT
    """


_with_debug(cli)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: one-line errors with exit code 2 for bad input; ``--debug`` shows the traceback."""
    global _debug, started
    _debug = False
    started = time.time()
    args = list(sys.argv[1:] if argv is None else argv)
    _setup_logging(False)
    storage_outage.set_timeout(None)  # a command waits by its own bound, never by one an earlier command set
    storage_outage.start_afresh()
    try:
        # what the command returned (ours return None), or the code a click.exceptions.Exit carried
        code: int | None = cli.main(args=args, prog_name="tuner", standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        # A second signal (tuner/launch/guards/signals.py) says which and how to resume; a bare Ctrl-C outside a sweep, less.
        # Click turns a KeyboardInterrupt into Abort, keeping it as the cause.
        stop = exc.__cause__ or exc.__context__ if isinstance(exc, click.exceptions.Abort) else exc
        click.echo(f"tuner: {stop}" if stop is not None and str(stop) else "tuner: interrupted", err=True)
        sys.exit(getattr(stop, "exit_code", signal_exit(None)))
    except click.ClickException as exc:
        if not args and isinstance(exc, click.UsageError) and exc.ctx is not None:
            click.echo(exc.ctx.get_help())  # a bare ``tuner`` asks what it can do: its help, not an error
            sys.exit(0)
        if _debug:
            traceback.print_exc()  # the traceback, and the exit code a script reads, as without --debug
        click.echo(f"tuner: error: {exc.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except TunerError as exc:
        if _debug and str(exc):
            traceback.print_exc()
        if str(exc):  # a sweep that ended early has said why in its summary
            click.echo(f"tuner: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:  # a write the storage refused where no guard could say so (a claim on a full disk)
        from tuner.folder.fates import refusal

        meaning = refusal(f"{exc}")
        if _debug or meaning is None:
            raise
        click.echo(
            f"tuner: error: {meaning} ({exc.filename or 'a write'}); free space and run the command again",
            err=True,
        )
        sys.exit(EXIT_STORAGE)
    sys.exit(code if isinstance(code, int) else 0)
