"""Study 004's search for the least CBR that deadlocks (Figs. 5–6), as the paper ran it: the
CBR raised from low values until the flow deadlocks (§4.1 L130), per (curve, socket buffer) and
criterion, every round's points run together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from tcplab.reproduce.p4.constants import CBR_TOP_MBPS, CRITERIA, SCAN_MBPS
from tcplab.reproduce.p4.runs import Spec, summarise

__all__ = ["scan_levels", "search_critical"]


def scan_levels(step: float = SCAN_MBPS, top: float = CBR_TOP_MBPS) -> list[float]:
    """The CBRs the upward scan tries: step, 2·step, … up to `top`, and `top` itself."""
    n = int(top // step)
    levels = [round(step * i, 4) for i in range(1, n + 1)]
    return levels if levels and levels[-1] >= top else [*levels, top]


def search_critical(points: list[tuple[tuple[int, int, str], int]], seeds: tuple[int, ...], tol: float,
                    run: Callable[[list[Spec]], pl.DataFrame], progress: Callable[[str], None] = lambda _: None,
                    criteria: dict[str, Callable[[dict[str, Any]], bool]] = CRITERIA,
                    step: float = SCAN_MBPS) -> tuple[dict[Any, Any], pl.DataFrame]:
    """The least CBR meeting each criterion per (curve, socket buffer). A curve is (MSS, cells,
    CBR unit); `points` are (curve, socket bytes).

    As the paper (§4.1 L130: "UBR トラフィックのスループットが deadlock に陥るまで CBR トラフィックの
    帯域を増加させて"): every point is run at CBR = step, 2·step, … up to 140 Mb/s
    (`scan_levels`) until each criterion is met; the first CBR meeting it brackets the
    critical CBR as (the CBR before it, that CBR], and that bracket is halved until at most `tol`
    wide (monotonicity in the CBR is assumed only within that one step). A criterion met at no
    CBR of the scan is "none" (the paper's plotted 140). Nothing is assumed above the first
    CBR that meets it: a criterion met at 10 Mb/s and not at 140 has its critical CBR ≤ 10.
    The criteria share the runs of the points they probe alike. Returns
    {(curve, sock, criterion): (lo, hi or None)} (lo: the largest CBR tried below hi that does
    not meet it; with hi None the scan's top) and every run (one row per seed)."""
    levels = scan_levels(step)
    level = {(c, s): 0 for c, s in points}
    scanning = {(c, s, k) for c, s in points for k in criteria}
    bracket: dict[Any, list[Any]] = {}
    refining: dict[Any, float] = {}
    tested = []
    rounds = 0
    while scanning or refining:
        rounds += 1
        probe = {key: levels[level[key[:2]]] for key in scanning} | refining
        specs = {key: Spec(mss=key[0][0], sock=key[1], cells=key[0][1], cbr_mbps=round(c, 4), unit=key[0][2]) for key, c in probe.items()}
        progress(f"Figs. 5–6 search, round {rounds}: {len(set(specs.values()))} points × {len(seeds)} seeds")
        raw = run(list(set(specs.values())))
        tested.append(raw)
        rows = {(r["mss"], r["sock"], r["cells"], r["cbr_mbps"], r["unit"]): r for r in summarise(raw).iter_rows(named=True)}
        met = {key: criteria[key[2]](rows[(s.mss, s.sock, s.cells, s.cbr_mbps, s.unit)]) for key, s in specs.items()}
        for key in [k for k in specs if k in refining]:
            lo, hi = bracket[key]
            bracket[key] = [lo, specs[key].cbr_mbps] if met[key] else [specs[key].cbr_mbps, hi]
        for key in [k for k in specs if k in scanning]:
            i = level[key[:2]]
            if met[key]:
                bracket[key] = [levels[i - 1] if i > 0 else 0.0, levels[i]]
                scanning.discard(key)
            elif i == len(levels) - 1:
                bracket[key] = [levels[i], None]
                scanning.discard(key)
        nxt = {key: (lo + hi) / 2 for key, (lo, hi) in bracket.items() if hi is not None and hi - lo > tol}
        for c, s in {key[:2] for key in scanning}:
            level[(c, s)] += 1
        refining = nxt
    order = [(c, s, k) for c, s in points for k in criteria]
    return {key: tuple(bracket[key]) for key in order}, pl.concat(tested, how="diagonal_relaxed")
