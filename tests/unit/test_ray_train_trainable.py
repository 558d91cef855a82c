"""A trainable that runs a Ray Train trainer in each trial, as Ray Train's guide to tuning writes it: its workers'
size read from the ScalingConfig it builds, the trials at once leaving them room, no actor reused."""

from __future__ import annotations

import importlib.util

import pytest

from tuner.launch.trial.forms import reusable
from tuner.launch.trial.ray_train import TrainerWorkers, trainer_workers

SOURCE = '''
import ray.train
from ray.train import ScalingConfig
from ray.train.torch import TorchTrainer
from ray.tune.integration.ray_train import TuneReportCallback

WORKERS = 2


def per_worker(config):
    pass


def literal(config):
    trainer = TorchTrainer(per_worker, scaling_config=ray.train.ScalingConfig(num_workers=3, use_gpu=False))
    trainer.fit()


def constant(config):
    TorchTrainer(per_worker, scaling_config=ScalingConfig(num_workers=WORKERS, resources_per_worker={"CPU": 2})).fit()


def gpus(config):
    TorchTrainer(per_worker, scaling_config=ScalingConfig(num_workers=2, use_gpu=True)).fit()


def scaling(n):
    return ScalingConfig(num_workers=n)


def through_a_helper(config):
    TorchTrainer(per_worker, scaling_config=scaling(config["n"])).fit()


def plain(config):
    return {"loss": 1.0}


SCALING = ScalingConfig(num_workers=2)


def module_constant(config):
    TorchTrainer(per_worker, scaling_config=SCALING).fit()


def without_scaling(config):
    TorchTrainer(per_worker, run_config=ray.train.RunConfig(callbacks=[TuneReportCallback()])).fit()
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("space") / "train_space.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("train_space", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def ray_total(**scaling) -> TrainerWorkers:
    """What Ray's own ScalingConfig sums for these arguments (Ray 2.50's trainer takes a CPU of its own, 2.60's
    none)."""
    from ray.train import ScalingConfig

    total = ScalingConfig(**scaling).total_resources
    return TrainerWorkers(float(total.get("CPU", 0.0)), float(total.get("GPU", 0.0)))


def test_the_workers_are_read_from_the_scaling_config_by_rays_own_arithmetic(module):
    assert trainer_workers(module.literal) == ray_total(num_workers=3, use_gpu=False)
    # a module constant, 2 CPUs each
    assert trainer_workers(module.constant) == ray_total(num_workers=2, resources_per_worker={"CPU": 2})
    assert trainer_workers(module.gpus) == ray_total(num_workers=2, use_gpu=True)  # a GPU per worker
    assert trainer_workers(module.gpus).gpus == 2.0
    unknown = trainer_workers(module.through_a_helper)  # found in a helper, sized by the trial's config
    assert unknown is not None and not unknown.known and "cannot be read" in unknown.describe()
    assert trainer_workers(module.plain) is None
    assert trainer_workers(module.module_constant) == ray_total(num_workers=2)  # a ScalingConfig built once
    built = trainer_workers(module.without_scaling)  # a trainer with Ray's default scaling, not read
    assert built is not None and not built.known and not reusable(module.without_scaling)


def test_the_trials_at_once_leave_each_trainer_room_and_no_actor_is_reused(module):
    workers = TrainerWorkers(3.0, 0.0)
    assert workers.trials_at_once(1, 0, cpus=8, gpus=0) == 2  # 4 CPUs a trial with its workers
    assert TrainerWorkers(0.0, 2.0).trials_at_once(1, 0, cpus=16, gpus=8) == 4
    assert workers.trials_at_once(1, 0, cpus=2, gpus=0) == 0
    # the trial's thread outlives its end while the trainer shuts down: Tune fails a reused actor's next trial
    assert not reusable(module.literal) and reusable(module.plain)


@pytest.mark.usefixtures("ray_session")  # a dry run joins a running Ray (tests/conftest.py) rather than start its own
def test_the_plan_runs_one_trial_at_once_where_two_would_starve_their_workers(run_cli, tmp_path):
    """Two trials of 1 CPU each on 2 CPUs left their trainers' workers no CPU: both waited for ever."""
    space = tmp_path / "rt_space.py"
    space.write_text(
        "from ray import tune\nimport ray.train\nfrom ray.train.torch import TorchTrainer\nfrom tuner import SearchSpace\n"
        "def per_worker(config):\n    pass\n"
        "def driver(config):\n"
        "    TorchTrainer(per_worker, train_loop_config=config['train_loop_config'],\n"
        "                 scaling_config=ray.train.ScalingConfig(num_workers=1)).fit()\n"
        "SPACE = SearchSpace(trainable=driver, params={'train_loop_config': {'lr': tune.loguniform(1e-4, 1e-1)}},\n"
        "                    metric='loss', mode='min')\n"
    )
    got = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--storage-path", tmp_path, "--dry-run")
    need = ray_total(num_workers=1).cpus  # 1 on Ray 2.60; Ray 2.50's trainer takes a CPU of its own besides
    if need == 1:
        assert got.code == 0, got.err
        assert "resources: 1 CPU and 0 GPU per trial; 1 trial(s) at once" in got.out
        assert (
            "  each trial runs a Ray Train trainer: its workers take 1 CPU beside the trial's own, so 1 trial(s) at "
            "once leave them room"
        ) in got.out.splitlines()
    big = space.read_text().replace("num_workers=1", "num_workers=4")
    space.write_text(big)
    refused = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--storage-path", tmp_path, "--dry-run")
    need = ray_total(num_workers=4).cpus
    assert refused.code == 2 and f"workers need {need:g} CPUs and 0 GPUs beside the trial's own 1 CPU(s)" in refused.err


def test_the_ray_train_api_under_another_name_gets_its_notice_too(tmp_path):
    """``from ray import train as rtrain`` ran unchanged but without the notice the docs promise."""
    from tuner.ray_compat import old_api_notice

    path = tmp_path / "aliased_space.py"
    path.write_text(
        "from ray import train as rtrain\n"
        "def aliased(config):\n    rtrain.report({'loss': 1.0})\n"
        "def plain(config):\n    return {'loss': 1.0}\n"
    )
    spec = importlib.util.spec_from_file_location("aliased_space", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert "the ray.train API" in (old_api_notice(loaded.aliased) or "")
    assert old_api_notice(loaded.plain) is None
