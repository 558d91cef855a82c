"""The ``tuner`` command line: parse flags, call one function, map errors to exit codes.

Heavy imports (Ray, torch) happen inside commands, so ``tuner --help`` and ``tuner spaces`` start fast.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from tuner.config import DATASETS, DEFAULT_STORAGE, GPUS_AUTO, SCHEDULERS, SEARCHERS, SweepConfig
from tuner.errors import TunerError, UsageError

log = logging.getLogger("tuner")
_DEFAULTS = SweepConfig(space="-")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is now, not the stream it was created with (which may be closed
    when ``main`` runs again in the same process, as in tests or an embedding program)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def _setup_logging(debug: bool) -> None:
    handler = _StderrHandler()
    handler.setFormatter(
        logging.Formatter("%(levelname)s %(name)s: %(message)s" if debug else "tuner: %(message)s")
    )
    root = logging.getLogger("tuner")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.INFO)
    root.propagate = False
    for name in ("trainables",):
        logging.getLogger(name).handlers[:] = [handler]
        logging.getLogger(name).setLevel(logging.DEBUG if debug else logging.INFO)


class GpuShare(click.ParamType):
    """A number of GPUs per trial, or ``auto``."""

    name = "NUMBER|auto"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, (int, float)) or value is None:
            return value
        if str(value).strip().lower() == GPUS_AUTO:
            return GPUS_AUTO
        try:
            return float(value)
        except ValueError:
            self.fail(f"{value!r} is neither a number nor 'auto'", param, ctx)


def sweep_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Every sweep flag; ``None`` means "not given here", so sweep files and TUNER_* variables can fill it."""
    d = _DEFAULTS
    options = [
        click.option("--space", help="Built-in space name (see 'tuner spaces') or a path to a .py space file."),
        click.option("--scheduler", type=click.Choice(SCHEDULERS), help=f"Early stopping. [default: {d.scheduler}]"),
        click.option("--searcher", type=click.Choice(SEARCHERS), help=f"How configs are proposed. [default: {d.searcher}]"),
        click.option("--num-samples", type=int, help=f"Trials to run. [default: {d.num_samples}]"),
        click.option("--max-epochs", type=int, help=f"Epochs per trial at most (ASHA/HyperBand max_t). [default: {d.max_epochs}]"),
        click.option("--cpus-per-trial", type=float, help=f"CPUs reserved per trial. [default: {d.cpus_per_trial:g}]"),
        click.option(
            "--gpus-per-trial", type=GpuShare(),
            help="GPUs per trial: a fraction (0.5: two trials share a GPU), a whole number, or 'auto' "
            "(share GPUs by the measured memory of the most demanding config). "
            "[default: 1 where the cluster has GPUs, else 0]",
        ),
        click.option("--metric", help="Metric to optimise. [default: the space's]"),
        click.option("--mode", type=click.Choice(["min", "max"]), help="Minimise or maximise. [default: the space's]"),
        click.option("--name", help="Experiment name. [default: SPACE-SCHEDULER-SEARCHER-TIME]"),
        click.option("--storage-path", help=f"Folder (or s3://, gs:// URI) holding experiments. [default: {DEFAULT_STORAGE}]"),
        click.option("--seed", type=int, help=f"Seed for sampling, data split and initialisation. [default: {d.seed}]"),
        click.option("--max-concurrent", type=int, help="Trials running at once at most. [default: as many as fit]"),
        click.option("--max-failures", type=int, help=f"Retries of a failing trial from its last checkpoint. [default: {d.max_failures}]"),
        click.option("--dataset", type=click.Choice(DATASETS), help=f"Training data. [default: {d.dataset}]"),
        click.option("--data-dir", help=f"Folder holding cifar-10-batches-py/. [default: {d.data_dir}]"),
        click.option("--synthetic-size", type=int, help=f"Images in the synthetic set. [default: {d.synthetic_size}]"),
        click.option("--download/--no-download", default=None, help="Let torchvision fetch CIFAR-10 if it is missing."),
        click.option("--address", help="An existing Ray cluster (auto, HOST:PORT, ray://HOST:10001). [default: start a local Ray]"),
        click.option(
            "--allow-local-storage", is_flag=True, default=None,
            help="On a multi-node cluster, accept a storage folder some nodes cannot see (results scatter).",
        ),
        click.option(
            "--dashboard/--no-dashboard", default=None,
            help="Start Ray's dashboard with the local Ray (on 127.0.0.1). [default: off]",
        ),
        click.option("--wandb/--no-wandb", default=None, help="Also log every trial to Weights & Biases."),
        click.option("--wandb-project", help="Weights & Biases project. [default: tuner]"),
        click.option("--wandb-group", help="Weights & Biases group. [default: the experiment name]"),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A YAML sweep file; flags override its keys."),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


def _given(flags: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in flags.items() if v is not None and k != "config_file"}


def resolve_sweep_config(flags: dict[str, Any], environ: dict[str, str] | None = None) -> SweepConfig:
    """flags > TUNER_* environment > --config YAML > space defaults > built-in defaults."""
    import os

    from tuner.config import build_config, coerce, env_settings, merge_layers, read_yaml_settings

    given = _given(flags)
    env = env_settings(os.environ if environ is None else environ)
    from_file = read_yaml_settings(flags["config_file"]) if flags.get("config_file") else {}
    space_ref = given.get("space") or env.get("space") or from_file.get("space")
    if not space_ref:
        raise UsageError(
            "no search space given; pass --space NAME or --space path/to/space.py (see 'tuner spaces')"
        )
    from tuner.registry import load_space

    space = load_space(space_ref)
    space_defaults = {k: coerce(k, v, f"space {space_ref} defaults") for k, v in space.defaults.items()}
    return build_config(merge_layers(space_defaults, from_file, env, given, {"space": space_ref}))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(package_name="tuner", prog_name="tuner")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
def cli(debug: bool) -> None:
    """Hyperparameter sweeps for PyTorch training loops on Ray Tune.

    \b
    tuner sweep --space cifar_small --scheduler asha --searcher hyperopt
    tuner results EXPERIMENT --top 5
    tuner resume EXPERIMENT
    """


@cli.command()
@sweep_options
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
def sweep(debug: bool, **flags: Any) -> None:
    """Run a sweep; print the best config and checkpoint."""
    from tuner.results import format_summary
    from tuner.runner import run_sweep

    config = resolve_sweep_config(flags)
    summary = run_sweep(config, out=click.echo)
    for line in format_summary(summary):
        click.echo(line)
    if summary.get("unfinished"):
        sys.exit(130)
    if "config" not in summary:
        raise TunerError("the sweep produced no result for its metric")


@cli.command()
def spaces() -> None:
    """List the built-in search spaces."""
    from tuner.registry import list_spaces

    rows = [(s.name, s.trainable, f"{s.metric} ({s.mode})", s.description) for s in list_spaces()]
    header = ("SPACE", "TRAINABLE", "METRIC", "DESCRIPTION")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    for row in [header, *rows]:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])


@cli.command()
@click.argument("experiment")
@click.option("--top", type=click.IntRange(min=1), help="Only the K best trials.")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True
)
def results(experiment: str, top: int | None, fmt: str) -> None:
    """Every trial of EXPERIMENT (a path, or a name under the storage path), best first."""
    from tuner import experiment as experiments
    from tuner.results import render, trial_rows

    record = experiments.load(experiment)
    if fmt == "table":
        click.echo(f"{record.path}  ({len(record.trials)} trials, {record.metric} {record.mode})")
    click.echo(render(trial_rows(record, top), fmt))


@cli.command()
@click.argument("experiment")
@click.option(
    "--out", "out_file", type=click.Path(dir_okay=False), help="Write to FILE (.yaml/.yml or .json)."
)
def export(experiment: str, out_file: str | None) -> None:
    """The best trial's config, metric and checkpoint, ready for a training run."""
    import json
    from pathlib import Path

    import yaml

    from tuner import experiment as experiments
    from tuner.results import best_export

    best = best_export(experiments.load(experiment))
    if out_file is None:
        click.echo(json.dumps(best, indent=2))
        return
    path = Path(out_file)
    if path.suffix.lower() in (".yaml", ".yml"):
        text = yaml.safe_dump(best, sort_keys=False)
    elif path.suffix.lower() == ".json":
        text = json.dumps(best, indent=2) + "\n"
    else:
        raise UsageError(f"--out {out_file}: use a .yaml, .yml or .json file name")
    path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {path}")


@cli.command()
@click.argument("experiment")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Folder for the PNGs. [default: EXPERIMENT/plots]",
)
def plot(experiment: str, out_dir: str | None) -> None:
    """PNG plots: the metric per epoch for every trial, and each parameter against the final metric."""
    from pathlib import Path

    from tuner import experiment as experiments
    from tuner.plots import plot_experiment

    record = experiments.load(experiment)
    for path in plot_experiment(record, Path(out_dir) if out_dir else record.path / "plots"):
        click.echo(str(path))


@cli.command()
@click.argument("experiment")
@click.option("--port", type=click.IntRange(1, 65535), default=6006, show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; 0.0.0.0 exposes it to the network.",
)
def tensorboard(experiment: str, port: int, host: str) -> None:
    """Serve TensorBoard on an experiment folder until Ctrl-C."""
    from tuner import experiment as experiments
    from tuner.dashboard import serve

    serve(experiments.locate(experiment), host, port, click.echo)


@cli.command()
@click.argument("experiment")
@click.option(
    "--errored", type=click.Choice(["resume", "restart", "skip"]), default="skip", show_default=True,
    help="Errored trials: go on from their last checkpoint, start over, or leave them.",
)  # fmt: skip
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
def resume(experiment: str, errored: str, debug: bool) -> None:
    """Continue a sweep stopped by Ctrl-C, a crash or a kill, with its saved settings."""
    from tuner.results import format_summary
    from tuner.runner import resume_sweep

    summary = resume_sweep(experiment, errored, out=click.echo)
    for line in format_summary(summary):
        click.echo(line)
    if summary.get("unfinished"):
        sys.exit(130)


_ADDRESS_HELP = "The cluster's dashboard, http://HEAD:8265. [default: $RAY_ADDRESS]"


@cli.command()
@sweep_options
@click.option("--python", "python", default="python", show_default=True, help="Interpreter on the cluster.")
def submit(python: str, **flags: Any) -> None:
    """Submit a sweep to a Ray cluster as a Ray Job (ships this folder); prints the job id.

    --address is the cluster's dashboard (http://HEAD:8265, or $RAY_ADDRESS); every other flag is a
    'tuner sweep' flag, run there as given.
    """
    from pathlib import Path

    from tuner import jobs

    address = flags.pop("address")
    given = {k: v for k, v in flags.items() if v is not None}
    job_id = jobs.submit(address, given, Path.cwd(), python=python)
    click.echo(job_id)
    log.info(
        "follow it with: tuner jobs logs %s --follow --address %s", job_id, jobs.dashboard_address(address)
    )


@cli.group("jobs")
def jobs_group() -> None:
    """Sweeps submitted to a Ray cluster: list, status, logs, stop."""


@jobs_group.command("list")
@click.option("--address", help=_ADDRESS_HELP)
def jobs_list(address: str | None) -> None:
    """Every job on the cluster, oldest first."""
    from tuner import jobs
    from tuner.results import render

    click.echo(render(jobs.list_jobs(address), "table", empty="(no jobs)"))


@jobs_group.command("status")
@click.argument("job_id")
@click.option("--address", help=_ADDRESS_HELP)
def jobs_status(job_id: str, address: str | None) -> None:
    """PENDING, RUNNING, SUCCEEDED, FAILED or STOPPED."""
    from tuner import jobs

    click.echo(jobs.status(address, job_id))


@jobs_group.command("logs")
@click.argument("job_id")
@click.option("--address", help=_ADDRESS_HELP)
@click.option("--follow", "-f", is_flag=True, help="Keep printing until the job ends.")
def jobs_logs(job_id: str, address: str | None, follow: bool) -> None:
    """A job's output (the sweep's table and summary)."""
    from tuner import jobs

    if follow:
        jobs.follow(address, job_id, click.echo)
    else:
        click.echo(jobs.logs(address, job_id).rstrip("\n"))


@jobs_group.command("stop")
@click.argument("job_id")
@click.option("--address", help=_ADDRESS_HELP)
def jobs_stop(job_id: str, address: str | None) -> None:
    """Ask a running job to stop."""
    from tuner import jobs

    stopped = jobs.stop(address, job_id)
    click.echo(f"{job_id}: {'stopping' if stopped else 'not running, nothing to stop'}")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: one-line errors with exit code 2 for bad input; ``--debug`` shows the traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    _setup_logging(debug)
    try:
        code = cli.main(args=args, prog_name="tuner", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("tuner: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("tuner: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        if debug:
            raise
        click.echo(f"tuner: error: {exc.format_message()}", err=True)
        sys.exit(2)
    except TunerError as exc:
        if debug:
            raise
        click.echo(f"tuner: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
