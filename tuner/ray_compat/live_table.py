"""Ray 2.60 behaviour tuner works around (see tuner/ray_compat/__init__.py for the index).

14. The live table's status lines (Ray 2.60): CLIReporter counts decisions rather than stopped trials
("num_stopped=6" for 3), shows ASHA's rung cutoffs negated for a metric to minimise (and one at max_t,
where trials end rather than compare), prints the best value with 17 digits, and points at its session
folder ("Result logdir"), which is not the experiment. ``SweepReporter`` rewrites those lines from the
text Ray prints, and ranks rows by each trial's best value as every review does.
"""

from __future__ import annotations

import re
from typing import Any

from ray.tune import CLIReporter

from tuner.objectives import Constraint, Objective, sign
from tuner.ray_compat.trial_folders import name_trial_folders

_LONG_FLOAT = re.compile(r"-?\d+\.\d{5,}(?:e[-+]?\d+)?")
_SCHEDULER_LINE = re.compile(r"^Using (\w+): num_stopped=\d+.*$")
_RUNG = re.compile(r"Iter (\d+)\.0+: (-?[\d.e+-]+|None)")
_LABELS = {"AsyncHyperBand": "ASHA", "HyperBand": "HyperBand", "HyperBandForBOHB": "BOHB"}


class SweepReporter(CLIReporter):
    """Ray's CLIReporter with its status lines made true and readable.

    Ray 2.60's lines count decisions rather than stopped trials ("num_stopped=6" for 3), show ASHA's rung
    cutoffs negated for a metric to minimise, print the best value with 17 digits, and point at its own
    session folder ("Result logdir"), which is not where the experiment is.
    """

    def __init__(
        self,
        *,
        max_epochs: int,
        objectives: tuple[Objective, ...] = (),
        constraints: tuple[Constraint, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._max_epochs = max_epochs
        self._objectives = tuple(objectives)  # several: the status line counts the front so far
        self._constraints = tuple(constraints)  # a trial that breaks one is never the best nor on the front

    def _breaks(self, trial: Any) -> bool:
        from tuner.objectives import violations

        return any(v > 0 for v in violations(self.__dict__.get("_constraints", ()), trial.last_result or {}))

    def _best(self, trial: Any) -> float | None:
        value = (getattr(trial, "metric_analysis", None) or {}).get(self._metric, {}).get(self._mode)
        return value if isinstance(value, (int, float)) and value == value else None

    def _current_best_trial(self, trials: list) -> tuple[Any, str | None]:
        ranked = [t for t in self._ranked(trials) if self._best(t) is not None and not self._breaks(t)]
        return (ranked[0] if ranked else None), self._metric

    def _ranked(self, trials: list) -> list:
        towards = sign(self._mode or "min")
        return sorted(
            trials, key=lambda t: (self._best(t) is None, self._breaks(t), towards * (self._best(t) or 0.0))
        )

    def _progress_str(
        self, trials: list, done: bool, *sys_info: str, fmt: str = "psql", delim: str = "\n"
    ) -> str:
        name_trial_folders(trials)  # Ray's error table reads every trial's folder (ray_compat part 8)
        if not self._metric or not self._mode:
            return super()._progress_str(trials, done, *sys_info, fmt=fmt, delim=delim)
        trials = self._ranked(trials)
        text = super()._progress_str(trials, done, *sys_info, fmt=fmt, delim=delim)
        lines, errors = [], "none"  # none -> before (blank lines) -> table -> none
        for line in text.split(delim):
            if line.startswith("Number of errored trials:"):
                # Ray's error table points at its session folder, gone once Ray stops; the sweep's end
                # names each failure with its error file inside the experiment folder.
                lines.append(
                    line.replace("Number of errored trials", "Errored trials") + " (summarised at the end)"
                )
                errors = "before"
                continue
            if errors != "none":
                if line.startswith(("+", "|")):
                    errors = "table"
                    continue
                if errors == "before" and (not line.strip() or line.startswith("Table truncated")):
                    continue
                errors = "none"
            if not line.startswith("Result logdir:"):
                lines.append(self._tidy(line, trials))
        return delim.join(lines)

    def _tidy(self, line: str, trials: list) -> str:
        if match := _SCHEDULER_LINE.match(line):
            label = _LABELS.get(match.group(1), match.group(1))
            return f"{label}: {stopped_early(trials, self._max_epochs)} trial(s) stopped early so far"
        if line.startswith("Bracket: ") and "Iter " in line:
            return self._rung_cutoffs(line)
        if line.startswith("Current best trial:"):
            best = self._current_best_trial(trials)[0]
            order = "lowest" if self._mode == "min" else "highest"
            line = _LONG_FLOAT.sub(lambda m: f"{float(m.group()):.4g}", line)
            head, _, params = line.partition(" and parameters=")
            if best is None:  # every trial with a result breaks a --constraint
                return f"Best so far: none yet that meets {', '.join(map(str, self._constraints))}"
            if self.__dict__.get("_constraints"):  # Ray's best ignores them: show ours
                params = "{" + ", ".join(f"'{k}': {_short(v)}" for k, v in best.config.items()) + "}"
            if len(self.__dict__.get("_objectives", ())) > 1:
                return (
                    f"Pareto front so far: {self._front_size(trials)} trial(s) on "
                    f"{', '.join(map(str, self._objectives))}; rows ranked by each trial's best {self._metric}, "
                    f"{order} first; best {self._metric}: trial {best.trial_id}, {self._best(best):.4g}"
                )
            return (
                f"Best so far: trial {best.trial_id}, {self._metric} {self._best(best):.4g} (trials ranked by their "
                f"best {self._metric}, {order} first); parameters={params}"
            )
        return line

    def _front_size(self, trials: list) -> int:
        """Trials on the front of the results so far (each at its last result)."""
        from tuner import pareto
        from tuner.values import number

        points = []
        for trial in trials:
            values = [number((trial.last_result or {}).get(o.name)) for o in self._objectives]
            if all(v is not None for v in values) and not self._breaks(trial):
                points.append(tuple(o.as_min(v) for o, v in zip(self._objectives, values, strict=True)))  # type: ignore[arg-type]
        return len(pareto.front(points))

    def _rung_cutoffs(self, line: str) -> str:
        """ASHA compares a trial with the cutoff of its rung (Ray keeps them negated for min metrics)."""
        shown = -sign(self._mode or "min")
        cutoffs = []
        for epoch, value in sorted(((int(e), v) for e, v in _RUNG.findall(line))):
            if epoch >= self._max_epochs:  # Ray keeps a rung at max_t, where trials end rather than compare
                continue
            cutoffs.append(f"epoch {epoch}: " + ("-" if value == "None" else f"{shown * float(value):.4g}"))
        relation = "at most" if self._mode == "min" else "at least"
        return f"rung cutoffs ({self._metric} {relation} this to go on): {', '.join(cutoffs)}"


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else repr(value)


def stopped_early(trials: list, max_epochs: int) -> int:
    """Trials that finished before their last epoch without an error: what a scheduler stopped."""
    return sum(
        1
        for t in trials
        if t.status == "TERMINATED"
        and (t.last_result or {}).get("training_iteration", max_epochs) < max_epochs
    )
