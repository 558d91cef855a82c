"""GPU helpers for a trial: memory telemetry, utilisation from NVML, and giving memory back after an OOM."""

from __future__ import annotations

import gc
import logging
from typing import Any

import torch

log = logging.getLogger(__name__)


class GpuTelemetry:
    """Peak memory per epoch (``torch.cuda.max_memory_allocated``) and mean utilisation sampled from NVML."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.enabled = device.type == "cuda"
        self._handle: Any = None
        self._samples: list[int] = []
        if self.enabled:
            try:
                import pynvml

                pynvml.nvmlInit()
                index = device.index if device.index is not None else torch.cuda.current_device()
                # NVML numbers GPUs ignoring CUDA_VISIBLE_DEVICES; the UUID names the trial's own GPU.
                uuid = str(torch.cuda.get_device_properties(index).uuid)
                self._handle = pynvml.nvmlDeviceGetHandleByUUID(
                    uuid if uuid.startswith("GPU-") else f"GPU-{uuid}"
                )
            except Exception as exc:  # NVML missing or not permitted: memory figures still work
                log.debug("NVML unavailable: %s", exc)
                self._handle = None

    def start_epoch(self) -> None:
        if self.enabled:
            torch.cuda.reset_peak_memory_stats(self.device)
            self._samples = []

    def sample(self) -> None:
        """Read GPU utilisation now (cheap); call every few dozen steps."""
        if self._handle is not None:
            import pynvml

            self._samples.append(pynvml.nvmlDeviceGetUtilizationRates(self._handle).gpu)

    def epoch_metrics(self) -> dict[str, float]:
        if not self.enabled:
            return {}
        metrics = {"gpu_memory_peak_mb": torch.cuda.max_memory_allocated(self.device) / 2**20}
        if self._samples:
            metrics["gpu_utilization"] = sum(self._samples) / len(self._samples)
        return metrics


def release_memory(device: torch.device) -> None:
    """Give cached blocks back after an out-of-memory error (the caller has dropped its references)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
