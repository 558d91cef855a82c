"""An Optuna define-by-run space (``fn(trial)`` calling ``trial.suggest_*``) as tuner's parameters.

The function is run on a stand-in trial once per combination of its categorical answers that changes what it
asks (at most ``MAX_RUNS`` runs), with its numeric answers at both ends of their ranges. A parameter asked
under every answer is an ordinary domain; one asked only under some values of one categorical is conditional
on it. What cannot be followed is said in one line: a parameter whose asking depends on a numeric answer (a
loop over ``n_layers``), on two choices at once, or a call other than ``suggest_*`` (``trial.report``).
The trainable gets what Ray's OptunaSearch would give it: the function run again on the trial's values,
its answers and the constants it returns, nothing it did not ask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from tuner.errors import UsageError
from tuner.native_spaces.distributions import BranchDraw, Dist
from tuner.native_spaces.translated import Translated
from tuner.nesting import flatten, unflatten
from tuner.values import as_float, plain

if TYPE_CHECKING:
    from tuner.value_types import Config, ConfigDraft, SpaceEntry, Value

MAX_RUNS = 512  # combinations of categorical answers tried before the space is called too large to follow
ALTERNATIVE = "write it with suggest_categorical branches, or as Tune domains"


class CannotFollow(Exception):
    """The function did something a stand-in trial cannot answer."""


@dataclass
class _Run:
    asked: dict[str, Dist] = field(default_factory=dict)
    answers: dict[str, Value] = field(default_factory=dict)
    returned: Mapping[str, Value] | None = None  # the constants the function returned


class StandIn:
    """The trial a define-by-run function is given: answers from ``fixed`` where named, else the first
    category or the ``end`` (0 low, 1 high) of a numeric range; records what was asked."""

    def __init__(self, fixed: Mapping[str, Value], end: int = 0) -> None:
        self._fixed = fixed
        self._end = end
        self._run = _Run()

    def suggest_float(
        self, name: str, low: float, high: float, *, step: float | None = None, log: bool = False
    ) -> float:
        if log and step is not None:
            raise CannotFollow(f"suggest_float({name!r}) with both log and step, which Optuna refuses too")
        kind = "loguniform" if log else ("quniform" if step is not None else "uniform")
        dist = Dist(kind, (float(low), float(high)) + ((float(step),) if step is not None else ()))
        # a number: an end of the range, or drawn from it (a config's value for this parameter)
        return as_float(self._answer(name, dist, (low, high)))

    def suggest_int(self, name: str, low: int, high: int, *, step: int = 1, log: bool = False) -> int:
        if log:
            dist = Dist("lograndint", (int(low), int(high) + 1))
        elif step != 1:
            dist = Dist("qrandint", (int(low), int(high) - (int(high) - int(low)) % step, int(step)))
        else:
            dist = Dist("randint", (int(low), int(high) + 1))
        # a number: an end of the range, or drawn from it (a config's value for this parameter)
        return int(as_float(self._answer(name, dist, (low, high))))

    def suggest_categorical(self, name: str, choices: Sequence[Value]) -> Value:
        choices = tuple(plain(c) for c in choices)
        return self._answer(name, Dist("choice", choices), (choices[0], choices[-1]))

    def _answer(self, name: str, dist: Dist, ends: tuple[Value, Value]) -> Value:
        if name in self._run.asked and self._run.asked[name] != dist:
            raise CannotFollow(f"it asks {name!r} twice with different ranges")
        self._run.asked[name] = dist
        if name in self._fixed:
            value = self._fixed[name]
        else:
            value = dist.args[0] if dist.kind == "choice" else ends[self._end]
        self._run.answers[name] = value
        return value

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("_"):
            raise AttributeError(name)
        raise CannotFollow(
            f"it calls trial.{name}, which a space cannot do before the trial runs; report from the trainable "
            "(tune.report) and let the scheduler stop trials"
        )


# What a define-by-run function is, as tuner runs it: it asks a trial (Optuna's; here the stand-in) for its
# parameters and returns None or a dict of constants.
DefineByRun: TypeAlias = "Callable[[StandIn], Mapping[str, Value] | None]"


def translate_define_by_run(function: DefineByRun) -> Translated:
    runs = _explore(function)
    names = list(dict.fromkeys(n for run in runs for n in run.asked))
    always = [n for n in names if all(n in r.asked for r in runs)]
    categorical = [n for n in always if _one_dist(runs, n).kind == "choice"]
    params: dict[str, SpaceEntry] = {}
    for name in names:
        if name in always:
            dist = _one_dist(runs, name)
            params[name] = dist.domain()
            continue
        parent = next((c for c in categorical if _decides(runs, c, name)), None)
        if parent is None:
            raise UsageError(
                f"space params: the define-by-run function asks {name!r} only under some answers, and no one "
                f"suggest_categorical decides when (a branch under a branch, or a branch on a number); tuner "
                f"follows a parameter asked on the branches of one choice: merge the nested choices into one "
                f"suggest_categorical, or write the space as Tune domains"
            )
        branches = {run.answers[parent]: run.asked[name] for run in runs if name in run.asked}
        from ray import tune

        params[name] = tune.sample_from(BranchDraw(parent, branches))
    if not params:
        raise UsageError("space params is a define-by-run function that asks nothing; nothing to search")
    return Translated(
        params=params, shape=DefineByRunShape(function), form="an Optuna define-by-run function"
    )


class DefineByRunShape:
    """A trial's config as Ray's OptunaSearch gives it: the function's answers and the constants it returns."""

    def __init__(self, function: DefineByRun) -> None:
        self.function = function

    def __call__(self, config: Config) -> ConfigDraft:
        flat = flatten(config)
        trial = StandIn(flat)
        returned = self.function(trial)
        answers = {name: flat[name] for name in trial._run.asked}
        return unflatten({**answers, **flatten(dict(returned or {}))})


def _explore(function: DefineByRun) -> list[_Run]:
    """The function run with its categorical answers at their first values, then each one varied alone, and
    so on for the choices a varied answer reveals (each numeric answer at both ends of its range); a
    UsageError for what cannot be followed."""
    runs: list[_Run] = []
    pending: list[tuple[dict[str, Value], frozenset[str]]] = [({}, frozenset())]
    seen: set[tuple[tuple[str, str], ...]] = set()
    while pending:
        fixed, varied = pending.pop()
        key = tuple(sorted((k, repr(v)) for k, v in fixed.items()))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_RUNS:
            raise UsageError(
                f"space params: the define-by-run function has more than {MAX_RUNS} branches to follow; "
                f"{ALTERNATIVE}"
            )
        low, high = _run(function, fixed, 0), _run(function, fixed, 1)
        _same_questions(low, high)
        runs.append(low)
        new = [n for n, d in low.asked.items() if d.kind == "choice" and n not in varied and n not in fixed]
        for name in new:
            pending.extend(({**fixed, name: v}, varied | set(new)) for v in low.asked[name].args[1:])
    return _unique(runs)


def _same_questions(low: _Run, high: _Run) -> None:
    """The same parameters, with the same ranges, whichever end of its ranges the function was answered at."""
    moved = sorted(set(low.asked) ^ set(high.asked)) or [
        n for n in low.asked if low.asked[n] != high.asked[n]
    ]
    if not moved:
        return
    numeric = [n for n in low.asked if low.asked[n].kind != "choice" and n in high.asked and n != moved[0]]
    which = f" ({numeric[0]})" if numeric else ""
    raise UsageError(
        f"space params: what the define-by-run function asks of {moved[0]!r} depends on a numeric answer{which}, "
        "as a loop over a suggested count does; tuner follows branches on suggest_categorical only: suggest the "
        "count as a category, or ask a fixed number of parameters"
    )


def _run(function: DefineByRun, fixed: Mapping[str, Value], end: int) -> _Run:
    trial = StandIn(fixed, end)
    try:
        returned = function(trial)
    except CannotFollow as exc:
        raise UsageError(f"space params: the define-by-run function cannot be followed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the user's function fails on a stand-in's answer: say where
        raise UsageError(
            f"space params: the define-by-run function failed when tried: {type(exc).__name__}: {exc}"
        ) from None
    if returned is not None and not isinstance(returned, Mapping):
        raise UsageError(
            "space params: a define-by-run function returns None or a dict of constants, not "
            f"{type(returned).__name__}"
        )
    trial._run.returned = returned
    return trial._run


def _unique(runs: list[_Run]) -> list[_Run]:
    out: dict[tuple[tuple[str, str], ...], _Run] = {}
    for run in runs:
        out.setdefault(tuple(sorted((k, repr(v)) for k, v in run.answers.items() if run.asked[k].kind == "choice")),
                       run)  # fmt: skip
    return list(out.values())


def _one_dist(runs: list[_Run], name: str) -> Dist:
    dists = {run.asked[name] for run in runs if name in run.asked}
    if len(dists) > 1:
        raise UsageError(
            f"space params: the define-by-run function asks {name!r} with a range that depends on another "
            f"answer; give each range its own name ({ALTERNATIVE})"
        )
    return dists.pop()


def _decides(runs: list[_Run], parent: str, child: str) -> bool:
    """Whether ``parent``'s answer alone tells whether ``child`` is asked, with one range per answer."""
    by_answer: dict[str, set[Dist | None]] = {}
    for run in runs:
        asked = run.asked.get(child)
        by_answer.setdefault(repr(run.answers[parent]), set()).add(asked)
    return all(len(dists) == 1 for dists in by_answer.values()) and any(
        None in dists for dists in by_answer.values()
    )
