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

/// The core's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    Ok(())
}
