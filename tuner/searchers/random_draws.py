"""Random search as a Tune ``Searcher``: independent draws, seeded, one per trial as trials are created.

A Searcher (rather than Tune's variant generator) keeps its place in the sweep's saved state, so a
finished random sweep can be extended by more trials like a model-based one.
"""

from __future__ import annotations

import pickle

import numpy as np
from ray.tune.search import Searcher
from ray.tune.search.sample import Domain

from tuner.nesting import flatten, unflatten
from tuner.objectives import Mode
from tuner.value_types import ConfigDraft, Result, Space
from tuner.values import plain


class RandomSearcher(Searcher):
    def __init__(self, space: Space, seed: int, metric: str | None = None, mode: Mode | None = None) -> None:
        super().__init__(metric=metric, mode=mode)
        self.space, self.seed, self.draws = dict(space), seed, 0

    def suggest(self, trial_id: str) -> ConfigDraft | None:
        stream = (self.seed * 7919 + self.draws) % (2**32)
        self.draws += 1
        rng = np.random.RandomState(stream)
        saved = np.random.get_state()
        # sample_from functions draw from numpy's global generator: seeded apart from ``rng``, whose stream it was,
        # so that sample_from(np.random.uniform) drew the very numbers of the first uniform parameter
        np.random.seed(np.random.SeedSequence((stream, 1)).generate_state(1))
        try:
            config: ConfigDraft = {}
            for name, value in flatten(self.space).items():
                config[name] = (
                    plain(value.sample(config=unflatten(config), random_state=rng))
                    if isinstance(value, Domain)
                    else value
                )
            return unflatten(config)  # a nested space's config nested again, as the trainable reads it
        finally:
            np.random.set_state(saved)

    def on_trial_complete(self, trial_id: str, result: Result | None = None, error: bool = False) -> None:
        pass

    def save(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "wb") as f:
            pickle.dump({"draws": self.draws}, f)

    def restore(self, checkpoint_path: str) -> None:
        with open(checkpoint_path, "rb") as f:
            self.draws = pickle.load(f)["draws"]
