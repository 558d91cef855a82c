"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

2. Completion without a result (Ray 2.60): Tune completes a trial that HyperBand stopped while paused with
``result=None``; a model-based searcher then never learns that trial's value (BayesOpt waits forever for
its random phase to end). ``LastResultOnCompletion`` hands the searcher the trial's last result.
"""

from __future__ import annotations

from tuner.value_types import Value


class LastResultOnCompletion:
    """Mixin for a searcher: remembers each trial's last result and completes with it when Tune gives none."""

    def __init__(self) -> None:
        self.last_results: dict[str, dict[str, Value]] = {}  # a trial's last result, as Tune gave it

    def remember(self, trial_id: str, result: dict[str, Value]) -> None:
        self.last_results[trial_id] = result

    def completed(
        self, trial_id: str, result: dict[str, Value] | None, error: bool
    ) -> dict[str, Value] | None:
        last = self.last_results.pop(trial_id, None)
        return last if result is None and not error else result
