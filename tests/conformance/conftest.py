"""The conformance suite runs on the session's one real local Ray (2 CPUs, no dashboard), as integration does."""

import pytest


@pytest.fixture(scope="session", autouse=True)
def _ray_for_every_form(ray_session):
    yield
