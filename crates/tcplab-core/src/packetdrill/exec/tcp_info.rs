//! Linux's `struct tcp_info` as packetdrill's Python blocks read it, from the model's
//! connection, and the constants packetdrill defines beside it.

use crate::tcp::conn::{Connection, State};

/// Linux's `tcp_info` field `name` for connection `c` (None: not provided).
pub fn tcp_info(c: &Connection, name: &str) -> Option<i64> {
    let mss = c.smss().max(1) as u64;
    let segs = |b: u64| b.div_ceil(mss) as i64;
    Some(match name {
        "tcpi_snd_cwnd" => (c.cwnd() / mss) as i64,
        // TCP_INFINITE_SSTHRESH.
        "tcpi_snd_ssthresh" => {
            let s = c.ssthresh();
            if s == u64::MAX {
                0x7fff_ffff
            } else {
                (s / mss) as i64
            }
        }
        "tcpi_ca_state" => c.linux_ca_state() as i64,
        "tcpi_snd_mss" => c.smss() as i64,
        "tcpi_rcv_mss" => c.smss() as i64,
        "tcpi_advmss" => c.config().mss as i64,
        "tcpi_unacked" => segs(c.outstanding()),
        "tcpi_sacked" => segs(c.sacked_bytes()),
        "tcpi_lost" => segs(c.lost_bytes()),
        "tcpi_reordering" => c.dupthresh() as i64,
        "tcpi_total_retrans" => c.stats.retransmits as i64,
        "tcpi_rto" => (c.rto().as_ps() / 1_000_000) as i64,
        "tcpi_rtt" => (c.srtt()?.as_ps() / 1_000_000) as i64,
        "tcpi_state" => match c.state() {
            State::Established => 1,
            State::SynSent => 2,
            State::SynReceived => 3,
            State::FinWait1 => 4,
            State::FinWait2 => 5,
            State::TimeWait => 6,
            State::Closed => 7,
            State::CloseWait => 8,
            State::LastAck => 9,
            State::Listen => 10,
            State::Closing => 11,
        },
        "tcpi_bytes_acked" => c.stats.bytes_acked as i64,
        "tcpi_data_segs_out" => c.stats.segments_sent as i64,
        // Consecutive timeouts without progress (icsk_retransmits): not kept; none.
        "tcpi_retransmits" => return None,
        _ => return None,
    })
}

/// The `tcp_info` fields the model provides, in packetdrill's Python names.
const TCP_INFO_FIELDS: [&str; 17] = [
    "tcpi_lost",
    "tcpi_reordering",
    "tcpi_snd_cwnd",
    "tcpi_snd_ssthresh",
    "tcpi_ca_state",
    "tcpi_snd_mss",
    "tcpi_rcv_mss",
    "tcpi_advmss",
    "tcpi_unacked",
    "tcpi_sacked",
    "tcpi_total_retrans",
    "tcpi_rto",
    "tcpi_rtt",
    "tcpi_state",
    "tcpi_bytes_acked",
    "tcpi_data_segs_out",
    "tcpi_retransmits",
];

/// Every `tcp_info` field of `c` the model provides, as read now.
pub(super) fn tcp_info_all(c: &Connection) -> Vec<(&'static str, i64)> {
    TCP_INFO_FIELDS.iter().filter_map(|n| tcp_info(c, n).map(|v| (*n, v))).collect()
}

/// The constants packetdrill defines for the Python blocks (`TCP_CA_*`, `TCP_ESTABLISHED`…).
pub(super) fn constant(name: &str) -> Option<i64> {
    Some(match name {
        "TCP_CA_Open" => 0,
        "TCP_CA_Disorder" => 1,
        "TCP_CA_CWR" => 2,
        "TCP_CA_Recovery" => 3,
        "TCP_CA_Loss" => 4,
        "TCP_ESTABLISHED" => 1,
        "TCP_SYN_SENT" => 2,
        "TCP_SYN_RECV" => 3,
        "TCP_FIN_WAIT1" => 4,
        "TCP_FIN_WAIT2" => 5,
        "TCP_TIME_WAIT" => 6,
        "TCP_CLOSE" => 7,
        "TCP_CLOSE_WAIT" => 8,
        "TCP_LAST_ACK" => 9,
        "TCP_LISTEN" => 10,
        "TCP_CLOSING" => 11,
        _ => return None,
    })
}
