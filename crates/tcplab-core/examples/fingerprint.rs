//! Print a fingerprint of each given scenario's results (summary without wall time or event
//! count, plus the trace digest), to check that a change keeps results bit-identical:
//! `target/release/examples/fingerprint scenarios/**/*.toml`. With `FP_TIME=N` each scenario
//! is also run N more times and the fastest and median wall times of `run()` are printed.

use std::io::Write as _;

/// `println!` that ends the program quietly when stdout is closed (`| head`).
macro_rules! say {
    ($($t:tt)*) => {
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0)
        }
    };
}

use tcplab_core::Run;

fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).expect("readable scenario");
        let sc = match tcplab_core::scenario::parse_toml(&text) {
            Ok(sc) => sc,
            Err(e) => {
                say!("{path}: not a scenario ({e})");
                continue;
            }
        };
        let repeat: usize = std::env::var("FP_TIME").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        if repeat > 0 {
            let mut walls: Vec<f64> = (0..repeat)
                .filter_map(|_| {
                    let mut run = Run::with_capture_dir(&sc, None, None).ok()?;
                    let t = std::time::Instant::now();
                    run.sim.run();
                    Some(t.elapsed().as_secs_f64())
                })
                .collect();
            walls.sort_by(f64::total_cmp);
            if let (Some(min), Some(med)) = (walls.first(), walls.get(walls.len() / 2)) {
                say!("{path}: run wall min {:.2} ms, median {:.2} ms ({} runs)", min * 1e3, med * 1e3, walls.len());
            }
        }
        let mut run = match Run::with_capture_dir(&sc, None, None) {
            Ok(r) => r,
            Err(e) => {
                say!("{path}: invalid ({e})");
                continue;
            }
        };
        run.sim.run();
        let mut s = serde_json::to_value(run.sim.summary()).expect("summary serializes");
        let events = s["events"].take();
        s["wall_time_s"].take();
        let text = s.to_string();
        if std::env::var("FP_DUMP").is_ok() {
            say!("{}", serde_json::to_string_pretty(&s).unwrap());
        }
        say!("{path}: summary {:016x} traces {:016x} events {events}", tcplab_core::engine::rng::fnv1a64(text.as_bytes()), run.sim.traces.digest());
    }
}
