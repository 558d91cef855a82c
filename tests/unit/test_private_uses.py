"""One check per private use outside tuner/ray_compat/ (its docstring's "Private uses outside this package").

Each builds the real library object where it can and fails when the library no longer has, calls or sets
what tuner relies on. If one fails after an upgrade of Ray, Optuna or bayesian-optimization, re-read the
module its docstring names against the new version before changing the test.
"""

from __future__ import annotations

import inspect
import re
import warnings

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import GPSampler, RandomSampler, TPESampler
from optuna.trial import TrialState

optuna.logging.set_verbosity(optuna.logging.WARNING)


# --- tuner/searchers/bayesopt_points.py ------------------------------------------------------------------


def test_bayesopt_points_ray_routes_results_through_register_result_and_bayes_opt_tells_a_point_it_holds():
    """If this fails, re-check tuner/searchers/bayesopt_points.py: it overrides Ray's private
    ``BayesOptSearch._register_result(params, result)``, reads ``_metric_op`` (the sign for the mode) and asks
    bayes_opt's ``TargetSpace._as_array(params) in space`` whether a config is registered already (a second
    ``register`` of one raises). ``TargetSpace.params_to_array`` is the public way for a dict."""
    from ray.tune import search
    from ray.tune.search.bayesopt import BayesOptSearch

    from tuner.searchers.bayesopt_points import BayesOptTakingPoints

    assert list(inspect.signature(BayesOptSearch._register_result).parameters) == ["self", "params", "result"]
    assert inspect.getsource(BayesOptSearch.on_trial_complete).count("self._register_result(params, result)") >= 1

    searcher = BayesOptTakingPoints(
        space={"x": (0.0, 1.0)}, metric="loss", mode="min", random_state=0, random_search_steps=1, verbose=0
    )
    assert searcher._metric_op == -1.0  # maximised by bayes_opt: a loss to minimise is negated
    config = searcher.suggest("t1")
    assert config is not None and config != search.Searcher.FINISHED
    space = searcher.optimizer.space
    assert space._as_array(config) not in space
    searcher.on_trial_complete("t1", {"loss": 0.5})
    assert space._as_array(config) in space and len(space) == 1
    searcher.add_evaluated_point(config, 0.4)  # the same config again: kept at its first value, no error
    assert len(space) == 1 and list(space.target) == [-0.5]


# --- tuner/searchers/planned.py ------------------------------------------------------------------------


def test_planned_optuna_search_keeps_its_study_and_trials_where_the_applier_reads_them():
    """If this fails, re-check tuner/searchers/planned.py: ``_tell_constraints`` reads Ray's private
    ``OptunaSearch._ot_trials`` (trial id -> Optuna trial, to ``set_constraint`` on) and ``_propose_next``
    enqueues the config to run again on ``OptunaSearch._ot_study``, expecting it to be the next proposal."""
    from ray import tune
    from ray.tune.search.optuna import OptunaSearch

    searcher = OptunaSearch(
        space={"x": tune.uniform(0, 1)}, metric="loss", mode="min", sampler=RandomSampler(seed=0)
    )
    assert isinstance(searcher._ot_study, optuna.Study)
    searcher._ot_study.enqueue_trial({"x": 0.25}, skip_if_exists=False)
    assert searcher.suggest("t1") == {"x": 0.25}
    model_trial = searcher._ot_trials["t1"]
    assert isinstance(model_trial, optuna.Trial) and callable(model_trial.set_constraint)


def test_planned_optuna_search_tells_a_completion_without_the_metric_as_pruned():
    """If this fails, re-check tuner/searchers/planned.py's ``on_trial_complete``: a trial a scheduler stopped
    early is told to Optuna as pruned by leaving the metric out, which Ray's OptunaSearch turns into
    ``TrialState.PRUNED`` with the epochs ``on_trial_result`` reported (undocumented behaviour)."""
    from ray import tune
    from ray.tune.search.optuna import OptunaSearch

    searcher = OptunaSearch(
        space={"x": tune.uniform(0, 1)}, metric="loss", mode="min", sampler=RandomSampler(seed=0)
    )
    searcher.suggest("t1")
    searcher.on_trial_result("t1", {"loss": 0.7, "training_iteration": 1})
    searcher.on_trial_complete("t1", {"training_iteration": 1})
    (told,) = searcher._ot_study.trials
    assert told.state == TrialState.PRUNED and told.intermediate_values == {1: 0.7}


def test_planned_bayesopt_search_proposes_its_points_to_evaluate_first_and_saves_them(tmp_path):
    """If this fails, re-check tuner/searchers/planned.py's ``_propose_next``: a warm start's config to run
    again is appended to Ray's private ``BayesOptSearch._points_to_evaluate``, which ``suggest`` pops before
    asking the model and ``save`` keeps."""
    from ray.tune.search.bayesopt import BayesOptSearch

    def searcher() -> BayesOptSearch:
        return BayesOptSearch(space={"x": (0.0, 1.0)}, metric="loss", mode="min", random_state=0, verbose=0)

    saved = searcher()
    saved._points_to_evaluate = [*(saved._points_to_evaluate or []), {"x": 0.125}]
    saved.save(str(tmp_path / "state.pkl"))
    restored = searcher()
    restored.restore(str(tmp_path / "state.pkl"))
    assert restored._points_to_evaluate == [{"x": 0.125}]
    assert restored.suggest("t1") == {"x": 0.125} and restored._points_to_evaluate == []


# --- tuner/searchers/optuna_samplers.py ----------------------------------------------------------------


def test_optuna_samplers_tpe_reads_its_trials_through_sample_and_study_get_trials():
    """If this fails, re-check tuner/searchers/optuna_samplers.py's ``FreshTPE._sample`` and ``_StudyAs``:
    TPESampler's private ``_sample(study, trial, search_space)`` must be where both relative and independent
    sampling split the trials, reading them through the private ``study._get_trials(deepcopy, states,
    use_cache)`` only (``_StudyAs`` answers that one call with the epoch view)."""
    assert list(inspect.signature(TPESampler._sample).parameters) == ["self", "study", "trial", "search_space"]
    assert "self._sample(" in inspect.getsource(TPESampler._sample_relative)
    assert "self._sample(" in inspect.getsource(TPESampler.sample_independent)
    source = inspect.getsource(TPESampler._sample)
    assert "study._get_trials(" in source and "study.get_trials(" not in source
    assert list(inspect.signature(optuna.Study._get_trials).parameters) == ["self", "deepcopy", "states", "use_cache"]


def test_optuna_samplers_default_gamma_is_tpes_own_private_default():
    """If this fails, re-check ``at_furthest_epoch`` in tuner/searchers/optuna_samplers.py: it imports
    ``default_gamma`` from the private ``optuna.samplers._tpe.sampler`` so that "enough trials" is TPE's own
    size of its good group."""
    from optuna.samplers._tpe import sampler as tpe_module

    assert tpe_module.default_gamma(100) == 10 and tpe_module.default_gamma(1000) == 25
    assert "self._gamma = default_gamma" in inspect.getsource(TPESampler._sample)


def test_optuna_samplers_keep_their_random_sampler_and_rng_where_tuner_draws_from_them():
    """If this fails, re-check tuner/searchers/optuna_samplers.py: ``FreshTPE`` draws an unseen config from
    TPESampler's private ``_random_sampler``, ``WarpedGP`` from GPSampler's private ``_rng.rng``; their random
    starts draw from ``_random_sampler`` and GPSampler's ``_independent_sampler``, as Optuna's own do."""
    import inspect

    from optuna.samplers import GPSampler

    from tuner.searchers.optuna_samplers import FreshTPE
    from tuner.searchers.warped_gp import WarpedGP

    assert isinstance(FreshTPE(3, seed=0)._random_sampler, RandomSampler)
    assert isinstance(WarpedGP(3, seed=0)._rng.rng, np.random.RandomState)
    assert isinstance(WarpedGP(3, seed=0)._independent_sampler, RandomSampler)
    assert "self._independent_sampler.sample_independent" in inspect.getsource(GPSampler.sample_independent)


@pytest.mark.parametrize(
    ("sampler", "key"),
    [
        (lambda: TPESampler(n_startup_trials=0, multivariate=True, constant_liar=True, seed=0), "tpe"),
        (lambda: GPSampler(n_startup_trials=0, seed=0, warn_independent_sampling=False), "gp"),
    ],
)
def test_optuna_samplers_a_running_trials_relative_params_are_in_its_system_attrs(sampler, key):
    """If this fails, re-check ``_params_of`` in tuner/searchers/optuna_samplers.py: a running trial's
    relative parameters are read from the system attributes ``tpe:relative_params:<i>`` /
    ``gp:relative_params:<i>`` (JSON in chunks), where Optuna's samplers share them (a private convention)."""
    from optuna.samplers._gp import sampler as gp_module
    from optuna.samplers._tpe import sampler as tpe_module

    from tuner.searchers.optuna_samplers import _params_of

    assert (tpe_module._RELATIVE_PARAMS_KEY, gp_module._RELATIVE_PARAMS_KEY) == ("tpe:relative_params", "gp:relative_params")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study = optuna.create_study(sampler=sampler())
    space = {"x": FloatDistribution(0, 1)}
    for value in (0.3, 0.1):
        trial = study.ask(space)
        study.tell(trial, value)
    study.ask().suggest_float("x", 0, 1)  # sampled relative to the space the finished trials share
    running = study.trials[-1]
    assert running.state == TrialState.RUNNING and f"{key}:relative_params:0" in running.system_attrs
    running.params.clear()  # as before the trial asks for it: only the system attributes hold it
    assert set(_params_of(running)) == {"x"} and 0 <= _params_of(running)["x"] <= 1


def test_optuna_samplers_gp_hooks_are_called_where_tuner_overrides_them():
    """If this fails, re-check ``WarpedGP`` in tuner/searchers/warped_gp.py: GPSampler's private
    ``_sample_relative_impl(study, completed_trials, running_trials, search_space)`` must fit the completed
    trials' values (warped there) and ``_optimize_acqf(acqf, best_params)`` must choose the proposal (Optuna's
    own comment: "we do not make any effort to keep backward compatibility")."""
    impl = inspect.signature(GPSampler._sample_relative_impl).parameters
    assert list(impl) == ["self", "study", "completed_trials", "running_trials", "search_space"]
    assert list(inspect.signature(GPSampler._optimize_acqf).parameters) == ["self", "acqf", "best_params"]
    assert "self._sample_relative_impl(" in inspect.getsource(GPSampler.sample_relative)
    impl_source = inspect.getsource(GPSampler._sample_relative_impl)
    assert "self._optimize_acqf(" in impl_source and "trial.values for trial in completed_trials" in impl_source


def test_optuna_samplers_gp_search_space_has_what_the_untried_search_reads():
    """If this fails, re-check ``WarpedGP`` and ``_best_untried``/``_grid``/``_neighbours`` in
    tuner/searchers/warped_gp.py: they build the private ``optuna._gp.search_space.SearchSpace`` and read
    its ``dim``, ``is_categorical``, ``discrete_indices``, ``continuous_indices``,
    ``get_choices_of_discrete_params``, ``sample_normalized_params`` and ``get_normalized_params(trials,
    params)``, and score candidates with the private acquisition's ``eval_acqf_no_grad``."""
    from optuna._gp import search_space as gp_search_space
    from optuna._gp.acqf import BaseAcquisitionFunc

    space = gp_search_space.SearchSpace(
        {
            "a": CategoricalDistribution([1, 2, 4]),
            "c": IntDistribution(0, 3),
            "x": FloatDistribution(0, 1),
        }
    )
    assert space.dim == 3 and len(space.continuous_indices) == 1 and len(space.discrete_indices) == 2
    assert sorted(np.asarray(space.is_categorical).tolist()) == [False, False, True]
    assert sorted(len(c) for c in space.get_choices_of_discrete_params()) == [3, 4]
    assert space.sample_normalized_params(8, np.random.RandomState(0)).shape == (8, 3)
    assert list(inspect.signature(space.get_normalized_params).parameters) == ["trials", "trial_params"]
    assert list(inspect.signature(BaseAcquisitionFunc.eval_acqf_no_grad).parameters) == ["self", "x"]


# --- tuner/launch/watching/tensorboard_log.py ------------------------------------------------------------


def test_tensorboard_log_ray_adds_no_tensorboard_logger_beside_ours(tmp_path, monkeypatch):
    """If this fails, re-check tuner/launch/watching/tensorboard_log.py: it subclasses TBXLoggerCallback only
    so that Ray's private ``ray.tune.utils.callback._create_default_callbacks`` (which adds a TBXLoggerCallback
    unless one of its kind is given) adds none beside it. The public alternative is
    ``TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=1`` with the CSV and JSON loggers passed explicitly."""
    from ray.tune.logger import TBXLoggerCallback
    from ray.tune.utils.callback import _create_default_callbacks

    from tuner.launch.watching.tensorboard_log import TensorBoardLogger

    monkeypatch.delenv("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", raising=False)
    ours = TensorBoardLogger(str(tmp_path), {}, "loss", "min", 3)
    callbacks = _create_default_callbacks([ours], metric="loss")
    assert [c for c in callbacks if isinstance(c, TBXLoggerCallback)] == [ours]
    assert any(isinstance(c, TBXLoggerCallback) for c in _create_default_callbacks([], metric="loss"))


# --- tuner/replay/engine.py --------------------------------------------------


def test_replay_controller_answers_every_call_the_replayed_schedulers_make():
    """If this fails, re-check tuner/replay/engine.py: ``Controller`` stands in for Ray's TuneController
    (DeveloperAPI) as the schedulers a replay runs see it; every ``tune_controller.<name>`` they call must be
    one it answers, and the Trial methods it drives must exist."""
    from ray.tune.experiment import Trial
    from ray.tune.schedulers import async_hyperband, hb_bohb, hyperband, median_stopping_rule, trial_scheduler

    from tuner.replay.engine import Controller
    from tuner.schedulers import asha_rule, hyperband_rule, median_rule

    called: set[str] = set()
    for module in (
        async_hyperband,
        hyperband,
        hb_bohb,
        median_stopping_rule,
        trial_scheduler,
        asha_rule,
        hyperband_rule,
        median_rule,
    ):
        called |= set(re.findall(r"tune_controller\.(\w+(?:\.\w+)?)", inspect.getsource(module)))
    answered = {name for name in dir(Controller) if not name.startswith("_")} | {"search_alg.searcher"}
    assert "self.search_alg = _SearchAlg(searcher)" in inspect.getsource(Controller.__init__)
    assert called <= answered, sorted(called - answered)

    trial = Trial("replay", config={"x": 1}, trial_id="00001", stub=True)
    trial.set_status(Trial.RUNNING)
    trial.update_last_result({"loss": 1.0, "training_iteration": 1})
    assert trial.status == Trial.RUNNING and trial.last_result["loss"] == 1.0
