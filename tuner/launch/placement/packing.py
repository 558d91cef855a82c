"""``--gpus-per-trial auto``: how many trials share a GPU, from the measured memory of the hungriest config.

Before the sweep, the trainable's memory probe (a function it declares as ``train.memory_probe``) runs the
most demanding config of the space (every numeric parameter at its largest) for a few steps on a whole
GPU, and the trial's real footprint is read off the device (CUDA context and allocator pools included).
Each trial then gets the GPU share that fits with a safety margin, capped by what compute can feed:

* memory: ``USABLE_FRACTION`` of the GPU over ``footprint * (1 + SAFETY_MARGIN)``;
* CPUs: a trial needs its CPUs on the GPU's node to feed it;
* turns: without NVIDIA MPS, kernels of different processes take turns on the GPU, and trials whose steps
  keep it busy stop adding throughput after a few (measured on an H100 with the seed net's graphed steps:
  14 trials at once trained 1.0-1.4x as fast as one); with MPS they run side by side (7-8x), so only
  CPUs and MPS's client limit cap them.

A trial that still runs out of memory halves its batch (the trainable's own fallback) and the packing is
lowered for the trials created after it.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, cast

from ray.tune import Callback

from tuner.folder.names import PACKING_SIDECAR as PACKING_FILE

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.launch.trial.forms import TrainableForm
    from tuner.value_types import Config, ConfigDraft, Result, Space, Value

log = logging.getLogger(__name__)

SAFETY_MARGIN = 0.25
USABLE_FRACTION = 0.9
TIME_SLICED_TRIALS_PER_GPU = 4
MPS_CLIENTS_PER_GPU = 48
CONTEXT_ESTIMATE_BYTES = 512 * 2**20  # a CUDA context, when NVML cannot measure it
FUNCTION_DRAWS = 256
AUTO = "auto"


@dataclass(frozen=True)
class MemoryProbe:
    """One measurement: a trial's footprint on a GPU of ``gpu_total_bytes`` for ``config``."""

    footprint_bytes: int
    gpu_total_bytes: int
    gpu_name: str
    config: Config
    how: str = "measured"


class _Measured(TypedDict):
    """A ``MemoryProbe``'s fields as the GPU task sends them back."""

    footprint_bytes: int
    gpu_total_bytes: int
    gpu_name: str
    config: ConfigDraft
    how: str


@dataclass(frozen=True)
class Packing:
    """Trials per GPU, the share each gets, and why."""

    trials_per_gpu: int
    by_memory: int
    by_cpus: int
    by_turns: int | None
    probe: MemoryProbe | None = None
    note: str = ""

    @property
    def share(self) -> float:
        return gpu_share(self.trials_per_gpu)

    def describe(self) -> list[str]:
        if self.probe is None:
            return [f"gpus-per-trial auto: {self.note}"]
        p = self.probe
        limits = [f"memory fits {self.by_memory}", f"CPUs feed {self.by_cpus}"]
        if self.by_turns is not None:
            limits.append(
                f"{self.by_turns} without MPS (kernels take turns; start MPS to run more side by side)"
            )
        else:
            limits.append("MPS is running, so trials run side by side")
        config = ", ".join(f"{k}={v}" for k, v in p.config.items())
        return [
            f"gpus-per-trial auto: {_gib(p.footprint_bytes)} per trial ({p.how}) for the most demanding config "
            f"({config}) on {p.gpu_name} ({_gib(p.gpu_total_bytes)})",
            f"  -> {self.trials_per_gpu} trial(s) per GPU, {self.share:g} GPU each ({'; '.join(limits)})",
        ]


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def gpu_share(trials_per_gpu: int) -> float:
    """The GPU fraction for ``trials_per_gpu`` trials, rounded down so that many really fit in Ray's sums."""
    return 1.0 if trials_per_gpu <= 1 else math.floor(1e4 / trials_per_gpu) / 1e4


def plan_packing(probe: MemoryProbe, cpus_per_gpu: float, cpus_per_trial: float, mps: bool) -> Packing:
    """Trials per GPU from a measurement, the CPUs beside each GPU, and whether MPS is running."""
    need = probe.footprint_bytes * (1 + SAFETY_MARGIN)
    by_memory = max(1, int(probe.gpu_total_bytes * USABLE_FRACTION // max(need, 1)))
    by_cpus = max(1, int(cpus_per_gpu // cpus_per_trial))
    by_turns = None if mps else TIME_SLICED_TRIALS_PER_GPU
    trials = min(by_memory, by_cpus, by_turns or MPS_CLIENTS_PER_GPU)
    return Packing(trials, by_memory, by_cpus, by_turns, probe)


def no_gpu_packing() -> Packing:
    return Packing(0, 0, 0, None, None, "the cluster has no GPUs, so trials train on CPUs (0 GPUs per trial)")


def mps_running() -> bool:
    """Whether an MPS control daemon answers on this machine (where the driver runs)."""
    pipe = os.environ.get("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps")
    return os.path.exists(os.path.join(pipe, "control"))


# --- the most demanding config ---------------------------------------------------------------------


def demanding_config(params: Space, seed: int = 0) -> ConfigDraft:
    """Every numeric parameter at its largest value (widths, batch size); others at a typical value."""
    import numpy as np
    from ray.tune.search.sample import Categorical, Domain, Float, Function, Integer

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        config: ConfigDraft = {}
        for name, value in params.items():
            if isinstance(value, Mapping) and "grid_search" in value:
                # tune.grid_search's values, a list by construction
                config[name] = _largest(list(cast("Sequence[Value]", value["grid_search"])))
            elif isinstance(value, Categorical):
                config[name] = _largest(list(value.categories))
            elif isinstance(value, Integer):
                config[name] = int(value.upper) - 1  # randint's upper bound is exclusive
            elif isinstance(value, Float):
                config[name] = float(value.upper) if math.isfinite(value.upper) else value.sample()
            elif isinstance(value, Function):
                config[name] = _largest([value.sample(config={}) for _ in range(FUNCTION_DRAWS)])
            elif isinstance(value, Domain):
                config[name] = value.sample()
            else:
                config[name] = value
        return config
    finally:
        np.random.set_state(state)


def _largest(values: Sequence[Value]) -> Value:
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return max(numbers) if numbers and len(numbers) == len(values) else values[0]


# --- measuring on a GPU ----------------------------------------------------------------------------

MeasureFn: TypeAlias = "Callable[[Config], MemoryProbe]"


def memory_probe_of(trainable: TrainableForm) -> Callable[..., object] | None:
    from tuner.spec import contract

    return contract(trainable).memory_probe


def measure_on_gpu(
    probe: Callable[..., object], config: Config, kwargs: Mapping[str, Any], cpus: float
) -> MemoryProbe:
    """Run ``probe(config, **kwargs)`` as a Ray task holding one whole GPU and read its footprint there."""
    import ray

    task = ray.remote(num_gpus=1, num_cpus=cpus, max_retries=0)(_footprint)
    return MemoryProbe(**ray.get(task.remote(probe, dict(config), dict(kwargs))))


def _footprint(probe: Callable[..., object], config: ConfigDraft, kwargs: dict[str, Any]) -> _Measured:
    before = _device_used_bytes()  # before this process creates its CUDA context
    probe(config, **kwargs)
    import torch

    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_reserved()
    props = torch.cuda.get_device_properties(0)
    after = _device_used_bytes()
    if before is not None and after is not None and after > before:
        # Everything the process holds on the device now, with the allocator's pools at their peak.
        footprint = after - before - torch.cuda.memory_reserved() + peak
        how = "measured on the device"
    else:
        footprint = peak + CONTEXT_ESTIMATE_BYTES
        how = "allocator peak + an estimated CUDA context"
    return {
        "footprint_bytes": int(footprint),
        "gpu_total_bytes": int(props.total_memory),
        "gpu_name": props.name,
        "config": config,
        "how": how,
    }


def _device_used_bytes() -> int | None:
    """Memory in use on this process's GPU (the first of CUDA_VISIBLE_DEVICES), from NVML."""
    try:
        import pynvml

        pynvml.nvmlInit()
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
        if visible.startswith("GPU-"):
            handle = pynvml.nvmlDeviceGetHandleByUUID(visible)
        else:
            handle = pynvml.nvmlDeviceGetHandleByIndex(int(visible))
        return int(pynvml.nvmlDeviceGetMemoryInfo(handle).used)
    except Exception as exc:  # NVML missing or not permitted
        log.debug("NVML unavailable: %s", exc)
        return None


# --- lowering the packing after an out-of-memory error ---------------------------------------------


def start(folder: str, trials_per_gpu: int) -> str:
    """Begin adaptive packing for the sweep in ``folder``; returns the key its resource function reads.

    Ray keeps a copy of a trainable's resource function and calls that copy in the driver, so the live
    packing sits in a small file beside the experiment rather than in the function.
    """
    from tuner.storage import sidecar, write_atomically

    path = sidecar(folder, PACKING_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(str(path), json.dumps({"trials_per_gpu": trials_per_gpu}))
    return str(path)


def forget(key: str) -> None:
    Path(key).unlink(missing_ok=True)


def current(key: str) -> int:
    return int(json.loads(Path(key).read_text(encoding="utf-8"))["trials_per_gpu"])


def trial_resources(key: str, cpus: float, config: Config) -> dict[str, float]:
    """Resources of a trial created now: the current packing of the sweep behind ``key``."""
    return {"cpu": cpus, "gpu": gpu_share(current(key))}


def lower(key: str) -> int | None:
    """Halve the trials per GPU after an out-of-memory error; returns the new number, None if unchanged."""
    from tuner.storage import write_atomically

    trials = current(key)
    if trials <= 1:
        return None
    write_atomically(key, json.dumps({"trials_per_gpu": max(1, trials // 2)}))
    return max(1, trials // 2)


class OomWatcher(Callback):
    """Lowers the packing when a trial reports an out-of-memory retry (once per trial)."""

    def __init__(self, key: str, out: Callable[[str], None]) -> None:
        self.key, self.out = key, out
        self.seen: set[str] = set()

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        if not result.get("oom_retries") or trial.trial_id in self.seen:
            return
        self.seen.add(trial.trial_id)
        lowered = lower(self.key)
        if lowered is not None:
            self.out(
                f"trial {trial.trial_id} ran out of GPU memory; trials created from now on get "
                f"{gpu_share(lowered):g} GPU ({lowered} per GPU)"
            )
