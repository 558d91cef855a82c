"""Ray's PBT, writing down which trial each exploited and what it changed, the moment it decides.

PBT decides in private state (``_exploit``, ``_trial_state``, ``_hyperparam_mutations``; part 13 of
tuner/ray_compat/__init__.py): the reason is read from it right after Ray's own exploit, which is left to decide
as it does. tests/unit/test_ray_compat_parts.py checks each name is still there. ASHA, HyperBand, BOHB and the
median rule are tuner's own, on Tune's public scheduler interface (tuner/schedulers/).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ray.tune.schedulers import PopulationBasedTraining

from tuner.folder.fates import PERTURBED, DecisionLog, perturbed
from tuner.value_types import Value

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController
    from ray.tune.experiment import Trial


class RecordingPBT(PopulationBasedTraining):
    # PBT's own arguments, passed on untouched
    def __init__(
        self,
        *args: Any,
        fate_log: DecisionLog | None = None,
        on_pause: Callable[[Trial, dict[str, Value]], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fate_log = fate_log
        self.on_pause = on_pause

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: dict[str, Value]) -> str:
        """Ray's PBT pauses a trial at a perturbation to let a waiting one run: ``on_pause`` hears of each (the
        scheduler's entry says once where that runs epochs again, as HyperBand and BOHB say it)."""
        decision = str(super().on_trial_result(tune_controller, trial, result))
        on_pause = getattr(self, "on_pause", None)  # a PBT saved before it had one
        if decision == self.PAUSE and on_pause is not None:
            on_pause(trial, result)
        return decision

    def _exploit(self, tune_controller: TuneController, trial: Trial, trial_to_clone: Trial) -> None:
        before = dict(trial_to_clone.config)
        epoch = self._trial_state[trial].last_train_time
        donor_epoch = self._trial_state[trial_to_clone].last_train_time
        super()._exploit(tune_controller, trial, trial_to_clone)
        if self.fate_log:
            changes = ", ".join(
                f"{k} {_short(before.get(k))} -> {_short(v)}"
                for k, v in trial.config.items()
                if k in self._hyperparam_mutations and v != before.get(k)
            )
            self.fate_log.record(
                trial.trial_id, PERTURBED, perturbed(epoch, trial_to_clone.trial_id, donor_epoch, changes)
            )


def _short(value: Value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
