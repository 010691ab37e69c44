"""Study 004's search for the least CBR that deadlocks (Figs. 5–6): a bisection per (curve,
socket buffer) and criterion, every round's points run together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from tcplab.reproduce.p4.constants import CBR_TOP_MBPS, CRITERIA
from tcplab.reproduce.p4.runs import Spec, summarise

__all__ = ["search_critical"]


def search_critical(points: list[tuple[tuple[int, int, str], int]], seeds: tuple[int, ...], tol: float,
                    run: Callable[[list[Spec]], pl.DataFrame], progress: Callable[[str], None] = lambda _: None,
                    criteria: dict[str, Callable[[dict[str, Any]], bool]] = CRITERIA) -> tuple[dict[Any, Any], pl.DataFrame]:
    """The least CBR meeting each criterion per (curve, socket buffer), by bisection over
    (0, 140] Mb/s. A curve is (MSS, cells, CBR unit); `points` are (curve, socket bytes).

    Each point is first run at 140 Mb/s: a criterion not met there is "none" (the paper's
    plotted 140). Otherwise its bracket (lo, hi] = (0, 140] is halved until at most `tol`
    wide (monotone in the CBR, assumed: the spot checks test it). The criteria share the runs
    of the points they probe alike. Returns {(curve, sock, criterion): (lo, hi or None)} and
    every run (one row per seed)."""
    state: dict[Any, list[Any]] = {(c, s, k): [0.0, CBR_TOP_MBPS] for c, s in points for k in criteria}
    probe = {key: CBR_TOP_MBPS for key in state}
    tested = []
    rounds = 0
    while probe:
        rounds += 1
        specs = {key: Spec(mss=key[0][0], sock=key[1], cells=key[0][1], cbr_mbps=round(c, 4), unit=key[0][2]) for key, c in probe.items()}
        progress(f"Figs. 5–6 search, round {rounds}: {len(set(specs.values()))} points × {len(seeds)} seeds")
        raw = run(list(set(specs.values())))
        tested.append(raw)
        rows = {(r["mss"], r["sock"], r["cells"], r["cbr_mbps"], r["unit"]): r for r in summarise(raw).iter_rows(named=True)}
        nxt = {}
        for key, spec in specs.items():
            met = criteria[key[2]](rows[(spec.mss, spec.sock, spec.cells, spec.cbr_mbps, spec.unit)])
            lo, hi = state[key]
            if spec.cbr_mbps == CBR_TOP_MBPS and not met:
                state[key] = [lo, None]
                continue
            if spec.cbr_mbps < CBR_TOP_MBPS:
                state[key] = [lo, spec.cbr_mbps] if met else [spec.cbr_mbps, hi]
            lo, hi = state[key]
            if hi - lo > tol:
                nxt[key] = (lo + hi) / 2
        probe = nxt
    return {key: tuple(v) for key, v in state.items()}, pl.concat(tested, how="diagonal_relaxed")
