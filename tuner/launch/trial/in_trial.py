"""What runs in each trial's own process around the user's trainable, whatever its form.

For every run of a trial: its output goes to ``stdout.log`` and ``stderr.log`` in its folder
(tuner/launch/trial/trial_output.py), a fatal signal's Python stack to ``crash.txt`` (tuner/launch/guards/crashes.py),
and its log lines name the trial. A function trainable gets these around each call, with the tutorial's
``ray.train`` API bound to ``ray.tune``'s; a ``tune.Trainable`` class gets them from ``setup`` to
``cleanup`` through a subclass, and again for each trial a reused actor takes on (``reset_config``); its
last epoch is ``max_epochs``, as a function's is its own loop's.

On local storage the files go straight into the trial's folder in the experiment, on every node that sees
it; on a bucket, output goes to the trial's working folder, which Ray uploads beside its results.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tuner.folder.names import CRASH_FILE
from tuner.launch.guards.crashes import fatal_signals_to
from tuner.launch.trial.trial_output import captured

if TYPE_CHECKING:
    from tuner.launch.trial.forms import TrainableForm
    from tuner.value_types import Config, ConfigDraft, Value


@contextlib.contextmanager
def duties(
    experiment: str | None, trial_id: str, trial_dir: str, working_dir: Path | None, echo: bool
) -> Iterator[None]:
    """One run of one trial: output captured, fatal signals recorded, log lines named after the trial.

    ``experiment`` is the experiment's local folder (None for a bucket); ``trial_dir`` the trial's folder name.
    """
    from tuner.ray_compat import plain_formatting

    local = Path(experiment, trial_dir) if experiment is not None else None
    with contextlib.suppress(Exception):
        plain_formatting(f"(trial {trial_id}) %(levelname)s: %(message)s")
    with contextlib.ExitStack() as stack:
        for record in (
            captured(local or working_dir, echo),
            fatal_signals_to(local / CRASH_FILE if local else None),
        ):
            try:
                stack.enter_context(record)
            except (
                OSError
            ):  # a full or unwritable disk: the trial runs without this record (its own writes will say)
                continue
        yield


def in_trial(trainable: TrainableForm, experiment: str | None, echo: bool, max_epochs: int) -> TrainableForm:
    """``trainable`` with its per-trial duties, in the form it came in; a class's trial ends at ``max_epochs``
    (a function ends itself)."""
    from tuner.launch.trial.forms import is_class

    if is_class(trainable):
        return _class_trial(trainable, experiment, echo, max_epochs)
    return _function_trial(trainable, experiment, echo)


def _function_trial(trainable: TrainableForm, experiment: str | None, echo: bool) -> Callable[..., object]:
    from tuner.ray_compat import tutorial_api

    inner = tutorial_api(trainable)

    @functools.wraps(trainable)
    def run(config: Config, **kwargs: Any) -> object:  # the settings go to the trainable untouched
        where = _function_trial_place()
        if where is None:  # a direct call, outside a Tune trial: nothing to capture
            return inner(config, **kwargs)
        with duties(experiment, *where, echo=echo):
            return inner(config, **kwargs)

    return run


def _function_trial_place() -> tuple[str, str, Path] | None:
    """The running trial's id, its folder's name and its working folder, or None outside a trial."""
    import os

    try:
        from ray import tune

        context = tune.get_context()
        trial_id, trial_dir = context.get_trial_id(), context.get_trial_dir()
    except Exception:  # noqa: BLE001 - no Tune session here
        return None
    if not trial_id or not trial_dir:
        return None
    return trial_id, Path(trial_dir).name, Path(os.getcwd())


def _class_trial(cls: type, experiment: str | None, echo: bool, max_epochs: int) -> type:
    """A subclass of the user's ``tune.Trainable`` that holds its trial's duties from setup to cleanup, and
    whose ``max_epochs``-th step is its last.

    The last step says ``done`` as a function's return does, rather than a stopper ending the trial: Tune asks
    no scheduler about a result a stopper ends on, and HyperBand's last rung would never be decided."""

    class Trial(cls):
        def setup(self, config: ConfigDraft, **kwargs: Any) -> None:  # the settings go to its setup untouched
            self._tuner_begin()
            super().setup(config, **kwargs)

        def step(self) -> dict[str, Value]:
            result = super().step()
            if self.iteration + 1 >= max_epochs and isinstance(
                result, dict
            ):  # ``iteration``: steps before this one
                result = {**result, "done": True}
            return result

        def reset_config(self, new_config: ConfigDraft) -> bool:
            self._tuner_end()
            reused = super().reset_config(new_config)
            if reused:  # the same process takes on the next trial: its output goes to that trial's folder
                self._tuner_begin()
            return reused

        def cleanup(self) -> None:
            try:
                super().cleanup()
            finally:
                self._tuner_end()

        def _tuner_begin(self) -> None:
            self._tuner_duties = contextlib.ExitStack()
            logdir = Path(self.logdir)
            self._tuner_duties.enter_context(duties(experiment, self.trial_id, logdir.name, logdir, echo))

        def _tuner_end(self) -> None:
            stack = self.__dict__.pop("_tuner_duties", None)
            if stack is not None:
                stack.close()

    Trial.__name__ = cls.__name__  # Tune names trials after it ("Bowl_3c1e9a2f")
    Trial.__doc__ = cls.__doc__
    return Trial
