"""Reproductions of the studies tcplab was built for, and the framework they share.

One package per study (`p0`, `p1`, `p2`, `p3`, `p4`) runs the study's shipped scenarios (`scenarios/pN_*/`,
found in the installed package) and writes figures and a report; each is split into
`constants`, `runs`, `checks`, `report`, the orchestrator `study` and, where the study maps its
unknowns in runs of their own, `map` (see each package's `__init__`). The shared pieces:

| module | what it gives a study |
|---|---|
| `findings` | `Check`, one finding of the paper beside the measurement; `verdict` |
| `report` | `Report`, a Markdown builder for report.md; `write_results_json` |
| `figures` | `write_figures` (PNG and SVG per figure), `new_figure` |
| `scenarios` | `study_dir`, `study_scenario`; `queue_override` (a buffer by queue name) |
| `runner` | `run_points`: a study's points through the sweep runner (resumable, local or Dask) |
| `output` | `check_out` (--out holds only what tcplab wrote) and `publish` (the report moved in whole) |

A study package provides `reproduce(out, quick=False, progress=..., *, workers=None,
cluster=None) -> list[Check]` (see `Study`) and is registered in `STUDIES`, which `tcplab reproduce` offers. The study packages
(and their plotting) are imported on first use: the command line, and every sweep worker that
re-imports it, start without them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from tcplab.reproduce.findings import Check, missing_quotes, verdict

__all__ = ["STUDIES", "STUDY_NAMES", "Check", "Study", "missing_quotes", "p0", "p1", "p2", "p3", "p4", "verdict"]

STUDY_NAMES = ("p0", "p1", "p2", "p3", "p4")
"""The studies `tcplab reproduce` offers (the keys of `STUDIES`)."""


class Study(Protocol):
    """What `tcplab reproduce` needs of a study package."""

    def reproduce(
        self, out: str | Path, quick: bool = False, progress: Callable[[str], None] = ..., *,
        workers: int | None = None, cluster: Any = None,
    ) -> list[Check]:
        """Run the study, write its figures, report.md and results.json into `out`, and
        return its checks; `quick` runs a shorter plan, `progress` is told what runs,
        `workers` local processes run them (None: one per CPU; `tcplab reproduce --workers`)
        or the Dask `cluster`."""
        ...


def __getattr__(name: str) -> Any:
    """`STUDIES` (study name → package with `reproduce(out, quick=False, progress=...)`) and the
    study packages, imported when first asked for."""
    if name == "STUDIES":
        studies = {n: importlib.import_module(f"tcplab.reproduce.{n}") for n in STUDY_NAMES}
        globals()["STUDIES"] = studies
        return studies
    if name in STUDY_NAMES:
        return importlib.import_module(f"tcplab.reproduce.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
