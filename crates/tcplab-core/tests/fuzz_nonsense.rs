//! Fuzzing the classes of scenario that load but make no sense: random small networks with one
//! or more defects injected from the classes an independent reliability run found accepted in
//! silence — a second link between two nodes, node names holding the separators of queue and
//! link names, coordinator lists (unknown copies, repeats, too few after expansion), flows that
//! could never send or start, configurations that never finish, keys with no effect, and size
//! limits (names, trace memory, throughput rows). The generator knows what it injected, so the
//! oracle is exact: a scenario with a defect must be refused naming the defect's field; a
//! clean one must load, build and run (at most 20 ms of simulated time). Never a panic, never a
//! silent accept.
//!
//! `TCPLAB_FUZZ_CASES=N` runs N cases instead of the default, `PROPTEST_RNG_SEED=N` another set.

use proptest::prelude::*;

use tcplab_core::scenario::parse_toml;
use tcplab_core::scenario::spec::Dur;
use tcplab_core::units::SimDuration;
use tcplab_core::Run;

mod seeded;

/// A defect the generator can inject, and the field its refusal must name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Defect {
    DuplicateLink,
    SeparatorName,
    LongName,
    CoordinatorUnknownCopy,
    CoordinatorRepeat,
    CoordinatorTooFew,
    StopNotAfterStart,
    StartAfterEnd,
    RestartWithNagle,
    FastAgentWithoutDuration,
    EcnAboveLimit,
    CbrUnitWithoutCbr,
    TinyTraceMemory,
    SubPicosecond,
    AtmPortBelowFrame,
}

const DEFECTS: [Defect; 15] = [
    Defect::DuplicateLink,
    Defect::SeparatorName,
    Defect::LongName,
    Defect::CoordinatorUnknownCopy,
    Defect::CoordinatorRepeat,
    Defect::CoordinatorTooFew,
    Defect::StopNotAfterStart,
    Defect::StartAfterEnd,
    Defect::RestartWithNagle,
    Defect::FastAgentWithoutDuration,
    Defect::EcnAboveLimit,
    Defect::CbrUnitWithoutCbr,
    Defect::TinyTraceMemory,
    Defect::SubPicosecond,
    Defect::AtmPortBelowFrame,
];

/// One generated case: a dumbbell of `pairs` sender/receiver pairs, `copies` copies of a bulk
/// flow, whether the run has a duration, and the defect injected (if any).
#[derive(Clone, Debug)]
struct Case {
    pairs: usize,
    copies: u32,
    duration: bool,
    separator: usize,
    defect: Option<Defect>,
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..4, 2u32..5, any::<bool>(), 0usize..4, prop::option::weighted(0.8, prop::sample::select(DEFECTS.to_vec())))
        .prop_map(|(pairs, copies, duration, separator, defect)| Case { pairs, copies, duration, separator, defect })
}

/// The scenario text and the field the defect's refusal must name (none: a clean scenario).
fn scenario(c: &Case) -> (String, Option<&'static str>) {
    let d = c.defect;
    let mut t = String::from("name = \"fuzz\"\n[run]\n");
    let needs_duration = c.duration || matches!(d, Some(Defect::StartAfterEnd | Defect::TinyTraceMemory));
    if needs_duration && d != Some(Defect::FastAgentWithoutDuration) {
        t += "duration = \"1s\"\n";
    }
    if d == Some(Defect::TinyTraceMemory) {
        t += "trace_memory = \"1MiB\"\n";
    }
    t += "[[switches]]\nname = \"l\"\n[[switches]]\nname = \"r\"\n";
    let sep = ["->", ",", "(", ")"][c.separator];
    for i in 0..c.pairs {
        let s = if d == Some(Defect::SeparatorName) && i == 0 { format!("s{sep}0") } else { format!("s{i}") };
        let s = if d == Some(Defect::LongName) && i == 0 { "s".repeat(257) } else { s };
        t += &format!("[[hosts]]\nname = \"{s}\"\n[[hosts]]\nname = \"d{i}\"\n");
        t += &format!("[[links]]\nbetween = [\"{s}\", \"l\"]\nrate = \"1Gbps\"\n[[links]]\nbetween = [\"r\", \"d{i}\"]\nrate = \"1Gbps\"\n");
        if d == Some(Defect::AtmPortBelowFrame) && i == 0 {
            // An ATM port towards d0 smaller than one 9,180-byte frame (192 cells).
            t += "link_layer = \"aal5\"\nqueue_a = { cells = 100, cbr = \"40Mbps\" }\n";
        }
    }
    let queue = match d {
        Some(Defect::EcnAboveLimit) => "{ limit = \"40pkts\", ecn_threshold = \"41pkts\" }",
        Some(Defect::CbrUnitWithoutCbr) => "{ cells = 500, cbr_unit = \"payload\" }",
        _ => "\"50pkts\"",
    };
    let layer = if d == Some(Defect::CbrUnitWithoutCbr) { "\nlink_layer = \"aal5\"" } else { "" };
    t += &format!("[[links]]\nbetween = [\"l\", \"r\"]\nrate = \"100Mbps\"\ndelay = \"1ms\"\nqueue_a = {queue}{layer}\n");
    if d == Some(Defect::DuplicateLink) {
        t += "[[links]]\nbetween = [\"r\", \"l\"]\nrate = \"100Mbps\"\n";
    }
    let src0 = if d == Some(Defect::SeparatorName) {
        format!("s{sep}0")
    } else if d == Some(Defect::LongName) {
        "s".repeat(257)
    } else {
        "s0".into()
    };
    t += &format!("[[flows]]\nname = \"bulk\"\nsrc = \"{src0}\"\ndst = \"d0\"\ncount = {}\nbulk = {{ bytes = \"200KB\" }}\n", c.copies);
    if d == Some(Defect::AtmPortBelowFrame) {
        t += "[flows.tcp]\nmss = 9140\n";
    }
    match d {
        Some(Defect::StopNotAfterStart) => t += "start = \"5ms\"\nstop = \"5ms\"\n",
        Some(Defect::StartAfterEnd) => t += "start = \"2s\"\n",
        Some(Defect::SubPicosecond) => t += "start = \"1e-20s\"\n",
        _ => {}
    }
    if matches!(d, Some(Defect::RestartWithNagle) | Some(Defect::FastAgentWithoutDuration)) {
        let align = if d == Some(Defect::RestartWithNagle) { "align = \"restart\"" } else { "interval = \"10us\"" };
        t += &format!("[flows.tcp]\nvariant = \"ahtcp\"\n[flows.tcp.ahtcp]\nthreshold = \"1Mbps\"\n{align}\n");
    }
    if d == Some(Defect::TinyTraceMemory) {
        t += "[trace]\nthroughput_interval = \"1us\"\n";
    }
    let flows = match d {
        Some(Defect::CoordinatorUnknownCopy) => format!("[\"bulk.0\", \"bulk.{}\"]", c.copies),
        Some(Defect::CoordinatorRepeat) => "[\"bulk\", \"bulk.1\"]".to_string(),
        Some(Defect::CoordinatorTooFew) => "[\"bulk.0\"]".to_string(),
        _ => "[\"bulk\"]".to_string(),
    };
    if needs_duration || d.is_some_and(|d| matches!(d, Defect::CoordinatorUnknownCopy | Defect::CoordinatorRepeat | Defect::CoordinatorTooFew)) {
        t += &format!("[[coordinators]]\nkind = \"decp\"\nflows = {flows}\n");
    }
    let field = d.map(|d| match d {
        Defect::DuplicateLink => "links[",
        Defect::SeparatorName | Defect::LongName => "hosts[0].name",
        Defect::CoordinatorUnknownCopy => "coordinators[0].flows[1]",
        Defect::CoordinatorRepeat => "coordinators[0].flows[1]",
        Defect::CoordinatorTooFew => "coordinators[0].flows",
        Defect::StopNotAfterStart => "flows[0].stop",
        Defect::StartAfterEnd => "flows[0].start",
        Defect::RestartWithNagle => "flows[0].tcp.ahtcp.align",
        Defect::FastAgentWithoutDuration => "flows[0].tcp.ahtcp.interval",
        Defect::EcnAboveLimit => "queue_a.ecn_threshold",
        Defect::CbrUnitWithoutCbr => "queue_a.cbr_unit",
        Defect::TinyTraceMemory => "trace.throughput_interval",
        Defect::SubPicosecond => "flows[0].start",
        Defect::AtmPortBelowFrame => "flows[0].tcp.mss",
    });
    (t, field)
}

#[test]
fn nonsense_is_refused_by_its_field_and_sense_runs() {
    let default = if cfg!(tcplab_unoptimized) { 100 } else { 1500 };
    let cases: u32 = std::env::var("TCPLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let mut runner = seeded::runner(cases);
    let tally = std::cell::Cell::new([0u32; 2]); // refused as expected, ran
    let result = runner.run(&case(), |c| {
        let (text, field) = scenario(&c);
        let loaded = parse_toml(&text).and_then(|mut sc| {
            let cap = SimDuration::from_millis(20);
            // Bound the work of a clean run (its declared duration stays what the checks saw).
            let mut run = Run::new(&sc, None)?;
            sc.run.duration = Some(Dur(cap));
            drop(sc);
            run.sim.advance(tcplab_core::units::SimTime::ZERO + cap);
            Ok(run)
        });
        let mut t = tally.get();
        match (loaded, field) {
            (Err(e), Some(f)) => {
                prop_assert!(e.to_string().contains(f), "{:?}: refused, but not by {f}: {e}\n{text}", c.defect);
                t[0] += 1;
            }
            (Err(e), None) => prop_assert!(false, "a clean scenario was refused: {e}\n{text}"),
            (Ok(_), Some(f)) => prop_assert!(false, "{:?} accepted in silence (expected a refusal naming {f})\n{text}", c.defect),
            (Ok(_), None) => t[1] += 1,
        }
        tally.set(t);
        Ok(())
    });
    let [refused, ran] = tally.get();
    eprintln!("{refused} refused by their defect's field, {ran} clean scenarios ran");
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(refused > 0 && ran > 0, "both kinds of case were generated");
}
