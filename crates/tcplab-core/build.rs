//! Sets `cfg(tcplab_unoptimized)` for builds without optimisation (the dev profile), so the
//! whole-run integration tests (`tests/observers.rs`, `tests/random_observers.rs`), which take
//! a few minutes optimised and hours without, check a reduced set there and say so; and
//! `cfg(tcplab_no_invariants)` when `TCPLAB_NO_INVARIANTS=1` is set at build time, which leaves
//! the TCP invariant checker (`tcp/conn/invariants.rs`) out of a test build — only to measure
//! what it catches (the mutation sample of docs/validation.md).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tcplab_unoptimized)");
    if std::env::var("OPT_LEVEL").is_ok_and(|o| o == "0") {
        println!("cargo::rustc-cfg=tcplab_unoptimized");
    }
    println!("cargo::rustc-check-cfg=cfg(tcplab_no_invariants)");
    if std::env::var("TCPLAB_NO_INVARIANTS").is_ok_and(|v| v == "1") {
        println!("cargo::rustc-cfg=tcplab_no_invariants");
    }
    println!("cargo::rerun-if-env-changed=TCPLAB_NO_INVARIANTS");
    println!("cargo::rerun-if-changed=build.rs");
}
