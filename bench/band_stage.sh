#!/usr/bin/env bash
# band_stage.sh - the narrow band's fifth-pass device run (docs/BAND.md, "Staged copies" and
# "Fused band selection"; figures in docs/PERFORMANCE.md): staged copies and the fused selection
# against their earlier forms in one process each. Stages (logs under $OUT):
#   build    (BUILD=1 only) band_bench and the three CUDA tests into $BIN (Release, -Werror,
#            CMAKE_CUDA_ARCHITECTURES=$ARCH); else $BIN holds them already (built elsewhere)
#   test     test_cuda_band; test_cuda_grid and test_cuda_seg with GCUT_TEST_QUICK=1
#   bench    band_bench --variants $VARIANTS --runs $RUNS --bk-runs 0 $CASES: the full
#            cuda-grid solve and the device pipeline, each with the staged copies (default) and
#            without (GCUT_STAGING=0), and the pipeline with the fourth pass's selection kernels
#            (GCUT_BAND_FUSED=0), alternating in one warm process, medians, pixels differing
#   profile  one full and one banded run per case of $PROFILE_CASES (after the warm-up) with
#            GCUT_BAND_PROFILE=1 and GCUT_STAGING_VERBOSE=1: every stage's time, every copy's
#   memcheck compute-sanitizer --tool memcheck on the three tests (quick sets; MEMCHECK_TESTS)
# Environment (all optional): STAGES, BIN (build-stage), BUILD (0), ARCH (90), OUT
# (bench/out/stage), RUNS (5), CASES, VARIANTS, PROFILE_CASES, PROFILE_VARIANTS (full-gpu,
# band-gpu-dev), PROFILE_THREADS (8; " " for none), TESTS and MEMCHECK_TESTS (the three), LIMIT
# (seconds per stage, 240). The seventh pass's run (docs/PERFORMANCE.md): BUILD=1 RUNS=7
# VARIANTS=full-gpu,band-gpu-dev,full-gpu-legacy,band-gpu-legacy,band-gpu-fat.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
STAGES=${STAGES:-test bench profile memcheck}
BIN=${BIN:-build-stage}
BUILD=${BUILD:-0}
ARCH=${ARCH:-90}
OUT=${OUT:-bench/out/stage}
RUNS=${RUNS:-5}
CASES=${CASES:-3840x2160:easy 3840x2160:hard 512x512x512:easy 512x512x512:hard}
PROFILE_CASES=${PROFILE_CASES:-512x512x512:easy 3840x2160:easy}
PROFILE_THREADS=${PROFILE_THREADS:-8}
VARIANTS=${VARIANTS:-full-gpu,band-gpu-dev,full-gpu-pageable,band-gpu-pageable,band-gpu-unfused}
PROFILE_VARIANTS=${PROFILE_VARIANTS:-full-gpu,band-gpu-dev}
MEMCHECK_TESTS=${MEMCHECK_TESTS:-test_cuda_band test_cuda_grid test_cuda_seg}
TESTS=${TESTS:-test_cuda_band test_cuda_grid test_cuda_seg}
LIMIT=${LIMIT:-240}
mkdir -p "$OUT"
has() { [[ " $STAGES " == *" $1 "* ]]; }
status=0
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/Mem:/{print $2}') GB, load $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$OUT/device.txt"

if [ "$BUILD" = 1 ]; then
    echo "== build $(date +%T)"
    t0=$(date +%s)
    cmake -S . -B "$BIN" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=ON -DGCUT_WERROR=ON \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >"$OUT/build.log" 2>&1 &&
        cmake --build "$BIN" -j "$(nproc)" --target band_bench test_cuda_band test_cuda_grid \
            test_cuda_seg >>"$OUT/build.log" 2>&1 || {
        tail -20 "$OUT/build.log"
        echo "build failed"
        exit 1
    }
    echo "built in $(($(date +%s) - t0)) s"
fi
bb=$BIN/band_bench
tb=$BIN/tests
[ -x "$tb/test_cuda_band" ] || tb=$BIN
if has test; then
    echo "== test $(date +%T)"
    : >"$OUT/tests.log"
    for t in $TESTS; do
        q=()
        [ "$t" != test_cuda_band ] && q=(env GCUT_TEST_QUICK=1)
        t0=$(date +%s)
        timeout "$LIMIT" "${q[@]}" "$tb/$t" >"$OUT/t.log" 2>&1
        rc=$?
        [ $rc -ne 0 ] && status=1
        { echo "#### $t rc $rc"; cat "$OUT/t.log"; } >>"$OUT/tests.log"
        echo "$t: rc $rc, $(tail -1 "$OUT/t.log"), $(($(date +%s) - t0)) s"
        [ "$t" = test_cuda_band ] && grep -E "^staged|^staging|FAIL|failed" "$OUT/t.log" | head -20
    done
    rm -f "$OUT/t.log"
fi
if has bench; then
    echo "== bench $(date +%T)"
    # shellcheck disable=SC2086
    timeout "$LIMIT" "$bb" --variants "$VARIANTS" --runs "$RUNS" --bk-runs 0 $CASES \
        >"$OUT/bench.md" 2>&1 || status=1
    grep -E "^###|^\| (full|band)|^pageable|  L0|model tables" "$OUT/bench.md"
fi
if has profile; then
    echo "== profile $(date +%T)"
    # shellcheck disable=SC2086
    GCUT_BAND_PROFILE=1 GCUT_STAGING_VERBOSE=1 timeout "$LIMIT" "$bb" \
        --variants "$PROFILE_VARIANTS" --runs 1 --bk-runs 0 $PROFILE_CASES >"$OUT/profile.log" 2>&1 || status=1
    grep -E "band profile|staging:" "$OUT/profile.log" | cut -c1-150 | tail -80
    for t in $PROFILE_THREADS; do # the ring's thread count (GCUT_STAGING_THREADS)
        # shellcheck disable=SC2086
        GCUT_STAGING_THREADS=$t GCUT_STAGING_VERBOSE=1 timeout "$LIMIT" "$bb" \
            --variants full-gpu,band-gpu-dev --runs 1 --bk-runs 0 ${PROFILE_CASES%% *} \
            >>"$OUT/profile.log" 2>&1 || status=1
        echo "-- GCUT_STAGING_THREADS=$t, ${PROFILE_CASES%% *}"
        grep -E "staging:.*threads" "$OUT/profile.log" | tail -6
    done
fi
if has memcheck; then
    echo "== memcheck $(date +%T)"
    : >"$OUT/memcheck.log"
    for t in $MEMCHECK_TESTS; do
        t0=$(date +%s)
        GCUT_TEST_QUICK=1 timeout "$LIMIT" compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$tb/$t" >"$OUT/m.log" 2>&1
        rc=$?
        [ $rc -ne 0 ] && status=1
        { echo "#### $t rc $rc"; cat "$OUT/m.log"; } >>"$OUT/memcheck.log"
        echo "$t: rc $rc, $(grep -E 'ERROR SUMMARY' "$OUT/m.log" | tail -1), $(grep -E 'passed' "$OUT/m.log" | tail -1 | cut -c1-60), $(($(date +%s) - t0)) s"
    done
    rm -f "$OUT/m.log"
fi
echo "== done $(date +%T), status $status"
exit $status
