# Set-up, demo, tests and benchmarks. Every target creates or refreshes .venv as needed;
# stamp files in .venv keep re-runs fast (the package is rebuilt only when Rust sources or
# the build configuration change; Python sources are installed in editable mode).

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
VENV_ABS := $(abspath $(VENV))
VPY := $(VENV)/bin/python
MATURIN := VIRTUAL_ENV=$(VENV_ABS) $(VENV)/bin/maturin
BUILD_INPUTS := pyproject.toml Cargo.toml Cargo.lock \
	$(shell find crates -name '*.rs' -o -name Cargo.toml -o -name build.rs)

.PHONY: demo test test-wheel bench bench-memory bench-ns3 bench-htsim tshark

demo: $(VENV)/.built
	$(VENV)/bin/tcplab run scenarios/dumbbell/dumbbell.toml

test: $(VENV)/.built-dev tshark
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	# Property tests run a fixed case set (PROPTEST_RNG_SEED=N on the command line explores others).
	PROPTEST_RNG_SEED=$${PROPTEST_RNG_SEED:-0} cargo test --profile ci --workspace --exclude tcplab-py
	$(VPY) -m pytest -q tests
	$(MAKE) --no-print-directory test-wheel

# The wheel installed into a throwaway venv outside the source tree; `tcplab reproduce p0`, `p1`, `p4`, `p2`
# `--quick` run from outside the repository must exit 0 or 3 and write report.md (see .ci/test-wheel).
test-wheel: $(VENV)/.built
	VIRTUAL_ENV=$(VENV_ABS) .ci/test-wheel "$(PYTHON)" "$(VENV_ABS)/bin/maturin"

# Wireshark's tshark judges the capture files in the tests; install it where it is missing.
tshark:
	@command -v tshark >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; }

bench:
	cargo bench -p tcplab-core --bench throughput

# Memory against flows, packets in flight and simulated time (1,000-10,000 flows).
bench-memory:
	cargo bench -p tcplab-core --bench memory

# tcplab beside ns-3 on the same scenarios (ns-3 in its own virtualenv; see benches/ns3/).
bench-ns3: $(VENV)/.built
	bash benches/ns3/setup.sh
	$(VPY) benches/ns3/compare.py

# tcplab beside htsim on the 10 Gb/s dumbbell: data packets per wall second and, where valgrind
# is installed, instructions per data packet (htsim built from its source; see benches/htsim/).
bench-htsim:
	bash benches/htsim/setup.sh
	$(PYTHON) benches/htsim/compare.py $(if $(shell command -v valgrind 2>/dev/null),--callgrind)

# A venv with current pip and maturin. Falls back to a pip-less venv bootstrapped by the
# system pip where the venv module lacks ensurepip (e.g. Debian without python3-venv).
$(VENV)/.base:
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV) && $(PYTHON) -m venv --without-pip $(VENV) \
		&& $(PYTHON) -m pip --python $(VPY) install -q pip; }
	$(VPY) -m pip install -q -U pip maturin
	touch $@

# The package (Rust extension built in release mode, Python sources editable).
$(VENV)/.built: $(VENV)/.base $(BUILD_INPUTS)
	$(MATURIN) develop --release
	touch $@

# The package plus the `dev` extras (pytest, hypothesis, pandas).
$(VENV)/.built-dev: $(VENV)/.base $(BUILD_INPUTS)
	$(MATURIN) develop --release --extras dev
	touch $@ $(VENV)/.built
