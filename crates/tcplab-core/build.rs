//! Sets `cfg(tcplab_unoptimized)` for builds without optimisation (the dev profile), so the
//! whole-run integration tests (`tests/observers.rs`, `tests/random_observers.rs`), which take
//! a few minutes optimised and hours without, check a reduced set there and say so.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tcplab_unoptimized)");
    if std::env::var("OPT_LEVEL").is_ok_and(|o| o == "0") {
        println!("cargo::rustc-cfg=tcplab_unoptimized");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
