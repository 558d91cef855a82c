"""The experiments under the dashboard's storages, each summed up in one row, read again only when it changed.

Every experiment is read through the one reader (tuner/experiment.py) and counted by its fates as
``tuner results`` counts them; nothing here writes to a storage or takes a claim. A row is kept until the
experiment's signature changes: the size and time of its files (what Ray and tuner append to as results come),
the files the driver keeps beside it, and whether a live process holds it. An index of hundreds of finished
sweeps is then a few stats each, not hundreds of reads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, field

from tuner import storage
from tuner.experiment import ExperimentRecord
from tuner.folder.names import BEST_FILE, CONFIG_FILE, FATES_SIDECAR, SPENT_SIDECAR, STATUS_SIDECAR

RUNNING, INTERRUPTED, FINISHED, FAILED, UNREADABLE = (
    "running",
    "interrupted",
    "finished",
    "failed",
    "unreadable",
)
STATES = (RUNNING, INTERRUPTED, FINISHED, FAILED, UNREADABLE)
# a running sweep is read again at most this often, however often the page asks
LIVE_EVERY_S = 3.0
RECORDS_KEPT = (
    16  # experiments whose last reading is kept whole, for their pages (a large one holds tens of MB)
)
_TRIAL_FILES = ("progress.csv", "result.json")  # what a trial appends to at each result


@dataclass(frozen=True)
class Sweep:
    """One experiment folder found under a storage: ``key`` names it in the dashboard's addresses."""

    key: str  # "STORAGE_INDEX/FOLDER_NAME"
    name: str
    folder: str


@dataclass
class Row:
    """What the index shows of one experiment."""

    sweep: Sweep
    state: str
    space: str = ""
    scheduler: str = ""
    searcher: str = ""
    metric: str = ""
    mode: str = ""
    trials: int = 0
    planned: int | None = None  # the trials the sweep plans (--num-samples); None where a budget ends it
    grows: bool = True  # --num-samples can grow it (a grid's or PBT's trials were all made at its start)
    fates: dict[str, int] = field(default_factory=dict)
    best: float | None = None
    front: int | None = None  # the Pareto front's size, with several objectives
    started: float | None = None  # seconds since the epoch
    wall: float = 0.0
    epochs: int = 0
    problem: str = ""  # why an unreadable experiment could not be read


def state_of(record: ExperimentRecord, running: bool) -> str:
    """running (its driver is alive), interrupted (open trials, or it never wrote its summary: ``tuner resume``
    continues it), failed (every trial that ended errored, none reported a value), else finished."""
    from tuner.folder.fates import kind

    if running:
        return RUNNING
    kinds = [kind(t.fate) for t in record.trials]
    if "running" in kinds:
        return INTERRUPTED
    errored = kinds.count("errored")
    if errored and (errored == len(kinds) or record.best_trial() is None):
        return FAILED
    if not storage.exists(record.path, BEST_FILE):
        return INTERRUPTED
    return FINISHED


def summarize(sweep: Sweep, record: ExperimentRecord, running: bool) -> Row:
    """The index's row of one experiment, as read now."""
    from tuner.folder import spent
    from tuner.ray_compat.growth import can_grow

    config = record.config
    best = record.best_trial()
    from tuner.review import findings

    ids = findings.of(record).on_front()
    spans = [
        (times[0][0], times[-1][0]) for t in record.trials if (times := t.times())
    ]  # each trial's read once
    started = min((start for start, _ in spans), default=None)
    wall = spent.read(record.path).wall or (
        max(end for _, end in spans) - started if started is not None else 0.0
    )
    return Row(
        sweep=sweep,
        state=state_of(record, running),
        space=config.space,
        scheduler=config.scheduler,
        searcher=config.searcher or "",
        metric=record.metric,
        mode=record.mode,
        trials=len(record.trials),
        planned=config.trials_cap,
        grows=can_grow(record.path),
        fates=record.fate_counts(),
        best=best.best(record.metric, record.mode) if best is not None else None,
        front=None if ids is None else len(ids),
        started=started,
        wall=wall,
        epochs=sum(t.epochs for t in record.trials),
    )


def signature(folder: str, running: bool) -> Hashable:
    """A value that changes when anything the index or a sweep's page shows of the experiment may have."""
    local = storage.local_path(folder)
    if local is None:
        return running, _bucket_listing(folder)
    parts: list[Hashable] = [running]
    try:
        with os.scandir(local) as entries:
            for entry in entries:
                if entry.is_dir():
                    parts.append((entry.name, *(_stat(entry.path, name) for name in _TRIAL_FILES)))
                else:
                    parts.append((entry.name, _stat(local, entry.name)))
    except OSError:
        return None
    for name in (FATES_SIDECAR, STATUS_SIDECAR, SPENT_SIDECAR):
        parts.append(_stat(str(storage.sidecar(folder, name)), ""))
    return hash(tuple(sorted(parts, key=repr)))


def _stat(folder: str, name: str) -> tuple[int, int] | None:
    try:
        found = os.stat(os.path.join(folder, name) if name else folder)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _bucket_listing(folder: str) -> Hashable:
    """Every object under a bucket's experiment with its size and time: one listing, no object read."""
    import pyarrow.fs

    fs, path = storage.filesystem(folder)
    infos = fs.get_file_info(pyarrow.fs.FileSelector(path, recursive=True, allow_not_found=True))
    return hash(tuple(sorted((i.path, i.size, i.mtime_ns) for i in infos)))


def find(storages: list[str]) -> list[Sweep]:
    """Every experiment directly under each storage (or the storage itself, when it is one)."""
    found = []
    for index, root in enumerate(storages):
        if storage.exists(root, CONFIG_FILE):
            found.append(Sweep(f"{index}/{storage.split(root)[1]}", storage.split(root)[1], root))
            continue
        for name in storage.list_dirs(root):
            folder = storage.join(root, name)
            if storage.exists(folder, CONFIG_FILE):
                found.append(Sweep(f"{index}/{name}", name, folder))
    return found


class Catalog:
    """The rows of every experiment under ``storages``, read afresh where they changed (thread-safe: the
    server reads in worker threads)."""

    def __init__(self, storages: list[str]) -> None:
        self.storages = storages
        self._rows: dict[str, tuple[Hashable, float, Row]] = {}  # folder -> (signature, when read, row)
        self._records: dict[str, tuple[Hashable, ExperimentRecord]] = {}  # the last few read, newest last
        self._sweeps: dict[str, Sweep] = {}
        self._lock = threading.Lock()

    def rows(self) -> list[Row]:
        """Every experiment's row, newest first; the storages are listed again at each call (a new sweep
        appears without a restart)."""
        with self._lock:
            sweeps = find(self.storages)
            self._sweeps = {s.key: s for s in sweeps}
            rows = [self._row(s) for s in sweeps]
            seen = {s.folder for s in sweeps}
            for gone in set(self._rows) - seen:
                del self._rows[gone]
        return sorted(rows, key=lambda r: (r.started is None, -(r.started or 0.0), r.sweep.name))

    def sweep(self, key: str) -> Sweep | None:
        """The experiment a key names, if it is one found under the storages (never a path built from it)."""
        with self._lock:
            if key not in self._sweeps:
                self._sweeps = {s.key: s for s in find(self.storages)}
            return self._sweeps.get(key)

    def record(self, folder: str, mark: Hashable) -> ExperimentRecord | None:
        """The experiment as this catalog last read it, if that reading has signature ``mark``: a sweep's page
        drawn right after the index is not read a second time (a 10,000-trial sweep takes seconds to read)."""
        with self._lock:
            kept = self._records.get(folder)
        return kept[1] if kept is not None and mark is not None and kept[0] == mark else None

    def _row(self, sweep: Sweep) -> Row:
        from tuner import experiment
        from tuner.claim import held_elsewhere

        running = held_elsewhere(sweep.folder)
        mark = signature(sweep.folder, running)
        cached = self._rows.get(sweep.folder)
        now = time.monotonic()
        if cached is not None and cached[0] == mark and (not running or now - cached[1] < LIVE_EVERY_S):
            return cached[2]
        try:
            record = experiment.load(sweep.folder, running=running)
            row = summarize(sweep, record, running)
        except Exception as exc:  # noqa: BLE001 - one damaged experiment never hides the others
            row = Row(sweep, UNREADABLE, problem=f"{type(exc).__name__}: {exc}")
        else:
            self._records.pop(sweep.folder, None)
            self._records[sweep.folder] = (mark, record)
            while len(self._records) > RECORDS_KEPT:
                del self._records[next(iter(self._records))]
        self._rows[sweep.folder] = (mark, now, row)
        return row
