"""The report's parameter importance: which parameters the trials' results depend on, and which way.

Each trial counts with its best value of the objective (at any epoch, as the trials are ranked): what the sweep
got from its config. Comparing every trial at one epoch they all reached compares like with like, but under early
stopping that epoch is often the first, where most configs sit near where they started and the differences the
sweep went on to find are not there yet. A direction is said as a parameter moves the metric ("higher l2 →
lower loss"), never as better or worse, which read as the metric's own direction.
"""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, NamedTuple

from tuner.experiment import ExperimentRecord, TrialRecord
from tuner.objectives import Objective, pick
from tuner.review import findings
from tuner.review.report.axes import LOG_SPAN
from tuner.review.vocabulary import show
from tuner.values import as_float

if TYPE_CHECKING:
    import numpy as np

IMPORTANCE_FIT_AT_MOST = 500  # trials the forest is fitted to: its cost grows faster than the trials
AT_LEAST = 4  # trials needed before a share of the variance says anything


class Importance(NamedTuple):
    """Each varying parameter's share of the variance, how many trials were compared and how many of those
    the forest was fitted to (0: one parameter varied, and its share is all of it)."""

    scores: dict[str, float]
    compared: int
    fitted: int


def compared(trials: list[TrialRecord], objective: Objective) -> list[TrialRecord]:
    """The trials that reported the objective, each to be measured at its best value of it."""
    return [t for t in trials if t.best(objective.name, objective.mode) is not None]


def value_of(trial: TrialRecord, objective: Objective) -> float:
    """A trial's best value of the objective (one of ``compared``, so it has one)."""
    return as_float(trial.best(objective.name, objective.mode))


def varying(trials: list[TrialRecord]) -> list[str]:
    """The parameters that take more than one value among ``trials``."""
    return [
        n
        for n in sorted({k for t in trials for k in t.config})
        if len({show(t.config.get(n)) for t in trials}) > 1
    ]


def importance(trials: list[TrialRecord], objective: Objective) -> Importance | None:
    """fANOVA importance (Optuna's evaluator) of each varying parameter for ``objective``, each trial at its
    best value; None with fewer than ``AT_LEAST`` trials, nothing varying, or an objective without variance. On a large sweep the forest is
    fitted to a seeded sample of ``IMPORTANCE_FIT_AT_MOST``: its cost grows faster than the trials, and a few
    hundred rank the parameters about as steadily as thousands. With one varying parameter there is nothing to
    split: its share is all of it, and no forest is fitted (seconds on a large sweep, for the answer the
    normalised shares give anyway)."""
    reached = compared(trials, objective)
    names = varying(reached)
    if len(reached) < AT_LEAST or not names or len({value_of(t, objective) for t in reached}) < 2:
        return None  # an objective every trial reached alike (an epoch count, say) has no variance to share
    if len(names) == 1:
        return Importance({names[0]: 1.0}, len(reached), 0)
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution
    from optuna.importance import FanovaImportanceEvaluator

    distributions: dict[str, BaseDistribution] = {}
    for name in names:
        values = [t.config.get(name) for t in reached]
        numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(values):
            low, high = min(numbers), max(numbers)
            distributions[name] = FloatDistribution(low, high, log=low > 0 and high / low >= LOG_SPAN)
        else:
            distributions[name] = CategoricalDistribution(sorted({show(v) for v in values}))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize" if objective.mode == "min" else "maximize")
    fitted = reached
    if len(reached) > IMPORTANCE_FIT_AT_MOST:
        import random

        fitted = random.Random(0).sample(reached, IMPORTANCE_FIT_AT_MOST)
    for t in fitted:
        params = {
            # a parameter under a FloatDistribution is a number in every trial (above); one a trial's branch
            # did not ask (left out of its config) is a category of its own
            n: (
                as_float(t.config[n])
                if isinstance(distributions[n], FloatDistribution)
                else show(t.config.get(n))
            )
            for n in names
        }
        study.add_trial(
            optuna.trial.create_trial(
                params=params, distributions=distributions, value=value_of(t, objective)
            )
        )
    scores = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    return Importance(scores, len(reached), len(fitted))


def direction(trials: list[TrialRecord], name: str, objective: Objective) -> str:
    """How a parameter moves ``objective`` where the trials show it, each at its best value: for a number,
    the sign of its rank correlation with the objective when that is unlikely to be chance (p < 0.1); for a
    choice, the option whose trials did best on average."""
    metric = objective.name
    pairs = [(t.config.get(name), value_of(t, objective)) for t in trials]
    asked = [(v, m) for v, m in pairs if v is not None]  # a branch's parameter, where its branch asked it
    numbers = [(v, m) for v, m in asked if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers and len(numbers) == len(asked) and len({v for v, _ in numbers}) > 1:
        where = "" if len(asked) == len(pairs) else f" in the {len(asked)} trials that asked it"
        rho, p = _spearman([v for v, _ in numbers], [m for _, m in numbers])
        if p >= 0.1:
            return f"{name}: no clear direction{where}"
        return f"higher {name} → {'lower' if rho < 0 else 'higher'} {metric} (ρ {rho:+.2f}){where}"
    means: dict[str, list[float]] = {}
    for v, m in pairs:
        means.setdefault(show(v), []).append(m)
    top = pick(objective.mode)(means, key=lambda k: sum(means[k]) / len(means[k]))
    return f"{name}: {'lowest' if objective.mode == 'min' else 'highest'} mean {metric} at {top}"


def section(experiment: ExperimentRecord, trials: list[TrialRecord]) -> str:
    """One importance chart per objective: what drives the loss may not drive the latency, and a parameter
    that lowers one may raise the other."""
    return "\n".join(_chart(experiment, trials, objective) for objective in experiment.config.objectives)


def _chart(experiment: ExperimentRecord, trials: list[TrialRecord], objective: Objective) -> str:
    import plotly.graph_objects as go

    from tuner.review.report.curves import figure_html

    heading = findings.of(experiment).heading(objective)
    found = importance(trials, objective)
    if not found:
        return heading + (
            f"<p class=note>Needs at least {AT_LEAST} trials that reported it and a parameter that varies.</p>"
        )
    scores, count, fitted = found
    measured = compared(trials, objective)
    names = list(scores)[::-1]
    fig = go.Figure(
        go.Bar(
            x=[scores[n] for n in names],
            y=[direction(measured, n, objective) for n in names],
            orientation="h",
        )
    )
    metric = html.escape(objective.name)
    fig.update_layout(
        height=120 + 30 * len(names),
        margin={"t": 20, "l": 20, "r": 20},
        xaxis_title=f"share of the variance of {objective.name}",
    )
    fig.update_yaxes(automargin=True)
    values = [value_of(t, objective) for t in measured]
    if fitted:
        method = (
            "fANOVA (Optuna's FanovaImportanceEvaluator): a random forest fitted to "
            + ("each trial's" if fitted == count else f"a random {fitted} of these trials' (a fixed seed)")
            + f" config and best {metric}, the variance of its prediction split by parameter. Beside each, how "
            f"it moves {metric} where the trials show it: ρ is the rank correlation, said where chance would give "
            "one as strong under 1 time in 10."
        )
    else:
        method = (
            f"Only {html.escape(names[0])} varied, so all of the variance is its own (no forest to fit). "
            f"Beside it, how it moves {metric} where the trials show it (ρ: the rank correlation)."
        )
    note = (
        f"<p class=note>Each of the {count} trials counts with its best {metric} (at any epoch, as the trials "
        f"are ranked: a trial stopped early with what it reached before it stopped); best {metric} ranged "
        f"{min(values):.4g} to {max(values):.4g}. {method} With few trials, read it as a hint.</p>"
    )
    return heading + figure_html(fig) + note


def _spearman(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Spearman's rank correlation and its two-sided p-value by the t approximation (0 and 1 when one side
    does not vary). Ranked here rather than by ``scipy.stats``: its import alone is a second of every page,
    the live page's child included, where ``scipy.special`` is a fraction of that."""
    import numpy as np
    from scipy.special import stdtr

    x_ranks, y_ranks = _ranks(np.asarray(xs, dtype=float)), _ranks(np.asarray(ys, dtype=float))
    if len(xs) < 3 or np.ptp(x_ranks) == 0 or np.ptp(y_ranks) == 0:
        return 0.0, 1.0
    rho = float(np.clip(np.corrcoef(x_ranks, y_ranks)[0, 1], -1.0, 1.0))
    if abs(rho) == 1.0:
        return rho, 0.0
    freedom = len(xs) - 2
    t = abs(rho) * math.sqrt(freedom / ((1.0 + rho) * (1.0 - rho)))
    return rho, float(2.0 * stdtr(freedom, -t))


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of the ranks they span."""
    import numpy as np

    _, where, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[where]
