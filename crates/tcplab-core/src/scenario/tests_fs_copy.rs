//! fs-copy flows (study 002's conventional copy): netcat over two page caches and disks.

use super::tests::{error_of, run};
use crate::app::Application;
use crate::units::SimTime;

fn shipped() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/p2_data_reservoir/fs_copy.toml")).expect("fs_copy scenario")
}

/// (1 s bins of delivered bytes, completion s, the sink's stall s, last write on disk s, stored).
fn measure(text: &str, seed: u64) -> (Vec<u64>, f64, f64, Option<f64>, u64) {
    let r = run(text, seed);
    let s = r.sim.summary();
    let finish = s.flows[0].finish_s.expect("the copy completes");
    let t = r.sim.traces.throughput.as_ref().expect("throughput trace");
    let bins: Vec<u64> = (0..t.bytes.len()).filter(|&k| t.flow[k] == 0).map(|k| t.bytes[k]).collect();
    let sink = r.sim.apps().find_map(|a| if let Application::FsCopySink(x) = a { Some(x.clone()) } else { None }).unwrap();
    let end = SimTime::from_secs_f64(finish);
    (bins, finish, sink.stalled(end).as_secs_f64(), sink.cache().last_write_done().map(|t| t.as_secs_f64()), sink.stored())
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 * 8.0 / secs / 1e6
}

/// (peak 1 s bin, average over the transfer), Mb/s.
fn rates(bins: &[u64], finish: f64, stored: u64) -> (f64, f64) {
    (bins.iter().map(|&b| mbps(b, 1.0)).fold(0.0, f64::max), mbps(stored, finish))
}

#[test]
fn the_shipped_copy_runs_at_the_source_disks_rate_and_equal_disks_never_stall_it() {
    // Both files at the outer edge: the source's disk reads at 66.6 MB/s (532.8 Mb/s, under
    // GbE), the destination's writes as fast, so its dirty pages stay at nfract and the copy
    // never stalls: average ≈ peak.
    let (bins, finish, stalled, on_disk, stored) = measure(&shipped(), 1);
    assert_eq!(stored, 1_000_000_000, "every byte in the destination's cache");
    let (peak, avg) = rates(&bins, finish, stored);
    assert!((peak / 532.8 - 1.0).abs() < 0.03, "peak {peak:.1} Mb/s");
    assert!(avg > 0.98 * peak, "average {avg:.1} against peak {peak:.1} Mb/s");
    assert_eq!(stalled, 0.0);
    assert!(on_disk.is_some_and(|t| t > finish - 0.1), "write-out still running at the end: {on_disk:?} vs {finish}");
}

#[test]
fn after_netcat_exits_kupdate_writes_the_rest_out_once_it_is_30_s_old() {
    // Run on until idle: the last 40 % (357 MiB, dirtied in the copy's last ~5.6 s) stay dirty
    // until kupdate finds them 30 s old, at its 5 s ticks.
    let text = shipped().replace("stop = \"flows-done\"", "stop = \"idle\"").replace("throughput_interval = \"1s\"", "");
    let r = run(&text, 1);
    let finish = r.sim.summary().flows[0].finish_s.unwrap();
    let sink = r.sim.apps().find_map(|a| if let Application::FsCopySink(x) = a { Some(x.clone()) } else { None }).unwrap();
    assert_eq!(sink.cache().on_disk(), 1_000_000_000, "every byte on the disk in the end");
    let last = sink.cache().last_write_done().unwrap().as_secs_f64();
    eprintln!("netcat done {finish:.2} s, last byte on disk {last:.2} s");
    assert!(last > finish + 25.0 && last < finish + 40.0, "last write {last:.2} s, netcat done {finish:.2} s");
}

#[test]
fn a_slower_destination_disk_fills_its_dirty_limit_and_the_copy_stalls_below_its_peak() {
    // The copy at the destination disk's inner edge (33.4 MB/s) while the source reads at
    // 66.6 MB/s: the cache absorbs at the source's rate until dirty pages reach nfract_sync
    // (60 % of 893 MiB), then netcat is throttled to the disk, stops reading its socket, and
    // the window closes: the late bins fall to the disk's rate, the average well under the peak.
    let text = shipped().replace("dst_position = 0.0", "dst_position = 1.0");
    let (bins, finish, stalled, _, stored) = measure(&text, 1);
    assert_eq!(stored, 1_000_000_000);
    let (peak, avg) = rates(&bins, finish, stored);
    assert!((peak / 532.8 - 1.0).abs() < 0.03, "early peak at the source's rate: {peak:.1} Mb/s");
    assert!(avg < 0.85 * peak, "average {avg:.1} against peak {peak:.1} Mb/s");
    assert!(stalled > 3.0, "netcat refused by its cache for {stalled:.2} s");
    let late = mbps(bins[bins.len() - 2], 1.0);
    assert!((late / 267.2 - 1.0).abs() < 0.1, "late bins at the destination disk's rate: {late:.1} Mb/s");
    eprintln!("slow destination: peak {peak:.1} Mb/s, average {avg:.1} Mb/s, {finish:.2} s, stalled {stalled:.2} s");
}

#[test]
fn a_cache_larger_than_the_file_absorbs_it_and_the_copy_never_stalls() {
    // The same slow destination with 4 GB for the cache: 1 GB never reaches nfract (40 %), so
    // nothing throttles netcat; the copy runs at the source disk's rate throughout (kupdate
    // would write it out 30 s after).
    let text = shipped().replace("dst_position = 0.0", "dst_position = 1.0").replace("cache = \"893MiB\"", "cache = \"4GB\"");
    let (bins, finish, stalled, on_disk, stored) = measure(&text, 1);
    assert_eq!(stored, 1_000_000_000);
    let (peak, avg) = rates(&bins, finish, stored);
    assert_eq!(stalled, 0.0);
    assert!(avg > 0.98 * peak && (peak / 532.8 - 1.0).abs() < 0.03, "average {avg:.1}, peak {peak:.1} Mb/s");
    assert_eq!(on_disk, None, "nothing written out before netcat exits");
    eprintln!("large cache: peak {peak:.1} Mb/s, average {avg:.1} Mb/s, {finish:.2} s");
}

#[test]
fn the_same_seed_gives_the_same_summary() {
    let text = shipped().replace("file = \"1GB\"", "file = \"64MB\"");
    let a = serde_json::to_string(&run(&text, 7).sim.summary()).unwrap();
    let b = serde_json::to_string(&run(&text, 7).sim.summary()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_fs_copy_tables_are_refused_naming_the_key() {
    let bad = |from: &str, to: &str| error_of(&shipped().replace(from, to));
    let cases = [
        ("file = \"1GB\"", "file = \"0B\"", "flows[0].fs_copy.file"),
        ("cache = \"893MiB\"", "cache = \"0B\"", "flows[0].fs_copy.cache"),
        ("nfract_sync = 60", "nfract_sync = 30", "flows[0].fs_copy.nfract_sync"),
        ("nfract = 40", "nfract = 150", "flows[0].fs_copy.nfract"),
        ("requests = 64", "requests = 0", "flows[0].fs_copy.requests"),
        ("dst_position = 0.0", "dst_position = 2.0", "flows[0].fs_copy.dst_position"),
        ("buffer = \"8KiB\"", "buffer = \"8KiB\"\nblock = 4", "block"),
        ("kind = \"fs-copy\"", "kind = \"tcp\"", "flows[0].fs_copy"),
    ];
    for (from, to, key) in cases {
        let e = bad(from, to);
        assert!(e.contains(key), "{to}: {e}");
    }
    // The resolved scenario shows every default.
    let resolved = crate::Run::from_toml(&shipped(), Some(1)).unwrap().resolved_toml();
    assert!(resolved.contains("kind = \"fs-copy\"") && resolved.contains("nfract_sync = 60") && resolved.contains("max_request"), "{resolved}");
}
