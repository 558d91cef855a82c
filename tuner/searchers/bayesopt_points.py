"""Ray's BayesOptSearch, also taking results of trials it did not propose.

When a scheduler holds trials until more join (sync brackets), a trial is drawn at random while the
Gaussian process waits for its random phase; bayes_opt's own ``register`` lets that result teach it.
"""

from __future__ import annotations

import math
from typing import Any

from ray.tune.search.bayesopt import BayesOptSearch


class BayesOptTakingPoints(BayesOptSearch):
    def add_evaluated_point(self, parameters: dict, value: float, error: bool = False, **kwargs: Any) -> None:
        if not error and math.isfinite(value):
            self.optimizer.register(params=parameters, target=self._metric_op * value)
