"""A training step replayed as one CUDA graph: what makes a small net fast on a big GPU.

The seed net's step is about a hundred tiny kernels (convolutions, casts, the optimiser's updates); on an
H100 each takes a few microseconds to run but several more for Python and PyTorch to launch, so an eager
step is bound by the CPU. Captured once per batch size, the whole step (gather the batch from the split
already on the GPU, forward, backward, SGD update, running loss sum) is launched with one call, and the
only per-step work left on the CPU is copying the batch's indices into the graph's input buffer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

log = logging.getLogger(__name__)

WARMUP_STEPS = 3


class GraphedTrainStep:
    """Forward, backward and optimiser step for batches of exactly ``batch_size`` indices into ``split``.

    Warm-up steps (which let cuDNN pick its algorithms and create the optimiser's state) run on real
    batches and would move the weights, so the model and optimiser state are put back in place before
    capture: the graph then trains from exactly the state the eager loop would have.
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        images: torch.Tensor,
        labels: torch.Tensor,
        batch_size: int,
        autocast: Callable[[], Any],
    ) -> None:
        device = labels.device
        self.batch_size = batch_size
        self.index = torch.arange(batch_size, device=device) % len(labels)
        self.loss_sum = torch.zeros((), device=device)
        self._images, self._labels = images, labels
        self._model, self._optimizer, self._autocast = model, optimizer, autocast

        saved = _save_in_place_state(model, optimizer)
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(WARMUP_STEPS):
                self._step()
        torch.cuda.current_stream(device).wait_stream(side)
        _restore_in_place_state(model, optimizer, saved)
        self.loss_sum.zero_()

        optimizer.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(self.graph):
                self._step()
        except BaseException:
            # A capture cut short (out of memory, say) still owns a private memory pool and the gradients
            # it allocated there: give both back before the error travels on.
            optimizer.zero_grad(set_to_none=True)
            self.graph.reset()
            raise

    def _step(self) -> None:
        self._optimizer.zero_grad(set_to_none=True)
        with self._autocast():
            logits = self._model(self._images[self.index]).float()
            loss = nn.functional.cross_entropy(logits, self._labels[self.index])
        loss.backward()
        self._optimizer.step()
        self.loss_sum.add_(loss.detach() * self.batch_size)

    def __call__(self, index: torch.Tensor) -> None:
        """Train on the batch ``index`` (device indices, exactly ``batch_size`` of them)."""
        self.index.copy_(index, non_blocking=True)
        self.graph.replay()


def _save_in_place_state(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    return {
        "params": [t.detach().clone() for t in [*model.parameters(), *model.buffers()]],
        "optimizer": {
            id(p): {k: v.detach().clone() for k, v in state.items() if isinstance(v, torch.Tensor)}
            for p, state in optimizer.state.items()
        },
    }


def _restore_in_place_state(
    model: nn.Module, optimizer: torch.optim.Optimizer, saved: dict[str, Any]
) -> None:
    """Copy the saved values back into the same tensors (a graph keeps their addresses).

    Optimiser state the warm-up created where there was none (SGD's momentum buffers) is zeroed: for SGD
    without dampening a zero buffer gives the same first update as a missing one.
    """
    with torch.no_grad():
        for tensor, value in zip([*model.parameters(), *model.buffers()], saved["params"], strict=True):
            tensor.copy_(value)
        for p, state in optimizer.state.items():
            before = saved["optimizer"].get(id(p), {})
            for key, value in state.items():
                if isinstance(value, torch.Tensor):
                    if key in before:
                        value.copy_(before[key])
                    else:
                        value.zero_()


def graphs_supported(optimizer: torch.optim.Optimizer) -> bool:
    """Graph capture keeps state in place; optimisers with a host-side step count (Adam without
    ``capturable``) or SGD with dampening would replay a wrong update, so they stay eager."""
    if not isinstance(optimizer, torch.optim.SGD):
        return False
    return all(
        group.get("dampening", 0) == 0 and not group.get("nesterov", False)
        for group in optimizer.param_groups
    )


class GraphedSteps:
    """One captured step per batch size, built on first use; ``None`` where capture is not possible."""

    def __init__(self, model, optimizer, images, labels, autocast) -> None:
        self._args = (model, optimizer, images, labels)
        self._autocast = autocast
        self._steps: dict[int, GraphedTrainStep | None] = {}

    def get(self, batch_size: int) -> GraphedTrainStep | None:
        if batch_size not in self._steps:
            self._steps[batch_size] = self._build(batch_size)
        return self._steps[batch_size]

    def _build(self, batch_size: int) -> GraphedTrainStep | None:
        try:
            return GraphedTrainStep(*self._args, batch_size, self._autocast)
        except torch.OutOfMemoryError:
            raise
        except Exception as exc:  # an op that cannot be captured: train this trial eagerly instead
            log.warning("CUDA graph capture failed (%s); training without graphs", str(exc).splitlines()[0])
            return None

    def clear(self) -> None:
        """Forget every graph: after the optimiser's state is replaced, their captured buffers are stale."""
        for step in self._steps.values():
            if step is not None:
                step.graph.reset()
        self._steps.clear()
