"""Analysis of tcplab traces: pure functions, polars DataFrames in, DataFrames or floats out.

Inputs are the traces of a `Result` (`result.trace("throughput")`, ...) or the same frames
read back from a saved run (`polars.read_parquet("out/run/cwnd.parquet")`):

- `throughput` (time_s = bin end, flow, bytes, bps), `cwnd`, `queue`, `events` traces;
- a `capture` (one row per packet header seen at a tap: time_s, tap, flow, dir, seq, ack,
  len, flags, ip_len, window, sack_blocks, retransmit);
- the `link_usage` trace (time_s = interval end, pipe, flow, bytes: IP bytes a watched link
  direction finished serializing per flow in the interval).

Times are in seconds, sizes in bytes, rates in bits per second. Functions that take a flow
accept its id or its name (when the frame has `flow_name`); outputs keep `flow_name`.

| topic | functions |
|---|---|
| throughput | `throughput_bins`, `goodput`, `trace_interval` |
| fairness | `jain_index`, `jain_over_time` |
| TCP events | `dupack_events`, `retransmissions`, `loss_times`, `first_occurrence_order` |
| timing | `send_order_per_rtt`, `send_gap_per_rtt`, `send_rounds`, `send_gap_per_round`, |
|        | `data_spacing`, `ack_spacing`, `spacing_stats`, `outstanding_data` |
| queues | `queue_occupancy`, `queue_series` |
| flow completion | `fct`, `fct_stats`, `fct_by_size`; `message_fct` (request/response) |
| statistics | `mean_ci`, `t_quantile`, `rank_agreement`, `nir`, `p_sru` |
| available bandwidth | `available_bandwidth`, `link_capacity`, `rebin_truth`; `avail.truth` (from a Result) |
"""

from tcplab.analysis.avail import available_bandwidth, link_capacity, rebin_truth
from tcplab.analysis.fairness import JainOverTime, jain_index, jain_over_time
from tcplab.analysis.fct import fct, fct_by_size, fct_stats, message_fct
from tcplab.analysis.queues import queue_occupancy, queue_series
from tcplab.analysis.stats import mean_ci, nir, p_sru, rank_agreement, t_quantile
from tcplab.analysis.tcpevents import (
    dupack_events,
    first_occurrence_order,
    loss_times,
    retransmissions,
)
from tcplab.analysis.throughput import goodput, throughput_bins, trace_interval
from tcplab.analysis.timing import (
    ack_spacing,
    data_spacing,
    outstanding_data,
    send_gap_per_round,
    send_gap_per_rtt,
    send_order_per_rtt,
    send_rounds,
    spacing_stats,
)

__all__ = [
    "JainOverTime",
    "ack_spacing",
    "available_bandwidth",
    "data_spacing",
    "dupack_events",
    "fct",
    "fct_by_size",
    "fct_stats",
    "message_fct",
    "first_occurrence_order",
    "goodput",
    "jain_index",
    "jain_over_time",
    "link_capacity",
    "loss_times",
    "mean_ci",
    "nir",
    "outstanding_data",
    "p_sru",
    "queue_occupancy",
    "queue_series",
    "rank_agreement",
    "rebin_truth",
    "retransmissions",
    "send_gap_per_round",
    "send_gap_per_rtt",
    "send_order_per_rtt",
    "send_rounds",
    "spacing_stats",
    "t_quantile",
    "throughput_bins",
    "trace_interval",
]
