"""The report as a reader sees it, in a real headless Chromium at a desktop and a phone width: the page never
scrolls sideways and every trial's fate is in view (slow tier: a browser).
"""

from __future__ import annotations

import json

import pytest
import yaml

from tuner.experiment import load
from tuner.review.report.page import build

pytestmark = pytest.mark.slow

PARAMS = [f"parameter_{i:02d}" for i in range(12)]  # a wide space: the table cannot show every column at once
FATE = ("stopped early by freeze-thaw at epoch 2: predicted 0.701 ± 0.013 at epoch 3, best so far 0.2752; "
        "under a 0.1% chance to beat the best")  # fmt: skip

# How wide the page is against the window, and the right edge of every fate cell.
MEASURE = """() => {
  const fates = [...document.querySelectorAll('table.fates .fate')].map(e => e.getBoundingClientRect().right);
  return {window: document.documentElement.clientWidth, page: document.documentElement.scrollWidth,
          fate_right: Math.max(...fates), fates: fates.length};
}"""


def _wide_experiment(tmp_path):
    """A finished sweep of 6 trials over 12 parameters, each reporting 4 metrics besides the loss."""
    folder = tmp_path / "exp"
    folder.mkdir()
    settings = {"space": "x.py", "scheduler": "asha", "searcher": "random", "num_samples": 6, "max_epochs": 3,
                "metric": "loss", "mode": "min", "name": "exp", "storage_path": str(tmp_path)}  # fmt: skip
    (folder / "tuner_config.yaml").write_text(yaml.safe_dump(settings))
    columns = ["loss", "accuracy", "train_loss", "images_per_second", "validation_seconds", "training_iteration",
               "trial_id", "timestamp", "time_total_s"]  # fmt: skip
    state, fates = [], {}
    for n in range(6):
        trial_id, config = f"abcd{n:04d}", {p: 0.000123 * (n + 1) * (i + 1) for i, p in enumerate(PARAMS)}
        (folder / trial_id).mkdir()
        (folder / trial_id / "params.json").write_text(json.dumps(config))
        epochs = 3 if n == 0 else 2
        lines = [",".join(columns)] + [
            f"{2.3 - 0.3 * e - 0.01 * n},0.8{n},1.2{n},1234.5,0.0123,{e},{trial_id},{1000 + 10 * n + e},{e}.0"
            for e in range(1, epochs + 1)
        ]
        (folder / trial_id / "progress.csv").write_text("\n".join(lines) + "\n")
        trial = {"trial_id": trial_id, "status": "TERMINATED", "relative_logdir": trial_id,
                 "experiment_tag": f"{n}", "config": config}  # fmt: skip
        state.append([json.dumps(trial), json.dumps({"error_filename": None})])
        if n:
            fates[trial_id] = {"stopped": FATE}
    (folder / "experiment_state-2026-01-01_00-00-00.json").write_text(json.dumps({"trial_data": state}))
    (folder / "fates.json").write_text(json.dumps(fates))
    return load(str(folder), running=False)


def test_the_fate_is_in_view_without_scrolling_sideways_on_a_desktop_and_a_phone(tmp_path, open_report):
    (tmp_path / "report.html").write_text(build(_wide_experiment(tmp_path)))
    for width in (1400, 400):
        page, errors = open_report(tmp_path / "report.html", width=width)
        seen = page.evaluate(MEASURE)
        assert not errors, errors
        assert seen["page"] <= seen["window"], f"at {width} px the page scrolls sideways: {seen}"
        assert seen["fates"] == 7, seen  # the heading and the six trials'
        assert seen["fate_right"] <= seen["window"], f"at {width} px a fate is out of view: {seen}"
