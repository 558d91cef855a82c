"""Review commands: ``results``, ``export``, ``plot``, ``report``, ``compare``, ``tensorboard``, ``dashboard``,
``replay``, ``logs`` (no Ray, no torch imported).

EXPERIMENT is an experiment folder, a storage URI (s3://, gs://, file://), or a name under the storage
path (``--storage-path``, else ``TUNER_STORAGE_PATH``, else ~/tuner_results).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from tuner.cli.options import storage_path_option
from tuner.errors import UsageError


@click.command()
@click.argument("experiment")
@click.option("--top", type=click.IntRange(min=1), help="Only the K best trials.")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True
)
@storage_path_option
def results(experiment: str, top: int | None, fmt: str, storage_path: str | None) -> None:
    """Every trial of EXPERIMENT (a path, or a name under the storage path), best first."""
    from tuner import experiment as experiments
    from tuner.review.results import fates_line, render, trial_rows

    record = experiments.load(experiment, storage_path=storage_path)
    if fmt == "table":
        order = "lowest" if record.mode == "min" else "highest"
        fates = f"; {fates_line(record.fate_counts())}" if record.trials else ""
        failed = ", those that failed after those that did not" if record.failed() else ""
        click.echo(
            f"{record.path}  ({len(record.trials)} trials, ranked by each trial's best {record.metric}, {order} "
            f"first{failed}{fates})"
        )
        if record.running:
            click.echo(
                "the sweep is still running: this table is how it stands now; run tuner results again for later results"
            )
    click.echo(
        render(trial_rows(record, top, words=fmt == "table"), fmt)
    )  # a script's CSV keeps Tune's status


@click.command()
@click.argument("experiment")
@click.option(
    "--out", "out_file", type=click.Path(dir_okay=False), help="Write to FILE (.yaml/.yml or .json)."
)
@click.option(
    "--pick",
    metavar="TRIAL",
    help="Export this trial instead of the best (its id or a unique start of it; "
    "e.g. one from the Pareto front).",
)
@click.option(
    "--weights",
    metavar="NAME=W,...",
    help="Several objectives: export the front's trial with the least "
    "weighted sum of its objectives, each scaled 0-1 across the front (loss=1,latency_ms=0.5).",
)
@storage_path_option
def export(
    experiment: str, out_file: str | None, pick: str | None, weights: str | None, storage_path: str | None
) -> None:
    """The best trial's config, metric and checkpoint (or a trial you pick), ready for a training run."""
    import json
    from pathlib import Path

    import yaml

    from tuner import experiment as experiments
    from tuner.review.export import best_export

    best = best_export(experiments.load(experiment, storage_path=storage_path), pick, weights)
    if "checkpoint_note" in best:
        click.echo(f"tuner: note: {best['checkpoint_note']}", err=True)
    if out_file is None:
        click.echo(json.dumps(best, indent=2))
        return
    path = Path(out_file)
    if path.suffix.lower() in (".yaml", ".yml"):
        text = yaml.safe_dump(best, sort_keys=False)
    elif path.suffix.lower() == ".json":
        text = json.dumps(best, indent=2) + "\n"
    else:
        raise UsageError(f"--out {out_file}: use a .yaml, .yml or .json file name")
    _outside_experiments(path, out_file)
    _folder_for(path.parent, out_file)
    path.write_text(text, encoding="utf-8")
    click.echo(f"wrote {path}")


@click.command()
@click.argument("experiment")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    help="Folder for the PNGs. [default: EXPERIMENT/plots, or NAME-plots here for remote storage]",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Plot this reported metric (repeatable). [default: the trainable's learning metrics]",
)
@storage_path_option
def plot(experiment: str, out_dir: str | None, metrics: tuple[str, ...], storage_path: str | None) -> None:
    """PNG figures: each metric per epoch for every trial, the best so far, each parameter against the best."""
    from pathlib import Path

    from tuner import experiment as experiments
    from tuner import storage
    from tuner.review.plots import plot_experiment, reported_metrics

    record = experiments.load(experiment, storage_path=storage_path)
    known = set(reported_metrics(record, diagnostics=True))
    if not known or not any(t.rows for t in record.trials):
        raise UsageError(f"{record.path} has no results to plot: no trial reported a metric")
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise UsageError(f"--metric {unknown[0]}: no trial reported it; reported: {', '.join(sorted(known))}")
    if out_dir is None:  # the experiment keeps its plots in a folder of its own
        local = storage.local_path(record.path)
        out_dir = str(Path(local) / "plots") if local else f"{Path(record.path).name}-plots"
    else:
        _outside_experiments(Path(out_dir) / "plot.png", out_dir)
    _folder_for(Path(out_dir), out_dir)
    for path in plot_experiment(record, Path(out_dir), list(metrics) or None):
        click.echo(str(path))


def _outside_experiments(target: Path, out: str) -> None:
    """An --out inside an experiment is refused: its files are tuner's (an export written over its
    tuner_config.yaml left it unreadable); but for its report, which an experiment keeps as report.html."""
    from tuner.folder.names import REPORT_FILE
    from tuner.where import experiment_above

    above = experiment_above(target.parent)
    if above is not None and target.expanduser().resolve() != above / REPORT_FILE:
        raise UsageError(
            f"--out {out} is inside the experiment {above}, whose files are tuner's; write it elsewhere"
        )


def _folder_for(folder: Path, out: str) -> None:
    """The folder an --out goes into, made as needed; a path that cannot be one is refused in one line."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = next((p for p in (folder, *folder.parents) if p.exists()), folder)
        why = f"{blocking} is a file, not a folder" if blocking.is_file() else (exc.strerror or str(exc))
        raise UsageError(f"--out {out}: cannot make the folder {folder}: {why}") from None


@click.command()
@click.argument("experiment")
@click.option("--port", type=click.IntRange(1, 65535), default=6006, show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; 0.0.0.0 exposes it to the network.",
)
@storage_path_option
def tensorboard(experiment: str, port: int, host: str, storage_path: str | None) -> None:
    """Serve TensorBoard on an experiment folder until Ctrl-C."""
    from tuner import experiment as experiments
    from tuner import storage
    from tuner.review.dashboard import serve
    from tuner.where import local_folder

    if storage.local_path(experiment) is None:
        raise UsageError(
            f"TensorBoard reads a local folder and {experiment} is in remote storage: copy it down "
            "first (e.g. aws s3 sync, gsutil rsync) and pass that folder"
        )
    record = experiments.load(experiment, storage_path=storage_path)
    serve(local_folder(record.path, "TensorBoard"), host, port, click.echo)


@click.command(short_help="Every sweep of some storages in one live page, until Ctrl-C.")
@click.argument("storages", nargs=-1, metavar="[STORAGE]...")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind; any other than 127.0.0.1 asks a token of every request (printed in the URL).",
)
def dashboard(storages: tuple[str, ...], port: int, host: str) -> None:
    """Serve every experiment under the STORAGE folders or bucket URIs in one page, live, until Ctrl-C:
    their state, fates and best values, each sweep's report, and sweeps compared. [default STORAGE:
    TUNER_STORAGE_PATH, else ~/tuner_results]"""
    from tuner.review.board.server import serve
    from tuner.where import default_storage

    serve(list(storages) or [os.path.expanduser(default_storage())], host, port, click.echo)


@click.command()
@click.argument("experiment")
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False),
    help="The HTML file to write. [default: EXPERIMENT/report.html, or NAME-report.html here for remote storage]",
)
@storage_path_option
def report(experiment: str, out_file: str | None, storage_path: str | None) -> None:
    """One self-contained HTML page that explains the sweep (open it in any browser, no server needed)."""
    from pathlib import Path

    from tuner import experiment as experiments
    from tuner.review.report.page import build
    from tuner.review.report.page_file import report_path

    record = experiments.load(experiment, storage_path=storage_path)
    if out_file is None:
        out_file = str(report_path(record.path) or f"{Path(record.path).name}-report.html")
    elif not out_file.lower().endswith((".html", ".htm")):
        raise UsageError(f"--out {out_file}: use a file name ending in .html")
    _outside_experiments(Path(out_file), out_file)
    _folder_for(Path(out_file).parent, out_file)
    Path(out_file).write_text(build(record), encoding="utf-8")
    click.echo(f"wrote {out_file}")


@click.command()
@click.argument("experiments", nargs=-1, required=True)
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The figure: best so far against trials and against epochs trained [default: compare.png with the "
    "table; none with csv or json unless given].",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True
)
@storage_path_option
def compare(experiments: tuple[str, ...], out_file: str | None, fmt: str, storage_path: str | None) -> None:
    """Several sweeps of one metric side by side (e.g. one space under asha and hyperband)."""
    from pathlib import Path

    from tuner import experiment as experiments_
    from tuner.review import compare as comparing
    from tuner.review import findings
    from tuner.review.results import render

    records = [experiments_.load(ref, storage_path=storage_path) for ref in experiments]
    twice = sorted({str(r.path) for r in records if [x.path for x in records].count(r.path) > 1})
    if twice:
        raise UsageError(f"{', '.join(twice)} is given more than once; compare different sweeps")
    comparing.check_comparable(records)
    out_file = out_file or (
        "compare.png" if fmt == "table" else None
    )  # csv and json print only, unless asked
    if out_file is not None and not out_file.lower().endswith(".png"):
        raise UsageError(f"--out {out_file}: use a file name ending in .png")
    if out_file is not None:  # before anything is printed: a refusal is the one line
        _outside_experiments(Path(out_file), out_file)
        _folder_for(Path(out_file).parent, out_file)
    click.echo(render(comparing.summary_rows(records), fmt))
    path = comparing.plot(records, Path(out_file)) if out_file is not None else None
    if fmt == "table":
        named = findings.of(records[0]).reference(records)
        if named:
            ref = ", ".join(f"{name} {value:.4g}" for name, value in named.items())
            click.echo(
                f"hypervolume: each sweep's up to one reference point for all ({ref}), so they compare; each "
                "sweep's own, in its pareto.json, is up to its own"
            )
        click.echo(f"wrote {path}")


@click.command()
@click.argument("experiment")
@click.option(
    "--scheduler",
    help="The scheduler to replay the sweep under: asha, hyperband, median, fifo, bohb or freeze-thaw. "
    "[default: the sweep's own, with --searcher]",
)
@click.option("--grace-period", type=click.IntRange(min=1), help="Its grace period. [default: the sweep's]")
@click.option(
    "--reduction-factor", type=click.IntRange(min=2), help="Its reduction factor. [default: the sweep's]"
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    help="Trials at once in the replay. [default: as many as the sweep ran at once]",
)
@click.option(
    "--searcher",
    help="Propose configs with this searcher instead of the sweep's own order (only where "
    "the sweep ran every config of its space).",
)
@storage_path_option
def replay(
    experiment: str,
    scheduler: str | None,
    grace_period: int | None,
    reduction_factor: int | None,
    workers: int | None,
    searcher: str | None,
    storage_path: str | None,
) -> None:
    """What another scheduler would have done with EXPERIMENT: its recorded curves replayed in seconds (epochs and
    time saved, whether the best trial survives, which trials it stops where). Saved for `tuner report`."""
    from tuner import experiment as experiments
    from tuner import schedulers, searchers
    from tuner.replay.whatif import replay_experiment
    from tuner.review.replays import describe

    if scheduler is None and searcher is None:
        raise UsageError("give --scheduler (another scheduler), --searcher (another searcher), or both")
    if scheduler is not None and scheduler not in schedulers.REGISTRY:  # one line, before anything is read
        able = ", ".join(e.name for e in schedulers.ENTRIES if not e.takes_no_searcher)
        raise UsageError(f"unknown scheduler {scheduler!r}; a replay takes: {able}")
    if searcher not in (None, searchers.AUTO):
        searchers.entry(searcher)
    record = experiments.load(experiment, storage_path=storage_path)
    scheduler = scheduler or record.config.scheduler
    whatif = replay_experiment(
        record,
        scheduler,
        searcher=searcher,
        workers=workers,
        grace_period=grace_period,
        reduction_factor=reduction_factor,
    )
    for line in describe(whatif, record.config.scheduler):
        click.echo(line)
    click.echo(f"saved {whatif.save()} (tuner report shows it)")


@click.command()
@click.argument("experiment")
@click.argument("trial", required=False)
@click.option("--tail", "lines", type=click.IntRange(min=1), help="Only the last N lines of each stream.")
@click.option(
    "--stream",
    type=click.Choice(["stdout", "stderr", "both"]),
    default="both",
    show_default=True,
    help="Which of the trial's streams to show.",
)
@storage_path_option
def logs(
    experiment: str, trial: str | None, lines: int | None, stream: str, storage_path: str | None
) -> None:
    """What a trial printed (its stdout.log and stderr.log); without TRIAL, how much each trial printed."""
    from tuner import experiment as experiments
    from tuner.folder.names import STDERR_FILE, STDOUT_FILE
    from tuner.review.output import listing, tail

    record = experiments.load(experiment, storage_path=storage_path)
    if trial is None:
        for line in listing(record):
            click.echo(line)
        if record.trials:
            click.echo(f"show one with: tuner logs {record.path} {record.trials[0].trial_id}")
        return
    chosen = record.trial(trial)
    names = {"stdout": [STDOUT_FILE], "stderr": [STDERR_FILE], "both": [STDOUT_FILE, STDERR_FILE]}[stream]
    texts = [(name, chosen.output(name)) for name in names]
    if not any(text for _, text in texts):
        failed = f"; it failed, and its error is in {chosen.error_file}" if chosen.error_file else ""
        click.echo(
            f"trial {chosen.trial_id} printed nothing to {' or '.join(names)} ({chosen.path}){failed}",
            err=True,
        )
        return
    for name, text in texts:
        if len(names) > 1 and text:
            click.echo(f"==> {name} of trial {chosen.trial_id} <==", err=True)
        if lines is not None:
            shown = tail(text, lines)
            if shown:
                click.echo("\n".join(shown))
        elif text:
            click.echo(text, nl=not text.endswith("\n"))


COMMANDS = (results, export, plot, report, compare, tensorboard, dashboard, replay, logs)
