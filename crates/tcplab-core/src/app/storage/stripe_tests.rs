//! Striping round trips: every byte on exactly one (server, disk, offset), shares contiguous and
//! balanced, totals consistent, bad layouts refused by name.

use std::collections::HashSet;

use super::*;

const KIB: u64 = 1024;

fn params(j: u32, k: u32, u1: u64, u2: u64) -> StripeParams {
    StripeParams { file_servers: 1, servers: j, disks: k, unit_servers: u1, unit_disks: u2, sector_bytes: 512, base_lba: 1000 }
}

/// The checks every layout must pass for a file of `f` bytes.
fn check_layout(s: &Stripe, f: u64) {
    let (_, j, k) = s.shape();
    let ext = s.extents(0, f);
    // Covers [0, f) once, in order.
    let mut o = 0;
    for e in &ext {
        assert_eq!(e.file_offset, o);
        assert!(e.bytes > 0);
        o += e.bytes;
        assert_eq!(s.locate(e.file_offset), (e.server, e.disk, e.disk_offset));
        assert_eq!(s.file_offset(e.server, e.disk, e.disk_offset), e.file_offset);
        let last = e.file_offset + e.bytes - 1;
        assert_eq!(s.locate(last), (e.server, e.disk, e.disk_offset + e.bytes - 1));
        assert_eq!(e.lba, 1000 + e.disk_offset / 512);
        assert_eq!(e.sectors, (e.disk_offset + e.bytes).div_ceil(512) - e.disk_offset / 512);
    }
    assert_eq!(o, f);
    // Per disk: extents contiguous from offset 0, adding up to the closed-form share.
    let mut server_sum = 0;
    for sv in 0..j {
        let mut disk_sum = 0;
        for d in 0..k {
            let mut at = 0;
            for e in ext.iter().filter(|e| e.server == sv && e.disk == d) {
                assert_eq!(e.disk_offset, at, "disk ({sv}, {d}) not contiguous");
                at += e.bytes;
            }
            assert_eq!(at, s.disk_bytes(f, sv, d));
            disk_sum += at;
        }
        assert_eq!(disk_sum, s.server_bytes(f, sv));
        server_sum += disk_sum;
    }
    assert_eq!(server_sum, f);
    // Balanced: servers within one server unit of each other, a server's disks within one disk
    // unit (round-robin dealing).
    let sv: Vec<u64> = (0..j).map(|x| s.server_bytes(f, x)).collect();
    assert!(sv.iter().max().unwrap() - sv.iter().min().unwrap() <= s.unit_servers);
    for x in 0..j {
        let dk: Vec<u64> = (0..k).map(|d| s.disk_bytes(f, x, d)).collect();
        assert!(dk.iter().max().unwrap() - dk.iter().min().unwrap() <= s.unit_disks);
    }
}

#[test]
fn one_by_one_by_one_is_the_identity() {
    let s = params(1, 1, 256 * KIB, 64 * KIB).build().unwrap();
    let f = 10_000_001;
    let ext = s.extents(0, f);
    assert_eq!(ext, vec![Extent { file_offset: 0, bytes: f, server: 0, disk: 0, disk_offset: 0, lba: 1000, sectors: f.div_ceil(512) }]);
    check_layout(&s, f);
}

#[test]
fn one_by_four_by_two_deals_units_round_robin() {
    // 1×4×2 with 256 KiB server units and 128 KiB disk units: server unit u goes to server
    // u mod 4; inside it, the two 128 KiB halves go to disks 0 and 1.
    let s = params(4, 2, 256 * KIB, 128 * KIB).build().unwrap();
    assert_eq!(s.shape(), (1, 4, 2));
    let ext = s.extents(0, 2 * 1024 * KIB);
    let got: Vec<(u32, u32, u64)> = ext.iter().map(|e| (e.server, e.disk, e.disk_offset)).collect();
    let want: Vec<(u32, u32, u64)> = (0..16).map(|i: u64| (((i / 2) % 4) as u32, (i % 2) as u32, (i / 8) * 128 * KIB)).collect();
    assert_eq!(got, want);
    assert!(ext.iter().all(|e| e.bytes == 128 * KIB && e.sectors == 256));
    // 1 GB over 8 disks: 125,000,000 bytes each, exactly.
    for sv in 0..4 {
        for d in 0..2 {
            assert_eq!(s.disk_bytes(1_000_000_000 - 1_000_000_000 % (256 * KIB * 4), sv, d) % (128 * KIB), 0);
        }
    }
    check_layout(&s, 1_000_000_000);
}

#[test]
fn uneven_sizes_and_units_round_trip() {
    for (j, k, u1, u2) in [(3, 2, 64 * KIB, 256 * KIB), (5, 3, 7 * 512, 3 * 512), (2, 2, 512, 1536), (26, 2, 256 * KIB, 64 * KIB), (1, 4, 1536, 512)] {
        let s = params(j, k, u1, u2).build().unwrap();
        for f in [1, 511, 512, 513, u1 * j as u64 - 1, 3 * u1 * j as u64 + 777, 10_485_760 + 12_345] {
            check_layout(&s, f);
        }
    }
}

#[test]
fn every_byte_has_one_place() {
    // Byte by byte on a small file: locate is injective and file_offset inverts it.
    let s = params(3, 2, 1536, 1024).build().unwrap();
    let f = 50_000;
    let mut seen = HashSet::new();
    for o in 0..f {
        let (sv, d, off) = s.locate(o);
        assert!(sv < 3 && d < 2);
        assert!(seen.insert((sv, d, off)), "byte {o} collides");
        assert_eq!(s.file_offset(sv, d, off), o);
    }
}

#[test]
fn a_sub_range_maps_as_the_whole_file_does() {
    let s = params(4, 2, 256 * KIB, 64 * KIB).build().unwrap();
    let (a, len) = (300 * KIB + 100, 1000 * KIB + 7);
    let ext = s.extents(a, len);
    assert_eq!(ext[0].file_offset, a);
    assert_eq!(ext.iter().map(|e| e.bytes).sum::<u64>(), len);
    for e in &ext {
        assert_eq!(s.locate(e.file_offset), (e.server, e.disk, e.disk_offset));
        // An unaligned start touches the sector holding it.
        assert_eq!(e.lba, s.lba(e.disk_offset));
    }
    // 300 KiB + 100 is 44 KiB + 100 into server 1's first unit, in its disk 0's first 64 KiB.
    assert_eq!((ext[0].server, ext[0].disk, ext[0].disk_offset), (1, 0, 44 * KIB + 100));
    assert_eq!(ext[0].bytes, 20 * KIB - 100);
    assert_eq!((ext[0].lba, ext[0].sectors), (1000 + 88, 40));
}

#[test]
fn bad_layouts_name_the_field() {
    let ok = params(4, 2, 256 * KIB, 64 * KIB);
    let err = |p: StripeParams| p.build().unwrap_err();
    assert!(err(StripeParams { file_servers: 0, ..ok }).starts_with("file_servers:"));
    assert!(err(StripeParams { servers: 0, ..ok }).starts_with("servers:"));
    assert!(err(StripeParams { disks: 0, ..ok }).starts_with("disks:"));
    assert!(err(StripeParams { sector_bytes: 0, ..ok }).starts_with("sector_bytes:"));
    assert!(err(StripeParams { unit_servers: 1000, ..ok }).starts_with("unit_servers:"));
    assert!(err(StripeParams { unit_servers: 0, ..ok }).starts_with("unit_servers:"));
    assert!(err(StripeParams { unit_disks: 64 * KIB + 1, ..ok }).starts_with("unit_disks:"));
    // A 73.5 GB disk (143,571,316 sectors) holds 1 GB from LBA 1000, not 600 GB over 8 disks.
    let s = ok.build().unwrap();
    assert!(s.check_fits(1_000_000_000, 143_571_316).is_ok());
    let e = s.check_fits(600_000_000_000, 143_571_316).unwrap_err();
    assert!(e.starts_with("file_bytes:"), "{e}");
}
