"""Shared test set-up: Hypothesis settings and the path of the shipped smoke scenario."""

import os
from pathlib import Path

import pytest
from hypothesis import settings

REPO_ROOT = Path(__file__).resolve().parent.parent

# In CI, the same examples on every run.
settings.register_profile("tcplab", derandomize=bool(os.environ.get("CI")))
settings.load_profile("tcplab")

# The test runner's terminal set-up may put COLUMNS/LINES into the C environment (not into
# os.environ), which the CLI subprocesses would inherit and size their tables by. Remove them
# there: setting then deleting through os.environ calls unsetenv. A test that wants a width
# passes COLUMNS in the subprocess's env.
for _name in ("COLUMNS", "LINES"):
    os.environ[_name] = ""
    del os.environ[_name]


@pytest.fixture(scope="session")
def smoke_path() -> Path:
    """The tiny scenario shipped for tests."""
    return REPO_ROOT / "scenarios" / "smoke" / "smoke.toml"
