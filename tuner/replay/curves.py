"""Tables of learning curves: config -> per-epoch metrics and seconds, from a file or a finished sweep.

A table is what a replay looks epochs up in. It is keyed by the values of the parameters it names, so a
config proposed by a searcher finds the recorded run of the same values (floats compared to 12
significant digits, as JSON round-trips them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.replay.engine import Curve
from tuner.values import as_float, plain

if TYPE_CHECKING:
    from tuner.value_types import Config, Result, Value

BOOKKEEPING = {
    "training_iteration",
    "time_this_iter_s",
    "time_total_s",
    "timestamp",
    "time_since_restore",
    "iterations_since_restore",
    "done",
    "pid",
    "date",
    "hostname",
    "node_ip",
    "checkpoint_dir_name",
    "should_checkpoint",
    "trial_id",
    "experiment_tag",
    "config",
}


def key(config: Config, params: Sequence[str]) -> str:
    """One config's place in a table: its values for ``params``, floats to 12 significant digits."""

    def one(value: Value) -> Value:
        value = plain(value)
        if isinstance(value, float) and math.isfinite(value):
            return float(f"{value:.12g}")
        return value

    return json.dumps([one(config.get(name)) for name in params])


class CurveTable:
    """Recorded curves keyed by their configs' values; ``curve(config)`` finds the run of those values."""

    def __init__(
        self, curves: Iterable[Curve], params: Sequence[str], meta: Mapping[str, Value] | None = None
    ) -> None:
        self.params = list(params)
        self.curves = list(curves)
        self.meta = dict(meta or {})  # what the table holds: metric, mode, epochs, source
        self._by_key = {key(c.config, self.params): c for c in self.curves}

    def curve(self, config: Config) -> Curve | None:
        return self._by_key.get(key(config, self.params))

    def __len__(self) -> int:
        return len(self.curves)

    def save(self, path: str | Path) -> None:
        """JSON, gzipped when the name ends in ``.gz``."""
        data = {
            **self.meta,
            "params": self.params,
            "curves": [{"config": c.config, "rows": c.rows, "seconds": c.seconds} for c in self.curves],
        }
        text = json.dumps(data, separators=(",", ":"))
        if str(path).endswith(".gz"):
            import gzip

            Path(path).write_bytes(gzip.compress(text.encode("utf-8")))
        else:
            Path(path).write_text(text, encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> CurveTable:
        try:
            raw = Path(path).read_bytes()
            if str(path).endswith(".gz"):
                import gzip

                raw = gzip.decompress(raw)
            data = json.loads(raw.decode("utf-8"))
            curves = [Curve(c["config"], c["rows"], c.get("seconds") or []) for c in data.pop("curves")]
            return cls(curves, data.pop("params"), data)
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            raise UsageError(f"{path} is not a table of learning curves ({exc})") from None


def metrics_only(row: Result) -> dict[str, float]:
    """What a trial reported in one epoch, without Tune's bookkeeping; numbers as numbers."""
    out: dict[str, float] = {}
    for name, value in row.items():
        if name in BOOKKEEPING or name.startswith("config/"):
            continue
        try:
            out[name] = as_float(value)
        except (TypeError, ValueError):
            continue
    return out
