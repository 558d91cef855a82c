"""Where a test tier's time goes: each test module's wall seconds and the CPU seconds the whole box was busy
meanwhile, one pytest process (no xdist), so what the box did during a test is that test's (its Ray's trial
workers, daemons and children included, which no per-process clock of pytest sees).

Prints the modules by wall time, then four groups (the forms, the scheduler x searcher matrix, the other
integration tests, the unit tests) and the floor they set on the tier with two pytest processes: the busy CPU
seconds over the box's cores, which no split of the tests can beat on a box the tier keeps busy. Pass the
tier's marker expression (default: the fast tier) and ``--out FILE`` to keep the per-test lines (JSON).

    python benchmarks/bench_test_tiers.py                # the fast tier, about 6 minutes on 2 cores
    python benchmarks/bench_test_tiers.py -m slow --out /tmp/slow.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def box_seconds() -> tuple[float, float]:
    """CPU seconds the whole box has been busy and idle since it started (all cores together)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle and waiting on I/O
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / hz, idle / hz


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """The plugin side: one JSON line a test (setup, call and teardown together) to ``TIER_COST_OUT``."""
    busy, idle = box_seconds()
    started = time.monotonic()
    yield
    busy_after, idle_after = box_seconds()
    line = {
        "test": item.nodeid,
        "wall": time.monotonic() - started,
        "busy": busy_after - busy,
        "idle": idle_after - idle,
    }
    with open(os.environ["TIER_COST_OUT"], "a") as out:
        out.write(json.dumps(line) + "\n")


def group(module: str) -> str:
    if module.startswith("tests/conformance/"):
        return "forms"
    if module.endswith("/test_matrix.py"):
        return "matrix (real Ray)"
    return "integration, other" if module.startswith("tests/integration/") else "unit"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-m", dest="marks", default="not slow", help="the tier's marker expression")
    parser.add_argument("--out", help="keep the per-test JSON lines here")
    args = parser.parse_args()
    if args.out:
        out = args.out
        Path(out).unlink(missing_ok=True)
    else:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", prefix="tier-cost-", delete=False) as kept:
            out = kept.name
    env = {
        **os.environ,
        "TIER_COST_OUT": out,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "benchmarks"), str(ROOT)]),
    }
    started = time.monotonic()
    command = [sys.executable, "-m", "pytest", "tests", "-m", args.marks, "-q", "-p", "bench_test_tiers",
               "-p", "no:cacheprovider"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.monotonic() - started
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "(no pytest output)")
    rows = [json.loads(line) for line in Path(out).read_text().splitlines()]
    cores = os.cpu_count() or 1
    print(f"# tier -m {args.marks!r}: {len(rows)} tests, {wall:.0f} s wall in one pytest process; {platform.machine()}, "
          f"{cores} CPUs, Python {platform.python_version()}")  # fmt: skip
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for row in rows:
        entry = modules[row["test"].split("::")[0]]
        entry[0] += row["wall"]
        entry[1] += row["busy"]
        entry[2] += row["idle"]
        entry[3] += 1
    print(f"{'wall s':>8} {'busy CPU s':>10} {'idle CPU s':>10} {'tests':>5}  module")
    for name, (w, b, i, n) in sorted(modules.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f"{w:8.1f} {b:10.1f} {i:10.1f} {n:5d}  {name}")
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for name, (w, b, _, n) in modules.items():
        entry = groups[group(name)]
        entry[0] += w
        entry[1] += b
        entry[2] += n
    print(
        "\n# by group: wall s, busy CPU s, tests, and the floor the group alone sets on two pytest processes"
    )
    for name, (w, b, n) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:20s} {w:7.1f} {b:8.1f} {n:5d}   >= {b / cores:6.1f} s")
    total = sum(b for _, b, _ in groups.values())
    print(
        f"{'all':20s} {sum(w for w, _, _ in groups.values()):7.1f} {total:8.1f} {len(rows):5d}   >= {total / cores:6.1f} s"
    )


if __name__ == "__main__":
    main()
