"""Shared test set-up: Hypothesis settings and the path of the shipped smoke scenario."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parent.parent

# In CI, the same examples on every run.
settings.register_profile("tcplab", derandomize=bool(os.environ.get("CI")))
settings.load_profile("tcplab")


@pytest.fixture(scope="session")
def smoke_path() -> Path:
    """The tiny scenario shipped for tests."""
    return REPO_ROOT / "scenarios" / "smoke" / "smoke.toml"
