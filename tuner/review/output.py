"""What trials printed, as the terminal, ``tuner logs`` and the report show it.

Each trial's standard output and error are kept whole in its folder (``stdout.log``, ``stderr.log``); the
terminal shows at most a short tail of them, for a trial that failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner import storage
from tuner.folder.fates import state
from tuner.folder.names import OUTPUT_FILES, STDERR_FILE, STDOUT_FILE

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord

FAILURE_TAIL = 8  # lines of each stream shown on the terminal for a failed trial


def printed_lines(text: str) -> list[str]:
    """The non-empty lines of a trial's output (a progress bar's carriage returns end lines too, so each of
    its states is a line)."""
    return [row.rstrip() for row in text.replace("\r", "\n").splitlines() if row.strip()]


def tail(text: str, lines: int) -> list[str]:
    """The last ``lines`` non-empty lines: a progress bar's last state, not every redraw."""
    return printed_lines(text)[-lines:] if lines > 0 else []


def failure_tail(trial_path: str, lines: int = FAILURE_TAIL) -> list[str]:
    """The last lines a failed trial printed, each stream under the path of its file (empty when it printed
    nothing)."""
    out: list[str] = []
    for name in (STDOUT_FILE, STDERR_FILE):
        shown = tail(storage.read_text(trial_path, name) or "", lines)
        if shown:
            out.append(f"its last {len(shown)} line(s) of {name} ({storage.join(trial_path, name)}):")
            out += [f"  {line}" for line in shown]
    return out


def listing(record: ExperimentRecord) -> list[str]:
    """One line a trial: how much it printed to each stream, and where."""
    rows: list[tuple[str, ...]] = [("TRIAL", "STATE", "STDOUT", "STDERR", "FOLDER")]
    for trial in record.trials:
        counts = [len(printed_lines(trial.output(name))) for name in OUTPUT_FILES]
        said = state(trial.status, trial.fate)  # in the review's words, as tuner results says it
        rows.append((trial.trial_id, said, *(f"{n} line{'' if n == 1 else 's'}" for n in counts), trial.path))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows
    ]
