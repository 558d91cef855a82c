"""The plan a sweep printed before its first trial, kept in the experiment: its lines as printed (``plan.txt``),
for the review to show as they were, and beside them the numbers a view reads from it (``plan.json``), kept as
data rather than read back out of the words."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from tuner.folder.names import PLAN_DATA_FILE, PLAN_FILE
from tuner.storage import read_text, write_text
from tuner.value_types import Value

AT_ONCE = "trials_at_once"  # how many trials the plan let run at once
UNASKED = (
    "unasked"  # conditional parameter -> its parent and the parent's values (repr) where it is not asked
)

# a conditional parameter's parent, and the parent values (as ``repr``) under which it is not asked
Unasked = dict[str, dict[str, str | list[str]]]


SCALES = "scales"  # numeric parameter -> "log" or "linear", as the space draws it
OWN_LOOP = "own_loop"  # False where the trainable loops to max_epochs (SchedulerContext.own_loop)


def write(
    folder: str,
    lines: list[str],
    trials_at_once: int,
    unasked: Unasked | None = None,
    scales: dict[str, str] | None = None,
    own_loop: bool = True,
) -> None:
    """Keep the plan as printed, and its numbers."""
    write_text(folder, PLAN_FILE, "\n".join(lines) + "\n")
    data: dict[str, object] = {AT_ONCE: trials_at_once}
    if not own_loop:
        data[OWN_LOOP] = False
    if unasked:
        data[UNASKED] = unasked
    if scales:
        data[SCALES] = scales
    write_text(folder, PLAN_DATA_FILE, json.dumps(data) + "\n")


def scales(folder: str) -> dict[str, str]:
    """Each numeric parameter's scale as the space draws it ("log" or "linear"); empty for a sweep made before
    they were kept, or for parameters a function draws."""
    found = _data(folder).get(SCALES)
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def own_loop(folder: str) -> bool:
    """Whether a trial that ended before max epochs tells where the trainable's own loop ends trials (a sweep
    made before this was kept: it does, as the sweep then planned)."""
    return _data(folder).get(OWN_LOOP) is not False


def _data(folder: str) -> dict[str, object]:
    try:
        value = json.loads(read_text(folder, PLAN_DATA_FILE) or "null")
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {}


def inactive_dropped(folder: str) -> Callable[[dict[str, Value]], dict[str, Value]]:
    """A trial's config without the conditional parameters its parent's value left unasked (Tune holds them as
    None; the trainable never saw them, as an Optuna define-by-run, a HyperOpt branch or a ConfigSpace
    condition has it)."""
    found = _data(folder).get(UNASKED)
    unasked = found if isinstance(found, dict) else {}

    def drop(config: dict[str, Value]) -> dict[str, Value]:
        return {
            name: value
            for name, value in config.items()
            if not (
                value is None
                and isinstance(rule := unasked.get(name), dict)
                and repr(config.get(str(rule.get("parent")))) in (rule.get("where") or [])
            )
        }

    return drop


def lines(folder: str) -> list[str]:
    """The plan as printed (empty for a sweep made before it was kept)."""
    return (read_text(folder, PLAN_FILE) or "").splitlines()


def trials_at_once(folder: str) -> int | None:
    """How many trials the plan let run at once; None where no plan was kept. A sweep made before the numbers
    were kept has them only in its printed resources line."""
    found = _data(folder).get(AT_ONCE)
    if isinstance(found, int):
        return found
    for line in lines(folder):
        found = re.match(r"resources: .*; (\d+) trial\(s\) at once", line)
        if found:
            return int(found.group(1))
    return None
