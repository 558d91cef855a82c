"""The frozen search protocol (benchmarks/protocol.py): its split never moves, its table form picks from the same
configs for every method, and its ranks and tests say what they claim on runs whose answer is known."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

protocol = pytest.importorskip("protocol")


def test_the_split_is_frozen_half_and_half_and_disjoint():
    dev, held = protocol.split()
    assert len(dev) == len(held) == 17 and not set(dev) & set(held)
    # the rule's output, written down: a change to the rule or the task list must fail here
    assert dev[:4] == ["7593", "34539", "126026", "146212"]
    assert held[:4] == ["3945", "126025", "126029", "167104"]
    assert protocol.seed_set("dev") == tuple(range(10)) and protocol.seed_set("heldout") == tuple(range(10, 30))
    # a run is counted in a half only with that half's seeds; any other pairing is printed apart
    assert protocol.cell("7593", 3) == "development" and protocol.cell("3945", 12) == "held-out"
    assert protocol.cell("3945", 3) == protocol.cell("7593", 12) == "off-protocol"


def test_the_box_round_trips_through_the_unit_cube_in_its_own_scales():
    config = {"batch_size": 64, "learning_rate": 1e-3, "momentum": 0.5, "weight_decay": 0.05, "num_layers": 3,
              "max_units": 256, "max_dropout": 0.25}
    back = protocol.from_unit(protocol.unit(config))
    assert back["batch_size"] == 64 and back["num_layers"] == 3 and back["max_units"] == 256
    assert back["learning_rate"] == pytest.approx(1e-3) and back["max_dropout"] == pytest.approx(0.25)
    # log scale: the learning rate's geometric middle sits at the cube's middle
    assert protocol.unit({**config, "learning_rate": 10**-2.5})[1] == pytest.approx(0.5)


def test_the_table_form_answers_with_one_of_the_same_2000_configs_for_everyone():
    a, b = protocol.TaskCurves("3945", "table"), protocol.TaskCurves("3945", "table")
    configs, _ = a.table
    assert len(configs) == 2000 and configs[:3] == b.table[0][:3]
    proposed = {**configs[17], "learning_rate": configs[17]["learning_rate"] * 1.01}
    assert a.nearest(proposed) == configs[17]
    assert protocol.TaskCurves("7593", "table").table[0][0] != configs[0]  # each task its own table


def _run(method, task, seed, values):
    """A run whose incumbent is ``values[k]`` from epoch 250 * k + 1 on."""
    return {"method": method, "task": task, "seed": seed, "form": "surrogate", "budget": 1000,
            "best_so_far": [(250 * k + 1, v) for k, v in enumerate(values)]}


def test_ranks_and_tests_name_the_method_that_is_ahead(monkeypatch):
    tasks = [str(t) for t in range(1, 9)]
    monkeypatch.setattr(protocol, "reference", lambda: {t: {"best": 1.0, "worst": 0.0} for t in tasks})
    runs = []
    for t in tasks:
        for seed in (0, 1):
            runs.append(_run("fast", t, seed, [0.5, 0.8, 0.9, 0.95]))  # ahead from the first quarter on
            runs.append(_run("slow", t, seed, [0.3, 0.5, 0.7, 0.8]))
            runs.append(_run("late", t, seed, [0.1, 0.2, 0.6, 0.9]))  # catches up only at the end
    regret, methods = protocol.table_of(runs, "surrogate")
    pairs = protocol.complete(regret, methods)
    assert len(pairs) == 16
    ranks = protocol.mean_ranks(regret, methods, pairs)
    assert list(ranks[0]) == [1.0, 2.0, 3.0]  # at 25%: fast, slow, late
    assert list(ranks[-1]) == [1.0, 3.0, 2.0]  # at the end late passes slow
    finals = protocol.per_task_regret(regret, methods, pairs, 2)
    assert finals[:, 0] == pytest.approx(0.05) and finals[:, 2] == pytest.approx(0.1)
    p = protocol.wilcoxon_holm(finals, methods, "fast")
    assert p["slow"] < 0.05 and p["late"] < 0.05 and p["late"] >= p["slow"]  # Holm never lowers a p-value's order
    assert protocol.friedman(finals) < 0.05
    # late needs its whole budget to reach slow's final regret; fast needs half of it
    assert protocol.share_to_reach(runs, "late", "slow", "surrogate") == pytest.approx(0.751)
    assert protocol.share_to_reach(runs, "fast", "slow", "surrogate") == pytest.approx(0.251)
    text = protocol.report(runs, "test cell", against="fast")
    assert "| fast | 1.00 | 1.00 | 1.00 |" in text and "8 tasks x 2 seeds" in text


def test_a_task_and_seed_some_method_missed_is_left_out_of_every_rank(monkeypatch):
    monkeypatch.setattr(protocol, "reference", lambda: {"1": {"best": 1.0, "worst": 0.0}})
    runs = [_run("a", "1", 0, [0.5]), _run("b", "1", 0, [0.6]), _run("a", "1", 1, [0.9])]
    regret, methods = protocol.table_of(runs, "surrogate")
    assert protocol.complete(regret, methods) == [("1", 0)]
