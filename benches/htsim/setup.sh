#!/usr/bin/env bash
# Build htsim (github.com/Broadcom/csg-htsim) and our dumbbell driver into benches/htsim/build/.
# htsim is never a dependency of tcplab and none of its code is in this repository: its source
# is taken at bench time from one of
#
#   HTSIM_SRC=/path/to/csg-htsim.tar.gz   a tarball (or .zip) of the repository, e.g. GitHub's
#                                         "Download ZIP" / archive/refs/heads/main.tar.gz
#   HTSIM_SRC=/path/to/csg-htsim          a checkout (a directory holding sim/Makefile)
#   HTSIM_SRC=/path/to/repo.git           a bare git directory (its HEAD is used)
#   HTSIM_MIRROR=/path/to/repo.git        the same, default /work/.mirror/Broadcom+csg-htsim/repo
#
# and built with htsim's own Makefile (`make libhtsim.a`: g++ -std=c++11 -O3). Our driver,
# htsim_dumbbell.cpp, is compiled against it with the same flags (HTSIM_CXXFLAGS overrides).
# Idempotent: does nothing when build/htsim_dumbbell is newer than the driver's source and the
# source it was built from is unchanged. About 1-2 minutes on 2 cores the first time.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build="$here/build"
mirror="${HTSIM_MIRROR:-/work/.mirror/Broadcom+csg-htsim/repo}"
src="${HTSIM_SRC:-}"
cxxflags="${HTSIM_CXXFLAGS:--std=c++11 -O3 -g -fPIE}"
driver="$here/htsim_dumbbell.cpp"
bin="$build/htsim_dumbbell"

# What the source is, as one line (recorded in build/SOURCE; a change rebuilds).
if [ -n "$src" ]; then
    [ -e "$src" ] || { echo "bench-htsim: HTSIM_SRC=$src does not exist" >&2; exit 1; }
    if [ -f "$src" ]; then
        desc="tarball $(realpath "$src") sha256 $(sha256sum "$src" | cut -d' ' -f1)"
    elif [ -f "$src/sim/Makefile" ]; then
        desc="directory $(realpath "$src") $(git -C "$src" rev-parse HEAD 2>/dev/null || echo '(not a git checkout)')"
    elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
        desc="git $(realpath "$src") $(git --git-dir="$src" rev-parse HEAD)"
    else
        echo "bench-htsim: HTSIM_SRC=$src is neither a tarball, a checkout with sim/Makefile nor a git directory" >&2
        exit 1
    fi
elif git --git-dir="$mirror" rev-parse --verify -q HEAD >/dev/null 2>&1; then
    src="$mirror"
    desc="git $(realpath "$mirror") $(git --git-dir="$mirror" rev-parse HEAD)"
else
    cat >&2 <<EOF
bench-htsim: no htsim source. Point HTSIM_SRC at one of
  - a tarball or zip of github.com/Broadcom/csg-htsim (e.g. its archive/refs/heads/main.tar.gz),
  - a checkout of it (a directory holding sim/Makefile),
  - a bare git directory of it,
or HTSIM_MIRROR at a bare git directory (default $mirror, not found).
EOF
    exit 1
fi

if [ -x "$bin" ] && [ "$bin" -nt "$driver" ] && [ -f "$build/SOURCE" ] \
    && [ "$(cat "$build/SOURCE")" = "$desc" ] && [ "$(cat "$build/CXXFLAGS" 2>/dev/null)" = "$cxxflags" ]; then
    exit 0
fi

for tool in g++ make ar; do
    command -v "$tool" >/dev/null || { echo "bench-htsim: $tool is needed" >&2; exit 1; }
done

echo "bench-htsim: building htsim from $desc into $build" >&2
start=$(date +%s)
rm -rf "$build"
mkdir -p "$build/src"
if [ -f "$src" ]; then
    case "$src" in
        *.zip) tmp="$(mktemp -d)"; unzip -q "$src" -d "$tmp" ;;
        *) tmp="$(mktemp -d)"; tar -xf "$src" -C "$tmp" ;;
    esac
    # The archive's top directory (csg-htsim-main/ or similar) holds sim/.
    top="$(dirname "$(find "$tmp" -maxdepth 3 -path '*/sim/Makefile' | head -n1)")"
    [ -n "$top" ] && [ "$top" != . ] || { echo "bench-htsim: no sim/Makefile in $src" >&2; exit 1; }
    cp -r "$top" "$build/src/sim"
    rm -rf "$tmp"
elif [ -f "$src/sim/Makefile" ]; then
    cp -r "$src/sim" "$build/src/sim"
else
    # The sim/ tree alone (a snapshot may lack large files elsewhere in the repository).
    git --git-dir="$src" archive --prefix=sim/ HEAD:sim | tar -x -C "$build/src"
fi

# htsim's own build of its library (its Makefile's CFLAGS: -Wall -std=c++11 -g -O3 -fPIE).
# Its warnings are its own; keep them in a log.
make -C "$build/src/sim" -j"$(nproc)" libhtsim.a >"$build/make.log" 2>&1 \
    || { tail -n 30 "$build/make.log" >&2; echo "bench-htsim: make libhtsim.a failed (log: $build/make.log)" >&2; exit 1; }

# shellcheck disable=SC2086
g++ $cxxflags -I"$build/src/sim" "$driver" "$build/src/sim/libhtsim.a" -o "$bin"
echo "$desc" >"$build/SOURCE"
echo "$cxxflags" >"$build/CXXFLAGS"
echo "bench-htsim: htsim ready in $(( $(date +%s) - start )) s: $bin" >&2
