"""Study 001 (TCP incast; FGTCP, LNRTCP, HYBTCP and AHTCP, scored by goodput and NIR).

`reproduce(out, quick=False)` runs the shipped models of `scenarios/p1_incast/` on the sweep
runner (a local process pool, or a Dask cluster with `cluster=`): every scheme over the active
server counts and seeds in both models, then the maps of the unknowns (AHTCP's threshold in
each model, the base RTT and the RTOmins in both, AHTCP's open decisions) and the comparisons beyond the paper. It writes the
equivalents of Figs. 3–6, the maps' figures, `results.json` and `report.md`, which sets each
statement of the paper (quoted) beside the measured means, pass or FAIL. The runs themselves
are kept in `out/runs/` (resumable stores).

| module | what it holds |
|---|---|
| `constants` | the schemes, the models, the run's limits and metrics, the maps' settings, the remedies; `flow_path` |
| `runs` | the runs through the shared runner; goodput and NIR per run; `summarise` |
| `map` | the maps of the unknowns (the threshold per model, the settings in both models, AHTCP's decisions), every finding judged at each point |
| `beyond` | the remedies since the paper and the threshold rules, scored over cases that separate them |
| `paired` | the noise criterion: paired differences over the seeds with their 95 % t-interval |
| `checks` | the paper's findings judged on the runs (orders by `paired`, levels on the means) |
| `report` | the figures and report.md |
| `study` | the orchestrator: `Plan`, `experiment`, `write_report`, `reproduce` |
"""

from tcplab.reproduce.findings import Check
from tcplab.reproduce.p1.study import Plan, experiment, reproduce, write_report

__all__ = ["Check", "Plan", "experiment", "reproduce", "write_report"]
