//! The "conventional copy" of study 002's Fig. 3: netcat copying a file between two hosts,
//! each through its page cache (`storage::page_cache`) over its own disk. netcat loops
//! `read(2)` of at most `buffer` bytes (nc 1.10's `BIGSIZ`, 8192) and a blocking `write(2)`
//! of what it read.
//!
//! `FsCopySource` reads the file from its (cold) cache, so from its disk through read-ahead,
//! and writes it to the socket as the data arrive and the socket has room; it closes after the
//! last byte. `FsCopySink` reads the socket itself and writes into its cache: while the cache
//! refuses the writer (dirty pages throttled, `PageCache::room`) it stops reading, the unread
//! bytes fill the receive buffer and TCP's window closes. The transfer is complete when the
//! last byte is in the destination's cache (netcat exits); the cache goes on writing it out.

use super::storage::page_cache::PageCache;
use super::{Milestone, Notice, Socket, Sockets};
use crate::units::{SimDuration, SimTime};

/// The sending netcat: file → socket.
#[derive(Clone, Debug)]
pub struct FsCopySource {
    socket: Socket,
    cache: PageCache,
    file: u64,
    buffer: u64,
    /// Bytes read from the file and not yet written to the socket.
    held: u64,
    sent: u64,
    closed: bool,
}

impl FsCopySource {
    /// Copy `file` bytes from `cache` to `socket`, `buffer` bytes per read (≥ 1).
    pub fn new(socket: Socket, cache: PageCache, file: u64, buffer: u64) -> Self {
        assert!(buffer > 0 && file > 0, "netcat reads at least one byte of a non-empty file");
        FsCopySource { socket, cache, file, buffer, held: 0, sent: 0, closed: false }
    }

    /// Handle a notice: open the connection at the start; then move what the cache holds to the
    /// socket, close after the last byte, and set the timer to the cache's next event.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        let s = self.socket;
        if notice == Notice::Start {
            io.connect(s);
        }
        let now = io.now();
        self.cache.advance(now);
        loop {
            if self.held > 0 {
                let n = io.write(s, self.held);
                self.held -= n;
                self.sent += n;
                if self.held > 0 {
                    break;
                }
            }
            if self.sent + self.held >= self.file {
                break;
            }
            let want = self.buffer.min(self.file - self.sent);
            let got = self.cache.read(now, want);
            if got == 0 {
                break;
            }
            self.held = got;
        }
        if self.sent == self.file && !self.closed {
            self.closed = true;
            io.close(s);
            io.milestone(s, Milestone::Written, self.sent);
        }
        if let Some(t) = self.cache.next_event() {
            io.set_timer(t.max(now));
        }
    }

    /// The source's page cache.
    pub fn cache(&self) -> &PageCache {
        &self.cache
    }
}

/// The receiving netcat: socket → file.
#[derive(Clone, Debug)]
pub struct FsCopySink {
    socket: Socket,
    cache: PageCache,
    buffer: u64,
    /// Bytes read from the socket and not yet taken by the cache.
    held: u64,
    stored: u64,
    done_at: Option<SimTime>,
}

impl FsCopySink {
    /// Write what arrives on `socket` into `cache`, `buffer` bytes per read (≥ 1).
    pub fn new(socket: Socket, cache: PageCache, buffer: u64) -> Self {
        assert!(buffer > 0, "netcat reads at least one byte");
        FsCopySink { socket, cache, buffer, held: 0, stored: 0, done_at: None }
    }

    /// Handle a notice: write what it holds into the cache, read the socket while the cache
    /// takes it, finish once the peer has closed and everything is in the cache, and set the
    /// timer to the cache's next event.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        let s = self.socket;
        if let Notice::Socket(x) = notice {
            if x != s {
                return;
            }
        }
        let now = io.now();
        self.cache.advance(now);
        loop {
            if self.held > 0 {
                let n = self.cache.write(now, self.held);
                self.held -= n;
                self.stored += n;
                if self.held > 0 {
                    break;
                }
            }
            let got = io.read(s, self.buffer);
            if got == 0 {
                break;
            }
            self.held = got;
        }
        if self.done_at.is_none() && self.held == 0 && io.peer_closed(s) {
            self.done_at = Some(now);
            io.close(s);
            io.finish_flow(s);
            io.milestone(s, Milestone::Received, self.stored);
        }
        if let Some(t) = self.cache.next_event() {
            io.set_timer(t.max(now));
        }
    }

    /// The destination's page cache.
    pub fn cache(&self) -> &PageCache {
        &self.cache
    }

    /// Bytes in the destination's cache.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// When the last byte reached the cache (netcat exited).
    pub fn done_at(&self) -> Option<SimTime> {
        self.done_at
    }

    /// Time netcat spent unable to write to its file (the cache refusing it) by `now`.
    pub fn stalled(&self, now: SimTime) -> SimDuration {
        self.cache.blocked(now)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{Did, FakeSockets};
    use super::super::storage::bus::BusParams;
    use super::super::storage::disk::DiskParams;
    use super::super::storage::page_cache::PageCacheParams;
    use super::*;

    fn cache(p: PageCacheParams, file: u64) -> PageCache {
        PageCache::new(p, file, 0, DiskParams::default(), BusParams::default()).unwrap()
    }

    #[test]
    fn the_source_sends_only_what_the_disk_has_delivered_in_netcat_sized_reads() {
        let s = Socket::new(0, 0);
        let mut a = FsCopySource::new(s, cache(PageCacheParams::default(), 1 << 20), 1 << 20, 8192);
        let mut io = FakeSockets { space: 1 << 30, ..FakeSockets::default() };
        a.on(Notice::Start, &mut io);
        assert_eq!(io.did[0], Did::Connect(s));
        assert!(!io.did.iter().any(|d| matches!(d, Did::Write(..))), "cold cache: nothing to send at once");
        // Timers at the disk's and the bus's events until the first window has crossed the bus.
        let writes = loop {
            let Some(&Did::Timer(t)) = io.did.last() else { panic!("timer set: {:?}", io.did) };
            io.did.clear();
            io.now = t;
            a.on(Notice::Timer, &mut io);
            let w: Vec<u64> = io.did.iter().filter_map(|d| if let Did::Write(_, n) = d { Some(*n) } else { None }).collect();
            if !w.is_empty() {
                break w;
            }
        };
        assert_eq!(writes, vec![8192; 2], "the first 16 KiB window, in 8 KiB reads");
        // Drive it to the end: it closes once, after exactly the file.
        while let Some(&Did::Timer(t)) = io.did.last() {
            io.did.clear();
            io.now = t;
            a.on(Notice::Timer, &mut io);
            if io.did.contains(&Did::Close(s)) {
                break;
            }
        }
        assert!(io.did.contains(&Did::Milestone(s, Milestone::Written, 1 << 20)), "{:?}", io.did);
    }

    #[test]
    fn the_sink_stops_reading_while_its_cache_refuses_it() {
        let s = Socket::new(0, 1);
        let p = PageCacheParams { cache_bytes: 1 << 20, requests: 1, ..PageCacheParams::default() };
        let mut a = FsCopySink::new(s, cache(p, 4 << 20), 8192);
        let mut io = FakeSockets { readable: 4 << 20, ..FakeSockets::default() };
        a.on(Notice::Socket(s), &mut io);
        let read: u64 = io.did.iter().filter_map(|d| if let Did::Read(_, n) = d { Some(*n) } else { None }).sum();
        // Up to nfract_sync (60 % of 1 MiB, whole 8 KiB reads) and one more read held.
        assert!(read < 700 << 10 && read > 600 << 10, "read {read}");
        assert!(a.cache().is_blocked());
        assert!(a.done_at().is_none());
    }
}
