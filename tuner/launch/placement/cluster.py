"""Connecting to Ray: a private local instance started on demand, or an existing cluster by address."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, TypedDict

from tuner.errors import UsageError

if TYPE_CHECKING:
    from ray import LoggingConfig

log = logging.getLogger(__name__)


class _RayLogging(TypedDict):
    """What Ray's start is told of its logging, on either way in."""

    logging_level: int
    log_to_driver: bool
    logging_config: LoggingConfig


def prepare_environment() -> None:
    """Environment Ray reads at start-up and at ``fit`` time."""
    # Ray's default output engine ignores a CLIReporter; the classic engine prints our table.
    os.environ["RAY_AIR_NEW_OUTPUT"] = "0"
    # We check the metric ourselves and name what the trainable did report (see reporting.MetricGuard).
    os.environ.setdefault("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
    # Keeping the best and the latest checkpoint forces a state snapshot per epoch; locally that is cheap,
    # so Ray's warning about it is noise.
    os.environ.setdefault("TUNE_WARN_EXCESSIVE_EXPERIMENT_CHECKPOINT_SYNC_THRESHOLD_S", "0")


def connect(address: str | None, num_cpus: int | None = None, dashboard: bool = False) -> bool:
    """Start or join Ray. Returns True when this call started a local instance (the caller shuts it down).

    ``address=None`` always starts a fresh local Ray (``address="local"``), so a stale cluster file from
    an earlier ``ray start`` is never picked up by accident. Token authentication is left as Ray sets it.
    """
    import ray

    from tuner.ray_compat import quiet_terminal, quiet_worker_crashes

    prepare_environment()
    quiet_terminal()
    if ray.is_initialized():
        quiet_worker_crashes()
        return False
    # Workers log warnings and errors (a trial's traceback, an OOM fallback), not Ray's per-checkpoint chatter.
    kwargs: _RayLogging = {
        "logging_level": logging.WARNING,
        "log_to_driver": True,
        "logging_config": ray.LoggingConfig(log_level="WARNING"),
    }
    if address is None:
        context = ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=dashboard,
            dashboard_host="127.0.0.1",
            **kwargs,
        )
        quiet_worker_crashes()
        if dashboard and context.dashboard_url:
            log.info("Ray dashboard: http://%s", context.dashboard_url)
        return True
    from tuner.launch.placement import versions
    from tuner.launch.placement.auth import TOKEN_HELP, enable_token_auth, looks_like_auth_failure

    host_port = check_reachable(address)  # Ray itself would retry a dead address for minutes
    enable_token_auth()
    if not address.startswith("ray://"):  # a Ray client's server is asked by Ray itself, below
        from tuner.ray_compat.cluster import PROBE_TIMEOUT_S, cluster_versions, sends_tokens

        cluster = cluster_versions(host_port)
        if cluster.ray is not None:
            versions.check_driver_matches(address, cluster.ray, cluster.python or "")
        elif cluster.wants_token and not sends_tokens():
            versions.refuse_tokenless(address)
        elif cluster.wants_token:
            raise UsageError(f"cannot join the Ray cluster at {address}: {TOKEN_HELP}")
        elif cluster.silent:  # Ray's own start would wait on it for minutes
            raise UsageError(
                f"cannot join a Ray cluster at {address}: {host_port} takes connections, but no Ray GCS answered "
                f"there within {PROBE_TIMEOUT_S:.0f} s; pass the head's GCS address (port 6379 by default; "
                "'ray status' on the head prints it), not its dashboard's (8265) or another service's"
            )
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError) as exc:
        mismatch = versions.mismatch_in(str(exc))
        if mismatch is not None:
            level = "minor" if address.startswith("ray://") else "patch"
            versions.check_driver_matches(address, *mismatch, python_level=level)
        said = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        if looks_like_auth_failure(str(exc)) or os.environ.get("RAY_AUTH_MODE") != "token":
            raise UsageError(
                f"cannot join the Ray cluster at {address}: {said}; if it uses token auth, {TOKEN_HELP}"
            ) from exc
        raise UsageError(f"cannot reach a Ray cluster at {address}: {said}") from exc
    quiet_worker_crashes()
    return False


REACH_TIMEOUT_S = 5.0


def check_reachable(address: str) -> str:
    """A one-line error, within seconds, for an address where no Ray cluster answers; else its HOST:PORT."""
    where: str | None
    if address.startswith("ray://"):
        where = address[len("ray://") :]
    else:
        from tuner.ray_compat.cluster import bootstrap_address

        try:
            where = bootstrap_address(address)
        except Exception as exc:  # Ray raises several types for an address it cannot read
            raise UsageError(f"--address {address}: {' '.join(str(exc).split())[:200]}") from None
        if not where:
            raise UsageError(
                f"--address {address}: no running Ray cluster found on this machine; start one with "
                "'ray start --head', or pass the head's HOST:PORT (its GCS port, 6379 by default)"
            )
    typed = address[len("ray://") :] if address.startswith("ray://") else address
    # Ray reads localhost and 127.0.0.1 as the node's IP: a refusal names what was typed, then what Ray tried
    read_as = f" (Ray reads it as {where})" if where != typed else ""
    reach_tcp(where, f"a Ray cluster at {address}{read_as}", "that the head is running ('ray status' on it)")
    return where


def reach_tcp(host_port: str, what: str, check: str) -> None:
    """Open and close a TCP connection to HOST:PORT, or raise a one-line error naming what to check."""
    import socket

    host, _, port = host_port.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"cannot reach {what}: {host_port!r} is not HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UsageError(
            f"cannot reach {what}: {reason.lower()}; check {check} and that port {port} is open to this machine"
        ) from None


def disconnect(started_here: bool) -> None:
    import ray

    if started_here and ray.is_initialized():
        ray.shutdown()


def check_storage_reachable(storage_path: str, allow_local: bool) -> None:
    """On a multi-node cluster, refuse a storage folder that some node cannot see.

    Ray does not copy trial results to the head node: every node writes its trials' checkpoints to the
    storage path itself. A URI (s3://, gs://) or a filesystem mounted on every node works; a folder only
    this machine has would scatter the experiment over the nodes. We check it for real: a marker file
    written here must be visible from every live node.
    """
    import uuid
    from pathlib import Path

    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from tuner.storage import is_uri

    if is_uri(storage_path):
        return
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if len(nodes) <= 1:
        return
    folder = Path(storage_path)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / f".tuner-storage-check-{uuid.uuid4().hex}"
    marker.write_text("visible?\n")

    @ray.remote(num_cpus=0)
    def sees(path: str) -> bool:
        import os

        return os.path.exists(path)

    try:
        checks = {
            n["NodeManagerAddress"] + " " + n["NodeID"][:8]: sees.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote(str(marker))
            for n in nodes
        }
        blind = [name for name, ref in checks.items() if not ray.get(ref, timeout=60)]
    finally:
        marker.unlink(missing_ok=True)
    if not blind:
        return
    message = (
        f"--storage-path {storage_path} is not visible from {len(blind)} of {len(nodes)} nodes ({', '.join(blind)}); "
        "Ray does not copy results to the head, so use s3://, gs:// or a filesystem shared by every node"
    )
    if not allow_local:
        raise UsageError(message + ", or pass --allow-local-storage to accept scattered results")
    log.warning(
        "WARNING: %s. Going on because of --allow-local-storage: each node keeps its own trials' "
        "results and checkpoints, and resume and 'tuner results' see only this machine's.",
        message,
    )
