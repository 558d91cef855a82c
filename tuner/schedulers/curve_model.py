"""A model of whole learning curves: an ensemble of small networks, each mapping a config to a power law.

As in Deep Power Laws (Kadra, Janowski, Wistuba, Grabocka, "Scaling Laws for Hyperparameter Optimization",
NeurIPS 2023), a network reads a config and gives the three numbers of its curve, ``y(t) = a - b * t**-c``
(``b, c >= 0``: the curve rises towards ``a`` as epochs ``t`` go by), and is trained on every epoch of every
trial so far, finished or not. Several networks from different starting weights disagree where the data say
little, and that disagreement is the model's uncertainty. The curve modelled is a trial's best value so far
(higher is better, scaled to about [0, 1] by the caller), which only rises, as a power law does.

Plain numpy, on purpose: the networks are tiny (a hidden layer of a few dozen units per member, all members
in one batched product), so a fit is a few hundred small matrix products, faster without a framework's
per-call cost, and exactly repeatable from a seed (a replay must decide as the sweep did). Each fit starts
from the last one's weights, so a sweep pays for a full fit once and then for a few steps as data arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MEMBERS = 5
HIDDEN = 32
LEARNING_RATE = 0.01
FIRST_STEPS = 300  # the first fit, from random weights
MORE_STEPS = 40  # each later fit, from the last one's weights
LEAK = 0.01


def _leaky(z: np.ndarray) -> np.ndarray:
    return np.where(z > 0, z, LEAK * z)


def _softplus(z: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, z)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass
class Observations:
    """What a fit learns from: one row of features per config, and every (config row, epoch, value) point."""

    features: np.ndarray  # (configs, dims) in [0, 1]
    config: np.ndarray  # (points,) the row of ``features`` each point belongs to
    epoch: np.ndarray  # (points,) from 1
    value: np.ndarray  # (points,) the best so far, scaled; higher is better


class PowerLawEnsemble:
    """``MEMBERS`` networks trained together; ``curves`` gives each member's prediction."""

    def __init__(self, dims: int, seed: int = 0, members: int = MEMBERS, hidden: int = HIDDEN) -> None:
        rng = np.random.default_rng(seed)
        self.dims, self.members, self.hidden = dims, members, hidden
        scale_in, scale_hidden = np.sqrt(2.0 / max(dims, 1)), np.sqrt(2.0 / hidden)
        self.params = {
            "w1": rng.normal(0, scale_in, (members, dims, hidden)),
            "b1": np.zeros((members, 1, hidden)),
            "w2": rng.normal(0, scale_hidden, (members, hidden, hidden)),
            "b2": np.zeros((members, 1, hidden)),
            "w3": rng.normal(0, 0.1 * scale_hidden, (members, hidden, 3)),
            # a start near a flat curve at the middle of the scale: a = 0.5, b = softplus(-1), c = softplus(0)
            "b3": np.tile(np.array([0.5, -1.0, 0.0]), (members, 1, 1)),
        }
        self._adam = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in self.params.items()}
        self._step = 0
        self.fits = 0

    # --- prediction -----------------------------------------------------------------------------------
    def _forward(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        p = self.params
        z1 = x[None] @ p["w1"] + p["b1"]
        h1 = _leaky(z1)
        z2 = h1 @ p["w2"] + p["b2"]
        h2 = _leaky(z2)
        out = h2 @ p["w3"] + p["b3"]  # (members, configs, 3)
        return z1, h1, z2, h2, out

    def shapes(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each member's (a, b, c) for each config: arrays (members, configs)."""
        out = self._forward(np.asarray(x, float))[-1]
        return out[..., 0], _softplus(out[..., 1]), _softplus(out[..., 2])

    def curves(self, x: np.ndarray, epochs: np.ndarray) -> np.ndarray:
        """Each member's value for each config at each of ``epochs``: (members, configs, len(epochs))."""
        a, b, c = self.shapes(x)
        t = np.asarray(epochs, float)[None, None, :]
        return a[..., None] - b[..., None] * np.exp(-c[..., None] * np.log(t))

    # --- training -------------------------------------------------------------------------------------
    def fit(self, data: Observations, steps: int | None = None) -> float:
        """Adam steps on the mean absolute error over every point (robust to the odd spike); returns it."""
        steps = steps if steps is not None else (FIRST_STEPS if self.fits == 0 else MORE_STEPS)
        x = np.asarray(data.features, float)
        rows, t, y = data.config, np.log(np.asarray(data.epoch, float)), np.asarray(data.value, float)
        n = max(len(y), 1)
        loss = float("nan")
        for _ in range(steps):
            loss, grads = self._gradients(x, rows, t, y, n)
            self._adam_step(grads)
        self.fits += 1
        return loss

    def _gradients(
        self, x: np.ndarray, rows: np.ndarray, log_t: np.ndarray, y: np.ndarray, n: int
    ) -> tuple[float, dict[str, np.ndarray]]:
        p = self.params
        z1, h1, z2, h2, out = self._forward(x)
        a, ob, oc = out[..., 0], out[..., 1], out[..., 2]
        b, c = _softplus(ob), _softplus(oc)
        u = np.exp(-c[:, rows] * log_t[None, :])  # (members, points)
        pred = a[:, rows] - b[:, rows] * u
        err = pred - y[None, :]
        loss = float(np.abs(err).mean())
        g = np.sign(err) / n  # d loss / d pred, per member
        configs = x.shape[0]
        slots = (rows[None, :] + configs * np.arange(self.members)[:, None]).ravel()  # (member, config) cells
        d_out = np.empty_like(out)
        for k, part in enumerate((g, -g * u, g * b[:, rows] * u * log_t[None, :])):  # d pred / d (a, b, c)
            summed = np.bincount(slots, weights=part.ravel(), minlength=self.members * configs)
            d_out[..., k] = summed.reshape(self.members, configs)
        d_out[..., 1] *= _sigmoid(ob)
        d_out[..., 2] *= _sigmoid(oc)
        grads = {"w3": h2.transpose(0, 2, 1) @ d_out, "b3": d_out.sum(1, keepdims=True)}
        d_h2 = d_out @ p["w3"].transpose(0, 2, 1)
        d_z2 = d_h2 * np.where(z2 > 0, 1.0, LEAK)
        grads["w2"], grads["b2"] = h1.transpose(0, 2, 1) @ d_z2, d_z2.sum(1, keepdims=True)
        d_h1 = d_z2 @ p["w2"].transpose(0, 2, 1)
        d_z1 = d_h1 * np.where(z1 > 0, 1.0, LEAK)
        grads["w1"] = np.broadcast_to(x[None], (self.members, *x.shape)).transpose(0, 2, 1) @ d_z1
        grads["b1"] = d_z1.sum(1, keepdims=True)
        return loss, grads

    def _adam_step(self, grads: dict[str, np.ndarray], beta1: float = 0.9, beta2: float = 0.999) -> None:
        self._step += 1
        for name, grad in grads.items():
            m, v = self._adam[name]
            m *= beta1
            m += (1 - beta1) * grad
            v *= beta2
            v += (1 - beta2) * grad * grad
            m_hat = m / (1 - beta1**self._step)
            v_hat = v / (1 - beta2**self._step)
            self.params[name] -= LEARNING_RATE * m_hat / (np.sqrt(v_hat) + 1e-8)
