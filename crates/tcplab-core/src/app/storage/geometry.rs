//! Where a logical block lies on a zoned disk and how long the head takes to get there: zones
//! with a whole number of sectors per track, the angular position of every sector, the time a
//! run of sectors takes under the head, and the seek curve fitted to a datasheet's track-to-track,
//! average and full-stroke times. Pure arithmetic; `disk` builds on it.
//!
//! MODEL (geometry): the disk is one serpentine surface of *tracks*, a track being one
//! revolution's worth of sectors. Zone `z` (0 outermost) holds an equal share of the LBAs,
//! rounded up to whole tracks (the last zone takes the rest), at
//! `spt_z = ⌊rate_z · T_rev / sector⌋` sectors per track, where
//! `rate_z = rate_outer − (rate_outer − rate_inner)·z/(zones − 1)` (linear across zones) and
//! `T_rev = 60 s / rpm`. The datasheet's *sustained* rate already includes head and cylinder
//! switches, so they are folded in: a track's sector 0 starts at angle 0 and a sequential run
//! crosses tracks without loss; crossing into the next zone waits for that zone's sector 0.
//! Radial position (for seeks) is the track index; several heads per cylinder are not modelled.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use crate::units::{SimDuration, SimTime, PS_PER_SEC};

/// One zone: LBAs `[first_lba, first_lba + sectors)` on tracks from `first_track`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Zone {
    /// First LBA of the zone.
    pub first_lba: u64,
    /// Sectors in the zone.
    pub sectors: u64,
    /// Sectors per track (per revolution), ≥ 1.
    pub spt: u64,
    /// Index of its first track (0 = outermost track of the disk).
    pub first_track: u64,
}

/// The zone table and rotation of one disk.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// Zones, outermost first.
    pub zones: Vec<Zone>,
    /// One revolution, picoseconds: `round(60·10¹² / rpm)`.
    pub rev_ps: u64,
    /// Tracks in all (the last may be partial).
    pub tracks: u64,
    /// Capacity, sectors.
    pub capacity: u64,
    /// The platter's angle at time 0, picoseconds into a revolution (below `rev_ps`; 0 by
    /// default: a disk whose spindle phase is not drawn).
    pub phase_ps: u64,
}

impl Geometry {
    /// The geometry for `capacity` sectors of `sector_bytes` at `rpm`, `zones` zones whose media
    /// rate (bit/s) falls linearly from `rate_outer` to `rate_inner`. Errors name the field.
    pub fn new(capacity: u64, sector_bytes: u32, rpm: u32, zones: u32, rate_outer: u64, rate_inner: u64) -> Result<Geometry, String> {
        if capacity == 0 {
            return Err("capacity_sectors: must be at least 1".into());
        }
        if sector_bytes == 0 {
            return Err("sector_bytes: must be at least 1".into());
        }
        if rpm == 0 {
            return Err("rpm: must be above 0".into());
        }
        if zones == 0 {
            return Err("zones: must be at least 1".into());
        }
        if rate_outer == 0 {
            return Err("rate_outer: must be above 0".into());
        }
        if rate_inner == 0 {
            return Err("rate_inner: must be above 0".into());
        }
        if rate_inner > rate_outer {
            return Err(format!("rate_inner: {rate_inner} bit/s is above rate_outer ({rate_outer} bit/s); media rates fall from outer to inner"));
        }
        let rev_ps = (60 * PS_PER_SEC + rpm as u64 / 2) / rpm as u64;
        let nominal = capacity.div_ceil(zones as u64);
        let mut out = Vec::with_capacity(zones as usize);
        let (mut lba, mut track) = (0u64, 0u64);
        for z in 0..zones as u64 {
            let rate = if zones == 1 { rate_outer } else { rate_outer - (rate_outer - rate_inner) * z / (zones as u64 - 1) };
            // Sectors per revolution: rate (bit/s) · T_rev (ps) / (8 · 10¹² · sector bytes).
            let spt = (rate as u128 * rev_ps as u128 / (8 * PS_PER_SEC as u128 * sector_bytes as u128)) as u64;
            if spt == 0 {
                let field = if z == 0 { "rate_outer" } else { "rate_inner" };
                return Err(format!("{field}: {rate} bit/s carries less than one {sector_bytes}-byte sector per revolution at {rpm} rpm"));
            }
            let left = capacity - lba;
            if left == 0 {
                return Err(format!("capacity_sectors: {capacity} sectors leave zone {z} of {zones} empty"));
            }
            let sectors = if z + 1 == zones as u64 { left } else { (nominal.div_ceil(spt) * spt).min(left) };
            out.push(Zone { first_lba: lba, sectors, spt, first_track: track });
            lba += sectors;
            track += sectors.div_ceil(spt);
        }
        Ok(Geometry { zones: out, rev_ps, tracks: track, capacity, phase_ps: 0 })
    }

    /// The zone holding `lba` (clamped to the last sector).
    pub fn zone_of(&self, lba: u64) -> &Zone {
        let lba = lba.min(self.capacity - 1);
        let i = self.zones.partition_point(|z| z.first_lba <= lba) - 1;
        &self.zones[i]
    }

    /// The track holding `lba` (clamped to the last sector).
    pub fn track(&self, lba: u64) -> u64 {
        let lba = lba.min(self.capacity - 1);
        let z = self.zone_of(lba);
        z.first_track + (lba - z.first_lba) / z.spt
    }

    /// Picoseconds into a revolution at which sector `lba` begins to pass under the head:
    /// `⌈slot · T_rev / spt⌉`, `slot` its index within its track.
    pub fn angle_ps(&self, lba: u64) -> u64 {
        let z = self.zone_of(lba);
        let slot = (lba - z.first_lba) % z.spt;
        (slot as u128 * self.rev_ps as u128).div_ceil(z.spt as u128) as u64
    }

    /// Rotational wait from `t` (head on the track) until sector `lba` begins: the platter's
    /// angle is `(t + phase_ps) mod T_rev`.
    pub fn rotation_wait(&self, lba: u64, t: SimTime) -> SimDuration {
        let phase = ((t.0 as u128 + self.phase_ps as u128) % self.rev_ps as u128) as u64;
        SimDuration((self.angle_ps(lba) + self.rev_ps - phase) % self.rev_ps)
    }

    /// When the last of `n` sectors from `lba` has passed under the head, the head being on the
    /// track at `t`: a rotational wait to the first sector of each zone the run touches, then
    /// `⌈(slot + m)·T_rev/spt⌉ − ⌈slot·T_rev/spt⌉` for the run's `m` sectors in that zone.
    pub fn media_end(&self, lba: u64, n: u64, t: SimTime) -> SimTime {
        let (mut lba, mut n, mut t) = (lba, n, t);
        while n > 0 {
            let z = *self.zone_of(lba);
            let in_zone = (z.first_lba + z.sectors - lba).min(n);
            t += self.rotation_wait(lba, t);
            let slot = ((lba - z.first_lba) % z.spt) as u128;
            let rev = self.rev_ps as u128;
            let spt = z.spt as u128;
            let span = ((slot + in_zone as u128) * rev).div_ceil(spt) - (slot * rev).div_ceil(spt);
            t += SimDuration(span as u64);
            lba += in_zone;
            n -= in_zone;
        }
        t
    }

    /// The LBA under the head at `t` for a run that began at `origin` at `t0` (sector `origin`
    /// beginning then), counted within `origin`'s zone; for a seek's starting point only.
    pub fn lba_at(&self, origin: u64, t0: SimTime, t: SimTime) -> u64 {
        let z = self.zone_of(origin);
        let passed = (t.since(t0).0 as u128 * z.spt as u128 / self.rev_ps as u128) as u64;
        origin.saturating_add(passed).min(z.first_lba + z.sectors)
    }

    /// Media bytes per second of zone `z` in this geometry: `spt · sector · 10¹² / T_rev`.
    pub fn zone_rate_bytes_per_s(&self, z: usize, sector_bytes: u32) -> f64 {
        self.zones[z].spt as f64 * sector_bytes as f64 * PS_PER_SEC as f64 / self.rev_ps as f64
    }
}

/// A seek curve of normalised distance `x = d / (tracks − 1)`:
/// `t(x) = a + b·√x` for `x ≤ knee` and `t(x) = c + e·x` above; `t(0) = 0` (no seek).
///
/// Fitted (`fit`) so that one track takes the track-to-track time, `x = 1` the full stroke, the
/// mean over seeks between two independent uniformly random LBAs the average, with the two pieces
/// meeting at the knee in value and slope (the knee found by bisection). The √ for short seeks
/// (acceleration-limited) and linear for long ones (coast at top speed) is the shape of Ruemmler
/// and Wilkes, "An introduction to disk drive modeling" (IEEE Computer, 1994), and of DiskSim's
/// three-point seek model; the fit here is this code's own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeekCurve {
    /// Constant of the short piece, seconds.
    pub a: f64,
    /// √ coefficient of the short piece, seconds.
    pub b: f64,
    /// Where the pieces meet, in (0, 1).
    pub knee: f64,
    /// Constant of the long piece, seconds.
    pub c: f64,
    /// Slope of the long piece, seconds per full stroke.
    pub e: f64,
    /// Tracks − 1: the full stroke in tracks (≥ 1).
    pub span: u64,
}

impl SeekCurve {
    /// Seek time over `d` tracks.
    pub fn time(&self, d: u64) -> SimDuration {
        if d == 0 {
            return SimDuration::ZERO;
        }
        let x = (d as f64 / self.span as f64).min(1.0);
        let s = if x <= self.knee { self.a + self.b * x.sqrt() } else { self.c + self.e * x };
        SimDuration::from_secs_f64(s)
    }

    /// Fit to `track` (one track), `average` (mean over random LBA pairs) and `full` (seconds)
    /// on `geo`. `field` names the parameter in errors (e.g. `"seek_read"`).
    pub fn fit(geo: &Geometry, track: f64, average: f64, full: f64, field: &str) -> Result<SeekCurve, String> {
        if !(track > 0.0 && track < average && average < full) {
            return Err(format!("{field}: needs 0 < track_to_track < average < full_stroke (got {:.3} ms, {:.3} ms, {:.3} ms)", track * 1e3, average * 1e3, full * 1e3));
        }
        let key = fit_key(geo, track, average, full);
        if let Some(curve) = FITTED.lock().ok().and_then(|m| m.get(&key).copied()) {
            return Ok(curve);
        }
        let curve = Self::fit_new(geo, track, average, full, field)?;
        if let Ok(mut m) = FITTED.lock() {
            if m.len() >= FITTED_MAX {
                m.clear();
            }
            m.insert(key, curve);
        }
        Ok(curve)
    }

    /// `fit` without the memo (the inputs already checked).
    pub(super) fn fit_new(geo: &Geometry, track: f64, average: f64, full: f64, field: &str) -> Result<SeekCurve, String> {
        let span = geo.tracks.saturating_sub(1).max(1);
        let m = DistanceMoments::new(geo, span);
        let x1 = 1.0 / span as f64;
        // Given the knee k the four conditions are linear in (a, b, c, e).
        let solve_at = |k: f64| -> Option<[f64; 4]> {
            let (m0, m1, m2, m3) = m.at(k);
            solve4([[1.0, x1.sqrt(), 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, k.sqrt(), -1.0, -k], [m0, m1, m2, m3]], [track, full, 0.0, average])
        };
        // Slope mismatch at the knee: the √ piece's slope minus the line's.
        let mismatch = |k: f64| solve_at(k).map(|s| s[1] / (2.0 * k.sqrt()) - s[3]);
        let (mut lo, mut hi) = ((4.0 * x1).max(1e-4), 0.95);
        let k = match (mismatch(lo), mismatch(hi)) {
            (Some(g_lo), Some(g_hi)) if g_lo > 0.0 && g_hi < 0.0 => {
                for _ in 0..60 {
                    let mid = 0.5 * (lo + hi);
                    match mismatch(mid) {
                        Some(g) if g > 0.0 => lo = mid,
                        Some(_) => hi = mid,
                        None => break,
                    }
                }
                0.5 * (lo + hi)
            }
            _ => return Err(format!("{field}.average: {:.3} ms cannot be fitted between track_to_track and full_stroke on this geometry", average * 1e3)),
        };
        let [a, b, c, e] = solve_at(k).ok_or_else(|| format!("{field}: the seek fit is singular"))?;
        if !(a >= 0.0 && b > 0.0 && e > 0.0) {
            return Err(format!("{field}.average: {:.3} ms gives a seek curve that is not increasing", average * 1e3));
        }
        Ok(SeekCurve { a, b, knee: k, c, e, span })
    }
}

/// Seek curves already fitted in this process, by `fit_key`. The fit is a pure function of
/// its inputs and costs tens of millions of instructions (the distance distribution's sort and
/// the bisection), while a scenario builds the same disk for every server and a sweep worker
/// the same scenario for every run. Emptied when it reaches `FITTED_MAX` entries.
static FITTED: LazyLock<Mutex<HashMap<Vec<u64>, SeekCurve>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Most curves `FITTED` keeps.
const FITTED_MAX: usize = 64;

/// Everything `SeekCurve::fit_new` reads: the zone table, tracks and capacity of `geo`, and the
/// three times' bit patterns.
fn fit_key(geo: &Geometry, track: f64, average: f64, full: f64) -> Vec<u64> {
    let mut key = Vec::with_capacity(5 + 3 * geo.zones.len());
    key.extend([geo.tracks, geo.capacity, track.to_bits(), average.to_bits(), full.to_bits()]);
    for z in &geo.zones {
        key.extend([z.sectors, z.spt, z.first_track]);
    }
    key
}

/// The distribution of the normalised track distance between two independent uniformly random
/// LBAs, as sorted weighted points with prefix sums: each zone is cut into `BINS` equal slices
/// of its tracks (each slice holding an equal share of the zone's LBAs), and each pair of slices
/// is one point at the distance of their centres (a slice with itself at a third of its width,
/// the mean distance of two uniform points in it).
struct DistanceMoments {
    dist: Vec<f64>,
    /// Prefix sums of weight, weight·√d and weight·d (one longer than `dist`).
    w: Vec<f64>,
    ws: Vec<f64>,
    wd: Vec<f64>,
}

const BINS: usize = 16;

impl DistanceMoments {
    fn new(geo: &Geometry, span: u64) -> Self {
        let mut slices: Vec<(f64, f64, f64)> = Vec::new(); // (centre, width, weight)
        for z in &geo.zones {
            let tracks = z.sectors as f64 / z.spt as f64;
            let width = tracks / BINS as f64 / span as f64;
            let weight = z.sectors as f64 / geo.capacity as f64 / BINS as f64;
            for i in 0..BINS {
                let centre = (z.first_track as f64 + tracks * (i as f64 + 0.5) / BINS as f64) / span as f64;
                slices.push((centre, width, weight));
            }
        }
        let mut points: Vec<(f64, f64)> = Vec::with_capacity(slices.len() * (slices.len() + 1) / 2);
        for (i, &(ci, wi, pi)) in slices.iter().enumerate() {
            points.push((wi / 3.0, pi * pi));
            for &(cj, _, pj) in &slices[i + 1..] {
                points.push(((ci - cj).abs(), 2.0 * pi * pj));
            }
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut m = DistanceMoments { dist: Vec::with_capacity(points.len()), w: vec![0.0], ws: vec![0.0], wd: vec![0.0] };
        for (d, p) in points {
            m.dist.push(d);
            m.w.push(m.w.last().unwrap_or(&0.0) + p);
            m.ws.push(m.ws.last().unwrap_or(&0.0) + p * d.sqrt());
            m.wd.push(m.wd.last().unwrap_or(&0.0) + p * d);
        }
        m
    }

    /// (P[x ≤ k], E[√x; x ≤ k], P[x > k], E[x; x > k]).
    fn at(&self, k: f64) -> (f64, f64, f64, f64) {
        let i = self.dist.partition_point(|&d| d <= k);
        let n = self.dist.len();
        (self.w[i], self.ws[i], self.w[n] - self.w[i], self.wd[n] - self.wd[i])
    }
}

/// Solve a 4×4 linear system by Gaussian elimination with partial pivoting.
fn solve4(mut a: [[f64; 4]; 4], mut y: [f64; 4]) -> Option<[f64; 4]> {
    for col in 0..4 {
        let p = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[p][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, p);
        y.swap(col, p);
        let (pivot, yc) = (a[col], y[col]);
        for (r, (row, yr)) in a.iter_mut().zip(y.iter_mut()).enumerate() {
            if r != col {
                let f = row[col] / pivot[col];
                for (x, p) in row.iter_mut().zip(pivot).skip(col) {
                    *x -= f * p;
                }
                *yr -= f * yc;
            }
        }
    }
    Some([y[0] / a[0][0], y[1] / a[1][1], y[2] / a[2][2], y[3] / a[3][3]])
}
