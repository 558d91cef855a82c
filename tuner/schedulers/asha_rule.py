"""ASHA, one implementation for one objective or several: a trial goes on past a rung only among the best there.

A trial's result at a rung is compared with every result recorded there before it (tuner/schedulers/comparing.py):
with one objective it stops below the interpolated percentile of the others' values, the cutoff Ray's
``ASHAScheduler`` uses, so it decides as Ray's does; with several objectives or constraints it goes on if it is in
the best 1/reduction_factor by fronts. Every comparison is written to the fate log as it is made (the cutoff, or
the place and the values), and a resumed sweep gets its rungs back from there (Tune saves no scheduler state).
Built on Tune's public scheduler interface (``FIFOScheduler``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from tuner.folder.fates import DecisionLog, RungRecord
from tuner.folder.horizon import LoopEnds
from tuner.folder.pickled import fresh, loop_ends
from tuner.schedulers.comparing import Comparison, SignedValues, Standing
from tuner.schedulers.result_epoch import epoch_of
from tuner.schedulers.rule_base import Rule
from tuner.schedulers.stopping import compared, stopped

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

    from tuner.value_types import Result


class AshaRule(Rule):
    """ASHA with rungs at ``milestones`` (tuner/schedulers/asha.py ``rungs``), each trial ended at ``max_t``."""

    SINCE = {"_signed": fresh(dict), "loop": loop_ends}

    def __init__(
        self,
        max_t: int,
        milestones: list[int],
        reduction_factor: int,
        comparison: Comparison,
        fate_log: DecisionLog | None = None,
    ) -> None:
        super().__init__()
        self.max_t = max_t
        self.eta = reduction_factor
        self.comparison = comparison
        self.fate_log = fate_log
        # milestone -> trial id -> its standing there, highest milestone first as ASHA looks for a rung
        self.rungs: dict[int, dict[str, Standing]] = {m: {} for m in sorted(milestones, reverse=True)}
        self.stopped = 0
        self.loop = LoopEnds(max_t)  # where the trainable's own loop ends trials, as the sweep learnt it
        self._signed: dict[int, SignedValues] = {}  # milestone -> the values there, signed, as trials arrive
        self._restored = False

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        super().on_trial_add(tune_controller, trial)
        if not self._restored:
            self._restored = True
            self._restore_rungs()

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: Result) -> str:
        epoch = epoch_of(result)
        if epoch is None or not self.comparison.reported(result):
            return TrialScheduler.CONTINUE
        if epoch >= self.max_t:
            return TrialScheduler.STOP
        self.loop_ends.reported(epoch)  # a trial past where loops ended so far brings the later rungs back
        live = self.live_rungs()
        aside = self.rungs.get(epoch)
        if epoch not in live and aside is not None and trial.trial_id not in aside:
            # a rung set aside is passed undecided, but its value there is kept: were the rung brought back, the
            # trial is not judged there by a later epoch's value, nor others against one
            aside[trial.trial_id] = self.comparison.standing(result)
        # the highest rung reached, as Ray's bracket looks: a trial already there goes on undecided, and one that
        # skipped a lower rung (it reports every few epochs) is never judged there by a later epoch's value
        milestone = next((m for m in live if epoch >= m), None)
        if milestone is None or trial.trial_id in live[milestone]:
            return TrialScheduler.CONTINUE
        at = self.rungs[milestone]
        before = self._signed_at(milestone, at)
        standing = at[trial.trial_id] = self.comparison.standing(result)
        verdict = self.comparison.at_rung(trial.trial_id, at, self.eta, milestone, before)
        before.add(self.comparison.signed(standing))
        data: RungRecord = {
            **verdict.record,
            "rung": milestone,
            "epoch": epoch,
            "arrived": len(at) - 1,
            "kept": verdict.kept,
        }
        compared(self.fate_log, trial.trial_id, data)
        if verdict.kept:
            return TrialScheduler.CONTINUE
        self.stopped += 1
        return stopped(self.fate_log, trial.trial_id, "ASHA", epoch, verdict.why)

    def on_trial_complete(self, tune_controller: TuneController, trial: Trial, result: Result) -> None:
        """A result marked done (a class's step returning done) reaches the scheduler here, not in
        ``on_trial_result``: its value still counts at the rung it reached, undecided (the trial has ended), as
        Ray's ASHA counts it. A function's last result, seen there already, changes nothing."""
        epoch = epoch_of(result)
        if epoch is None or epoch >= self.max_t or not self.comparison.reported(result):
            return
        milestone = next((m for m in self.live_rungs() if epoch >= m), None)  # the highest reached
        at = self.rungs[milestone] if milestone is not None else None
        if at is not None and trial.trial_id not in at:
            at[trial.trial_id] = self.comparison.standing(result)

    def follow_loop(self, epochs: int) -> str | None:
        """The trainable's own loop ends trials at ``epochs`` (tuner/launch/guards/loop_end.py): the rungs from
        there on are never reached, and a comparison at the loop's last epoch would cut nothing; they are set
        aside while no trial reports past ``epochs`` (one that does brings them back: loops differ by config)."""
        if 0 < epochs < self.max_t:
            self.loop_ends.ended(epochs)
        aside = sorted(m for m in self.rungs if m not in self.live_rungs())
        if self.loop_ends.horizon != epochs or not aside:
            return None
        return f"ASHA's rung{'s' if len(aside) > 1 else ''} at epoch {', '.join(map(str, aside))} set aside"

    @property
    def loop_ends(self) -> LoopEnds:
        """Where trials end by their own loop, as learnt."""
        return self.loop

    def live_rungs(self) -> dict[int, dict[str, Standing]]:
        """The rungs a trial can still be compared at: those before where trials end by their own loop."""
        horizon = self.loop_ends.horizon
        return {m: at for m, at in self.rungs.items() if m < horizon}

    def _signed_at(self, milestone: int, at: dict[str, Standing]) -> SignedValues:
        """The values at a rung signed, kept as trials arrive there; made again from the rung when it holds
        more than they do (rungs restored from the fate log)."""
        kept = self._signed
        values = kept.get(milestone)
        if values is None or values.count != len(at):
            values = kept[milestone] = SignedValues()
            for standing in at.values():
                values.add(self.comparison.signed(standing))
        return values

    def _restore_rungs(self) -> None:
        """A resumed sweep's rungs as they were, from the fate log."""
        from tuner.folder.fates import recorded

        folder = getattr(self.fate_log, "folder", None) if self.fate_log else None
        if folder is None:
            return
        first = self.comparison.first.name
        for trial_id, decision in recorded(folder).items():
            for seen in decision.get("rungs", []):
                rung = seen.get("rung")
                at = self.rungs.get(rung) if rung is not None else None
                values = seen.get("values")
                if not isinstance(values, dict):  # one objective: the value alone
                    value = seen.get("value")
                    values = {first: float(value)} if isinstance(value, (int, float)) else None
                if at is None or trial_id in at or values is None:
                    continue
                violation = seen.get("violation", 0.0)
                at[trial_id] = self.comparison.from_values(
                    values, float("inf") if violation is None else violation
                )

    def debug_string(self) -> str:
        """The live table's status line."""
        return self.comparison.asha_status(self.live_rungs(), self.eta, self.stopped)
