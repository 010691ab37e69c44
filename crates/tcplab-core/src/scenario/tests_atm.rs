//! ATM ports as scenarios declare them (study 004): a TCP flow over AAL5 through a switch
//! port with CBR beside it, cell losses, reassembly, the counters, every observation mode, and
//! the errors.

use super::*;

use super::tests::{error_of, run};

/// Host a sends 4 MB to b through switch sw over OC-3c AAL5 links; `port` is sw's egress
/// queue towards b, `tcp` extra keys of the TCP table.
fn atm(port: &str, tcp: &str) -> String {
    format!(
        r#"
name = "atm"
[run]
duration = "30s"
stop = "flows-done"
[defaults.tcp]
mss = 9140
sack = false
nagle = false
rcvbuf = "64KB"
sndbuf = "64KB"
{tcp}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
between = ["a", "sw"]
rate = "149.76Mbps"
delay = "5us"
link_layer = "aal5"
[[links]]
between = ["sw", "b"]
rate = "149.76Mbps"
delay = "5us"
link_layer = "aal5"
queue_a = {port}
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = {{ bytes = "4MB" }}
"#
    )
}

#[test]
fn a_large_cell_buffer_loses_nothing_and_cbr_takes_its_share() {
    let r = run(&atm("{ cells = 20000, cbr = \"60Mbps\" }", ""), 1);
    let s = r.sim.summary();
    let f = &s.flows[0];
    assert_eq!(f.bytes_delivered, 4_000_000);
    assert_eq!(f.retransmits, 0);
    let q = s.queues.iter().find(|q| q.name == "sw->b").unwrap();
    assert_eq!((q.cells_dropped, q.frames_damaged), (0, 0));
    assert_eq!(q.frames_discarded, 0);
    // UBR gets the slots CBR leaves: 89.76 of 149.76 Mb/s of cells, 9180-byte packets in 192
    // cells: at most 89.76·(9140/10176) ≈ 80.6 Mb/s of payload.
    let goodput = f.goodput_bps / 1e6;
    assert!(goodput < 80.7 && goodput > 60.0, "{goodput} Mb/s");
}

#[test]
fn a_small_cell_buffer_damages_frames_and_reassembly_discards_them() {
    let r = run(&atm("{ cells = 200, cbr = \"60Mbps\" }", ""), 1);
    let s = r.sim.summary();
    let q = s.queues.iter().find(|q| q.name == "sw->b").unwrap();
    assert!(q.cells_dropped > 0 && q.frames_damaged > 0, "{q:?}");
    let p = &s.packets;
    assert!(q.frames_discarded >= q.frames_damaged, "every damaged frame is lost at b: {q:?}");
    assert!(q.dropped >= q.frames_discarded, "{q:?}");
    assert_eq!(p.created, p.delivered + p.queue_drops + p.random_drops + r.sim.packets_inside());
    let f = &s.flows[0];
    assert!(f.retransmits > 0 && f.timeouts > 0, "{f:?}");
    // PPD sends less of each damaged frame, so the same losses cost less line time.
    let ppd = run(&atm("{ cells = 200, cbr = \"60Mbps\", discard = \"ppd\" }", ""), 1).sim.summary();
    let qp = ppd.queues.iter().find(|q| q.name == "sw->b").unwrap();
    assert!(qp.cells_discarded > 0, "{qp:?}");
}

#[test]
fn atm_ports_are_the_same_however_the_run_is_observed() {
    for port in ["{ cells = 200, cbr = \"60Mbps\" }", "{ cells = 500, cbr = \"100Mbps\", discard = \"epd\", epd_threshold = 250 }"] {
        let text = format!("{}\n[[taps]]\nname = \"t\"\nlink = [\"sw\", \"b\"]\npcap = false\ntrace = true\n[trace]\nqueues = \"all\"\n", atm(port, ""));
        let sc = parse_toml(&text).unwrap();
        assert_eq!(observers::check_every_mode(&sc, 1).unwrap(), None, "{port}");
    }
}

#[test]
fn bad_atm_ports_are_refused_by_field() {
    let cases = [
        (atm("{ cells = 200 }", "").replace("link_layer = \"aal5\"\nqueue_a", "queue_a"), "links[1].queue_a.cells: an ATM port needs link_layer"),
        (atm("{ cells = 0 }", ""), "links[1].queue_a.cells: 0 is out of range: an ATM port buffers 1..=1073741824 cells"),
        (atm("{ cells = 9223372036854775807 }", ""), "links[1].queue_a.cells: 9223372036854775807 is out of range"),
        (atm("{ cells = 200, cbr = \"150Mbps\" }", ""), "links[1].queue_a.cbr: 150Mbps leaves no cell slot for UBR on a 149760kbps line"),
        (atm("{ cells = 200, cbr = \"140Mbps\", cbr_unit = \"payload\" }", ""), "links[1].queue_a.cbr: 140Mbps leaves no cell slot"),
        (atm("{ cells = 200, discard = \"epd\" }", ""), "links[1].queue_a.epd_threshold: EPD needs its threshold"),
        (atm("{ cells = 200, discard = \"epd\", epd_threshold = 200 }", ""), "links[1].queue_a.epd_threshold: 200 cells is not below the buffer"),
        (atm("{ cells = 200, epd_threshold = 100 }", ""), "links[1].queue_a.epd_threshold: only with discard = \"epd\""),
        (atm("{ cells = 200, cbr = \"60Mbps\", cbr_burst = 0 }", ""), "links[1].queue_a.cbr_burst: 0 is out of range: 1..=1000000 cells per burst"),
        (atm("{ cells = 200, cbr_burst = 8 }", ""), "links[1].queue_a.cbr_burst: only with cbr"),
        (atm("{ limit = \"40pkts\", cbr_burst = 8 }", ""), "links[1].queue_a.cbr_burst: an ATM port's key: only with cells"),
        (atm("{ limit = \"40pkts\", cbr = \"60Mbps\" }", ""), "links[1].queue_a.cbr: an ATM port's key: only with cells"),
        (atm("{ limit = \"40pkts\", cells = 100 }", ""), "give one of limit (one FIFO), classes (strict priority) or cells"),
        (atm("{ cells = 100, ecn_threshold = \"10pkts\" }", ""), "links[1].queue_a.ecn_threshold: an ATM port does not mark ECN"),
        (atm("{ cells = 100, discard = \"drop\" }", ""), "unknown variant `drop`, expected one of `tail-drop`, `ppd`, `epd`"),
    ];
    for (text, want) in cases {
        let e = error_of(&text);
        assert!(e.contains(want), "want {want:?}, got {e:?}");
    }
    // A port fed by two links.
    let two = atm("{ cells = 200 }", "").replace(
        "[[flows]]",
        "[[hosts]]\nname = \"c\"\n[[links]]\nbetween = [\"c\", \"sw\"]\nrate = \"149.76Mbps\"\nlink_layer = \"aal5\"\n[[flows]]\nname = \"g\"\nsrc = \"c\"\ndst = \"b\"\nbulk = { bytes = \"1MB\" }\n[[flows]]",
    );
    assert!(error_of(&two).contains("links[1].queue_a.cells: this ATM port is fed by 2 links"), "{}", error_of(&two));
    // A port that forwards to another switch, not to a host.
    let transit = atm("{ cells = 200 }", "")
        .replace("between = [\"sw\", \"b\"]", "between = [\"sw\", \"sw2\"]")
        .replace("[[flows]]", "[[switches]]\nname = \"sw2\"\n[[links]]\nbetween = [\"sw2\", \"b\"]\nrate = \"149.76Mbps\"\nlink_layer = \"aal5\"\n[[flows]]");
    assert!(error_of(&transit).contains("links[1].queue_a.cells: this ATM port forwards to another switch"), "{}", error_of(&transit));
}

#[test]
fn a_port_no_full_segment_can_cross_is_refused_and_one_it_can_finishes() {
    // 9,180-byte packets are 192-cell frames; at OC-3c beside 60 Mb/s of CBR a lone frame
    // leaves at least 75 cells waiting. At 20 cells every full segment loses a cell (the flow
    // stalled to the time cap: 0 bytes in 10^6 s); at 80 full segments cross.
    let e = error_of(&atm("{ cells = 20, cbr = \"60Mbps\" }", ""));
    assert!(
        e.contains("flows[0].tcp.mss: a full segment (9180-byte IP packet) is an AAL5 frame of 192 cells; arriving at 149760kbps into the empty ATM port sw->b it leaves at least 75 cells waiting, and the port holds 20"),
        "{e}"
    );
    assert!(error_of(&atm("{ cells = 75, cbr = \"60Mbps\" }", "")).contains("flows[0].tcp.mss: a full segment"));
    // At 80 cells full segments get through (slowly: several frames in flight still collide,
    // the study's deadlock); at 400 the transfer completes.
    let f = &run(&atm("{ cells = 80, cbr = \"60Mbps\" }", ""), 1).sim.summary().flows[0];
    assert!(f.bytes_delivered > 1_000_000, "{f:?}");
    let f = &run(&atm("{ cells = 400, cbr = \"60Mbps\" }", ""), 1).sim.summary().flows[0];
    assert!(f.finish_s.is_some() && f.bytes_delivered == 4_000_000, "{f:?}");
    // A transfer shorter than one segment sends a smaller frame, which fits.
    let short = atm("{ cells = 20, cbr = \"60Mbps\" }", "").replace("bytes = \"4MB\"", "bytes = \"400B\"");
    assert!(run(&short, 1).sim.summary().flows[0].finish_s.is_some());
}

#[test]
#[ignore = "prints the numbers of the cases above"]
fn print_atm_cases() {
    for port in
        ["{ cells = 20000, cbr = \"60Mbps\" }", "{ cells = 1024, cbr = \"60Mbps\" }", "{ cells = 200, cbr = \"60Mbps\" }", "{ cells = 200, cbr = \"60Mbps\", discard = \"ppd\" }"]
    {
        let r = run(&atm(port, ""), 1);
        let s = r.sim.summary();
        let f = &s.flows[0];
        let q = s.queues.iter().find(|q| q.name == "sw->b").unwrap();
        eprintln!(
            "{port}: goodput {:.1} Mb/s, retx {}, timeouts {}, frames damaged {}, cells dropped {}, discarded {}, reassembly drops {}, finish {:?} s",
            f.goodput_bps / 1e6,
            f.retransmits,
            f.timeouts,
            q.frames_damaged,
            q.cells_dropped,
            q.cells_discarded,
            q.frames_discarded,
            f.finish_s
        );
    }
}

#[test]
fn freebsd_hosts_deadlock_behind_cbr_at_a_small_cell_buffer_and_not_at_a_large_one() {
    // Study 004's setting: FreeBSD 3.2 hosts, MTU 1500, 64 KiB socket buffers, CBR 60 Mb/s,
    // 10 s of netperf. The UBR ceiling is (353 208 − 150 943) cells/s · 1460/32 bytes.
    let tcp = "profile = \"freebsd-3.2\"\n";
    let text = |cells: u32| {
        atm(&format!("{{ cells = {cells}, cbr = \"60Mbps\" }}"), tcp)
            .replace("mss = 9140", "mss = 1460")
            .replace("duration = \"30s\"\nstop = \"flows-done\"", "duration = \"10s\"")
            .replace("bulk = { bytes = \"4MB\" }", "bulk = { write_size = \"64KiB\" }")
    };
    let ceiling = (353_208.0 - 60e6 / 424.0) * 1460.0 * 8.0 / 32.0;
    let mbps = |cells: u32| {
        let r = run(&text(cells), 1);
        let s = r.sim.summary();
        (s.flows[0].bytes_delivered as f64 * 8.0 / 10.0, s.flows[0].timeouts)
    };
    let (small, small_rto) = mbps(512);
    assert!(small <= 0.02 * ceiling && small_rto >= 3, "512 cells: {small} b/s, {small_rto} timeouts (ceiling {ceiling})");
    let (large, large_rto) = mbps(4096);
    assert!(large > 0.95 * ceiling && large <= ceiling && large_rto == 0, "4096 cells: {large} b/s (ceiling {ceiling})");
}
