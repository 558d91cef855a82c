"""Freeze-thaw's verdicts, written down: when a trial is hopeless, and how a pause or a stop is recorded (the fate
log's entries, and the reason every view shows) for ``FreezeThawScheduler`` (tuner/schedulers/curve_scheduler.py,
whose ``__init__`` sets every attribute used here)."""

from __future__ import annotations

from ray.tune.schedulers import TrialScheduler

from tuner.folder.fates import PAUSED, DecisionLog
from tuner.schedulers.curve_fitting import CurveFitting, Prediction, chance_said
from tuner.schedulers.stopping import compared, stopped

HOPELESS = 0.001  # a trial whose chance to beat the best is below this is stopped ...
HOPELESS_AFTER = 4  # ... once it has run this many epochs (earlier, its own curve says little)


class CurveVerdicts(CurveFitting):
    """The hopeless rule, and each pause and stop as the fate log keeps it."""

    fate_log: DecisionLog | None
    searching: bool
    results: int
    paused: int
    stopped: int
    frozen: set[str]
    ended: set[str]

    def _hopeless(self, mine: Prediction, epoch: int) -> bool:
        """Under a ``HOPELESS`` chance to beat the best: once it has run ``HOPELESS_AFTER`` epochs, or from its
        first weighing when no new trial can come (a waiting trial would only be continued to be stopped)."""
        # in a sweep of fewer epochs than that, from the epoch before its last
        after = min(HOPELESS_AFTER, self.horizon - 1)
        return mine.chance < HOPELESS and (epoch >= after or not self.searching)

    def _pause(
        self, trial_id: str, epoch: int, value: float | None, mine: Prediction | None, why: str
    ) -> str:
        self.paused += 1
        self.frozen.add(trial_id)
        said = f"predicted {self._said(mine)}; " if mine else ""
        self._record(trial_id, epoch, value, mine, "paused", why)
        if self.fate_log:
            self.fate_log.record(trial_id, PAUSED, f"paused at epoch {epoch}: {said}{why}")
        return TrialScheduler.PAUSE

    def _stop(
        self, trial_id: str, epoch: int, value: float | None, mine: Prediction | None, why: str = ""
    ) -> str:
        """``mine``: the model's prediction for the trial, None before the first model (``why`` is then given)."""
        self.stopped += 1
        self.ended.add(trial_id)
        self.frozen.discard(trial_id)
        if mine is not None:
            why = why or f"{chance_said(mine.chance)} chance to beat the best (stopped under {HOPELESS:.1%})"
        self._record(trial_id, epoch, value, mine, "stopped", why)
        said = f"predicted {self._said(mine)}; " if mine is not None else ""
        return stopped(self.fate_log, trial_id, "freeze-thaw", epoch, f"{said}{why}")

    def _record(
        self, trial_id: str, epoch: int, value: float | None, mine: Prediction | None, verdict: str, why: str
    ) -> None:
        """One decision in the fate log, as the report's table of comparisons shows it."""
        if not self.fate_log:
            return
        reason = verdict + (f": predicted {self._said(mine)}" if mine else "") + (f"; {why}" if why else "")
        compared(
            self.fate_log,
            trial_id,
            {
                "rung": epoch,
                "epoch": epoch,
                "value": value,
                "predicted": self._shown(mine.mean) if mine else None,
                "spread": self._spread_shown(mine.spread, mine.mean) if mine else None,
                "best": self._shown(self._best_scaled()) if self.model is not None else None,
                "kept": verdict == "goes on",
                "verdict": verdict,
                "arrived": self.results,
                "reason": reason,
            },
        )
