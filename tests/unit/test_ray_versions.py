"""A cluster of another Ray or Python is refused in one line naming both versions (tuner/launch/placement/versions.py)."""

from __future__ import annotations

import pytest

from tuner.errors import UsageError
from tuner.launch.placement import versions


@pytest.fixture
def on_2_60(monkeypatch):
    monkeypatch.setattr(versions, "here", lambda: ("2.60.0", "3.11.7"))


def test_the_tested_range_is_any_patch_of_the_tested_minors():
    assert all(versions.within_tested(v) for v in (*versions.TESTED, "2.53.0", "2.60.3", "2.50.1"))
    assert not any(versions.within_tested(v) for v in ("2.49.2", "2.61.0", "3.0.0", "nightly"))


def test_a_driver_of_the_same_ray_and_python_passes(on_2_60):
    versions.check_driver_matches("10.0.0.5:6379", "2.60.0", "3.11.7")
    versions.check_driver_matches("ray://10.0.0.5:10001", "2.60.0", "3.11.9", python_level="minor")


def test_another_ray_is_refused_in_one_line_that_says_what_to_install(on_2_60):
    with pytest.raises(UsageError) as caught:
        versions.check_driver_matches("10.0.0.5:6379", "2.55.1", "3.11.7")
    assert str(caught.value) == (
        "--address 10.0.0.5:6379: the cluster runs Ray 2.55.1 on Python 3.11.7 and this machine Ray 2.60.0 on "
        "Python 3.11.7; a driver must match its cluster: install ray==2.55.1 here (pip install "
        "'ray[default,tune]==2.55.1'), or use a cluster of Ray 2.60.0"
    )
    with pytest.raises(UsageError, match=r"use a cluster of Ray 2\.60\.0 \(tuner is tested on Ray 2\.50 to 2\.60"):
        versions.check_driver_matches("10.0.0.5:6379", "2.40.0", "3.11.7")


def test_another_python_is_refused_to_the_level_ray_compares(on_2_60):
    with pytest.raises(UsageError, match=r"Python 3\.11\.4 and this machine .* from a Python 3\.11\.4 environment"):
        versions.check_driver_matches("h:6379", "2.60.0", "3.11.4")
    versions.check_driver_matches("ray://h:10001", "2.60.0", "3.11.4", python_level="minor")
    with pytest.raises(UsageError, match=r"Python 3\.12\.1"):
        versions.check_driver_matches("ray://h:10001", "2.60.0", "3.12.1", python_level="minor")


def test_rays_own_mismatch_error_is_read_for_the_clusters_versions():
    """Ray's text, as its own check writes it: what a ``ray://`` client gets from ``ray.init``."""
    import ray
    from ray._private.utils import check_version_info

    with pytest.raises(RuntimeError) as caught:
        check_version_info({"ray_version": "2.55.1", "python_version": "3.10.2"}, "Ray Client")
    assert versions.mismatch_in(str(caught.value)) == ("2.55.1", "3.10.2")
    assert ray.__version__ in str(caught.value)
    assert versions.mismatch_in("ConnectionError: GCS unreachable") is None


def test_a_job_for_a_cluster_outside_the_tested_range_is_refused_and_one_inside_passes():
    versions.check_submittable("http://head:8265", "2.55.1")
    versions.check_submittable("http://head:8265", None)  # a dashboard that did not say
    with pytest.raises(UsageError) as caught:
        versions.check_submittable("http://head:8265", "2.44.0")
    assert str(caught.value) == (
        "http://head:8265: the cluster runs Ray 2.44.0, and tuner is tested on Ray 2.50 to 2.60 (2.50.0, 2.55.1, "
        "2.60.0); submit to a cluster of one of those, or install such a Ray on its nodes"
    )


def test_rays_own_settings_for_the_comparison_are_honoured_and_two_differences_get_both_fixes(on_2_60, monkeypatch):
    monkeypatch.setenv("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", "minor")
    versions.check_driver_matches("h:6379", "2.60.0", "3.11.4")  # Ray itself accepts another patch release then
    with pytest.raises(UsageError) as caught:
        versions.check_driver_matches("h:6379", "2.55.1", "3.12.1")
    assert str(caught.value).endswith(
        "a driver must match its cluster: run tuner from a Python 3.12.1 environment, as the cluster's nodes do "
        "and install ray==2.55.1 here (pip install 'ray[default,tune]==2.55.1')"
    )
    monkeypatch.setenv("RAY_IGNORE_VERSION_MISMATCH", "1")
    versions.check_driver_matches("h:6379", "2.55.1", "3.12.1")  # the user turned Ray's check off


def test_every_test_the_version_matrix_names_exists():
    """tests/ray_matrix.sh names slow tests by id; a merged or renamed test would fail every version there only."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    script = (root / "tests" / "ray_matrix.sh").read_text()
    named = re.findall(r"^\s+(tests/\S+\.py)(?:::(\w+))?$", script, flags=re.MULTILINE)
    assert len(named) >= 4
    for path, test in named:
        assert (root / path).is_file(), path
        if test:
            assert re.search(rf"^def {test}\(", (root / path).read_text(), flags=re.MULTILINE), f"{path}::{test}"
