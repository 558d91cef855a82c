"""What a large sweep's page draws trial by trial and what it sums up, so that the page stays small and quick.

A sweep of a few hundred trials is drawn whole: every curve, every line, every row. Above ``IN_DETAIL``
trials the best ``IN_DETAIL`` are (the ones a reader opens the page for), and the others are summed up where
that is faithful (the learning curves as bands per fate, the table's rows on demand) or sampled where a
drawing of thousands of lines would read no better than of a thousand (parallel coordinates).
"""

from __future__ import annotations

import random

from tuner.experiment import ExperimentRecord, TrialRecord

IN_DETAIL = 200
SAMPLED_AT_MOST = 1000
SEED = 0


def split(experiment: ExperimentRecord) -> tuple[list[TrialRecord], list[TrialRecord]]:
    """(the trials drawn one by one, the rest), each in the order they were made: every trial in the first
    up to ``IN_DETAIL``; above, the ``IN_DETAIL`` best and, in the second, the others."""
    if len(experiment.trials) <= IN_DETAIL:
        return list(experiment.trials), []
    chosen = {t.trial_id for t in experiment.ranked()[:IN_DETAIL]}
    detailed = [t for t in experiment.trials if t.trial_id in chosen]
    return detailed, [t for t in experiment.trials if t.trial_id not in chosen]


def sample(trials: list[TrialRecord], at_most: int = SAMPLED_AT_MOST) -> list[TrialRecord]:
    """At most ``at_most`` of ``trials``, drawn with a fixed seed (the same page each time), in their order."""
    if len(trials) <= at_most:
        return list(trials)
    keep = set(random.Random(SEED).sample(range(len(trials)), at_most))
    return [t for i, t in enumerate(trials) if i in keep]
