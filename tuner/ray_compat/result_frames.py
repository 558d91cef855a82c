"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

28. Every trial's rows read again as the run ends (Ray 2.60): when ``Tuner.fit`` returns, Ray builds an
``ExperimentAnalysis`` whose constructor reads each trial's ``result.json`` into a pandas DataFrame
(``_fetch_trial_dataframes``), about a millisecond a trial, for the ``ResultGrid`` that ``fit`` returns. tuner
reads its experiment itself and never looks at that grid, so a sweep of 8,000 instant trials spent about 8 s of
its end on frames nobody read, after a Ctrl-C too; ``Tuner.restore`` builds one as well, so a resume paid the same
at its start. ``frames_unread`` leaves them unread while tuner restores and runs a sweep: the grid's results then
carry no ``metrics_dataframe``. Where a Ray defines the method elsewhere, the block changes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

FETCH = "_fetch_trial_dataframes"


@contextlib.contextmanager
def frames_unread() -> Iterator[None]:
    """Within the block, Ray's end of a run reads no trial's rows into a DataFrame."""
    from ray.tune.analysis.experiment_analysis import ExperimentAnalysis

    original = ExperimentAnalysis.__dict__.get(FETCH)
    if original is None:  # not where this part knows it: Ray reads the frames, the sweep runs as it would
        yield
        return
    setattr(ExperimentAnalysis, FETCH, lambda self: {})
    try:
        yield
    finally:
        setattr(ExperimentAnalysis, FETCH, original)
