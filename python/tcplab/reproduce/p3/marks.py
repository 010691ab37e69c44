"""How study 003's report.md shows a check: its verdict mark and its sections' criteria lines,
shared by `report` and the modules that write their own sections (`hz_map`, `moving`)."""

from __future__ import annotations

from collections.abc import Sequence

from tcplab.reproduce.findings import Check
from tcplab.reproduce.report import Report

__all__ = ["criteria", "mark", "mapped_table"]


def criteria(rep: Report, checks: Sequence[Check]) -> None:
    """The criterion (claim) of a section's checks, each distinct one once."""
    rep.bullets(f"Criterion: {claim}" for claim in dict.fromkeys(c.claim for c in checks))


def mark(c: Check) -> str:
    """The verdict as the tables show it: pass, **FAIL**, or the status in italics."""
    return {"pass": "pass", "FAIL": "**FAIL**"}.get(c.status, f"*{c.status}*")


def mapped_table(rep: Report, checks: Sequence[Check], key: str, label: str, shipped_label: str) -> None:
    """A mapped unknown's checks: the criteria, then per check its value (`values[key]`,
    column `label`), figure, measured values, verdict, the shipped verdict (`values["shipped"]`,
    column `shipped_label`) and the change where the two differ."""
    criteria(rep, checks)
    rep.table((label, "id", "measured", "verdict", shipped_label, "change"),
              [(c.values[key], c.figure, c.measured, mark(c), c.values["shipped"],
                f"**{c.values['shipped']} → {c.status}**" if c.values["shipped"] and c.values["shipped"] != c.status else "")
               for c in checks])
