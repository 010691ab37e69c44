"""tcplab.plots: each function returns a Figure with labelled axes and the expected artists."""

import io

import polars as pl
import pytest
from handmade import EVENTS, QUEUE, capture, throughput_trace
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from tcplab import plots

U64_MAX = 2**64 - 1

CWND = pl.DataFrame(
    {
        "time_s": [0.0, 0.1, 0.2, 0.3, 0.0, 0.15],
        "flow": [0, 0, 0, 0, 1, 1],
        "cwnd_bytes": [4380, 8760, 4380, 5840, 4380, 5840],
        "ssthresh_bytes": [U64_MAX, U64_MAX, 4380, 4380, U64_MAX, U64_MAX],
        "srtt_s": [0.0, 0.02, 0.02, 0.02, 0.0, 0.02],
        "inflight_bytes": [1, 8760, 8760, 5840, 1, 5840],
        "flow_name": ["a", "a", "a", "a", "b", "b"],
    },
    schema_overrides={
        "flow": pl.UInt32,
        "cwnd_bytes": pl.UInt64,
        "ssthresh_bytes": pl.UInt64,
        "inflight_bytes": pl.UInt64,
    },
)


def labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def line_labels(ax):
    return [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]


def assert_renders(fig):
    assert isinstance(fig, Figure)
    assert isinstance(fig.canvas, FigureCanvasAgg)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue().startswith(b"\x89PNG")


def test_throughput_from_the_trace():
    fig = plots.throughput(throughput_trace(), 0.3)
    assert_renders(fig)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_ylabel() == "throughput (kb/s)"  # at most 40 kb/s
    assert len(ax.get_lines()) == 2
    assert labels(ax) == ["a", "b"]
    assert "300 ms bins" in ax.get_title()
    # Steps: bin edges 0, 0.3, 0.6, values in kb/s with the last repeated.
    x, y = ax.get_lines()[0].get_data()
    assert list(x) == pytest.approx([0.0, 0.3, 0.6])
    assert list(y) == pytest.approx([16.0, 40.0, 40.0])


def test_throughput_default_bins_and_flow_choice():
    fig = plots.throughput(throughput_trace(), flows=["b"])
    (ax,) = fig.axes
    assert "100 ms bins" in ax.get_title()
    assert labels(ax) == ["b"]


def test_throughput_from_a_capture():
    fig = plots.throughput(capture(), 0.02)
    assert_renders(fig)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "throughput (Mb/s)"
    assert labels(ax) == ["a", "b", "u"]
    assert "at the tap" in ax.get_title()


def test_event_raster_from_the_events_trace():
    fig = plots.event_raster(EVENTS)
    assert_renders(fig)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_ylabel() == "flow"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["flow 0", "flow 1", "flow 2"]
    # Kinds present: dupack, retransmit, fast_retransmit, timeout: one scatter each.
    assert len(ax.collections) == 4
    assert labels(ax) == ["duplicate ACK", "retransmission", "fast retransmit", "timeout (RTO)"]
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # first flow on top


def test_event_raster_kinds_and_capture():
    fig = plots.event_raster(EVENTS, kinds=["timeout", "fast_retransmit"])
    assert labels(fig.axes[0]) == ["timeout (RTO)", "fast retransmit"]
    fig = plots.event_raster(capture())
    (ax,) = fig.axes
    assert labels(ax) == ["duplicate ACK", "retransmission"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a"]
    with pytest.raises(ValueError, match="unknown event kind"):
        plots.event_raster(EVENTS, kinds=["nope"])


def test_sequence():
    fig = plots.sequence(capture(), "a")
    assert_renders(fig)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_ylabel() == "relative sequence number (bytes)"
    assert "a" in ax.get_title()
    # The window edge (ACK + 10000) lies far above 3002 bytes of data: not drawn.
    assert line_labels(ax) == ["data", "retransmission", "ACK", "duplicate ACK"]
    assert labels(ax) == ["data", "retransmission", "ACK", "duplicate ACK"]
    data = next(line for line in ax.get_lines() if line.get_label() == "data")
    x, y = data.get_data()
    # Three first transmissions as bars: (t, seq), (t, seq + len), gap.
    assert list(x[0::3]) == pytest.approx([0.020, 0.021, 0.022])
    assert list(y[0::3]) == [1, 1001, 2001]
    assert list(y[1::3]) == [1001, 2001, 3001]
    resent = next(line for line in ax.get_lines() if line.get_label() == "retransmission")
    assert list(resent.get_data()[0][0::3]) == pytest.approx([0.040])
    assert ax.get_lines()[0].get_color() != resent.get_color()


def test_sequence_shows_a_nearby_window_and_zooms():
    rows = [
        (0.0, 0, 1, 1, 1, 0, 16, 1500, 0, 0),  # window edges 1501 and 2961, data up to 2921
        (0.1, 0, 0, 1, 1, 1460, 16, 0, 0, 0),
        (0.2, 0, 1, 1, 1461, 0, 16, 1500, 0, 0),
        (0.3, 0, 0, 1461, 1, 1460, 16, 0, 0, 0),
    ]
    fig = plots.sequence(capture(rows), 0)
    assert "advertised window" in line_labels(fig.axes[0])
    fig = plots.sequence(capture(), 0, start_s=0.03, end_s=0.05, window=False, dupacks=False)
    assert line_labels(fig.axes[0]) == ["retransmission", "ACK"]


def test_cwnd():
    fig = plots.cwnd(CWND)
    assert_renders(fig)
    assert len(fig.axes) == 2
    a, b = fig.axes
    assert a.get_title(loc="left") == "a" and b.get_title(loc="left") == "b"
    assert a.get_ylabel() == "window (bytes)"
    assert b.get_xlabel() == "time (s)"
    assert line_labels(a) == ["cwnd", "in flight", "ssthresh"]
    assert line_labels(b) == ["cwnd", "in flight"]  # ssthresh never set
    assert labels(a) == ["cwnd", "in flight", "ssthresh"]
    ssthresh = a.get_lines()[2].get_ydata()
    assert ssthresh[0] != ssthresh[0]  # unset (u64 max) is NaN
    assert fig.get_suptitle() == "Congestion window and data in flight"


def test_cwnd_units_panels_and_capture_overlay():
    big = CWND.with_columns(pl.col("cwnd_bytes") * 10_000)  # up to 87.6 MB
    assert plots.cwnd(big).axes[0].get_ylabel() == "window (MB)"
    fig = plots.cwnd(CWND, flows=[0], capture=capture())
    assert len(fig.axes) == 1
    assert line_labels(fig.axes[0]) == ["cwnd", "in flight", "ssthresh", "outstanding at tap"]
    fig = plots.cwnd(CWND, max_panels=1)
    assert len(fig.axes) == 1
    assert "first 1 of 2 flows" in fig.get_suptitle()


def test_queue():
    fig = plots.queue(QUEUE)
    assert_renders(fig)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_ylabel() == "queue length (packets)"
    assert len(ax.get_lines()) == 2
    assert labels(ax) == ["x->y", "other"]
    fig = plots.queue(QUEUE, queues=["x->y"], column="bytes")
    (ax,) = fig.axes
    assert ax.get_ylabel() == "queue length (bytes)"
    assert ax.get_title() == "Queue length: x->y"
    assert ax.get_legend() is None
    assert plots.queue(QUEUE, queues=[7]).axes[0].get_title() == "Queue length: other"


def test_sweep_plot_of_any_frame_of_runs():
    import tcplab

    df = pl.DataFrame(
        {
            "n": [2, 2, 2, 4, 4, 4, 2, 2, 2, 4, 4, 4],
            "cc": ["x"] * 6 + ["y"] * 6,
            "goodput": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
        }
    )
    fig = tcplab.sweep_plot(df, "n", "goodput", hue="cc", xlabel="flows", ylabel="goodput (Mb/s)")
    assert_renders(fig)
    (ax,) = fig.axes
    assert ax.get_xlabel() == "flows" and ax.get_ylabel() == "goodput (Mb/s)"
    assert labels(ax) == ["cc = x", "cc = y"]
    curves = [line for line in ax.get_lines() if line.get_marker() not in ("_", "None", "")]
    assert [list(c.get_ydata()) for c in curves] == [[2.0, 5.0], [1.0, 2.0]]
    # the error bar of (n=2, cc=x): mean 2 ± t(0.975, 2)·1/√3
    segments = ax.collections[0].get_segments()
    assert segments[0][0][1] == pytest.approx(2 - 2.4841, abs=1e-3)
    assert segments[0][1][1] == pytest.approx(2 + 2.4841, abs=1e-3)
    assert "95% CI over seeds (3 runs per point)" in ax.get_title()
    assert ax.get_xscale() == "linear"  # 2 to 4 is not a span for a log axis
    fig = tcplab.sweep_plot(df, "n", "goodput", logx=True)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_legend() is None and ax.get_xlabel() == "n"


def test_sweep_plot_scales_units_and_picks_log_axes():
    import tcplab

    df = pl.DataFrame({"rate": [1e6, 1e6, 1e8, 1e8, 1e9, 1e9],
                       "sum(flows.goodput_bps)": [0.9e6, 1.1e6, 0.9e8, 1.1e8, 0.9e9, 1.1e9]})
    fig = tcplab.sweep_plot(df, "rate", "sum(flows.goodput_bps)")
    (ax,) = fig.axes
    assert ax.get_ylabel() == "sum goodput (Mb/s)"
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    (curve,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert list(curve.get_ydata()) == pytest.approx([1.0, 100.0, 1000.0])
    fig = tcplab.sweep_plot(df, "rate", "sum(flows.goodput_bps)", logx=False, logy=False)
    assert fig.axes[0].get_xscale() == "linear" and fig.axes[0].get_yscale() == "linear"
    with pytest.raises(ValueError, match="no column 'nope'"):
        tcplab.sweep_plot(df, "rate", "nope")


def test_event_raster_without_events_says_so():
    fig = plots.event_raster(EVENTS.filter(pl.col("flow") == 99))
    assert_renders(fig)
    assert [t.get_text() for t in fig.axes[0].texts] == ["no events"]


def test_cwnd_panels_share_the_y_axis():
    fig = plots.cwnd(CWND)
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()
    fig = plots.cwnd(CWND, sharey=False)
    assert fig.axes[0].get_ylim() != fig.axes[1].get_ylim()


def test_cwnd_shared_axis_fits_every_panel():
    # Flow 1's window is the larger one: the shared range must reach it.
    big = CWND.with_columns(
        pl.when(pl.col("flow") == 1).then(pl.col("cwnd_bytes") * 10).otherwise("cwnd_bytes")
    )
    fig = plots.cwnd(big)
    assert fig.axes[0].get_ylim()[0] == 0
    assert fig.axes[0].get_ylim()[1] >= 58.4  # 58 400 bytes in KB
