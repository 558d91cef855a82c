"""The trainable's own loop, learnt: where trials end when their loop stops before ``--max-epochs``.

A trainable that loops ``range(5)`` under the default ``--max-epochs 10`` ends every trial it is left to run at
epoch 5. Such a trial is no early stop, and the sweep should not go on as if a trial lasted 10 epochs: once the
first one ends so (``fates.loop_end`` decides it, as every view's fate does), ``LoopWatch`` tells those who plan
by a trial's length (the scheduler, the live table) where trials end, and says so once on the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tuner import storage
from tuner.folder import fates
from tuner.launch.guards.run_start import RunStartCallback
from tuner.values import number

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.launch.watching.live_table import LiveTable


@runtime_checkable
class FollowsLoop(Protocol):
    """Plans by a trial's length, and follows the loop's end once it is learnt (freeze-thaw, ASHA)."""

    def follow_loop(self, epochs: int) -> str | None:
        """Trials end at ``epochs`` by their own loop: what it does about it, in words (None: nothing)."""
        ...


class TableLength:
    """The live table's length of a trial: a finished trial below it counts as stopped early."""

    def __init__(self, table: LiveTable) -> None:
        self.table = table

    def follow_loop(self, epochs: int) -> str | None:
        self.table.max_epochs = epochs
        return None


def followers(*candidates: object) -> list[FollowsLoop]:
    """Those of ``candidates`` that follow the loop's end (a scheduler may not)."""
    return [c for c in candidates if isinstance(c, FollowsLoop)]


class LoopWatch(RunStartCallback):
    """Learns where the trainable's own loop ends trials, from the first trial that ends there unstopped."""

    def __init__(
        self,
        folder: str,
        max_epochs: int,
        followers: Sequence[FollowsLoop],
        out: Callable[[str], None] | None = None,
        trials_cap: int | None = None,
    ) -> None:
        self.folder, self.max_epochs, self.trials_cap = folder, max_epochs, trials_cap
        self.followers, self.out = list(followers), out
        self.learnt: int | None = None
        self.decisions = fates.FateFollower(folder)

    def at_run_start(self) -> None:
        """A resumed sweep's followers were unpickled as they were made: they learn again what the sweep had."""
        from tuner.review import experiment

        try:
            horizon = experiment.load(storage.here(self.folder), running=False).horizon
        except Exception:  # noqa: BLE001 - a new sweep: nothing saved yet
            return
        if horizon < self.max_epochs:
            self.learnt = horizon
            for follower in self.followers:
                follower.follow_loop(horizon)

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        if trial.status != "RUNNING":  # a paused or waiting trial taken out: a scheduler stopped it
            return
        epochs = int(number((trial.last_result or {}).get("training_iteration")) or 0)
        decision = self.decisions.decisions().get(trial.trial_id)
        ended = fates.loop_end("TERMINATED", epochs, self.max_epochs, decision)
        if ended is None or ended <= (self.learnt or 0):
            return
        first = self.learnt is None
        self.learnt = ended
        changes = [said for follower in self.followers if (said := follower.follow_loop(ended))]
        if first:
            (self.out or print)(self.notice(trial.trial_id, ended, changes))

    def notice(self, trial_id: str, epochs: int, changes: list[str]) -> str:
        """The one line that says the sweep now plans by the loop's length."""
        plan = list(changes)
        if self.trials_cap:
            plan.append(f"at most {self.trials_cap * epochs} epochs in all for {self.trials_cap} trials")
        return (
            f"trial {trial_id} {fates.LOOP_ENDED} at epoch {epochs}, before --max-epochs {self.max_epochs}: "
            f"the sweep now takes a trial to end at epoch {epochs}"
            + (f" ({'; '.join(plan)})" if plan else "")
            + "; "
            f"--max-epochs {epochs}, or a loop to the max_epochs the trainable is given, says so from the start"
        )
