"""Every Ray Tune behaviour tuner works around, in one place, each with the Ray version it was seen in.

tests/unit/test_ray_compat.py checks that each behaviour is still there (and fails loudly when an upgrade
changes it), so a Ray upgrade cannot silently break resume, the search plan or the terminal.

1. Stale statuses (Ray 2.60): Ray re-serialises a trial into its experiment state only when it marks the
   trial dirty. A trial that sync HyperBand paused and later stops without restarting it (no live actor)
   is never marked, so the saved state keeps calling a finished trial PAUSED. ``StatusRecorder`` writes
   the controller's statuses at each step into a file beside the experiment (tuner/storage.py's
   ``sidecar``); ``repair_saved_statuses`` writes the finished ones back into Ray's saved state.
2. Completion without a result (Ray 2.60): Tune completes a trial that HyperBand stopped while paused with
   ``result=None``; a model-based searcher then never learns that trial's value (BayesOpt waits forever for
   its random phase to end). ``LastResultOnCompletion`` hands the searcher the trial's last result.
3. A benign sync race (Ray 2.60): Ray saves searcher state to ``.<uuid>-tmp-…`` and renames it while the
   previous upload of the experiment folder may still list files; that upload fails on the vanished
   name, and the next sync (forced at the end of every sweep) copies it anyway. Its traceback is hidden.
4. Terminal noise (Ray 2.60): every local start warns that token authentication is on and how to turn it
   off; tuner keeps it on, so the line (an invitation to weaken security) is dropped. Each failed trial's
   traceback is logged whole, Ray's frames first, once per trial; tuner reports the user's own frames
   once at the end, with the error file inside the experiment folder. On a stop signal Ray advises
   ``Tuner.restore(...)``; tuner prints its own ``tuner resume`` command instead. A trial that a budget or a
   signal ended before its first report makes Ray warn at the end that it found no results for it; that
   warning is dropped (any other trial it lists keeps it).
5. The tutorial's API (Ray 2.60): "Hyperparameter tuning with Ray Tune" writes its trainable with
   ``ray.train.report``, ``ray.train.get_checkpoint`` and ``ray.train.Checkpoint``, which Ray 2.60
   refuses inside a Tune function, and older code reports with keywords (``tune.report(loss=...)``).
   ``tutorial_api`` runs such a trainable with those names bound to ``ray.tune``'s equivalents.
6. A restored sweep cannot grow (Ray 2.60): ``Tuner.restore`` takes the number of trials from the saved
   search state. ``extend_saved_search`` raises it there (the searcher's own state, with everything its
   model learnt, is untouched), so ``tuner resume --num-samples N`` runs the extra trials. Sweeps over Tune's
   variant generator (grids, PBT) keep their planned variants and cannot grow. A sweep that its budget or a
   stall ended stopped its open trials without telling the searcher, so the saved concurrency limit
   (``ConcurrencyLimiter.live_trials``) still counts them as running and would propose nothing; the trials
   that finished are taken out of it.
7. Worker log lines (Ray 2.60): with a ``LoggingConfig`` (how tuner keeps Ray's INFO chatter out of the
   terminal), a worker's log line reaches the driver without the ``(pid=…)`` prefix but with eight
   context ids appended (job, worker, node, actor, task…). ``plain_worker_logs`` formats the trainable's
   warnings in the worker as ``(trial ID) WARNING: message``.
8. Unnamed trial folders (Ray 2.60): a trial names its folder only when Tune schedules an actor for it,
   yet CLIReporter's error table reads every trial's error file, folder included; a pending trial not yet
   scheduled (many wait under HyperBand on a busy machine) makes it raise "Should not access
   `trial_driver_staging_path` without setting `trial_dir_name`", which ends the whole sweep.
   ``name_trial_folders`` names them first, as Tune's scheduling would (the same call, which is idempotent).
9. Ending a hung trial (Ray 2.60): Tune can stop a trial only by asking its actor, which a trial blocked in
   a data loader or a collective never answers. ``end_trial_process`` kills the trial's actor (its handle
   is ``trial.temporary_state.ray_actor``); Tune then handles the trial as failed, retries included.
10. A resumed sweep's stopper (Ray 2.60): Tune saves its stopper inside the experiment state and a restored
   run uses that copy, not the run config's, so a stopper holding the callback that decides (a stall, a
   spent budget) would consult a dead copy. Such callbacks register the live instance with
   ``register_live``; stoppers look it up with ``live``, by the experiment they belong to.
11. A worker's crash, forwarded (Ray 2.60): a trial process killed by a signal prints the C++ core's crash
   report (``*** SIGSEGV received at time=…``, ``PC: @ 0x…``, its stack addresses, and the same again through
   ``logging.cc``), the raylet adds a paragraph that "a worker died or was killed" (guessing at OOM), and a
   worker stopped at shutdown can print Python's "Exception ignored in" traceback of Ray's own
   ``sigterm_handler``. The driver's log forwarder (the "ray_print_logs" handler of
   ``global_worker_stdstream_dispatcher``) and the raylet's error listener (through ``print_to_stdstream``)
   print them all. tuner names each death itself (tuner/launch/crashes.py,
   with the trial's Python stack in its crash.txt), so ``quiet_worker_crashes`` drops those lines from the
   forwarder and passes every other line on.
12. The older ``sample_from(lambda spec: spec.config.x)`` form (Ray 2.60): Ray warns that it is deprecated
   at every draw. The search plan draws such a function a thousand times per branch to probe it, so
   ``spec_form_warnings_off`` holds that one logger back while tuner probes (the sweep's own draws still
   warn, once per trial, as Ray decided).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ray.tune import Callback

FINISHED = ("TERMINATED", "ERROR")
UNFINISHED = ("PENDING", "RUNNING", "PAUSED")
STATUS_FILE = ".tuner-statuses.json"


# --- 1. stale statuses ------------------------------------------------------------------------------


def status_file(folder: str) -> str:
    from tuner.storage import sidecar

    return str(sidecar(folder, STATUS_FILE))


class StatusRecorder(Callback):
    """Writes every trial's status at the end of each controller step to ``path`` (when it changed).

    After Ctrl-C that is the state the final checkpoint describes, before Ray's clean-up marks running
    trials terminated. A file, not this object, carries it: ``tuner resume`` runs the copy Ray unpickles
    from tuner.pkl, not an object the driver holds.
    """

    def __init__(self, folder: str) -> None:
        self.path = status_file(folder)
        self._last: dict[str, str] | None = None

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        statuses = {t.trial_id: t.status for t in trials}
        if statuses != self._last:
            self._last = statuses
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.path, json.dumps(statuses))


def forget_last_step(folder: str) -> None:
    """Before a run: what an earlier run recorded must not read as this one's finish."""
    Path(status_file(folder)).unlink(missing_ok=True)


def last_step(folder: str) -> dict[str, str] | None:
    """Statuses at the sweep's last step, or None when no recorder ran for this folder."""
    try:
        return json.loads(Path(status_file(folder)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def repair_saved_statuses(folder: str | Path, statuses: dict[str, str]) -> list[str]:
    """Mark trials finished in Ray's saved experiment state where the sweep finished them.

    Only moves a trial from an unfinished status to the finished one it really reached; anything else
    in the file is left as it was. ``folder`` may be a storage URI. Returns the ids it changed.
    """
    from tuner import storage
    from tuner.review.ray_state import latest_state_name, read_state

    name = latest_state_name(folder)
    if name is None:
        return []
    state = read_state(folder, name)
    changed = []
    for entry in state.get("trial_data", []):
        trial = json.loads(entry[0])
        real = statuses.get(trial.get("trial_id"))
        if real in FINISHED and trial.get("status") in UNFINISHED:
            trial["status"] = real
            entry[0] = json.dumps(trial, indent=2)
            changed.append(trial["trial_id"])
    if changed:
        local = storage.local_path(str(folder))
        text = json.dumps(state)
        if local is None:  # an object store replaces whole objects on write
            storage.write_text(folder, name, text)
        else:
            write_atomically(str(Path(local) / name), text)
    return changed


def write_atomically(path: str, text: str) -> None:
    """Swap the file in one step: a reader (or a crash) never meets half of it."""
    target = Path(path)
    scratch = target.with_name(f".{target.name}.partial")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, target)


# --- 2. completion without a result -----------------------------------------------------------------


class LastResultOnCompletion:
    """Mixin for a searcher: remembers each trial's last result and completes with it when Tune gives none."""

    def __init__(self) -> None:
        self.last_results: dict[str, dict] = {}

    def remember(self, trial_id: str, result: dict) -> None:
        self.last_results[trial_id] = result

    def completed(self, trial_id: str, result: dict | None, error: bool) -> dict | None:
        last = self.last_results.pop(trial_id, None)
        return last if result is None and not error else result


# --- 3. a benign sync race --------------------------------------------------------------------------


class _SkipRenamedScratchFileSync(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Saving experiment state to storage"):
            return True
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, FileNotFoundError) and "-tmp-" in str(error))


SYNC_LOGGER = "ray.tune.execution.experiment_state"


def quiet_benign_sync_races() -> None:
    """Install the filter once on the logger Ray reports experiment-state syncs through."""
    _install(SYNC_LOGGER, _SkipRenamedScratchFileSync())


def _install(logger_name: str, flt: logging.Filter) -> None:
    logger = logging.getLogger(logger_name)
    if not any(type(f) is type(flt) for f in logger.filters):
        logger.addFilter(flt)


# --- 4. terminal noise ---------------------------------------------------------------------------------

TOKEN_LOGGER = "ray._private.authentication.authentication_token_setup"
TOKEN_WARNING = "Token authentication is enabled for this Ray cluster"
TRIAL_LOGGER = "ray.tune.execution.tune_controller"
TRIAL_FAILURE = "Trial task failed for trial"
SWEEP_LOGGER = "ray.tune.tune"
SWEEP_FAILURES = "Trials did not complete"
# Ray's words on a stop signal, which tuner says itself (tuner/launch/signals.py) with the tuner resume command.
INTERRUPT_NOTICES = ("Stop signal received", "Experiment has been interrupted")
# At the end of fit Ray reads every trial's results again; a trial that a budget or a stop signal ended
# before its first report has none, and Ray warns about it. tuner reads results itself (tuner/review/experiment.py).
ANALYSIS_LOGGER = "ray.tune.analysis.experiment_analysis"
NO_METRICS = "Failed to fetch metrics for"
NEVER_REPORTED = "both result.json and progress.csv were not found"


class _DropMessage(logging.Filter):
    def __init__(self, prefix: str | tuple[str, ...]) -> None:
        super().__init__()
        self.prefix = prefix

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(self.prefix)


class _DropTokenWarning(_DropMessage):
    def __init__(self) -> None:
        super().__init__(TOKEN_WARNING)


class _DropTrialTracebacks(_DropMessage):
    def __init__(self) -> None:
        super().__init__(TRIAL_FAILURE)


class _DropFailureList(_DropMessage):
    def __init__(self) -> None:
        super().__init__(SWEEP_FAILURES)


class _DropInterruptNotices(_DropMessage):
    def __init__(self) -> None:
        super().__init__(INTERRUPT_NOTICES)  # type: ignore[arg-type]


class _DropNeverReported(logging.Filter):
    """Ray's warning about trials with no results, when every one it lists simply never reported."""

    def filter(self, record: logging.LogRecord) -> bool:
        lines = record.getMessage().splitlines()
        if not lines or not lines[0].startswith(NO_METRICS):
            return True
        return not all(NEVER_REPORTED in line for line in lines[1:])


def quiet_terminal() -> None:
    """Drop Ray's token-auth opt-out advice, its per-trial failure tracebacks, its own stop-signal notices
    and its warning about trials that never reported (all logged in the driver)."""
    _install(TOKEN_LOGGER, _DropTokenWarning())
    _install(TRIAL_LOGGER, _DropTrialTracebacks())
    _install(SWEEP_LOGGER, _DropFailureList())
    _install(SWEEP_LOGGER, _DropInterruptNotices())
    _install(ANALYSIS_LOGGER, _DropNeverReported())


# --- 5. the tutorial's API ------------------------------------------------------------------------------

_TRAIN_API = re.compile(r"\btrain\.(report|get_checkpoint|get_context|Checkpoint)\b|from ray\.train import")
_KEYWORD_REPORT = re.compile(r"\breport\(\s*[A-Za-z_]\w*\s*=")


def old_api_notice(trainable: Callable[..., Any]) -> str | None:
    """What a trainable uses of the older APIs, as the one-line notice the sweep prints (None if nothing)."""
    try:
        source = inspect.getsource(inspect.unwrap(trainable))
    except (OSError, TypeError):
        return None
    used = []
    if _TRAIN_API.search(source):
        used.append("the ray.train API (train.report, train.get_checkpoint, train.Checkpoint)")
    if _KEYWORD_REPORT.search(source):
        used.append("report(name=value) keywords")
    if not used:
        return None
    return (f"note: the trainable uses {' and '.join(used)}, which Ray 2.60 refuses in a sweep; tuner runs it "
            "through ray.tune's equivalents. In new code: from ray import tune; tune.report({...}, "
            "checkpoint=tune.Checkpoint.from_directory(...)); tune.get_checkpoint()")  # fmt: skip


def tutorial_api(trainable: Callable[..., Any]) -> Callable[..., Any]:
    """``trainable`` with ``ray.train.report``/``get_checkpoint``/``get_context``/``Checkpoint`` and keyword
    reports working as Ray Tune's own, however the trainable imported them, for the length of each call."""

    @functools.wraps(trainable)
    def run(config: dict, **kwargs: Any) -> Any:
        with _tune_api_for(inspect.unwrap(trainable)):
            return trainable(config, **kwargs)

    return run


@contextlib.contextmanager
def _tune_api_for(function: Callable[..., Any]) -> Iterator[None]:
    import ray.train
    from ray import tune

    def report(metrics: dict | None = None, *, checkpoint: Any = None, **more: Any) -> None:
        extra = {k: v for k, v in more.items() if k not in ("checkpoint_dir_name", "checkpoint_upload_mode",
                                                             "delete_local_checkpoint_after_upload",
                                                             "checkpoint_upload_fn", "validation")}  # fmt: skip
        if checkpoint is not None and not isinstance(checkpoint, tune.Checkpoint):
            checkpoint = tune.Checkpoint(path=checkpoint.path, filesystem=checkpoint.filesystem)
        original_tune_report({**(metrics or {}), **extra}, checkpoint=checkpoint)

    original_tune_report = tune.report
    swaps = {ray.train.report: report, ray.train.get_checkpoint: tune.get_checkpoint,
             ray.train.Checkpoint: tune.Checkpoint, tune.report: report}  # fmt: skip
    if hasattr(ray.train, "get_context") and hasattr(tune, "get_context"):
        swaps[ray.train.get_context] = tune.get_context
    targets = [(ray.train, name) for name in ("report", "get_checkpoint", "get_context", "Checkpoint")]
    targets += [(tune, "report")]
    globals_ = function.__globals__
    targets += [(globals_, name) for name, value in list(globals_.items()) if _swappable(value, swaps)]
    saved = [(owner, name, _get(owner, name)) for owner, name in targets]
    try:
        for owner, name, value in saved:
            if _swappable(value, swaps):
                _set(owner, name, swaps[value])
        yield
    finally:
        for owner, name, value in saved:
            _set(owner, name, value)


def _swappable(value: Any, swaps: dict) -> bool:
    try:
        return value in swaps
    except TypeError:  # unhashable
        return False


def _get(owner: Any, name: str) -> Any:
    return owner[name] if isinstance(owner, dict) else getattr(owner, name, None)


def _set(owner: Any, name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)


# --- 6. growing a finished sweep ------------------------------------------------------------------------

SEARCH_STATE_PREFIX = "search_gen_state-"
VARIANT_STATE_PREFIX = "basic-variant-state-"


def can_grow(folder: str) -> bool:
    """Whether the sweep's trials come from a searcher (which can propose more) rather than planned variants."""
    from tuner import storage

    return bool(storage.list_names(folder, SEARCH_STATE_PREFIX)) and not storage.list_names(folder, VARIANT_STATE_PREFIX)


def extend_saved_search(folder: str, total: int, finished: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Let the saved search propose trials until ``total`` exist (it was finished at its old total); the
    ``finished`` trial ids no longer count against its concurrency limit."""
    import io

    from ray import cloudpickle

    from tuner import storage

    names = storage.list_names(folder, SEARCH_STATE_PREFIX)
    if not names:
        raise RuntimeError(f"{folder} has no saved search state")
    name = names[-1]
    local = storage.local_path(folder)
    if local is not None:
        raw = Path(local, name).read_bytes()
    else:
        import pyarrow.fs

        fs, path = pyarrow.fs.FileSystem.from_uri(storage.join(folder, name))
        with fs.open_input_stream(path) as stream:
            raw = stream.read()
    state = cloudpickle.load(io.BytesIO(raw))
    state["total_samples"] = total
    state["finished"] = False
    for key, part in state.items():
        if key.startswith("name:ConcurrencyLimiter") and isinstance(part, dict) and "live_trials" in part:
            still = set(part["live_trials"]) - set(finished)
            part["num_unfinished_live_trials"] = max(0, part.get("num_unfinished_live_trials", 0)
                                                     - (len(part["live_trials"]) - len(still)))  # fmt: skip
            part["live_trials"] = still
    data = cloudpickle.dumps(state)
    if local is not None:
        scratch = Path(local, f".{name}.partial")
        scratch.write_bytes(data)
        os.replace(scratch, Path(local, name))
    else:
        import pyarrow.fs

        fs, path = pyarrow.fs.FileSystem.from_uri(storage.join(folder, name))
        with fs.open_output_stream(path) as stream:
            stream.write(data)


# --- 7. worker log lines ----------------------------------------------------------------------------------


def plain_worker_logs(trainable: Callable[..., Any]) -> Callable[..., Any]:
    """``trainable`` whose log lines name the trial instead of Ray's context ids (set again per trial, as a
    reused actor runs several)."""

    @functools.wraps(trainable)
    def run(config: dict, **kwargs: Any) -> Any:
        from ray import tune

        with contextlib.suppress(Exception):  # outside a Tune trial (a direct call): logging left alone
            plain_formatting(f"(trial {tune.get_context().get_trial_id()}) %(levelname)s: %(message)s")
        return trainable(config, **kwargs)

    return run


def plain_formatting(fmt: str) -> None:
    """Replace Ray's context-id formatter (ray/_common/formatters.py) on the root logger's handlers."""
    for handler in logging.getLogger().handlers:
        kind = type(handler.formatter)
        if (kind.__name__ == "TextFormatter" and kind.__module__.startswith("ray.")) or hasattr(handler, "_plain"):
            handler.setFormatter(logging.Formatter(fmt))
            handler._plain = True  # type: ignore[attr-defined]


# --- 8. unnamed trial folders ------------------------------------------------------------------------------


def name_trial_folders(trials: list) -> None:
    """Give every trial its folder name (and folder) before anything reads a trial's paths."""
    for trial in trials:
        if not trial.relative_logdir:
            trial.init_local_path()


# --- 9. ending a hung trial ---------------------------------------------------------------------------------


def end_trial_process(trial: Any) -> bool:
    """Kill the process a trial runs in; False when it has none (not started, or already gone)."""
    import ray

    actor = getattr(getattr(trial, "temporary_state", None), "ray_actor", None)
    if actor is None:
        return False
    try:
        ray.kill(actor, no_restart=True)
    except Exception:  # already dead: Tune is handling it
        return False
    return True


# --- 10. a resumed sweep's stopper ---------------------------------------------------------------------------

_LIVE: dict[str, Any] = {}


def register_live(key: str, callback: Any) -> None:
    """This process's deciding instance for ``key`` (e.g. a budget watch and its experiment)."""
    _LIVE[key] = callback


def live(key: str, fallback: Any) -> Any:
    """The instance registered for ``key`` in this process, else ``fallback``."""
    return _LIVE.get(key, fallback)


# --- 11. a worker's crash, forwarded --------------------------------------------------------------------------

FORWARDER = "ray_print_logs"
_CRASH_LINE = re.compile(
    r"(\*\*\* SIG[A-Z]+ received at time=|PC: @ +0x[0-9a-f]+|(^|logging\.cc:\d+:)\s*@ +0x[0-9a-f]+ |"
    r"A worker died or was killed while executing a task by an unexpected system error)"
)


def crash_noise(lines: list[str]) -> list[str]:
    """``lines`` without the crash report of a signal-killed worker, the raylet's guess about it, and the
    traceback of Ray's SIGTERM handler in a worker stopped at shutdown."""
    kept, skipping = [], False
    for line in lines:
        if line.startswith("Exception ignored in"):
            skipping = True  # held until we know whose traceback it is
            held = [line]
            continue
        if skipping:
            held.append(line)
            if line.startswith(("SystemExit", "KeyboardInterrupt")) or not line.startswith((" ", "Traceback")):
                skipping = False
                if not any("sigterm_handler" in h for h in held):
                    kept.extend(held)
            continue
        if not _CRASH_LINE.search(line):
            kept.append(line)
    if skipping and not any("sigterm_handler" in h for h in held):
        kept.extend(held)
    return kept


def _filtering(printer: Callable[..., Any]) -> Callable[..., Any]:
    def filtered(data: dict, *args: Any, **kwargs: Any) -> None:
        lines = crash_noise(list(data.get("lines") or []))
        if lines:
            printer({**data, "lines": lines}, *args, **kwargs)

    filtered._tuner_filtered = True  # type: ignore[attr-defined]
    return filtered


def quiet_worker_crashes() -> bool:
    """Filter the driver's log forwarder and its printer of the raylet's error messages (after ``ray.init``);
    False when Ray forwards no logs here."""
    import ray._private.worker as worker
    from ray._private.ray_logging import global_worker_stdstream_dispatcher as dispatcher

    if not getattr(worker.print_to_stdstream, "_tuner_filtered", False):
        worker.print_to_stdstream = _filtering(worker.print_to_stdstream)  # the raylet's messages go through it
    with dispatcher._lock:
        for i, (name, handler) in enumerate(dispatcher.handlers):
            if name != FORWARDER or getattr(handler, "_tuner_filtered", False):
                continue

            dispatcher.handlers[i] = (name, _filtering(handler))
            return True
    return False


# --- 12. the older sample_from form ----------------------------------------------------------------------

SAMPLE_LOGGER = "ray.tune.search.sample"


@contextlib.contextmanager
def spec_form_warnings_off() -> Iterator[None]:
    logger = logging.getLogger(SAMPLE_LOGGER)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
