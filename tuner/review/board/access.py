"""Who may ask the dashboard: anyone on this machine at 127.0.0.1, and on any other address only with its token.

On 127.0.0.1 a request must also name this machine in its ``Host`` header, so a web page elsewhere cannot
read the dashboard through a name it points at 127.0.0.1 (DNS rebinding). On another address the token,
made afresh at each start and printed in the URL as Jupyter prints its own, is asked of every request: in
the URL (``?token=``), or in the cookie the first such visit sets, or as ``Authorization: token TOKEN``.
"""

from __future__ import annotations

import hmac
import secrets

LOOPBACK = "127.0.0.1"
COOKIE = "tuner_dashboard_token"
_LOCAL_NAMES = ("127.0.0.1", "localhost")


def needs_token(host: str) -> bool:
    return host != LOOPBACK


def new_token() -> str:
    return secrets.token_urlsafe(24)


def url(host: str, port: int, token: str | None) -> str:
    """The address to open, token included where one is needed."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def given_token(query: str | None, cookie: str | None, authorization: str | None) -> str | None:
    """The token a request carries, wherever it carries it."""
    if query:
        return query
    if authorization and authorization.lower().startswith("token "):
        return authorization[6:].strip()
    return cookie


def allowed(token: str | None, given: str | None) -> bool:
    """Whether a request may be answered: no token asked, or the right one given (compared in constant time)."""
    if token is None:
        return True
    return given is not None and hmac.compare_digest(token.encode(), given.encode())


def local_host_header(host_header: str | None) -> bool:
    """Whether a request to the loopback address names this machine (``127.0.0.1:PORT``, ``localhost``)."""
    if not host_header:
        return False
    name = host_header.rsplit(":", 1)[0] if not host_header.endswith("]") else host_header
    return name in _LOCAL_NAMES
