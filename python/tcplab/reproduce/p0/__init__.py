"""Study 000 (parallel BIC streams on a long fat pipe, and the staggered start).

`reproduce(out, quick=False)` runs the shipped scenarios of `scenarios/p0_parallel_bic/`
over several seeds and the map of the unknowns, writes the equivalents of the paper's
Figs. 4–10, the map's figure, one pcapng header capture per case, `results.json` and
`out/report.md`, which sets each finding of the paper (quoted) beside the measured result with
pass or FAIL. `checks(data)` gives the same verdicts for tests.

| module | what it holds |
|---|---|
| `constants` | the shipped scenarios, the testbed's numbers, the findings, the ACK policies |
| `runs` | one run and its measures; `judge` (a seed's verdicts); `map_stats` (the map's hook) |
| `map` | the map of the unknowns on the sweep runner, its table and figure |
| `checks` | the paper's findings judged on the runs |
| `report` | the figures and report.md |
| `study` | the orchestrator: `Plan`, `experiment`, `write_report`, `reproduce` |
"""

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p0.checks import checks
from tcplab.reproduce.p0.constants import BOTTLENECK, CASES, RTT_S, SCENARIOS
from tcplab.reproduce.p0.runs import bottleneck_buffer_path, shipped_buffer
from tcplab.reproduce.p0.study import Plan, experiment, reproduce, write_report

__all__ = ["BOTTLENECK", "CASES", "RTT_S", "SCENARIOS", "Check", "Plan", "bottleneck_buffer_path",
           "checks", "experiment", "reproduce", "shipped_buffer", "write_report"]
