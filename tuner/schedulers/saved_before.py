"""Schedulers as experiments saved them before ASHA, HyperBand, BOHB and the median rule were tuner's own.

Ray pickles a sweep's scheduler into its experiment (``tuner.pkl``) when the sweep starts, so an experiment
saved earlier names Ray-based classes that are gone (``RecordingASHA``, ``ParetoASHA``, ...). tuner/moved.py
answers those names with the classes here, which turn into today's rule as they are unpickled, from the settings
the old object held; Tune then tells a rule that had no metric yet its metric, as it told the old one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypedDict

from tuner.objectives import Constraint, Objective, as_mode
from tuner.schedulers.asha_rule import AshaRule
from tuner.schedulers.comparing import Comparison
from tuner.schedulers.hyperband_rule import BohbRule, HyperBandRule
from tuner.schedulers.median_rule import MedianRule
from tuner.schedulers.rule_base import Rule

if TYPE_CHECKING:
    from tuner.folder.fates import DecisionLog


class _RayBracket(Protocol):
    """One of Ray's ASHA brackets as pickled: its rungs, (milestone, trial id -> value recorded there)."""

    _rungs: list[tuple[float, dict[str, float]]]


class SavedState(TypedDict, total=False):
    """What an old scheduler object held that its conversion reads; each class held some of it."""

    objectives: Sequence[Objective]  # tuner's own: several objectives
    constraints: Sequence[Constraint]
    fate_log: DecisionLog | None
    _metric: str | None  # Ray's, as Tune told it
    _mode: str | None
    _max_t: float  # Ray's ASHAScheduler
    _reduction_factor: float
    _brackets: list[_RayBracket]
    max_t: int  # tuner's ParetoASHA
    eta: int
    rungs: dict[int, dict[str, tuple[tuple[float, ...], float, dict[str, float]]]]
    _grace_period: float  # Ray's MedianStoppingRule
    _min_samples_required: int
    grace_period: int  # tuner's ParetoMedian
    min_samples: int
    _max_t_attr: int  # Ray's HyperBandScheduler and HyperBandForBOHB
    _eta: float


def _comparison(state: SavedState) -> tuple[Comparison, bool]:
    """The old object's objectives (several, or Ray's metric and mode), and whether Tune has yet to name them."""
    objectives = tuple(state.get("objectives") or ())
    constraints: tuple[Constraint, ...] = tuple(state.get("constraints") or ())
    if objectives:
        return Comparison.of(objectives, constraints), False
    metric, mode = state.get("_metric"), state.get("_mode")
    if metric and mode:
        return Comparison.of((Objective(metric, as_mode(mode)),), constraints), False
    return Comparison.of((Objective("loss", "min"),), constraints), True  # a stand-in until Tune names it


class _Saved:
    """Unpickles as the rule ``_convert`` makes from the old object's state."""

    def __setstate__(self, state: SavedState) -> None:
        rule = self._convert(state)
        self.__class__ = type(rule)  # type: ignore[assignment]  # becomes today's rule, in place
        self.__dict__.update(rule.__dict__)

    def _convert(self, state: SavedState) -> Rule:
        raise NotImplementedError


class RecordingASHA(_Saved):
    def _convert(self, state: SavedState) -> Rule:
        max_t, eta = int(state["_max_t"]), int(state["_reduction_factor"])
        milestones = [int(m) for m, _ in state["_brackets"][0]._rungs if m < max_t]
        comparison, later = _comparison(state)
        rule = AshaRule(max_t, milestones, eta, comparison, fate_log=state.get("fate_log"))
        rule.metric_from_tune = later
        return rule


class ParetoASHA(_Saved):
    def _convert(self, state: SavedState) -> Rule:
        comparison, _ = _comparison(state)
        milestones = [int(m) for m in state["rungs"]]
        return AshaRule(int(state["max_t"]), milestones, int(state["eta"]), comparison, state.get("fate_log"))


class RecordingMedian(_Saved):
    def _convert(self, state: SavedState) -> Rule:
        comparison, later = _comparison(state)
        grace = state["_grace_period"]
        rule = MedianRule(
            int(grace) if math.isfinite(grace) else 1,
            int(state["_min_samples_required"]),
            comparison,
            fate_log=state.get("fate_log"),
        )
        rule.metric_from_tune = later
        return rule


class ParetoMedian(_Saved):
    def _convert(self, state: SavedState) -> Rule:
        comparison, _ = _comparison(state)
        return MedianRule(
            int(state["grace_period"]), int(state["min_samples"]), comparison, state.get("fate_log")
        )


class RecordingHyperBand(_Saved):
    made = HyperBandRule

    def _convert(self, state: SavedState) -> Rule:
        comparison, later = _comparison(state)
        rule = self.made(
            int(state["_max_t_attr"]), int(state["_eta"]), comparison, fate_log=state.get("fate_log")
        )
        rule.metric_from_tune = later
        return rule


class RecordingBOHB(RecordingHyperBand):
    made = BohbRule
