//! An on/off UDP source (ns-3's `OnOffApplication`, the classic model of bursty traffic):
//! on periods of constant-rate datagrams alternating with silent off periods, each period's
//! length drawn at random — exponential (an on/off Markov source), Pareto (heavy-tailed, whose
//! aggregate is self-similar: Willinger et al., 1997) or fixed. An on period starts with a
//! datagram and sends one every `packet_size·8/rate` while it lasts; the first on period
//! starts with the flow. (ns-3 carries the unsent part of a datagram's bits from one on period
//! to the next; here each on period starts afresh.)

use super::{Milestone, Notice, Socket, Sockets};
use crate::engine::Rng;
use crate::units::{BitRate, SimDuration, SimTime, PS_PER_SEC};

/// How an on or off period's length is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Period {
    /// Always this long.
    Fixed(SimDuration),
    /// Exponential with this mean.
    Exponential(SimDuration),
    /// Pareto with this mean and tail index `shape` (> 1): scale = mean·(shape − 1)/shape.
    Pareto {
        /// Mean length.
        mean: SimDuration,
        /// Tail index.
        shape: f64,
    },
}

impl Period {
    /// One period's length (at least 1 ps).
    pub fn draw(&self, rng: &mut Rng) -> SimDuration {
        let ps = |d: SimDuration| d.as_ps() as f64;
        let x = match *self {
            Period::Fixed(d) => return d.max(SimDuration(1)),
            Period::Exponential(m) => -ps(m) * (1.0 - rng.next_f64()).ln(),
            Period::Pareto { mean, shape } => ps(mean) * (shape - 1.0) / shape / (1.0 - rng.next_f64()).powf(1.0 / shape),
        };
        // Far beyond any run (10^6 s) is as good as forever.
        SimDuration(x.round().clamp(1.0, 1e6 * PS_PER_SEC as f64 * 2.0) as u64)
    }
}

/// An on/off source.
#[derive(Clone, Debug)]
pub struct OnOffSource {
    /// The socket it sends from (the source end of a UDP flow).
    pub socket: Socket,
    rate: BitRate,
    /// IP packet size in bytes.
    pub packet_size: u32,
    on: Period,
    off: Period,
    rng: Rng,
    stop_at: Option<SimTime>,
    /// Datagrams sent.
    pub sent: u64,
    /// The current on period: its start and end, and the datagrams sent in it.
    on_from: SimTime,
    on_until: SimTime,
    in_period: u64,
}

impl OnOffSource {
    /// A source sending at `rate` during on periods from `start` (its first on period), its
    /// `(on, off)` periods drawn from `rng`.
    pub fn new(socket: Socket, rate: BitRate, packet_size: u32, (on, off): (Period, Period), rng: Rng, start: SimTime, stop_at: Option<SimTime>) -> Self {
        assert!(rate.0 > 0, "an on/off source sends at a positive rate");
        let mut s = OnOffSource { socket, rate, packet_size, on, off, rng, stop_at, sent: 0, on_from: start, on_until: start, in_period: 0 };
        s.on_until = start + s.on.draw(&mut s.rng);
        s
    }

    /// The time of the next datagram, moving on to the next on period when this one has
    /// none left; none once past the stop time.
    fn next_time(&mut self) -> Option<SimTime> {
        loop {
            let t = self.on_from + self.rate.tx_time_bits(self.in_period * self.packet_size as u64 * 8);
            if t < self.on_until {
                return self.stop_at.is_none_or(|s| t < s).then_some(t);
            }
            if self.stop_at.is_some_and(|s| self.on_until >= s) {
                return None;
            }
            self.on_from = self.on_until + self.off.draw(&mut self.rng);
            self.on_until = self.on_from + self.on.draw(&mut self.rng);
            self.in_period = 0;
        }
    }

    /// Handle a notice: at the start arm the timer for the first datagram; at each timer send
    /// one and arm the next; finish the flow after the last (at the stop time).
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if notice == Notice::Timer {
            io.send_datagram(self.socket, self.packet_size);
            self.sent += 1;
            self.in_period += 1;
        }
        if !matches!(notice, Notice::Start | Notice::Timer) {
            return;
        }
        match self.next_time() {
            Some(t) => io.set_timer(t.max(io.now())),
            None => {
                io.finish_flow(self.socket);
                io.milestone(self.socket, Milestone::Sent, self.sent);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Send times until `until`, stepping the source as its timer would.
    fn times(mut s: OnOffSource) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(t) = s.next_time() {
            out.push(t.0);
            s.sent += 1;
            s.in_period += 1;
        }
        out
    }

    const MS: u64 = 1_000_000_000;

    #[test]
    fn fixed_periods_alternate_exactly() {
        // 1250 B at 10 Mb/s: one per ms; on 2.5 ms (3 datagrams), off 1.5 ms; stop at 10 ms.
        let s = OnOffSource::new(
            Socket::new(0, 0),
            BitRate(10_000_000),
            1250,
            (Period::Fixed(SimDuration(2_500_000_000)), Period::Fixed(SimDuration(1_500_000_000))),
            Rng::from_seed(1),
            SimTime(0),
            Some(SimTime(10 * MS)),
        );
        assert_eq!(times(s), vec![0, MS, 2 * MS, 4 * MS, 5 * MS, 6 * MS, 8 * MS, 9 * MS]);
    }

    /// Exponential on and off periods of means 10 ms and 30 ms: the source is on a quarter
    /// of the time, so it sends a quarter of its rate's datagrams (within 10 %, 400 s).
    #[test]
    fn exponential_periods_give_the_duty_cycle() {
        let s = OnOffSource::new(
            Socket::new(0, 0),
            BitRate(12_000_000),
            1500,
            (Period::Exponential(SimDuration(10 * MS)), Period::Exponential(SimDuration(30 * MS))),
            Rng::from_seed(7),
            SimTime(0),
            Some(SimTime(400_000 * MS)),
        );
        let n = times(s).len() as f64;
        let full = 400.0 * 1000.0; // one datagram per ms at 12 Mb/s
        assert!((n / full - 0.25).abs() < 0.025, "{}", n / full);
    }

    #[test]
    fn pareto_periods_have_their_mean_and_heavy_tail() {
        let p = Period::Pareto { mean: SimDuration(10 * MS), shape: 1.5 };
        let mut r = Rng::from_seed(3);
        let xs: Vec<f64> = (0..200_000).map(|_| p.draw(&mut r).as_ps() as f64 / MS as f64).collect();
        // Scale 10/3 ms; P(X > 4·scale) = 4^-1.5 = 1/8.
        let scale = 10.0 / 3.0;
        let tail = xs.iter().filter(|&&x| x > 4.0 * scale).count() as f64 / xs.len() as f64;
        assert!((tail - 0.125).abs() < 0.004, "{tail}");
        assert!(xs.iter().all(|&x| x >= scale * 0.999_999));
        // The mean of a shape-1.5 Pareto converges slowly (infinite variance): loose.
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 10.0).abs() < 1.0, "{mean}");
    }
}
