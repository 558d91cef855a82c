"""Ray 2.60 behaviour tuner works around (see tuner/ray_compat/__init__.py for the index).

6. A restored sweep cannot grow (Ray 2.60): ``Tuner.restore`` takes the number of trials from the saved
search state. ``extend_saved_search`` raises it there (the searcher's own state, with everything its
model learnt, is untouched), so ``tuner resume --num-samples N`` runs the extra trials. Sweeps over Tune's
variant generator (grids, PBT) keep their planned variants and cannot grow. A sweep that its budget or a
stall ended stopped its open trials without telling the searcher, so the saved concurrency limit
(``ConcurrencyLimiter.live_trials``) still counts them as running and would propose nothing; the trials
that finished are taken out of it.
"""

from __future__ import annotations

import os
from pathlib import Path

SEARCH_STATE_PREFIX = "search_gen_state-"
VARIANT_STATE_PREFIX = "basic-variant-state-"


def can_grow(folder: str) -> bool:
    """Whether the sweep's trials come from a searcher (which can propose more) rather than planned variants."""
    from tuner import storage

    return bool(storage.list_names(folder, SEARCH_STATE_PREFIX)) and not storage.list_names(folder, VARIANT_STATE_PREFIX)


def extend_saved_search(folder: str, total: int, finished: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Let the saved search propose trials until ``total`` exist (it was finished at its old total); the
    ``finished`` trial ids no longer count against its concurrency limit."""
    import io

    from ray import cloudpickle

    from tuner import storage

    names = storage.list_names(folder, SEARCH_STATE_PREFIX)
    if not names:
        raise RuntimeError(f"{folder} has no saved search state")
    name = names[-1]
    local = storage.local_path(folder)
    if local is not None:
        raw = Path(local, name).read_bytes()
    else:
        import pyarrow.fs

        fs, path = pyarrow.fs.FileSystem.from_uri(storage.join(folder, name))
        with fs.open_input_stream(path) as stream:
            raw = stream.read()
    state = cloudpickle.load(io.BytesIO(raw))
    state["total_samples"] = total
    state["finished"] = False
    for key, part in state.items():
        if key.startswith("name:ConcurrencyLimiter") and isinstance(part, dict) and "live_trials" in part:
            still = set(part["live_trials"]) - set(finished)
            part["num_unfinished_live_trials"] = max(0, part.get("num_unfinished_live_trials", 0)
                                                     - (len(part["live_trials"]) - len(still)))  # fmt: skip
            part["live_trials"] = still
    data = cloudpickle.dumps(state)
    if local is not None:
        scratch = Path(local, f".{name}.partial")
        scratch.write_bytes(data)
        os.replace(scratch, Path(local, name))
    else:
        import pyarrow.fs

        fs, path = pyarrow.fs.FileSystem.from_uri(storage.join(folder, name))
        with fs.open_output_stream(path) as stream:
            stream.write(data)
