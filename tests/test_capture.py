"""Header capture: pcapng files judged by Wireshark's tshark, against tcplab's own counters."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

import tcplab

SMOKE = Path(__file__).resolve().parents[1] / "scenarios" / "smoke" / "smoke.toml"

TSHARK = shutil.which("tshark")


def _tshark_fields(path: Path, *fields: str, display_filter: str | None = None) -> pl.DataFrame:
    """Run tshark on `path` and return the requested fields as strings, one row per packet."""
    assert TSHARK, "tshark is required (make test installs it)"
    cmd = [TSHARK, "-r", str(path), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"]
    if display_filter:
        cmd += ["-Y", display_filter]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return pl.DataFrame(rows, schema=list(fields), orient="row") if rows else pl.DataFrame(
        schema=list(fields)
    )


@pytest.fixture(scope="module")
def lossy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[tcplab.Result, Path]:
    """The smoke scenario with 1 % emulator loss, its tap recording a trace too, saved."""
    result = tcplab.run(
        SMOKE, seed=3, overrides={"emulators.0.loss": 0.01, "taps.0.trace": True}
    )
    out = result.save(tmp_path_factory.mktemp("cap") / "run")
    return result, out / "sender.pcapng"


def test_save_moves_the_capture_into_the_output_directory(lossy_run):
    result, pcap = lossy_run
    assert pcap.is_file() and pcap.stat().st_size > 0
    assert result.captures == {"sender": pcap}


def test_tshark_finds_no_malformed_packet(lossy_run):
    _, pcap = lossy_run
    bad = _tshark_fields(pcap, "frame.number", display_filter="_ws.malformed || _ws.expert.severity >= error")
    assert bad.height == 0, bad


def test_tshark_agrees_with_tcplab_counters(lossy_run):
    result, pcap = lossy_run
    capture = result.trace("capture")
    seen = _tshark_fields(
        pcap,
        "frame.time_epoch",
        "ip.src",
        "tcp.srcport",
        "udp.srcport",
        "tcp.len",
        "tcp.analysis.retransmission",
        "tcp.analysis.fast_retransmission",
        "tcp.analysis.spurious_retransmission",
        "tcp.analysis.out_of_order",
    )
    assert seen.height == capture.height, "one record per packet the tap saw"
    flows = result.flows
    tcp_flows = flows.filter(pl.col("kind") == "tcp")
    assert tcp_flows.height == 2
    total_retx = 0
    for row in tcp_flows.iter_rows(named=True):
        port = str(32768 + row["id"])
        mine = capture.filter((pl.col("flow") == row["id"]) & (pl.col("dir") == 0))
        theirs = seen.filter(pl.col("tcp.srcport") == port)
        # Packets and payload bytes of the data direction.
        assert theirs.height == mine.height
        payload = theirs["tcp.len"].cast(pl.Int64).sum()
        assert payload == mine["len"].sum()
        # Every retransmission the sender made, and only those, tshark flags. Nothing is
        # reordered before this tap, so what tshark calls "out-of-order" are retransmissions
        # sent within its 3 ms threshold of the newest segment (a heuristic of tshark's).
        flags = (
            (pl.col("tcp.analysis.retransmission") != "")
            | (pl.col("tcp.analysis.fast_retransmission") != "")
            | (pl.col("tcp.analysis.spurious_retransmission") != "")
            | (pl.col("tcp.analysis.out_of_order") != "")
        )
        their_frames = theirs.with_row_index("i").filter(flags)["i"].to_list()
        my_frames = mine.with_row_index("i").filter(pl.col("retransmit") == 1)["i"].to_list()
        assert their_frames == my_frames, "the same packets, not just the same count"
        assert len(my_frames) == row["retransmits"]
        total_retx += len(my_frames)
    assert total_retx > 0, "the lossy run must exercise retransmissions"
    # UDP datagrams: as many as the source sent.
    udp = flows.filter(pl.col("kind") == "udp-cbr").row(0, named=True)
    assert seen.filter(pl.col("udp.srcport") == str(32768 + udp["id"])).height == udp["segments_sent"]


def test_tshark_sees_every_fin(lossy_run):
    """Each direction of each TCP flow: as many FIN segments in tshark's reading of the file
    as the simulator sent past the tap (retransmitted FINs included)."""
    result, pcap = lossy_run
    capture = result.trace("capture")
    fins = _tshark_fields(pcap, "tcp.srcport", "tcp.dstport", display_filter="tcp.flags.fin==1")
    mine = capture.filter((pl.col("flags") % 2) == 1)  # flags bit 0x01: FIN
    assert mine.height > 0, "the flows closed within the run"
    for row in result.flows.filter(pl.col("kind") == "tcp").iter_rows(named=True):
        port = str(32768 + row["id"])  # the sender's port
        sent = mine.filter(pl.col("flow") == row["id"])
        for direction, column in ((0, "tcp.srcport"), (1, "tcp.dstport")):
            theirs = fins.filter(pl.col(column) == port).height
            assert theirs == sent.filter(pl.col("dir") == direction).height, (row["name"], direction)
        assert sent.filter(pl.col("dir") == 0).height >= 1, "the sender's FIN is on the wire"


def test_timestamps_are_on_the_tap_resolution(lossy_run):
    _, pcap = lossy_run
    times = _tshark_fields(pcap, "frame.time_relative")["frame.time_relative"].cast(pl.Float64)
    ns = (times * 1e9).round()
    assert ((ns % 100) == 0).all(), "100 ns timestamps"
    assert (times.diff().drop_nulls() >= 0).all()


def test_no_capture_without_taps():
    spec = tcplab.load_scenario(SMOKE)
    del spec["taps"]
    result = tcplab.run(spec)
    assert result.captures == {}


DCTCP = Path(__file__).resolve().parents[1] / "scenarios" / "dctcp" / "dctcp.toml"


@pytest.fixture(scope="module")
def dctcp_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[tcplab.Result, Path]:
    """Two DCTCP flows through a port marking ECN at 20 packets, tapped on the receiver's link."""
    result = tcplab.run(DCTCP)
    out = result.save(tmp_path_factory.mktemp("ecn") / "run")
    return result, out / "receiver.pcapng"


def test_tshark_reads_the_ecn_bits_as_tcplab_counts_them(dctcp_run):
    """RFC 3168 on the wire: the handshake's ECE/CWR, ECT(0) and CE in the IP header, ECE on
    the ACKs and CWR on the data, each as many as tcplab's counters say."""
    result, pcap = dctcp_run
    seen = _tshark_fields(
        pcap,
        "ip.src",
        "ip.dsfield.ecn",
        "tcp.flags.syn",
        "tcp.flags.ack",
        "tcp.flags.ece",
        "tcp.flags.cwr",
        "tcp.len",
    )
    bad = _tshark_fields(pcap, "frame.number", display_filter="_ws.malformed || _ws.expert.severity >= error")
    assert bad.height == 0, bad
    flows = result.flows
    assert flows["ecn"].all() and (flows["cc"] == "dctcp").all()
    receiver = "10.0.0.3"  # hosts s0, s1, r in order
    syn = seen.filter((pl.col("tcp.flags.syn") == "1") & (pl.col("tcp.flags.ack") == "0"))
    synack = seen.filter((pl.col("tcp.flags.syn") == "1") & (pl.col("tcp.flags.ack") == "1"))
    assert syn.height == 2 and (syn["tcp.flags.ece"] == "1").all() and (syn["tcp.flags.cwr"] == "1").all()
    assert synack.height == 2 and (synack["tcp.flags.ece"] == "1").all() and (synack["tcp.flags.cwr"] == "0").all()
    data = seen.filter(pl.col("tcp.len").cast(pl.Int64) > 0)
    # Past the marking port every data packet is ECT(0) (2) or CE (3); CE as many as received.
    assert set(data["ip.dsfield.ecn"].unique()) == {"2", "3"}
    ce = data.filter(pl.col("ip.dsfield.ecn") == "3").height
    assert ce == flows["ce_received"].sum() > 0
    # Every window reduction sends CWR once, on the next new data segment (Linux tcp_ecn_send:
    # never on a retransmission, a pure ACK or a bare FIN). So per flow as many CWRs as
    # reductions, but for a last reduction made after the flow's last new segment had left
    # (an ECE still in flight when the transfer's tail went), which has nothing to carry it.
    assert flows["ecn_reductions"].sum() > 0
    senders = {"s0": "10.0.0.1", "s1": "10.0.0.2"}
    for name, src, reductions in flows.select("name", "src", "ecn_reductions").iter_rows():
        cwrs = data.filter((pl.col("ip.src") == senders[src]) & (pl.col("tcp.flags.cwr") == "1")).height
        assert reductions - cwrs in (0, 1), (name, reductions, cwrs)
    # The receiver's ACKs (DCTCP: ECT too) echo with ECE.
    acks = seen.filter((pl.col("ip.src") == receiver) & (pl.col("tcp.flags.syn") == "0"))
    assert (acks["ip.dsfield.ecn"] == "2").all()
    assert acks.filter(pl.col("tcp.flags.ece") == "1").height > 0
    # The port marked instead of dropping: everything CE on this link was marked there.
    port = result.queues.filter(pl.col("name") == "sw->r").row(0, named=True)
    assert port["dropped"] == 0
    assert port["marked"] == seen.filter(pl.col("ip.dsfield.ecn") == "3").height


def test_dctcp_holds_the_queue_near_its_marking_threshold(dctcp_run):
    result, _ = dctcp_run
    q = result.trace("queue").filter(pl.col("queue_name") == "sw->r")
    # After the first flow's slow start (20 ms), while both flows send.
    busy = q.filter(pl.col("time_s").is_between(0.03, 0.1))
    mean = busy["packets"].mean()
    assert 10 <= mean <= 30, f"mean occupancy {mean} packets around K = 20"
    assert q["packets"].max() < 100, "never to the buffer's end"
