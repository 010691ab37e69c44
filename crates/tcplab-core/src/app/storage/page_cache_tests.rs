use super::*;

fn cache(p: PageCacheParams, file: u64) -> PageCache {
    PageCache::new(p, file, 0, DiskParams::default(), BusParams::default()).unwrap()
}

#[test]
fn a_sequential_read_comes_from_the_disk_in_read_ahead_windows_at_the_media_rate() {
    // A reader taking whatever is there: 8 MiB through a cold cache.
    let file = 8 << 20;
    let mut c = cache(PageCacheParams::default(), file);
    let mut now = SimTime::ZERO;
    assert_eq!(c.read(now, 8192), 0, "cold: nothing cached");
    while c.consumed() < file {
        now = c.next_event().expect("the read-ahead keeps the disk busy");
        while c.read(now, 8192) > 0 {}
    }
    let sizes = c.read_sizes();
    let page = 4096;
    // 2.4: min_readahead + 1 pages first, doubling to max_readahead + 1 = 32 pages (128 KiB).
    assert_eq!(&sizes[..4], &[4 * page, 8 * page, 16 * page, 32 * page]);
    assert!(sizes[4..sizes.len() - 1].iter().all(|&s| s == 32 * page), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<u64>(), file);
    // The disk streams (its own read-ahead keeps ahead of the 128 KiB commands): within 10 % of
    // the outer zone's 66.6 MB/s.
    let secs = now.as_secs_f64();
    let media = file as f64 / 66.6e6;
    assert!(secs > media && secs < 1.1 * media + 0.02, "{secs:.3} s against {media:.3} s of media");
}

#[test]
fn the_writer_is_refused_above_nfract_sync_and_resumes_when_write_out_brings_it_under() {
    // 10 MiB of "memory": write-out from 4 MiB dirty, bdflush and the writer refused at 6 MiB;
    // two commands of 256 KiB queued at most.
    let p = PageCacheParams { cache_bytes: 10 << 20, requests: 2, ..PageCacheParams::default() };
    let file = 32 << 20;
    let mut c = cache(p, file);
    let took = c.write(SimTime::ZERO, 8 << 20);
    assert_eq!(took, 6 << 20, "accepted up to nfract_sync");
    assert!(c.is_blocked());
    assert!(!c.write_sizes().is_empty() && c.write_sizes().iter().all(|&s| s <= 256 << 10), "write-out started: {:?}", c.write_sizes().len());
    assert_eq!(c.write(SimTime::ZERO, 4096), 0, "still refused");
    // The next disk completions let it go on.
    let mut now = SimTime::ZERO;
    let mut resumed = None;
    while c.written() < file {
        now = c.next_event().unwrap();
        assert!(c.dirty() <= 6 << 20);
        if c.write(now, file - c.written()) > 0 && resumed.is_none() {
            resumed = Some(now);
        }
    }
    let resumed = resumed.expect("resumed");
    assert!(resumed > SimTime::ZERO, "resumed only after a write completed");
    // Throttled to the disk's rate: 28 MiB on the disk at ~66 MB/s (~0.44 s), the writer refused
    // for most of it.
    assert!(c.blocked(now) > SimDuration::from_millis(200), "throttled to the disk: {:?}", c.blocked(now));
    assert!(now.as_secs_f64() > 0.35, "{:?}", now);
    while let Some(t) = c.next_event() {
        c.advance(t);
        if c.on_disk() == file {
            break;
        }
    }
}

#[test]
fn kupdate_writes_out_dirty_pages_once_they_are_age_buffer_old() {
    // 1 MiB dirty stays below nfract: nothing is written until kupdate's run at 30 s.
    let mut c = cache(PageCacheParams::default(), 1 << 20);
    assert_eq!(c.write(SimTime::ZERO, 1 << 20), 1 << 20);
    assert!(c.write_sizes().is_empty(), "below nfract: no write-out");
    let mut ticks = Vec::new();
    while let Some(t) = c.next_event() {
        if c.dirty() > 0 {
            ticks.push(t.as_secs_f64());
        }
        c.advance(t);
    }
    assert_eq!(ticks[..6], [5.0, 10.0, 15.0, 20.0, 25.0, 30.0], "kupdate every 5 s until the data are 30 s old");
    assert_eq!(c.on_disk(), 1 << 20);
    let done = c.last_write_done().unwrap().as_secs_f64();
    assert!((30.0..30.1).contains(&done), "on disk at {done} s");
}

#[test]
fn bad_parameters_name_their_field() {
    let e = |p: PageCacheParams| PageCache::new(p, 1 << 20, 0, DiskParams::default(), BusParams::default()).unwrap_err();
    let d = PageCacheParams::default();
    assert!(e(PageCacheParams { cache_bytes: 0, ..d }).starts_with("cache_bytes:"));
    assert!(e(PageCacheParams { nfract: 0, ..d }).starts_with("nfract:"));
    assert!(e(PageCacheParams { nfract_sync: 101, ..d }).starts_with("nfract_sync:"));
    assert!(e(PageCacheParams { nfract: 50, nfract_sync: 40, ..d }).starts_with("nfract_sync:"));
    assert!(e(PageCacheParams { min_readahead: 40, ..d }).starts_with("min_readahead:"));
    assert!(PageCache::new(d, 0, 0, DiskParams::default(), BusParams::default()).unwrap_err().starts_with("file:"));
}
