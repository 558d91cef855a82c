"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

15. Reading an address as Ray would (Ray 2.60): ``ray.init(address=...)`` retries an address where no
cluster answers for minutes. tuner checks first, so it must read "auto", HOST:PORT, RAY_ADDRESS and the last
``ray start`` on this machine exactly as Ray does: ``ray._private.services.canonicalize_bootstrap_address``.
16. Token authentication for a client (Ray 2.60): Ray reads RAY_AUTH_MODE once, when first imported, into
its C++ configuration; a client that turns token mode on afterwards makes ``ray._raylet.Config`` read it again.
22. A cluster's Ray version (Ray 2.60): read before connecting (``cluster_versions``, ``dashboard_ray_version``),
so a client of another version is refused in one line rather than by Ray's error after start-up.
"""

from __future__ import annotations

from dataclasses import dataclass


def bootstrap_address(address: str) -> str | None:
    """HOST:PORT of the cluster ``address`` names, as Ray reads it; None when none is running here."""
    from ray._private.services import canonicalize_bootstrap_address

    return canonicalize_bootstrap_address(address)


def reread_auth_mode() -> None:
    from ray._raylet import Config  # type: ignore[attr-defined]  # a compiled module without stubs

    Config.initialize("")


@dataclass(frozen=True)
class ClusterAnswer:
    """What a cluster's GCS says of itself before this machine joins it: its Ray and Python versions, that it
    refused to answer for want of an auth token, or that no GCS answered at all (``silent``: the probe's client
    said it could not reach one; all unset when the probe failed otherwise)."""

    ray: str | None = None
    python: str | None = None
    wants_token: bool = False
    silent: bool = False


_PROBE = """
import json, sys
from ray._common.usage.usage_lib import get_cluster_metadata
from ray._raylet import GcsClient
metadata = get_cluster_metadata(GcsClient(address=sys.argv[1])) or {}
print(json.dumps({"ray": metadata.get("ray_version"), "python": metadata.get("python_version")}))
"""
PROBE_TIMEOUT_S = 15.0
# what Ray's C++ client logs when no GCS answers at an address (a service of another kind listens there)
NO_GCS = ("Failed to connect to GCS", "Failed to get cluster ID from GCS", "Timed out while waiting for GCS")


def cluster_versions(host_port: str, timeout_s: float = PROBE_TIMEOUT_S) -> ClusterAnswer:
    """22. The Ray and Python versions a cluster was started with (Ray 2.60; checked on 2.50.0 and 2.55.1).
    ``ray.init`` compares them with its own only after connecting, and fails in a message of eight lines; a
    client whose Ray cannot send an auth token (before 2.55) gets retries and a screenful of C++ warnings
    instead. So they are read first from the cluster's GCS key-value store, where Ray's usage library keeps
    them (``get_cluster_metadata``), in a child process: its C++ client's retries and log lines stay there,
    and a timeout ends them."""
    import json
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, host_port], capture_output=True, text=True,
                              timeout=timeout_s)  # fmt: skip
        stdout, stderr = done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        stdout = ""
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
    wants_token = "InvalidAuthToken" in stderr or "Authentication token is missing" in stderr
    try:
        answer = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        # Ray's client said no GCS answered (a timeout alone may be a slow head: Ray's own start then decides)
        silent = not wants_token and any(said in stderr for said in NO_GCS)
        return ClusterAnswer(wants_token=wants_token, silent=silent)
    return ClusterAnswer(answer.get("ray") or None, answer.get("python") or None, wants_token)


def sends_tokens() -> bool:
    """22. Whether this machine's Ray can send an auth token (its ``ray._private.authentication``, Ray 2.55
    and later)."""
    import importlib.util

    return importlib.util.find_spec("ray._private.authentication") is not None


def dashboard_ray_version(jobs_client: object) -> str | None:
    """22. The Ray version of the cluster a ``JobSubmissionClient`` is connected to, from the dashboard's
    ``/api/version`` answer (its ``ray_version``), asked through the client's own ``_do_request`` so the
    auth token goes with it; the public ``get_version`` returns only the API's version. None when it does not say."""
    try:
        answer = jobs_client._do_request("GET", "/api/version")  # type: ignore[attr-defined]  # private, untyped
        version = answer.json().get("ray_version") if answer.status_code == 200 else None
    except Exception:  # noqa: BLE001 - an older dashboard: the job's own start says what is wrong
        return None
    return str(version) if version else None
