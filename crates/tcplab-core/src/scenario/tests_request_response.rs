//! Request/response flows (`kind = "request-response"`): messages over persistent
//! connections, each measured against its path's ideal time; open and closed loops; the stop
//! rules; refused tables.

use super::tests::{error_of, run};
use super::Run;
use crate::trace::MessageTrace;

/// Clients `c.0`…`c.3` and a server `s` on one switch (1 Gb/s, 10 µs links; the server's
/// link `server_rate`), a request-response flow `rr` from the clients to the server.
fn text(server_rate: &str, table: &str, run: &str) -> String {
    format!(
        r#"
name = "rr"
[run]
{run}
[[hosts]]
name = "c"
count = 4
[[hosts]]
name = "s"
[[switches]]
name = "sw"
[[links]]
between = ["c", "sw"]
rate = "1Gbps"
delay = "10us"
queue = "100pkts"
[[links]]
between = ["sw", "s"]
rate = "{server_rate}"
delay = "10us"
queue = "100pkts"
[[flows]]
name = "rr"
kind = "request-response"
src = "c"
dst = "s"
request_response = {{ {table} }}
"#
    )
}

fn messages(r: &Run) -> &MessageTrace {
    r.sim.traces.messages.as_ref().expect("a scenario with request-response flows records its messages")
}

#[test]
fn a_closed_loop_on_an_idle_path_takes_exactly_the_ideal_time() {
    // One request at a time, each answered by one segment: nothing queues and no window
    // limits, so every message after the first (which waits for the handshake) takes the
    // yardstick's time to the picosecond.
    let t = text("1Gbps", r#"arrivals = "closed", messages = 50, request = "100B", responses = { dist = "fixed", bytes = "1000B" }"#, r#"stop = "flows-done""#);
    let r = run(&t, 1);
    let m = messages(&r);
    assert_eq!(m.time_s.len(), 4 * 50, "four connections, fifty messages each");
    for i in 0..m.time_s.len() {
        assert_eq!((m.request_bytes[i], m.response_bytes[i]), (100, 1000));
        let (fct, ideal) = (m.fct_s[i], m.ideal_s[i]);
        if m.id[i] == 0 {
            assert!(fct > ideal + 40e-6, "the first message waits for the handshake: {fct} vs {ideal}");
        } else {
            assert!((fct - ideal).abs() < 1e-12, "message {} of flow {}: {fct} vs ideal {ideal}", m.id[i], m.flow[i]);
        }
    }
    // By hand: a 100 B request (+40 B headers; no timestamps by default) across two 1 Gb/s
    // 10 µs hops, 1,000 B back the same way: 2·(140·8 ns + 10 µs) + 2·(1040·8 ns + 10 µs)
    // = 58.88 µs.
    assert!((m.ideal_s[0] - 58.88e-6).abs() < 1e-12, "{}", m.ideal_s[0]);
    let s = r.sim.summary();
    assert_eq!(format!("{:?}", s.stop_reason), "FlowsDone");
    for f in &s.flows {
        let last = (0..m.time_s.len()).filter(|&i| m.flow[i] == f.id).map(|i| m.time_s[i]).fold(0.0, f64::max);
        assert_eq!(f.finish_s, Some(last), "a connection finishes at its last answer");
        assert_eq!(f.bytes_delivered, 50 * 1000, "the summary counts the responses: the server's end sends the data");
    }
}

#[test]
fn open_loop_messages_queue_behind_each_other_and_never_beat_the_ideal() {
    // Four clients at 400 requests/s each for exponential 30 KB responses (≈ 384 Mb/s) through
    // a 400 Mb/s server link: queues, losses and pipelined requests waiting for earlier
    // answers on the same connection.
    let t = text("400Mbps", r#"rate = 400.0, responses = { dist = "exponential", mean = "30KB" }"#, r#"duration = "2s""#);
    let r = run(&t, 5);
    let m = messages(&r);
    let n = m.time_s.len();
    // About 4 × 400 × 2 = 3,200 arrivals (Poisson: σ ≈ 57), less the ones still unanswered.
    assert!((2_900..=3_400).contains(&n), "{n} messages");
    let mut slow = 0;
    for i in 0..n {
        assert!(m.fct_s[i] >= m.ideal_s[i] * (1.0 - 1e-12), "message {} of flow {} beat its ideal: {} < {}", m.id[i], m.flow[i], m.fct_s[i], m.ideal_s[i]);
        assert!((m.time_s[i] - m.issued_s[i] - m.fct_s[i]).abs() < 1e-9);
        slow += usize::from(m.fct_s[i] > 10.0 * m.ideal_s[i]);
    }
    assert!(slow > n / 20, "a loaded link makes many messages slow: {slow} of {n} above 10× ideal");
    // Answers come in request order on each connection.
    for f in 0..4u32 {
        let ids: Vec<u64> = (0..n).filter(|&i| m.flow[i] == f).map(|i| m.id[i]).collect();
        assert!(ids.iter().enumerate().all(|(k, &id)| id == k as u64), "flow {f}: answers in order, none missing");
    }
    // The summary's figures are the trace's, exactly (nearest rank).
    let ms = r.sim.summary().messages.expect("a run with request-response flows sums its messages up");
    let mut fct = m.fct_s.clone();
    fct.sort_by(f64::total_cmp);
    assert_eq!(ms.count, n as u64);
    assert_eq!((ms.fct_p50_s, ms.fct_p99_s, ms.fct_max_s), (Some(fct[n.div_ceil(2) - 1]), Some(fct[(0.99 * n as f64).ceil() as usize - 1]), Some(fct[n - 1])));
    assert!(ms.slowdown_p99.unwrap() > ms.slowdown_p50.unwrap() && ms.slowdown_p50.unwrap() >= 1.0);
    let mean = m.response_bytes.iter().sum::<u64>() as f64 / n as f64;
    assert!((mean - 30_000.0).abs() < 3.0 * 30_000.0 / (n as f64).sqrt() + 30.0, "mean response {mean}");
}

#[test]
fn messages_are_seeded_and_observing_changes_nothing() {
    let t = text("400Mbps", r#"rate = 300.0, responses = { dist = "cdf", cdf = "web-search" }"#, r#"duration = "300ms""#);
    let a = run(&t, 7);
    let b = run(&t, 7);
    let c = run(&t, 8);
    let traced = run(&t.replace("[run]", "[trace]\ncwnd = true\nrtt = true\nevents = true\n[run]"), 7);
    let key = |r: &Run| format!("{:?} {:?} {:?}", messages(r).fct_s, messages(r).response_bytes, messages(r).issued_s);
    assert_eq!(key(&a), key(&b));
    assert_eq!(key(&a), key(&traced));
    assert_ne!(key(&a), key(&c), "another seed draws other arrivals and sizes");
    let flows = |r: &Run| serde_json::to_string(&r.sim.summary().flows).unwrap();
    assert_eq!(flows(&a), flows(&traced));
}

#[test]
fn a_stop_time_ends_the_requests_and_the_connection_closes_after_the_last_answer() {
    let t = text("1Gbps", r#"rate = 1000.0, responses = { dist = "fixed", bytes = "5KB" }"#, r#"stop = "flows-done""#).replace("src = \"c\"", "src = \"c\"\nstop = \"100ms\"");
    let r = run(&t, 2);
    let m = messages(&r);
    assert!(m.issued_s.iter().all(|&t| t < 0.1), "no request after the stop time");
    assert!((300..=500).contains(&m.time_s.len()), "≈ 4 × 100 requests: {}", m.time_s.len());
    assert_eq!(format!("{:?}", r.sim.stop_reason()), "FlowsDone");
}

#[test]
fn request_response_tables_are_checked() {
    let t = |table: &str| text("1Gbps", table, r#"duration = "1s""#);
    let cases = [
        (t(r#"rate = 10.0"#), "flows[0].request_response.responses: required"),
        (t(r#"responses = { dist = "fixed", bytes = "1KB" }"#), "flows[0].request_response.rate: required"),
        (t(r#"arrivals = "closed", rate = 5.0, responses = { dist = "fixed", bytes = "1KB" }"#), "flows[0].request_response.rate: not with arrivals = \"closed\""),
        (t(r#"rate = 5.0, think = "1ms", responses = { dist = "fixed", bytes = "1KB" }"#), "flows[0].request_response.think: only with arrivals = \"closed\""),
        (t(r#"rate = -1.0, responses = { dist = "fixed", bytes = "1KB" }"#), "flows[0].request_response.rate: -1 is out of range"),
        (t(r#"rate = 5.0, messages = 0, responses = { dist = "fixed", bytes = "1KB" }"#), "flows[0].request_response.messages: 0 is out of range"),
        (t(r#"rate = 5.0, request = "2MiB", responses = { dist = "fixed", bytes = "1KB" }"#), "flows[0].request_response.request: 2097152 bytes is out of range"),
        (t(r#"rate = 5.0, responses = { dist = "fixed", mean = "1KB" }"#), "flows[0].request_response.responses.mean: not a key of dist = \"fixed\""),
        (t(r#"rate = 5.0, responses = { dist = "fixed", bytes = "1KB" }, bogus = 1"#), "unknown field `bogus`"),
        (
            text("1Gbps", r#"rate = 5.0, responses = { dist = "fixed", bytes = "1KB" }"#, r#"stop = "flows-done""#),
            "flows[0].request_response.messages: with run.stop = \"flows-done\"",
        ),
        (
            t(r#"rate = 5.0, responses = { dist = "fixed", bytes = "1KB" }"#).replace("kind = \"request-response\"", "kind = \"tcp\""),
            "flows[0].request_response: only for kind = \"request-response\" flows",
        ),
        (t(r#"rate = 5.0, responses = { dist = "fixed", bytes = "1KB" }"#).replace("request_response = {", "x = 1\nrequest_responsX = {"), "unknown field `x`"),
    ];
    for (text, want) in cases {
        let e = error_of(&text);
        assert!(e.contains(want), "want {want:?} in {e:?}");
    }
    let no_table = t("").replace("request_response = {  }", "");
    assert!(error_of(&no_table).contains("flows[0].request_response: a request-response flow needs its table"), "{}", error_of(&no_table));
}
