"""Every module in search_spaces/ keeps the space contract: add a file, get these tests."""

from __future__ import annotations

import pytest
from ray.tune.search.sample import Domain

from tuner import SearchSpace, searchers
from tuner.errors import UsageError
from tuner.launch.registry import (
    SPACES_DIR,
    builtin_space_names,
    load_space,
    resolve_trainable,
    summarize_space_file,
)
from tuner.launch.trial.forms import declared_keywords
from tuner.searchers import CHOICES as SEARCHERS
from tuner.searchers import plan_search

SPACES = builtin_space_names()


def test_there_are_spaces():
    assert "cifar_small" in SPACES


@pytest.mark.parametrize("name", SPACES)
def test_space_declares_a_valid_space(name):
    space = load_space(name)
    assert isinstance(space, SearchSpace)
    assert space.mode in ("min", "max")
    assert space.params, "a space must tune something"
    assert callable(resolve_trainable(space.trainable))


@pytest.mark.parametrize("name", SPACES)
def test_space_file_has_a_one_line_description_readable_without_import(name):
    summary = summarize_space_file(SPACES_DIR / f"{name}.py")
    assert summary.description and "\n" not in summary.description
    assert summary.metric == load_space(name).metric


@pytest.mark.parametrize("name", SPACES)
@pytest.mark.parametrize("searcher", [s for s in SEARCHERS if s != "auto"])
def test_every_searcher_searches_every_parameter_of_every_builtin_space(name, searcher):
    """Built-in spaces hold only what every searcher can search: nothing drawn at random behind a model."""
    space = load_space(name)
    plan = plan_search(space.params, searcher)
    assert [p.name for p in plan.params] == list(space.params)
    assert all(p.how for p in plan.params)
    if searchers.REGISTRY[searcher].model_based:
        unsearched = [p.name for p in plan.params if "drawn at random" in p.how]
        assert not unsearched, f"{searcher} would draw {unsearched} at random"


def test_a_pair_no_searcher_can_handle_is_refused_naming_those_that_can():
    with pytest.raises(UsageError, match="searchers that can: random$"):
        plan_search({"w": __import__("ray").tune.grid_search([1, 2]), "lr": __import__("ray").tune.uniform(0, 1)}, "optuna")


@pytest.mark.parametrize("name", SPACES)
def test_a_sampled_config_trains_for_two_batches(name):
    """The space's trainable accepts what the space samples (checked on the pure loop, no Ray)."""
    space = load_space(name)
    config = {k: (v.sample() if isinstance(v, Domain) else v) for k, v in space.params.items()}
    train = resolve_trainable(space.trainable)
    declared = declared_keywords(train)
    if declared is None or "data" not in declared:
        pytest.skip("trainable does not use the shared CIFAR-shaped data")
    from trainables.data import make_synthetic
    from trainables.loop import fit

    reports = []
    fit(
        config,
        make_synthetic(100),
        max_epochs=1,
        max_batches_per_epoch=2,
        report=lambda m, s: reports.append(m),
    )
    assert len(reports) == 1
    metric = reports[0][space.metric]
    assert isinstance(metric, float) and metric == metric and abs(metric) < 1e6, "a finite number"
    assert 0.0 <= reports[0]["accuracy"] <= 1.0 and reports[0]["epoch"] == 1


def test_a_space_can_be_named_by_its_importable_module():
    by_module = load_space("search_spaces.cifar_small")
    by_name = load_space("cifar_small")
    assert by_module is by_name
    assert resolve_trainable(by_module.trainable) is resolve_trainable(by_name.trainable)


def test_a_top_level_module_on_the_path_is_a_space_unless_a_built_in_has_its_name(tmp_path, monkeypatch):
    from tuner.errors import UsageError

    (tmp_path / "my_top_space.py").write_text(
        "from ray import tune\nfrom tuner import SearchSpace\n"
        "SPACE = SearchSpace(trainable='cifar', params={'lr': tune.uniform(0.1, 0.2)})\n"
    )
    (tmp_path / "cifar_small.py").write_text("raise RuntimeError('a module that shadows a built-in space')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_space("my_top_space").trainable == "cifar"
    assert load_space("cifar_small") is load_space("search_spaces.cifar_small")
    with pytest.raises(UsageError, match="or a module importable by name"):
        load_space("my_top_spaec")
