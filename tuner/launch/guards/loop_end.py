"""The trainable's own loop, learnt: where trials end when their loop stops before ``--max-epochs``.

A trainable that loops ``range(5)`` under the default ``--max-epochs 10`` ends every trial it is left to run at
epoch 5. Such a trial is no early stop, and the sweep should not go on as if a trial lasted 10 epochs: once a
trial ends so (``fates.loop_end`` decides it, as every view's fate does) and no trial has reported past that
epoch, ``LoopWatch`` tells those who plan by a trial's length (the scheduler, the live table) where trials end
(tuner/folder/horizon.py, the rule the experiment's record reads too), and says so once on the terminal. A
loop whose length differs by config may run a later trial past it: the horizon then goes back up, and the
terminal says that too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from tuner import storage
from tuner.folder import fates
from tuner.folder.horizon import LoopEnds
from tuner.folder.pickled import Restored
from tuner.launch.guards.run_start import RunStartCallback
from tuner.values import number

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.launch.watching.live_table import LiveTable
    from tuner.value_types import Result


@runtime_checkable
class FollowsLoop(Protocol):
    """Plans by a trial's length, and follows the loop's end once it is learnt (freeze-thaw, ASHA)."""

    def follow_loop(self, epochs: int) -> str | None:
        """Trials end at ``epochs`` unless stopped (``max_epochs`` again when a trial ran past the last such
        end): what it does about it, in words (None: nothing)."""
        ...


class TableLength:
    """The live table's length of a trial: a finished trial below it counts as stopped early, unless its own
    loop ended it (a loop that differs by config ends some trials before the length the table plans by)."""

    def __init__(self, table: LiveTable) -> None:
        self.table = table

    def follow_loop(self, epochs: int) -> str | None:
        self.table.max_epochs = epochs
        return None

    def ended_by_loop(self, trial_id: str) -> None:
        self.table.loop_ended.add(trial_id)


def followers(*candidates: object) -> list[FollowsLoop]:
    """Those of ``candidates`` that follow the loop's end (a scheduler may not)."""
    return [c for c in candidates if isinstance(c, FollowsLoop)]


class LoopWatch(Restored, RunStartCallback):
    """Learns where the trainable's own loop ends trials, from the trials that end there unstopped and the epochs
    every trial reports; the one that tells its followers, and tells them again when a resumed sweep starts."""

    SINCE = {"learns": lambda state: True}  # a sweep saved before it learnt as it always had

    def __init__(
        self,
        folder: str,
        max_epochs: int,
        followers: Sequence[FollowsLoop],
        out: Callable[[str], None] | None = None,
        trials_cap: int | None = None,
        learns: bool = True,
    ) -> None:
        self.folder, self.max_epochs, self.trials_cap = folder, max_epochs, trials_cap
        # False where the trainable loops to the max_epochs it is given (a function that takes it, a class):
        # a trial that ends sooner was ended by the trainable for its own reason (a return, a nan), not by
        # a loop's length, and no other trial is planned by it
        self.learns = learns
        self.followers, self.out = list(followers), out
        self.loop = LoopEnds(max_epochs)
        self.said = False  # the notice of the loop's end, once a sweep
        self.decisions = fates.FateFollower(folder)

    @property
    def learnt(self) -> int | None:
        """Where trials end by their own loop as the sweep plans now; None while it plans by ``max_epochs``."""
        return self.loop.horizon if self.loop.horizon < self.max_epochs else None

    def at_run_start(self) -> None:
        """A resumed sweep's followers were unpickled as they were made: they learn again what the sweep had
        (the one place that does; the followers' own restores leave it to this)."""
        from tuner import experiment

        self.loop, self.said = LoopEnds(self.max_epochs), False
        try:
            record = experiment.load(storage.here(self.folder), running=False)
        except Exception:  # noqa: BLE001 - a new sweep: nothing saved yet
            return
        for trial in record.trials:
            self.loop.reported(trial.epochs)
            if trial.loop_end is not None and self.learns:
                self.loop.ended(trial.loop_end)
        if self.learnt is not None:
            self.said = True  # the first run said it
            for follower in self.followers:
                follower.follow_loop(self.learnt)

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        before = self.learnt
        epoch = int(number(result.get("training_iteration")) or 0)
        if self.loop.reported(epoch):  # past the loop's end as learnt: loops differ by config
            for follower in self.followers:
                follower.follow_loop(self.loop.horizon)
            (self.out or print)(
                f"trial {trial.trial_id} reported epoch {epoch}, past epoch {before} where the trainable's own "
                f"loop ended trials so far: its length differs by config, and the sweep plans by --max-epochs "
                f"{self.max_epochs} again"
            )

    def on_trial_complete(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        if trial.status != "RUNNING":  # a paused or waiting trial taken out: a scheduler stopped it
            return
        epochs = int(number((trial.last_result or {}).get("training_iteration")) or 0)
        try:
            decision = self.decisions.decisions().get(trial.trial_id)
        except OSError:  # the storage holding earlier fates is away past its timeout: learn nothing from this
            return  # trial rather than fail the sweep from Tune's callback; the storage guard says why it stops
        ended = fates.loop_end("TERMINATED", epochs, self.max_epochs, decision)
        if ended is not None:
            for follower in self.followers:
                if isinstance(follower, TableLength):
                    follower.ended_by_loop(trial.trial_id)
        if ended is None or not self.learns or not self.loop.ended(ended) or self.learnt is None:
            return
        changes = [said for follower in self.followers if (said := follower.follow_loop(self.learnt))]
        if self.said:  # the long notice came once; a later change of the loop's end in one line
            (self.out or print)(
                f"trial {trial.trial_id} {fates.LOOP_ENDED} at epoch {ended}, and no trial has gone further: the "
                f"sweep now takes a trial to end at epoch {ended}"
            )
            return
        self.said = True
        (self.out or print)(self.notice(trial.trial_id, self.learnt, changes))

    def notice(self, trial_id: str, epochs: int, changes: list[str]) -> str:
        """The one line that says the sweep now plans by the loop's length."""
        plan = list(changes)
        if self.trials_cap:
            plan.append(f"at most {self.trials_cap * epochs} epochs in all for {self.trials_cap} trials")
        return (
            f"trial {trial_id} {fates.LOOP_ENDED} at epoch {epochs}, before --max-epochs {self.max_epochs}, "
            f"and no trial has gone further: the sweep now takes a trial to end at epoch {epochs}"
            + (f" ({'; '.join(plan)})" if plan else "")
            + "; "
            f"--max-epochs {epochs}, or a loop to the max_epochs the trainable is given, says so from the start"
        )
