"""A real S3 API on 127.0.0.1 for tests: moto's server, started by the test, reached through a TCP proxy the test
owns, so it can take the store away (connections cut, new ones refused), bring it back, or slow it down."""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def moto_server() -> Iterator[int]:
    """moto's S3 server in a process of its own; yields its port, stops it after."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto's server did not start (exit code {server.poll()})")
            time.sleep(0.1)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def make_bucket(endpoint: str, name: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")  # fmt: skip
    client.create_bucket(Bucket=name)


@dataclass
class Proxy:
    """Forwards 127.0.0.1:``port`` to ``target``. ``down()`` cuts every connection and refuses new ones until
    ``up()``; ``delay`` holds each chunk a client sends that many seconds before passing it on (a slow store)."""

    target: int
    port: int = field(default_factory=free_port)
    delay: float = 0.0
    _listener: socket.socket | None = None
    _open: set[socket.socket] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False

    def __post_init__(self) -> None:
        self.up()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections (nothing listens) and cut the open ones."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            for sock in list(self._open):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def close(self) -> None:
        self._closed = True
        self.down()

    @contextlib.contextmanager
    def outage(self, seconds: float) -> Iterator[None]:
        """Down now, up again ``seconds`` later in the background; waits for it to be up again on exit."""
        self.down()
        timer = threading.Timer(seconds, self.up)
        timer.start()
        try:
            yield
        finally:
            timer.join()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    client.close()
                    server.close()
                    return
                self._open.update((client, server))
            threading.Thread(target=self._pipe, args=(client, server), daemon=True).start()

    def _pipe(self, client: socket.socket, server: socket.socket) -> None:
        ends = {client: server, server: client}
        try:
            while True:
                readable, _, _ = select.select(list(ends), [], [], 1.0)
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is client and self.delay:
                        time.sleep(self.delay)
                    ends[sock].sendall(data)
        except (OSError, ValueError):
            return
        finally:
            with self._lock:
                self._open.discard(client)
                self._open.discard(server)
            for sock in (client, server):
                with contextlib.suppress(OSError):
                    sock.close()


@contextlib.contextmanager
def bucket_behind_proxy(name: str = "sweeps") -> Iterator[Proxy]:
    """A bucket ``name`` on moto's server behind a proxy; the AWS variables of this process point at the proxy
    while the block runs (pyarrow reads AWS_ENDPOINT_URL), and so do those of the processes it starts."""
    with moto_server() as port:
        make_bucket(f"http://127.0.0.1:{port}", name)
        proxy = Proxy(port)
        saved = {key: os.environ.get(key) for key in [*CREDENTIALS, "AWS_ENDPOINT_URL"]}
        os.environ.update(CREDENTIALS, AWS_ENDPOINT_URL=proxy.endpoint)
        try:
            yield proxy
        finally:
            proxy.close()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
