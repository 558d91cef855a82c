"""``tuner sweep``, ``tuner resume`` and ``tuner spaces``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import click

from tuner import schedulers, searchers
from tuner.cli.options import storage_path_option
from tuner.errors import TunerError, UsageError
from tuner.limits import BUDGET_FORMS
from tuner.settings import DEFAULT_NUM_SAMPLES, DEFAULT_STORAGE, GPUS_AUTO, Setting, SweepConfig

if TYPE_CHECKING:
    from tuner.folder.summary import Summary

# A flag's value as click gives it: None when not given, a tuple of texts for a flag given several times
Flag: TypeAlias = str | int | float | bool | tuple[str, ...] | None

CommandFunction = TypeVar(
    "CommandFunction", bound=Callable[..., None]
)  # a command's function, before click makes it one

_DEFAULTS = SweepConfig(space="-")


class GpuShare(click.ParamType):
    """A number of GPUs per trial, or ``auto``."""

    name = "NUMBER|auto"

    def convert(
        self, value: str | float | None, param: click.Parameter | None, ctx: click.Context | None
    ) -> float | str | None:
        if isinstance(value, (int, float)) or value is None:
            return value
        if str(value).strip().lower() == GPUS_AUTO:
            return GPUS_AUTO
        try:
            return float(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number nor 'auto'", param, ctx)


def sweep_options(func: CommandFunction) -> CommandFunction:
    """Every sweep flag; ``None`` means "not given here", so sweep files and TUNER_* variables can fill it."""
    d = _DEFAULTS
    options = [
        click.option(
            "--space",
            help="Built-in space name (see 'tuner spaces'), a path to a .py space file, or a module.",
        ),
        click.option(
            "--scheduler",
            type=click.Choice(schedulers.CHOICES),
            help="Early stopping; auto picks the one measured ahead for this kind of sweep (the plan says which "
            f"and why). [default: {d.scheduler}]",
        ),
        click.option(
            "--searcher",
            type=click.Choice(searchers.CHOICES),
            help="How configs are proposed; auto picks for the space, budget and scheduler (the plan says which and why). "
            "[default: the scheduler's own if it brings one, else auto]",
        ),
        click.option(
            "--num-samples",
            type=int,
            help=f"Trials to run (with --budget: at most). [default: {DEFAULT_NUM_SAMPLES}; no cap with --budget]",
        ),
        click.option(
            "--budget",
            help=f"End the sweep when this is spent (time counted from the first trial's start): "
            f"{BUDGET_FORMS}. Trials keep coming until then.",
        ),
        click.option(
            "--warm-start",
            multiple=True,
            metavar="EXP",
            help="Seed the searcher with an earlier sweep's trials: its folder, URI or name under "
            "--storage-path (repeatable; matching parameters).",
        ),
        click.option(
            "--max-epochs",
            type=int,
            help=f"Epochs per trial at most (the schedulers' max_t). [default: {d.max_epochs}]",
        ),
        click.option(
            "--grace-period",
            type=int,
            help=f"Epochs every trial gets before ASHA's first rung, the median rule's first comparison, "
            f"or freeze-thaw's first decision (at least 2 there). [default: {d.grace_period}]",
        ),
        click.option(
            "--reduction-factor",
            type=int,
            help=f"ASHA keeps the best 1/N of the trials at each rung; HyperBand's and BOHB's brackets shrink "
            f"by about N a round, as Ray sizes them (the plan lists each). [default: {d.reduction_factor}]",
        ),
        click.option(
            "--cpus-per-trial", type=float, help=f"CPUs reserved per trial. [default: {d.cpus_per_trial:g}]"
        ),
        click.option(
            "--gpus-per-trial",
            type=GpuShare(),
            help="GPUs per trial: a fraction (0.5: two trials share a GPU), a whole number, or 'auto' "
            "(share GPUs by the measured memory of the most demanding config). "
            "[default: 1 where the cluster has GPUs, else 0]",
        ),
        click.option(
            "--metric",
            help="Metric to optimise, or several separated by commas (loss,latency_ms): a "
            "Pareto front is searched. [default: the space's]",
        ),
        click.option(
            "--mode",
            help="min or max; one per metric (min,max) or one for all. [default: the space's, for a metric it "
            "declares; another needs --mode]",
        ),
        click.option(
            "--constraint",
            "constraints",
            multiple=True,
            metavar="METRIC<=VALUE",
            help="A bound a trial must meet to count, on any metric it reports (repeatable; <=, >=, <, >): "
            "trials that break it never make the best or the front.",
        ),
        click.option(
            "--name",
            help="Experiment name (a new one: an existing name is refused). [default: SPACE-SCHEDULER-SEARCHER-TIME]",
        ),
        click.option(
            "--storage-path",
            metavar="PATH",
            help=f"Folder (or s3://, gs:// URI) holding experiments. [default: TUNER_STORAGE_PATH, else {DEFAULT_STORAGE}]",
        ),
        click.option(
            "--seed", type=int, help=f"Seed for sampling, data split and initialisation. [default: {d.seed}]"
        ),
        click.option(
            "--max-concurrent", type=int, help="Trials running at once at most. [default: as many as fit]"
        ),
        click.option(
            "--max-failures",
            type=int,
            help=f"Retries of a failing trial from its last checkpoint. [default: {d.max_failures}]",
        ),
        click.option(
            "--dataset",
            help=f"Training data, a name the trainable's loader knows (CIFAR: cifar10, synthetic). [default: {d.dataset}]",
        ),
        click.option("--data-dir", help=f"Folder holding cifar-10-batches-py/. [default: {d.data_dir}]"),
        click.option(
            "--synthetic-size", type=int, help=f"Images in the synthetic set. [default: {d.synthetic_size}]"
        ),
        click.option(
            "--download/--no-download", default=None, help="Let torchvision fetch CIFAR-10 if it is missing."
        ),
        click.option(
            "--address",
            help="An existing Ray cluster (auto, HOST:PORT, ray://HOST:10001). [default: start a local Ray]",
        ),
        click.option(
            "--allow-local-storage",
            is_flag=True,
            default=None,
            help="On a multi-node cluster, accept a storage folder some nodes cannot see (results scatter).",
        ),
        click.option(
            "--dashboard/--no-dashboard",
            default=None,
            help="Start Ray's dashboard with the local Ray tuner starts (on 127.0.0.1; a cluster has its own). "
            "[default: off]",
        ),
        click.option("--wandb/--no-wandb", default=None, help="Also log every trial to Weights & Biases."),
        click.option("--wandb-project", help="Weights & Biases project. [default: tuner]"),
        click.option("--wandb-group", help="Weights & Biases group. [default: the experiment name]"),
        click.option(
            "--trial-output/--no-trial-output",
            default=None,
            help="Also show what trials print on the terminal (it is always kept in each trial's "
            "stdout.log and stderr.log; 'tuner logs EXP TRIAL' shows it). [default: off]",
        ),
        click.option(
            "--stall-timeout",
            type=float,
            help=f"End a sweep in which nothing has run or waited to run for this many seconds. [default: {d.stall_timeout:g}]",
        ),
        click.option(
            "--storage-timeout",
            help="Wait this long (90s, 5m; a number is seconds) for a storage that cannot be reached (a "
            "bucket's store restarting, a network blip) before the sweep stops resumably (exit code 4). "
            f"[default: {d.storage_timeout:g}]",
        ),
        click.option(
            "--trial-timeout",
            help="Stop a trial silent for this long as hung (90s, 10m, 2h). "
            "[default: 5x the slowest epoch seen, at least 2 min; 10 min before a trial's first report]",
        ),
        click.option(
            "--config",
            "config_file",
            type=click.Path(dir_okay=False),
            help="A YAML sweep file; flags override its keys.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def given_flags(flags: Mapping[str, Flag]) -> dict[str, Setting]:
    """The sweep flags the user typed (``None`` is "not given")."""
    given = {k: v for k, v in flags.items() if v is not None and v != () and k != "config_file"}
    for name in ("metric", "mode"):  # an empty variable in "--metric $METRIC" is not "the space's own"
        if isinstance(value := given.get(name), str) and not value.strip():
            raise UsageError(f"--{name} is empty; give one, or leave the flag out for the space's own")
    return {k: list(v) if isinstance(v, tuple) else v for k, v in given.items()}


def print_outcome(summary: Summary) -> None:
    """The end-of-sweep lines, and the exit code that says how it ended."""
    import time

    from tuner import cli, storage
    from tuner.errors import EXIT_STALLED, EXIT_STORAGE, SweepEnded, signal_exit
    from tuner.review.output import failure_tail
    from tuner.review.results import format_summary, user_traceback

    summary.took = time.time() - cli.started
    failed = summary.failed
    first = next((f for f in failed if f.error_file and not f.explained), None)
    if first is not None and first.error_file:  # the user's own traceback, once
        others = f" (like {len(failed) - 1} other trial(s))" if len(failed) > 1 else ""
        text = storage.read_text(*storage.split(first.error_file)) or ""
        click.echo(f"trial {first.trial_id} failed{others}; in your code:", err=True)
        for line in user_traceback(text):
            click.echo(f"  {line}", err=True)
        for line in failure_tail(storage.split(first.error_file)[0]):
            click.echo(line, err=True)
    for line in format_summary(summary):
        click.echo(line)
    if summary.storage:
        raise SweepEnded(EXIT_STORAGE)
    if summary.stalled:
        raise SweepEnded(EXIT_STALLED)
    if summary.signal:
        raise SweepEnded(signal_exit(summary.signal))
    if summary.unfinished:
        raise SweepEnded(signal_exit(None))
    if failed and len(failed) >= summary.trials:  # its "best" is the best of the failures: no success
        where = (
            "your code's error is above"
            if first is not None
            else "each one's error is in the failed: lines above"
        )
        raise TunerError(f"every trial failed ({len(failed)} of {summary.trials}); {where}")
    if summary.best is None:
        broke = summary.infeasible
        if broke:
            raise TunerError(
                f"every trial that reported {summary.metric} broke a constraint ({broke}); no best config"
            )
        if summary.spent is not None and summary.spent.epochs == 0 and not summary.unfinished:
            raise TunerError(  # the trainable ran and returned without tune.report: its own output says why
                "no trial reported a result: each one's trainable returned without calling tune.report (Ray's "
                "Lightning callback reports nothing when none of its metric names was logged); a trial's "
                f"stdout.log and stderr.log under {summary.experiment} say why"
            )
        raise TunerError("the sweep produced no result for its metric")


@click.command()
@sweep_options
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the resolved settings, plan and resources, then stop: nothing is written, no trial starts.",
)
def sweep(dry_run: bool, config_file: str | None, **flags: Flag) -> None:
    """Run a sweep; print the best config and checkpoint.

    A flag's setting may also come from a TUNER_ variable (TUNER_STORAGE_PATH, TUNER_NUM_SAMPLES=20) or the
    --config file; flags win over variables, variables over the file."""
    from tuner import storage_outage
    from tuner.launch.resolve import resolve
    from tuner.launch.runner import run_sweep

    given = given_flags(flags)
    bound = given.get("storage_timeout")
    if isinstance(bound, str):  # parsed once: resolving waits by it too
        bound = given["storage_timeout"] = storage_outage.parse_timeout(bound, "--storage-timeout")
    with storage_outage.bounded(bound if isinstance(bound, (int, float)) else None):
        config = resolve(given, config_file)  # it reads the storage too: is the name free there?
    with storage_outage.bounded(config.storage_timeout):  # the claim and the first writes wait as long
        summary = run_sweep(config, out=click.echo, dry_run=dry_run)
        if summary is not None:
            print_outcome(summary)


@click.command()
def spaces() -> None:
    """List the built-in search spaces."""
    from tuner.launch.registry import list_spaces

    rows = [(s.name, s.trainable, f"{s.metric} ({s.mode})", s.description) for s in list_spaces()]
    header = ("SPACE", "TRAINABLE", "METRIC", "DESCRIPTION")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])


@click.command()
@click.argument("experiment")
@click.option(
    "--errored",
    type=click.Choice(["resume", "restart", "skip"]),
    default="skip",
    show_default=True,
    help="Errored trials: go on from their last checkpoint, start over, or leave them.",
)
@click.option(
    "--num-samples",
    type=int,
    help="Grow a sweep to this many trials; the searcher keeps all it learnt. [default: as saved]",
)
@click.option(
    "--budget",
    help="Extend the sweep's budget: a new total (2h, 500ep, 4gpuh) or +AMOUNT for that much "
    "more (+30m). [default: as saved; what is left of it]",
)
@click.option("--trial-timeout", help="Stop a trial silent this long as hung (90s, 15m). [default: as saved]")
@storage_path_option
def resume(
    experiment: str,
    errored: str,
    num_samples: int | None,
    budget: str | None,
    trial_timeout: str | None,
    storage_path: str | None,
) -> None:
    """Continue a sweep stopped by Ctrl-C, a signal, a crash, a kill or a stall, with its saved settings and
    what is left of its budget; or grow a finished one with --num-samples or --budget. Every other setting
    stays as saved."""
    from tuner import storage_outage
    from tuner.launch.resume import resume_sweep

    with storage_outage.bounded(None):  # the saved bound, once read, holds for this command only
        print_outcome(
            resume_sweep(
                experiment,
                errored,
                out=click.echo,
                num_samples=num_samples,
                budget=budget,
                trial_timeout=trial_timeout,
                storage_path=storage_path,
            )
        )


COMMANDS = (sweep, resume, spaces)
