"""Study 003's runs: the per-run hook that keeps what the checks need (the measurements with
the truth over each one's span, the truth in 100 ms bins, per-flow bytes on the bottleneck
after the steady start, the flows' summaries) and the points through the shared runner."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tcplab.analysis.avail import link_capacity, truth
from tcplab.reproduce.p3.constants import LINK, STEADY_S, STUDY
from tcplab.reproduce.runner import run_points
from tcplab.reproduce.scenarios import study_scenario

__all__ = ["HOOK", "keep", "run"]

HOOK = "tcplab.reproduce.p3.runs:keep"


def keep(result: Any, measured: str | None = None, cwnd: bool = False) -> dict[str, Any]:
    """What one run gives the checks (JSON-plain): `meas` (the measurements trace's columns
    and `truth_bps`, the true available bandwidth over each measurement's span, the other flows'
    bytes counted against it), `bins` (time, truth and each flow's bit/s per 100 ms),
    `steady_bps` (each flow's mean bit/s on the bottleneck from STEADY_S to the end), `link_bytes` (each flow's IP bytes on it), `capacity_bps`,
    `flows` (the summary's flow entries) and, with `cwnd`, the measured flow's cwnd trace thinned
    to at most one row per 10 ms (and `cwnd_sha1`, a digest of the whole trace); as JSON text in the column `data`."""
    s = result.summary
    names = {f["id"]: f["name"] for f in s["flows"]}
    usage = result.trace("link_usage")
    cap = link_capacity(result, LINK)
    end = float(s["sim_time_s"])
    interval = float(s["link_usage"]["interval_s"])
    out: dict[str, Any] = {"capacity_bps": cap, "flows": s["flows"], "sim_time_s": end}
    t = usage["time_s"].to_numpy()
    f = usage["flow"].to_numpy()
    b = usage["bytes"].to_numpy().astype(float)
    steady = t > STEADY_S + 1e-9
    span = end - STEADY_S
    out["link_bytes"] = {names[int(i)]: int(b[f == i].sum()) for i in np.unique(f)}
    out["steady_bps"] = {names[int(i)]: float(b[steady & (f == i)].sum() * 8 / span) for i in np.unique(f)}
    # 100 ms bins: each flow's bit/s
    nb = int(np.floor(end / 0.1 + 1e-9))
    idx = np.clip(np.ceil(t / 0.1 - 1e-9).astype(int) - 1, 0, nb - 1)
    bins: dict[str, Any] = {"time_s": [round((i + 1) * 0.1, 6) for i in range(nb)]}
    for i in np.unique(f):
        bins[names[int(i)]] = (np.bincount(idx[f == i], weights=b[f == i], minlength=nb) * 8 / 0.1).tolist()
    out["bins"] = bins
    out["interval_s"] = interval
    if measured is not None:
        m = result.trace("measurements")
        mid = [k for k, v in names.items() if v == measured][0]
        m = m.filter(m["flow"] == mid)
        cols = {c: m[c].to_list() for c in ("time_s", "start_s", "estimate_bps", "flag", "low_bps", "high_bps", "packets")}
        if m.height:
            tr = truth(result, LINK, measured=measured, spans=[(a, z) for a, z in zip(cols["start_s"], cols["time_s"])])
            cols["truth_bps"] = tr["avail_bps"].to_list()
        else:
            cols["truth_bps"] = []
        out["meas"] = cols
        other = [n for n in bins if n not in ("time_s", measured)]
        out["bins"]["truth_bps"] = (cap - np.sum([np.asarray(bins[n]) for n in other], axis=0)).tolist() if other else [cap] * nb
    if cwnd:
        c = result.trace("cwnd")
        mid = [k for k, v in names.items() if v == measured][0] if measured else 0
        c = c.filter(c["flow"] == mid)
        tt = c["time_s"].to_numpy()
        out["cwnd_sha1"] = hashlib.sha1(tt.tobytes() + c["cwnd_bytes"].to_numpy().tobytes()).hexdigest()
        keepi = np.unique(np.floor(tt / 0.01).astype(int), return_index=True)[1] if len(tt) else []
        out["cwnd"] = {"time_s": tt[keepi].tolist(), "cwnd_bytes": c["cwnd_bytes"].to_numpy()[keepi].tolist(),
                       "srtt_s": c["srtt_s"].to_numpy()[keepi].tolist()}
    return {"data": json.dumps(out)}


def run(points: Sequence[tuple[str, Mapping[str, Any]]], seeds: Sequence[int], *, hook_args: Mapping[str, Any],
        out: Path | None, workers: int | None, cluster: Any, name: str, hook: str = HOOK) -> list[list[dict[str, Any]]]:
    """Run `points` (shipped scenario name, overrides) over `seeds`; per point, the hook's
    dict per seed, in seed order (`hook`: `keep` unless another hook that returns its data as
    JSON text in the column `data`)."""
    table = run_points([(study_scenario(STUDY, s), dict(o)) for s, o in points], seeds,
                       hook=hook, hook_args=dict(hook_args), out=out, workers=workers, cluster=cluster, name=name)
    res: list[list[dict[str, Any]]] = [[] for _ in points]
    for row in table.sort(["index", "seed"]).iter_rows(named=True):
        res[row["index"]].append({"seed": row["seed"], "wall_time_s": row["wall_time_s"], **json.loads(row["data"])})
    return res
