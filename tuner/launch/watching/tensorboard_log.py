"""TensorBoard files that show what matters: the trainable's own metrics per epoch, and HParams of the space.

Ray's own TensorBoard logger writes every key of every result (a dozen of Ray's bookkeeping values among
them) with the step counter as x axis, and HParams with every value a float and every trial a success.
This one writes, per trial folder: each metric the trainable reported, at its epoch; at the end of the
trial the HParams session with only the space's parameters, each with its type and domain (a float's or an
integer's interval, a choice's or a probed ``sample_from``'s values), so they sort as numbers; the metric's
best value first, then the last values; and the trial's fate (why it ended where it did) as an HParam and a
text. Its session status is success only for a trial that ran all its epochs.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, SupportsFloat, TypeAlias, TypeGuard, cast

import numpy as np
from ray.tune.logger import TBXLoggerCallback

from tuner.folder.fates import FateFollower, fate, kind, refusal
from tuner.nesting import flatten
from tuner.objectives import Mode, better
from tuner.ray_compat.state_file import bookkeeping
from tuner.values import number

if TYPE_CHECKING:
    from ray.tune.experiment import Trial
    from tensorboardX import SummaryWriter
    from tensorboardX.proto.summary_pb2 import Summary

    from tuner.value_types import Result, Scalar, Space, Value

log = logging.getLogger(__name__)

# A parameter's HParams domain: ("discrete", its values), ("int", (lowest, highest)) or ("real", (lower, upper)).
HParamDomain: TypeAlias = "tuple[str, Sequence[Scalar]]"


def import_tensorboardx_without_torch() -> None:
    """tensorboardX imports torch at its own import only to name a type in its annotations: 1.6 s and 450 MiB
    in a driver that writes scalars and has no other use for torch. So it is imported with torch hidden when
    nothing in the process has imported torch yet; a later ``import torch`` (a trainable's module, a notebook)
    works as usual, and tensorboardX imports torch itself where it needs it (an image given as a tensor)."""
    import sys

    if "tensorboardX" in sys.modules or "torch" in sys.modules:
        return
    sys.modules["torch"] = cast(ModuleType, None)  # Python's own way to make an import fail at once
    try:
        import tensorboardX  # noqa: F401
    except ImportError:
        pass  # Ray's callback says it is missing, as without tuner
    finally:
        if sys.modules.get("torch", ModuleType("torch")) is None:
            del sys.modules["torch"]


class TensorBoardLogger(TBXLoggerCallback):
    """Takes the place of Ray's TensorBoard logger (Tune adds its own only when none of its kind is given)."""

    def __init__(self, folder: str, params: Space, metric: str, mode: Mode, max_epochs: int) -> None:
        import_tensorboardx_without_torch()
        super().__init__()
        self.folder, self.metric, self.mode, self.max_epochs = folder, metric, mode, max_epochs
        self.domains = _domains(params)
        self.params = list(params)
        self.fates = FateFollower(folder)
        self._writers: dict[Trial, SummaryWriter] = {}
        self._last: dict[Trial, dict[str, float]] = {}
        self._best: dict[Trial, float] = {}

    def log_trial_start(self, trial: Trial) -> None:
        from tensorboardX import SummaryWriter

        if trial in self._writers:
            self._writers[trial].close()
        trial.init_local_path()
        self._writers[trial] = SummaryWriter(trial.local_path, flush_secs=30)
        self._last.setdefault(trial, {})

    def log_trial_result(self, iteration: int, trial: Trial, result: Result) -> None:
        if trial not in self._writers:
            self.log_trial_start(trial)
        epoch = int(number(result.get("training_iteration")) or 0)
        writer = self._writers[trial]
        for key, value in own_metrics(result).items():
            writer.add_scalar(key, value, global_step=epoch)
            self._last[trial][key] = value
        found = result.get(self.metric)
        if _real(found) and float(found) == float(found):
            best = self._best.get(trial)
            if best is None or better(float(found), best, self.mode):
                self._best[trial] = float(found)
        writer.flush()

    def on_experiment_end(self, trials: list[Trial], **info: object) -> None:
        """A run that ends with trials paused or running (a signal, a budget) keeps their last epochs. Two things
        lost them: tensorboardX's ``flush`` writes only what its writer thread has taken off its queue (``close``
        writes the queue out), and Tune copies a trial's files from the driver's staging folder to the storage
        for the last time before this hook, so the closed files are copied here."""
        while self._writers:
            trial, writer = self._writers.popitem()
            writer.close()
            _copy_events_to_storage(trial)

    def log_trial_end(self, trial: Trial, failed: bool = False) -> None:
        writer = self._writers.pop(trial, None)
        if writer is None:
            return
        last = self._last.pop(trial, {})
        best = self._best.pop(trial, None)
        epochs = int((trial.last_result or {}).get("training_iteration") or 0)
        text = self._fate(trial, epochs, failed)
        self._write_hparams(writer, trial, last, best, text)
        writer.add_text("fate", text, global_step=epochs)
        writer.close()

    def _fate(self, trial: Trial, epochs: int, failed: bool) -> str:
        """Why the trial ended, from its recorded decision. A logger never fails the sweep, and what it writes
        stays in the event file for good: when the decisions cannot be read now (the storage holding them is
        away past its timeout), the fate is not known (a trial a scheduler stopped would read as ended by its
        own loop, one the outage failed as errored), and it says so; the review reads the fate later."""
        try:
            decision = self.fates.decisions().get(trial.trial_id)
        except OSError as exc:
            log.warning("trial %s's fate in TensorBoard is not known: %s", trial.trial_id, exc)
            return FATE_UNKNOWN
        error = _last_error_line(trial) if failed else ""
        return fate("ERROR" if failed else "TERMINATED", epochs, self.max_epochs, error, decision)

    def _write_hparams(
        self, writer: SummaryWriter, trial: Trial, last: dict[str, float], best: float | None, text: str
    ) -> None:
        config = flatten(trial.config)  # a nested config's leaves by their full names
        values = {name: _hparam(config.get(name)) for name in self.params}
        values = {k: v for k, v in values.items() if v is not None}
        fate_kind = values["fate"] = UNKNOWN if text == FATE_UNKNOWN else kind(text)
        metrics = list(last)
        if best is not None:
            metrics.insert(0, f"best_{self.metric}")
            epoch = int((trial.last_result or {}).get("training_iteration") or 0)
            writer.add_scalar(f"best_{self.metric}", best, global_step=epoch)
        domains = {**self.domains, "fate": ("discrete", FATE_KINDS)}
        try:
            for summary in hparams_summaries(values, domains, metrics, trial.trial_id, fate_kind):
                writer.file_writer.add_summary(summary)
        except Exception as exc:  # a logger must never fail a trial
            log.warning("could not write HParams for trial %s: %s", trial.trial_id, exc)


UNKNOWN = "unknown"
FATE_KINDS = ["completed", "stopped early", "errored", "running", UNKNOWN]
FATE_UNKNOWN = "fate unknown: the storage could not be read; tuner results reads it later"


def hparams_summaries(
    values: Mapping[str, Scalar],
    domains: Mapping[str, HParamDomain],
    metrics: list[str],
    trial_id: str,
    fate_kind: str,
) -> list[Summary]:
    """The three summaries of one HParams session (experiment, session start, session end), built with
    TensorBoard's own hparams protos (tensorboardX's helper cannot mark values discrete) and handed to
    tensorboardX's writer as its own Summary type."""
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2
    from tensorboard.plugins.hparams import summary_v2 as hp
    from tensorboardX.proto.summary_pb2 import Summary

    def domain(spec: HParamDomain | None) -> hp.Domain | None:
        if spec is None:
            return None
        how, what = spec
        if how == "discrete":
            return hp.Discrete(what)
        return hp.IntInterval(*what) if how == "int" else hp.RealInterval(*what)

    hparams = [hp.HParam(name, domain(domains.get(name))) for name in values]
    experiment = hp.hparams_config_pb(hparams=hparams, metrics=[hp.Metric(tag) for tag in metrics])
    start = hp.hparams_pb({h: values[h.name] for h in hparams}, trial_id=trial_id)
    # HParams knows success, failure, running and unknown: a trial a scheduler stopped early is no success,
    # so it reads "unknown" there, and its "fate" column says "stopped early".
    status = {
        "completed": api_pb2.STATUS_SUCCESS,
        "errored": api_pb2.STATUS_FAILURE,
        "running": api_pb2.STATUS_RUNNING,
    }.get(fate_kind, api_pb2.STATUS_UNKNOWN)
    end_info = plugin_data_pb2.HParamsPluginData(
        session_end_info=plugin_data_pb2.SessionEndInfo(status=status)
    )
    end = summary_pb2.Summary()
    end.value.add(
        tag=metadata.SESSION_END_INFO_TAG,
        metadata=metadata.create_summary_metadata(end_info),
        tensor=metadata.NULL_TENSOR,
    )
    return [Summary.FromString(pb.SerializeToString()) for pb in (experiment, start, end)]


def _copy_events_to_storage(trial: Trial) -> None:
    """A trial's event files from the driver's staging folder to its folder in the storage (a local folder or a
    bucket), as Tune's own copy at a saved state does; a logger never fails the sweep."""
    import os

    from pyarrow import fs

    storage = trial.storage
    if storage is None:  # a trial never placed in an experiment
        return
    local, stored = trial.local_path, trial.path
    if not local or not stored or os.path.realpath(local) == os.path.realpath(stored):
        return
    try:
        for name in os.listdir(local):
            if name.startswith("events.out.tfevents."):
                fs.copy_files(
                    os.path.join(local, name),
                    f"{stored}/{name}",
                    source_filesystem=fs.LocalFileSystem(),
                    destination_filesystem=storage.storage_filesystem,
                )
    except OSError as exc:
        # in words ("the storage is full ..."), not pyarrow's "[Errno 28] Error writing bytes ..."
        why = refusal(str(exc)) or str(exc)
        log.warning("trial %s's last TensorBoard events stay in %s: %s", trial.trial_id, local, why)


def _last_error_line(trial: Trial) -> str:
    from tuner.experiment import last_line

    try:
        with open(trial.error_file, encoding="utf-8", errors="replace") as f:
            return last_line(f.read())
    except (OSError, TypeError, AttributeError):
        return ""


def own_metrics(result: Result) -> dict[str, float]:
    """What the trainable itself reported, numbers only (not Ray's bookkeeping, not the config, not an
    "epoch" counter, which is the step of every point already)."""
    return {
        key: float(value)
        for key, value in result.items()
        if key != "epoch" and not bookkeeping(key) and _real(value) and float(value) == float(value)
    }


def _real(value: object) -> TypeGuard[SupportsFloat]:
    """A real number as a trainable reports one: a Python number, or a numpy scalar (``np.float32`` and
    ``np.int64`` are not ``float`` or ``int``: their metrics were left out of TensorBoard); never a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _hparam(value: Value) -> Scalar:
    """HParams take numbers, strings and booleans; integers stay integers, floats show 4 significant digits
    (the exact value is in the trial's params.json)."""
    item = getattr(value, "item", None)  # a numpy scalar's
    if item is not None:
        value = item()
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, (bool, int, str)):
        return value
    return None if value is None else str(value)


def _domains(params: Space) -> dict[str, HParamDomain]:
    """Each parameter's HParams domain, so it has a type and sorts as one: a choice's values (filterable), a
    float's or an integer's interval, a ``sample_from`` that keeps returning a few values (probed as the
    search plan probes it) as those values."""
    from ray.tune.search.sample import Categorical, Float, Function, Integer

    from tuner.searchers.probe import probe_function

    out: dict[str, HParamDomain] = {}
    for name, value in params.items():
        values = None
        if isinstance(value, Categorical):
            values = list(value.categories)
        elif isinstance(value, Function):
            values, _ = probe_function(value, 0)
        elif isinstance(value, Integer):
            out[name] = ("int", (int(value.lower), int(value.upper) - 1))
        elif isinstance(value, Float):
            out[name] = ("real", (float(value.lower), float(value.upper)))
        if values:
            shown = [_hparam(v) for v in values]
            if all(v is not None for v in shown) and len({type(v) for v in shown}) == 1:
                out[name] = ("discrete", shown)
    return out
