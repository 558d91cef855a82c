"""What tuner's early-stopping rules share on Tune's public scheduler interface: the comparison they rank by
(how each decides and records a stop: tuner/schedulers/stopping.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ray.tune.schedulers import FIFOScheduler

from tuner.folder.pickled import Restored
from tuner.objectives import Objective, as_mode
from tuner.open_trials import view_of
from tuner.schedulers.comparing import Comparison

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController
    from ray.tune.experiment import Trial


class OpenFirstFIFO(FIFOScheduler):
    """Tune's FIFO choice of the next trial (the first pending one, else the first paused) made among the open
    trials only: Tune's own walks every trial the sweep has had at every step, a cost per trial that grows with
    the sweep. The one difference: a trial retried after a failure keeps its place among the open ones, where
    Tune's moves it behind them."""

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        waiting = view_of(self).update(tune_controller.get_trials())
        for status in ("PENDING", "PAUSED"):
            for trial in waiting:
                if trial.status == status:
                    return trial
        return None


class Rule(Restored, OpenFirstFIFO):
    """A rule built with its comparison; one unpickled from an older experiment may learn its metric from Tune."""

    comparison: Comparison
    # An experiment saved before the rules were tuner's own holds Ray's scheduler, which learnt its metric
    # and mode from Tune at run time: the converted rule does too (tuner/schedulers/saved_before.py).
    metric_from_tune = False

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: object) -> bool:
        if self.metric_from_tune and metric and mode:
            self.comparison = Comparison.of((Objective(metric, as_mode(mode)),), self.comparison.constraints)
            self.metric_from_tune = False
        return True
