"""Where a sweep's trials end unless something stops them: ``--max-epochs``, or sooner where the trainable's own
loop ends them (a ``range(5)`` loop under ``--max-epochs 10``).

One rule, read alike by every part that plans by a trial's length: the experiment's record after the fact
(``ExperimentRecord.horizon``), the sweep while it runs (tuner/launch/guards/loop_end.py), freeze-thaw and ASHA
(tuner/schedulers/). The horizon is the most epochs a trial has run to its own end, and only while no trial has
reported past it: a loop whose length differs by config ends some trials later than the first one seen, and a
trial that ran to ``--max-epochs`` says the loop goes that far.
"""

from __future__ import annotations


def horizon(max_epochs: int, longest_end: int, furthest: int) -> int:
    """The epochs a trial runs unless stopped: ``longest_end``, the most epochs a trial ran before its own loop
    ended it, when some trial did; ``max_epochs`` when none did, or when some trial reported past it
    (``furthest``, the most epochs any trial has reported, stopped, running or at max epochs alike)."""
    if 0 < longest_end < max_epochs and furthest <= longest_end:
        return longest_end
    return max_epochs


class LoopEnds:
    """The horizon learnt as a sweep goes: from each epoch reported and each trial its own loop ended.
    Small and picklable (schedulers and callbacks travel with the sweep)."""

    def __init__(self, max_epochs: int) -> None:
        self.max_epochs = max_epochs
        self.longest_end = 0  # the most epochs a trial ran before its own loop ended it
        self.furthest = 0  # the most epochs any trial has reported

    @property
    def horizon(self) -> int:
        return horizon(self.max_epochs, self.longest_end, self.furthest)

    def reported(self, epoch: int) -> bool:
        """A trial reported ``epoch``; True when that moved the horizon (a trial ran past it: up it goes)."""
        before = self.horizon
        self.furthest = max(self.furthest, epoch)
        return self.horizon != before

    def ended(self, epochs: int) -> bool:
        """A trial's own loop ended it after ``epochs``; True when that moved the horizon."""
        before = self.horizon
        self.furthest = max(self.furthest, epochs)
        if epochs < self.max_epochs:
            self.longest_end = max(self.longest_end, epochs)
        return self.horizon != before
