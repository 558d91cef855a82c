"""The freeze-thaw scheduler's model side: each trial's curve on the model's 0-1 scale and back in the metric's
units, the model fitted off Tune's loop on a thread of its own, and what it predicts of each trial and of a new
config (tuner/schedulers/curve_scheduler.py decides with it).

A mixin of ``FreezeThawScheduler``: it reads and writes the scheduler's own state (``curves``, ``scale``,
``model``, the fit under way), kept apart here because fitting and scaling are one concept and deciding another.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypedDict

import numpy as np

from tuner.folder.horizon import LoopEnds
from tuner.schedulers.curve_model import Observations, PowerLawEnsemble

if TYPE_CHECKING:
    from concurrent.futures import Future

    from numpy.typing import NDArray

    from tuner.schedulers.config_features import ConfigFeatures
    from tuner.value_types import Config, ConfigDraft

MIN_TRIALS = 6  # trials with a result before the first fit (the random start)
REFIT_GROWTH = 0.03  # the model is fitted again once this share more points are in
REFIT_AFTER = 3  # ... and at least this many
FIT_WAIT_S = 5.0  # a decision waits at most this long for a fit under way
LOW_QUANTILE = 2  # values below this percentile of all seen count as this bad: the model tells the good apart
CANDIDATES = 512  # configs drawn for each proposal, beside neighbours of the best
NEIGHBOURS = 32  # around each of the ``NEAR_BEST`` best trials
NEAR_BEST = 4
TRUST = 10.0  # a trial's own last value moves its prediction by epochs / (epochs + TRUST) of its gap
NOISE = 0.01  # spread of a curve's end not seen in the members' disagreement, on the 0-1 scale
NEGLIGIBLE = 1e-6  # an expected gain below this, on the 0-1 scale, reads "about 0" beside a larger one


def expected_improvement(
    mean: NDArray[np.float64], spread: NDArray[np.float64], best: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The expected improvement over ``best`` of a normal (mean, spread), and the chance to beat it."""
    from scipy.special import ndtr

    z = (mean - best) / spread
    chance = ndtr(z)
    return (mean - best) * chance + spread * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi), chance


# A fit's outcome: the model, the scale it was fitted on (low, high, log) and the points it saw.
Fit: TypeAlias = tuple[PowerLawEnsemble, tuple[float, float, bool], int]


class PredictionTable(TypedDict):
    """Every known trial's prediction under the adopted model: its row by trial id, then one column each."""

    index: dict[str, int]
    mean: NDArray[np.float64]
    spread: NDArray[np.float64]
    gain: NDArray[np.float64]
    chance: NDArray[np.float64]


@dataclass
class Prediction:
    """Where a trial's (or a config's) best value is predicted to end, on the model's 0-1 scale."""

    mean: float
    spread: float
    gain: float  # expected improvement over the best seen
    chance: float  # probability to end above the best seen


class CurveFitting:
    """Scaling, fitting and predicting for ``FreezeThawScheduler`` (whose ``__init__`` sets every attribute used here)."""

    curves: dict[str, list[float]]
    configs: dict[str, Config]
    rows: dict[str, NDArray[np.float64]]
    scale: tuple[float, float]
    model: PowerLawEnsemble | None
    fitted_points: int
    features: ConfigFeatures
    seed: int
    max_t: int
    loop: LoopEnds
    _metric: str | None
    _mode: str | None
    _log: bool
    _best: float
    _version: int
    _fitting: Future[Fit] | None
    _fit_seed: int
    _executor: ThreadPoolExecutor | None
    _predicted: dict[str, NDArray[np.float64]]
    _proposed: list[NDArray[np.float64]]
    _pool: list[ConfigDraft]
    _pool_rows: NDArray[np.float64]
    _pool_means: NDArray[np.float64]
    _cache: tuple[int, PredictionTable] | None
    _pool_cache: tuple[tuple[int, int], NDArray[np.float64]] | None

    def _take(self, trial_id: str, epoch: int, value: float | None) -> None:
        """A result into the trial's curve of best values so far (higher is better); a repeated or missing
        epoch keeps the curve whole."""
        curve = self.curves.setdefault(trial_id, [])
        sign = -1.0 if self._mode == "min" else 1.0
        while len(curve) < epoch:
            seen = sign * value if value is not None and len(curve) == epoch - 1 else -math.inf
            curve.append(max(seen, curve[-1]) if curve else seen)
            self._best = max(self._best, curve[-1])
        self._version += 1
        if self.loop_ends.reported(epoch):  # past where loops ended so far: their lengths differ by config
            self._horizon_moved()

    def _horizon_moved(self) -> None:
        """Every prediction was made to the old horizon: made again to the new one."""
        self._predicted = {}
        self._version += 1
        if self.model is not None and self._pool:
            self._pool_means = self.model.curves(self._pool_rows, np.array([self.horizon]))[:, :, 0]

    @property
    def horizon(self) -> int:
        """The epoch whose value the model predicts: ``max_t``, or where the trainable's own loop ends trials
        when that is sooner and no trial has reported past it (``FreezeThawScheduler.loop_ends``)."""
        return self.loop_ends.horizon

    @property
    def loop_ends(self) -> LoopEnds:
        """Where trials end by their own loop, as learnt."""
        return self.loop

    # --- the model's scale ----------------------------------------------------------------------------
    def _axis(self, raw: float) -> float:
        """A value (higher is better) on the model's axis: a loss that has always been positive on a log scale
        (losses that span decades, a diverged run's 1e3 among them, would otherwise squeeze every good value into
        the top of the scale), anything else as it is."""
        return -math.log(max(-raw, 1e-300)) if self._log else raw

    def _metric_of(self, axis: float) -> float:
        raw = -math.exp(-axis) if self._log else axis
        return -raw if self._mode == "min" else raw

    def _any(self) -> bool:
        return math.isfinite(self._best)

    def _best_scaled(self) -> float:
        return self._scaled(self._best) if math.isfinite(self._best) else 0.0

    def _scaled(self, raw: float) -> float:
        low, high = self.scale
        if not math.isfinite(raw):
            return 0.0
        return (self._axis(raw) - low) / (high - low) if high > low else 0.5

    def _shown(self, scaled: float) -> float:
        """A value on the model's scale in the metric's own units and sign."""
        low, high = self.scale
        return round(self._metric_of(low + scaled * (high - low)), 6)

    def _spread_shown(self, spread: float, around: float = 0.5) -> float:
        """A spread on the model's scale as the half-width it spans in the metric's units around ``around``."""
        return round(abs(self._shown(around + spread) - self._shown(around - spread)) / 2, 6)

    def _said(self, p: Prediction) -> str:
        return (
            f"{self._shown(p.mean):.4g} ± {self._spread_shown(p.spread, p.mean):.2g} at epoch {self.horizon}, "
            f"best so far {self._shown(self._best_scaled()):.4g}"
        )

    def _gain_in_units(self, gain: float) -> float:
        """An expected improvement over the best so far, in the metric's units (unrounded)."""
        low, high = self.scale
        best = low + self._best_scaled() * (high - low)
        return abs(self._metric_of(best + gain * (high - low)) - self._metric_of(best))

    def _gains_said(self, *gains: float) -> list[str]:
        """Expected improvements in the metric's units, with as many figures as it takes to tell unequal ones
        apart (two at least, six at most), so that a reason's comparison can be read off its numbers; one
        under a millionth of the values' range is "about 0", beside one that is not and beside another such."""
        if all(g < NEGLIGIBLE for g in gains):  # their difference is the model's rounding, not a promise
            return ["about 0"] * len(gains)
        values = [self._gain_in_units(g) for g in gains]
        said: list[str] = []
        for figures in range(2, 7):
            said = [f"{v:.{figures}g}" for v in values]
            if len(set(said)) == len(set(values)):
                break
        if any(g >= NEGLIGIBLE for g in gains):
            said = ["about 0" if g < NEGLIGIBLE else text for g, text in zip(gains, said, strict=True)]
        return said

    # --- fitting --------------------------------------------------------------------------------------
    def _observations(self) -> tuple[Observations, tuple[float, float, bool]] | None:
        ids = [tid for tid, c in self.curves.items() if any(math.isfinite(v) for v in c)]
        if len(ids) < MIN_TRIALS:
            return None
        values = np.array([v for tid in ids for v in self.curves[tid] if math.isfinite(v)])
        log = self._mode == "min" and bool((values < 0).all())  # every loss seen positive
        axis = -np.log(-values) if log else values
        low, high = float(np.percentile(axis, LOW_QUANTILE)), float(axis.max())
        if high <= low:
            high = low + 1.0
        rows, epochs, ys = [], [], []
        for i, tid in enumerate(ids):
            for e, v in enumerate(self.curves[tid], 1):
                if math.isfinite(v):
                    rows.append(i)
                    epochs.append(e)
                    ys.append(((-math.log(-v) if log else v) - low) / (high - low))
        features = np.vstack([self.rows[tid] for tid in ids])
        data = Observations(features, np.array(rows), np.array(epochs), np.clip(np.array(ys), 0.0, None))
        return data, (low, high, log)

    def _points(self) -> int:
        return sum(1 for c in self.curves.values() for v in c if math.isfinite(v))

    def _maybe_fit(self) -> None:
        """Start a fit on a thread when enough new points are in; the next result takes it up."""
        if self._fitting is not None:
            return
        points = self._points()
        if self.model is not None and points < self.fitted_points + max(
            REFIT_AFTER, REFIT_GROWTH * self.fitted_points
        ):
            return
        seen = self._observations()
        if seen is None:
            return
        data, scale = seen
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="tuner-curve-model")
        base = self.model
        seed = self.seed * 1_000_003 + points

        def fit() -> tuple[PowerLawEnsemble, tuple[float, float, bool], int]:
            import copy

            model = (
                copy.deepcopy(base) if base is not None else PowerLawEnsemble(data.features.shape[1], seed)
            )
            model.fit(data)
            return model, scale, points

        self._fitting = self._executor.submit(fit)
        self._fit_seed = seed

    def _adopt(self) -> None:
        """Take up the fit under way (waiting for it at most ``FIT_WAIT_S``), and draw the configs that new
        trials are chosen among under it."""
        if self._fitting is None:
            return
        try:
            model, scale, points = self._fitting.result(timeout=FIT_WAIT_S)
        except TimeoutError:
            return  # decided by the last model; this fit is taken up at a later result
        self._fitting = None
        self.model, self.fitted_points = model, points
        low, high, self._log = scale
        self.scale = (low, high)
        self._predicted = {}
        self._version += 1
        self._proposed = []
        self._draw_pool(np.random.RandomState(self._fit_seed % (2**32)))

    def _draw_pool(self, rng: np.random.RandomState) -> None:
        assert self.model is not None
        pool = self.features.draw(CANDIDATES, rng)
        ranked = sorted(
            (tid for tid, c in self.curves.items() if c and tid in self.configs),
            key=lambda tid: -self.predict(tid).mean,
        )
        for tid in ranked[:NEAR_BEST]:
            pool += self.features.near(self.configs[tid], NEIGHBOURS, rng)
        self._pool = pool
        self._pool_rows = self.features.rows(pool)
        self._pool_means = self.model.curves(self._pool_rows, np.array([self.horizon]))[:, :, 0]

    # --- predictions --------------------------------------------------------------------------------------
    def predict(self, trial_id: str) -> Prediction:
        """Where a trial ends, from the model and its own curve so far (a new trial: from its config)."""
        table = self._table()
        i = table["index"][trial_id]
        return Prediction(
            float(table["mean"][i]),
            float(table["spread"][i]),
            float(table["gain"][i]),
            float(table["chance"][i]),
        )

    def _table(self) -> PredictionTable:
        """Every known trial's prediction under the adopted model, computed once per change of the data."""
        if self._cache is not None and self._cache[0] == self._version:
            return self._cache[1]
        assert self.model is not None
        ids = list(self.rows)
        missing = [tid for tid in ids if tid not in self._predicted]
        if missing:
            made = self.model.curves(
                np.vstack([self.rows[t] for t in missing]), np.arange(1, self.horizon + 1)
            )
            for k, tid in enumerate(missing):
                self._predicted[tid] = made[:, k, :]
        members = np.stack([self._predicted[t] for t in ids])  # trials x members x epochs
        epochs = np.array([len(self.curves.get(t) or []) for t in ids])
        seen = np.array([self._scaled(self.curves[t][-1]) if epochs[k] else 0.0 for k, t in enumerate(ids)])
        ends = members[:, :, -1]
        # no trial is past the horizon (one that reports past it raises it); the clip only keeps the index
        at = members[np.arange(len(ids)), :, np.clip(epochs, 1, self.horizon) - 1]
        trust = (epochs / (epochs + TRUST))[:, None]
        conditioned = np.maximum(ends + trust * (seen[:, None] - at), seen[:, None])
        ends = np.where(epochs[:, None] > 0, conditioned, ends)
        left = np.maximum(self.horizon - epochs, 0) / self.horizon
        mean = ends.mean(1)
        spread = np.sqrt(ends.var(1) + (NOISE * left) ** 2) + 1e-9
        gain, chance = expected_improvement(mean, spread, self._best_scaled())
        table: PredictionTable = {"index": {t: k for k, t in enumerate(ids)}, "mean": mean, "spread": spread,
                                  "gain": gain, "chance": chance}  # fmt: skip
        self._cache = (self._version, table)
        return table

    def _new_gain(self) -> float:
        return float(self._pool_gains().max()) if self._pool else 0.0

    def _pool_gains(self) -> NDArray[np.float64]:
        if self._pool_cache is not None and self._pool_cache[0] == (self._version, len(self._proposed)):
            return self._pool_cache[1]
        ends = self._pool_means  # members x candidates
        mean = ends.mean(0)
        spread = np.sqrt(ends.var(0) + NOISE**2) + 1e-9
        gains, _ = expected_improvement(mean, spread, self._best_scaled())
        rows = self._pool_rows
        tried = {row.tobytes() for row in self.rows.values()}
        gains = np.where([row.tobytes() in tried for row in rows], 0.0, gains)  # no config twice
        for taken in self._proposed:  # a config proposed since weighs down its neighbourhood
            distance = np.sqrt(((rows - taken) ** 2).sum(1)) / math.sqrt(max(rows.shape[1], 1))
            gains = gains * np.minimum(distance / 0.1, 1.0) ** 2
        self._pool_cache = ((self._version, len(self._proposed)), gains)
        return gains


def chance_said(chance: float) -> str:
    """A chance in a reason's words: "a 4.20%", "a 0.04%", "under a 0.01%"."""
    return f"a {chance:.2%}" if chance >= 1e-4 else "under a 0.01%"
