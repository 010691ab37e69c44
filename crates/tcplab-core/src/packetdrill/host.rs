//! The host a script runs on: the `linux-modern` profile, then the sysctls of its shell blocks
//! (including the corpus's `common/defaults.sh`, whose production values every TCP script
//! loads), mapped to profile keys; what has no key is listed as ignored (it changes nothing
//! the model has) or as not modelled (the script depends on a mechanism tcplab lacks).

use crate::scenario::resolve::resolve_tcp;
use crate::scenario::spec::TcpSpec;
use crate::tcp::config::TcpConfig;

/// The production defaults of google/packetdrill's `gtests/net/common/defaults.sh` that map to
/// tcplab keys, applied before a script's own sysctls (the corpus commit the README names).
/// Scripts load the file from the corpus; these values stand in when it is not at hand.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("net.ipv4.tcp_rmem", "4096 540000 15728640"),
    ("net.ipv4.tcp_wmem", "4096 262144 4194304"),
    ("net.ipv4.tcp_timestamps", "1"),
    ("net.ipv4.tcp_sack", "1"),
    ("net.ipv4.tcp_reordering", "3"),
    ("net.ipv4.tcp_congestion_control", "cubic"),
    ("net.ipv4.tcp_ecn", "0"),
];

/// Sysctls that change nothing the model has (documented once here): features left off or
/// not modelled at all are listed by `not_modelled` when a script turns them on.
const IGNORED: &[&str] = &[
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_fack",
    "net.ipv4.tcp_tso_win_divisor",
    "net.ipv4.tcp_ecn_option",
    "net.ipv4.tcp_pacing_ss_ratio",
    "net.ipv4.tcp_pacing_ca_ratio",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.tcp_fastopen",
    "net.ipv4.tcp_fastopen_key",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_syn_retries",
    "net.ipv4.tcp_synack_retries",
    "net.ipv4.tcp_min_tso_segs",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_autocorking",
    "net.core.default_qdisc",
];

/// The host's TCP settings for new sockets, and what the script's configuration asked for.
#[derive(Clone, Debug)]
pub struct Host {
    /// Settings of a new socket.
    pub tcp: TcpConfig,
    /// `net.ipv4.tcp_ecn`: 0 off, 1 ask on active opens and accept, 2 accept only.
    pub ecn_mode: u8,
    /// Settings that ask for a mechanism tcplab does not model, with the value asked.
    pub not_modelled: Vec<String>,
    /// Sysctls read and ignored, with why (for the report).
    pub ignored: Vec<String>,
}

/// Why a configuration cannot be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError(pub String);

/// The key/value pairs of `sysctl -q a=b c=d` commands and `set_sysctls.py /proc/sys/a/b=v`
/// lines of a shell block, in order; other commands as they are (`ethtool …`, `tc …`).
pub fn commands(block: &str) -> Vec<Command> {
    let mut v = Vec::new();
    // Backslash-newline continues a command.
    let joined = block.replace("\\\n", " ");
    for line in joined.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()) {
        let words = shell_words(line);
        match words.first().map(String::as_str) {
            Some("sysctl") => {
                for w in words.iter().skip(1).filter(|w| !w.starts_with('-')) {
                    if let Some((k, val)) = w.split_once('=') {
                        // `sysctl net/ipv4/x` is `sysctl net.ipv4.x`.
                        v.push(Command::Sysctl(k.replace('/', "."), val.to_string()));
                    }
                }
            }
            Some(p) if p.ends_with("set_sysctls.py") => {
                for w in &words[1..] {
                    if let Some((k, val)) = w.split_once('=') {
                        let k = k.trim_start_matches("/proc/sys/").replace('/', ".");
                        v.push(Command::Sysctl(k, val.to_string()));
                    }
                }
            }
            Some(p) if p.ends_with("defaults.sh") => v.push(Command::Defaults),
            // `echo N > /sys/module/tcp_cubic/parameters/NAME`: a module parameter.
            Some("echo") if words.len() == 4 && words[2] == ">" && words[3].starts_with("/sys/module/") => {
                let k = words[3].trim_start_matches("/sys/module/").replace("/parameters/", ".");
                v.push(Command::Sysctl(k, words[1].clone()));
            }
            _ => v.push(Command::Other(line.to_string())),
        }
    }
    v
}

/// One command of a shell block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `sysctl name=value`.
    Sysctl(String, String),
    /// The corpus's `defaults.sh`.
    Defaults,
    /// Anything else.
    Other(String),
}

/// Words of a shell line, with double quotes removed (`tcp_rmem="4096 540000 …"` is one word).
fn shell_words(line: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    v.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        v.push(cur);
    }
    // `$((15*1024*1024))` as defaults.sh writes tcp_rmem's maximum.
    v.into_iter().map(|w| w.replace("$((15*1024*1024))", "15728640")).collect()
}

impl Host {
    /// The host after `blocks` (the script's configuration shell blocks, in order).
    pub fn configure(blocks: &[String]) -> Result<Host, HostError> {
        let mut sysctls: Vec<(String, String)> = Vec::new();
        let mut others = Vec::new();
        for b in blocks {
            for c in commands(b) {
                match c {
                    Command::Defaults => sysctls.extend(DEFAULTS.iter().map(|(k, v)| (k.to_string(), v.to_string()))),
                    Command::Sysctl(k, v) => sysctls.push((k, v)),
                    Command::Other(o) => others.push(o),
                }
            }
        }
        Host::from_settings(&sysctls, &others)
    }

    fn from_settings(sysctls: &[(String, String)], others: &[String]) -> Result<Host, HostError> {
        let mut keys: Vec<(String, String)> = vec![("profile".into(), "\"linux-modern\"".into())];
        let mut cubic: Vec<(String, String)> = Vec::new();
        let mut ecn_mode = 0u8;
        let mut not_modelled = Vec::new();
        let mut ignored = Vec::new();
        let mut rmem_max = None;
        let mut wmem_default = None;
        for (k, v) in sysctls {
            let num = || v.trim().parse::<u64>().map_err(|_| HostError(format!("{k}={v}: not a number")));
            match k.as_str() {
                "net.ipv4.tcp_rmem" => rmem_max = v.split_whitespace().nth(2).and_then(|x| x.parse::<u64>().ok()),
                "net.ipv4.tcp_wmem" => wmem_default = v.split_whitespace().nth(1).and_then(|x| x.parse::<u64>().ok()),
                "net.ipv4.tcp_timestamps" => keys.push(("timestamps".into(), (num()? != 0).to_string())),
                "net.ipv4.tcp_sack" => keys.push(("sack".into(), (num()? != 0).to_string())),
                "net.ipv4.tcp_window_scaling" => keys.push(("window_scaling".into(), (num()? != 0).to_string())),
                "net.ipv4.tcp_reordering" => keys.push(("dupthresh".into(), num()?.to_string())),
                "net.ipv4.tcp_ecn" => ecn_mode = num()?.min(2) as u8,
                "net.ipv4.tcp_congestion_control" => {
                    let cc = match v.trim() {
                        "cubic" => "cubic",
                        // Linux's "reno" is NewReno (with SACK when negotiated).
                        "reno" => "newreno",
                        "dctcp" => "dctcp",
                        other => {
                            not_modelled.push(format!("congestion control {other}"));
                            "cubic"
                        }
                    };
                    keys.push(("cc".into(), format!("\"{cc}\"")));
                }
                "net.ipv4.tcp_slow_start_after_idle" if num()? != 0 => not_modelled.push("slow start after idle (tcp_slow_start_after_idle = 1)".into()),
                "net.ipv4.tcp_mtu_probing" if num()? != 0 => not_modelled.push("path MTU probing".into()),
                // HyStart's detectors: 1 ACK train, 2 delay, 3 both (the default, modelled).
                "tcp_cubic.hystart_detect" => match num()? {
                    3 => {}
                    0 => cubic.push(("hystart".into(), "false".into())),
                    d => not_modelled.push(format!("HyStart with only detector {d}")),
                },
                "tcp_cubic.hystart" => cubic.push(("hystart".into(), (num()? != 0).to_string())),
                "tcp_cubic.fast_convergence" => cubic.push(("fast_convergence".into(), (num()? != 0).to_string())),
                "tcp_cubic.tcp_friendliness" => cubic.push(("tcp_friendliness".into(), (num()? != 0).to_string())),
                "tcp_cubic.beta" => cubic.push(("beta".into(), num()?.to_string())),
                "tcp_cubic.bic_scale" => cubic.push(("bic_scale".into(), num()?.to_string())),
                "tcp_cubic.hystart_low_window" => cubic.push(("hystart_low_window".into(), num()?.to_string())),
                k if IGNORED.contains(&k) => ignored.push(format!("{k}={v}")),
                _ => return Err(HostError(format!("sysctl {k}={v} is not mapped to a tcplab setting"))),
            }
        }
        for o in others {
            // `ethtool -K tun0 tso off gso off`: packetdrill aggregates segments either way.
            if o.starts_with("tc ") && o.contains(" fq") {
                not_modelled.push("fq pacing (tc qdisc fq)".into());
            } else if o.starts_with("tc ") || o.starts_with("ip ") || o.contains("sysctl_restore") || o.starts_with("ethtool") {
                ignored.push(o.clone());
            } else {
                return Err(HostError(format!("shell command `{o}` is not understood")));
            }
        }
        if let Some(r) = rmem_max {
            keys.push(("rcvbuf".into(), format!("\"{r}B\"")));
        }
        if let Some(w) = wmem_default {
            keys.push(("sndbuf".into(), format!("\"{w}B\"")));
        }
        // tcp_ecn = 1 asks (and so accepts); 2 only accepts: the listener gets ECN on.
        keys.push(("ecn".into(), (ecn_mode > 0).to_string()));
        // The last value of a key wins, as the last sysctl does.
        let mut table: Vec<(String, String)> = Vec::new();
        for (k, v) in keys {
            table.retain(|(x, _)| *x != k);
            table.push((k, v));
        }
        let mut text: String = table.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        if !cubic.is_empty() {
            let mut t: Vec<(String, String)> = Vec::new();
            for (k, v) in cubic {
                t.retain(|(x, _)| *x != k);
                t.push((k, v));
            }
            text += "[cubic]\n";
            text += &t.iter().map(|(k, v)| format!("{k} = {v}\n")).collect::<String>();
        }
        let spec: TcpSpec = toml::from_str(&text).map_err(|e| HostError(format!("settings do not resolve: {e}")))?;
        let resolved = resolve_tcp(&TcpSpec::default(), &spec, "packetdrill").map_err(|e| HostError(e.to_string()))?;
        Ok(Host { tcp: resolved.config(), ecn_mode, not_modelled, ignored })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::CcConfig;

    #[test]
    fn defaults_then_the_script_s_sysctls() {
        let h = Host::configure(&["../common/defaults.sh\nsysctl -q net.ipv4.tcp_tso_win_divisor=100".into()]).unwrap();
        assert!(matches!(h.tcp.cc, CcConfig::Cubic(_)));
        assert!(h.tcp.sack && h.tcp.timestamps);
        assert_eq!((h.tcp.rcvbuf, h.tcp.sndbuf, h.tcp.initial_cwnd), (15_728_640, 262_144, 10));
        assert!(h.not_modelled.is_empty());
        let h = Host::configure(&["../common/defaults.sh\nethtool -K tun0 tso off gso off\n../common/set_sysctls.py /proc/sys/net/ipv4/tcp_timestamps=0".into()]).unwrap();
        assert!(!h.tcp.timestamps);
        let h = Host::configure(&["../common/defaults.sh\nsysctl -q net.ipv4.tcp_ecn=1  # fully enabled\n".into()]).unwrap();
        assert!(h.tcp.ecn && h.ecn_mode == 1);
        let e = Host::configure(&["sysctl -q net.ipv4.tcp_frobnicate=1".into()]).unwrap_err();
        assert!(e.0.contains("tcp_frobnicate"), "{e:?}");
    }
}
