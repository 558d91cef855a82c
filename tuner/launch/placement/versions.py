"""The Ray versions tuner is tested on, and the one-line refusal of a cluster it cannot work with.

A driver (``tuner sweep --address``) must run the Ray and Python its cluster runs: Ray refuses anything else,
but only after this machine's side of the connection has started, in a message of eight lines. A job
(``tuner submit``) runs tuner on the cluster itself, so only the cluster's Ray matters there: it must be one
tuner is tested on (``make test-ray-matrix``).
"""

from __future__ import annotations

import re

from tuner.errors import UsageError

TESTED = ("2.50.0", "2.55.1", "2.60.0")  # the matrix make test-ray-matrix runs: floor, middle, newest
RANGE = "2.50 to 2.60"


def _minor(version: str) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def within_tested(version: str) -> bool:
    """Whether a Ray version lies in the tested range (any patch release of 2.50 to 2.60)."""
    minor, oldest, newest = _minor(version), _minor(TESTED[0]), _minor(TESTED[-1])
    if minor is None or oldest is None or newest is None:
        return False
    return oldest <= minor <= newest


def here() -> tuple[str, str]:
    """This process's Ray and Python versions."""
    import platform

    import ray

    return ray.__version__, platform.python_version()


def check_driver_matches(
    address: str, cluster_ray: str, cluster_python: str, python_level: str = "patch"
) -> None:
    """A one-line refusal when this machine's Ray or Python differs from the cluster's, as Ray compares them:
    Python to the patch release for a driver (or as ``RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL`` says), to the minor
    one for a ``ray://`` client; ``RAY_IGNORE_VERSION_MISMATCH`` turns Ray's check off, and this one with it."""
    import os

    if "RAY_IGNORE_VERSION_MISMATCH" in os.environ:
        return
    ray_here, python_here = here()
    if python_level == "patch":
        python_level = os.environ.get("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", "patch")
    digits = 2 if python_level == "minor" else 3
    same_python = not cluster_python or python_here.split(".")[:digits] == cluster_python.split(".")[:digits]
    if ray_here == cluster_ray and same_python:
        return
    fixes = []
    if not same_python:
        fixes.append(f"run tuner from a Python {cluster_python} environment, as the cluster's nodes do")
    if ray_here != cluster_ray and not within_tested(cluster_ray):
        fixes.append(
            f"use a cluster of Ray {ray_here} (tuner is tested on Ray {RANGE}; the cluster's is not)"
        )
    elif ray_here != cluster_ray:
        install = f"install ray=={cluster_ray} here (pip install 'ray[default,tune]=={cluster_ray}')"
        fixes.append(install + ("" if fixes else f", or use a cluster of Ray {ray_here}"))
    fix = " and ".join(fixes)
    raise UsageError(
        f"--address {address}: the cluster runs Ray {cluster_ray} on Python {cluster_python or '?'} and this "
        f"machine Ray {ray_here} on Python {python_here}; a driver must match its cluster: {fix}"
    )


def refuse_tokenless(address: str) -> None:
    """The cluster asks for an auth token, and this machine's Ray is too old to send one."""
    ray_here, _ = here()
    raise UsageError(
        f"--address {address}: the cluster asks for an auth token, which this machine's Ray {ray_here} cannot "
        "send (Ray 2.55 and later can); a driver must match its cluster: install the head's Ray here "
        "('ray --version' on the head names it)"
    )


def check_submittable(url: str, cluster_ray: str | None) -> None:
    """A one-line refusal of a job for a cluster whose Ray tuner is not tested on."""
    if cluster_ray is None or within_tested(cluster_ray):
        return
    raise UsageError(
        f"{url}: the cluster runs Ray {cluster_ray}, and tuner is tested on Ray {RANGE} "
        f"({', '.join(TESTED)}); submit to a cluster of one of those, or install such a Ray on its nodes"
    )


_MISMATCH = re.compile(
    r"Version mismatch.*?Ray:\s*(?P<cluster_ray>\S+)\s+Python:\s*(?P<cluster_python>\S+).*?"
    r"Ray:\s*(?P<here_ray>\S+)\s+Python:\s*(?P<here_python>\S+)",
    re.S,
)


def mismatch_in(text: str) -> tuple[str, str] | None:
    """The cluster's Ray and Python versions from Ray's own version-mismatch error, None for other errors."""
    match = _MISMATCH.search(text)
    return (match.group("cluster_ray"), match.group("cluster_python")) if match else None
