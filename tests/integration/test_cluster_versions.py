"""A driver whose Ray differs from its cluster's is refused before anything starts, in one line naming both.

The head runs another Ray than this process: .venv's own Ray when this process runs one of the matrix's
(tests/ray_matrix.sh), else one the matrix installed under .ray-matrix/. Stopped by its pid."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.integration.test_cluster import _free_port, _node_ports, _stop

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _other_ray() -> tuple[str, str] | None:
    """(PYTHONPATH, version) of a Ray other than this process's, or None where none is installed."""
    import ray

    here = os.environ.get("PYTHONPATH", "")
    candidates = [""] + sorted(str(p.parent) for p in (ROOT / ".ray-matrix").glob("*/.installed"))
    for path in candidates:
        if path == here:
            continue
        env = {**os.environ, "PYTHONPATH": path}
        version = subprocess.run([sys.executable, "-c", "import ray; print(ray.__version__)"], env=env,
                                 capture_output=True, text=True, cwd="/").stdout.strip()  # fmt: skip
        if version and version != ray.__version__:
            return path, version
    return None


def test_a_sweep_on_a_cluster_of_another_ray_is_refused_in_one_line(tmp_path):
    import ray

    from tuner.ray_compat.cluster import sends_tokens

    other = _other_ray()
    if other is None:
        pytest.skip("no other Ray installed (make test-ray-matrix installs them under .ray-matrix/)")
    path, version = other
    temp = tempfile.mkdtemp(prefix="tv", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    gcs = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_MODE")}
    head_env = {**env, "PYTHONPATH": path}
    head = subprocess.Popen(
        [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start", "--head", "--block",
         "--node-ip-address=127.0.0.1", f"--port={gcs}", "--include-dashboard=false",
         f"--ray-client-server-port={_free_port()}", "--num-cpus=1", f"--temp-dir={temp}", *_node_ports()],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=head_env, start_new_session=True, cwd="/",
    )  # fmt: skip
    try:
        deadline = time.time() + 90
        while True:
            assert head.poll() is None, "the Ray head exited"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", gcs)) == 0:
                    break
            assert time.time() < deadline, "the Ray head never listened"
            time.sleep(1)
        time.sleep(3)  # its metadata lands in the GCS just after the port opens
        result = subprocess.run(
            [sys.executable, "-m", "tuner", "sweep", "--space", "cifar_small", "--dataset", "synthetic",
             "--num-samples", "1", "--max-epochs", "1", "--address", f"127.0.0.1:{gcs}",
             "--storage-path", str(tmp_path), "--name", "other"],
            capture_output=True, text=True, timeout=120, env=env, cwd=ROOT,
        )  # fmt: skip
    finally:
        _stop(head)
        shutil.rmtree(temp, ignore_errors=True)
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    if sends_tokens() or "asks for an auth token" not in lines[0]:
        assert lines[0].startswith(f"tuner: error: --address 127.0.0.1:{gcs}: the cluster runs Ray {version} on Python")
        assert f"this machine Ray {ray.__version__} on Python" in lines[0]
    else:  # a Ray too old for token authentication cannot even ask a newer head its version
        assert lines[0] == (
            f"tuner: error: --address 127.0.0.1:{gcs}: the cluster asks for an auth token, which this machine's Ray "
            f"{ray.__version__} cannot send (Ray 2.55 and later can); a driver must match its cluster: install the "
            "head's Ray here ('ray --version' on the head names it)"
        )
    assert not (tmp_path / "other").exists(), "nothing is written for a refused sweep"
