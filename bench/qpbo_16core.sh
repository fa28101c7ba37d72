#!/usr/bin/env bash
# qpbo_16core.sh - the 16-core measurements of the QPBO issue (docs/QPBO.md): gcut's `qpbo` and
# `pqpbo` at 1, 2, 4, 8, 16 threads against Kolmogorov's QPBO (thinqpbo) on multi-object
# segmentation energies of 10^5 to 10^8 nodes, and `parallel-bk` against `bk` on the hard
# 4096^2 grid and the 512^3 volume. Self-contained: builds gcut (Release, no CUDA) in
# build-16core/, each solver in its own process, order rotating, medians, answers checked equal.
#
# Usage, from the repository root on the 16-core host (each PART fits a 10-minute command):
#   bash bench/qpbo_16core.sh build                 # configure and build (about 1 minute)
#   bash bench/qpbo_16core.sh faults                # what a first touch of memory costs here
#   bash bench/qpbo_16core.sh objects 300x300:8     # ~1.3e5 nodes, with Kolmogorov
#   bash bench/qpbo_16core.sh objects 1000x1000:16  # ~1.5e6 nodes
#   bash bench/qpbo_16core.sh objects 2600x2600:32  # ~1.0e7 nodes (Kolmogorov's energy goes
#                                                   #  through a ~1 GB text file, then binary)
#   bash bench/qpbo_16core.sh huge 8200x8200:64     # ~1.0e8 nodes, gcut only (~35 GB; THREADS=16
#                                                   #  alone if the whole list runs too long)
#   bash bench/qpbo_16core.sh variants 1000x1000:16 # pqpbo at the largest THREADS count with
#                                                   #  the GCUT_QPBO_* experiment knobs
#   bash bench/qpbo_16core.sh plot                  # scaling curve: $OUT/scaling.svg
#   bash bench/qpbo_16core.sh pbk 2d                # hard 4096x4096, bk vs parallel-bk
#   bash bench/qpbo_16core.sh pbk 3d                # hard 512^3
#   bash bench/qpbo_16core.sh report                # all tables gathered in one file
# `objects` and `huge` run bench/qpbo_objects (the energy made in process, gcut in process, each
# Kolmogorov run its own process) and append their medians to $OUT/rows.csv for `plot`.
# Environment: THREADS (default 1,2,4,8,16), REPEATS (default 3), OUT (default
# bench/out/qpbo16; a file COMMIT names the commit of a copied tree), PROFILE=1 (one more pqpbo run with the phase profile on stderr),
# SERIAL=0 (leave serial qpbo out), BUILD (default build-16core: a Release build made elsewhere
# may be named instead of running `build`). Kolmogorov's QPBO: `import thinqpbo` must work; without network access put
# the wheel (`pip download thinqpbo -d .whl/` on a machine with access) in .whl/ and this script
# installs it from there. Tables: $OUT/*.md; what was run and on what: $OUT/machine.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/out/qpbo16}
threads=${THREADS:-1,2,4,8,16}
repeats=${REPEATS:-3}
bdir=${BUILD:-build-16core}
gcut=$bdir/gcut
mkdir -p "$out"

machine() {
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo "commit: $(cat COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
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
            python3 -m pip install --quiet --no-index --find-links .whl --user thinqpbo ||
            { python3 -m pip install --quiet --no-index --no-deps --target /tmp/site \
                .whl/thinqpbo-*.whl && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}; } ||
            true
    fi
    python3 -c "import thinqpbo" 2>/dev/null || echo "thinqpbo missing: Kolmogorov's column is left out"
}

case "${1:-}" in
build)
    cmake -S . -B build-16core -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF \
        -DGCUT_BUILD_TESTS=OFF >/dev/null
    cmake --build build-16core -j "$(nproc)" --target gcut_cli gcut_bench qpbo_objects qpbo_faults
    need_thinqpbo
    machine
    ;;
faults)
    "$bdir"/qpbo_faults --mb "${MB:-512}" --repeats "$repeats" | tee "$out/faults.md"
    ;;
objects | huge)
    spec=${2:?$1 needs a spec WxH[xD]:K}
    extra=()
    [ "${PROFILE:-0}" = 1 ] && extra+=(--profile)
    [ "${SERIAL:-1}" = 0 ] && extra+=(--no-serial)
    if [ "$1" = objects ]; then
        need_thinqpbo
        python3 -c "import thinqpbo" 2>/dev/null && extra+=(--kolmogorov bench/qpbo_kolmogorov.py)
    fi
    "$bdir"/qpbo_objects --size "${spec%:*}" --objects "${spec#*:}" --threads "$threads" \
        --repeats "$repeats" --csv "$out/rows.csv" "${extra[@]}" | tee "$out/$1-$spec.md"
    ;;
variants)
    spec=${2:?variants needs a spec WxH[xD]:K}
    t=${threads##*,}
    for v in "" GCUT_QPBO_ACTIVATE_ALL=1 "GCUT_QPBO_ACTIVATE_ALL=1 GCUT_QPBO_LATE_MIRROR=1" \
        GCUT_QPBO_SPLIT=2 GCUT_QPBO_SPLIT=4; do
        echo "### ${v:-default}"
        env $v "$bdir"/qpbo_objects --size "${spec%:*}" --objects "${spec#*:}" --threads "$t" \
            --repeats "$repeats" --no-serial | tail -1
    done | tee "$out/variants-$spec.md"
    ;;
plot)
    python3 bench/qpbo_plot.py "$out/rows.csv" "$out/scaling.svg" | tee "$out/scaling.txt"
    ;;
pbk)
    which=${2:?pbk needs 2d or 3d}
    if [ "$which" = 2d ]; then inst=(--sizes 4096x4096 --volumes none); else inst=(--sizes none --volumes 512); fi
    for t in ${threads//,/ }; do
        echo "### parallel-bk, $t threads ($which)"
        "$bdir"/gcut_bench "${inst[@]}" --levels hard --solvers bk,parallel-bk \
            --baseline bk --threads "$t" --repeats "$repeats"
    done | tee "$out/pbk-$which.md"
    ;;
report)
    { cat "$out/machine.txt" "$out"/faults.md "$out"/objects-*.md "$out"/huge-*.md \
        "$out"/variants-*.md "$out"/pbk-*.md "$out"/scaling.txt 2>/dev/null || true; } |
        tee "$out/report.md"
    ;;
*)
    sed -n '2,34p' "$0"
    exit 2
    ;;
esac
