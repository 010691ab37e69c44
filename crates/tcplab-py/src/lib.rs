//! `tcplab._core`: the thin PyO3 boundary. A scenario goes in as JSON, the run advances in
//! chunks of simulated time with the GIL released, and results come out as a JSON summary and
//! little-endian column buffers. See docs/core-interface.md.

// PyO3's #[pymethods] expansion converts a PyErr into itself (a clippy false positive of this
// PyO3 version).
#![allow(clippy::useless_conversion)]

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use tcplab_core::units::SimTime;
use tcplab_core::Run;

create_exception!(tcplab._core, ScenarioError, PyValueError, "A scenario field is invalid: str(e) is 'path: reason'.");

/// One simulation run.
#[pyclass(module = "tcplab._core")]
struct Simulation {
    run: Run,
}

#[pymethods]
impl Simulation {
    /// Validate and build a scenario given as JSON text; taps write pcapng files into
    /// `capture_dir` when one is given.
    #[new]
    #[pyo3(signature = (scenario_json, seed, capture_dir=None))]
    fn new(scenario_json: &str, seed: u64, capture_dir: Option<std::path::PathBuf>) -> PyResult<Self> {
        let sc = tcplab_core::scenario::parse_json(scenario_json).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        let run = Run::with_capture_dir(&sc, Some(seed), capture_dir.as_deref()).map_err(|e| ScenarioError::new_err(e.to_string()))?;
        Ok(Simulation { run })
    }

    /// The first error writing a capture file, if any.
    fn capture_error(&self) -> Option<String> {
        self.run.sim.capture_error().map(str::to_string)
    }

    /// The fully resolved scenario as TOML.
    fn resolved_toml(&self) -> String {
        self.run.resolved_toml()
    }

    /// 16 hex digits identifying the resolved scenario (seed excluded).
    fn scenario_hash(&self) -> String {
        self.run.hash.clone()
    }

    /// The scenario's stop time in seconds, if it has one.
    #[getter]
    fn stop_time_s(&self) -> Option<f64> {
        self.run.sim.stop_time().map(|t| t.as_secs_f64())
    }

    /// Current simulated time in seconds.
    #[getter]
    fn now_s(&self) -> f64 {
        self.run.sim.now().as_secs_f64()
    }

    /// True once the stop condition holds.
    #[getter]
    fn finished(&self) -> bool {
        self.run.sim.finished()
    }

    /// Events processed so far.
    #[getter]
    fn events(&self) -> u64 {
        self.run.sim.events()
    }

    /// Run until simulated time reaches `until_s` or the stop condition; returns `finished`.
    fn advance(&mut self, py: Python<'_>, until_s: f64) -> bool {
        let until = if until_s.is_finite() { SimTime::from_secs_f64(until_s) } else { SimTime::MAX };
        let sim = &mut self.run.sim;
        py.allow_threads(|| sim.advance(until))
    }

    /// Run to the stop condition.
    fn run(&mut self, py: Python<'_>) {
        let sim = &mut self.run.sim;
        py.allow_threads(|| sim.run());
    }

    /// The summary as JSON text.
    fn summary_json(&self) -> String {
        self.run.summary_json()
    }

    /// Recorded traces: name → column → (dtype, little-endian bytes).
    fn traces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new_bound(py);
        for (name, cols) in self.run.sim.traces.tables() {
            let d = PyDict::new_bound(py);
            for (cname, col) in cols {
                let bytes = PyBytes::new_bound(py, &col.to_le_bytes());
                d.set_item(cname, (col.dtype(), bytes))?;
            }
            out.set_item(name, d)?;
        }
        Ok(out)
    }
}

/// Run every packetdrill script under `path` (a directory, or one `.pkt` file) against the
/// model (GIL released); returns JSON: a list of {path, passed, line, kind, message,
/// psh_lines, not_modelled}, and with `verbose` each script's event log.
#[pyfunction]
#[pyo3(signature = (path, verbose=false))]
fn packetdrill(py: Python<'_>, path: std::path::PathBuf, verbose: bool) -> String {
    use tcplab_core::packetdrill::{run_text_logged, scripts};
    py.allow_threads(|| {
        let (root, files) = if path.is_dir() { (path.clone(), scripts(&path)) } else { (path.parent().map(|p| p.to_path_buf()).unwrap_or_default(), vec![path.clone()]) };
        let results: Vec<serde_json::Value> = files
            .iter()
            .map(|f| {
                let rel = f.strip_prefix(&root).unwrap_or(f).to_string_lossy().replace('\\', "/");
                let (outcome, psh, not_modelled, log) = match std::fs::read_to_string(f) {
                    Ok(text) => run_text_logged(&text, verbose),
                    Err(e) => (
                        Err(tcplab_core::packetdrill::Failure { line: 0, kind: tcplab_core::packetdrill::FailureKind::Unsupported, message: format!("unreadable: {e}") }),
                        vec![],
                        vec![],
                        vec![],
                    ),
                };
                let (line, kind, message) = match &outcome {
                    Ok(()) => (0, "", String::new()),
                    Err(f) => (f.line, f.kind.name(), f.message.clone()),
                };
                serde_json::json!({
                    "path": rel, "passed": outcome.is_ok(), "line": line, "kind": kind, "message": message,
                    "psh_lines": psh, "not_modelled": not_modelled, "log": log,
                })
            })
            .collect();
        serde_json::Value::Array(results).to_string()
    })
}

/// The core's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(packetdrill, m)?)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    Ok(())
}
