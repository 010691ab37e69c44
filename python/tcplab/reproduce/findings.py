"""A study's findings set beside the measurements: the `Check` record and the verdict."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Check", "verdict"]


@dataclasses.dataclass
class Check:
    """One finding of a paper set beside the measurement.

    Reports show `figure`, `claim`, `measured` and pass/fail in a table row; `results.json`
    keeps every field.
    """

    figure: str
    """Where the finding is in the paper: "Fig. 4", "§5"; or "not in the paper"."""
    claim: str
    """The finding, in the paper's terms (with the threshold the check applies)."""
    measured: str
    """What the runs gave, as text for the report (e.g. "Jain 0.854, 0.913 (< 0.95 in 2/2)")."""
    passed: bool
    """Whether the measurement bears the finding out."""
    paper: bool = True
    """True for a finding of the paper (these decide the exit status of `tcplab reproduce`);
    False for a comparison beyond it (remedies the paper cites, other congestion controls)."""
    values: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """The numbers behind `measured`, by name (JSON values; units in the name, e.g. `gap_s`),
    for results.json and for tests."""


def verdict(checks: Iterable[Check]) -> tuple[int, int]:
    """(findings of the paper that hold, findings of the paper); comparisons beyond the paper
    are not counted."""
    paper = [c for c in checks if c.paper]
    return sum(c.passed for c in paper), len(paper)
