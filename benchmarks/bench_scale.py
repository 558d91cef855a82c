"""Scale: a sweep's cost per trial from 100 to thousands of instant trials, side by side with raw Ray Tune,
and how long the review of a large experiment takes.

``--sizes``: for each size, FIFO + random over instant trials (three reports of a formula, no work) through
``tuner sweep``'s runner and through Ray Tune's own ``Tuner.fit`` (verbose 0, and with ``--sides`` also
with Ray's default progress output), each run in a fresh process of its own with
its own local Ray (2 CPUs, 1 a trial, actors reused), the sides alternating which goes first, ``--rounds``
times. Printed: each run's wall seconds of the fit (Ray's start and the imports not counted), the cost per
trial (wall / trials) with min / median / max per side, the marginal cost per trial between sizes (the
difference of median walls over the difference of trials: the start of a sweep cancels out), and the
driver's resident memory, sampled from outside the process every second: when its experiment held 1,000 trial
folders, when it held all of them (the sweep before its summary), and last before it exited.

``--review EXP``: ``tuner results``, ``tuner.load(EXP).trials``, ``tuner report`` (and the page's size) and
``tuner replay --scheduler asha`` on an experiment, ``--rounds`` times each, min / median / max.
``--make N --storage DIR``: first make such an experiment (``tuner sweep`` of N instant trials, three epochs).

    python benchmarks/bench_scale.py --sizes 100,400,1600,6400 --rounds 3
    python benchmarks/bench_scale.py --sizes 100,400,1600,6400 --sides raw,tuner,raw-reporter
    python benchmarks/bench_scale.py --make 10000 --storage /tmp/scale --review /tmp/scale/scale-10000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SPACE = '''"""Instant trials: three reports of a formula, no work."""
from ray import tune

from tuner import SearchSpace


def instant(config, *, max_epochs=3):
    for epoch in range(1, max_epochs + 1):
        tune.report({"loss": (config["x"] - 0.3) ** 2 + 1.0 / epoch})


SPACE = SearchSpace(params={"x": tune.uniform(0, 1)}, trainable=instant, metric="loss", mode="min")
'''
MEMORY_AT = 1000  # trials in the experiment when the driver's memory is read the first time


def instant(config: dict) -> None:
    from ray import tune

    for epoch in range(1, 4):
        tune.report({"loss": (config["x"] - 0.3) ** 2 + 1.0 / epoch})


def child(side: str, trials: int, storage: str, name: str) -> None:
    """One run, in this process: prints the fit's wall seconds as JSON."""
    import ray

    from tuner.launch.placement.cluster import prepare_environment

    prepare_environment()
    if side == "raw-reporter":  # what a user who sets nothing gets: Ray's default output engine, which
        os.environ.pop("RAY_AIR_NEW_OUTPUT", None)  # tuner's environment turns off for its own table
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    if side.startswith("raw"):
        from ray import tune

        # "raw": verbose 0, nothing printed; "raw-reporter": Ray's default progress output, as a user who sets
        # nothing gets it (printed into a buffer here, as the tuner side's table is)
        quiet = {"verbose": 0} if side == "raw" else {}
        tuner = tune.Tuner(
            instant,
            param_space={"x": tune.uniform(0, 1)},
            tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=trials, reuse_actors=True),
            run_config=tune.RunConfig(name=name, storage_path=storage, **quiet),
        )
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            results = tuner.fit()
        wall = time.perf_counter() - started
        assert len(results) == trials and not results.errors
    else:
        from tuner.launch.resolve import resolve
        from tuner.launch.runner import run_sweep

        space = Path(storage, "instant_space.py")
        space.write_text(SPACE)
        config = resolve({"space": str(space), "num_samples": trials, "max_epochs": 3, "scheduler": "fifo",
                          "searcher": "random", "storage_path": storage, "name": name,
                          "cpus_per_trial": 1})  # fmt: skip
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            summary = run_sweep(config, out=lambda line: None)
        wall = time.perf_counter() - started
        assert summary is not None and summary.trials == trials and not summary.failed
    print(json.dumps({"wall": wall}), flush=True)


def _rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _trial_folders(folder: Path) -> int:
    try:
        return sum(1 for entry in os.scandir(folder) if entry.is_dir())
    except OSError:
        return 0


def one_run(side: str, trials: int, storage: str) -> dict[str, float]:
    """A run in a process of its own, watched from here: its wall seconds and its memory (MiB)."""
    name = f"{side}-{trials}-{time.time_ns()}"
    process = subprocess.Popen(
        [sys.executable, __file__, "--child", side, str(trials), storage, name],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    at_thousand = at_all = last = None
    while process.poll() is None:
        rss = _rss_kb(process.pid)
        if rss is not None:
            last = rss
            folders = _trial_folders(Path(storage, name))
            if at_thousand is None and folders >= MEMORY_AT:
                at_thousand = rss
            if at_all is None and folders >= trials:
                at_all = rss
        time.sleep(1.0)
    out = process.stdout.read() if process.stdout else ""
    if process.returncode != 0:
        raise SystemExit(f"{side} run of {trials} trials failed (exit {process.returncode})")
    return {
        "wall": json.loads(out.strip().splitlines()[-1])["wall"],
        "rss_at_1000": (at_thousand or 0) / 1024,
        "rss_at_all": (at_all or 0)
        / 1024,  # when the last trial has its folder: the sweep, before its summary
        "rss_end": (last or 0) / 1024,
    }


def sizes(counts: list[int], rounds: int, sides: list[str]) -> None:
    print(f"# instant trials (three reports each), fifo + random, 2 CPUs, 1 a trial, actors reused; each run a "
          f"process and a Ray of its own; {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}; sides: {', '.join(sides)} (raw: Ray Tune's Tuner with verbose 0; "
          "raw-reporter: with Ray's default progress output)")  # fmt: skip
    print(f"{'trials':>7} {'round':>5} " + " ".join(f"{side + ' s':>14} {'ms/trial':>9} {'MiB (1k / all / end)':>21}"
                                                   for side in sides))  # fmt: skip
    walls: dict[tuple[str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as storage:
        for n in counts:
            for round_ in range(1, rounds + 1):
                shift = (round_ - 1) % len(sides)  # each side goes first in turn
                got = {side: one_run(side, n, storage) for side in sides[shift:] + sides[:shift]}
                for side, run in got.items():
                    walls.setdefault((side, n), []).append(run["wall"])

                def mib(run: dict[str, float]) -> str:
                    at = f"{run['rss_at_1000']:.0f}" if run["rss_at_1000"] else "-"
                    return f"{at} / {run['rss_at_all']:.0f} / {run['rss_end']:.0f}"

                print(f"{n:>7} {round_:>5} " + " ".join(
                    f"{got[side]['wall']:>14.1f} {1000 * got[side]['wall'] / n:>9.1f} {mib(got[side]):>21}"
                    for side in sides), flush=True)  # fmt: skip
    base = sides[0]
    print(f"\n# cost per trial, ms (wall / trials): min / median / max; each side's median against {base}'s")
    for n in counts:
        line = []
        for side in sides:
            per = [1000 * w / n for w in walls[(side, n)]]
            ratio = statistics.median(walls[(side, n)]) / statistics.median(walls[(base, n)])
            line.append(f"{side} {min(per):.1f} / {statistics.median(per):.1f} / {max(per):.1f} ({ratio:.2f}x)")
        print(f"{n:>7}: " + "; ".join(line))
    print("\n# marginal cost per trial between sizes, ms (difference of median walls / difference of trials)")
    for a, b in zip(counts, counts[1:], strict=False):
        parts = []
        for side in sides:
            marginal = (statistics.median(walls[(side, b)]) - statistics.median(walls[(side, a)])) / (b - a)
            parts.append(f"{side} {1000 * marginal:.1f}")
        print(f"{a:>6} -> {b:<6}: " + "; ".join(parts))
    if len(counts) >= 3:
        for side in sides:
            med = {n: statistics.median(walls[(side, n)]) for n in counts}
            first = (med[counts[1]] - med[counts[0]]) / (counts[1] - counts[0])
            last = (med[counts[-1]] - med[counts[-2]]) / (counts[-1] - counts[-2])
            print(f"{side}: the last step's marginal cost is {last / first:.2f}x the first's")


def make(trials: int, storage: str, interrupt_at: int | None = None) -> str:
    """An experiment of ``trials`` instant trials made by ``tuner sweep``: its folder. With ``interrupt_at``,
    the sweep gets a Ctrl-C (SIGINT to its process group, as a terminal sends it) once that many trials have
    folders, how long it took to end is printed, and ``tuner resume`` finishes it."""
    Path(storage).mkdir(parents=True, exist_ok=True)
    space = Path(storage, "instant_space.py")
    space.write_text(SPACE)
    name = f"scale-{trials}"
    folder = Path(storage, name)
    started = time.perf_counter()
    command = [sys.executable, "-m", "tuner", "sweep", "--space", str(space), "--scheduler", "fifo", "--searcher",
               "random", "--num-samples", str(trials), "--max-epochs", "3", "--storage-path", storage, "--name",
               name]  # fmt: skip
    if interrupt_at is None:
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    else:
        sweep = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                 start_new_session=True)  # fmt: skip
        while sweep.poll() is None and _trial_folders(folder) < interrupt_at:
            time.sleep(0.5)
        asked = time.perf_counter()
        os.killpg(sweep.pid, signal.SIGINT)
        _, err = sweep.communicate()
        said = [line for line in err.splitlines() if line.strip()][-2:]
        print(f"# Ctrl-C at {_trial_folders(folder)} trial folders ({asked - started:.0f} s in): ended in "
              f"{time.perf_counter() - asked:.1f} s, exit code {sweep.returncode}; it said: {' | '.join(said)}")
        resumed = time.perf_counter()
        subprocess.run([sys.executable, "-m", "tuner", "resume", str(folder)], check=True,
                       stdout=subprocess.DEVNULL, cwd=ROOT)  # fmt: skip
        print(f"# tuner resume finished it in {time.perf_counter() - resumed:.0f} s")
    print(f"# made {folder}: {trials} trials in {time.perf_counter() - started:.0f} s, "
          f"{_trial_folders(folder)} trial folders")
    return str(folder)


def interrupt_raw(trials: int, storage: str, interrupt_at: int) -> None:
    """The same Ctrl-C to raw Ray Tune (verbose 0) running the same trials: how long its end takes, beside
    tuner's. Its ``fit`` returns a grid of the trials so far; the child's own check of a whole run then fails,
    which is no part of the time."""
    name = f"raw-interrupted-{time.time_ns()}"
    started = time.perf_counter()
    run = subprocess.Popen([sys.executable, __file__, "--child", "raw", str(trials), storage, name],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    while run.poll() is None and _trial_folders(Path(storage, name)) < interrupt_at:
        time.sleep(0.5)
    asked = time.perf_counter()
    os.killpg(run.pid, signal.SIGINT)
    run.wait()
    print(f"# raw Ray Tune: Ctrl-C at {_trial_folders(Path(storage, name))} trial folders ({asked - started:.0f} s "
          f"in): ended in {time.perf_counter() - asked:.1f} s")  # fmt: skip


LOAD = "import sys, time; import tuner; s = time.perf_counter(); n = len(tuner.load(sys.argv[1]).trials); print(time.perf_counter() - s, n)"


def review(folder: str, rounds: int) -> None:
    count = _trial_folders(Path(folder))
    print(f"# review of {folder} ({count} trial folders); {platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}")  # fmt: skip
    page = Path(tempfile.mkdtemp()) / "report.html"
    steps = {
        "tuner results (command)": [sys.executable, "-m", "tuner", "results", folder],
        "tuner.load(...).trials (in Python)": [sys.executable, "-c", LOAD, folder],
        "tuner report (command)": [sys.executable, "-m", "tuner", "report", folder, "--out", str(page)],
        "tuner replay --scheduler asha (command)": [
            sys.executable,
            "-m",
            "tuner",
            "replay",
            folder,
            "--scheduler",
            "asha",
        ],  # fmt: skip
    }
    for label, command in steps.items():
        took = []
        for _ in range(rounds):
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
            wall = time.perf_counter() - started
            if done.returncode != 0:
                raise SystemExit(f"{label} failed: {done.stderr.strip().splitlines()[-1:]}")
            took.append(float(done.stdout.split()[0]) if label.startswith("tuner.load") else wall)
        size = f"; page {page.stat().st_size / 2**20:.1f} MiB" if "report" in label else ""
        print(f"{label:<42} {min(took):6.1f} / {statistics.median(took):6.1f} / {max(took):6.1f} s{size}",
              flush=True)  # fmt: skip


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="trial counts, comma-separated (100,400,1600,6400)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sides", default="raw,tuner", help="with --sizes, comma-separated: raw (Ray Tune, verbose "
                        "0), tuner (tuner sweep as shipped), raw-reporter (Ray Tune with its default progress "
                        "output); ratios are against the first")  # fmt: skip
    parser.add_argument("--make", type=int, metavar="N", help="first make an experiment of N instant trials")
    parser.add_argument("--interrupt-at", type=int, metavar="K",
                        help="with --make: Ctrl-C the sweep at K trials, time its end, then resume it; with "
                        "raw among --sides, first the same Ctrl-C to raw Ray Tune")
    parser.add_argument("--storage", default=tempfile.gettempdir(), help="where --make puts it")
    parser.add_argument("--review", metavar="EXP", help="time the review of this experiment")
    args = parser.parse_args()
    if args.sizes:
        sides = args.sides.split(",")
        if unknown := set(sides) - {"raw", "tuner", "raw-reporter"}:
            parser.error(f"unknown side(s): {', '.join(sorted(unknown))}")
        if len(set(sides)) < len(sides):
            parser.error("each side once")
        sizes([int(n) for n in args.sizes.split(",")], args.rounds, sides)
    if args.make and args.interrupt_at and "raw" in args.sides.split(","):
        interrupt_raw(args.make, args.storage, args.interrupt_at)
    folder = make(args.make, args.storage, args.interrupt_at) if args.make else args.review
    if folder:
        review(folder, args.rounds)
    if not (args.sizes or folder):
        parser.error("give --sizes, --review or --make")


if __name__ == "__main__":
    main()
