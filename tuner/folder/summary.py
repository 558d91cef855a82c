"""The end-of-sweep summary as a typed record: what ``best_config.json`` holds, and how the run ended.

``tuner.review.results.summarize`` reads it off the experiment; the runner adds how this run ended (spent,
unfinished trials, a stall, a signal, a refusing storage), which the terminal shows and the exit code follows
but the file does not keep. The file's layout stays as it has always been (``to_json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from tuner.objectives import Mode
from tuner.value_types import ConfigDraft, Value

if TYPE_CHECKING:
    from tuner.folder.spent import Spent


class ObjectiveRecord(TypedDict):
    metric: str
    mode: Mode


class ParetoRecord(TypedDict):
    """``pareto.json`` (tuner/review/front.py): the objectives, the constraints, the front and its hypervolume."""

    objectives: list[ObjectiveRecord]
    constraints: list[str]
    front: list[dict[str, Value]]  # a row per trial: trial_id, each objective, epoch, config (nested), fate
    infeasible: int
    hypervolume: float
    reference: dict[str, float] | None  # the hypervolume's reference point, each objective in its own sign


class FoundRecord(TypedDict, total=False):
    """``best_config.json``'s keys for what the sweep found beside its best trial: the front, or on one objective
    under constraints how many trials broke one."""

    pareto: ParetoRecord
    infeasible: int | None
    constraints: list[str]


@dataclass
class Found:
    """What the sweep found beside its best trial, as tuner/review/findings.py settles it: ``best_config.json``'s
    keys for it, the lines printed before and after the best trial, and what the best trial is called there."""

    record: FoundRecord = field(default_factory=lambda: FoundRecord())
    before: list[str] = field(default_factory=list)  # the front, first: no one trial is the best
    best_is: str = "trial"
    after: list[str] = field(default_factory=list)  # on one objective, the constraints it kept to


class BestConfigRecord(FoundRecord):
    """``best_config.json`` (``Summary.to_json``)."""

    metric: str
    mode: Mode
    trials: int
    failed: list[dict[str, str | bool | None]]  # each Failure's fields
    nonfinite: list[str]
    experiment: str
    fates: dict[str, int]
    best_fate: NotRequired[str]
    best_trial: NotRequired[str]
    best_value: NotRequired[float | None]
    best_epoch: NotRequired[int]
    config: NotRequired[ConfigDraft]
    checkpoint: NotRequired[str | None]
    trial_path: NotRequired[str]
    checkpoint_note: NotRequired[str]


@dataclass
class Failure:
    """A trial that errored: its last error line, its error file, and whether its fate explains it better
    (a hung or signal-killed trial's error file holds only Ray's account of its end)."""

    trial_id: str
    error: str
    error_file: str | None
    explained: bool


@dataclass
class BestTrial:
    """The best trial by the best value of the first objective within each trial."""

    trial_id: str
    value: float | None
    epoch: int
    config: ConfigDraft  # nested, as the trainable read it
    checkpoint: str | None
    trial_path: str
    fate: str = ""
    checkpoint_note: str | None = None  # why the checkpoint is not the best epoch's own


@dataclass
class Summary:
    metric: str
    mode: Mode
    trials: int
    experiment: str
    failed: list[Failure] = field(default_factory=list)
    nonfinite: list[str] = field(default_factory=list)  # "TRIAL: what was not finite"
    fates: dict[str, int] = field(default_factory=dict)  # each fate's family, most common first
    best: BestTrial | None = None
    found: Found = field(default_factory=Found)
    constraints: list[str] | None = (
        None  # the sweep's: "no trial ... met every constraint" (best_config.json's are in ``found``)
    )
    infeasible: int | None = None  # trials that broke one (on several objectives, of those with a point)
    # How this run ended (shown and turned into the exit code; not kept in best_config.json).
    spent: Spent | None = None  # what the sweep spent in all, against ``budget``
    budget: str | None = None
    took: float | None = None  # seconds from the command's (or the call's) start to this summary
    distinct_epochs: int | None = None  # epochs the trials hold, each once (``spent`` counts those run again)
    unfinished: int = 0  # trials not run to their end, the not started ones included
    not_started: int = 0
    to_come: int = 0  # of the not started, the planned trials the searcher had not proposed yet
    stalled: str | None = None
    signal: int | None = None
    storage: str | None = None  # why the storage refused a write
    report: str | None = None  # the HTML report written as the sweep ended; None: not written (a bucket's)
    report_problem: str | None = None  # why it could not be written
    # how the trainable's own epoch count differs from its reports (``review.results.epochs_apart``)
    counts: str | None = None

    def to_json(self) -> BestConfigRecord:
        """``best_config.json``: the same keys and order as every earlier release wrote."""
        out: BestConfigRecord = {
            "metric": self.metric,
            "mode": self.mode,
            "trials": self.trials,
            "failed": [vars(f).copy() for f in self.failed],
            "nonfinite": list(self.nonfinite),
            "experiment": self.experiment,
            "fates": dict(self.fates),
        }
        if self.best is not None:
            out.update(
                {
                    "best_fate": self.best.fate,
                    "best_trial": self.best.trial_id,
                    "best_value": self.best.value,
                    "best_epoch": self.best.epoch,
                    "config": self.best.config,
                    "checkpoint": self.best.checkpoint,
                    "trial_path": self.best.trial_path,
                }
            )
            if self.best.checkpoint_note:
                out["checkpoint_note"] = self.best.checkpoint_note
        out.update(self.found.record)
        return out
