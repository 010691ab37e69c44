//! Equal-cost multipath (ECMP) next-hop selection, as switches hash it: a flow's 5-tuple,
//! salted with the run's ECMP seed and with the switch, picks one of the switch's next hops
//! that lie on a shortest path to the destination. Each switch hashes on its own (its own
//! salt), so two switches on a path choose independently, and the two directions of a flow
//! hash their own (reversed) 5-tuples.
//!
//! Pure functions only: `net::route::Graph::route_by` walks the path and asks `pick` at every
//! node with more than one choice; `scenario::build::network::Routes` supplies the seed (the
//! stream `routing/ecmp` of the run's seed tree) and each switch's salt (the FNV-1a hash of
//! its name, so a switch hashes the same whatever the order of the declarations).

/// The fields a switch hashes: addresses, ports and protocol of one direction of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FiveTuple {
    /// Source IPv4 address.
    pub src: [u8; 4],
    /// Destination IPv4 address.
    pub dst: [u8; 4],
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// IP protocol number (6 TCP, 17 UDP).
    pub proto: u8,
}

impl FiveTuple {
    /// TCP's protocol number.
    pub const TCP: u8 = 6;
    /// UDP's protocol number.
    pub const UDP: u8 = 17;

    /// The other direction's tuple: addresses and ports swapped.
    pub fn reversed(&self) -> FiveTuple {
        FiveTuple { src: self.dst, dst: self.src, sport: self.dport, dport: self.sport, proto: self.proto }
    }
}

/// splitmix64's output function (Steele, Lea & Flood 2014): a bijection on u64 whose every
/// output bit depends on every input bit.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The 64-bit hash of `t` at the switch whose salt is `switch`, under the run's ECMP `seed`:
/// each word (seed, switch, the two addresses, ports and protocol) folded in through a full
/// splitmix64 round, so any change of a field changes every bit of the result.
pub fn hash(seed: u64, t: &FiveTuple, switch: u64) -> u64 {
    let addresses = (u64::from(u32::from_be_bytes(t.src)) << 32) | u64::from(u32::from_be_bytes(t.dst));
    let rest = (u64::from(t.sport) << 24) | (u64::from(t.dport) << 8) | u64::from(t.proto);
    let mut h = mix(seed);
    for w in [switch, addresses, rest] {
        h = mix(h ^ w);
    }
    h
}

/// Which of `choices` next hops (in the switch's link declaration order) the flow `t` takes at
/// the switch salted `switch`: the hash scaled to `0..choices` by a 128-bit multiply (Lemire's
/// range reduction; no modulo bias beyond choices / 2⁶⁴). `choices` must be at least 1.
pub fn pick(seed: u64, t: &FiveTuple, switch: u64, choices: usize) -> usize {
    assert!(choices >= 1, "a switch on a path has at least one next hop");
    ((u128::from(hash(seed, t, switch)) * choices as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(k: u32) -> FiveTuple {
        FiveTuple { src: [10, 0, 0, 1 + (k % 200) as u8], dst: [10, 0, 1, 1 + (k / 200) as u8], sport: 32_768 + (k % 28_000) as u16, dport: 5001, proto: FiveTuple::TCP }
    }

    #[test]
    fn picks_are_deterministic_and_in_range() {
        for k in 0..1000 {
            let t = tuple(k);
            for choices in 1..9 {
                let p = pick(7, &t, 3, choices);
                assert!(p < choices);
                assert_eq!(p, pick(7, &t, 3, choices));
            }
        }
    }

    #[test]
    fn every_field_seed_and_switch_changes_the_hash() {
        let t = tuple(5);
        let base = hash(1, &t, 2);
        let variants = [
            hash(2, &t, 2),
            hash(1, &t, 3),
            hash(1, &FiveTuple { src: [10, 0, 0, 7], ..t }, 2),
            hash(1, &FiveTuple { dst: [10, 0, 9, 1], ..t }, 2),
            hash(1, &FiveTuple { sport: t.sport + 1, ..t }, 2),
            hash(1, &FiveTuple { dport: 5002, ..t }, 2),
            hash(1, &FiveTuple { proto: FiveTuple::UDP, ..t }, 2),
            hash(1, &t.reversed(), 2),
        ];
        for v in variants {
            assert_ne!(v, base);
            // About half the bits flip (avalanche); 16..48 of 64 is ~5.6σ either way.
            assert!((16..=48).contains(&(v ^ base).count_ones()), "{:064b}", v ^ base);
        }
        assert_eq!(t.reversed().reversed(), t);
    }

    /// Over 40,000 tuples each of 4 choices gets 10,000 ± 6σ (σ = √(n·¼·¾) ≈ 86.6): a hash
    /// that behaves as a uniform draw fails this with probability ~10⁻⁸.
    #[test]
    fn picks_spread_evenly() {
        let n = 40_000u32;
        let mut count = [0u32; 4];
        for k in 0..n {
            count[pick(11, &tuple(k), 99, 4)] += 1;
        }
        let sigma = (f64::from(n) * 0.25 * 0.75).sqrt();
        for c in count {
            assert!((f64::from(c) - f64::from(n) / 4.0).abs() < 6.0 * sigma, "{count:?}");
        }
    }
}
