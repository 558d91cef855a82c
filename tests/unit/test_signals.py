"""A stop signal outside a running fit ends at once with 128 + its number, and the handlers are put back."""

from __future__ import annotations

import os
import signal

import pytest

from tuner.launch.guards.signals import OrderlyStop, Stopped


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_signal_before_any_trial_ends_at_once_with_the_resume_hint(signum, code):
    before = signal.getsignal(signum)
    with pytest.raises(Stopped) as caught:
        with OrderlyStop("continue with: tuner resume EXP") as stop:
            os.kill(os.getpid(), signum)
    assert caught.value.exit_code == code and stop.received == signum
    assert str(caught.value) == f"{signal.Signals(signum).name} received: stopped at once; continue with: tuner resume EXP"
    assert signal.getsignal(signum) is before


def test_the_first_signal_inside_fit_goes_to_rays_orderly_stop():
    calls = []
    with OrderlyStop() as stop:
        signal.signal(signal.SIGUSR1, lambda s, f: calls.append(s))  # what Tune.fit installs
        os.kill(os.getpid(), signal.SIGTERM)
        assert calls == [signal.SIGUSR1] and stop.received == signal.SIGTERM
        with pytest.raises(Stopped):  # the second one does not wait
            os.kill(os.getpid(), signal.SIGTERM)


class _RayFailsAfterTheSignal:
    """A Tuner whose fit fails as Ray's does when the group's signal ended its GCS before the watch saw it."""

    def fit(self):
        raise RuntimeError("Failed to get the object: the owner of it died")


def test_ray_failing_after_a_signal_ends_as_the_signal_does_not_as_a_failure(tmp_path):
    from tuner.launch.runner import fit

    stop = OrderlyStop(f"continue with: tuner resume {tmp_path}")
    stop.received = signal.SIGTERM
    with pytest.raises(Stopped) as caught:
        fit(_RayFailsAfterTheSignal(), None, str(tmp_path), stop=stop)
    assert caught.value.exit_code == 143
    assert str(caught.value).startswith("SIGTERM received: it stopped the local Ray of this sweep too")
    assert str(caught.value).endswith(f"continue with: tuner resume {tmp_path}")
    stop.received = None  # without a signal the same failure is the sweep's own
    with pytest.raises(Exception, match="the sweep failed: Failed to get the object"):
        fit(_RayFailsAfterTheSignal(), None, str(tmp_path), stop=stop)


def test_a_sigterm_while_ray_starts_ends_as_an_immediate_stop_not_with_exit_code_15(tmp_path):
    """Ray's start sets a SIGTERM handler that exits 15 without a word; a preemption in those seconds read as an
    unexplained exit 15. And a stop before the experiment held its settings named a resume that could not run."""
    import signal

    from tuner.launch.guards.signals import OrderlyStop, Stopped

    folder = tmp_path / "exp"
    stop = OrderlyStop(f"continue with: tuner resume {folder}", saved=False)
    with pytest.raises(Stopped) as ended, stop.through_ray_start():
        raise SystemExit(signal.SIGTERM)  # what Ray's handler does
    assert ended.value.exit_code == 143
    assert str(ended.value) == "SIGTERM received: stopped at once; nothing was saved yet: run the sweep again"
    stop.saved = True  # the sweep saved its settings
    assert str(stop.at_once(signal.SIGINT)) == f"SIGINT received: stopped at once; continue with: tuner resume {folder}"
    with pytest.raises(SystemExit), stop.through_ray_start():
        raise SystemExit(1)  # any other exit passes


def test_a_signal_that_ended_the_local_ray_too_lets_the_experiments_claim_go_before_the_process_ends(tmp_path, monkeypatch):
    """The group's signal ended the trials with Ray: the resume found the experiment 'left claimed by pid ...,
    which is no longer running' though the stop had been told."""
    from tuner.claim import claimed

    ended: list[int] = []

    def exit_now(code):
        ended.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", exit_now)
    folder = tmp_path / "exp"
    folder.mkdir()
    with claimed(str(folder), "tuner sweep") as claim:
        stop = OrderlyStop(f"continue with: tuner resume {folder}", on_exit=claim.release)
        stop.received = signal.SIGTERM
        held = list(folder.iterdir())
        with pytest.raises(SystemExit):
            stop._exit_with_ray(signal.SIGTERM)
        assert held and not list(folder.iterdir()) and ended == [143]  # the claim's file is gone, then the exit
