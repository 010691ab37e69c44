"""Reproduce study 002: the Data Reservoir (Nakamura et al., 2003) — striped disk servers moving
a file's blocks over parallel iSCSI/TCP streams across a 200 ms path.

`constants` (the study's values and the plan's points), `measures` (the per-run metric hook:
aggregate and per-stream rates, stragglers, average/peak, rates on the bottleneck), `runs` (the
experiments through the shared runner), `checks` (every finding of the paper, each with its
sentence, place, measured values and verdict — the ones whose mechanism tcplab lacks are listed
as not run), `report` (figures and report.md) and the orchestrator `study`.
"""

from tcplab.reproduce.p2.study import Plan, experiment, reproduce, write_report

__all__ = ["Plan", "experiment", "reproduce", "write_report"]
