"""A study's findings set beside the measurements: the `Check` record and the verdict."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Check", "missing_quotes", "not_exercised", "verdict"]


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
    quote: str = ""
    """The paper's own sentence the finding rests on, in the seed's language (a finding of the
    paper must have one; `missing_quotes` lists the ones without)."""
    location: str = ""
    """Where the quote is in the paper: section and paragraph, e.g. "§4.1 ¶3 (Fig. 7)"."""
    exercised: bool = True
    """False when the runs never produced the situation the finding is about (e.g. a claim
    about congestion losses in runs that lost nothing): neither borne out nor contradicted.
    Such a check has `passed` False (the finding is not shown to hold) and reports mark it
    "not exercised" rather than FAIL."""
    inconclusive: bool = False
    """True when the runs met the finding's situation but the seeds' spread lets the measurement
    fall on either side of the criterion (a 95 % interval across seeds that straddles it):
    `passed` is False and reports mark it "inconclusive" rather than FAIL."""

    def __post_init__(self) -> None:
        if not self.exercised and self.passed:
            raise ValueError(f"{self.claim!r}: a check that was not exercised cannot pass")
        if self.inconclusive and self.passed:
            raise ValueError(f"{self.claim!r}: an inconclusive check cannot pass")

    @property
    def status(self) -> str:
        """"pass", "FAIL", "inconclusive" or "not exercised"."""
        if self.passed:
            return "pass"
        if not self.exercised:
            return "not exercised"
        return "inconclusive" if self.inconclusive else "FAIL"


def verdict(checks: Iterable[Check]) -> tuple[int, int]:
    """(findings of the paper that hold, findings of the paper); comparisons beyond the paper
    are not counted."""
    paper = [c for c in checks if c.paper]
    return sum(c.passed for c in paper), len(paper)


def not_exercised(checks: Iterable[Check]) -> int:
    """How many findings of the paper the runs could not exercise (counted in `verdict`'s
    total, not among those that hold)."""
    return sum(1 for c in checks if c.paper and not c.exercised)


def missing_quotes(checks: Iterable[Check]) -> list[Check]:
    """The findings of the paper that carry no quote or no location (a study's tests assert
    this is empty: every finding a check tests is written with its sentence and place)."""
    return [c for c in checks if c.paper and not (c.quote.strip() and c.location.strip())]
