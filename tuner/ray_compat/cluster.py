"""Ray 2.60 behaviour tuner works around (see tuner/ray_compat/__init__.py for the index).

15. Reading an address as Ray would (Ray 2.60): ``ray.init(address=...)`` retries an address where no
cluster answers for minutes. tuner checks first, so it must read "auto", HOST:PORT, RAY_ADDRESS and the last
``ray start`` on this machine exactly as Ray does: ``ray._private.services.canonicalize_bootstrap_address``.
16. Token authentication for a client (Ray 2.60): Ray reads RAY_AUTH_MODE once, when first imported, into
its C++ configuration; a client that turns token mode on afterwards makes ``ray._raylet.Config`` read it again.
"""

from __future__ import annotations


def bootstrap_address(address: str) -> str | None:
    """HOST:PORT of the cluster ``address`` names, as Ray reads it; None when none is running here."""
    from ray._private.services import canonicalize_bootstrap_address

    return canonicalize_bootstrap_address(address)


def reread_auth_mode() -> None:
    from ray._raylet import Config  # type: ignore[attr-defined]

    Config.initialize("")
