"""A pause keeps every epoch only where the trainable can be continued from it (tuner/schedulers/pausing.py)."""

from __future__ import annotations

import logging

from ray import tune
from ray.tune.experiment import Trial

from tuner.schedulers import pausing


def _every_third_epoch(config):
    """A function trainable: what it reports with a checkpoint is all a pause keeps."""


class _Saves(tune.Trainable):
    def step(self):
        return {"loss": 1.0}


def test_a_function_trainable_keeps_an_epoch_only_where_it_reported_a_checkpoint_and_is_told_once(caplog):
    tune.register_trainable("pausing_function", _every_third_epoch)
    tune.register_trainable("pausing_class", _Saves)
    function = Trial("pausing_function", config={}, trial_id="f1", stub=True)
    other = Trial("pausing_function", config={}, trial_id="f2", stub=True)
    saves = Trial("pausing_class", config={}, trial_id="c1", stub=True)
    assert not pausing.pause_keeps(function, {"training_iteration": 2})
    assert pausing.pause_keeps(function, {"training_iteration": 3, "should_checkpoint": True})
    assert pausing.pause_keeps(saves, {"training_iteration": 2})  # a class saves when it is paused
    with caplog.at_level(logging.WARNING, logger=pausing.__name__):
        pausing.warn_once_if_lost(saves, {"training_iteration": 1}, "HyperBand", 8)
        pausing.warn_once_if_lost(function, {"training_iteration": 3, "should_checkpoint": True}, "HyperBand", 8)
        pausing.warn_once_if_lost(function, {"training_iteration": 8}, "HyperBand", 8)  # at the end: never continued
        pausing.warn_once_if_lost(function, {"training_iteration": 1}, "HyperBand", 8)
        pausing.warn_once_if_lost(other, {"training_iteration": 1}, "HyperBand", 8)
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith("HyperBand pauses trial f1 at epoch 1, where it reported no checkpoint")
