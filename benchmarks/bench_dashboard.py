"""The dashboard at the sizes teams reach: an index of hundreds of experiments and the page of a large sweep,
timed through the real server (``tuner dashboard`` in a process of its own, asked over HTTP as a browser asks).

``--experiments N``: one real sweep (``tuner sweep`` of 4 instant trials, 3 epochs), copied to N experiment
folders under one storage. Each round starts a fresh dashboard and times its start until it serves (the
interpreter, the imports and the first reading of every experiment, which it does before it says where it
serves), then ``GET /`` (the index page) three ways: the first, again with nothing changed (what is unchanged is not re-read), and
after one experiment gained a trial result (only it is read again).

``--sweep EXP``: the page of one experiment (``bench_scale.py --make 10000`` makes a 10,000-trial one): the
first ``GET`` of its page (the report drawn), and again unchanged (the drawn page served), with its size.

Each figure is min / median / max over ``--rounds`` fresh servers, with the machine printed above them.

    python benchmarks/bench_dashboard.py --experiments 500 --rounds 3
    python benchmarks/bench_dashboard.py --sweep /tmp/scale/scale-10000 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import make  # noqa: E402  (after the path, as the other benchmarks do)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Board:
    """``tuner dashboard STORAGE`` running in its own process."""

    def __init__(self, storage: str) -> None:
        port = _port()
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tuner", "dashboard", storage, "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
        )  # fmt: skip
        announced = [self.proc.stdout.readline() for _ in range(2)]  # type: ignore[union-attr]
        self.url = next(line.split()[1] for line in announced if line.startswith("open ")).rstrip("/")
        self.ready_s = time.perf_counter() - started  # Python's start, the imports and the first scan

    def get(self, path: str) -> tuple[float, int]:
        """Seconds until the whole answer came, and its size in bytes."""
        started = time.perf_counter()
        with urllib.request.urlopen(self.url + path, timeout=600) as response:
            body = response.read()
        return time.perf_counter() - started, len(body)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f} s"


def _one_more_result(folder: Path) -> None:
    """A trial of the experiment reports once more, as a running sweep's trial would (a line appended)."""
    trial = next(p for p in sorted(folder.iterdir()) if (p / "result.json").exists())
    lines = (trial / "result.json").read_text().splitlines()
    with open(trial / "result.json", "a") as out:
        out.write(lines[-1] + "\n")


SCAN = (
    "import sys, time; from tuner.review.board.catalog import Catalog; c = Catalog([sys.argv[1]]); "
    "s = time.perf_counter(); c.rows(); print(time.perf_counter() - s)"
)


def index(experiments: int, rounds: int) -> None:
    storage = Path(tempfile.mkdtemp(prefix="board-"))
    first = Path(make(4, str(storage / "made")))
    for n in range(experiments):
        shutil.copytree(first, storage / "store" / f"sweep-{n:04d}")
    print(f"# index of {experiments} experiments (copies of one 4-trial sweep) under {storage / 'store'}")
    times: dict[str, list[float]] = {"first": [], "unchanged": [], "one changed": []}
    ready, scans = [], []
    for _ in range(rounds):
        scan = subprocess.run([sys.executable, "-c", SCAN, str(storage / "store")], capture_output=True, text=True,
                              cwd=ROOT, check=True)  # fmt: skip
        scans.append(float(scan.stdout.split()[-1]))
        board = Board(str(storage / "store"))
        ready.append(board.ready_s)
        try:
            took, size = board.get("/")
            times["first"].append(took)
            times["unchanged"].append(board.get("/")[0])
            _one_more_result(storage / "store" / "sweep-0000")
            times["one changed"].append(board.get("/")[0])
        finally:
            board.stop()
    print(f"the first reading of every experiment (the catalog alone, imports done): {_spread(scans)}")
    print(f"started until it serves (the interpreter, the imports and that first reading): {_spread(ready)}")
    for what, values in times.items():
        print(f"GET / ({what}): {_spread(values)}  (page {size / 1e6:.2f} MB)")
    shutil.rmtree(storage, ignore_errors=True)


def sweep_page(folder: str, rounds: int) -> None:
    trials = sum(1 for p in Path(folder).iterdir() if p.is_dir())
    print(f"# the page of {folder} ({trials} trial folders)")
    path = "/sweep/0/" + urllib.parse.quote(Path(folder).name, safe="")
    first: list[float] = []
    again: list[float] = []
    for _ in range(rounds):
        board = Board(str(Path(folder).parent))
        try:
            took, size = board.get(path)
            first.append(took)
            again.append(board.get(path)[0])
        finally:
            board.stop()
    print(f"GET its page (first: the report drawn): {_spread(first)}  (page {size / 1e6:.1f} MB)")
    print(f"GET its page (unchanged: as drawn): {_spread(again)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiments", type=int, help="time the index of this many experiments")
    parser.add_argument("--sweep", help="time the page of this experiment folder")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not args.experiments and not args.sweep:
        parser.error("give --experiments N or --sweep EXP")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    print(f"# {cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    if args.experiments:
        index(args.experiments, args.rounds)
    if args.sweep:
        sweep_page(args.sweep, args.rounds)


if __name__ == "__main__":
    main()
