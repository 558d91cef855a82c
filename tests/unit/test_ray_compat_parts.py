"""One check per part of tuner/ray_compat/ that Ray still has what the part relies on (Ray 2.60).

If one fails after a Ray upgrade, re-read that part against the new Ray: the workaround may no longer be
needed, or may need to change. Parts 3, 4, 11 and 12 have their checks in tests/unit/test_ray_compat.py (parts 1
and 2 their behaviour there too).
"""

from __future__ import annotations

import importlib
import inspect
import json
import signal
from pathlib import Path


def test_part_1_a_trial_stopped_without_a_live_actor_is_never_marked_for_saving():
    """Tune refreshes a trial in its saved state only when it marks the trial; stopping one that has no actor (a
    trial sync HyperBand paused) returns before the mark, so the state keeps calling it PAUSED."""
    from ray.tune.execution.tune_controller import TuneController

    stop = inspect.getsource(TuneController._schedule_trial_stop)
    no_actor = stop.index("if trial not in self._trial_to_actor:")
    assert stop.index("return", no_actor) < stop.index("self._mark_trial_to_checkpoint(trial)")
    assert "self._trials_to_cache" in inspect.getsource(TuneController._get_trial_checkpoints)


def test_part_2_tune_completes_a_waiting_trial_for_the_searcher_without_its_result():
    from ray.tune.execution.tune_controller import TuneController

    stop = inspect.getsource(TuneController.stop_trial)
    waiting = stop[
        stop.index("elif trial.status in [Trial.PENDING, Trial.PAUSED]:") : stop.index(
            "elif trial.status is Trial.RUNNING:"
        )
    ]
    assert "self._search_alg.on_trial_complete(trial.trial_id)\n" in waiting


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

    assert (
        "live_trials" in inspect.getsource(ConcurrencyLimiter) and SEARCH_STATE_PREFIX == "search_gen_state-"
    )


def test_part_7_rays_worker_formatter_is_the_text_formatter_tuner_replaces():
    from ray._common import formatters

    assert hasattr(formatters, "TextFormatter")


def test_part_9_a_trials_actor_is_where_tuner_kills_it():
    from ray.tune.experiment import Trial

    assert "ray_actor" in vars(Trial("t", config={}, trial_id="x2", stub=True).temporary_state)


def test_part_10_a_restored_run_uses_the_stopper_saved_in_its_state():
    from ray.tune.execution.tune_controller import TuneController

    saved_state = inspect.getsource(TuneController.__getstate__)
    assert "self._stopper = stopper" in inspect.getsource(TuneController.__init__)
    assert (
        '"_stopper"' not in saved_state and '"_callbacks"' in saved_state
    )  # the stopper is saved, callbacks not


def test_part_13_pbt_keeps_its_exploit_where_tuner_reads_it():
    from ray.tune.schedulers import PopulationBasedTraining

    assert hasattr(PopulationBasedTraining, "_exploit") and "_trial_state" in inspect.getsource(
        PopulationBasedTraining
    )
    assert "self._hyperparam_mutations" in inspect.getsource(PopulationBasedTraining.__init__)
    assert "last_train_time" in inspect.getsource(PopulationBasedTraining)


def test_parts_15_and_16_rays_address_reader_and_its_configuration_are_where_tuner_calls_them():
    from ray._private import services
    from ray._raylet import Config

    assert callable(services.canonicalize_bootstrap_address) and callable(Config.initialize)


def test_part_6_a_saved_search_names_the_storage_its_experiment_was_made_in():
    from ray.train._internal.storage import StorageContext
    from ray.tune.experiment import Experiment

    assert "experiment" in inspect.getsource(
        __import__("ray.tune.search.search_generator", fromlist=["x"]).SearchGenerator.get_state
    )
    assert {"storage_fs_path", "experiment_dir_name", "_timestamp"} <= set(vars(StorageContext("/tmp", "x")))
    assert "self.storage" in inspect.getsource(Experiment.__init__)


def test_part_17_rays_wrappers_still_hide_the_users_trainable_where_tuner_looks():
    from ray import tune

    from tuner.ray_compat import declared_resources, own_code

    def train(config):
        tune.get_checkpoint()

    wrapped = tune.with_parameters(train, data=1)
    assert (
        wrapped.__qualname__.endswith("with_parameters.<locals>.inner")
        and "trainable" in wrapped.__code__.co_freevars
    )
    assert own_code(wrapped) is train
    assert declared_resources(tune.with_resources(train, {"cpu": 2, "gpu": 0.5})) == {"CPU": 2.0, "GPU": 0.5}

    class Bowl(tune.Trainable):
        def step(self):
            return {}

    assert own_code(tune.with_resources(tune.with_parameters(Bowl, data=1), {"cpu": 3})) is Bowl
    assert declared_resources(tune.with_resources(Bowl, {"cpu": 3})) == {"CPU": 3.0}
    assert declared_resources(Bowl) is None


def test_part_18_ray_copies_the_experiments_state_through_the_function_tuner_replaces():
    import ray.train._internal.storage as ray_storage

    from tuner.ray_compat.atomic_sync import _FUNCTION, _MODULE

    assert _MODULE == ray_storage.__name__ and hasattr(ray_storage, _FUNCTION)
    uploads = inspect.getsource(ray_storage._upload_to_fs_path) + inspect.getsource(
        ray_storage._upload_to_uri_with_exclude_fsspec
    )
    assert (
        uploads.count(_FUNCTION) >= 2
    )  # looked up as a module global at each call, so the replacement is seen
    parameters = list(inspect.signature(getattr(ray_storage, _FUNCTION)).parameters)
    assert parameters[:4] == ["source", "destination", "source_filesystem", "destination_filesystem"]


def test_part_28_the_end_of_a_run_reads_every_trials_rows_through_the_method_tuner_skips():
    from ray.tune.analysis.experiment_analysis import ExperimentAnalysis
    from ray.tune.result_grid import ResultGrid

    from tuner.ray_compat.result_frames import FETCH, TO_RESULT, frames_unread

    assert f"self._trial_dataframes = self.{FETCH}()" in inspect.getsource(ExperimentAnalysis.__init__)
    # the grid asks for each trial's frame with .get, so a trial without one reads as no frame, not an error
    assert "trial_dataframes.get(trial.trial_id)" in inspect.getsource(ResultGrid._trial_to_result)
    # and builds one result a trial through the method tuner skips
    assert f"self.{TO_RESULT}(trial) for trial in" in inspect.getsource(ResultGrid.__init__)
    original, to_result = getattr(ExperimentAnalysis, FETCH), getattr(ResultGrid, TO_RESULT)
    with frames_unread():
        assert getattr(ExperimentAnalysis, FETCH)(object()) == {}
        assert getattr(ResultGrid, TO_RESULT)(object(), object()) is None
    assert getattr(ExperimentAnalysis, FETCH) is original and getattr(ResultGrid, TO_RESULT) is to_result


def test_part_19_with_parameters_puts_its_data_once_and_ray_flushes_it_at_every_init():
    from ray.tune import registry
    from ray.tune.trainable import util

    assert {"to_flush", "references"} <= set(vars(registry._ParameterRegistry()))
    source = inspect.getsource(util.with_parameters)
    assert "_post_init_hooks.append(parameter_registry.flush)" in source and "parameter_registry" in source


def test_part_6_a_search_state_out_of_step_with_the_saved_trials_is_reconciled(tmp_path):
    """A kill -9 while Ray copied its state left a search state that had made a trial the experiment state
    never held: the resumed sweep must make it again, not end one short."""
    from ray.tune.search import ConcurrencyLimiter, Searcher
    from ray.tune.search.search_generator import SearchGenerator

    from tuner.ray_compat.growth import reconcile_saved_search

    class Counting(Searcher):
        def suggest(self, trial_id):
            return {"x": 1}

        def on_trial_complete(self, trial_id, result=None, error=False):
            pass

        def save(self, checkpoint_path):
            Path(checkpoint_path).write_text("{}")

        def restore(self, checkpoint_path):
            assert Path(checkpoint_path).read_text() == "{}"

    generator = SearchGenerator(ConcurrencyLimiter(Counting(metric="loss", mode="min"), max_concurrent=4))
    generator.set_search_properties("loss", "min", {})
    generator._total_samples = 3
    limiter = generator.searcher
    for trial_id in ("a", "b", "c"):  # "c" was made, but the experiment state beside it never held it
        limiter.suggest(trial_id)
        generator._counter += 1
    assert generator.is_finished()
    generator.save_to_dir(str(tmp_path), session_str="s1")

    assert reconcile_saved_search(str(tmp_path), {"a", "b"})
    restored = SearchGenerator(ConcurrencyLimiter(Counting(metric="loss", mode="min"), max_concurrent=4))
    restored.restore_from_dir(str(tmp_path))
    assert restored._counter == 2 and not restored.is_finished()
    assert restored.searcher.live_trials == {"a", "b"}
    assert not reconcile_saved_search(str(tmp_path), {"a", "b"}), "nothing to change the second time"


def test_part_20_tune_lets_a_searcher_of_its_own_have_one_trial_waiting_unless_the_setting_says_more(
    monkeypatch,
):
    import os

    from ray.tune.execution.tune_controller import _get_max_pending_trials
    from ray.tune.search import ConcurrencyLimiter, SearchGenerator
    from ray.tune.search.optuna import OptunaSearch

    from tuner.ray_compat.waiting import SETTING, trials_waiting

    monkeypatch.delenv(SETTING, raising=False)
    searcher = OptunaSearch(metric="loss", mode="min")
    assert _get_max_pending_trials(SearchGenerator(searcher)) == 1  # what the part works around
    import ray

    limited = SearchGenerator(ConcurrencyLimiter(searcher, max_concurrent=3))
    newer = tuple(int(p) for p in ray.__version__.split(".")[:2]) >= (2, 60)
    assert _get_max_pending_trials(limited) == (3 if newer else 1)  # Ray 2.50-2.55 keep one: tuner sets 3
    with trials_waiting(4):
        assert _get_max_pending_trials(SearchGenerator(searcher)) == 4  # read when the controller is made
    with trials_waiting(3):
        assert _get_max_pending_trials(limited) == 3
    assert SETTING not in os.environ  # taken away after the run


def test_part_20_a_waiting_count_the_user_set_is_left_alone(monkeypatch):
    import os

    from tuner.ray_compat.waiting import SETTING, trials_waiting

    monkeypatch.setenv(SETTING, "7")
    with trials_waiting(2):
        assert os.environ[SETTING] == "7"
    assert os.environ[SETTING] == "7"
    monkeypatch.delenv(SETTING)
    with trials_waiting(None):
        assert SETTING not in os.environ


def test_part_21_a_restored_trial_starts_from_the_latest_checkpoint_its_metadata_names(tmp_path):
    """Tune restores from ``latest_checkpoint_result`` of the pickled checkpoint manager and takes the epoch from
    that checkpoint's metrics; tuner points it at a whole one by rewriting that manager."""
    import json

    from ray.train import CheckpointConfig
    from ray.train._internal.checkpoint_manager import _CheckpointManager
    from ray.train._internal.session import _TrainingResult
    from ray.tune import Checkpoint
    from ray.tune.experiment import Trial
    from ray.tune.trainable import Trainable
    from ray.tune.trainable.metadata import _TrainingRunMetadata

    from tuner.folder.checkpoints import damage, write_manifest
    from tuner.ray_compat.checkpoints import fall_back_from_damaged

    assert "latest_checkpoint_result" in inspect.getsource(Trial.checkpoint.fget)
    assert "TRAINING_ITERATION" in inspect.getsource(Trainable.restore)

    trial_dir = tmp_path / "t1"
    manager = _CheckpointManager(CheckpointConfig(num_to_keep=2, checkpoint_score_attribute="loss",
                                                  checkpoint_score_order="min"))  # fmt: skip
    for epoch, loss in ((1, 3.0), (2, 2.0), (3, 2.5), (4, 2.8)):
        folder = trial_dir / f"checkpoint_{epoch - 1:06d}"
        folder.mkdir(parents=True)
        (folder / "model.pt").write_bytes(b"w" * 100 * epoch)
        write_manifest(folder)
        manager.register_checkpoint(
            _TrainingResult(
                Checkpoint.from_directory(str(folder)), {"loss": loss, "training_iteration": epoch}
            )
        )
    kept = sorted(p.name for p in trial_dir.iterdir())  # the two best and the latest
    assert kept == ["checkpoint_000001", "checkpoint_000002", "checkpoint_000003"], kept
    metadata = _TrainingRunMetadata()
    metadata.checkpoint_manager = manager
    trial_json = json.dumps({"trial_id": "t1", "status": "PAUSED", "relative_logdir": "t1"})
    state = {"trial_data": [[trial_json, metadata.get_json_state()]], "runner_data": {}}
    (tmp_path / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps(state))

    (trial_dir / "checkpoint_000003" / "model.pt").write_bytes(b"garbage")
    (fallback,) = fall_back_from_damaged(str(tmp_path), {"t1"}, damage)
    assert (fallback.damaged, fallback.to, fallback.epoch) == ("checkpoint_000003", "checkpoint_000002", 3)
    entry = json.loads((tmp_path / "experiment_state-2026-01-01_00-00-00.json").read_text())["trial_data"][0]
    restored = _TrainingRunMetadata.from_json_state(entry[1]).checkpoint_manager
    assert restored.latest_checkpoint_result.checkpoint.path.endswith("checkpoint_000002")
    assert restored.latest_checkpoint_result.metrics["training_iteration"] == 3
    assert [r.metrics["training_iteration"] for r in restored._checkpoint_results] == [3, 2]
    assert not fall_back_from_damaged(str(tmp_path), {"t1"}, damage), "nothing to change the second time"


def test_part_22_a_clusters_versions_are_where_tuner_reads_them_before_connecting():
    from ray._common.usage import usage_lib
    from ray._raylet import GcsClient
    from ray.dashboard.modules.dashboard_sdk import SubmissionClient

    written = usage_lib._generate_cluster_metadata(ray_init_cluster=False)  # what a head keeps in its GCS
    assert {"ray_version", "python_version"} <= set(written)
    assert "internal_kv_get" in inspect.getsource(usage_lib.get_cluster_metadata) and GcsClient is not None
    asked = inspect.getsource(SubmissionClient._check_connection_and_version_with_url)
    assert '"/api/version"' in asked and 'r.json()["ray_version"]' in asked
    assert '"GET", "/api/version"' in inspect.getsource(SubmissionClient.get_version)  # the call tuner makes


# --- part 23: tuner/ray_compat/state_file.py -------------------------------------------------------------


def test_part_23_the_experiment_state_file_holds_the_trial_fields_tuner_reads(tmp_path):
    """If this fails, re-check tuner/ray_compat/state_file.py (and tuner/ray_compat/statuses.py, which rewrites the
    same file): Ray's ``experiment_state-<session>.json`` is ``{"trial_data": [[trial JSON, run metadata JSON],
    ...]}`` with ``trial_id``, ``status``, ``relative_logdir``, ``experiment_tag`` (``<n>_...``) and ``config``
    in the first and ``error_filename`` in the second; its session names sort by time."""
    from ray.tune.execution.tune_controller import TuneController
    from ray.tune.experiment import Trial

    from tuner.ray_compat.state_file import STATE_PREFIX, saved_trial_states

    assert TuneController.CKPT_FILE_TMPL == STATE_PREFIX + "{}.json"
    saving = inspect.getsource(TuneController.save_to_dir)
    assert '"trial_data": list(self._get_trial_checkpoints().values())' in saving
    assert "trial.get_json_state()" in inspect.getsource(TuneController)
    assert '"%Y-%m-%d_%H-%M-%S"' in inspect.getsource(TuneController.__init__)  # names sort by time

    trial = Trial("t", config={"lr": 0.1}, trial_id="a1", stub=True, experiment_tag="3_lr=0.1")
    trial.set_status(Trial.ERROR)
    trial.run_metadata.error_filename = "error.txt"
    trial_json, runtime_json = trial.get_json_state()
    assert {"trial_id", "status", "relative_logdir", "experiment_tag", "config"} <= set(json.loads(trial_json))
    assert json.loads(runtime_json)["error_filename"] == "error.txt"
    state = {"trial_data": [[trial_json, runtime_json]], "runner_data": {}, "stats": {}}
    (tmp_path / f"{STATE_PREFIX}2026-01-01_00-00-00.json").write_text(json.dumps(state))
    saved = saved_trial_states(tmp_path)["a1"]
    assert saved["status"] == "ERROR" and saved["error_file"] == "error.txt"
    assert saved["made"] == 3 and saved["config"] == {"lr": 0.1}


def test_part_23_rays_own_file_names_are_the_ones_tuner_lists():
    """If this fails, re-check tuner/ray_compat/state_file.py and whoever lists or edits those files
    (tuner/ray_compat/growth.py, tuner/launch/resume.py): the names of Ray's own files in an experiment."""
    from ray.tune.impl import tuner_internal
    from ray.tune.search import BasicVariantGenerator
    from ray.tune.search.search_generator import SearchGenerator

    from tuner.ray_compat.state_file import SEARCH_STATE_PREFIX, TUNER_PICKLE, VARIANT_STATE_PREFIX

    assert tuner_internal._TUNER_PKL == TUNER_PICKLE
    assert SearchGenerator.CKPT_FILE_TMPL.startswith(SEARCH_STATE_PREFIX)
    assert BasicVariantGenerator.CKPT_FILE_TMPL.startswith(VARIANT_STATE_PREFIX)


# --- part 24: tuner/ray_compat/messages.py ----------------------------------------------------------------


def test_part_24_the_storage_layer_frames_a_refused_write_names_still_exist():
    """If this fails, re-check ``STORAGE_LAYER`` in tuner/ray_compat/messages.py: a bucket's refusal counts as the
    storage refusing a write only when the traceback passes through Ray's storage layer, recognised by these
    function names (``_upload_to_fs_path`` is private) and pyarrow's private ``_fs`` module."""
    import pyarrow._fs
    import ray.train._internal.storage as ray_storage
    from ray.train._internal.syncer import Syncer

    from tuner.ray_compat.messages import STORAGE_LAYER

    assert set(STORAGE_LAYER) == {"persist_current_checkpoint", "_upload_to_fs_path", "pyarrow/_fs", "sync_up"}
    assert callable(ray_storage._upload_to_fs_path) and callable(ray_storage.StorageContext.persist_current_checkpoint)
    assert callable(Syncer.sync_up) and "pyarrow/_fs" in Path(pyarrow._fs.__file__).as_posix()


# --- part 26: tuner/ray_compat/live.py ---------------------------------------------------------------------


def test_part_26_an_old_experiments_live_table_unpickles_from_the_names_rays_cli_reporter_keeps():
    """If this fails, re-check ``cli_reporter_settings`` in tuner/ray_compat/live.py: an experiment
    saved when the live table was a CLIReporter subclass holds Ray's private attribute names in its pickled
    reporter, and resuming it reads them."""
    from ray.tune import CLIReporter

    held = vars(CLIReporter(metric="loss", mode="min", parameter_columns=["lr"], metric_columns={"loss": "loss"}))
    assert held["_metric"] == "loss" and held["_mode"] == "min"
    assert list(held["_parameter_columns"]) == ["lr"] and dict(held["_metric_columns"]) == {"loss": "loss"}


# --- parts 25 and 24: tuner/ray_compat/orderly_stop.py and messages.py ------------------------------------


def test_part_25_rays_orderly_stop_handler_sits_on_sigusr1():
    """If this fails, re-check tuner/ray_compat/orderly_stop.py: tuner hands a stop to the handler Ray's private
    ``ray.tune.tune._setup_signal_catching`` installs on SIGUSR1 while ``fit`` runs (undocumented; only SIGINT
    and ``TUNE_DISABLE_SIGINT_HANDLER`` are in Ray's docs)."""
    from tuner.ray_compat.orderly_stop import RAY_SIGINT_OFF, RAY_STOP

    tune_module = importlib.import_module("ray.tune.tune")
    catching = inspect.getsource(tune_module._setup_signal_catching)
    assert RAY_STOP == signal.SIGUSR1 and "signal.signal(signal.SIGUSR1, signal_interrupt_tune_run)" in catching
    assert f'os.getenv("{RAY_SIGINT_OFF}", "0")' in catching
    assert "_setup_signal_catching()" in inspect.getsource(tune_module.run)


def test_part_24_rays_message_for_a_vanished_worker_is_the_one_tuner_matches():
    """If this fails, re-check ``PROCESS_DIED`` in tuner/ray_compat/messages.py: a trial whose process died
    is recognised by the text Ray's GCS puts in the ActorDiedError (C++, so read from the binary)."""
    import ray

    from tuner.ray_compat.messages import PROCESS_DIED

    gcs_server = Path(ray.__file__).parent / "core" / "src" / "ray" / "gcs" / "gcs_server"
    assert PROCESS_DIED.encode() in gcs_server.read_bytes()


# --- part 27: tuner/ray_compat/patient_storage.py ---------------------------------------------------------


def test_part_27_ray_makes_a_buckets_filesystem_through_the_function_tuner_replaces(monkeypatch):
    """If this fails, re-check tuner/ray_compat/patient_storage.py: Ray's storage context (its trials,
    checkpoints and experiment state) gets its filesystem from ``get_fs_and_path``, looked up where tuner
    replaces it, and the filesystem goes to the trials pickled inside it."""
    import pickle

    import pyarrow.fs
    from ray.train._internal import storage as ray_storage

    from tuner.ray_compat.patient_storage import (
        FUNCTION,
        MODULES,
        RayPatientHandler,
        wait_out_storage_outages,
    )

    assert f"{FUNCTION}(" in inspect.getsource(ray_storage.StorageContext.__init__)
    assert "storage_filesystem=self.storage_filesystem" in inspect.getsource(ray_storage.StorageContext)
    for name in MODULES:
        assert hasattr(importlib.import_module(name), FUNCTION), name
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing is asked of it here
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    wait_out_storage_outages()
    fs, path = importlib.import_module("ray.tune.impl.tuner_internal").get_fs_and_path("s3://bucket/sweeps")
    assert isinstance(fs.handler, RayPatientHandler) and path == "bucket/sweeps"
    assert isinstance(pickle.loads(pickle.dumps(fs)).handler, RayPatientHandler)  # as a trial gets it
    local, _ = ray_storage.get_fs_and_path("/tmp/sweeps")
    assert isinstance(local, pyarrow.fs.LocalFileSystem)  # a folder is left to Ray


def test_part_18_rays_sync_to_a_bucket_leaves_out_files_through_the_filesystem_tuner_reads(tmp_path):
    """If this fails, re-check ``_state_last`` in tuner/ray_compat/atomic_sync.py: a sync of the driver's
    staging folder to a bucket hands Ray's copy an excluding local filesystem whose root and patterns tuner
    reads, to send the experiment's state after the rest."""
    from ray.train._internal import storage as ray_storage

    excluding = ray_storage._ExcludingLocalFilesystem(root_path=tmp_path, exclude=["*/checkpoint_*"])
    assert excluding._root_path == tmp_path and excluding._exclude == ["*/checkpoint_*"]
    upload = inspect.getsource(ray_storage._upload_to_uri_with_exclude_fsspec)
    assert "pyarrow.fs.FSSpecHandler(local_fs)" in upload and "_pyarrow_fs_copy_files(" in upload
    (tmp_path / "experiment_state-1.json").write_text("{}")
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial" / "result.json").write_text("{}")
    state_left_out = ray_storage._ExcludingLocalFilesystem(root_path=tmp_path, exclude=["experiment_state-*"])
    assert [Path(p).name for p in state_left_out.find(str(tmp_path))] == ["result.json"]


def test_part_24_a_metric_reported_as_a_tensor_fails_in_words_that_say_what_to_do():
    """Ray refuses a torch tensor among the metrics with advice to report a checkpoint; the failure's line says
    to report a number. The words are Ray's own (its session module), checked here on every Ray version."""
    from ray.train._internal import session

    from tuner.ray_compat.messages import TENSOR_METRIC, in_words

    assert TENSOR_METRIC in inspect.getsource(session)
    ray_line = "ValueError: Passing objects containg Torch tensors as metrics is not supported as it will throw an exception on deserialization."
    assert in_words(ray_line).startswith(
        "a metric was reported as a torch tensor; report a number instead, e.g. loss.item() or float(loss) (Ray: "
    )
    assert in_words("ValueError: bad lr") == "ValueError: bad lr"


def test_pbt_keeps_a_perturbed_value_inside_its_domain_and_on_its_step():
    """Ray's PBT multiplies a value by 0.8 or 1.2 and leaves it there: a width from qrandint(8, 64, 8) became 77,
    beyond the space and off its step, and 8 became 10. Every perturbation now lands back in the space."""
    import random

    from ray import tune
    from ray.tune.schedulers.pbt import _explore

    from tuner.schedulers.pbt import WithinDomains, mutations

    space = {"schedule/warmup": tune.qrandint(8, 64, 8), "lr": tune.loguniform(1e-4, 1e-1), "opt": tune.choice(["a", "b"])}
    mutable = mutations(space)
    keep = WithinDomains({n: d for n, d in mutable.items() if not isinstance(d, list)})
    random.seed(0)
    seen = set()
    for width, lr in ((64, 0.1), (8, 1e-4), (56, 0.05)):
        for _ in range(50):
            config, _ = _explore({"schedule/warmup": width, "lr": lr, "opt": "a"}, mutable, 0.25, (1.2, 0.8), keep)
            seen.add(config["schedule/warmup"])
            assert 1e-4 <= config["lr"] <= 1e-1 and config["opt"] in ("a", "b")
    assert seen <= set(range(8, 65, 8)) and {8, 64} <= seen


def test_pbt_keeps_a_bound_off_the_step_on_the_step():
    """A value past a bound is brought onto the step within it: qrandint(5, 64, 8) gave 5 (below its first step)."""
    import pytest
    from ray import tune

    from tuner.schedulers.pbt import WithinDomains

    keep = WithinDomains({"a": tune.quniform(0, 0.9, 0.3), "w": tune.qrandint(5, 64, 8), "lr": tune.uniform(0, 1)})
    assert keep({"a": 1.08, "w": 3, "lr": 1.2}) == {"a": pytest.approx(0.9), "w": 8, "lr": 1.0}


def test_pbt_keeps_a_parameter_that_shapes_the_model_as_drawn_and_its_plan_says_so():
    """Ray's guide to Lightning searches layer_1_size with tune.choice: perturbed, a trial continued from another's
    checkpoint could not load its tensors (size mismatch), so PBT leaves it as drawn, and says why."""
    from ray import tune

    from tuner.objectives import Objective
    from tuner.schedulers.base import SchedulerContext
    from tuner.schedulers.pbt import Pbt, mutations

    space = {"lr": tune.loguniform(1e-4, 1e-1), "layer_1_size": tune.choice([32, 64, 128]),
             "batch_size": tune.choice([32, 64]), "model/hidden_dim": tune.randint(8, 64)}  # fmt: skip
    assert list(mutations(space)) == ["lr", "batch_size"]
    context = SchedulerContext(max_epochs=10, objectives=(Objective("loss", "min"),), params=space, num_samples=8)
    (line,) = Pbt().describe(context)
    assert "with perturbed lr, batch_size (" in line
    assert "kept as drawn: layer_1_size, model/hidden_dim (by its name it shapes the model" in line

