"""SIGTERM and SIGHUP stop a sweep as Ctrl-C does: in order, resumably, with the resume command printed.

Slurm, Kubernetes, ``timeout``, spot preemption and ``ray job stop`` end a process with SIGTERM; a closed
terminal sends SIGHUP. Ray's own handler (installed while ``Tuner.fit`` runs) turns only SIGINT and
SIGUSR1 into an orderly stop, and Ray's core installs a C-level handler for SIGTERM that prints a crash
report and exits 1. ``OrderlyStop`` takes SIGINT, SIGTERM and SIGHUP for the length of a run (Ray is told
to leave SIGINT alone, so every signal is counted here): the first is handed to Ray's handler, which
``fit`` keeps on SIGUSR1, between two steps of the sweep when no trial's checkpoint is in flight (trials keep
their last checkpoint, the state is saved, and a resumed trial goes on after its last reported epoch); the
second, or one that comes before any trial runs, ends at once by raising ``Stopped`` (the saved state stays
resumable). The CLI exits 128 + the signal's number: 143 for SIGTERM, 129 for SIGHUP, 130 for SIGINT.

A SIGTERM or SIGHUP sent to the whole process group (plain ``timeout``, ``kill -- -PGID``, a closed terminal)
also reaches the local Ray this process started, whose GCS and raylet then end at once; Ray's core would wait
a minute for its GCS and exit 1 with no word of the sweep. When the signal's stop finds them gone, the sweep
ends there, saying so with the resume command (the state saved last stays resumable), and exits as above.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, TypeAlias

from tuner.launch.guards.run_start import RunStartCallback
from tuner.ray_compat.orderly_stop import RAY_SIGINT_OFF, RAY_STOP, rays_stop, stop_in_order

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

log = logging.getLogger(__name__)
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
STOP_WITHIN_S = 10.0  # an asked-for stop waits for a step without a checkpoint in flight at most this long
# a local Ray's processes that this one starts; without them the sweep cannot go on
RAY_SERVICES = ("gcs_server", "raylet")
SERVICES_WATCH_S = 15.0  # after a signal, how long the stop watches for them to end with it

SignalFunction: TypeAlias = Callable[[int, FrameType | None], object]
# what ``signal.getsignal`` answers: a function, SIG_DFL or SIG_IGN, or None for a handler not set from Python
SignalHandler: TypeAlias = SignalFunction | int | signal.Handlers | None


class Stopped(KeyboardInterrupt):
    """A signal ended the sweep at once (the second one, or one before any trial ran). A KeyboardInterrupt,
    as Ctrl-C's is, so no ``except Exception`` on the way out swallows it."""

    def __init__(self, signum: int, message: str) -> None:
        super().__init__(message)
        self.exit_code = 128 + signum


_active: OrderlyStop | None = None  # the stop of the sweep running in this process, for guards that end it


def request_stop(reason: str) -> bool:
    """End the running sweep as a first signal does (in order, resumably), for ``reason`` (a full disk): True
    when it was asked, False outside a sweep's ``fit``."""
    return _active is not None and _active.stop_for(reason)


class OrderlyStop:
    """Within ``with``: SIGTERM/SIGHUP act as Ctrl-C; a second signal, or one outside ``fit``, ends at once.

    ``received`` is the first signal's number (None when none came). ``resume_hint`` ends the message of
    an immediate stop: the experiment's resume command, once ``saved`` (a stop before the experiment held its
    settings says there is nothing to resume; the sweep sets it, so the handler reads no storage).
    """

    def __init__(
        self, resume_hint: str = "", saved: bool = True, on_exit: Callable[[], None] | None = None
    ) -> None:
        self.resume_hint = resume_hint
        self.saved = saved
        self.on_exit = on_exit  # what to let go of before ending the process at once (the experiment's claim)
        self.received: int | None = None
        self.reason: str | None = None  # why the sweep asked itself to stop (``stop_for``), not a signal
        self.at_step_ends = False  # a StepEndStop runs in this sweep: stops are handed to Ray between steps
        self._asked: float | None = None  # when a stop was asked for that Ray has not been told of yet
        self._saved: dict[int, SignalHandler] = {}
        self._services: list[int] = []  # the local Ray's GCS and raylet, when this process started them
        self._run_over = False  # Tune's run has returned: Ray's processes end on tuner's own way out

    def __enter__(self) -> OrderlyStop:
        global _active
        _active = self
        if threading.current_thread() is not threading.main_thread():
            return self  # only the main thread may handle signals (a notebook's worker thread, say)
        self._env = os.environ.get(RAY_SIGINT_OFF)
        os.environ[RAY_SIGINT_OFF] = "1"
        for signum in (*HANDLED, RAY_STOP):
            self._saved[signum] = signal.getsignal(signum)
            signal.signal(signum, self._handle)
        return self

    def reinstall(self) -> None:
        """Take the signals back after Ray's start, whose core installs its own SIGTERM handler; note the
        local Ray's own processes, if this process started them."""
        for signum in self._saved:
            signal.signal(signum, self._handle)
        self._services = _local_ray_services()

    def __exit__(self, *exc: object) -> None:
        global _active
        if _active is self:
            _active = None
        for signum, previous in self._saved.items():
            # A handler Python did not install (Ray's C-level one) reads back as None: the default then.
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        if self._saved:
            if self._env is None:
                os.environ.pop(RAY_SIGINT_OFF, None)
            else:
                os.environ[RAY_SIGINT_OFF] = self._env
        self._saved.clear()

    def run_ended(self) -> None:
        """Tune's run has returned: from here Ray's processes end because tuner ends them, not a signal."""
        self._run_over = True

    def stop_for(self, reason: str) -> bool:
        """Stop the sweep in order, as the first signal would, for ``reason``; False when Ray's orderly stop is not
        in place (before ``fit``, or off the main thread) or the sweep is stopping already."""
        if self.received is not None or self.reason is not None or not self._ray_stop():
            return False
        self.reason = reason
        log.warning("%s: stopping the sweep; trials keep their last checkpoint", reason)
        self._ask_ray()
        return True

    def at_step_end(self, trials: list[Trial]) -> None:
        """Hand an asked-for stop to Ray at the end of a step in which no trial's checkpoint is on its way (Tune
        takes a reported checkpoint a step after its result: a stop between them would run that epoch again
        on resume), or once ``STOP_WITHIN_S`` has passed whatever the trials do."""
        import time

        if self._asked is None:
            return
        saving = any(getattr(t, "is_saving", False) for t in trials)
        if saving and time.monotonic() - self._asked < STOP_WITHIN_S:
            return
        self._asked = None
        ray_stop = self._ray_stop()
        if ray_stop is not None:
            stop_in_order(ray_stop)

    def _ray_stop(self) -> SignalFunction | None:
        return rays_stop(self._handle)

    def _ask_ray(self) -> None:
        """Ray's orderly stop: at the next step's end where a StepEndStop runs this sweep, else now."""
        import time

        if self.at_step_ends:
            self._asked = time.monotonic()
            return
        ray_stop = self._ray_stop()
        if ray_stop is not None:
            stop_in_order(ray_stop)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.received is None and self._ray_stop() is not None:
            self.received = signum
            log.warning(
                "%s received: stopping the sweep; trials keep their last checkpoint (a second signal "
                "ends at once)",
                name if signum != signal.SIGINT else "Ctrl-C",
            )
            if self.reason is None:  # else a stop is on its way already (a full disk): the signal joins it
                self._ask_ray()
            if self._services and not self._run_over:
                threading.Thread(target=self._end_if_ray_ends, args=(signum,), daemon=True).start()
            return
        self.received = self.received or signum
        raise self.at_once(signum)

    def at_once(self, signum: int) -> Stopped:
        """The end a signal makes at once, with the resume command where there is something to resume."""
        hint = f"; {self.resume_hint}" if self.resume_hint else ""
        if not self.saved:
            hint = "; nothing was saved yet: run the sweep again"
        return Stopped(signum, f"{signal.Signals(signum).name} received: stopped at once{hint}")

    @contextlib.contextmanager
    def through_ray_start(self) -> Iterator[None]:
        """Ray's start puts in a SIGTERM handler of its own that exits with the signal's number (15) and no
        word; a SIGTERM in those seconds ends the sweep as any immediate stop does."""
        try:
            yield
        except SystemExit as exc:
            if exc.code != signal.SIGTERM:
                raise
            self.received = self.received or signal.SIGTERM
            raise self.at_once(signal.SIGTERM) from None

    def ended_with_ray(self) -> Stopped:
        """The end of a sweep whose signal (sent to the whole process group) ended the local Ray too: Ray's
        failure that follows is the signal's doing, not the sweep's."""
        assert self.received is not None
        hint = f"; {self.resume_hint}" if self.resume_hint else ""
        return Stopped(self.received, f"{signal.Signals(self.received).name} received: it stopped the local Ray of "
                       f"this sweep too (it was sent to every process of the group); the sweep ended with its last "
                       f"saved state{hint}")  # fmt: skip

    def _end_if_ray_ends(self, signum: int) -> None:
        """Watch the local Ray's processes for a while after a signal: when the signal ended them too, end here."""
        import time

        deadline = time.monotonic() + SERVICES_WATCH_S
        while time.monotonic() < deadline and not self._run_over:
            if any(_ended(pid) for pid in self._services):
                self._exit_with_ray(signum)
            time.sleep(0.2)

    def _exit_with_ray(self, signum: int) -> None:
        """End the process now (Ray's core would wait a minute for its GCS, then exit 1), the experiment's claim
        let go first: its trials ended with the group, so ``tuner resume`` finds it free, not left behind."""
        os.write(2, f"tuner: {self.ended_with_ray()}\n".encode())
        if self.on_exit is not None:
            with contextlib.suppress(Exception):
                self.on_exit()
        os._exit(128 + signum)


def _local_ray_services() -> list[int]:
    """The process ids of the GCS and raylet this process started (a local Ray), read from Linux's /proc; none
    on a cluster started elsewhere, or where /proc cannot tell."""
    me, found = os.getpid(), []
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []
    for entry in entries:
        stat = _stat(int(entry))
        if stat is not None and stat[1] == me and stat[2] in RAY_SERVICES:
            found.append(int(entry))
    return found


def _stat(pid: int) -> tuple[str, int, str] | None:
    """A process's state letter, parent and name from /proc (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            text = stream.read()
    except OSError:
        return None
    name, rest = text[text.find("(") + 1 : text.rfind(")")], text[text.rfind(")") + 2 :].split()
    return rest[0], int(rest[1]), name


def _ended(pid: int) -> bool:
    stat = _stat(pid)
    return stat is None or stat[0] in ("Z", "X")  # gone, or a zombie not waited for yet


class StepEndStop(RunStartCallback):
    """Lets this run's stops (a signal, a full disk) land between steps: see ``OrderlyStop.at_step_end``. Runs
    without it (experiments saved before it) stop at once, as before."""

    def at_run_start(self) -> None:
        if _active is not None:
            _active.at_step_ends = True

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        if _active is not None:
            _active.at_step_end(trials)
