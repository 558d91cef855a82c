"""The preflight check: a trial no node can hold is refused before launch, never left PENDING."""

from __future__ import annotations

import pytest

from tuner.errors import UsageError
from tuner.launch.placement.resources import (
    NodeResources,
    check_trial_fits,
    concurrent_slots,
    default_gpus_per_trial,
)

CPU_BOX = [NodeResources(cpus=2, gpus=0)]
GPU_NODES = [NodeResources(cpus=16, gpus=1), NodeResources(cpus=16, gpus=1)]


@pytest.mark.parametrize(
    "cpus, gpus, nodes, slots",
    [(1, 0, CPU_BOX, 2), (0.5, 0, CPU_BOX, 4), (4, 0.25, GPU_NODES, 8), (1, 0.25, GPU_NODES, 8), (16, 1, GPU_NODES, 2)],
)  # fmt: skip
def test_trials_that_fit_pass_and_count_their_slots(cpus, gpus, nodes, slots):
    check_trial_fits(cpus, gpus, nodes)  # raises for a trial no node can hold
    assert concurrent_slots(cpus, gpus, nodes) == slots


@pytest.mark.parametrize("gpus", [0.5, 1.0])
def test_gpus_on_a_machine_without_any(gpus):
    with pytest.raises(UsageError, match="asks for a GPU but the cluster has none"):
        check_trial_fits(1, gpus, CPU_BOX)


def test_more_gpus_than_any_single_node_has_even_if_the_total_is_enough():
    with pytest.raises(
        UsageError, match=r"needs 1 CPUs and 2 GPUs on one node.*largest node has 16 CPUs and 1 GPUs"
    ):
        check_trial_fits(1, 2, GPU_NODES)


def test_more_cpus_than_the_cluster_has():
    with pytest.raises(UsageError, match="needs 4 CPUs on one node"):
        check_trial_fits(4, 0, CPU_BOX)


def test_default_gpu_share_follows_the_cluster():
    assert default_gpus_per_trial(CPU_BOX) == 0
    assert default_gpus_per_trial(GPU_NODES) == 1


def test_fractional_gpus_pack_several_trials_per_gpu():
    assert concurrent_slots(1, 0.25, GPU_NODES) == 8
    assert concurrent_slots(1, 0, CPU_BOX) == 2
