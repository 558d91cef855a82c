"""How the early-stopping rules compare trials: by one value, as Ray's rules do, or by fronts.

ASHA, HyperBand and the median rule are each one implementation (asha_rule.py, hyperband_rule.py,
median_rule.py) that asks a ``Comparison`` where a trial stands; the rungs and rounds stay with the rules, the
ranking is the comparison's. ``ByValue`` (one objective, no constraint) compares as Ray's rules do; ``ByFronts``
(several objectives) ranks trials by fronts; ``Constrained`` (one objective under constraints) ranks them as
fronts of one value, those that break a bound last. ``Comparison.kind`` picks one for a sweep: how many
objectives a sweep has is asked there and nowhere else in the rules, and tuner/algorithms.py chooses what a
sweep may run by the same answer.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from tuner import pareto
from tuner.folder.fates import RungStanding
from tuner.objectives import Constraint, Objective, broken, violations
from tuner.value_types import Result, Value
from tuner.values import as_float, number

T = TypeVar("T")  # what a round ranks: a trial (HyperBand) or a trial id


@dataclass(frozen=True)
class Standing:
    """One result as the rules compare it."""

    point: tuple[float, ...]  # each objective, less is better; inf where it was not reported
    violation: float  # how far it breaks the constraints; 0 when it meets them
    values: dict[str, float]  # the objectives as reported
    broke: tuple[str, ...] = ()  # the bounds it breaks, in words ("mb 500 breaks mb<=100")


@dataclass(frozen=True)
class RungVerdict:
    """Whether a trial goes on past a rung, and what decided it, as the fate log keeps it."""

    kept: bool
    record: RungStanding  # where it stood: the rung entry's data beyond rung, epoch, arrived and kept
    why: str  # the reason after "stopped early by ... at epoch N: "; empty when kept


class Comparison:
    """The ranking of one sweep's objectives and constraints: ``ByValue``, ``ByFronts`` or ``Constrained``,
    chosen once by ``Comparison.of``. ASHA and HyperBand call the same methods on each; the median rule, which
    keeps other data when it ranks by fronts, asks ``by_fronts`` once."""

    by_fronts = False

    def __init__(self, objectives: Sequence[Objective], constraints: Sequence[Constraint] = ()) -> None:
        if type(self) is Comparison:
            raise TypeError("Comparison.of picks the ranking: ByValue or ByFronts")
        if not objectives:
            raise ValueError("a comparison needs at least one objective")
        self.objectives = tuple(objectives)
        self.constraints = tuple(constraints)
        self.first = self.objectives[0]

    @staticmethod
    def of(objectives: Sequence[Objective], constraints: Sequence[Constraint] = ()) -> Comparison:
        """By one value as Ray's rules compare, unless there are several objectives or constraints."""
        return Comparison.kind(objectives, constraints)(objectives, constraints)

    @staticmethod
    def kind(objectives: Sequence[Objective], constraints: Sequence[Constraint] = ()) -> type[Comparison]:
        """Fronts for several objectives, fronts of one value under bounds, otherwise one value."""
        if len(objectives) > 1:
            return ByFronts
        return Constrained if constraints else ByValue

    def __setstate__(self, state: dict[str, object]) -> None:
        """A comparison saved before the rankings were classes of their own (one class held both), or before one
        objective under constraints had its own, takes the class its objectives and constraints pick now."""
        self.__dict__.update(state)
        self.__class__ = Comparison.kind(self.objectives, self.__dict__.get("constraints", ()))

    # --- a result as a standing -----------------------------------------------------------------------------

    def reported(self, result: Result) -> bool:
        """Whether a result can be compared."""
        raise NotImplementedError

    def ranked_by(self) -> str | None:
        """How trials are ranked, in the plan's words; None: by the one value, as Ray's rules rank them."""
        return None

    def standing(self, result: Result) -> Standing:
        """A result as the rules compare it. A constraint whose metric the result does not carry is not judged
        there: a figure measured once after training comes at the last epoch only (the summary judges every
        trial on the value it last reported)."""
        values = {o.name: v for o in self.objectives if (v := number(result.get(o.name))) is not None}
        seen = [c for c in self.constraints if c.metric in result]
        standing = self.from_values(values, sum(violations(seen, result)))
        return Standing(standing.point, standing.violation, standing.values, tuple(broken(seen, result)))

    def from_values(self, values: Mapping[str, float], violation: float = 0.0) -> Standing:
        """A standing from values written down earlier (a resumed sweep's rungs)."""
        point = tuple(
            o.as_min(float(values[o.name])) if o.name in values else math.inf for o in self.objectives
        )
        return Standing(point, violation, dict(values))

    def signed(self, standing: Standing) -> float:
        """The first objective with more better, as Ray's rules keep it (nan where it was not a number)."""
        value = standing.values.get(self.first.name)
        return math.nan if value is None else self._signed_value(value)

    def _signed_value(self, value: float) -> float:
        return value if self.first.mode == "max" else -value

    def cutoff(self, standings: Sequence[Standing], eta: float) -> float | None:
        """ASHA's cutoff at a rung, in the metric's own sign: the value at the (1 - 1/eta) percentile of those
        recorded there, interpolated, with more better (Ray's ``np.nanpercentile``); None at an empty rung."""
        return self.cutoff_of(np.array([self.signed(s) for s in standings], dtype=float), eta)

    def cutoff_of(self, signed: NDArray[np.float64], eta: float) -> float | None:
        """``cutoff`` from the values at the rung already signed (``SignedValues``)."""
        if not len(signed):
            return None
        with (
            warnings.catch_warnings()
        ):  # a rung of nan values only: its cutoff is nan, and nothing stops there
            warnings.simplefilter("ignore", RuntimeWarning)
            value = float(np.nanpercentile(signed, (1 - 1 / eta) * 100))
        return self._signed_value(value)

    # --- what each rule asks ------------------------------------------------------------------------------------

    def at_rung(
        self,
        trial_id: str,
        at: Mapping[str, Standing],
        eta: float,
        milestone: int,
        before: SignedValues | None = None,
    ) -> RungVerdict:
        """ASHA: a trial's result just placed at a rung among those there before it (``at`` holds both;
        ``before``, when given, the others' values signed, as the rule keeps them)."""
        raise NotImplementedError

    def halving(self, standings: Mapping[T, Standing], keep: int) -> tuple[list[T], list[T]]:
        """HyperBand: the ``keep`` best of a round of a bracket, and the rest."""
        raise NotImplementedError

    def round_why(self, trial: T, standings: Mapping[T, Standing]) -> str:
        """Why a trial was not among a round's best, before "not among the best K of N in its bracket"."""
        raise NotImplementedError

    def round_values(self, result: Result) -> RungStanding:
        """What a HyperBand round's record keeps beyond the first objective's value (each objective's, by fronts)."""
        return {}

    def asha_status(self, rungs: Mapping[int, Mapping[str, Standing]], eta: float, stopped: int) -> str:
        """ASHA's line in the live table: each rung's cutoff, or by fronts the results compared at each."""
        raise NotImplementedError


class ByValue(Comparison):
    """One objective and no constraint, compared as Ray's rules do: ASHA's cutoff is the interpolated
    percentile of the others' values at the rung, HyperBand keeps the best by the value."""

    def reported(self, result: Result) -> bool:
        """Ray's rules pass over a result that does not carry the metric."""
        return self.first.name in result

    def standing(self, result: Result) -> Standing:
        standing = super().standing(result)
        if self.first.name in result:  # the value as reported, a nan or not
            standing.values[self.first.name] = _float(result[self.first.name])
        return standing

    def at_rung(
        self,
        trial_id: str,
        at: Mapping[str, Standing],
        eta: float,
        milestone: int,
        before: SignedValues | None = None,
    ) -> RungVerdict:
        mine = at[trial_id]
        cutoff = (
            self.cutoff_of(before.values(), eta)
            if before is not None
            else self.cutoff([s for tid, s in at.items() if tid != trial_id], eta)
        )
        kept = cutoff is None or not self.signed(mine) < self._signed_value(cutoff)
        raw = mine.values.get(self.first.name)
        worse = "<" if self.first.mode == "max" else ">"
        why = (
            "" if kept or cutoff is None else f"{self.first.name} {raw:.4g} {worse} rung cutoff {cutoff:.4g}"
        )
        return RungVerdict(kept, {"value": raw, "cutoff": cutoff}, why)

    def halving(self, standings: Mapping[T, Standing], keep: int) -> tuple[list[T], list[T]]:
        """As Ray's brackets sort: ascending, a stable sort, the last ``keep`` go on."""
        ranked = sorted(standings, key=lambda t: self.signed(standings[t]))
        cut = max(0, len(ranked) - keep)
        return ranked[cut:], ranked[:cut]

    def round_why(self, trial: T, standings: Mapping[T, Standing]) -> str:
        value = standings[trial].values.get(self.first.name)
        return f"{self.first.name} {value:.4g}" if value is not None else self.first.name

    def asha_status(self, rungs: Mapping[int, Mapping[str, Standing]], eta: float, stopped: int) -> str:
        cutoffs = []
        for milestone, at in sorted(rungs.items()):
            cutoff = self.cutoff(list(at.values()), eta)
            cutoffs.append(f"epoch {milestone}: {'-' if cutoff is None else f'{cutoff:.4g}'}")
        relation = "at most" if self.first.mode == "min" else "at least"
        return f"rung cutoffs ({self.first.name} {relation} this to go on): {', '.join(cutoffs)}"


class ByFronts(Comparison):
    """Several objectives: feasible trials first by non-dominated sorting, ties on a front broken by crowding
    distance, then infeasible ones by how far they break their bounds (tuner/pareto.py). A missing objective
    ranks as the worst."""

    by_fronts = True

    def reported(self, result: Result) -> bool:
        return True

    def ranked_by(self) -> str:
        return self._by_what() + (
            f"; trials that break {', '.join(map(str, self.constraints))} rank last"
            if self.constraints
            else ""
        )

    def _by_what(self) -> str:
        objectives = ", ".join(map(str, self.objectives))
        return f"fronts of {objectives} (non-dominated sorting, crowding distance breaking ties)"

    def round_values(self, result: Result) -> RungStanding:
        return {
            "values": {
                o.name: v for o in self.objectives if isinstance(v := result.get(o.name), (int, float))
            }
        }

    def asha_status(self, rungs: Mapping[int, Mapping[str, Standing]], eta: float, stopped: int) -> str:
        shown = ", ".join(f"epoch {m}: {len(at)}" for m, at in sorted(rungs.items()))
        return f"ASHA by fronts: {stopped} trial(s) stopped early so far; results compared at {shown}"

    def at_rung(
        self,
        trial_id: str,
        at: Mapping[str, Standing],
        eta: float,
        milestone: int,
        before: SignedValues | None = None,
    ) -> RungVerdict:
        mine = at[trial_id]
        ids = list(at)
        place = self._order(ids, at).index(ids.index(trial_id))
        keep = max(1, math.ceil(len(ids) / eta))
        kept = place < keep
        record: RungStanding = {
            "value": mine.values.get(self.first.name),
            "values": mine.values,
            "violation": mine.violation if math.isfinite(mine.violation) else None,
            "place": place + 1,
            "of": len(ids),
        }
        return RungVerdict(
            kept, record, "" if kept else self._rung_why(trial_id, at, milestone, keep, place + 1)
        )

    def _rung_why(
        self, trial_id: str, at: Mapping[str, Standing], milestone: int, keep: int, place: int
    ) -> str:
        return self._breaks(at[trial_id]) or self._behind(trial_id, at, milestone, keep, place)

    def _behind(
        self, trial_id: str, at: Mapping[str, Standing], milestone: int, keep: int, place: int
    ) -> str:
        """Why a trial that breaks no bound did not go on past a rung."""
        beaten = self._dominated_by(trial_id, at)
        if beaten:
            return f"dominated by {beaten} trial{'s' if beaten > 1 else ''} at the epoch-{milestone} rung"
        goes, them = ("go", "them") if keep > 1 else ("goes", "that one")
        return (
            f"on the front at the epoch-{milestone} rung, but only the best {keep} of {len(at)} {goes} on and it "
            f"ranked behind {them} there (by crowding distance, then {self.first.name})"
        )

    def halving(self, standings: Mapping[T, Standing], keep: int) -> tuple[list[T], list[T]]:
        """The first ``keep`` of the ranking."""
        trials = list(standings)
        order = self._order(trials, standings)
        keep = min(keep, len(trials))
        return [trials[i] for i in order[:keep]], [trials[i] for i in order[keep:]]

    def round_why(self, trial: T, standings: Mapping[T, Standing]) -> str:
        breaks = self._breaks(standings[trial])
        if breaks:
            return f"{breaks},"
        beaten = self._dominated_by(trial, standings)
        if beaten:
            return f"dominated by {beaten} trial{'s' if beaten != 1 else ''},"
        return f"on the front but ranked behind (by crowding distance, then {self.first.name}),"

    # --- the median rule by fronts: one epoch ------------------------------------------------------------------

    def in_worse_half(self, trial_id: str, here: Mapping[str, Standing]) -> bool:
        ids = list(here)
        return self._order(ids, here).index(ids.index(trial_id)) >= math.ceil(len(ids) / 2)

    def worse_half_why(self, trial_id: str, here: Mapping[str, Standing]) -> str:
        breaks = self._breaks(here[trial_id])
        if breaks:
            return breaks
        beaten = self._dominated_by(trial_id, here)
        where = (
            f"dominated by {beaten} trial{'s' if beaten != 1 else ''}"
            if beaten
            else f"on the front but ranked behind, by crowding distance, then {self.first.name}"
        )
        return f"in the worse half of the {len(here)} trials at that epoch by fronts ({where})"

    # --- shared -------------------------------------------------------------------------------------------------

    def _order(self, ids: Sequence[T], standings: Mapping[T, Standing]) -> list[int]:
        return pareto.order([standings[i].point for i in ids], [standings[i].violation for i in ids])

    def _breaks(self, standing: Standing) -> str:
        """Why a standing ranks last whatever the others did: a bound it breaks, or an objective that is not a
        finite number there (ranked as the worst, never as a point on a front)."""
        if standing.broke:
            return f"infeasible ({'; '.join(standing.broke)})"
        unranked = [o.name for o in self.objectives if o.name not in standing.values]
        return f"{', '.join(unranked)} not a finite number (ranked last)" if unranked else ""

    def _dominated_by(self, trial: T, standings: Mapping[T, Standing]) -> int:
        feasible = [t for t in standings if standings[t].violation <= 0]
        if trial not in feasible:
            return 0
        return pareto.dominated_by(feasible.index(trial), [standings[t].point for t in feasible])


class Constrained(ByFronts):
    """One objective under constraints: trials that meet the bounds first, by the value, then those that break
    them, by how far (the fronts of one value are a ranking)."""

    def _by_what(self) -> str:
        return str(self.first)

    def round_values(self, result: Result) -> RungStanding:
        return {}

    def _behind(
        self, trial_id: str, at: Mapping[str, Standing], milestone: int, keep: int, place: int
    ) -> str:
        return (
            f"ranked {place} of {len(at)} at the rung; only the best {keep} go{'es' if keep == 1 else ''} on"
        )


class SignedValues:
    """The first objective's values at one rung, with more better, in arrival order in an array that grows:
    ASHA's cutoff among thousands of trials is one numpy call on it, not a list built at every result."""

    def __init__(self) -> None:
        self._array: NDArray[np.float64] = np.empty(0)
        self.count = 0

    def add(self, value: float) -> None:
        if self.count == len(self._array):
            self._array = np.resize(self._array, max(64, 2 * len(self._array)))
        self._array[self.count] = value
        self.count += 1

    def values(self) -> NDArray[np.float64]:
        return self._array[: self.count]


def _float(value: Value) -> float:
    """A reported value as Ray's rules compare it: infinities and nan kept, anything else not a number nan."""
    try:
        return as_float(value)
    except (TypeError, ValueError):
        return math.nan
