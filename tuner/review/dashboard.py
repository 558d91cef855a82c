"""``tuner tensorboard``: TensorBoard over an experiment folder, on 127.0.0.1 unless asked otherwise."""

from __future__ import annotations

import errno
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tuner.errors import TunerError, UsageError


def tensorboard_command(folder: Path, host: str, port: int) -> list[str]:
    code = "import sys; from tensorboard.main import run_main; sys.argv[0] = 'tensorboard'; run_main()"
    return [sys.executable, "-c", code, "--logdir", str(folder), "--host", host, "--port", str(port)]


def port_free(host: str, port: int) -> None:
    """A one-line error, before anything starts, when something already listens on ``host:port``."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.bind((host, port))
        except socket.gaierror as exc:  # not the port's doing: the host is no address of this machine
            raise UsageError(
                f"--host {host}: not an address this machine can listen on ({exc.strerror or exc})"
            ) from None
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:
                raise UsageError(
                    f"--host {host}: not an address this machine can listen on ({exc.strerror})"
                ) from None
            raise UsageError(
                f"port {port} on {host} is in use ({exc.strerror or exc}); pass another --port"
            ) from None


def _wait_until_listening(proc: subprocess.Popen, host: str, port: int, timeout: float = 60.0) -> None:
    """Announce the URL only once TensorBoard answers there (it can still fail while it loads)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)


def serve(folder: Path, host: str, port: int, out: Callable[[str], None]) -> int:
    """Run TensorBoard until Ctrl-C (or SIGTERM), then stop it and return 0."""
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        raise TunerError("TensorBoard is not installed; pip install tensorboard") from None
    port_free(host, port)

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    # Ctrl-C or SIGTERM at any moment from here on, even while TensorBoard is still loading, stops it:
    # a signal that came before the URL was printed would otherwise leave it serving with no parent. SIGINT is
    # taken here too, not left to Python: a process started in the background by a script inherits SIGINT
    # ignored, and Python then never turns Ctrl-C into KeyboardInterrupt.
    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    proc = None
    try:
        proc = subprocess.Popen(
            tensorboard_command(folder, host, port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _wait_until_listening(proc, host, port)
        # Opened with smoothing off: a trial's curve has a handful of epochs, and the default smoothing (0.6)
        # drags short curves towards their first value.
        out(f"TensorBoard for {folder} at http://{host}:{port}/?smoothing=0#timeseries (Ctrl-C stops it)")
        while proc.poll() is None:
            time.sleep(0.2)
        error = (
            (proc.stderr.read() or b"").decode(errors="replace").strip().splitlines() if proc.stderr else []
        )
        raise TunerError(
            f"TensorBoard exited with code {proc.returncode}: {error[-1] if error else 'no message'}"
        )
    except KeyboardInterrupt:
        if proc is not None:
            _stop(proc)
        out("TensorBoard stopped")
        return 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
