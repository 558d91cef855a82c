"""Every registered scheduler with every searcher it runs with, on one and two objectives, held to one contract.

Each case replays the same synthetic curves (tuner/replay/engine.py drives the very scheduler and searcher
objects a sweep builds, on a simulated clock) and checks what any scheduler owes a sweep: the replay ends by
itself within the scheduler's own worst case of epochs; every trial ends with a documented fate; a trial ended
before max epochs says which scheduler stopped it; a paused trial goes on from the epoch it paused at, every
epoch trained once, or ends paused or stopped with its reason; none trains past max epochs; the best value is
the best any trial reached; with two objectives there is a front. Mid-replay, everything a sweep holds is
pickled (Ray pickles a sweep's scheduler and searcher with the experiment) and the searcher saved through Tune's
``save``; the restored copies must decide and propose exactly as the originals do. A trainable whose own loop
runs past max epochs shows which schedulers end trials there themselves, as their entries say they do.

The cases come from the registries: a new scheduler or searcher entry is covered without a line here. Which
pairs run together is ``algorithms.check_pair``'s answer; which take two objectives is each entry's
``multi_objective`` (docs/objectives.md), and the other pairs must be refused in one line.
"""

from __future__ import annotations

import io
import math
import pickle as stdlib_pickle
import random
from dataclasses import dataclass

import numpy as np
import pytest
import ray.cloudpickle as pickle  # as Ray pickles a sweep's scheduler and searcher (tuner.pkl)
from ray import tune
from ray.tune.experiment import Trial

from tuner import algorithms, pareto, schedulers, searchers
from tuner.errors import UsageError
from tuner.folder import fates
from tuner.objectives import Objective
from tuner.replay import engine
from tuner.replay.engine import Curve, replay
from tuner.replay.setup import build

EPOCHS = 8  # a power of the reduction factor: every HyperBand bracket reaches it
TRIALS = 16
WORKERS = 2
SNAPSHOT_AT = 20  # results handed over before the mid-replay save
SPACE = {"lr": tune.loguniform(1e-3, 1.0), "width": tune.choice([16, 32, 64, 128]), "x": tune.uniform(0, 1)}
LOSS = Objective("loss", "min")
OBJECTIVES = {1: (LOSS,), 2: (LOSS, Objective("ms", "min"))}


class CrossingCurves:
    """A loss that ends lowest near lr 0.03, x 0.7 and wide models, and starts worst for high x: curves cross,
    so an early rung misjudges some configs. Wider models take longer per epoch (results arrive out of order)
    and are slower to answer (``ms``, against the loss: a real front)."""

    def curve(self, config: dict) -> Curve:
        lr, width, x = float(config["lr"]), int(config["width"]), float(config["x"])
        final = 0.2 + 0.4 * abs(math.log10(lr) + 1.5) + 0.8 * (x - 0.7) ** 2 + 6.0 / width
        start = final + 0.3 + 2.0 * x
        rows = [{"loss": final + (start - final) * e**-1.5, "ms": 0.05 * width * (1 + 0.1 * x)} for e in range(1, EPOCHS + 1)]  # fmt: skip
        return Curve(dict(config), rows, [0.5 + width / 64 + 0.1 * x] * EPOCHS)


# Searchers whose every proposal fits a Gaussian process (about half a second on a 2-core box, 10 s a case): their
# cases run in the slow tier, every other pair in the fast one.
SLOW_SEARCHERS = {"gp", "bayesopt"}


def _cases() -> tuple[list, list]:
    """(scheduler, searcher, objectives) that replay, and (scheduler, searcher) pairs refused two objectives."""
    runs, refused = [], []
    for sched in schedulers.ENTRIES:
        for search in searchers.ENTRIES:
            try:
                algorithms.check_pair(sched.name, search.name)
            except UsageError:
                continue  # not a pair: the registry says so
            marks = [pytest.mark.slow] if search.name in SLOW_SEARCHERS else []
            if sched.takes_no_searcher:  # the registry's word that a replay cannot stand for it
                marks.append(pytest.mark.skip(
                    reason=f"{sched.name} takes no searcher (Ray runs it over its variant generator and it changes "
                    "configs while trials train): recorded curves cannot stand for its trials, replay refuses it"
                ))  # fmt: skip
            pair = f"{sched.name}-{search.name}"
            runs.append(pytest.param(sched.name, search.name, 1, marks=marks, id=f"{pair}-1"))
            if sched.multi_objective and search.multi_objective:  # docs/objectives.md; SeveralObjectives.check
                runs.append(pytest.param(sched.name, search.name, 2, marks=marks, id=f"{pair}-2"))
            elif not sched.takes_no_searcher:
                refused.append(pytest.param(sched.name, search.name, id=pair))
    return runs, refused


RUNS, REFUSED = _cases()


@dataclass
class Snapshot:
    """A replay as it stood before one result: the trials as Ray's experiment state keeps them (id, config,
    status, last result), everything else pickled as Ray pickles a sweep's scheduler and searcher, the
    searcher's own save, the trial whose result comes next and the global random state (BOHB's model draws
    from numpy's)."""

    trials: dict[str, tuple]
    blob: bytes
    saved: str | None  # the searcher's save; None where it has none
    trial_id: str
    rng: tuple


class _TrialsByState(pickle.CloudPickler):
    """Pickles every Trial as a reference: Ray keeps trials in its experiment state, not in a pickle."""

    def persistent_id(self, obj):
        return obj.trial_id if isinstance(obj, Trial) else None


class _TrialsFromState(stdlib_pickle.Unpickler):
    def __init__(self, blob: bytes, trials: dict[str, Trial]) -> None:
        super().__init__(io.BytesIO(blob))
        self.trials = trials

    def persistent_load(self, trial_id):
        return self.trials[trial_id]


class SnapshottingController(engine.Controller):
    """The replay's controller, saving all it holds once before the result that makes ``at`` epochs."""

    def __init__(self, *args, at: int, folder: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.at, self.folder = at, folder
        self.snapshot: Snapshot | None = None

    def _result(self, trial: Trial) -> None:
        # freeze-thaw fits its model on a thread and takes the fit up at a later result; a pickled copy drops a
        # fit under way and fits again from what it knows then (tuner/schedulers/curve_scheduler.py), so the
        # copy is made where none is under way, as its decisions are then the original's
        if self._spent + 1 >= self.at > 0 and getattr(self.scheduler, "_fitting", None) is None:
            self.at = -1  # the restored copy saves nothing again
            rng = (np.random.get_state(), random.getstate())
            trials = {t.trial_id: (dict(t.config), t.status, dict(t.last_result)) for t in self._trials}
            buffer = io.BytesIO()
            _TrialsByState(buffer).dump(self)
            saved: str | None = f"{self.folder}/searcher.pkl"
            try:
                self.searcher.save(saved)
            except NotImplementedError:
                saved = None
            self.snapshot = Snapshot(trials, buffer.getvalue(), saved, trial.trial_id, rng)
        super()._result(trial)


def _restored(snapshot: Snapshot) -> SnapshottingController:
    """The replay as saved, its trials made again from their state (a running one still on its worker, as the
    replay's workers are) and the random state as it was."""
    trials = {}
    for trial_id, (config, status, last) in snapshot.trials.items():
        trial = Trial("replay", config=config, trial_id=trial_id, stub=True)
        trial.set_status(status)
        if last:
            trial.update_last_result(last)
        trials[trial_id] = trial
    copy = _TrialsFromState(snapshot.blob, trials).load()
    np.random.set_state(snapshot.rng[0])
    random.setstate(snapshot.rng[1])
    return copy


def _proposer(searcher):
    """What proposes configs under the replay's wrappers: a concurrency limit only withholds, freeze-thaw's gate
    only asks its scheduler first (both save and restore what they wrap)."""
    from ray.tune.search import ConcurrencyLimiter

    from tuner.schedulers.curve_gate import NewTrialGate

    while isinstance(searcher, (ConcurrencyLimiter, NewTrialGate)):
        searcher = searcher.searcher if isinstance(searcher, ConcurrencyLimiter) else searcher.inner
    return searcher


def _build(scheduler: str, searcher: str, objectives: tuple[Objective, ...]):
    return build(SPACE, scheduler, searcher, max_epochs=EPOCHS, num_samples=TRIALS,
                 seed=0, workers=WORKERS, objectives=objectives)  # fmt: skip


def _context(objectives: tuple[Objective, ...]):
    return algorithms.scheduler_context(params=SPACE, max_epochs=EPOCHS,
                                        num_samples=TRIALS, seed=0, grace_period=1, reduction_factor=2,
                                        objectives=objectives)  # fmt: skip


def _stopper(scheduler: str, objectives: tuple[Objective, ...]) -> str | None:
    """The name a scheduler's early stops are told under (None: it stops none)."""
    entry = schedulers.entry(scheduler)
    return entry.stops_as or entry.stopped_label(_context(objectives))


def _replay(scheduler, searcher, n, monkeypatch, tmp_path):
    objectives = OBJECTIVES[n]
    built = _build(scheduler, searcher, objectives)
    made: list[SnapshottingController] = []

    def controller(*args, **kwargs):
        made.append(SnapshottingController(*args, at=SNAPSHOT_AT, folder=str(tmp_path), **kwargs))
        return made[-1]

    monkeypatch.setattr(engine, "Controller", controller)
    budget = schedulers.entry(scheduler).worst_case_epochs(_context(objectives))
    np.random.seed(0)
    random.seed(0)
    outcome = replay(CrossingCurves(), built, workers=WORKERS, metric="loss", mode="min", num_samples=TRIALS,
                     max_epochs=EPOCHS, epoch_budget=budget + 1)  # fmt: skip
    return outcome, built, made[0], budget


def _fate(trial, rungs) -> str:
    """The trial's fate in the words every view uses (tuner/folder/fates.py), from what the replay's scheduler
    recorded: the last pause or stop it wrote, and its comparisons."""
    decision: fates.Decision = {"rungs": list(rungs)}
    if trial.fate.startswith("paused"):
        decision["paused"] = trial.fate
    elif trial.fate:
        decision["stopped"] = trial.fate
    return fates.fate("TERMINATED", trial.epochs, EPOCHS, "", decision)


def _proposals(searcher, count: int = 3) -> list:
    """The next configs a searcher proposes, from the same global random state each time (a model may withhold
    one: BayesOpt skips a config it has seen)."""
    np.random.seed(1)
    random.seed(1)
    return [searcher.suggest(f"9999{i}") for i in range(count)]


def _story(outcome) -> list:
    return [(t.trial_id, t.config, t.decisions, t.values, t.fate) for t in outcome.trials]


@pytest.mark.parametrize("scheduler, searcher, n", RUNS)
def test_a_scheduler_keeps_the_contract(scheduler, searcher, n, monkeypatch, tmp_path):
    entry = schedulers.entry(scheduler)
    outcome, built, controller, budget = _replay(scheduler, searcher, n, monkeypatch, tmp_path)
    source, stopper = CrossingCurves(), _stopper(scheduler, OBJECTIVES[n])

    # it ends by itself: every trial made and ended, none waiting for ever, within its own worst case
    assert not outcome.stalled
    # (fewer trials only where the searcher said the search was over: BayesOpt does once it proposes again and
    # again what it has seen)
    assert 0 < len(outcome.trials) <= TRIALS and all(t.ended is not None for t in outcome.trials)
    assert outcome.epochs <= budget, f"{outcome.epochs} epochs, over the worst case {budget}"

    paused_any = resumed_any = stopped_any = False
    for trial in outcome.trials:
        fate = _fate(trial, built.fate_log.rungs.get(trial.trial_id, ()))
        says = f"trial {trial.trial_id}: {trial.epochs} epochs, {trial.decisions}, {fate!r}"
        # every epoch trained once, in order, each its curve's own: a paused trial went on where it stopped
        assert [e for e, _ in trial.decisions] == list(range(1, trial.epochs + 1)), says
        curve = source.curve(trial.config)
        assert trial.values == [row["loss"] for row in curve.rows[: trial.epochs]], says
        assert 1 <= trial.epochs <= EPOCHS and not trial.cut_short and not trial.missing, says
        # a documented fate: to the end, stopped early by this scheduler, or paused for good
        documented = (f"ran to max epochs ({EPOCHS})", "stopped early by", fates.ENDED_PAUSED)
        assert fate == documented[0] or fate.startswith(documented[1]) or fate.endswith(documented[2]), says
        if trial.epochs < EPOCHS:
            stopped_any = True
            if fate.startswith("stopped early by"):
                assert stopper is not None and stopper in fates.family(fate), says
            else:
                assert entry.pauses_trials and trial.decisions[-1][1] == "PAUSE", says
        else:
            assert not fate.startswith("stopped early"), says
        pauses = [e for e, d in trial.decisions if d == "PAUSE"]
        assert not pauses or entry.pauses_trials, f"{scheduler} says it never pauses; {says}"
        paused_any |= bool(pauses)
        resumed_any |= any(e < trial.epochs for e in pauses)
        # paused and never continued: it says so, or why it was stopped
        if pauses and pauses[-1] == trial.epochs < EPOCHS:
            assert fate.endswith(fates.ENDED_PAUSED) or fate.startswith("stopped early by"), says

    # the schedulers that pause did, and went on with some; those that stop did
    assert paused_any == entry.pauses_trials and resumed_any == paused_any
    assert stopped_any == (stopper is not None or entry.pauses_trials)

    # the best value is the best any trial reached, however it is read
    best = min(v for t in outcome.trials for v in t.values)
    assert outcome.best_trial().best("min") == best == outcome.best_so_far()[-1][2]
    if n == 2:
        points = outcome.points(OBJECTIVES[2])
        assert len(points) == len(outcome.trials) and pareto.front(points)

    # restored mid-replay, it decides as the original did from there on, and its searcher proposes alike
    snapshot = controller.snapshot
    assert snapshot is not None and outcome.epochs > SNAPSHOT_AT
    copy = _restored(snapshot)
    trial = next(t for t in copy._trials if t.trial_id == snapshot.trial_id)
    copy._result(trial)
    original = next(t for t in outcome.trials if t.trial_id == snapshot.trial_id)
    epoch = copy._records[trial.trial_id].epochs
    assert copy._records[trial.trial_id].decisions[-1] == original.decisions[epoch - 1]
    assert _story(copy.run()) == _story(outcome)

    if snapshot.saved is not None:
        held, again = _restored(snapshot), _restored(snapshot)
        fresh = _build(scheduler, searcher, OBJECTIVES[n]).searcher
        fresh.restore(snapshot.saved)
        proposer = _proposer(fresh)
        # proposals from the scheduler's model come from the one restored with the sweep
        if hasattr(proposer, "attach"):
            proposer.attach(again.scheduler)
        expected = _proposals(_proposer(held.searcher))
        assert _proposals(proposer) == expected
        if any(isinstance(c, dict) for c in expected):  # (BayesOpt may have nothing new to propose by then)
            # the save carried what it learnt: a searcher built afresh proposes something else
            assert _proposals(_proposer(_build(scheduler, searcher, OBJECTIVES[n]).searcher)) != expected


@pytest.mark.parametrize("scheduler, searcher", REFUSED)
def test_a_pair_that_ranks_by_one_value_refuses_two_objectives(scheduler, searcher):
    with pytest.raises(UsageError, match="cannot (decide on|search) 2 objectives"):
        _build(scheduler, searcher, OBJECTIVES[2])


class LongLoop(CrossingCurves):
    """The same curves from a trainable with a loop of its own, three epochs past --max-epochs (a class, or a
    function that takes no max_epochs)."""

    def curve(self, config: dict) -> Curve:
        mine = super().curve(config)
        return Curve(mine.config, mine.rows + [mine.rows[-1]] * 3, mine.seconds + [1.0] * 3)


@pytest.mark.parametrize("scheduler", [
    e.name for e in schedulers.ENTRIES if not e.ends_at_max_epochs and not e.takes_no_searcher
])  # fmt: skip
def test_a_scheduler_that_tuner_leaves_max_epochs_to_ends_every_trial_there(scheduler):
    """Schedulers whose entry says tuner need not end trials at --max-epochs (SchedulerEntry.ends_at_max_epochs)
    end them there themselves."""
    searcher = schedulers.entry(scheduler).requires_searcher or "random"
    outcome = replay(LongLoop(), _build(scheduler, searcher, OBJECTIVES[1]), workers=WORKERS, metric="loss",
                     mode="min", num_samples=TRIALS, max_epochs=EPOCHS)  # fmt: skip
    assert max(t.epochs for t in outcome.trials) == EPOCHS
