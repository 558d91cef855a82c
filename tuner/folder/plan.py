"""The plan a sweep printed before its first trial, kept in the experiment: its lines as printed (``plan.txt``),
for the review to show as they were, and beside them the numbers a view reads from it (``plan.json``), kept as
data rather than read back out of the words."""

from __future__ import annotations

import json
import re

from tuner.folder.names import PLAN_DATA_FILE, PLAN_FILE
from tuner.storage import read_text, write_text

AT_ONCE = "trials_at_once"  # how many trials the plan let run at once


def write(folder: str, lines: list[str], trials_at_once: int) -> None:
    """Keep the plan as printed, and its numbers."""
    write_text(folder, PLAN_FILE, "\n".join(lines) + "\n")
    write_text(folder, PLAN_DATA_FILE, json.dumps({AT_ONCE: trials_at_once}) + "\n")


def lines(folder: str) -> list[str]:
    """The plan as printed (empty for a sweep made before it was kept)."""
    return (read_text(folder, PLAN_FILE) or "").splitlines()


def trials_at_once(folder: str) -> int | None:
    """How many trials the plan let run at once; None where no plan was kept. A sweep made before the numbers
    were kept has them only in its printed resources line."""
    try:
        value = json.loads(read_text(folder, PLAN_DATA_FILE) or "null")
    except ValueError:
        value = None
    if isinstance(value, dict) and isinstance(value.get(AT_ONCE), int):
        return int(value[AT_ONCE])
    for line in lines(folder):
        found = re.match(r"resources: .*; (\d+) trial\(s\) at once", line)
        if found:
            return int(found.group(1))
    return None
