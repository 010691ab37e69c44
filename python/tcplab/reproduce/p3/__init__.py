"""Study 003 (ImTCP's inline available-bandwidth measurement and ImTCP-bg's background
transfer on FreeBSD 4.10; Japanese slides, 2006).

`reproduce(out, quick=False)` runs the shipped `scenarios/p3_imtcp/` on the sweep runner: block
A (the estimate against the simulator's true available bandwidth beside UDP and TCP cross
traffic whose level steps, under each trend rule), block B (the HZ sweep) and block D (Reno,
TCP-LP, ImTCP-bg and LEDBAT as background transfers beside UDP cross traffic, and the cross
traffic alone), and writes figures, `results.json` and `report.md` (each statement of the slides
quoted beside the measured values: pass, FAIL, inconclusive or not exercised).

| module | what it holds |
|---|---|
| `constants` | the scenarios, the link, the criteria of dev/p3/FINDINGS.md, the grids |
| `stats` | the verdict rules across seeds (95 % t-intervals) |
| `runs` | the per-run hook (`keep`) and the points through the shared runner |
| `checks` | the findings judged on the kept data |
| `report` | the figures and report.md |
| `study` | the orchestrator: `Plan`, `experiment`, `judge`, `reproduce` |
"""

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p3.study import Plan, experiment, judge, reproduce

__all__ = ["Check", "Plan", "experiment", "judge", "reproduce"]
