"""Each trial's fate: why it ended where it did, in words, recorded as the scheduler decides.

Schedulers built by tuner (tuner/schedulers/) write each decision the moment they take it: the rung and cutoff that
stopped a trial under ASHA, the median it fell behind, the bracket it lost in, the trial PBT copied. The sweep's
own guards add theirs: a trial stopped as hung (tuner/launch/guards/watchdog.py), a trial whose process died of a
signal (tuner/launch/guards/crashes.py), the trials the budget ended (tuner/launch/guards/budget.py), the trials a
full storage stopped (tuner/launch/guards/disk.py), the trials still open when the sweep stalled
(tuner/launch/guards/stall.py). During a sweep the decisions go to a file beside the experiment (Ray syncs its own
copy of the experiment folder over files written there directly); when the sweep ends they are written to
``fates.json`` in the experiment. The rest of a fate follows from the trial itself: it ran all its epochs, its own
loop ended it sooner (a trainable that loops ``range(5)`` under ``--max-epochs 10``), it errored (with its error),
it is still running. ``fate`` decides it, and every view (the live table through tuner/launch/guards/loop_end.py,
the summary, ``tuner results``, the report, ``tuner.load``) reads its answer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal, NotRequired, Protocol, TypedDict

from tuner import storage
from tuner.folder.names import FATES_FILE
from tuner.folder.names import FATES_SIDECAR as LOG_NAME
from tuner.ray_compat.messages import through_storage_layer
from tuner.ray_compat.state_file import OPEN_STATUSES
from tuner.storage_outage import gave_up_in

STOPPED, PERTURBED = "stopped", "perturbed"
RUNG = "rung"  # one comparison at a rung or a bracket's round: the value, the cutoff, what was decided
HUNG, DIED, BUDGET = "hung", "died", "budget"
RETRIED = "retried"  # a failure Tune ran the trial again after (--max-failures), in words
PAUSED, THAWED = "paused", "thawed"  # frozen by a scheduler that may continue it later, and continued
STORAGE = "storage"  # a write the storage refused (full, over quota): the trial is run again on resume
STALL = "stall"  # open when the stall guard ended the sweep (tuner/launch/guards/stall.py)
# How a write the storage refused reads in an error, by what it means. A full disk or quota is met alike
# wherever the write was; a bucket's refusal only in Ray's storage layer (a trainable's own download that gets
# a 403 is its own failure).
_Refusals = tuple[tuple[tuple[str, ...], str], ...]  # (marks any of which names it, what it means)
_DISK_REFUSALS: _Refusals = (
    (("No space left on device", "[Errno 28]", "errno 28"), "the storage is full (no space left on device)"),
    (("Disk quota exceeded", "[Errno 122]"), "the storage quota is exceeded"),
)
_BUCKET_REFUSALS: _Refusals = (
    (("QuotaExceeded",), "the bucket refused a write (its quota is exceeded)"),
    (("AccessDenied", "Access Denied"), "the bucket refused a write (access denied)"),
)


def refusal(text: str) -> str | None:
    """What an error says about the storage refusing a write, in words; None when it says nothing of it. A
    storage that could not be reached for longer than the storage timeout is one (tuner/storage_outage.py)."""
    unreachable = gave_up_in(text)
    if unreachable:
        return unreachable
    for marks, meaning in _DISK_REFUSALS:
        if any(mark in text for mark in marks):
            return meaning
    if through_storage_layer(text):
        for marks, meaning in _BUCKET_REFUSALS:
            if any(mark in text for mark in marks):
                return meaning
    return None


UNFINISHED = "unfinished: the sweep stopped; tuner resume continues it"
HELD = ("PAUSED", "PENDING")  # open trials that go on from a checkpoint (a running one may start over)
# finished below --max-epochs with nothing stopping it: the trainable's own loop ended it
LOOP_ENDED = "ended by its own loop"
NOT_STARTED = "not started yet: the sweep stopped first; tuner resume starts it"
NEVER_STARTED = "never started: the budget was spent first"
ENDED_PAUSED = "; the sweep ended before it was continued"
FAILURES = (HUNG, DIED)  # failures the sweep explains better than Ray's error does


class RungStanding(TypedDict, total=False):
    """Where a trial stood at a comparison, as its ``Comparison`` (tuner/schedulers/comparing.py) says it: by one
    value against a cutoff, or by fronts, a place among the arrivals."""

    value: float | None  # the first objective's value there
    cutoff: float | None  # by one value: the value to beat (None while the rung had none)
    values: dict[str, float]  # several objectives: each one's value
    violation: float | None  # how far it broke the constraints
    place: int  # by fronts: its place among the arrivals, ``of`` them (HyperBand: how many its round had)
    of: int


class RungRecord(RungStanding):
    """One comparison at a rung, a bracket's round or a freeze-thaw check, as the rule that made it wrote it (a
    RUNG entry's ``data``): the keys every rule writes, then its standing, then each rule's own."""

    rung: int  # the rung's epoch (a round's budget; a check's epoch)
    epoch: int | None  # the epoch of the result compared
    kept: bool  # whether it went on
    arrived: NotRequired[int]  # ASHA: how many had arrived before it; freeze-thaw: results seen
    bracket: NotRequired[int]  # HyperBand, BOHB: the bracket, and how many of its round were kept
    keep: NotRequired[int]
    verdict: NotRequired[str]  # freeze-thaw: "goes on", "paused" or "stopped", and why
    reason: NotRequired[str]
    predicted: NotRequired[float | None]
    spread: NotRequired[float | None]
    best: NotRequired[float | None]


class Decision(TypedDict, total=False):
    """What the log says of one trial (a ``fates.json`` entry): its rungs, and why it stopped, paused or failed."""

    rungs: list[RungRecord]
    perturbed: list[str]
    failures: list[str]
    retried: list[str]  # failures Tune ran the trial again after that hung or died do not already say
    paused: str
    budget: str
    stall: str
    storage: str
    stopped: str


class LogEntry(TypedDict):
    """One line of the log."""

    trial_id: str
    kind: str
    text: str
    data: NotRequired[RungRecord]  # a RUNG entry's


class DecisionLog(Protocol):
    """Where schedulers and guards write why they stop, compare or perturb a trial: a sweep's ``FateLog``, or a
    replay's log in memory (tuner/replay/engine.py)."""

    def record(self, trial_id: str, kind: str, text: str, data: RungRecord | None = None) -> None: ...


class FateLog:
    """Appends decisions for one experiment; small and picklable (Ray saves schedulers with the sweep)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder

    @property
    def path(self) -> str:
        """The log beside the experiment where it lies now (a moved one's log follows it, storage.here)."""
        return storage.sidecar_of(self.__dict__, LOG_NAME) or ""

    def record(self, trial_id: str, kind: str, text: str, data: RungRecord | None = None) -> None:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        entry: LogEntry = {"trial_id": trial_id, "kind": kind, "text": text}
        if data is not None:
            entry["data"] = data
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def recorded(folder: str) -> dict[str, Decision]:
    """Decisions per trial id: those saved in the experiment, then any this machine logged since."""
    return FateFollower(folder).decisions()


class FateFollower:
    """An experiment's decisions as its log grows: each read parses only the lines appended since the last.

    A sweep's TensorBoard logger asks at every trial's end; read whole each time, a log that gains a line per
    rung comparison made a long ASHA sweep quadratic.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._decisions: dict[str, Decision] | None = None
        self._log: Path | None = None
        self._offset = 0

    def __getstate__(self) -> dict[str, str]:
        return {"folder": self.folder}  # what was read is read again where it is unpickled

    def __setstate__(self, state: dict[str, str]) -> None:
        self.__dict__.update(type(self)(state["folder"]).__dict__)

    def decisions(self) -> dict[str, Decision]:
        folder = storage.here(self.folder)
        log = storage.sidecar(folder, LOG_NAME)
        size = log.stat().st_size if log.is_file() else 0
        # the first read, a moved experiment's, or a log started over
        if self._decisions is None or log != self._log or size < self._offset:
            self._decisions, self._log, self._offset = _saved_decisions(folder), log, 0
        if size > self._offset:
            with open(log, "rb") as f:
                f.seek(self._offset)
                chunk = f.read(size - self._offset)
            whole = chunk.rfind(b"\n") + 1  # a line still being written waits for the next read
            for line in chunk[:whole].decode("utf-8", errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                _merge(self._decisions.setdefault(entry["trial_id"], {}), entry)
            self._offset += whole
        return self._decisions


def _saved_decisions(folder: str) -> dict[str, Decision]:
    saved = storage.read_text(folder, FATES_FILE)
    if saved:
        try:
            return dict(json.loads(saved))
        except ValueError:
            pass  # a damaged fates file only loses the explanations, never the results
    return {}


def _merge(decision: Decision, entry: LogEntry) -> None:
    if entry["kind"] == RUNG:
        rungs = decision.setdefault("rungs", [])
        data = entry.get("data")
        if data is not None and data not in rungs:
            rungs.append(data)
        return
    if entry["kind"] in (PERTURBED, RETRIED, *FAILURES):
        key: Literal["perturbed", "retried", "failures"] = (
            "failures"
            if entry["kind"] in FAILURES
            else "perturbed"
            if entry["kind"] == PERTURBED
            else "retried"
        )
        events = decision.setdefault(key, [])
        if entry["text"] not in events:
            events.append(entry["text"])
    elif entry["kind"] == PAUSED:
        decision["paused"] = entry["text"]
    elif entry["kind"] == THAWED:
        decision.pop("paused", None)
    elif entry["kind"] == BUDGET:
        decision["budget"] = entry["text"]
    elif entry["kind"] == STALL:
        decision["stall"] = entry["text"]
    elif entry["kind"] == STORAGE:
        decision["storage"] = entry["text"]
    else:
        decision["stopped"] = entry["text"]


def persist(folder: str) -> None:
    """Write every decision into the experiment (after Ray's last sync) and forget the local log; an empty one
    where nothing decided a trial's end (every trial ran to its end), so that the file is always there to read."""
    decisions = recorded(folder)
    storage.write_text(folder, FATES_FILE, json.dumps(decisions, indent=1) + "\n")
    storage.sidecar(folder, LOG_NAME).unlink(missing_ok=True)


def failure(decision: Decision | None) -> str | None:
    """Why a trial failed, in the sweep's words (hung, died of a signal), when Ray's error says less."""
    failures = (decision or {}).get("failures") or []
    return failures[-1] if failures else None


def explained(text: str) -> bool:
    """Whether a failure is told in the sweep's words (hung, died of a signal) rather than by a traceback."""
    return text.startswith(tuple(f"{kind}:" for kind in FAILURES))


def fate(
    status: str,
    epochs: int,
    max_epochs: int,
    error: str,
    decision: Decision | None,
    nonfinite: str = "",
    live: bool = True,
) -> str:
    """One trial's fate in words; ``nonfinite`` names a NaN or infinite metric it reported; ``live`` says
    whether a process runs the sweep now (else an open trial is unfinished, not running)."""
    decision = decision or {}
    perturbed = decision.get("perturbed", [])
    note = ""
    if perturbed:
        note = f"; {perturbed[-1]}" + (f" (perturbed {len(perturbed)} times)" if len(perturbed) > 1 else "")
    if nonfinite:
        note += f"; {nonfinite}"
    refused = decision.get("storage") and (
        status in OPEN_STATUSES and not live or status == "ERROR" and refusal(error)
    )
    if refused:  # stopped by a refused write, not by its own code: resumed later
        return decision["storage"] + note
    if decision.get("retried") and not decision.get("failures"):  # a hang or a death says it in its own words
        note += "; run again after " + ", then ".join(decision["retried"])
    if status == "ERROR":
        cause = failure(decision) or (f"errored: {error}" if error else "errored")
        return cause + note
    if decision.get("failures"):
        note += "; retried after " + ", then ".join(decision["failures"])
    if (
        status in HELD and 0 < max_epochs <= epochs
    ):  # paused at its last epoch, as HyperBand holds one for its
        return f"ran to max epochs ({max_epochs})" + note  # bracket: its checkpoint holds every epoch
    if status in OPEN_STATUSES:
        if status == "PAUSED" and decision.get("paused"):  # frozen by freeze-thaw: why, in its words
            return decision["paused"] + ("" if live else "; tuner resume may continue it") + note
        if live:
            return status.lower() + note
        return (NOT_STARTED if status == "PENDING" and not epochs else UNFINISHED) + note
    if decision.get("stopped"):
        return decision["stopped"] + note
    paused = still_paused(decision, epochs) and epochs < max_epochs  # still frozen when the sweep ended
    if (
        decision.get("budget") and epochs < max_epochs
    ):  # the budget ended it, frozen or not: no scheduler's cut
        if not epochs:  # created as the budget ran out: proposed, never trained
            return NEVER_STARTED + note
        frozen = f", while {decision['paused']}" if paused else ""
        return f"{decision['budget']} at epoch {epochs} of {max_epochs}{frozen}" + note
    if paused:
        return decision["paused"] + ENDED_PAUSED + note
    if decision.get("stall") and epochs < max_epochs:  # stopped by the sweep's end, not by its own loop
        at = f"at epoch {epochs} of {max_epochs}" if epochs else "before its first report"
        return f"{decision['stall']} {at}" + note
    if epochs >= max_epochs:
        return f"ran to max epochs ({max_epochs})" + note
    if not epochs:
        return f"{LOOP_ENDED} before its first report" + note
    return f"{LOOP_ENDED} at epoch {epochs}" + note


def still_paused(decision: Decision, epochs: int) -> bool:
    """Whether the trial's last pause stands: it has trained no epoch since (a trial continued without its
    thaw recorded, as after a resume, trained on past the epoch it was paused at)."""
    if not decision.get("paused"):
        return False
    at = [r.get("epoch") for r in decision.get("rungs", []) if r.get("verdict") == "paused"]
    return not at or at[-1] is None or at[-1] >= epochs


def loop_end(status: str, epochs: int, max_epochs: int, decision: Decision | None) -> int | None:
    """The epoch at which the trial's own loop ended it (its fate says so), None when something else did or it
    ran to ``max_epochs``: what the sweep learns a trial's length from (``ExperimentRecord.horizon``)."""
    if not 0 < epochs < max_epochs:
        return None
    return epochs if fate(status, epochs, max_epochs, "", decision).startswith(LOOP_ENDED) else None


def cut_by_scheduler(text: str) -> bool:
    """Whether a fate is a scheduler's cut: stopped early, or paused and never continued. Only these count as
    epochs early stopping saved; a trial ended by its own loop, the budget or an error saved nothing."""
    return text.startswith("stopped early by") or ENDED_PAUSED in text


def perturbed(epoch: object, donor: str, donor_epoch: object, changes: str) -> str:
    """A PERTURBED entry's text: PBT continued the trial from ``donor``'s checkpoint of ``donor_epoch``."""
    return (
        f"perturbed by PBT at epoch {epoch}: continued from trial {donor}'s epoch-{donor_epoch} checkpoint "
        f"with {changes or 'its settings'}"
    )


_TAKEN = re.compile(r"continued from trial (\S+)'s epoch-(\d+) checkpoint")


def taken_from(text: str) -> tuple[str, int] | None:
    """The donor and the epoch of the checkpoint a PERTURBED entry says the trial went on from."""
    found = _TAKEN.search(text)
    return (found.group(1), int(found.group(2))) if found else None


def family(text: str) -> str:
    """A fate without its particulars, for counting: "stopped early by ASHA", "ran to max epochs (10)"."""
    return text.split(" at epoch")[0].split(":")[0].split(";")[0]


ENDED_EARLY = ("stopped early", "ended by the budget", "ended by the stall", "never started")
STILL_OPEN = ("running", "pending", "paused", "unfinished", "not started yet")


def kind(text: str) -> str:
    """A fate's family, for colouring and counting: completed, stopped early, errored, running."""
    if text.startswith(("errored", "hung", "died")):
        return "errored"
    if text.startswith(ENDED_EARLY) or ENDED_PAUSED in text:
        return "stopped early"
    if text.startswith(STILL_OPEN):
        return "running"
    return "completed"


def state(status: str, text: str) -> str:
    """A trial's state in the live table's words, from Tune's status and its fate: paused when the sweep ended
    before continuing it, the fate's first words where they name a state (stopped early, ended by the budget,
    unfinished...), errored for a failure, else finished."""
    if ENDED_PAUSED in text:
        return "paused"
    said = next((words for words in (*ENDED_EARLY, *STILL_OPEN) if text.startswith(words)), None)
    if said is not None:
        return said
    return "errored" if status == "ERROR" else "finished" if status == "TERMINATED" else status.lower()
