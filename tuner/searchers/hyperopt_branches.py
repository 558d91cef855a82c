"""Ray's HyperOptSearch over a space whose conditional parameters sit inside their parent's ``hp.choice``
(tuner/searchers/hyperopt_tpe.py builds it), its suggestions named as the plan names them."""

from __future__ import annotations

from typing import Any

from ray.tune.search.hyperopt import HyperOptSearch

from tuner.folder.pickled import Restored
from tuner.value_types import ConfigDraft

INDEX = "__index"  # the chosen option's index, inside each option of a parent's hp.choice (hyperopt_tpe.py)


class BranchedHyperOptSearch(Restored, HyperOptSearch):
    """Ray's HyperOptSearch whose suggestions name a branch's parameters as the plan does: the parent's chosen
    option (a dict) becomes the parent's index and the option's parameters beside it."""

    SINCE = {"_branch_parents": lambda state: ()}

    def __init__(self, *args: Any, parents: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._branch_parents = parents

    def suggest(self, trial_id: str) -> ConfigDraft | None:
        config = super().suggest(trial_id)
        if not isinstance(config, dict):
            return config
        for parent in self._branch_parents:
            chosen = dict(config.pop(parent))
            config[parent] = chosen.pop(INDEX)
            config.update(chosen)
        return config
