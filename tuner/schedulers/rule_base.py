"""What tuner's early-stopping rules share on Tune's public scheduler interface: the comparison they rank by."""

from __future__ import annotations

from ray.tune.schedulers import FIFOScheduler

from tuner.objectives import Objective, as_mode
from tuner.schedulers.comparing import Comparison


class Rule(FIFOScheduler):
    """A rule built with its comparison; one unpickled from an older experiment may learn its metric from Tune."""

    comparison: Comparison
    # An experiment saved before the rules were tuner's own holds Ray's scheduler, which learnt its metric
    # and mode from Tune at run time: the converted rule does too (tuner/schedulers/saved_before.py).
    metric_from_tune = False

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: object) -> bool:
        if self.metric_from_tune and metric and mode:
            self.comparison = Comparison((Objective(metric, as_mode(mode)),), self.comparison.constraints)
            self.metric_from_tune = False
        return True
