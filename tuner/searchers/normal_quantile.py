"""A normal domain (``tune.randn``) as the bounded one a model searches: its quantile, kept off the tails."""

from __future__ import annotations

import math
import statistics

from tuner.searchers.probe import is_number
from tuner.value_types import Value

QUANTILE_EDGE = 1e-6  # a normal is searched through its quantile in [edge, 1 - edge]: ±4.75 sd


class NormalQuantile:
    """A normal domain searched through its quantile in [edge, 1 - edge] (±4.75 sd): bounded, as models need,
    and each quantile as likely as the normal made it (picklable: Ray saves searchers)."""

    def __init__(self, mean: float, sd: float, q: float | None, integer: bool) -> None:
        self.mean, self.sd, self.q, self.integer = mean, sd, q, integer

    def decode(self, x: float) -> float:
        x = min(max(float(x), QUANTILE_EDGE), 1 - QUANTILE_EDGE)
        value = statistics.NormalDist(self.mean, self.sd).inv_cdf(x)
        if self.q:
            value = round(value / self.q) * self.q
        return int(round(value)) if self.integer else value

    def encode(self, value: Value) -> float:
        if not is_number(value) or not math.isfinite(value):
            raise ValueError(f"{value!r} is not a number")
        return min(
            max(statistics.NormalDist(self.mean, self.sd).cdf(float(value)), QUANTILE_EDGE), 1 - QUANTILE_EDGE
        )
