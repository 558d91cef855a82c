"""Ray's token authentication from the client side: find the token and send it; never turn auth off."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TOKEN_HELP = (
    "the cluster requires its auth token: set RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH), or copy the head's "
    "~/.ray/auth_token to this machine ('ray get-auth-token' on the head prints it)"
)


def token_available(environ: Mapping[str, str] = os.environ) -> bool:
    if environ.get("RAY_AUTH_TOKEN"):
        return True
    path = environ.get("RAY_AUTH_TOKEN_PATH")
    if path:
        return Path(path).expanduser().is_file()
    return (Path.home() / ".ray" / "auth_token").is_file()


def enable_token_auth() -> None:
    """Send the token with every request when one is available and the mode was not chosen explicitly.

    Ray enables tokens by itself only for clusters it starts; a client joining an existing cluster
    (``ray.init(address=...)``, the job API) must opt in.
    """
    if "RAY_AUTH_MODE" not in os.environ and token_available():
        os.environ["RAY_AUTH_MODE"] = "token"
        from tuner.ray_compat.cluster import reread_auth_mode

        reread_auth_mode()  # Ray read its configuration when first imported


def looks_like_auth_failure(text: str) -> bool:
    lowered = text.lower()
    return any(
        s in lowered for s in ("401", "authentication required", "invalidauthtoken", "unauthenticated")
    )
