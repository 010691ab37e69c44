//! Run packetdrill scripts against the model and print each result:
//! `cargo run --release --example packetdrill -- DIR_OR_FILE...`.

use std::io::Write as _;

/// `println!` that ends the program quietly when stdout is closed (`| head`).
macro_rules! say {
    ($($t:tt)*) => {
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0)
        }
    };
}

use std::path::Path;

use tcplab_core::packetdrill::{run_dir, run_file};

fn main() {
    let mut pass = 0;
    let mut total = 0;
    let verbose = std::env::var("VERBOSE").is_ok();
    for arg in std::env::args().skip(1) {
        let p = Path::new(&arg);
        if verbose && p.is_file() {
            let (r, _, _, log) = tcplab_core::packetdrill::run_text_logged(&std::fs::read_to_string(p).unwrap(), true);
            for l in log {
                say!("{l}");
            }
            say!("{r:?}");
            continue;
        }
        let results = if p.is_dir() { run_dir(p) } else { vec![run_file(p, p.parent().unwrap_or(p))] };
        for r in results {
            total += 1;
            match &r.outcome {
                Ok(()) => {
                    pass += 1;
                    let psh = if r.psh_differences.is_empty() { String::new() } else { format!(" (PSH differs on lines {:?})", r.psh_differences) };
                    say!("PASS {}{psh}", r.path.display());
                }
                Err(f) => say!("FAIL {}:{} [{}] {}", r.path.display(), f.line, f.kind.name(), f.message),
            }
        }
    }
    say!("{pass} of {total} passed");
}
