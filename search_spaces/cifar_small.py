"""The seed CIFAR-10 space: conv-net layer widths, learning rate, batch size."""

import numpy as np
from ray import tune

from tuner import SearchSpace

SPACE = SearchSpace(
    trainable="cifar",
    metric="loss",
    mode="min",
    params={
        "l1": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
        "l2": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
        "lr": tune.loguniform(1e-4, 1e-1),
        "batch_size": tune.choice([2, 4, 8, 16]),
    },
)
