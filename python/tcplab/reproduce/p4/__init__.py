"""Study 004 (TCP over a congested ATM switch: the throughput "deadlock" of UBR TCP under CBR,
Nakanishi et al., c. 1999).

`reproduce(out, quick=False)` runs the shipped `scenarios/p4_atm/` on the sweep runner: Fig. 2
(throughput against the cell buffer for five MTUs), Table 2 and Figs. 3–4 (25 KB against 38 KB,
with the sender's trace), Figs. 5–6 (the least CBR that deadlocks, found per socket buffer as the
paper did: the CBR raised until deadlock), the unknowns mapped (an effective UBR buffer, the CBR unit, the MSS rule), and
beyond the paper a first-principles predictor of the boundary, EPD/PPD, and TCP against TCP.
It writes the figures, `results.json` and `report.md` (each statement of the paper quoted
beside the measured values, pass or FAIL). The runs are kept in `out/runs/` (resumable).

| module | what it holds |
|---|---|
| `constants` | the shipped scenarios, the host profile, the line, the paper's grids, the criteria, the metrics |
| `atm` | the ATM arithmetic: MSS, cells per segment, the bandwidth left to UBR, the deadlock line |
| `variants` | the readings of the unknowns (`Variant`, `VARIANTS`) |
| `runs` | a point (`Spec`), the runs through the shared runner, their summary, the traced runs |
| `search` | the upward search for the least CBR that deadlocks (Figs. 5–6) |
| `checks` | the paper's findings judged under each reading (`View`) |
| `predictor` | the boundary from first principles, and the comparisons beyond the paper |
| `report` | the figures and report.md |
| `study` | the orchestrator: `Plan`, `experiment`, `write_report`, `reproduce` |
| `depth` | issue 33: depth and onset mapped by mechanism (`depth_table`, `table2_scan`; not part of `reproduce`) |
"""

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p4.search import search_critical
from tcplab.reproduce.p4.study import Plan, experiment, reproduce, search_points, write_report
from tcplab.reproduce.p4.variants import VARIANTS, Variant

__all__ = ["VARIANTS", "Check", "Plan", "Variant", "experiment", "reproduce", "search_critical", "search_points",
           "write_report"]
