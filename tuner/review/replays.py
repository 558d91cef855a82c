"""A replay's answer: what ``tuner replay`` found, saved in the experiment, read back and said in words.

Kept apart from the computing (tuner/replay/whatif.py) so the report reads saved answers without the
algorithm registries or Ray.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tuner import storage
from tuner.experiment import ExperimentRecord, TrialRecord
from tuner.objectives import Mode
from tuner.value_types import ConfigDraft

REPLAYS = "replays"
LISTED_AT_MOST = 20  # trials an answer names one by one: a replay of thousands stops thousands


@dataclass
class ReplayBest:
    """The best trial of a sweep or of its replay: its id, its best value, the epoch of it (and, for a replay
    with another searcher, its config)."""

    trial: str
    value: float
    epoch: int
    config: ConfigDraft | None = None


@dataclass
class WhatIf:
    """One replay of a finished sweep, and the sweep it replays, in the figures the answer gives."""

    experiment: str
    scheduler: str
    searcher: str | None
    options: dict[str, int]  # grace, rf: the scheduler settings given
    workers: int
    metric: str
    mode: Mode
    used_epochs: int
    used_seconds: float  # the sweep's own trial time replayed under its own scheduler (like for like)
    epochs: int
    seconds: float
    best_before: ReplayBest | None  # the sweep's best trial
    best_after: ReplayBest | None  # the replay's best trial
    # trials ended earlier than in the sweep: trial, epochs (in the sweep), at (in the replay), why; built by
    # tuner/replay/whatif.py as plain dicts of mixed values
    stopped: list[dict[str, Any]] = field(default_factory=list)
    cut_short: list[str] = field(default_factory=list)  # trials the replay would have run past their curve
    unfinished: int = 0  # trials the sweep had not finished when it stopped
    # the replayed scheduler's rungs or brackets, as a plan says them
    rungs: list[str] = field(default_factory=list)
    baseline_epochs: int | None = None  # the sweep's own scheduler replayed the same way (like for like)
    front: list[str] = field(default_factory=list)  # several objectives: the sweep's front (empty with one)
    front_lost: list[str] = field(default_factory=list)  # those of it the replay would have stopped earlier

    def __post_init__(self) -> None:
        """Read back from its JSON, the best trials are mappings again: records."""
        for name in ("best_before", "best_after"):
            found = getattr(self, name)
            if isinstance(found, dict):
                setattr(self, name, ReplayBest(**found))

    @property
    def title(self) -> str:
        """``asha, reduction factor 3, 2 trial(s) at once``: what was replayed."""
        words = {"grace": "grace period", "rf": "reduction factor"}
        options = "".join(f", {words[k]} {v}" for k, v in self.options.items())
        searcher = f" and searcher {self.searcher}" if self.searcher else ""
        return f"{self.scheduler}{options}{searcher}, {self.workers} trial(s) at once"

    @property
    def best_kept(self) -> bool:
        if self.best_before is None or self.best_after is None:
            return False
        return self.best_after.trial == self.best_before.trial

    def save(self) -> str:
        name = "-".join([self.scheduler, *(f"{k}{v}" for k, v in sorted(self.options.items()))])
        if self.searcher:
            name += f"-{self.searcher}"
        folder = storage.join(self.experiment, REPLAYS)
        storage.prepare(folder)
        storage.write_text(folder, f"{name}.json", json.dumps(asdict(self), indent=1) + "\n")
        return storage.join(folder, f"{name}.json")


def saved(experiment: ExperimentRecord) -> list[WhatIf]:
    """The replays written into an experiment by ``tuner replay``, for the report."""
    folder = storage.join(experiment.path, REPLAYS)
    out = []
    for name in storage.list_names(folder, "") if storage.is_dir(folder) else []:
        if not name.endswith(".json"):
            continue
        try:
            out.append(WhatIf(**json.loads(storage.read_text(folder, name) or "")))
        except (TypeError, ValueError):
            continue  # a replay from another version only loses its section
    return out


def trials_at_once(trials: Sequence[TrialRecord]) -> int:
    """How many trials the sweep ran at once at most, estimated from when each trial's epochs ended (whole
    seconds, as Ray stamps results), for sweeps made before the count was recorded in spent.json."""
    spans = []
    for trial in trials:
        stamps = [
            (float(r["timestamp"]), float(r.get("time_this_iter_s") or 0))
            for r in trial.rows
            if _is_number(r.get("timestamp"))
        ]
        if stamps:
            spans.append((stamps[0][0] - stamps[0][1], stamps[-1][0]))
    edges = sorted(
        [(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans], key=lambda e: (e[0], e[1])
    )
    most = running = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return max(1, most)


def _is_number(value: str | None) -> bool:
    if value is None:  # no cell: float() would refuse it
        return False
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def saving(new: float, old: float) -> str:
    if not old:
        return ""
    change = (new - old) / old
    if new == old:
        return " (the same)"
    if abs(change) < 0.005:
        return " (about the same)"
    return f" (saves {-change:.0%})" if change < 0 else f" ({change:.0%} more)"


def describe(whatif: WhatIf, sweep_scheduler: str) -> list[str]:
    """The answer, in the lines ``tuner replay`` prints and the report shows."""
    from tuner.durations import format_seconds

    w = whatif
    base = w.baseline_epochs if w.baseline_epochs is not None else w.used_epochs
    at_least = "at least " if w.cut_short else ""
    # a replay that would run a trial past where the sweep stopped it cannot know those epochs: a lower bound
    unknown = f"{len(w.cut_short)} trial(s) would have run past the epochs the sweep has; how far is unknown"
    against = f"the sweep's {base} under {sweep_scheduler}"
    if base != w.used_epochs:  # the sweep's own scheduler, replayed, decided in another order than it ran
        against = f"{base} for the sweep's own {sweep_scheduler} replayed the same way (the sweep itself ran {w.used_epochs})"
    lines = [
        f"replayed under {w.title}, on the sweep's own curves and epoch times",
        *(f"  {line}" for line in w.rungs),
        f"  epochs: {at_least}{w.epochs} against {against}"
        + (f" ({unknown})" if w.cut_short else saving(w.epochs, base)),
        f"  wall time: {'at least' if w.cut_short else 'about'} {format_seconds(w.seconds)} against "
        f"{format_seconds(w.used_seconds)}{'' if w.cut_short else saving(w.seconds, w.used_seconds)}; both "
        f"simulated with {w.workers} at once from the recorded epoch times",
    ]
    if w.front:
        kept = len(w.front) - len(w.front_lost)
        lines.append(
            f"  Pareto front: all {len(w.front)} of its trial(s) kept"
            if not w.front_lost
            else f"  Pareto front: {kept} of its {len(w.front)} trial(s) kept; {', '.join(w.front_lost)} would "
            "have stopped earlier (below)"
        )
    if w.best_before is None or w.best_after is None:
        lines.append("  best trial: no trial reported a finite value")
    elif w.best_kept:
        lines.append(
            f"  best trial: kept ({w.best_before.trial}, {w.metric} {w.best_before.value:.4g} at epoch "
            f"{w.best_before.epoch})"
        )
    else:
        before, after = w.best_before, w.best_after
        lost = next((s for s in w.stopped if s["trial"] == before.trial), None)
        why = f" ({lost['why']})" if lost else ""
        lines.append(
            f"  best trial: lost — the sweep's best, {before.trial} ({w.metric} {before.value:.4g} at "
            f"epoch {before.epoch}), would have ended at epoch {lost['at'] if lost else '?'}{why}; the "
            f"best would have been {after.trial} ({w.metric} {after.value:.4g})"
        )
    if w.stopped:
        lines.append(f"  {len(w.stopped)} trial(s) would have stopped earlier:")
        for s in w.stopped[:LISTED_AT_MOST]:
            lines.append(f"    {s['trial']}: {s['epochs']} -> {s['at']} epochs; {s['why']}")
        if len(w.stopped) > LISTED_AT_MOST:
            lines.append(
                f"    ... and {len(w.stopped) - LISTED_AT_MOST} more (the replay saved in the experiment's "
                f"{REPLAYS}/ folder lists every one)"
            )
    if w.cut_short:
        named = ", ".join(w.cut_short[:LISTED_AT_MOST]) + (
            f", and {len(w.cut_short) - LISTED_AT_MOST} more" if len(w.cut_short) > LISTED_AT_MOST else ""
        )
        lines.append(
            f"  {len(w.cut_short)} trial(s) ({named}) would have gone on past the last epoch the sweep "
            "recorded for them (where it stopped them, or they failed); their later epochs are unknown, so the "
            "replay ends them there and the answer rests on that"
        )
    if w.unfinished:
        lines.append(
            f"  {w.unfinished} trial(s) were unfinished when the sweep stopped; the replay has only the "
            "epochs they reached"
        )
    return lines
