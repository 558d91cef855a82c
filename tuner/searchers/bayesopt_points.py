"""Ray's BayesOptSearch, also taking results of trials it did not propose.

When a scheduler holds trials until more join (sync brackets), a trial is drawn at random while the
Gaussian process waits for its random phase; bayes_opt's own ``register`` lets that result teach it. A
config bayes_opt already holds (a warm start's best, run again first; two warm starts that share a trial)
keeps its first value: bayes_opt's GP refuses a point twice.

Private names: Ray's ``BayesOptSearch._register_result`` (overridden) and ``_metric_op``, bayes_opt's
``TargetSpace._as_array``; indexed in tuner/ray_compat/__init__.py, checked by
tests/unit/test_private_uses.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ray.tune.search.bayesopt import BayesOptSearch

from tuner.value_types import Value


class BayesOptTakingPoints(BayesOptSearch):
    def add_evaluated_point(
        self,
        parameters: dict[str, Value],
        value: float,
        error: bool = False,
        pruned: bool = False,
        intermediate_values: list[float] | None = None,
    ) -> None:
        if (
            not error and not pruned and math.isfinite(value)
        ):  # a stopped trial's early loss is no final value
            self._register_once(parameters, self._metric_op * value)

    # ``params``: the point bayes_opt suggested, by parameter name (Ray declares it a Tuple[str], wrongly)
    def _register_result(self, params: Any, result: dict[str, Value]) -> None:
        value = result[self.metric]
        if isinstance(value, (int, float)) and math.isfinite(value):
            self._register_once(params, self._metric_op * value)

    def _register_once(self, params: Mapping[str, Value], target: float) -> None:
        assert self.optimizer is not None, "set up by Tune before any result"
        space = self.optimizer.space
        if space._as_array(params) not in space:
            self.optimizer.register(params=params, target=target)
