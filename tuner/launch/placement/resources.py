"""Per-trial CPUs and GPUs, checked against what the cluster's nodes really have before any launch.

A request that no single node can satisfy would leave every trial PENDING forever; we refuse it instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tuner.errors import UsageError


@dataclass(frozen=True)
class NodeResources:
    cpus: float
    gpus: float


def alive_nodes() -> list[NodeResources]:
    """The resources of every live node of the connected Ray cluster."""
    import ray

    return [
        NodeResources(node["Resources"].get("CPU", 0.0), node["Resources"].get("GPU", 0.0))
        for node in ray.nodes()
        if node.get("Alive")
    ]


def default_gpus_per_trial(nodes: Iterable[NodeResources]) -> float:
    """One GPU per trial where the cluster has GPUs, else none."""
    return 1.0 if any(n.gpus > 0 for n in nodes) else 0.0


def _fmt(x: float) -> str:
    return f"{x:g}"


def check_trial_fits(cpus: float, gpus: float, nodes: list[NodeResources]) -> None:
    """Raise a clear error when no node can ever run one trial of this size."""
    if not nodes:
        raise UsageError("the Ray cluster reports no live nodes")
    total_cpus = sum(n.cpus for n in nodes)
    total_gpus = sum(n.gpus for n in nodes)
    if gpus > 0 and total_gpus == 0:
        raise UsageError(
            f"--gpus-per-trial {_fmt(gpus)} asks for a GPU but the cluster has none; "
            "use --gpus-per-trial 0 to train on CPUs"
        )
    if not any(n.cpus >= cpus and n.gpus >= gpus for n in nodes):
        biggest_gpu = max(n.gpus for n in nodes)
        biggest_cpu = max(n.cpus for n in nodes)
        wanted = f"{_fmt(cpus)} CPUs" + (f" and {_fmt(gpus)} GPUs" if gpus else "")
        raise UsageError(
            f"a trial needs {wanted} on one node, but the largest node has {_fmt(biggest_cpu)} CPUs and "
            f"{_fmt(biggest_gpu)} GPUs ({len(nodes)} node(s), {_fmt(total_cpus)} CPUs and {_fmt(total_gpus)} GPUs "
            "in total); lower --cpus-per-trial/--gpus-per-trial"
        )


def trial_resources(cpus: float, gpus: float) -> Mapping[str, float]:
    return {"cpu": cpus, "gpu": gpus}


def concurrent_slots(cpus: float, gpus: float, nodes: list[NodeResources]) -> int:
    """How many trials of this size fit at once on the cluster."""
    slots = 0
    for n in nodes:
        fit = int(n.cpus // cpus) if cpus > 0 else 10**6
        if gpus > 0:
            fit = min(fit, int(round(n.gpus / gpus, 6) // 1))
        slots += max(fit, 0)
    return slots
