//! Reservoir flows as scenarios declare them (study 002): a striped file moved over iSCSI
//! between disk servers — the bytes on the wire, the disks in the loop, both access paths,
//! determinism and the errors.

use super::*;
use crate::app::Milestone;
use crate::sim::RunSummary;
use crate::tcp::TcpEventKind;

use super::tests::{error_of, run};

/// `servers` disk servers `ds` and a file server `fs` (or a destination group `dd` of as many
/// members) on one switch with links of `rate`; `flow` is the reservoir table's body.
fn reservoir(servers: u32, rate: &str, flow: &str) -> String {
    format!(
        r#"
name = "reservoir"
[run]
stop = "flows-done"
[defaults.tcp]
sndbuf = "8MB"
rcvbuf = "8MB"
nagle = false
[[hosts]]
name = "fs"
[[hosts]]
name = "ds"
count = {servers}
[[hosts]]
name = "dd"
count = {servers}
[[switches]]
name = "sw"
[[links]]
between = ["ds", "sw"]
rate = "{rate}"
delay = "20us"
[[links]]
between = ["dd", "sw"]
rate = "{rate}"
delay = "20us"
[[links]]
between = ["sw", "fs"]
rate = "{rate}"
delay = "20us"
queue_a = "2000pkts"
[[flows]]
name = "dr"
kind = "reservoir"
src = "ds"
[flows.reservoir]
{flow}
[trace]
milestones = true
"#
    )
}

fn local(servers: u32, rate: &str, extra: &str) -> String {
    reservoir(servers, rate, &format!("access = \"local\"\n{extra}")).replace("src = \"ds\"\n", "src = \"ds\"\ndst = \"fs\"\n")
}

fn remote(servers: u32, rate: &str, extra: &str) -> String {
    reservoir(servers, rate, &format!("access = \"remote\"\n{extra}")).replace("src = \"ds\"\n", "src = \"ds\"\ndst = \"dd\"\n")
}

fn span(s: &RunSummary) -> f64 {
    s.flows.iter().map(|f| f.finish_s.expect("every stream finishes")).fold(0.0, f64::max)
}

#[test]
fn local_access_reads_every_share_with_its_data_in_headers_and_fills_the_file_servers_link() {
    // 1×4×2, 64 MiB: 16 MiB per server in 64 READs of 256 KiB, each 32 Data-In PDUs of 8192
    // bytes (MaxRecvDataSegmentLength), 48-byte headers, the status in the last (phase collapse).
    let r = run(&local(4, "1Gbps", "disks = 2\nfile = \"64MiB\""), 1);
    let s = r.sim.summary();
    let names: Vec<(&str, &str, &str, bool)> = s.flows.iter().map(|f| (f.name.as_str(), f.src.as_str(), f.dst.as_str(), f.download)).collect();
    assert_eq!(names, (0..4).map(|k| (["dr.0", "dr.1", "dr.2", "dr.3"][k], "fs", ["ds.0", "ds.1", "ds.2", "ds.3"][k], true)).collect::<Vec<_>>());
    for f in &s.flows {
        assert_eq!(f.bytes_delivered, (16 << 20) + 64 * 32 * 48, "{}: the share and its Data-In headers", f.name);
    }
    let m = r.sim.traces.milestones.as_ref().unwrap();
    let commands = (0..m.kind.len()).filter(|&i| m.kind[i] == Milestone::Command as u32).count();
    assert_eq!(commands, 4 * 64, "one milestone per completed READ");
    // The file server's 1 Gb/s port is the bottleneck (the disks give 8 × 66.6 MB/s): the file
    // arrives at 85–100 % of its payload rate (1448/1500 of the line, less the PDU headers).
    let payload_rate = 1e9 * 1460.0 / 1500.0 * 8192.0 / 8240.0;
    let rate = (64u64 << 20) as f64 * 8.0 / span(&s);
    assert!(rate < payload_rate && rate > 0.85 * payload_rate, "{:.1} Mb/s of {:.1}", rate / 1e6, payload_rate / 1e6);
}

#[test]
fn a_disk_limited_read_runs_at_its_zones_media_rate() {
    // 1×1×1 on 10 Gb/s links: the one disk is the limit, 66.6 MB/s at the outer edge and
    // 33.4 MB/s at the inner (the model's zone rates), whatever TCP does.
    let time = |position: &str| {
        let r = run(&local(1, "10Gbps", &format!("disks = 1\nfile = \"64MiB\"\nfile_position = {position}")), 1);
        span(&r.sim.summary())
    };
    let (outer, inner) = (time("0.0"), time("1.0"));
    let mb = (64u64 << 20) as f64 / 1e6;
    assert!((mb / outer / 66.6 - 1.0).abs() < 0.08, "outer: {:.1} MB/s", mb / outer);
    assert!((mb / inner / 33.4 - 1.0).abs() < 0.08, "inner: {:.1} MB/s", mb / inner);
    // Two disks per server share the work: nearly twice as fast.
    let two = span(&run(&local(1, "10Gbps", "disks = 2\nfile = \"64MiB\""), 1).sim.summary());
    assert!(outer / two > 1.6, "two disks {:.2}× one", outer / two);
}

#[test]
fn a_scattered_file_reads_slower_from_the_disks_and_differently_per_seed() {
    // 1×1×1 on 10 Gb/s: the disk is the limit. Scattered 256 KiB units cost a seek and a
    // rotation each: well under half the sequential rate; the slots are drawn per seed.
    let text = |placement: &str| local(1, "10Gbps", &format!("disks = 1\nfile = \"32MiB\"\nplacement = \"{placement}\""));
    let seq = span(&run(&text("sequential"), 1).sim.summary());
    let scat = span(&run(&text("scattered"), 1).sim.summary());
    assert!(scat > 2.0 * seq, "scattered {scat:.3} s, sequential {seq:.3} s");
    assert_ne!(span(&run(&text("scattered"), 2).sim.summary()), scat, "seeds 1 and 2 scattered the file alike");
    assert_eq!(span(&run(&text("scattered"), 1).sim.summary()), scat, "the same seed, the same slots");
    assert!(Run::from_toml(&text("scattered"), Some(1)).unwrap().resolved_toml().contains("placement = \"scattered\""));
    assert!(error_of(&text("random")).contains("placement"), "{}", error_of(&text("random")));
}

#[test]
fn remote_access_writes_each_share_from_its_disks_to_its_peer_over_one_stream() {
    // 1×2×2, 32 MiB: each source server WRITEs 16 MiB in 64 commands; each command carries
    // 8192 bytes of immediate data, the rest (253,952 bytes) answers one R2T in 31 Data-Out
    // PDUs: 32 headers of 48 bytes per command on the data's way.
    let r = run(&remote(2, "1Gbps", "disks = 2\nfile = \"32MiB\""), 1);
    let s = r.sim.summary();
    let names: Vec<(&str, &str, &str, bool)> = s.flows.iter().map(|f| (f.name.as_str(), f.src.as_str(), f.dst.as_str(), f.download)).collect();
    assert_eq!(names, vec![("dr.0", "ds.0", "dd.0", false), ("dr.1", "ds.1", "dd.1", false)]);
    for f in &s.flows {
        assert_eq!(f.bytes_delivered, (16 << 20) + 64 * 32 * 48, "{}: the share and its WRITE headers", f.name);
    }
    let q = |name: &str| s.queues.iter().find(|q| q.name == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!(q("sw->fs").enqueued, 0, "remote access does not touch the file server");
    // Each stream is limited by its destination's two write-through disks, well below the
    // 1 Gb/s link: 16 MiB at ≥ 1 disk's worth and ≤ 2 disks' media rate.
    let rate = (16u64 << 20) as f64 / span(&s) / 1e6;
    assert!(rate < 2.0 * 66.6 && rate > 25.0, "{rate:.1} MB/s per stream");
}

#[test]
fn the_same_seed_gives_the_same_run_and_the_resolved_file_parses_back() {
    let text = remote(2, "1Gbps", "file = \"8MiB\"\n[flows.reservoir.iscsi]\ncommand_window = 4");
    let a = run(&text, 3).sim.summary();
    let b = run(&text, 3).sim.summary();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    // Another seed draws other spindle phases: the disks serve at other times.
    let c = run(&text, 4).sim.summary();
    let finish = |s: &RunSummary| s.flows.iter().map(|f| f.finish_s).collect::<Vec<_>>();
    assert_ne!(finish(&a), finish(&c), "seeds 3 and 4 ran alike");
    let r = Run::from_toml(&text, Some(3)).unwrap();
    let toml = r.resolved_toml();
    for key in ["kind = \"reservoir\"", "access = \"remote\"", "command_window = 4", "disk_stripe_unit = \"256KiB\"", "rpm = 10000"] {
        assert!(toml.contains(key), "{key} missing from\n{toml}");
    }
    let again = Run::from_toml(&toml, Some(3)).unwrap();
    assert_eq!(again.resolved_toml(), toml, "parses back to itself");
}

#[test]
fn a_smaller_command_window_slows_a_long_path() {
    // The iSCSI window bounds the data in flight per stream: 1 command of 256 KiB per 20 ms
    // RTT is ≈ 105 Mb/s at most, 16 commands are not held back by it.
    let text = |w: u32| local(1, "1Gbps", &format!("disks = 2\nfile = \"16MiB\"\n[flows.reservoir.iscsi]\ncommand_window = {w}")).replace("delay = \"20us\"", "delay = \"5ms\"");
    let one = span(&run(&text(1), 1).sim.summary());
    let many = span(&run(&text(16), 1).sim.summary());
    assert!(one > 2.0 * many, "window 1: {one:.2} s, window 16: {many:.2} s");
    let bound = (16u64 << 20) as f64 * 8.0 / (262_144.0 * 8.0 / 0.020);
    assert!(one >= bound, "window 1 cannot beat one block per RTT: {one:.2} s < {bound:.2} s");
}

#[test]
fn bad_reservoir_tables_are_refused_by_field() {
    let l = |extra: &str| local(4, "1Gbps", extra);
    let r = |extra: &str| remote(4, "1Gbps", extra);
    let cases = [
        (l("file = \"1MiB\"\nservers = 5"), "flows[0].reservoir.servers: 5 disk servers out of range"),
        (l("file = \"1MiB\"\nservers = 0"), "flows[0].reservoir.servers: 0 disk servers out of range"),
        (l("file = \"1MiB\"\ndisks = 0"), "flows[0].reservoir.disks: 0 data disks"),
        (l("servers = 2"), "flows[0].reservoir.file: a reservoir flow needs"),
        (l("file = \"1000B\""), "flows[0].reservoir.file: 1000 bytes is not a whole number"),
        (l("file = \"1MiB\"\nblock = \"1000B\""), "flows[0].reservoir.block: 1000 bytes is not a whole number"),
        (l("file = \"1MiB\"\nstripe_unit = \"100B\""), "flows[0].reservoir.stripe_unit: 100 bytes"),
        (l("file = \"1MiB\"\ndisk_stripe_unit = \"0B\""), "flows[0].reservoir.disk_stripe_unit: 0 bytes"),
        (l("file = \"1MiB\"\nfile_position = 1.5"), "flows[0].reservoir.file_position: 1.5 is outside"),
        (
            l("file = \"1MiB\"\n[flows.reservoir.iscsi]\nmax_recv_data_segment_length = 100"),
            "flows[0].reservoir.iscsi.max_recv_data_segment_length: 100 is out of RFC 3720's range",
        ),
        (l("file = \"1MiB\"\n[flows.reservoir.iscsi]\nfirst_burst_length = 524288"), "flows[0].reservoir.iscsi.first_burst_length: 524288 exceeds max_burst_length"),
        (l("file = \"1MiB\"\n[flows.reservoir.iscsi]\nmax_outstanding_r2t = 0"), "flows[0].reservoir.iscsi.max_outstanding_r2t: 0 is out of"),
        (l("file = \"1MiB\"\n[flows.reservoir.iscsi]\ncommand_window = 0"), "flows[0].reservoir.iscsi.command_window: 0 is out of range"),
        (l("file = \"1MiB\"\n[flows.reservoir.iscsi]\nwindow = 4"), "unknown field `window`"),
        (l("file = \"1MiB\"\n[flows.reservoir.disk]\nrpm = 0"), "flows[0].reservoir.disk.rpm: must be above 0"),
        (l("file = \"1MiB\"\n[flows.reservoir.disk]\nrate_inner = \"600Mbps\""), "flows[0].reservoir.disk.rate_inner:"),
        (l("file = \"1MiB\"\n[flows.reservoir.disk]\nbus_efficiency = 0"), "flows[0].reservoir.disk.bus_efficiency: 0 is outside 1–100"),
        (l("file = \"1MiB\"\n[flows.reservoir.disk]\nseek_read = \"20ms\""), "flows[0].reservoir.disk.seek_read:"),
        (l("file = \"100GiB\"\n[flows.reservoir.disk]\ncapacity = \"10GB\""), "flows[0].reservoir.file:"),
        (l("file = \"1MiB\"\n[flows.reservoir.disk]\nmax_request = \"1000B\""), "flows[0].reservoir.disk.max_request: 1000 bytes"),
        (l("file = \"1MiB\"\n[flows.reservoir.disk]\nspeed = 1"), "unknown field `speed`"),
        (l("file = \"1MiB\"").replace("dst = \"fs\"", "dst = \"dd\""), "flows[0].dst: local access reads into one file server"),
        (r("file = \"1MiB\"").replace("dst = \"dd\"", "dst = \"fs\""), "flows[0].dst: remote access pairs each of the 4 source disk servers"),
        (r("file = \"1MiB\"").replace("dst = \"dd\"", "dst = \"ds\""), "flows[0].dst: source and destination are the same host"),
        (l("file = \"1MiB\"").replace("sndbuf = \"8MB\"", "sndbuf = \"8000B\""), "flows[0].tcp.sndbuf: 8000 bytes cannot hold one 8240-byte iSCSI PDU"),
        (l("file = \"1MiB\"").replace("kind = \"reservoir\"", "kind = \"reservoir\"\ncount = 2"), "flows[0].count: a reservoir flow makes one stream per disk server"),
        (
            l("file = \"1MiB\"").replace("kind = \"reservoir\"", "kind = \"tcp\"").replace("src = \"ds\"", "src = \"ds.0\""),
            "flows[0].reservoir: only for kind = \"reservoir\" flows",
        ),
    ];
    for (text, want) in cases {
        let e = error_of(&text);
        assert!(e.contains(want), "want '{want}', got '{e}'");
    }
}

#[test]
fn the_event_trace_tells_the_data_senders_events_from_the_replies() {
    // 1×1×1 remote WRITE through 2 % random loss each way: the iSCSI responses and R2Ts the
    // target sends lose segments too, and their recoveries are the other end's, not the
    // stream's (the summary counts the data sender's).
    let text = remote(1, "1Gbps", "file = \"16MiB\"")
        .replace("[[switches]]\nname = \"sw\"", "[[switches]]\nname = \"sw\"\n[[switches]]\nname = \"sw2\"\n[[emulators]]\nname = \"em\"\ndelay = \"1ms\"\nloss = 0.02")
        .replace(
            "between = [\"dd\", \"sw\"]",
            "between = [\"sw\", \"em\"]\nrate = \"1Gbps\"\n[[links]]\nbetween = [\"em\", \"sw2\"]\nrate = \"1Gbps\"\n[[links]]\nbetween = [\"dd\", \"sw2\"]",
        )
        .replace("[trace]\n", "[trace]\nevents = true\n");
    let r = run(&text, 2);
    let s = r.sim.summary();
    let ev = r.sim.traces.events.as_ref().expect("events recorded");
    let count = |end: u32, kind: TcpEventKind| ev.end.iter().zip(&ev.kind).filter(|&(&e, &k)| e == end && k == kind as u32).count() as u64;
    let f = &s.flows[0];
    assert!(f.fast_retransmits > 5, "the data lost segments: {}", f.fast_retransmits);
    assert_eq!(count(0, TcpEventKind::FastRetransmit), f.fast_retransmits);
    assert_eq!(count(0, TcpEventKind::Timeout), f.timeouts);
    assert_eq!(count(0, TcpEventKind::Retransmit), f.retransmits);
    let replies = count(1, TcpEventKind::Retransmit);
    assert!(replies > 0, "the replies lost none at 2 %");
}

#[test]
fn a_coordinator_takes_a_reservoirs_streams_and_acts_on_their_data_senders() {
    // 100 Mb/s links with 20-packet buffers (the senders' own in remote access, the file
    // server's port both streams share in local access): losses put the streams in congestion
    // avoidance, where a coordinator acting every 20 ms with no tolerance pulls the larger
    // window to the mean. It must reach the data's senders — the source disk servers
    // (end 0) in remote access, the far ends (end 1) in local access — so their windows run
    // differently from the uncoordinated ones; acting on the wrong end would change nothing
    // there (the windows far above this LAN's BDP do not change the finish times).
    // (In remote access the senders jitter by up to 50 µs: identical streams on identical
    // paths run in lockstep, and equal windows give the coordinator nothing to do.)
    let coord = "[[coordinators]]\nkind = \"decp\"\nflows = [\"dr\"]\ninterval = \"20ms\"\ntolerance = 0.0\n";
    // The data senders' windows as the cwnd trace records them (it follows the data sender).
    let windows = |text: &str| -> Vec<(u32, u64)> {
        let r = run(&text.replace("[trace]\n", "[trace]\ncwnd = true\n"), 1);
        assert!(r.sim.summary().flows.iter().all(|f| f.finish_s.is_some()), "every stream finishes");
        let c = r.sim.traces.cwnd.as_ref().expect("traced");
        c.flow.iter().copied().zip(c.cwnd_bytes.iter().copied()).collect()
    };
    let cases = [
        remote(2, "100Mbps", "disks = 2\nfile = \"32MiB\"")
            .replace("between = [\"ds\", \"sw\"]\nrate = \"100Mbps\"", "between = [\"ds\", \"sw\"]\nrate = \"100Mbps\"\nqueue = \"20pkts\"")
            .replace("name = \"ds\"\ncount = 2", "name = \"ds\"\ncount = 2\njitter = \"50us\""),
        local(2, "100Mbps", "disks = 2\nfile = \"32MiB\"").replace("queue_a = \"2000pkts\"", "queue_a = \"20pkts\""),
    ];
    for text in cases {
        let coordinated = text.replace("[trace]\n", &format!("{coord}[trace]\n"));
        let r = Run::from_toml(&coordinated, Some(1)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.resolved.coordinators[0].members, ["dr.0", "dr.1"]);
        let (free, held) = (windows(&text), windows(&coordinated));
        assert_ne!(free, held, "the coordinator left the data senders' windows alone");
    }
    let bad = remote(2, "1Gbps", "file = \"8MiB\"").replace("[trace]\n", "[[coordinators]]\nkind = \"decp\"\nflows = [\"dr.5\"]\n[trace]\n");
    assert!(error_of(&bad).contains("no flow named 'dr.5' ('dr' has streams dr.0 … dr.1)"), "{}", error_of(&bad));
}
