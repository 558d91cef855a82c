"""A real CIFAR sweep on two objectives, loss and epoch time, and its report in a real browser (slow tier)."""

from __future__ import annotations

import json
import re

import pytest

from tests.integration.conftest import TINY

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from tuner.cli import main

    storage = tmp_path_factory.mktemp("cifar_front")
    try:
        main(["sweep", "--space", "cifar_small", *TINY, "--max-epochs", "3", "--num-samples", "6", "--scheduler",
              "asha", "--metric", "loss,time_this_iter_s", "--mode", "min", "--storage-path", str(storage), "--name",
              "lt"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code in (0, None)
    return storage / "lt"


def test_a_cifar_sweep_on_loss_and_epoch_time_finds_a_front(swept):
    saved = json.loads((swept / "pareto.json").read_text())
    assert [o["metric"] for o in saved["objectives"]] == ["loss", "time_this_iter_s"]
    assert saved["front"] and saved["hypervolume"] > 0
    losses = [row["loss"] for row in saved["front"]]
    assert losses == sorted(losses)
    times = [row["time_this_iter_s"] for row in saved["front"]]
    assert times == sorted(times, reverse=True), "along a front, a lower loss costs a slower epoch"


def test_its_report_draws_the_front_without_errors(swept, run_cli, tmp_path, open_report):
    page = tmp_path / "report.html"
    assert run_cli("report", swept, "--out", page).code == 0
    html = page.read_text()
    assert '<section id="front">' in html and html.index('<section id="front">') < html.index(
        '<section id="best">'
    )
    tab, errors = open_report(page, width=1300, charts=2)
    assert not errors, errors
    dom = tab.content()
    front = dom[
        dom.index('<section id="front">') : dom.index("</section>", dom.index('<section id="front">'))
    ]
    assert front.count('class="main-svg"') >= 2, "the front and the hypervolume over time were drawn"
    for row in json.loads((swept / "pareto.json").read_text())["front"]:
        assert row["trial_id"] in front
    # the scheduler's rungs drawn on both objectives, each point named, every reason the one its fate log holds
    start = dom.index('<section id="scheduler">')
    scheduler = dom[start : dom.index("</section>", start)]
    assert ">loss at the rung<" in scheduler and ">time_this_iter_s at the rung<" in scheduler
    rungs = [r for t in _trials(swept) for r in t.rungs]
    assert rungs and all(f">{t.trial_id}<" in scheduler for t in _trials(swept) if t.rungs)
    reasons = re.findall(
        r"<tr class=\"[\w-]+\"><td>\d+</td><td>\w+</td><td>[^<]*</td><td>([^<]*)</td></tr>", scheduler
    )
    assert len(reasons) == len(rungs), reasons
    assert all(re.match(r"(went on|stopped): .*ranked \d+ of \d+ by fronts", r) for r in reasons), reasons
    assert "no cutoff yet" not in scheduler
    table = dom[dom.index('<table class="fates">') :]
    assert ">on front<" in table and ">#<" in table


def _trials(folder):
    from tuner import experiment

    return experiment.load(str(folder)).trials
