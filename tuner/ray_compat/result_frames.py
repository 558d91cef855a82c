"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

28. Every trial's rows read again as the run ends (Ray 2.60): when ``Tuner.fit`` returns, Ray builds an
``ExperimentAnalysis`` whose constructor reads each trial's ``result.json`` into a pandas DataFrame
(``_fetch_trial_dataframes``), about a millisecond a trial, for the ``ResultGrid`` that ``fit`` returns. tuner
reads its experiment itself and never looks at that grid, so a sweep of 8,000 instant trials spent about 8 s of
its end on frames nobody read, after a Ctrl-C too; ``Tuner.restore`` builds one as well, so a resume paid the same
at its start. The grid then builds a ``Result`` per trial (its paths, metrics and checkpoints), another 0.7 s at
8,000 trials. ``frames_unread`` leaves both undone while tuner restores and runs a sweep: the grid that ``fit``
returns holds no results. Where a Ray defines either method elsewhere, the block leaves that one as it is.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

FETCH = "_fetch_trial_dataframes"
TO_RESULT = "_trial_to_result"


@contextlib.contextmanager
def frames_unread() -> Iterator[None]:
    """Within the block, Ray's end of a run reads no trial's rows into a DataFrame and builds no grid of results."""
    from ray.tune.analysis.experiment_analysis import ExperimentAnalysis
    from ray.tune.result_grid import ResultGrid

    with contextlib.ExitStack() as stack:
        stack.enter_context(_replaced(ExperimentAnalysis, FETCH, lambda self: {}))
        stack.enter_context(_replaced(ResultGrid, TO_RESULT, lambda self, trial: None))
        yield


@contextlib.contextmanager
def _replaced(cls: type, name: str, stand_in: object) -> Iterator[None]:
    original = cls.__dict__.get(name)
    if original is None:  # not where this part knows it: Ray does it, the sweep runs as it would
        yield
        return
    setattr(cls, name, stand_in)
    try:
        yield
    finally:
        setattr(cls, name, original)
