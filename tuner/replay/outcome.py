"""What a replay is made of and what it gives back: a config's recorded curve, where curves come from, each
replayed trial and the whole outcome (its best trial, its best so far, each trial's point on several
objectives), the fate log a replay keeps in memory, and the recorded order a finished sweep's configs are
replayed in. Plain data: tuner/replay/engine.py plays the curves; benchmarks and ``tuner replay`` read these."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from tuner.objectives import Constraint, Mode, Objective, better, pick, sign

if TYPE_CHECKING:
    from tuner.folder.fates import RungRecord
    from tuner.value_types import Config, ConfigDraft, Result


@dataclass
class Curve:
    """One config's run: per-epoch metrics (epoch k at index k-1) and the seconds each epoch took."""

    config: Config
    rows: list[Result]
    seconds: list[float]
    whole: bool = False  # the trainable's own loop ended it here: there is no later epoch to look up

    def __post_init__(self) -> None:
        if len(self.seconds) < len(self.rows):
            self.seconds = [*self.seconds, *[1.0] * (len(self.rows) - len(self.seconds))]


class CurveSource(Protocol):
    """Where a replay finds a config's curve: a table of recorded runs, or a function of the config."""

    def curve(self, config: Config) -> Curve | None: ...


@dataclass
class ReplayedTrial:
    """What the replay did with one trial."""

    trial_id: str
    config: ConfigDraft
    epochs: int = 0  # epochs it trained in the replay
    available: int = 0  # epochs its curve holds
    decisions: list[tuple[int, str]] = field(default_factory=list)  # (epoch, CONTINUE/PAUSE/STOP) per result
    fate: str = ""  # the scheduler's words when it stopped the trial, else how it ended
    started: float | None = None  # simulated seconds
    ended: float | None = None
    cut_short: bool = False  # the scheduler would have gone on; the curve had no more epochs
    missing: bool = False  # the source had no curve for its config
    values: list[float] = field(default_factory=list)  # the metric, per epoch trained
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (simulated seconds, value) per epoch
    work: list[float] = field(default_factory=list)  # each epoch's seconds of training
    # its last result (several objectives read theirs here)
    last: Result = field(default_factory=dict)

    def best(self, mode: Mode) -> float | None:
        finite = [v for v in self.values if math.isfinite(v)]
        if not finite:
            return None
        return pick(mode)(finite)


@dataclass
class ReplayOutcome:
    """A whole replay: its trials in creation order, the epochs and simulated seconds it took."""

    trials: list[ReplayedTrial]
    metric: str
    mode: Mode
    workers: int
    wall: float
    stalled: bool = False  # trials waited that nothing would ever start (a scheduler holding them for ever)

    @property
    def epochs(self) -> int:
        return sum(t.epochs for t in self.trials)

    def best_trial(self, constraints: Sequence[Constraint] = ()) -> ReplayedTrial | None:
        """The best trial by the metric; under ``constraints``, the best whose last result meets them all."""
        from tuner.objectives import violations

        towards = sign(self.mode)
        scored = [
            (towards * best, t)
            for t in self.trials
            if (best := t.best(self.mode)) is not None
            and not any(v > 0 for v in violations(constraints, t.last))
        ]
        if not scored:
            return None
        return min(scored, key=lambda pair: pair[0])[1]

    def points(
        self, objectives: Sequence[Objective], constraints: Sequence[Constraint] = ()
    ) -> list[tuple[float, ...]]:
        """Each trial's last result on ``objectives`` (less is better), those that break a constraint left out."""
        from tuner.objectives import as_point, reported, violations

        out = []
        for t in self.trials:
            values = reported(objectives, t.last)
            if values is not None and not any(v > 0 for v in violations(constraints, t.last)):
                out.append(as_point(objectives, values))
        return out

    def best_so_far(self, by_work: bool = False) -> list[tuple[float, float, float]]:
        """(epochs spent, simulated seconds, best value) each time the best improves, in time order; with
        ``by_work``, the trial time spent (summed over workers) instead of the epochs."""
        events = sorted(
            (
                (at, value, t.work[k] if k < len(t.work) else 1.0)
                for t in self.trials
                for k, (at, value) in enumerate(t.timeline)
            ),
            key=lambda e: e[0],
        )
        out: list[tuple[float, float, float]] = []
        best, spent = None, 0.0
        for count, (at, value, cost) in enumerate(events, 1):
            spent += cost
            if not math.isfinite(value):
                continue
            if best is None or better(value, best, self.mode):
                best = value
                out.append((spent if by_work else count, at, value))
        return out


class FateMemory:
    """An in-memory fate log: the recording schedulers write why they stop a trial here, as in a sweep."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        # each comparison at a rung, as the scheduler made it
        self.rungs: dict[str, list[RungRecord]] = {}

    def record(self, trial_id: str, kind: str, text: str, data: RungRecord | None = None) -> None:
        if kind == "rung" and data is not None:
            self.rungs.setdefault(trial_id, []).append(data)
        else:
            self.texts[trial_id] = text


class FixedOrder:
    """A searcher that proposes recorded configs in the order given, then says the search is over: a
    finished sweep's own trials, replayed in the order they started."""

    FINISHED = "FINISHED"

    def __init__(self, configs: Iterable[Config]) -> None:
        self._configs = list(configs)
        self._next = 0

    def suggest(self, trial_id: str) -> ConfigDraft | str:
        if self._next >= len(self._configs):
            return self.FINISHED
        self._next += 1
        return dict(self._configs[self._next - 1])

    def on_trial_result(self, trial_id: str, result: Result) -> None:
        pass

    def on_trial_complete(self, trial_id: str, result: Result | None = None, error: bool = False) -> None:
        pass

    def on_pause(self, trial_id: str) -> None:  # BOHB's scheduler tells its searcher of pauses
        pass

    def on_unpause(self, trial_id: str) -> None:
        pass
