"""The wrapper between Tune and a model: decode its suggestions, fill in what it does not search.

Private names: Ray's ``OptunaSearch._ot_trials`` and ``_ot_study`` and ``BayesOptSearch._points_to_evaluate``;
indexed in tuner/ray_compat/__init__.py, checked by tests/unit/test_private_uses.py.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Mapping, Sequence
from typing import Protocol

from ray.tune.search import Searcher
from ray.tune.search.sample import Domain

from tuner.folder.pickled import Restored, fresh, none
from tuner.nesting import flatten, unflatten
from tuner.objectives import Constraint, better
from tuner.ray_compat import LastResultOnCompletion
from tuner.searchers.plan import COMPUTED, CONDITIONAL, DERIVED, ENCODED, NATIVE, RANDOM, SEARCHED, SearchPlan
from tuner.searchers.wrapping import WrappingSearcher
from tuner.value_types import ConfigDraft, Value
from tuner.values import as_float, plain

# the violation told for a constraint metric not reported (Optuna takes no infinity)
BROKEN_BEYOND_MEASURE = 1e12


class Observation(Protocol):
    """An earlier sweep's trial as a warm start hands it over (tuner/launch/warm_start.py)."""

    config: ConfigDraft
    value: float
    pruned: bool
    values: list[float]


class PlannedSearcher(Restored, LastResultOnCompletion, WrappingSearcher):
    """A model-based searcher seen through its plan.

    The inner searcher keeps its own encoded values (log lr, a category index, a probed value's position)
    keyed by trial id, so results flow back to it unchanged; only what trials see is decoded. Parameters
    drawn at random are drawn here from a seeded generator, so a sweep repeats with its seed.

    With ``pruned_below`` (the sweep's epochs, for a model that ranks pruned trials), a trial that ends
    before them without an error was stopped by the scheduler and is told to the model as pruned.

    The model learns each trial's best value so far, epoch by epoch and at its end, because that is how the
    sweep ranks trials (a trial's best epoch, whose checkpoint is kept): where curves overfit, a last-epoch
    value would teach the model to prefer configs that are worst when it matters.

    With several objectives (the inner searcher's metric a list), each trial is told with its values at its
    last epoch, stopped early or not: a best value per objective would mix epochs into a point no checkpoint
    holds. With ``constraints``, each finished trial's violations are told to the model (Optuna's constraints).
    """

    SINCE = {
        "pruned_below": none,
        "constraints": lambda state: (),
        "_again": fresh(list),
        "_furthest_told": fresh(dict),
        "_best": fresh(dict),
    }

    def __init__(
        self,
        inner: Searcher,
        plan: SearchPlan,
        seed: int,
        never_wait: bool = False,
        pruned_below: int | None = None,
        constraints: tuple[Constraint, ...] = (),
    ) -> None:
        WrappingSearcher.__init__(self, inner)
        LastResultOnCompletion.__init__(self)
        self.plan = plan
        self.seed = seed
        self.never_wait = never_wait
        self.pruned_below = pruned_below
        self.constraints = tuple(constraints)
        self._draws = 0
        self._drawn_here: dict[str, dict[str, Value]] = {}  # trial id -> encoded values drawn at random
        # (encoded point, config) to run again
        self._again: list[tuple[dict[str, Value], dict[str, Value]]] = []
        self._furthest_told: dict[str, int] = {}  # trial id -> the furthest epoch the model was told of
        self._best: dict[str, float] = {}  # trial id -> its best value of the metric so far

    def suggest(self, trial_id: str) -> ConfigDraft | None:
        import numpy as np

        suggestion = self.inner.suggest(trial_id)
        rng = np.random.RandomState((self.seed * 7919 + self._draws) % (2**32))
        if suggestion is None and self.never_wait:
            # The model waits for results that a scheduler holding trials (sync brackets) will only give
            # once more trials join: draw this one at random; its result still teaches the model.
            suggestion = {
                p.name: plain(p.domain.sample(random_state=rng))
                for p in self.plan.params
                if p.treatment in SEARCHED
            }
            self._drawn_here[trial_id] = suggestion
        if suggestion is None or suggestion == Searcher.FINISHED:
            return suggestion
        # Ray's searchers nest a nested space's suggestion; the plan names leaves
        suggestion = flatten(suggestion)
        self._draws += 1
        again = self._run_again(suggestion)
        config: ConfigDraft = {}
        for p in self.plan.params:
            if p.treatment in (RANDOM, *SEARCHED) and p.name in again:  # exactly as it ran, not re-decoded
                config[p.name] = again[p.name]
            elif p.treatment == RANDOM:
                continue  # a function of the others, drawn once they are decided
            elif p.treatment in (NATIVE, ENCODED):
                raw = suggestion[p.name]
                config[p.name] = plain(p.decode(raw) if p.decode else raw)
            elif p.treatment not in (CONDITIONAL, DERIVED, COMPUTED) and not isinstance(p.encoded, Domain):
                config[p.name] = p.encoded  # a constant
        for c in self.plan.conditionals:  # after their parents, whatever order the space lists them in
            from tuner.searchers.conditional import decode

            config[c.name] = plain(
                decode(c.name, c.branches, config[c.branches.parent], suggestion, c.encoded, config)
            )
        for (
            p
        ) in self.plan.params:  # the functions drawn at random, after what they read, in the space's order
            if p.treatment == RANDOM and p.name not in config:
                config[p.name] = plain(p.domain.sample(config=unflatten(config), random_state=rng))
        for p in self.plan.params:  # made from the others, once they are all decided
            if p.treatment in (DERIVED, COMPUTED) and p.name not in config and p.decode is not None:
                config[p.name] = plain(p.decode(suggestion.get(p.name), config))
        # as the trainable reads it
        return unflatten({name: config[name] for name in (q.name for q in self.plan.params)})

    def _run_again(self, suggestion: Mapping[str, Value]) -> dict[str, Value]:
        """The earlier config when ``suggestion`` is the one queued to run again, else nothing."""
        queued = self._again
        if queued and all(suggestion.get(k) == v for k, v in queued[0][0].items()):
            return queued.pop(0)[1]
        return {}

    @property
    def _metrics(self) -> list[str]:
        metric = self.inner.metric
        return list(metric) if isinstance(metric, (list, tuple)) else [metric]

    @property
    def _several(self) -> bool:
        return isinstance(self.inner.metric, (list, tuple))

    def _reports_all(self, result: Mapping[str, Value] | None) -> bool:
        return result is not None and all(m in result for m in self._metrics)

    def on_trial_result(self, trial_id: str, result: dict[str, Value]) -> None:
        if not self._reports_all(result):  # the sweep's metric guard names what was reported instead
            return
        if not self._several:
            result = self._at_best(trial_id, result)
        self.remember(trial_id, result)
        if trial_id in self._drawn_here:  # the model never saw that trial
            return
        if self._told_before(trial_id, result.get("training_iteration")):
            return
        self.inner.on_trial_result(trial_id, result)

    def _told_before(self, trial_id: str, step: Value) -> bool:
        """Whether the model already has this trial's result for that epoch: a trial without checkpoints that
        starts over after a resume reports its epochs again, and Optuna warns of each one and ignores it."""
        if not isinstance(step, int):
            return False
        told = self._furthest_told
        if step <= told.get(trial_id, 0):
            return True
        told[trial_id] = step
        return False

    def _at_best(self, trial_id: str, result: dict[str, Value]) -> dict[str, Value]:
        """``result`` with the metric replaced by the trial's best value so far (NaN never counts as best)."""
        metric, value = self.inner.metric, plain(result[self.inner.metric])
        best = self._best.get(trial_id)
        if isinstance(value, (int, float)) and math.isfinite(value):
            improved = best is None or better(value, best, self.inner.mode)
            best = value if improved else best
        if best is None:
            return result
        self._best[trial_id] = best
        return {**result, metric: best}

    def _stopped_early(self, result: Mapping[str, Value] | None, error: bool) -> bool:
        """A trial the scheduler stopped before its last epoch, for a model told such trials as pruned (Optuna's
        pruned trials rank by one value: with several objectives each is told as it ended)."""
        if self.pruned_below is None or self._several or error or not result:
            return False
        reached = as_float(result.get("training_iteration", self.pruned_below))  # Tune's epoch count
        return int(reached) < self.pruned_below

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Value] | None = None, error: bool = False
    ) -> None:
        result = self.completed(trial_id, result, error)
        if result is not None and not self._reports_all(result):
            result, error = None, True
        if result is not None and self.constraints:
            self._tell_constraints(trial_id, result)
        if result is not None and not self._several:
            result = self._at_best(trial_id, result)
        self._best.pop(trial_id, None)
        drawn = self._drawn_here.pop(trial_id, None)
        if drawn is None:
            if self._stopped_early(result, error):
                # Ray's OptunaSearch tells Optuna "pruned" for a completion without the metric; Optuna then
                # takes the trial's last reported (epoch, value) from what on_trial_result passed on.
                result = {k: v for k, v in (result or {}).items() if k != self.inner.metric}
            self.inner.on_trial_complete(trial_id, result=result, error=error)
            return
        if (
            self._several
        ):  # drawn while the model waited; Ray's OptunaSearch takes an outside point as one value
            return
        value = (result or {}).get(self.inner.metric)
        if value is None or error:
            return
        try:  # only models that wait (BayesOpt) get here, and they take a value as it is
            # the metric's value as Tune reported it: a number
            self.inner.add_evaluated_point(drawn, as_float(value))
        except NotImplementedError:  # a model that cannot take outside points just does without this one
            pass

    def _tell_constraints(self, trial_id: str, result: Mapping[str, Value]) -> None:
        """Each constraint's violation by the trial's last result, on the model's own trial (Optuna reads them
        from there: an infeasible trial is never in its good group)."""
        from tuner.objectives import violations

        # Ray's OptunaSearch: id -> Optuna trial
        model_trial = getattr(self.inner, "_ot_trials", {}).get(trial_id)
        if model_trial is None:
            return
        for constraint, over in zip(self.constraints, violations(self.constraints, result), strict=True):
            model_trial.set_constraint(str(constraint), min(over, BROKEN_BEYOND_MEASURE))

    def add_observations(
        self,
        points: Sequence[tuple[dict[str, Value], Observation]],
        first: tuple[dict[str, Value], Observation] | None = None,
    ) -> None:
        """Seed the model with earlier sweeps' trials, already encoded (tuner/launch/warm_start.py ``encode``);
        ``first``, one of them, is run again as the next trial, with its earlier values for the parameters
        drawn at random too."""
        for point, obs in points:
            # Optuna numbers the values it is given from 0; epochs count from 1, as live trials report them.
            steps = [obs.values[0], *obs.values] if obs.pruned and obs.values else None
            self.inner.add_evaluated_point(point, obs.value, pruned=obs.pruned, intermediate_values=steps)
        if first is not None:
            point, obs = first
            self._propose_next(point)
            self._again = [*self._again, (point, dict(obs.config))]

    def _propose_next(self, point: dict[str, Value]) -> None:
        """Queue an encoded config as the model's next proposal, through the model's own queue, so that it is
        the model's trial like any other (running, it is one a model does not propose again)."""
        study = getattr(self.inner, "_ot_study", None)
        if study is not None:  # Optuna: an enqueued trial is the next one asked for
            study.enqueue_trial(point, skip_if_exists=False)
        elif hasattr(self.inner, "_points_to_evaluate"):  # Ray's BayesOptSearch pops these before its model
            self.inner._points_to_evaluate = [*(self.inner._points_to_evaluate or []), point]
        else:  # every searcher that takes earlier results has a queue; a new one must say how it queues
            raise TypeError(f"{type(self.inner).__name__} has no queue of configs to propose next")

    def save(self, checkpoint_path: str) -> None:
        """One file holding the inner searcher's own save, our draw counter, the last results, the config
        queued to run again and the furthest epoch of each trial the model was told of."""
        self.inner.save(checkpoint_path)
        with open(checkpoint_path, "rb") as f:
            inner_state = f.read()
        with open(checkpoint_path, "wb") as f:
            state = {
                "inner": inner_state,
                "draws": self._draws,
                "last": self.last_results,
                "drawn": self._drawn_here,
                "best": self._best,
                "again": self._again,
                "told": self._furthest_told,
            }
            pickle.dump(state, f)

    def restore(self, checkpoint_path: str) -> None:
        import tempfile

        with open(checkpoint_path, "rb") as f:
            state = pickle.load(f)
        with tempfile.NamedTemporaryFile(suffix=".pkl") as inner_file:
            inner_file.write(state["inner"])
            inner_file.flush()
            self.inner.restore(inner_file.name)
        self._draws = state["draws"]
        self.last_results = state.get("last", {})
        self._drawn_here = state.get("drawn", {})
        self._best = state.get("best", {})
        self._again = state.get("again", [])
        self._furthest_told = state.get("told", {})
