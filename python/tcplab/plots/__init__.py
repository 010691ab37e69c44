"""Figures of tcplab traces (matplotlib). Each function returns a `matplotlib.figure.Figure`
drawn on an Agg canvas (no pyplot state, nothing shown); save it with `fig.savefig(path)`.

| function | figure |
|---|---|
| `throughput(df, bin_s)` | throughput per flow vs time, any bin (throughput trace or capture) |
| `event_raster(df)` | dupACKs, retransmissions, fast retransmits, timeouts per flow vs time |
| `sequence(capture, flow)` | tcptrace-style time-sequence graph, retransmissions in red |
| `cwnd(cwnd_df)` | cwnd, ssthresh, in-flight (and outstanding data at a tap) per flow |
| `queue(queue_df)` | queue length vs time |
| `standard_figures(dir)` | the set `tcplab plot` renders for a saved run |

A sweep's figure (a metric's mean over seeds against an axis) is `tcplab.sweep_plot`.
"""

from tcplab.plots._cwnd import cwnd
from tcplab.plots._events import event_raster
from tcplab.plots._queue import queue
from tcplab.plots._sequence import sequence
from tcplab.plots._standard import load_traces, save_figures, standard_figures
from tcplab.plots._throughput import throughput

__all__ = [
    "cwnd",
    "event_raster",
    "load_traces",
    "queue",
    "save_figures",
    "sequence",
    "standard_figures",
    "throughput",
]
