"""--gpus-per-trial auto: packing trials onto a GPU from a measured footprint (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest
from ray import tune

from tuner.cli import main
from tuner.errors import UsageError
from tuner.launch.placement import packing
from tuner.launch.placement.packing import MemoryProbe, demanding_config, gpu_share, plan_packing
from tuner.settings import SweepConfig, coerce

GIB = 2**30
H100 = 80 * GIB


def probe(footprint_gib: float) -> MemoryProbe:
    return MemoryProbe(int(footprint_gib * GIB), H100, "NVIDIA H100", {"batch_size": 16})


def test_memory_decides_when_it_is_the_tightest_limit():
    p = plan_packing(probe(20), cpus_per_gpu=16, cpus_per_trial=1, mps=True)
    # 20 GiB + 25% margin = 25 GiB per trial; 90% of 80 GiB holds 2 of them.
    assert (p.trials_per_gpu, p.by_memory, p.by_cpus, p.by_turns) == (2, 2, 16, None)
    assert p.share == 0.5


def test_cpus_cap_small_trials():
    p = plan_packing(probe(1), cpus_per_gpu=16, cpus_per_trial=2, mps=True)
    assert (p.trials_per_gpu, p.by_memory, p.by_cpus) == (8, 57, 8)


def test_without_mps_trials_taking_turns_are_capped():
    p = plan_packing(probe(1), cpus_per_gpu=16, cpus_per_trial=1, mps=False)
    assert p.trials_per_gpu == packing.TIME_SLICED_TRIALS_PER_GPU
    assert "without MPS" in p.describe()[1]


def test_a_trial_bigger_than_the_gpu_still_gets_one_whole_gpu():
    p = plan_packing(probe(100), cpus_per_gpu=16, cpus_per_trial=1, mps=True)
    assert (p.trials_per_gpu, p.share) == (1, 1.0)


@pytest.mark.parametrize("trials", [1, 2, 3, 7, 13, 14, 48])
def test_shares_are_rounded_down_so_that_many_trials_really_fit(trials):
    share = gpu_share(trials)
    assert share * trials <= 1.0 and share > 1.0 / (trials + 1)


def test_the_plan_names_the_measurement_and_the_result():
    lines = plan_packing(probe(2), cpus_per_gpu=16, cpus_per_trial=1, mps=True).describe()
    assert lines[0].startswith(
        "gpus-per-trial auto: 2.00 GiB per trial (measured) for the most demanding config"
    )
    assert "batch_size=16" in lines[0] and "NVIDIA H100 (80.00 GiB)" in lines[0]
    assert "16 trial(s) per GPU, 0.0625 GPU each" in lines[1]


def test_the_most_demanding_config_takes_every_numeric_parameter_at_its_largest():
    params = {
        "l1": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
        "lr": tune.loguniform(1e-4, 1e-1),
        "batch_size": tune.choice([2, 4, 8, 16]),
        "depth": tune.randint(1, 5),
        "width": {"grid_search": [32, 64]},
        "optimizer": tune.choice(["sgd", "adam"]),
        "epochs_fixed": 3,
    }
    state = np.random.get_state()
    config = demanding_config(params, seed=0)
    assert config == {"l1": 256, "lr": 0.1, "batch_size": 16, "depth": 4, "width": 64,
                      "optimizer": "sgd", "epochs_fixed": 3}  # fmt: skip
    assert np.array_equal(np.random.get_state()[1], state[1]), "the global generator is left as it was"


def test_lowering_after_an_oom_halves_the_trials_per_gpu_down_to_one(tmp_path):
    key = packing.start(str(tmp_path), 8)
    assert packing.trial_resources(key, 1, {}) == {"cpu": 1, "gpu": 0.125}
    assert [packing.lower(key) for _ in range(4)] == [4, 2, 1, None]
    assert packing.trial_resources(key, 1, {}) == {"cpu": 1, "gpu": 1.0}


def test_auto_is_accepted_from_flags_files_and_the_environment():
    assert SweepConfig(space="x", gpus_per_trial="auto").gpus_per_trial == "auto"
    assert coerce("gpus_per_trial", "Auto", "env") == "auto"
    assert coerce("gpus_per_trial", "0.5", "env") == 0.5
    with pytest.raises(UsageError, match="a number or 'auto'"):
        SweepConfig(space="x", gpus_per_trial="some")


def test_a_bad_gpus_per_trial_flag_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["sweep", "--space", "cifar_small", "--gpus-per-trial", "lots"])
    assert exit_info.value.code == 2
    assert "'lots' is neither a number nor 'auto'" in capsys.readouterr().err
