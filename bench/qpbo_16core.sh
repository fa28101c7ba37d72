#!/usr/bin/env bash
# qpbo_16core.sh - the 16-core measurements of the QPBO issue (docs/QPBO.md): gcut's `qpbo` and
# `pqpbo` at 1, 2, 4, 8, 16 threads against Kolmogorov's QPBO (thinqpbo) on multi-object
# segmentation energies of 10^5 to 10^8 nodes, and `parallel-bk` against `bk` on the hard
# 4096^2 grid and the 512^3 volume. Self-contained: builds gcut (Release, no CUDA) in
# build-16core/, each solver in its own process, order rotating, medians, answers checked equal.
#
# Usage, from the repository root on the 16-core host (each PART fits a 10-minute command):
#   bash bench/qpbo_16core.sh build                 # configure and build (about 1 minute)
#   bash bench/qpbo_16core.sh objects 300x300:8     # ~1.3e5 nodes, with Kolmogorov
#   bash bench/qpbo_16core.sh objects 1000x1000:16  # ~1.5e6 nodes
#   bash bench/qpbo_16core.sh objects 2600x2600:32  # ~1.0e7 nodes (Kolmogorov's Python driver
#                                                   #  holds the terms: several GB, minutes)
#   bash bench/qpbo_16core.sh huge 8200x8200:64     # ~1.0e8 nodes, gcut only, made in process
#                                                   #  (bench/qpbo_objects; ~30 GB; THREADS=16
#                                                   #  alone if the whole list runs too long)
#   bash bench/qpbo_16core.sh pbk 2d                # hard 4096x4096, bk vs parallel-bk
#   bash bench/qpbo_16core.sh pbk 3d                # hard 512^3
#   bash bench/qpbo_16core.sh report                # all tables gathered in one file
# Environment: THREADS (default 1,2,4,8,16), REPEATS (default 3), OUT (default
# bench/out/qpbo16). Kolmogorov's QPBO: `import thinqpbo` must work; without network access put
# the wheel (`pip download thinqpbo -d .whl/` on a machine with access) in .whl/ and this script
# installs it from there. Tables: $OUT/*.md; what was run and on what: $OUT/machine.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/out/qpbo16}
threads=${THREADS:-1,2,4,8,16}
repeats=${REPEATS:-3}
gcut=build-16core/gcut
mkdir -p "$out"

machine() {
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
        echo "cores: $(nproc)"
        echo "memory: $(free -g | awk '/Mem:/ { print $2 " GiB" }')"
        python3 -c "import thinqpbo; print('thinqpbo: yes')" 2>/dev/null || echo "thinqpbo: no"
    } >>"$out/machine.txt"
}

need_thinqpbo() {
    if python3 -c "import thinqpbo" 2>/dev/null; then return 0; fi
    if ls .whl/thinqpbo-*.whl >/dev/null 2>&1; then
        python3 -m pip install --quiet --no-index --find-links .whl --user \
            --break-system-packages thinqpbo 2>/dev/null ||
            python3 -m pip install --quiet --no-index --find-links .whl --user thinqpbo || true
    fi
    python3 -c "import thinqpbo" 2>/dev/null || echo "thinqpbo missing: Kolmogorov's column is left out"
}

case "${1:-}" in
build)
    cmake -S . -B build-16core -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF \
        -DGCUT_BUILD_TESTS=OFF >/dev/null
    cmake --build build-16core -j "$(nproc)" --target gcut_cli gcut_bench qpbo_objects
    need_thinqpbo
    machine
    ;;
objects)
    spec=${2:?objects needs a spec WxH:K or WxHxD:K}
    need_thinqpbo
    python3 bench/qpbo_bench.py --gcut "$gcut" --threads "$threads" --repeats "$repeats" \
        --out "$out" "$spec" | tee "$out/objects-$spec.md"
    ;;
huge)
    spec=${2:?huge needs a spec WxH[xD]:K}
    build-16core/qpbo_objects --size "${spec%:*}" --objects "${spec#*:}" --threads "$threads" \
        --repeats "${REPEATS:-1}" | tee "$out/huge-$spec.md"
    ;;
pbk)
    which=${2:?pbk needs 2d or 3d}
    if [ "$which" = 2d ]; then inst=(--sizes 4096x4096 --volumes none); else inst=(--sizes none --volumes 512); fi
    for t in ${threads//,/ }; do
        echo "### parallel-bk, $t threads ($which)"
        build-16core/gcut_bench "${inst[@]}" --levels hard --solvers bk,parallel-bk \
            --baseline bk --threads "$t" --repeats "$repeats"
    done | tee "$out/pbk-$which.md"
    ;;
report)
    cat "$out/machine.txt" "$out"/objects-*.md "$out"/huge-*.md "$out"/pbk-*.md 2>/dev/null |
        tee "$out/report.md"
    ;;
*)
    sed -n '2,30p' "$0"
    exit 2
    ;;
esac
