"""HyperBand (synchronous brackets) and BOHB (HyperBand with BOHB's model-based searcher)."""

from __future__ import annotations

import math
from typing import Any

from tuner.schedulers.base import REDUCTION_FACTOR, SchedulerContext, SchedulerEntry


def brackets(max_epochs: int, eta: int = REDUCTION_FACTOR) -> list[tuple[int, list[int]]]:
    """Ray's HyperBand brackets in the order trials fill them: (trials, epochs at each round)."""
    s_max_1 = int(round(math.log(max_epochs) / math.log(eta))) + 1 if max_epochs > 1 else 1
    out = []
    for s in range(s_max_1):
        r0 = int(max_epochs * eta ** (-s))
        if r0 == 0:
            continue
        n0 = int(math.ceil(s_max_1 / (s + 1) * eta**s))
        rounds, r = [r0], r0
        for _ in range(s):
            r = int(min(r * eta, max_epochs))
            rounds.append(r)
        out.append((n0, rounds))
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
