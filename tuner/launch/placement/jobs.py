"""Sweeps as Ray Jobs: submit to a cluster's dashboard, then list, follow, inspect and stop them.

Ray 2.60 clusters use token authentication by default. The client sends the token when it has one
(``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``); we never turn authentication off.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from tuner.errors import TunerError, UsageError
from tuner.launch.placement.auth import TOKEN_HELP, enable_token_auth, looks_like_auth_failure
from tuner.settings import NO_SPACE

if TYPE_CHECKING:
    from ray.job_submission import JobSubmissionClient

    from tuner.value_types import Value

T = TypeVar("T")

# Never shipped with the working directory: environments, results, data, caches.
# (.git and .venv Ray leaves out by itself.)
SHIP_EXCLUDES = [
    "venv/",
    "results/",
    "data/",
    "wandb/",
    "__pycache__/",
    "*.egg-info/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".whl/",
    ".ray-matrix/",
    "*.pt",
]


def dashboard_address(address: str | None) -> str:
    address = address or os.environ.get("RAY_ADDRESS")
    if not address:
        raise UsageError("no cluster given: pass --address http://HEAD:8265 or set RAY_ADDRESS")
    if "://" not in address:
        address = "http://" + address
    return address


def client(address: str | None) -> JobSubmissionClient:
    """A connected ``JobSubmissionClient``, or a one-line error saying what is wrong."""
    import logging
    from urllib.parse import urlsplit

    from tuner.launch.placement.cluster import reach_tcp

    url = dashboard_address(address)
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    reach_tcp(
        f"{parts.hostname}:{port}", f"a Ray dashboard at {url}", "that the head runs with its dashboard on"
    )
    enable_token_auth()
    from ray.job_submission import JobSubmissionClient

    logging.getLogger("ray").setLevel(logging.WARNING)  # packaging chatter; errors still show

    try:
        return JobSubmissionClient(url)
    except Exception as exc:  # connection errors arrive as several types
        raise _explain(exc, url) from exc


def _explain(exc: Exception, url: str) -> TunerError:
    text = " ".join(str(exc).split())
    if looks_like_auth_failure(text) or "no token" in text.lower():
        return UsageError(f"{url}: {TOKEN_HELP}")
    if "403" in text or "Authentication failed" in text:
        return UsageError(f"{url}: the auth token was refused; check that it is the head's current token")
    if "ConnectionError" in type(exc).__name__ or "Failed to connect" in text or "Connection refused" in text:
        return UsageError(
            f"cannot reach a Ray dashboard at {url}: is the head running with its dashboard on?"
        )
    return TunerError(f"{url}: {text[:300]}")


# A head that has just started answers this until its job agent is up; it is worth waiting for.
_TRY_AGAIN = "try again later"


def _call(url: str, action: Callable[[], T], patience_s: float = 60.0) -> T:
    import time

    deadline = time.monotonic() + patience_s
    while True:
        try:
            return action()
        except RuntimeError as exc:
            if _TRY_AGAIN in str(exc) and time.monotonic() < deadline:
                time.sleep(2)
                continue
            if "does not exist" in str(exc) or "not found" in str(exc).lower():
                raise UsageError(" ".join(str(exc).split())[:300]) from exc
            raise _explain(exc, url) from exc


def sweep_entrypoint(flags: Mapping[str, Value], python: str = "python") -> str:
    """The command a job runs: ``tuner sweep`` with the given flags, joined to the cluster it runs on."""
    args = [python, "-m", "tuner", "sweep"]
    for name, value in flags.items():
        if value is None or name in ("address",):
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            args.append(flag if value else "--no-" + name.replace("_", "-"))
        elif isinstance(value, (list, tuple)):  # a repeatable flag: once per value, not at all when empty
            for item in value:
                args += [flag, str(item)]
        else:
            args += [flag, str(value)]
    args += ["--address", "auto"]
    return shlex.join(args)


def ship_space_file(space: str | None, working_dir: Path, staging: Path) -> tuple[str | None, list[str]]:
    """How the job finds a user's space file: a relative path inside the shipped working directory, or,
    for a file elsewhere, a module of a small package shipped beside it. Returns the ``--space`` value
    and the ``py_modules`` to ship."""
    import hashlib
    import shutil

    from tuner.launch.registry import is_space_path

    if not space or not is_space_path(space):
        return space, []
    path = Path(space).expanduser().resolve()
    if not path.is_file():
        raise UsageError(f"space file {space} not found")
    try:
        return str(path.relative_to(working_dir)), []
    except ValueError:
        pass
    package = "tuner_shipped_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
    folder = staging / package
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text('"""Space files shipped with a tuner job."""\n')
    shutil.copy2(path, folder / path.name)
    return f"{package}.{path.stem}", [str(folder)]


def relative_file(option: str, value: str, working_dir: Path) -> str:
    """A file flag (``--config``) must travel inside the working directory."""
    path = Path(value).expanduser().resolve()
    if not path.is_file():
        raise UsageError(f"{option} {value} not found")
    try:
        return str(path.relative_to(working_dir))
    except ValueError:
        raise UsageError(
            f"{option} {value} is outside the working directory {working_dir}, which is what gets shipped "
            "to the cluster; run 'tuner submit' from a folder that contains it"
        ) from None


def submit(address: str | None, flags: Mapping[str, Value], working_dir: Path, python: str = "python") -> str:
    """Submit ``tuner sweep FLAGS`` as a Ray Job, shipping the working directory; returns the job id."""
    import tempfile

    flags = dict(flags)
    config_file = flags.pop("config_file", None)
    if config_file:
        flags["config"] = relative_file("--config", str(config_file), working_dir)
    if not flags.get("space") and not flags.get("config"):
        raise UsageError(NO_SPACE)
    from tuner.launch.placement.versions import check_submittable
    from tuner.ray_compat.cluster import dashboard_ray_version

    jobs = client(address)
    url = dashboard_address(address)
    check_submittable(url, dashboard_ray_version(jobs))  # the job runs tuner with the cluster's Ray
    with tempfile.TemporaryDirectory(prefix="tuner-ship-") as staging:
        space = cast("str | None", flags.get("space"))  # the --space flag: text
        flags["space"], py_modules = ship_space_file(space, working_dir, Path(staging))
        runtime_env: dict[str, str | list[str] | dict[str, str]] = {
            "working_dir": str(working_dir),
            "excludes": SHIP_EXCLUDES,
        }
        if py_modules:
            runtime_env["py_modules"] = py_modules
        if os.environ.get("WANDB_API_KEY"):
            runtime_env["env_vars"] = {"WANDB_API_KEY": os.environ["WANDB_API_KEY"]}
        entrypoint = sweep_entrypoint(flags, python)
        return _call(url, lambda: jobs.submit_job(entrypoint=entrypoint, runtime_env=runtime_env))


def list_jobs(address: str | None) -> list[dict[str, str | None]]:
    jobs, url = client(address), dashboard_address(address)
    details = _call(url, jobs.list_jobs)
    return [
        {
            "job_id": d.submission_id or d.job_id,
            "status": str(d.status.value if hasattr(d.status, "value") else d.status),
            "started": _when(d.start_time),
            "entrypoint": d.entrypoint,
        }
        for d in sorted(details, key=lambda d: d.start_time or 0)
    ]


def _when(milliseconds: int | None) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(milliseconds / 1000)) if milliseconds else "-"


def status(address: str | None, job_id: str) -> str:
    jobs, url = client(address), dashboard_address(address)
    value = _call(url, lambda: jobs.get_job_status(job_id))
    return str(value.value if hasattr(value, "value") else value)


def logs(address: str | None, job_id: str) -> str:
    jobs, url = client(address), dashboard_address(address)
    return _call(url, lambda: jobs.get_job_logs(job_id))


def follow(address: str | None, job_id: str, out: Callable[[str], None]) -> None:
    """Print a job's logs as they come, until it ends."""
    import asyncio

    jobs, url = client(address), dashboard_address(address)
    _call(url, lambda: jobs.get_job_status(job_id))  # a clear error for an unknown job before tailing

    async def tail() -> None:
        async for chunk in jobs.tail_job_logs(job_id):
            out(chunk.rstrip("\n"))

    asyncio.run(tail())


def stop(address: str | None, job_id: str) -> bool:
    jobs, url = client(address), dashboard_address(address)
    return bool(_call(url, lambda: jobs.stop_job(job_id)))
