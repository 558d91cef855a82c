"""One small space per trainable and space form Ray Tune documents, written the way its docs write them.

Each form is a space file (its source below, with ``{sleep}`` seconds per epoch so a signal can land mid-sweep)
and what its plan must say. The next form a user brings goes here; tests/conformance/test_forms.py runs each
through ``tuner sweep`` under the schedulers it applies to, and resumes each once after SIGTERM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PAUSING = ("hyperband", "pbt")  # schedulers that continue trials from checkpoints


@dataclass(frozen=True)
class Form:
    name: str
    source: str
    plan: dict[str, str] = field(default_factory=dict)  # parameter -> how the plan must say it is searched
    checkpoints: bool = True  # runs under the pausing schedulers
    pbt: bool = True  # has something PBT can perturb
    slow: bool = False  # its sweep under ASHA runs in the slow tier (the fast tier's time is kept for the rest)
    # a trainable form over a space others cover: its one sweep is the SIGTERM resume's, under HyperBand, which
    # pauses and continues its trials from their checkpoints too
    resumed_only: bool = False

    @property
    def schedulers(self) -> tuple[str, ...]:
        return ("asha", *(s for s in PAUSING if self.checkpoints and (s != "pbt" or self.pbt)))

    def write(self, folder: Path, sleep: float = 0.0) -> Path:
        path = Path(folder) / f"{self.name}.py"
        path.write_text(self.source.replace("{sleep}", repr(sleep)), encoding="utf-8")
        return path


# A function trainable that checkpoints, shared by the space forms (the space is what they test).
_FUNCTION = '''
def train(config, *, max_epochs=3):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            start = json.loads(Path(folder, "state.json").read_text())["epoch"]
    for epoch in range(start + 1, max_epochs + 1):
        time.sleep({sleep})
        print(f"epoch {epoch}: training")  # a chatty trainable: kept in the trial's stdout.log
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "state.json").write_text(json.dumps({"epoch": epoch}))
            tune.report({"loss": loss_of(config) + 1.0 / epoch, "epoch": epoch},
                        checkpoint=tune.Checkpoint.from_directory(folder))
'''
_HEAD = '''import json
import math
import random
import tempfile
import time
from pathlib import Path

import numpy as np
from ray import tune

from tuner import SearchSpace
'''

FORMS = (
    Form("function_report_dict", f'''"""A function trainable: tune.report(dict, checkpoint=...), tune.get_checkpoint()."""
{_HEAD}

def loss_of(config):
    return abs(math.log10(config["lr"]) + 2) + config["width"] / 64
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{"lr": tune.loguniform(1e-4, 1e-1), "width": tune.choice([16, 32, 64])}})
''', {"lr": "searched by optuna in log space"}),
    Form("function_tutorial_api", f'''"""The PyTorch tutorial's form: ray.train.report / ray.train.get_checkpoint / ray.train.Checkpoint."""
{_HEAD}
from ray import train as ray_train


def train(config, *, max_epochs=3):
    start = 0
    checkpoint = ray_train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            start = json.loads(Path(folder, "state.json").read_text())["epoch"]
    for epoch in range(start + 1, max_epochs + 1):
        time.sleep({{sleep}})
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "state.json").write_text(json.dumps({{"epoch": epoch}}))
            ray_train.report({{"loss": config["lr"] * 10 + 1.0 / epoch, "accuracy": 0.5}},
                             checkpoint=ray_train.Checkpoint.from_directory(folder))


SPACE = SearchSpace(trainable=train, params={{"lr": tune.loguniform(1e-4, 1e-1), "batch_size": tune.choice([2, 4, 8, 16])}})
'''),
    Form("function_report_keywords", f'''"""An older function trainable: tune.report(loss=...) keywords, no checkpoints."""
{_HEAD}

def train(config):
    for epoch in range(1, 4):
        time.sleep({{sleep}})
        tune.report(loss=config["lr"] * 10 + 1.0 / epoch, accuracy=0.5)


SPACE = SearchSpace(trainable=train, params={{"lr": tune.loguniform(1e-4, 1e-1)}}, defaults={{"max_epochs": 3}})
''', checkpoints=False),
    Form("function_with_parameters", f'''"""tune.with_parameters: data handed to every trial through Ray's object store."""
{_HEAD}

TABLE = {{"offset": 0.5, "rows": list(range(1000))}}


def loss_of(config):
    return abs(math.log10(config["lr"]) + 2)


def train(config, table=None, *, max_epochs=3):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            start = json.loads(Path(folder, "state.json").read_text())["epoch"]
    for epoch in range(start + 1, 4):
        time.sleep({{sleep}})
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "state.json").write_text(json.dumps({{"epoch": epoch}}))
            tune.report({{"loss": loss_of(config) + table["offset"] / epoch}},
                        checkpoint=tune.Checkpoint.from_directory(folder))


SPACE = SearchSpace(trainable=tune.with_parameters(train, table=TABLE),
                    params={{"lr": tune.loguniform(1e-4, 1e-1)}}, defaults={{"max_epochs": 3}})
'''),
    Form("function_with_resources", f'''"""tune.with_resources: the trainable asks for its own CPUs."""
{_HEAD}

def loss_of(config):
    return abs(math.log10(config["lr"]) + 2)
{_FUNCTION}

SPACE = SearchSpace(trainable=tune.with_resources(train, {{"cpu": 2}}), params={{"lr": tune.loguniform(1e-4, 1e-1)}})
'''),
    Form("class_trainable", f'''"""A tune.Trainable class: setup, step, save_checkpoint, load_checkpoint (a quadratic bowl)."""
{_HEAD}

class Bowl(tune.Trainable):
    def setup(self, config):
        self.x, self.y, self.steps = config["x"], config["y"], 0

    def step(self):
        time.sleep({{sleep}})
        self.steps += 1
        print(f"step {{self.steps}}")
        return {{"loss": (self.x - 1) ** 2 + (self.y + 2) ** 2 + 1.0 / self.steps}}

    def save_checkpoint(self, checkpoint_dir):
        Path(checkpoint_dir, "state.json").write_text(json.dumps({{"steps": self.steps}}))

    def load_checkpoint(self, checkpoint_dir):
        self.steps = json.loads(Path(checkpoint_dir, "state.json").read_text())["steps"]


SPACE = SearchSpace(trainable=Bowl, params={{"x": tune.uniform(-3, 3), "y": tune.uniform(-3, 3)}})
''', {"x": "searched by optuna"}),
    Form("class_without_checkpoints", f'''"""A tune.Trainable class that saves no checkpoints: it runs where no scheduler pauses it."""
{_HEAD}

class Bowl(tune.Trainable):
    def setup(self, config):
        self.x, self.steps = config["x"], 0

    def step(self):
        time.sleep({{sleep}})
        self.steps += 1
        return {{"loss": (self.x - 1) ** 2 + 1.0 / self.steps}}


SPACE = SearchSpace(trainable=Bowl, params={{"x": tune.uniform(-3, 3)}})
''', checkpoints=False),
    Form("class_reusable", f'''"""A tune.Trainable class that takes a new config in place (reset_config), so Ray reuses its process."""
{_HEAD}

class Bowl(tune.Trainable):
    def setup(self, config, max_epochs=None):
        self.x, self.steps = config["x"], 0

    def reset_config(self, new_config):
        self.x, self.steps = new_config["x"], 0
        return True

    def step(self):
        time.sleep({{sleep}})
        self.steps += 1
        return {{"loss": (self.x - 1) ** 2 + 1.0 / self.steps}}

    def save_checkpoint(self, checkpoint_dir):
        Path(checkpoint_dir, "state.json").write_text(json.dumps({{"steps": self.steps}}))

    def load_checkpoint(self, checkpoint_dir):
        self.steps = json.loads(Path(checkpoint_dir, "state.json").read_text())["steps"]


SPACE = SearchSpace(trainable=Bowl, params={{"x": tune.uniform(-3, 3)}})
'''),
    Form("class_with_parameters", f'''"""tune.with_parameters around a tune.Trainable class: its setup receives the data."""
{_HEAD}

class Bowl(tune.Trainable):
    def setup(self, config, target=None):
        self.x, self.target, self.steps = config["x"], target, 0

    def step(self):
        time.sleep({{sleep}})
        self.steps += 1
        return {{"loss": (self.x - self.target) ** 2 + 1.0 / self.steps}}

    def save_checkpoint(self, checkpoint_dir):
        Path(checkpoint_dir, "state.json").write_text(json.dumps({{"steps": self.steps}}))

    def load_checkpoint(self, checkpoint_dir):
        self.steps = json.loads(Path(checkpoint_dir, "state.json").read_text())["steps"]


SPACE = SearchSpace(trainable=tune.with_parameters(Bowl, target=0.5), params={{"x": tune.uniform(-3, 3)}})
'''),
    Form("conditional_continuous_spec", f'''"""A conditional parameter with a continuous branch, in Ray's older spec.config form."""
{_HEAD}

def loss_of(config):
    return abs(math.log10(config["lr"]) + 2) + (1 - config["momentum"])
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "optimizer": tune.choice(["sgd", "adam"]),
    "lr": tune.loguniform(1e-4, 1e-1),
    "momentum": tune.sample_from(lambda spec: np.random.uniform(0.5, 0.99) if spec.config.optimizer == "sgd" else 0.0),
}})
''', {"momentum": "conditional on optimizer: searched by optuna where optimizer=sgd (its draw uniform(0.5, 0.99)); "
                  "constant where optimizer=adam: 0.0"}),
    Form("conditional_config_branches", f'''"""Conditional parameters in the config form: a log-scale branch, an integer branch, a small set."""
{_HEAD}

def loss_of(config):
    return config["weight_decay"] * 10 + config["layers"] / 10 + config["act_scale"]
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "model": tune.choice(["mlp", "cnn", "linear"]),
    "weight_decay": tune.sample_from(lambda config: 10 ** np.random.uniform(-6, -2) if config["model"] != "linear" else 0.0),
    "layers": tune.sample_from(lambda config: random.randint(2, 200) if config["model"] == "mlp" else 1),
    "act_scale": tune.sample_from(lambda config: float(np.random.choice([0.5, 1.0, 2.0])) if config["model"] == "cnn" else 1.0),
}})
''', {"weight_decay": "conditional on model: searched by optuna where model=mlp (its draw uniform(-6, -2)), model=cnn "
                      "(its draw uniform(-6, -2)); constant where model=linear: 0.0",
      "layers": "conditional on model: searched by optuna where model=mlp (its draw randint(2, 201))",
      "act_scale": "conditional on model: searched by optuna where model=cnn (3 values 0.5…2)"}),
    Form("nested_config", f'''"""A nested config: parameters grouped in dicts, as a model and an optimizer section."""
{_HEAD}

def loss_of(config):
    return abs(math.log10(config["optim"]["lr"]) + 2) + config["model"]["width"] / 64 + config["model"]["depth"]
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "model": {{"width": tune.choice([16, 32, 64]), "depth": 2}},
    "optim": {{"lr": tune.loguniform(1e-4, 1e-1), "momentum": tune.uniform(0.5, 0.99)}},
}})
''', {"model/width": "searched by optuna as an ordered choice", "optim/lr": "searched by optuna in log space"}),
    Form("grid_with_random", f'''"""grid_search beside random parameters: every grid value crossed with random draws of the others."""
{_HEAD}

def loss_of(config):
    return abs(math.log10(config["lr"]) + 2) + config["width"] / 64
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{"width": tune.grid_search([16, 64]), "lr": tune.loguniform(1e-4, 1e-1)}})
''', {"width": "every value, crossed with the other grids", "lr": "drawn at random"}),
    Form("functions_of_draws", f'''"""sample_from functions of one draw: a power of ten, a power of two, Python's random."""
{_HEAD}

def loss_of(config):
    return abs(math.log10(config["lr"]) + 2) + config["width"] / 256 + config["seed_offset"] / 1000
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "lr": tune.sample_from(lambda _: 10 ** np.random.uniform(-4, -1)),
    "width": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
    "seed_offset": tune.sample_from(lambda _: random.randint(0, 500)),
    "wd": tune.uniform(0, 0.1),
}})
''', {"lr": "follows its draw uniform(-4, -1), values", "width": "probed: 7 values 4…256, searched by optuna as an "
      "ordered choice", "seed_offset": "follows its draw randint(0, 501), values"}),
    Form("derived_from_another", f'''"""Ray's docs' dependent pair: alpha = np.random.uniform(100), beta = spec.config.alpha * np.random.normal()."""
{_HEAD}

def loss_of(config):
    return abs(config["beta"]) / 100 + config["alpha"] / 100
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "alpha": tune.sample_from(lambda spec: np.random.uniform(100)),
    "beta": tune.sample_from(lambda spec: spec.config.alpha * np.random.normal()),
    "scale": tune.uniform(0.1, 1.0),
}})
''', {"alpha": "follows its draw uniform(1, 100), values", "beta": "follows its draw normal(0, 1), through its "
      "quantile, given the other parameters: searched by optuna"}),
    Form("every_domain", f'''"""Every tune domain: quantised, logarithmic, integer and normal ones."""
{_HEAD}

def loss_of(config):
    return abs(config["n"]) / 10 + abs(config["qn"]) / 100 + config["q"] + abs(math.log10(config["ql"]) + 2) + \\
        config["i"] / 100 + config["qi"] / 100 + math.log10(config["li"]) + math.log10(config["qli"])
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "q": tune.quniform(0, 1, 0.25), "ql": tune.qloguniform(1e-4, 1e-1, 5e-5), "n": tune.randn(0, 2),
    "qn": tune.qrandn(0, 10, 5), "i": tune.randint(0, 10), "qi": tune.qrandint(0, 100, 10),
    "li": tune.lograndint(1, 1000), "qli": tune.qlograndint(1, 1000, 10), "c": tune.choice(["a", "b", "c"]),
}})
''', {"n": "searched by optuna through its quantile", "qn": "searched by optuna through its quantile"}),
    Form("hyperopt_native", f'''"""A space in HyperOpt's own language, as Ray's HyperOptSearch examples write it: hp.choice over dicts."""
{_HEAD}
from hyperopt import hp


def loss_of(config):
    activation = config["activation"]  # the chosen option's dict, as HyperOpt builds it
    assert set(activation) == ({{"activation", "mult"}} if activation["activation"] == "relu" else {{"activation"}})
    assert config["steps"] == 100 and isinstance(config["layers"], int)
    return abs(config["width"] - 10) / 10 + abs(config["height"]) / 100 + activation.get("mult", 1.5) - 1
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params={{
    "activation": hp.choice("activation", [
        {{"activation": "relu", "mult": hp.uniform("mult", 1, 2)}},
        {{"activation": "tanh"}},
    ]),
    "width": hp.uniform("width", 0, 20),
    "height": hp.uniform("height", -100, 100),
    "lr": hp.loguniform("lr", np.log(1e-4), np.log(1e-1)),
    "layers": hp.randint("layers", 1, 4),
    "steps": 100,
}})
''', {"mult": "conditional on activation: searched by optuna where activation=relu (its draw uniform(1, 2))",
      "lr": "searched by optuna in log space", "width": "searched by optuna"}, pbt=False, slow=True),
    Form("optuna_define_by_run", f'''"""A space in Optuna's define-by-run form, as Ray's OptunaSearch(space=fn) examples write it."""
{_HEAD}


def define_by_run(trial):
    optimizer = trial.suggest_categorical("optimizer", ["sgd", "adam"])
    if optimizer == "sgd":
        trial.suggest_float("momentum", 0.5, 0.99)
    trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    trial.suggest_int("width", 16, 64, step=16)
    return {{"steps": 100}}


def loss_of(config):
    assert ("momentum" in config) == (config["optimizer"] == "sgd") and config["steps"] == 100
    return abs(math.log10(config["lr"]) + 2) + config["width"] / 64 + (1 - config.get("momentum", 0.5))
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params=define_by_run)
''', {"momentum": "conditional on optimizer: searched by optuna where optimizer=sgd (its draw uniform(0.5, 0.99))",
      "lr": "searched by optuna in log space"}, pbt=False, slow=True),
    Form("configspace_native", f'''"""A ConfigSpace ConfigurationSpace with a condition, as Ray's TuneBOHB examples build it."""
{_HEAD}
import ConfigSpace as CS

space = CS.ConfigurationSpace(seed=1)
optimizer = CS.Categorical("optimizer", ["sgd", "adam"])
momentum = CS.Float("momentum", (0.5, 0.99))
space.add([optimizer, momentum, CS.Float("lr", (1e-4, 1e-1), log=True), CS.Integer("width", (16, 64)),
           CS.Constant("steps", 100), CS.EqualsCondition(momentum, optimizer, "sgd")])


def loss_of(config):  # a Configuration's active parameters and its constants
    assert ("momentum" in config) == (config["optimizer"] == "sgd") and config["steps"] == 100
    return abs(math.log10(config["lr"]) + 2) + config["width"] / 64 + (1 - config.get("momentum", 0.5))
{_FUNCTION}

SPACE = SearchSpace(trainable=train, params=space)
''', {"momentum": "conditional on optimizer: searched by optuna where optimizer=sgd (its draw uniform(0.5, 0.99))",
      "lr": "searched by optuna in log space"}, pbt=False, slow=True),
    Form("lightning_callback", f'''"""A LightningModule fitted by pl.Trainer, reported through Ray's TuneReportCheckpointCallback, as Ray's
guide to PyTorch Lightning writes it, and continued with trainer.fit(..., ckpt_path=...)."""
{_HEAD}
import os

import lightning.pytorch as pl
import torch
from ray.tune.integration.pytorch_lightning import TuneReportCheckpointCallback
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Classifier(pl.LightningModule):
    def __init__(self, config):
        super().__init__()
        self.lr = config["lr"]
        width = config["layer_1_size"]
        self.net = nn.Sequential(nn.Linear(8, width), nn.ReLU(), nn.Linear(width, 2))

    def on_train_epoch_start(self):
        time.sleep({{sleep}})

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.log("ptl/val_loss", nn.functional.cross_entropy(logits, y))
        self.log("ptl/val_accuracy", (logits.argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def loaders(batch_size):
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(256, 8, generator=generator)
    y = (x[:, 0] + x[:, 1] > 0).long()
    train = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=batch_size, shuffle=True)
    return train, DataLoader(TensorDataset(x[192:], y[192:]), batch_size=64)


def train_classifier(config, *, max_epochs=3):
    train, val = loaders(config["batch_size"])
    report = TuneReportCheckpointCallback({{"loss": "ptl/val_loss", "mean_accuracy": "ptl/val_accuracy"}},
                                          on="validation_end")
    trainer = pl.Trainer(max_epochs=max_epochs, accelerator="cpu", devices=1, enable_progress_bar=False,
                         logger=False, enable_checkpointing=False, callbacks=[report])
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            trainer.fit(Classifier(config), train, val, ckpt_path=os.path.join(folder, "checkpoint"))
    else:
        trainer.fit(Classifier(config), train, val)


SPACE = SearchSpace(trainable=train_classifier, params={{"lr": tune.loguniform(1e-4, 1e-1),
                    "layer_1_size": tune.choice([32, 64, 128]), "batch_size": tune.choice([32, 64])}})
''', pbt=False, resumed_only=True),
)
