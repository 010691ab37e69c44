"""Study 001's runs: the schemes as overrides of the shipped models, run through the shared
runner on the sweep runner (a local pool or a Dask cluster), and each run's goodput and NIR.

A run's goodput is the payload the clients received over the time from the first request to
the last block (Mb/s); its NIR is the data packets the servers sent over the packets the
blocks need with no loss (eq. (2): P_Sent / P_SRU, at least 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.reproduce import runner
from tcplab.reproduce.p1.constants import METRICS, MODELS, RUN_CAP_S, SCHEME_PATHS, SCHEMES, STUDY, flow_path
from tcplab.reproduce.scenarios import scenario_value, study_scenario
from tcplab.sweeps.stats import sweep_summary

__all__ = ["blocks", "derive", "model_path", "packets_per_sru", "run_points", "summarise"]


def model_path(model: str) -> Path:
    """The shipped scenario file of `model` ("A" or "B")."""
    return study_scenario(STUDY, MODELS[model]["scenario"])


def packets_per_sru(model: str) -> int:
    """Data packets one SRU needs with no loss (45 for 64 KiB at MSS 1460)."""
    path = model_path(model)
    sru = _bytes(scenario_value(path, flow_path(0, "sru")))
    mss = int(scenario_value(path, "defaults.tcp.mss"))
    return math.ceil(sru / mss)


def blocks(model: str) -> int:
    """Blocks each client reads per run (the shipped scenario's)."""
    return int(scenario_value(model_path(model), flow_path(0, "blocks")))


def _bytes(v: Any) -> int:
    if isinstance(v, int):
        return v
    units = {"KiB": 1024, "KB": 1000, "MiB": 1 << 20, "MB": 10**6, "B": 1}
    for u, f in units.items():
        if str(v).endswith(u):
            return int(float(str(v)[: -len(u)]) * f)
    raise ValueError(f"not a size: {v!r}")


def run_points(model: str, schemes: Sequence[str], servers: Sequence[int], seeds: Sequence[int], *,
               overrides: Mapping[str, Any] | None = None, out: Path | None = None, workers: int | None = None,
               cluster: Any = None, name: str = "p1") -> pl.DataFrame:
    """Schemes × active servers × seeds in `model`, through the shared runner (one sweep, its
    store `out`); the table of the runs with `scheme` and `servers` columns and the derived
    measures, in that order (schemes, then servers, then seeds)."""
    paths = MODELS[model]["servers"]
    grid = [(s, n) for s in schemes for n in servers]
    # An override of a scheme's own setting (`rto_min`, …) replaces the scheme's value in every
    # point (a point's values would otherwise win over the overrides).
    own = {p: v for p, v in (overrides or {}).items() if p in SCHEME_PATHS}
    points = [(model_path(model), {**{p: own.get(p, SCHEMES[s][p]) for p in SCHEME_PATHS}, **dict.fromkeys(paths, n)}) for s, n in grid]
    over = {"run.duration": f"{RUN_CAP_S:g}s", "run.stop": "flows-done", **{p: v for p, v in (overrides or {}).items() if p not in own}}
    table = runner.run_points(points, seeds, overrides=over, metrics=METRICS, out=out, shared_store=True, workers=workers,
                              cluster=cluster, name=name)
    at = table["index"].to_list()
    table = table.with_columns(pl.Series("scheme", [grid[i][0] for i in at]), pl.Series("servers", [grid[i][1] for i in at]))
    return derive(table, model)


def derive(table: pl.DataFrame, model: str) -> pl.DataFrame:
    """Add `goodput_mbps`, `nir` (null for a run the time cap stopped), `unfinished` and
    `events_per_packet` to a table of runs of `model`."""
    need = pl.col("servers") * MODELS[model]["clients"] * packets_per_sru(model) * blocks(model)
    return table.with_columns(
        (pl.col("delivered") * 8 / (pl.when(pl.col("finished") == pl.col("connections")).then(pl.col("last_finish")).otherwise(pl.col("sim_time"))
                                    - pl.col("first_start")) / 1e6).alias("goodput_mbps"),
        (pl.col("connections") - pl.col("finished")).alias("unfinished"),
        # NIR counts every block's packets as needed: defined for reads that completed.
        pl.when(pl.col("finished") == pl.col("connections")).then(pl.col("sent") / need).otherwise(None).alias("nir"),
        (pl.col("events") / pl.col("sent")).alias("events_per_packet"),
        pl.lit(model).alias("model"),
    )


def summarise(table: pl.DataFrame, by: Sequence[str] = ("model", "scheme", "servers")) -> pl.DataFrame:
    """Per point: mean and 95 % Student-t half-width of goodput and NIR over the seeds, the
    smallest NIR, the drops, requests and timeouts (means) and the runs."""
    stats = sweep_summary(table, by=list(by), value=["goodput_mbps", "nir"])
    wide = None
    for metric in ("goodput_mbps", "nir"):
        part = stats.filter(pl.col("metric") == metric).select(
            *by, pl.col("mean").alias(metric), pl.col("ci").alias(f"{metric}_ci"), pl.col("runs"))
        wide = part if wide is None else wide.join(part.drop("runs"), on=list(by), maintain_order="left")
    extra = table.group_by(list(by), maintain_order=True).agg(
        pl.col("nir").min().alias("nir_min"), pl.col("dropped").sum(), pl.col("requests").mean(), pl.col("timeouts").mean(),
        pl.col("unfinished").sum())
    assert wide is not None
    return wide.join(extra, on=list(by), maintain_order="left")
