#!/usr/bin/env bash
# Create benches/ns3/.venv with the PyPI package `ns3` (ns-3's Python bindings, built on
# cppyy). Idempotent: does nothing when the pinned version is already installed and imports.
# ns-3 is never a dependency of tcplab: it lives only in this virtualenv.
#
# First install: about 2.5 minutes on 2 cores (cppyy and CPyCppyy are built from source) and
# about 520 MB on disk. Override the version with NS3_VERSION=..., the interpreter with PYTHON=...
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
ns3_version="${NS3_VERSION:-3.44.post0}"
python="${PYTHON:-$(command -v python3.11 2>/dev/null || command -v python3)}"
stamp="$venv/.ns3-$ns3_version"

if [ -f "$stamp" ] && [ -x "$venv/bin/python" ]; then
    exit 0
fi

echo "bench-ns3: installing ns3==$ns3_version into $venv (a few minutes, ~520 MB)" >&2
start=$(date +%s)
rm -rf "$venv"
# Fall back to a pip-less venv bootstrapped by the system pip where ensurepip is missing.
"$python" -m venv "$venv" || { rm -rf "$venv" && "$python" -m venv --without-pip "$venv" \
    && "$python" -m pip --python "$venv/bin/python" install -q pip; }
"$venv/bin/python" -m pip install -q -U pip
"$venv/bin/python" -m pip install -q "ns3==$ns3_version"

# Smoke test: the bindings import (cppyy parses the ns-3 headers: ~15 s) and TCP is there.
"$venv/bin/python" - <<'EOF'
from ns import ns
tid = ns.TypeId.LookupByName("ns3::TcpNewReno")
assert tid.GetName() == "ns3::TcpNewReno"
EOF
touch "$stamp"
echo "bench-ns3: ns3==$ns3_version ready in $(( $(date +%s) - start )) s, $(du -sh "$venv" | cut -f1)" >&2
