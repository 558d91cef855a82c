"""HyperBand (synchronous brackets) and BOHB (HyperBand with BOHB's model-based searcher)."""

from __future__ import annotations

import math
from typing import Any

from tuner.schedulers.base import REDUCTION_FACTOR, SchedulerContext, SchedulerEntry


def rounds(max_epochs: int, eta: float, s: int) -> list[int]:
    """The epochs at which a bracket with ``s`` halvings compares its trials, the last one ``max_epochs``.

    Ray's brackets start at ``int(max_t / eta**s)`` and multiply by eta, so unless max_t is a power of eta
    they stop short of it (27 epochs, eta 2: 16, 24 and 26); here each round is max_t / eta**k rounded
    (27, eta 2: 2, 3, 7, 14, 27), so every bracket's survivors train all their epochs.
    """
    out: list[int] = []
    for k in range(s, -1, -1):
        r = max(1, int(round(max_epochs / eta**k)))
        out.append(max(r, out[-1] + 1) if out else r)
    out[-1] = max_epochs
    return out


def brackets(max_epochs: int, eta: int = REDUCTION_FACTOR) -> list[tuple[int, list[int]]]:
    """HyperBand's brackets in the order trials fill them: (trials, epochs at each round); Ray's sizes and
    bracket count, with ``rounds`` that reach ``max_epochs``."""
    s_max_1 = int(round(math.log(max_epochs) / math.log(eta))) + 1 if max_epochs > 1 else 1
    out = []
    for s in range(s_max_1):
        if int(max_epochs * eta ** (-s)) == 0:  # Ray leaves out a bracket too small to start
            continue
        n0 = int(math.ceil(s_max_1 / (s + 1) * eta**s))
        out.append((n0, rounds(max_epochs, eta, s)))
    return out


def fill(num_samples: int, max_epochs: int, eta: int = REDUCTION_FACTOR) -> list[tuple[int, int, list[int]]]:
    """The brackets ``num_samples`` trials fill, as (trials, bracket size, rounds); bands repeat."""
    out, left = [], num_samples
    while left > 0:
        for n0, rounds in brackets(max_epochs, eta):
            take = min(n0, left)
            out.append((take, n0, rounds))
            left -= take
            if left == 0:
                break
    return out


def bracket_epochs(n: int, n0: int, rounds: list[int], eta: int = REDUCTION_FACTOR) -> int:
    """Epochs a bracket trains: each round keeps ceil(size / eta) of its size, as Ray's halving does."""
    total, alive, keep, start = 0, n, n0, 0
    for r in rounds:
        total += alive * (r - start)
        keep = int(math.ceil(keep / eta))
        start, alive = r, min(alive, keep)
    return total


class _Brackets(SchedulerEntry):
    pauses_trials = True
    needs_checkpoints = True  # a paused trial continues from its checkpoint; without one it would start over
    label = ""

    def describe(self, ctx: SchedulerContext) -> list[str]:
        lines = [f"{self.label}: synchronous brackets up to {ctx.max_epochs} epochs, reduction factor "
                 f"{ctx.reduction_factor}; trials wait (PAUSED) until their bracket reaches each budget"]  # fmt: skip
        eta = ctx.reduction_factor
        for i, (n, n0, rounds) in enumerate(fill(ctx.num_samples, ctx.max_epochs, eta), 1):
            steps = " -> ".join(f"epoch {r}" for r in rounds)
            lines.append(f"  bracket {i}: {n} trial(s), {steps}; {bracket_epochs(n, n0, rounds, eta)} epochs")
        return lines

    def worst_case_epochs(self, ctx: SchedulerContext) -> int:
        eta = ctx.reduction_factor
        return sum(bracket_epochs(n, n0, r, eta) for n, n0, r in fill(ctx.num_samples, ctx.max_epochs, eta))


class HyperBand(_Brackets):
    name = "hyperband"
    summary = "synchronous HyperBand brackets: trials wait for their bracket, the worse half stopped"
    label = "HyperBand"

    def build(self, ctx: SchedulerContext) -> Any:
        from tuner.schedulers.recording import RecordingHyperBand

        return RecordingHyperBand(time_attr="training_iteration", max_t=ctx.max_epochs,
                                  reduction_factor=ctx.reduction_factor, fate_log=ctx.fate_log)  # fmt: skip


class Bohb(_Brackets):
    name = "bohb"
    summary = "BOHB: HyperBand brackets with kernel density models per budget (brings --searcher bohb)"
    label = "BOHB"
    requires_searcher = "bohb"

    def build(self, ctx: SchedulerContext) -> Any:
        from tuner.schedulers.recording import RecordingBOHB

        return RecordingBOHB(time_attr="training_iteration", max_t=ctx.max_epochs,
                             reduction_factor=ctx.reduction_factor, fate_log=ctx.fate_log)  # fmt: skip
