"""Ray's BayesOptSearch, also taking results of trials it did not propose.

When a scheduler holds trials until more join (sync brackets), a trial is drawn at random while the
Gaussian process waits for its random phase; bayes_opt's own ``register`` lets that result teach it.
"""

from __future__ import annotations

import math
from typing import Any

from ray.tune.search.bayesopt import BayesOptSearch


class BayesOptTakingPoints(BayesOptSearch):
    def add_evaluated_point(self, parameters: dict, value: float, error: bool = False, pruned: bool = False,
                            **kwargs: Any) -> None:  # fmt: skip
        if not error and not pruned and math.isfinite(value):  # a stopped trial's early loss is no final value
            self.optimizer.register(params=parameters, target=self._metric_op * value)
