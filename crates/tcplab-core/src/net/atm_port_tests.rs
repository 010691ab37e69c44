//! The arithmetic port against a cell-by-cell reference, and its rules on cases worked by hand.

use std::collections::VecDeque;

use super::*;
use crate::engine::Rng;

const OC3: u64 = 149_760_000;

fn cfg(ubr_buffer: u64, cbr_bps: u64, discard: Discard) -> AtmPortConfig {
    AtmPortConfig { line_bps: OC3, ubr_buffer, cbr_bps, cbr_unit: CbrUnit::Cell, cbr_burst: 1, discard }
}

/// OC-3c's cell time as a fraction of picoseconds: 424·10¹² / 149.76·10⁶.
fn oc3_cell() -> (u64, u64) {
    (424 * 1_000_000_000_000 / 1_000, OC3 / 1_000)
}

/// The port driven as the simulation drives it: each frame begun when its first cell arrives
/// and finished when its last has, in time order (begins before finishes at one instant; among
/// frames starting together, in list order). Cells arriving at one instant go in begin order.
fn fast(cfg: AtmPortConfig, trains: &[Train]) -> Vec<Fate> {
    let mut port = AtmPort::new(cfg);
    let mut ev: Vec<(SimTime, u8, usize)> = Vec::new();
    for (i, t) in trains.iter().enumerate() {
        ev.push((t.first, 0, i));
        ev.push((t.last(), 1, i));
    }
    ev.sort();
    let mut out = vec![Fate::default(); trains.len()];
    for (_, kind, i) in ev {
        if kind == 0 {
            port.begin(i as u64, trains[i]);
        } else {
            out[i] = port.finish(i as u64);
        }
    }
    assert_eq!(port.open_frames(), 0);
    out
}

/// The reference: every cell in arrival order (ties in the frames' begin order: first cell,
/// then list order) against a slot-by-slot
/// server: each UBR slot takes the head of the queue, a slot starting at a cell's very
/// arrival instant is served before that cell is counted, and an unused slot starting then
/// is still the cell's to take.
fn reference(cfg: AtmPortConfig, trains: &[Train]) -> Vec<Fate> {
    let port = AtmPort::new(cfg);
    let mut cells: Vec<(SimTime, SimTime, usize, u32)> = Vec::new();
    for (i, t) in trains.iter().enumerate() {
        for k in 0..t.cells {
            cells.push((t.arrival(k), t.first, i, k));
        }
    }
    cells.sort();
    let mut fates = vec![Fate::default(); trains.len()];
    let mut refused = vec![false; trains.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    let mut slot = 0u64;
    let serve = |slot: u64, queue: &mut VecDeque<usize>, fates: &mut Vec<Fate>| {
        if !port.is_cbr(slot) {
            if let Some(i) = queue.pop_front() {
                fates[i].first_out.get_or_insert(port.slot_start(slot));
                fates[i].last_out = Some(port.slot_start(slot + 1));
            }
        }
    };
    for (t, _, i, k) in cells {
        while port.slot_start(slot) < t {
            serve(slot, &mut queue, &mut fates);
            slot += 1;
        }
        if port.slot_start(slot) == t && !queue.is_empty() {
            serve(slot, &mut queue, &mut fates);
            slot += 1;
        }
        let found = queue.len() as u64;
        let eof = k + 1 == trains[i].cells;
        if k == 0 {
            if let Discard::Epd { threshold } = cfg.discard {
                refused[i] = found >= threshold;
            }
        }
        let partial = cfg.discard != Discard::TailDrop && fates[i].dropped > 0 && !eof;
        if refused[i] || partial || found >= cfg.ubr_buffer {
            fates[i].dropped += 1;
            if eof {
                fates[i].eof_lost = true;
            }
        } else {
            queue.push_back(i);
            fates[i].sent += 1;
        }
    }
    while !queue.is_empty() {
        serve(slot, &mut queue, &mut fates);
        slot += 1;
    }
    fates
}

#[test]
fn the_arithmetic_port_decides_every_cell_as_the_cell_by_cell_reference() {
    let mut rng = Rng::from_seed(2026);
    let mut damaged = 0;
    for case in 0..300 {
        let discard = match case % 3 {
            0 => Discard::TailDrop,
            1 => Discard::Ppd,
            _ => Discard::Epd { threshold: 5 + rng.below(200) },
        };
        let unit = if case % 2 == 0 { CbrUnit::Cell } else { CbrUnit::Payload };
        let cbr = [0, 10_000_000, 60_000_000, 100_000_000, 135_000_000][rng.below(5) as usize];
        let cbr_burst = [1, 1, 8, 100][rng.below(4) as usize] as u32;
        let c = AtmPortConfig { line_bps: OC3, ubr_buffer: 1 + rng.below(400), cbr_bps: cbr, cbr_unit: unit, cbr_burst, discard };
        // Two or three inputs, each a sequence of frames at its own cell time (OC-3c, or a
        // faster 622 Mb/s input), frames of 1 to 192 cells with random gaps.
        let inputs = 1 + rng.below(3);
        let mut trains = Vec::new();
        for inp in 0..inputs {
            let cell_time = if inp == 2 { (424_000_000, 622_080) } else { oc3_cell() };
            let mut t = rng.below(50_000_000);
            let slots = AtmPort::new(c);
            for _ in 0..(5 + rng.below(30)) {
                let cells = 1 + rng.below(192) as u32;
                // Half the frames start on an output slot boundary: a cell arriving at the
                // very instant a slot starts is the case where the order of things matters.
                if rng.below(2) == 0 {
                    let n = (t as u128 * OC3 as u128).div_ceil(CELL_BITS * 1_000_000_000_000) as u64;
                    t = slots.slot_start(n).0;
                }
                let tr = Train { first: SimTime(t), cells, cell_time };
                trains.push(tr);
                t = tr.last().0 + cell_time.0 / cell_time.1 + rng.below(40_000_000) * rng.below(2);
            }
        }
        let want = reference(c, &trains);
        let got = fast(c, &trains);
        assert_eq!(got, want, "case {case}: {c:?}");
        damaged += want.iter().filter(|f| !f.intact()).count();
    }
    assert!(damaged > 500, "the cases must exercise losses: {damaged} damaged frames");
}

#[test]
fn cbr_takes_its_share_of_slots_evenly() {
    let port = AtmPort::new(cfg(100, 60_000_000, Discard::TailDrop));
    let n = 1_000_000u64;
    let cbr = (0..n).filter(|&s| port.is_cbr(s)).count() as f64;
    assert!((cbr / n as f64 - 60.0 / 149.76).abs() < 1e-5);
    // Evenly: never two CBR slots in a row below half the line.
    assert!((0..10_000).all(|s| !(port.is_cbr(s) && port.is_cbr(s + 1))));
    // Counting payloads, the same bit rate is more cells.
    let payload = AtmPort::new(AtmPortConfig { cbr_unit: CbrUnit::Payload, ..cfg(100, 60_000_000, Discard::TailDrop) });
    let cells = (0..n).filter(|&s| payload.is_cbr(s)).count() as f64;
    assert!((cells / n as f64 - 60.0 * 53.0 / 48.0 / 149.76).abs() < 1e-5);
}

#[test]
fn cbr_in_bursts_keeps_its_rate_in_runs_of_k_slots() {
    for k in [2u32, 8, 100] {
        let port = AtmPort::new(AtmPortConfig { cbr_burst: k, ..cfg(100, 60_000_000, Discard::TailDrop) });
        let n = 1_000_000u64;
        let cbr: Vec<bool> = (0..n).map(|s| port.is_cbr(s)).collect();
        let share = cbr.iter().filter(|&&c| c).count() as f64 / n as f64;
        assert!((share - 60.0 / 149.76).abs() < 1e-4, "k {k}: {share}");
        // Every run of CBR slots is exactly k long (the first may be cut by slot 0).
        let mut runs = Vec::new();
        let mut len = 0;
        for &c in &cbr {
            if c {
                len += 1;
            } else if len > 0 {
                runs.push(len);
                len = 0;
            }
        }
        assert!(runs.len() > 100 && runs.iter().all(|&r| r == k), "k {k}: {:?}", &runs[..5]);
    }
    // A UBR burst behind a CBR burst waits for it: 100 back-to-back CBR cells hold the line.
    let port = AtmPort::new(AtmPortConfig { cbr_burst: 100, ..cfg(100, 60_000_000, Discard::TailDrop) });
    assert!((0..100).all(|s| port.is_cbr(s)) && !port.is_cbr(100));
}

#[test]
fn a_frame_at_line_rate_into_an_idle_port_leaves_cell_for_cell() {
    let mut port = AtmPort::new(cfg(10, 0, Discard::TailDrop));
    let tr = Train { first: port.slot_start(100), cells: 32, cell_time: oc3_cell() };
    port.begin(0, tr);
    let f = port.finish(0);
    assert_eq!((f.sent, f.dropped, f.eof_lost), (32, 0, false));
    assert_eq!(f.last_out, Some(port.slot_start(132)), "each cell in the slot it arrives at");
    assert_eq!(port.stats.max_waiting, 0);
}

#[test]
fn cbr_makes_a_line_rate_train_queue_and_overflow_where_the_arithmetic_says() {
    // With ρ = 60/149.76 of the slots taken, a line-rate train gains ρ waiting cells per cell:
    // a 100-cell buffer overflows near cell 100/ρ ≈ 250, and keeps overflowing while the train
    // lasts, so the frame loses its end-of-frame cell too.
    let run = |cells: u32| {
        let mut p = AtmPort::new(cfg(100, 60_000_000, Discard::TailDrop));
        p.begin(0, Train { first: SimTime(0), cells, cell_time: oc3_cell() });
        (p.finish(0), p.stats)
    };
    let (f, st) = run(600);
    assert!(f.dropped > 0 && f.eof_lost, "{f:?}");
    assert_eq!(st.max_waiting, 100);
    assert_eq!(f.sent as u64 + f.dropped as u64, 600);
    let first = (1..600).find(|&c| run(c).0.dropped > 0).expect("overflows");
    assert!((240..=262).contains(&first), "first loss in a train of {first} cells, ≈ 100/ρ = 250");
}

#[test]
fn ppd_drops_the_rest_of_a_damaged_frame_but_its_end_and_epd_refuses_whole_frames() {
    // A 600-cell frame overflowing a 100-cell buffer: tail drop sends whatever finds room,
    // PPD nothing after the first loss but the end-of-frame cell, which finds room by then.
    let one = |d: Discard| fast(cfg(100, 60_000_000, d), &[Train { first: SimTime(0), cells: 600, cell_time: oc3_cell() }])[0];
    let tail = one(Discard::TailDrop);
    let ppd = one(Discard::Ppd);
    assert!(ppd.sent < tail.sent, "PPD sends less of a lost frame: {} vs {}", ppd.sent, tail.sent);
    assert!(!ppd.eof_lost, "{ppd:?}");
    assert!((239..=262).contains(&(ppd.sent - 1)), "the cells before the loss: {}", ppd.sent - 1);
    // EPD: a 140-cell frame at line rate leaves ≈ 0.4·140 = 56 cells waiting; a frame that
    // starts right after it is refused whole at a threshold of 50, and admitted at 80.
    let a = Train { first: SimTime(0), cells: 140, cell_time: oc3_cell() };
    let b = Train { first: SimTime(a.last().0 + 2_831_197), cells: 40, cell_time: oc3_cell() };
    let f = fast(cfg(100, 60_000_000, Discard::Epd { threshold: 50 }), &[a, b]);
    assert!(f[0].intact(), "{:?}", f[0]);
    assert_eq!((f[1].sent, f[1].dropped, f[1].eof_lost), (0, 40, true), "refused whole");
    let f = fast(cfg(100, 60_000_000, Discard::Epd { threshold: 80 }), &[a, b]);
    assert!(f[1].intact(), "{:?}", f[1]);
}

#[test]
fn a_lone_frame_the_backlog_bound_condemns_loses_a_cell_at_every_phase() {
    // 9,180-byte IP packets over LLC/SNAP are 192 cells; at OC-3c into a port with 60 Mb/s of
    // CBR, at least 75 cells wait when the last arrives. Every phase of the CBR pattern (the
    // frame's first cell at each of 600 instants over several CBR periods) loses a cell with a
    // buffer at the bound, and passes with a few cells more: the bound is sure and nearly tight.
    let line = cfg(0, 60_000_000, Discard::TailDrop);
    let bound = line.lone_frame_backlog(192, oc3_cell());
    assert_eq!(bound, 75);
    let fates = |buffer: u64| -> Vec<Fate> {
        (0..600u64)
            .map(|k| {
                let train = Train { first: SimTime(1_000_000 + k * 1_417), cells: 192, cell_time: oc3_cell() };
                let c = AtmPortConfig { ubr_buffer: buffer, ..line };
                let (a, b) = (fast(c, &[train])[0], reference(c, &[train])[0]);
                assert_eq!(a, b, "the arithmetic port agrees with the reference");
                a
            })
            .collect()
    };
    assert!(fates(bound).iter().all(|f| !f.intact()), "a frame passed a buffer of the bound");
    assert!(fates(bound + 4).iter().any(|f| f.intact()), "the bound is loose");
    // From a host (all cells at once) a frame longer than the buffer always loses cells; with
    // no CBR and an input no faster than the line, nothing ever waits.
    assert_eq!(line.lone_frame_backlog(192, (0, 1)), 190);
    assert_eq!(cfg(0, 0, Discard::TailDrop).lone_frame_backlog(192, oc3_cell()), 0);
}
