#!/usr/bin/env bash
# band_live.sh - the narrow band's device pipeline with and without the live-tile restriction
# (docs/BAND.md, "Live tiles"; figures in docs/PERFORMANCE.md), in one device call. Stages
# (logs under $OUT):
#   build     Release with -Werror, CMAKE_CUDA_ARCHITECTURES=$ARCH, -j $(nproc): the library,
#             band_bench, test_cuda_band, test_cuda_grid
#   test      test_cuda_band (the masked-solve hook against bk / full cuda-grid, live tiles on
#             and off; the device pipeline against the host pipelines) and test_cuda_grid's
#             quick set (GCUT_TEST_QUICK=1)
#   bench     band_bench --variants full-gpu,band-gpu-dev,band-gpu-all --runs $RUNS --bk-runs 0
#             [--sigma est] on $CASES, one warm process per sigma mode, variants alternating
#   profile   GCUT_BAND_PROFILE=1 band_bench --variants band-gpu-dev --runs 1 (every stage's
#             time, synchronised, to profile.log)
#   memcheck  compute-sanitizer --tool memcheck on test_cuda_band and test_cuda_grid's quick set
# Environment: STAGES (build test bench profile), BUILD_DIR (build-live), OUT (bench/out/live),
#   ARCH (90), RUNS (5), CASES (3840x2160 and 512^3, easy and hard), SIGMAS ("0 est"),
#   STAGE_LIMIT (240 s)
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-build test bench profile}
BUILD_DIR=${BUILD_DIR:-build-live}
OUT=${OUT:-bench/out/live}
ARCH=${ARCH:-90}
RUNS=${RUNS:-5}
CASES=${CASES:-3840x2160:easy 3840x2160:hard 512x512x512:easy 512x512x512:hard}
SIGMAS=${SIGMAS:-0 est}
STAGE_LIMIT=${STAGE_LIMIT:-240}
mkdir -p "$OUT"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
if has build; then
    t0=$(date +%s)
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=ON -DGCUT_WERROR=ON \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >"$OUT/build.log" 2>&1 &&
        cmake --build "$BUILD_DIR" -j "$(nproc)" --target band_bench test_cuda_band \
            test_cuda_grid >>"$OUT/build.log" 2>&1 || {
        tail -30 "$OUT/build.log"
        echo "build failed"
        exit 1
    }
    echo "== built in $(($(date +%s) - t0)) s"
fi
if has test; then
    t0=$(date +%s)
    timeout "$STAGE_LIMIT" "$BUILD_DIR/tests/test_cuda_band" >"$OUT/test.log" 2>&1 || status=1
    GCUT_TEST_QUICK=1 timeout "$STAGE_LIMIT" "$BUILD_DIR/tests/test_cuda_grid" >>"$OUT/test.log" 2>&1 ||
        status=1
    grep -E "passed|failed|FAIL|CHECK" "$OUT/test.log" | tail -12
    echo "== tests $(($(date +%s) - t0)) s, status $status"
fi
if has bench; then
    for sigma in $SIGMAS; do
        echo "== bench, sigma $sigma"
        # shellcheck disable=SC2086
        timeout "$STAGE_LIMIT" "$BUILD_DIR/band_bench" --variants full-gpu,band-gpu-dev,band-gpu-all \
            --runs "$RUNS" --bk-runs 0 --sigma "$sigma" $CASES >"$OUT/bench-$sigma.md" 2>&1 ||
            status=1
        grep -E "^###|^\| (full|band)|L[0-9] " "$OUT/bench-$sigma.md"
    done
fi
if has profile; then
    # shellcheck disable=SC2086
    GCUT_BAND_PROFILE=1 timeout "$STAGE_LIMIT" "$BUILD_DIR/band_bench" --variants full-gpu,band-gpu-dev \
        --runs 1 --bk-runs 0 $CASES >"$OUT/profile.log" 2>&1 || status=1
    grep -E "^###|band profile" "$OUT/profile.log" | tail -80
fi
if has memcheck; then
    t0=$(date +%s)
    timeout "$STAGE_LIMIT" compute-sanitizer --tool memcheck "$BUILD_DIR/tests/test_cuda_band" \
        >"$OUT/memcheck.log" 2>&1 || status=1
    GCUT_TEST_QUICK=1 timeout "$STAGE_LIMIT" compute-sanitizer --tool memcheck \
        "$BUILD_DIR/tests/test_cuda_grid" >>"$OUT/memcheck.log" 2>&1 || status=1
    grep -E "ERROR SUMMARY|passed|failed" "$OUT/memcheck.log"
    echo "== memcheck $(($(date +%s) - t0)) s"
fi
echo "status $status"
exit $status
