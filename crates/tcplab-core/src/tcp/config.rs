//! Per-connection TCP settings, fully resolved (the scenario layer fills every default).

use crate::tcp::cc::{CcConfig, RenoConfig};
use crate::tcp::rtt::{RtoPolicy, RttEstimatorKind};
use crate::units::SimDuration;

/// How the sender judges that it is cwnd-limited (window growth needs it with validation on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndLimitedRule {
    /// The flight before the ACK was within one MSS of the window (RFC 7661 §4.1's test; Linux
    /// 2.6 `tcp_is_cwnd_limited` without TSO: in_flight ≥ cwnd).
    Flight,
    /// Linux 3.16–6.1 (commit ca8a22634381, `tcp_cwnd_validate`/`tcp_is_cwnd_limited`): the
    /// last send attempt left the flight at or above cwnd in the current window, or, in slow
    /// start, cwnd is below twice the most segments out in the window (so an application that
    /// keeps half the window busy still doubles it).
    Linux,
}

/// Which loss-recovery procedure the sender uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryKind {
    /// SACK (RFC 6675) if both ends negotiated it, else Reno if the controller is `reno`, else
    /// NewReno.
    Auto,
    /// Reno fast recovery (RFC 5681 §3.2): leave recovery on the first new ACK.
    Reno,
    /// NewReno (RFC 6582): stay in recovery until the recovery point is acknowledged.
    NewReno,
    /// Conservative SACK-based recovery (RFC 6675); needs SACK negotiated, else NewReno.
    Sack,
    /// Linux 2.6 SACK recovery: FACK loss marking (everything un-SACKed more than
    /// `dupthresh` segments below the highest SACK is lost) and rate-halving (cwnd −1 per two
    /// ACKs down to the controller's `min_cwnd`, never above in-flight + 1); needs SACK
    /// negotiated, else NewReno.
    LinuxSack,
    /// Modern Linux SACK recovery (3.2+, RFC 6937): RFC 6675 loss marking, Proportional Rate
    /// Reduction of the window (`tcp_cwnd_reduction`: a share ssthresh/prior cwnd of what each
    /// ACK delivers while the pipe is above ssthresh, then slow-start-bounded back up to it),
    /// lost-retransmission detection, no forward or rescue retransmissions (removed in 4.11;
    /// never in Linux), and the window set to ssthresh on exit; needs SACK negotiated, else
    /// NewReno.
    LinuxPrr,
}

/// How the initial window is chosen when `initial_cwnd` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindowRule {
    /// RFC 5681 §3.1: 4 segments up to 1095 bytes of MSS, 3 up to 2190, else 2.
    Rfc5681,
    /// Linux 2.6 `tcp_init_cwnd`: 4 up to 1095, 3 up to 1460, else 2.
    Linux,
    /// 4.4BSD/FreeBSD `tcp_mss` for a peer on the local network (`in_localaddr`): no slow
    /// start at all, the window opens at once to what the receiver offers.
    BsdLocal,
}

/// Which rule Nagle's algorithm holds a short segment by (when `nagle` is on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NagleRule {
    /// RFC 896 / RFC 1122 §4.2.3.4: a short segment waits while any data is unacknowledged
    /// (ns-3's `TcpSocketBase`).
    Rfc896,
    /// 4.4BSD/FreeBSD `tcp_output`: RFC 896's, but the closing tail goes at once with the FIN
    /// (`flags & TH_FIN ... goto send`).
    Bsd,
    /// Linux 2.4 to 6.x (`tcp_nagle_test`, `tcp_nagle_check`, `tcp_minshall_check`; Minshall's
    /// draft-minshall-nagle-01): a short segment waits only while an earlier *short* segment
    /// is unacknowledged, and the one that carries the FIN never waits.
    Linux,
}

/// Which Linux's receive-window rules `rcv_window_growth` follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcvWindowRule {
    /// Linux 2.6.16 (`tcp_select_initial_window`, net/ipv4/tcp_output.c): the first window is
    /// the receive space in whole segments, at most 32767 bytes (MAX_TCP_WINDOW), and at most
    /// 4/3/2 segments (MSS up to 1460 / 4380 / above) when the window scale is below the MSS;
    /// only in-order segments grow it.
    Linux2616,
    /// Linux 4.20 to 6.9 (also 4.19.86+ stable): `tcp_select_initial_window` since commit
    /// a337531b942b ("tcp: up initial rmem to 128KB and SYN rwin to around 64KB") makes the first
    /// window the receive space in whole segments, at most 65535 bytes (U16_MAX), with no
    /// segment cap; out-of-order segments of a SACK connection grow it too
    /// (`tcp_data_queue_ofo`). (6.10 dropped the 65535 cap, commit 378979e94e95: with a fixed
    /// receive buffer the window then starts whole and never grows, which is
    /// `rcv_window_growth` off.)
    Linux420,
}

/// TCP settings of one endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size announced and used, in bytes, *including* option space: with
    /// timestamps a full segment carries `mss - 12` payload bytes (as Linux does).
    pub mss: u32,
    /// Offer SACK.
    pub sack: bool,
    /// Offer RFC 7323 timestamps.
    pub timestamps: bool,
    /// Offer RFC 7323 window scaling.
    pub window_scaling: bool,
    /// Nagle's algorithm (RFC 896 / RFC 1122 §4.2.3.4).
    pub nagle: bool,
    /// Which segments Nagle's algorithm holds (default RFC 896's).
    pub nagle_rule: NagleRule,
    /// Send socket buffer in bytes: unacknowledged plus unsent data never exceeds it.
    pub sndbuf: u64,
    /// Receive socket buffer in bytes: bounds the advertised window.
    pub rcvbuf: u64,
    /// Initial window in segments (0 = by `initial_cwnd_rule` from the MSS).
    pub initial_cwnd: u32,
    /// The MSS-based rule used when `initial_cwnd` is 0.
    pub initial_cwnd_rule: InitialWindowRule,
    /// Segments acknowledged one by one at the start of the connection (Linux quick-ACK
    /// mode: up to 16); 0 = none.
    pub quickack: u32,
    /// Linux receive-window growth (`tcp_grow_window`): the advertised window starts at the
    /// initial receive window of `rcv_window_rule` and grows by 2·MSS per in-order data
    /// segment of at least 128 bytes up to `rcvbuf`; every growth step ACKs that segment at
    /// once (quick-ACK mode).
    pub rcv_window_growth: bool,
    /// The Linux version whose receive-window rules (first window, growth on out-of-order
    /// segments) `rcv_window_growth` follows.
    pub rcv_window_rule: RcvWindowRule,
    /// Memory a received data segment occupies (Linux `skb->truesize`: the NIC's receive
    /// buffer plus `struct sk_buff`), bytes; 0 = the segment's own length (the growth check
    /// always passes). Only used with `rcv_window_growth`.
    pub rx_truesize: u64,
    /// Linux `net.ipv4.tcp_rmem[2]`, bytes, the size target of `__tcp_grow_window`'s fallback
    /// when `rx_truesize` fails the first check; 0 = unbounded. Only used with `rcv_window_growth`.
    pub tcp_rmem_max: u64,
    /// Initial ssthresh in bytes (`u64::MAX` = unlimited).
    pub initial_ssthresh: u64,
    /// ACK at least every this many full-sized segments (1 = ACK every segment).
    pub delack_segments: u32,
    /// Delayed-ACK timeout (RFC 1122: at most 500 ms; Linux: 40 ms minimum; BSD: 200 ms tick).
    pub delack_timeout: SimDuration,
    /// RTT estimator.
    pub rtt_estimator: RttEstimatorKind,
    /// Retransmission-timer policy.
    pub rto: RtoPolicy,
    /// RFC 3042 limited transmit (non-SACK recovery; with SACK the pipe rule has the same effect).
    pub limited_transmit: bool,
    /// RFC 7661 congestion-window validation: the window grows only on ACKs that arrive while
    /// the sender is cwnd-limited (flight within one MSS of the window). Off, it grows on
    /// every ACK that acknowledges data (ns-3; stacks before RFC 2861). It never shrinks an
    /// unused window (RFC 2861's decay is `cwnd_app_limited_decay`).
    pub cwnd_validation: bool,
    /// How cwnd-limited is judged (default: the flight before the ACK, RFC 7661).
    pub cwnd_limited: CwndLimitedRule,
    /// Duplicate-ACK threshold.
    pub dupthresh: u32,
    /// NewReno's recovery restarts the retransmission timer on every partial ACK
    /// ("Slow-but-Steady", RFC 6582 §4), not only the first ("Impatient", §3.2 step 5; the
    /// default, false).
    pub rto_every_partial_ack: bool,
    /// Loss recovery procedure.
    pub recovery: RecoveryKind,
    /// Congestion controller.
    pub cc: CcConfig,
    /// Ask for (and accept) ECN (RFC 3168); a controller that needs it (DCTCP) has it on.
    pub ecn: bool,
    /// Period of the timestamp clock (TSval ticks); Linux 2.6.16 at HZ=250: 4 ms; modern: 1 ms.
    pub ts_tick: SimDuration,
    /// Zero-window probe interval before backoff (BSD/Linux use the RTO; here a floor).
    pub persist_min: SimDuration,
    /// Kernel HZ: the host clock's ticks per second (`Connection::host_clock`), default 1000.
    pub hz: u32,
    /// Timers run on the host's clock ticks, as BSD's callout-less timers (default false): a
    /// delayed ACK goes at the next tick of a `delack_timeout` grid (the 200 ms fast timer),
    /// the retransmission timer counts whole ticks of the `rto.granularity` grid (the 500 ms
    /// slow timer) and so fires up to one tick early. The grids' phase is the host's
    /// (`Connection::set_clock_phase`).
    pub timer_ticks: bool,
    /// Timers on the host's 1/HZ clock, this tick (FreeBSD 4.x's callouts, which count
    /// hardclock ticks), default `None`: the retransmission timer counts whole ticks (it fires
    /// at the ⌈RTO/tick⌉-th tick after it is set), and the delayed ACK fires `delack_timeout`
    /// after the segment that started it, at the tick the callout counts to (between
    /// `delack_timeout` − tick and `delack_timeout` later), not at a global fast-timer tick as
    /// `timer_ticks`. The ticks' phase is the host's (`Connection::set_clock_phase`).
    pub timer_tick: Option<SimDuration>,
    /// Socket buffers rounded up to whole segments once the MSS is known (BSD `tcp_mss`:
    /// `roundup(sb_hiwat, mss)`), default false.
    pub round_buffers_to_mss: bool,
    /// The receiving application's read sends a window update, BSD style (default false): data
    /// read on arrival is followed at once by BSD's `tcp_usr_rcvd` → `tcp_output`, which sends
    /// an ACK when the window it could advertise exceeds the one the peer knows by at least two
    /// segments or half the receive buffer (4.4BSD `tcp_output`; TCP/IP Illustrated Vol. 2
    /// §26.3). Without it such an ACK waits for the delayed-ACK rule.
    pub window_update_on_read: bool,
    /// Segments ride IPv6 (40-byte headers; no extension headers) instead of IPv4 (20 bytes)
    /// (default false). The MSS is the configured `mss` either way.
    pub ipv6: bool,
    /// What the sender does when its own host's interface queue (the first queue on its
    /// route) has no room for a segment it is about to send (default `Drop`).
    pub local_congestion: LocalCongestion,
    /// Linux's `tcp_moderate_cwnd` (2.4.17–2.4.20 `tcp_input.c`; `tcp_max_burst` = 3 in
    /// `tcp.h`), in segments; 0 = off (default). After an ACK that Linux's state machine
    /// handles outside fast recovery and CWR — any ACK while duplicate ACKs or SACKed data are
    /// outstanding or a timeout's repair is under way (`tcp_fastretrans_alert`'s Loss case),
    /// a duplicate ACK, an ACK with new SACK information or ECN-Echo, and the ACK that ends a
    /// recovery, a CWR or a timeout's repair (`tcp_try_to_open`) — cwnd is cut to the
    /// segments in flight plus this many, so a stretch ACK releases no larger burst.
    pub moderate_cwnd: u32,
    /// RFC 2861's restart after idle as Linux 2.4 runs it (2.4.17–2.4.20 `tcp_output.c`
    /// `tcp_event_data_sent`, `tcp_cwnd_restart`), default false: a data segment sent with
    /// nothing outstanding more than one RTO after the last one raises ssthresh to ¾ cwnd if
    /// below (`tcp_current_ssthresh`) and halves cwnd once per RTO of the idle time, not below
    /// the restart window min(`tcp_init_cwnd`, cwnd) (see `conn::rfc2861`).
    pub cwnd_idle_restart: bool,
    /// RFC 2861's decay of an unused window as Linux 2.4 runs it (2.4.17–2.4.20 `tcp.h`
    /// `tcp_cwnd_validate`, `tcp_input.c` `tcp_cwnd_application_limited`), default false: when
    /// the sender has not filled cwnd for an RTO, in the Open state, and its application is not
    /// waiting for room in the send buffer, ssthresh is raised to ¾ cwnd if below and cwnd
    /// falls halfway to the most segments it had out (at least 2). Unlike `cwnd_validation`
    /// (RFC 7661), which only stops growth while the window is not used, this shrinks it.
    pub cwnd_app_limited_decay: bool,
    /// How a reduction that is not a loss (ECN-Echo, the local queue's refusal) cuts the
    /// window (default `AtOnce`).
    pub cwr_reduction: CwrReduction,
    /// RFC 2883 D-SACK as Linux 2.4 sends it (2.4.17–2.4.20 `tcp_input.c` `tcp_dsack_set`,
    /// `tcp_dsack_extend`, `tcp_send_dupack`), default false: a data segment wholly or partly
    /// below RCV.NXT, or a copy of out-of-order data already held, is reported as the first
    /// SACK block of the next segment, sent at once. Only with SACK negotiated (see
    /// `conn::dsack`). Every sender recognises a D-SACK block whatever this says.
    pub dsack: bool,
    /// Linux 2.4's undo of a window reduction found needless (2.4.17–2.4.20 `tcp_input.c`
    /// `tcp_try_undo_recovery`/`_partial`/`_dsack`/`_loss`, `tcp_undo_cwr`), default false:
    /// by D-SACKs covering every retransmission of the episode, or by an echoed timestamp
    /// older than its first retransmission (see `conn::undo`).
    pub undo: bool,
}

/// How the window comes down on ECN-Echo or a local refusal (`conn::cwr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CwrReduction {
    /// The controller's reduction at once, ssthresh and cwnd together (RFC 3168 §6.1.2).
    #[default]
    AtOnce,
    /// Linux 2.4's CWR state (2.4.17–2.4.20 `tcp.h` `tcp_enter_cwr`, `tcp_input.c`
    /// `tcp_cwnd_down`, `tcp_complete_cwr`): ssthresh by the controller's rule, cwnd kept (at
    /// most in-flight + 1 segment) and then lowered by one segment every second ACK, not below
    /// ssthresh/2 nor above in-flight + 1, with no growth, until an ACK passes SND.NXT at entry;
    /// then cwnd = min(cwnd, ssthresh). A loss detected meanwhile starts recovery from that
    /// window without a second reduction of ssthresh.
    RateHalving,
}

/// A sender's answer to its own host's full interface queue (see `conn::local`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LocalCongestion {
    /// The queue drops the segment as any router's would; the sender finds the loss as it
    /// finds any other (duplicate ACKs, SACK or its timer).
    #[default]
    Drop,
    /// Linux (2.4 to 6.x): the qdisc refuses the packet, `tcp_transmit_skb` reports it and
    /// calls `tcp_enter_cwr`, and the segment stays unsent until the next ACK or timer; no
    /// loss, one window reduction (at most one per window, none during loss recovery).
    Cwr,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            sack: true,
            timestamps: false,
            window_scaling: true,
            nagle: true,
            nagle_rule: NagleRule::Rfc896,
            sndbuf: 4_000_000,
            rcvbuf: 4_000_000,
            initial_cwnd: 0,
            initial_cwnd_rule: InitialWindowRule::Rfc5681,
            quickack: 0,
            rcv_window_growth: false,
            rcv_window_rule: RcvWindowRule::Linux2616,
            rx_truesize: 0,
            tcp_rmem_max: 0,
            initial_ssthresh: u64::MAX,
            delack_segments: 2,
            delack_timeout: SimDuration::from_millis(40),
            rtt_estimator: RttEstimatorKind::Rfc6298,
            rto: RtoPolicy::default(),
            limited_transmit: true,
            cwnd_validation: true,
            cwnd_limited: CwndLimitedRule::Flight,
            dupthresh: 3,
            rto_every_partial_ack: false,
            recovery: RecoveryKind::Auto,
            cc: CcConfig::NewReno(RenoConfig::default()),
            ecn: false,
            ts_tick: SimDuration::from_millis(1),
            persist_min: SimDuration::from_millis(200),
            hz: 1000,
            timer_ticks: false,
            timer_tick: None,
            round_buffers_to_mss: false,
            window_update_on_read: false,
            ipv6: false,
            local_congestion: LocalCongestion::Drop,
            moderate_cwnd: 0,
            cwnd_idle_restart: false,
            cwnd_app_limited_decay: false,
            cwr_reduction: CwrReduction::AtOnce,
            dsack: false,
            undo: false,
        }
    }
}
