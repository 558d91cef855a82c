"""One check per part of tuner/ray_compat/ that Ray still has what the part relies on (Ray 2.60).

If one fails after a Ray upgrade, re-read that part against the new Ray: the workaround may no longer be
needed, or may need to change. Parts 1-4, 11 and 12 have their checks in tests/unit/test_ray_compat.py.
"""

from __future__ import annotations

import inspect


def test_part_5_ray_train_and_ray_tune_still_differ_so_tutorial_trainables_need_the_swap():
    import ray.train
    from ray import tune

    assert ray.train.report is not tune.report and ray.train.get_checkpoint is not tune.get_checkpoint
    assert all(hasattr(tune, name) for name in ("report", "get_checkpoint", "Checkpoint", "get_context"))


def test_part_6_tune_restores_the_trial_count_from_the_saved_search_state():
    from ray.tune.search.search_generator import SearchGenerator

    from tuner.ray_compat.growth import SEARCH_STATE_PREFIX

    source = inspect.getsource(SearchGenerator)
    assert "_total_samples" in source and "_finished" in source
    from ray.tune.search.concurrency_limiter import ConcurrencyLimiter

    assert "live_trials" in inspect.getsource(ConcurrencyLimiter) and SEARCH_STATE_PREFIX == "search_gen_state-"


def test_part_7_rays_worker_formatter_is_the_text_formatter_tuner_replaces():
    from ray._common import formatters

    assert hasattr(formatters, "TextFormatter")


def test_part_8_a_trial_names_its_folder_only_when_asked():
    from ray.tune.experiment import Trial

    trial = Trial("t", config={}, trial_id="x1", stub=True)
    assert not trial.relative_logdir and callable(trial.init_local_path)


def test_part_9_a_trials_actor_is_where_tuner_kills_it():
    from ray.tune.experiment import Trial

    assert "ray_actor" in vars(Trial("t", config={}, trial_id="x2", stub=True).temporary_state)


def test_part_10_a_restored_run_uses_the_stopper_saved_in_its_state():
    from ray.tune.execution.tune_controller import TuneController

    saved_state = inspect.getsource(TuneController.__getstate__)
    assert "self._stopper = stopper" in inspect.getsource(TuneController.__init__)
    assert '"_stopper"' not in saved_state and '"_callbacks"' in saved_state  # the stopper is saved, callbacks not


def test_part_13_the_schedulers_keep_their_reasons_where_tuner_reads_them():
    from ray.tune.schedulers import HyperBandScheduler, MedianStoppingRule, PopulationBasedTraining
    from ray.tune.schedulers.async_hyperband import _Bracket as AshaBracket
    from ray.tune.schedulers.hyperband import _Bracket

    assert "_rungs" in inspect.getsource(AshaBracket.__init__) and callable(AshaBracket.cutoff)
    bracket = inspect.getsource(_Bracket)
    assert all(name in bracket for name in ("_live_trials", "_cumul_r", "_halves", "def successive_halving"))
    assert "_create_bracket" in inspect.getsource(HyperBandScheduler)
    assert all(hasattr(MedianStoppingRule, name) for name in ("_trials_beyond_time", "_running_mean", "_best_result"))
    assert hasattr(PopulationBasedTraining, "_exploit") and "_trial_state" in inspect.getsource(PopulationBasedTraining)


def test_part_14_clireporter_still_prints_the_lines_tuner_rewrites():
    from ray.tune import progress_reporter
    from ray.tune.schedulers import async_hyperband

    source = inspect.getsource(progress_reporter)
    assert "Number of errored trials" in source and "Result logdir" in source
    assert "num_stopped=" in inspect.getsource(async_hyperband) and "Iter {:.3f}: {}" in inspect.getsource(async_hyperband)


def test_parts_15_and_16_rays_address_reader_and_its_configuration_are_where_tuner_calls_them():
    from ray._private import services
    from ray._raylet import Config

    assert callable(services.canonicalize_bootstrap_address) and callable(Config.initialize)
