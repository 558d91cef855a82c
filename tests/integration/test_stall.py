"""A sweep that can make no progress is ended, with a reason, instead of waiting for ever."""

from __future__ import annotations

import time

import pytest

from tuner.launch.guards.stall import StallAwareSearcher, StallStopper, StallWatch, stall_reason


@pytest.mark.slow  # waits on a real stall timeout
def test_a_real_deadlock_is_ended_with_what_it_has(tmp_path):
    """Ray's own parts, wired as tuner no longer wires them: HyperBand completes its trials without a
    result, so BayesOpt waits for ever for its random phase and Tune blocks asking it for a trial."""
    from ray import tune
    from ray.tune.schedulers import HyperBandScheduler
    from ray.tune.search import ConcurrencyLimiter
    from ray.tune.search.bayesopt import BayesOptSearch

    def train(config):
        for epoch in (1, 2):
            tune.report({"loss": config["x"] + 1 / epoch})

    folder = str(tmp_path / "stalled")
    watch = StallWatch(timeout=3, folder=folder)
    space = BayesOptSearch.convert_search_space({"x": tune.uniform(0, 1)})
    raw = BayesOptSearch(space=space, metric="loss", mode="min", random_search_steps=2, random_state=0)
    searcher = StallAwareSearcher(ConcurrencyLimiter(raw, max_concurrent=2), watch)
    tuner = tune.Tuner(
        train,
        tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=4, search_alg=searcher,
                                    scheduler=HyperBandScheduler(max_t=2, reduction_factor=2)),  # fmt: skip
        run_config=tune.RunConfig(storage_path=str(tmp_path), name="stalled", stop=StallStopper(watch),
                                  callbacks=[watch], verbose=0),  # fmt: skip
    )
    started = time.monotonic()
    tuner.fit()
    assert time.monotonic() - started < 60
    assert watch.reason and "2 TERMINATED" in watch.reason, watch.reason
    assert stall_reason(folder) == watch.reason, "the driver reads it back even from a restored copy"


