//! Hierarchical striping `i×j×k` (study 002, the Data Reservoir): a file is striped over `j`
//! disk servers in units of `unit_servers` bytes, and each server's share over its `k` disks in
//! units of `unit_disks` bytes. The paper's notation: 「ファイルサーバが i 台、ディスクサーバが
//! j 台、各ディスクサーバが k 台のデータディスクを有するシステムを i × j × k と略記する」
//! (§4 s2; `scenarios/p2_data_reservoir/EVIDENCE.md` §1 "notation"): `i` file servers, `j` disk servers, `k` data
//! disks on each; "1×4×2" is one file server, four disk servers, two disks each.
//!
//! Byte `o` of the file lies on
//! ```text
//! server s = ⌊o/U₁⌋ mod j,  server offset  o₁ = ⌊⌊o/U₁⌋/j⌋·U₁ + o mod U₁
//! disk   d = ⌊o₁/U₂⌋ mod k, disk offset    o₂ = ⌊⌊o₁/U₂⌋/k⌋·U₂ + o₁ mod U₂
//! LBA      = base_lba + ⌊o₂ / sector⌋
//! ```
//! with `U₁ = unit_servers`, `U₂ = unit_disks`, both whole sectors, so each disk holds its share
//! as one contiguous run of LBAs from `base_lba` (the file's position on every disk: a zone
//! choice, EVIDENCE §8 "file position").
//!
//! ASSUMPTION(p2): the paper runs `i = 1` and does not say how several file servers divide the
//! work; `i` is kept for validation and naming and does not enter the mapping of one file.

/// A validated `i×j×k` layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stripe {
    file_servers: u32,
    servers: u32,
    disks: u32,
    unit_servers: u64,
    unit_disks: u64,
    sector_bytes: u32,
    base_lba: u64,
}

/// The parameters of a layout, as a scenario gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StripeParams {
    /// `i`: file servers, ≥ 1.
    pub file_servers: u32,
    /// `j`: disk servers the file is striped over, ≥ 1.
    pub servers: u32,
    /// `k`: data disks per disk server, ≥ 1.
    pub disks: u32,
    /// Stripe unit over the servers, bytes: a whole number (≥ 1) of sectors.
    pub unit_servers: u64,
    /// Stripe unit over a server's disks, bytes: a whole number (≥ 1) of sectors.
    pub unit_disks: u64,
    /// Bytes per sector (512 on the study's disks).
    pub sector_bytes: u32,
    /// First LBA of the file on every disk.
    pub base_lba: u64,
}

/// One piece of a file range that lies contiguously on one disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Offset in the file, bytes.
    pub file_offset: u64,
    /// Length, bytes.
    pub bytes: u64,
    /// Disk server (0-based, `< j`).
    pub server: u32,
    /// Disk of that server (0-based, `< k`).
    pub disk: u32,
    /// Offset in the disk's share of the file, bytes.
    pub disk_offset: u64,
    /// First LBA touched.
    pub lba: u64,
    /// Sectors touched (whole sectors covering the bytes).
    pub sectors: u64,
}

impl StripeParams {
    /// Validate into a `Stripe`; errors name the field.
    pub fn build(&self) -> Result<Stripe, String> {
        if self.file_servers == 0 {
            return Err("file_servers: must be at least 1 (i of i×j×k)".into());
        }
        if self.servers == 0 {
            return Err("servers: must be at least 1 (j of i×j×k)".into());
        }
        if self.disks == 0 {
            return Err("disks: must be at least 1 (k of i×j×k)".into());
        }
        if self.sector_bytes == 0 {
            return Err("sector_bytes: must be at least 1".into());
        }
        let sb = self.sector_bytes as u64;
        for (field, unit) in [("unit_servers", self.unit_servers), ("unit_disks", self.unit_disks)] {
            if unit == 0 || unit % sb != 0 {
                return Err(format!("{field}: {unit} bytes is not a whole number (≥ 1) of {sb}-byte sectors"));
            }
        }
        Ok(Stripe {
            file_servers: self.file_servers,
            servers: self.servers,
            disks: self.disks,
            unit_servers: self.unit_servers,
            unit_disks: self.unit_disks,
            sector_bytes: self.sector_bytes,
            base_lba: self.base_lba,
        })
    }
}

impl Stripe {
    /// `(i, j, k)`.
    pub fn shape(&self) -> (u32, u32, u32) {
        (self.file_servers, self.servers, self.disks)
    }

    /// Where byte `o` of the file lies: (server, disk, offset in that disk's share).
    pub fn locate(&self, o: u64) -> (u32, u32, u64) {
        let (u1, u2) = (self.unit_servers, self.unit_disks);
        let (j, k) = (self.servers as u64, self.disks as u64);
        let s1 = o / u1;
        let o1 = s1 / j * u1 + o % u1;
        let s2 = o1 / u2;
        let o2 = s2 / k * u2 + o1 % u2;
        ((s1 % j) as u32, (s2 % k) as u32, o2)
    }

    /// The file offset of byte `disk_offset` of disk `disk` of server `server` (the inverse of
    /// `locate`).
    pub fn file_offset(&self, server: u32, disk: u32, disk_offset: u64) -> u64 {
        let (u1, u2) = (self.unit_servers, self.unit_disks);
        let (j, k) = (self.servers as u64, self.disks as u64);
        let o1 = (disk_offset / u2 * k + disk as u64) * u2 + disk_offset % u2;
        (o1 / u1 * j + server as u64) * u1 + o1 % u1
    }

    /// The LBA holding byte `disk_offset` of a disk's share.
    pub fn lba(&self, disk_offset: u64) -> u64 {
        self.base_lba + disk_offset / self.sector_bytes as u64
    }

    /// The file range `[offset, offset + len)` as extents in file order, each the longest piece
    /// that lies contiguously on one disk (adjacent pieces on the same disk are merged).
    pub fn extents(&self, offset: u64, len: u64) -> Vec<Extent> {
        let mut out: Vec<Extent> = Vec::new();
        let end = offset + len;
        let mut o = offset;
        while o < end {
            let (server, disk, o2) = self.locate(o);
            let s1 = o / self.unit_servers;
            let o1 = s1 / self.servers as u64 * self.unit_servers + o % self.unit_servers;
            let piece = (self.unit_servers - o % self.unit_servers).min(self.unit_disks - o1 % self.unit_disks).min(end - o);
            match out.last_mut() {
                Some(e) if e.server == server && e.disk == disk && e.disk_offset + e.bytes == o2 => e.bytes += piece,
                _ => out.push(Extent { file_offset: o, bytes: piece, server, disk, disk_offset: o2, lba: 0, sectors: 0 }),
            }
            o += piece;
        }
        let sb = self.sector_bytes as u64;
        for e in &mut out {
            let first = e.disk_offset / sb;
            e.lba = self.base_lba + first;
            e.sectors = (e.disk_offset + e.bytes).div_ceil(sb) - first;
        }
        out
    }

    /// Bytes of a `file_bytes` file on server `server`.
    pub fn server_bytes(&self, file_bytes: u64, server: u32) -> u64 {
        share(file_bytes, self.unit_servers, self.servers as u64, server as u64)
    }

    /// Bytes of a `file_bytes` file on disk `disk` of server `server`.
    pub fn disk_bytes(&self, file_bytes: u64, server: u32, disk: u32) -> u64 {
        share(self.server_bytes(file_bytes, server), self.unit_disks, self.disks as u64, disk as u64)
    }

    /// Check a `file_bytes` file fits on disks of `capacity_sectors` from `base_lba`; the error
    /// names the field.
    pub fn check_fits(&self, file_bytes: u64, capacity_sectors: u64) -> Result<(), String> {
        // Server 0's disk 0 holds the largest share (units are dealt from index 0).
        let most = self.disk_bytes(file_bytes, 0, 0).div_ceil(self.sector_bytes as u64);
        if self.base_lba.checked_add(most).is_none_or(|e| e > capacity_sectors) {
            return Err(format!("file_bytes: {file_bytes} bytes put {most} sectors on a disk from base_lba {}, past its {capacity_sectors} sectors", self.base_lba));
        }
        Ok(())
    }
}

/// Bytes that member `m` of `n` receives when `total` bytes are dealt round-robin in `unit`s:
/// `⌊q/n⌋ + [m < q mod n]` whole units (`q = ⌊total/unit⌋`) plus the tail `total mod unit` if
/// `m = q mod n`.
fn share(total: u64, unit: u64, n: u64, m: u64) -> u64 {
    let (q, r) = (total / unit, total % unit);
    let units = q / n + u64::from(m < q % n);
    units * unit + if m == q % n { r } else { 0 }
}

#[cfg(test)]
#[path = "stripe_tests.rs"]
mod tests;
