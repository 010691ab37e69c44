"""Study 001's runs: the schemes as overrides of the shipped models, the sweeps that run them on
the sweep runner (a local pool or a Dask cluster), and each run's goodput and NIR.

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

from tcplab.reproduce.scenarios import scenario_value, study_scenario
from tcplab.sweeps.runner import sweep
from tcplab.sweeps.stats import sweep_summary

__all__ = [
    "AHTCP_THRESHOLD", "CEILING_MBPS", "FG_RTO_MIN", "MODELS", "SCHEMES", "SCHEME_ORDER",
    "derive", "packets_per_sru", "run_points", "summarise",
]

FG_RTO_MIN = "200us"
"""FGTCP's RTOmin ("数 100 マイクロ秒"; 200 µs after Vasudevan et al., README A2)."""

AHTCP_THRESHOLD = "500Mbps"
"""AHTCP's fixed threshold in the shipped models (`[defaults.tcp.ahtcp]`): about half the client
link's goodput ceiling (README A11; the paper gives no value, and the threshold map shows where
each finding holds)."""

SCHEMES: dict[str, dict[str, Any]] = {
    "standard": {"defaults.tcp.rto_min": "200ms", "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "none"},
    "FGTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "none"},
    "LNRTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "linear", "defaults.tcp.variant": "none"},
    "HYBTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "hybrid", "defaults.tcp.variant": "none"},
    "HYBTCP-b": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "hybrid-linear-first", "defaults.tcp.variant": "none"},
    "AHTCP": {"defaults.tcp.rto_min": FG_RTO_MIN, "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "ahtcp"},
    "AHTCP/200ms": {"defaults.tcp.rto_min": "200ms", "defaults.tcp.rto_backoff": "exponential", "defaults.tcp.variant": "ahtcp"},
}
"""Each scheme as the three settings that tell them apart (zipped into one sweep axis).
HYBTCP is form (a), exponential for 3 backoffs then linear; HYBTCP-b linear for 3, then
exponential. AHTCP runs over FGTCP's RTOmin; AHTCP/200ms over the standard one (README A12)."""

SCHEME_ORDER = tuple(SCHEMES)
_ZIP = ("defaults.tcp.rto_min", "defaults.tcp.rto_backoff", "defaults.tcp.variant")

MODELS: dict[str, dict[str, Any]] = {
    "A": {"scenario": "model_a", "servers": ("flows.0.block_read.servers",), "clients": 1,
          "ceiling_mbps": (1000 - 10) * 1460 / 1500},
    "B": {"scenario": "model_b", "servers": ("flows.0.block_read.servers", "flows.1.block_read.servers"), "clients": 4,
          "ceiling_mbps": 1000 * 1460 / 1500 + (1000 - 10) * 1460 / 1500},
}
"""The two network models: the shipped scenario, the paths of the active-server count, the
clients, and the goodput ceiling (Mb/s): each bottleneck's 1 Gb/s less the background where it
crosses (model A's client port; one of model B's two inter-switch ports), times 1460/1500."""

CEILING_MBPS = {m: v["ceiling_mbps"] for m, v in MODELS.items()}

RUN_CAP_S = 20.0
"""Simulated time a run may take at most: a setting under which the reads stall (AHTCP read
literally at 256 servers) ends there, its goodput counted over the time it ran and its
unfinished connections reported."""

METRICS = {
    "delivered": "sum(flows[kind=tcp].bytes_delivered)",
    "sent": "sum(flows[kind=tcp].segments_sent)",
    "first_start": "min(flows[kind=tcp].data_start_s)",
    "last_finish": "max(flows[kind=tcp].finish_s)",
    "finished": "count(flows[kind=tcp].finish_s)",
    "timeouts": "sum(flows[kind=tcp].timeouts)",
    "requests": "sum(flows[kind=tcp].requests)",
    "dropped": "sum(queues.dropped)",
    "events": "events",
    "sim_time": "sim_time_s",
    "connections": "count(flows[kind=tcp].bytes_delivered)",
}


def packets_per_sru(model: str) -> int:
    """Data packets one SRU needs with no loss (45 for 64 KiB at MSS 1460)."""
    path = study_scenario("p1_incast", MODELS[model]["scenario"])
    sru = _bytes(scenario_value(path, "flows.0.block_read.sru"))
    mss = int(scenario_value(path, "defaults.tcp.mss"))
    return math.ceil(sru / mss)


def blocks(model: str) -> int:
    """Blocks each client reads per run (the shipped scenario's)."""
    return int(scenario_value(study_scenario("p1_incast", MODELS[model]["scenario"]), "flows.0.block_read.blocks"))


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
    """One sweep over schemes × active servers × seeds in `model`, on the sweep runner; the
    table of the runs with `scheme` and `servers` columns and the derived measures."""
    m = MODELS[model]
    paths = m["servers"]
    server_axis: Any = list(servers) if len(paths) == 1 else [tuple([n] * len(paths)) for n in servers]
    axes = {
        _ZIP: [tuple(SCHEMES[s][p] for p in _ZIP) for s in schemes],
        (paths[0] if len(paths) == 1 else paths): server_axis,
    }
    over = {"run.duration": f"{RUN_CAP_S:g}s", "run.stop": "flows-done", **(overrides or {})}
    table = sweep(str(study_scenario("p1_incast", m["scenario"])), axes=axes, seeds=list(seeds), metrics=METRICS,
                  overrides=over, out=out, workers=workers, cluster=cluster, name=name)
    failed = table.filter(pl.col("error").is_not_null())
    if failed.height:
        raise RuntimeError(f"{failed.height} runs of {name} failed: {failed['error'][0]}")
    by_settings = {tuple(SCHEMES[s][p] for p in _ZIP): s for s in schemes}
    scheme = [by_settings[tuple(row)] for row in table.select(list(_ZIP)).iter_rows()]
    table = table.with_columns(pl.Series("scheme", scheme), pl.col(paths[0]).alias("servers"))
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
