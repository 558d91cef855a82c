"""Ray Jobs: ``tuner submit`` and ``tuner jobs list|status|logs|stop`` against a cluster's dashboard."""

from __future__ import annotations

import logging
from typing import cast

import click

from tuner.cli.sweep import Flag, sweep_options
from tuner.value_types import Value

log = logging.getLogger("tuner")
_ADDRESS_HELP = "The cluster's dashboard, http://HEAD:8265. [default: $RAY_ADDRESS]"


@click.command()
@sweep_options
@click.option("--python", "python", default="python", show_default=True, help="Interpreter on the cluster.")
def submit(python: str, config_file: str | None, **flags: Flag) -> None:
    """Submit a sweep to a Ray cluster as a Ray Job (ships this folder); prints the job id.

    --address is the cluster's dashboard (http://HEAD:8265, or $RAY_ADDRESS); every other flag is a
    'tuner sweep' flag, run there as given.
    """
    from pathlib import Path

    from tuner.launch.placement import jobs

    address = cast(str | None, flags.pop("address"))  # --address: a text option
    given: dict[str, Value] = {k: v for k, v in flags.items() if v is not None}
    if config_file:
        given["config_file"] = config_file
    job_id = jobs.submit(address, given, Path.cwd(), python=python)
    click.echo(job_id)
    log.info(
        "follow it with: tuner jobs logs %s --follow --address %s", job_id, jobs.dashboard_address(address)
    )


# submit shares sweep's flags, but its --address is the dashboard jobs go to, not a Ray to join
for _option in submit.params:
    if isinstance(_option, click.Option) and _option.name == "address":
        _option.help = _ADDRESS_HELP


@click.group("jobs")
def jobs_group() -> None:
    """Sweeps submitted to a Ray cluster: list, status, logs, stop."""


@jobs_group.command("list")
@click.option("--address", help=_ADDRESS_HELP)
def jobs_list(address: str | None) -> None:
    """Every job on the cluster, oldest first."""
    from tuner.launch.placement import jobs
    from tuner.review.results import render

    click.echo(render(jobs.list_jobs(address), "table", empty="(no jobs)"))


@jobs_group.command("status")
@click.argument("job_id")
@click.option("--address", help=_ADDRESS_HELP)
def jobs_status(job_id: str, address: str | None) -> None:
    """PENDING, RUNNING, SUCCEEDED, FAILED or STOPPED."""
    from tuner.launch.placement import jobs

    click.echo(jobs.status(address, job_id))


@jobs_group.command("logs")
@click.argument("job_id")
@click.option("--address", help=_ADDRESS_HELP)
@click.option("--follow", "-f", is_flag=True, help="Keep printing until the job ends.")
def jobs_logs(job_id: str, address: str | None, follow: bool) -> None:
    """A job's output (the sweep's table and summary)."""
    from tuner.launch.placement import jobs

    if follow:
        jobs.follow(address, job_id, click.echo)
    else:
        click.echo(jobs.logs(address, job_id).rstrip("\n"))


@jobs_group.command("stop")
@click.argument("job_id")
@click.option("--address", help=_ADDRESS_HELP)
def jobs_stop(job_id: str, address: str | None) -> None:
    """Ask a running job to stop."""
    from tuner.launch.placement import jobs

    stopped = jobs.stop(address, job_id)
    click.echo(f"{job_id}: {'stopping' if stopped else 'not running, nothing to stop'}")


COMMANDS = (submit, jobs_group)
