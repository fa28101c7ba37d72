#!/usr/bin/env bash
# general_bench.sh - the GPU run behind docs/CUDA-GENERAL.md: cuda-general's tests (optionally
# under compute-sanitizer) and bench/general_bench (cuda-general against bk, and cuda-grid on
# grids, in the same run, flows and cuts checked) on a machine with an NVIDIA GPU.
#
# Environment (all optional):
#   STAGES="build test sanitize bench"   any of these
#   BUILD_DIR=build-general   CMake build folder (the build stage makes it)
#   BIN=                      folder with prebuilt test_cuda_general and general_bench (skips
#                             the build when they run here)
#   OUT=bench/out/general     where logs go
#   INSTANCES="..."           general_bench instances (see general_bench --help)
#   REPEATS=5  MAX_MS=60000   general_bench settings
# Exit status: non-zero if a stage fails (a flow MISMATCH or a failed certificate included).
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-build test sanitize bench}
BUILD_DIR=${BUILD_DIR:-build-general}
OUT=${OUT:-bench/out/general}
REPEATS=${REPEATS:-5}
MAX_MS=${MAX_MS:-60000}
INSTANCES=${INSTANCES:-grid:1920x1080:hard grid:1920x1080:easy grid:3840x2160:hard \
grid:256x256x256:hard random:1000000:500000 random:2000000:5000000 random:10000000:50000000 \
genrmf:64:64 genrmf:128:128 rlg:65536:64 rlg:64:65536}
mkdir -p "$OUT"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }

T=${BIN:-}
if [ -n "$T" ]; then
    "$T/general_bench" --help >/dev/null 2>&1
    [ $? -eq 127 ] && { echo "prebuilt binaries do not run here; building"; T=""; }
fi
if [ -z "$T" ] && has build; then
    echo "== build"
    cmake -S . -B "$BUILD_DIR" -DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        >"$OUT/build.log" 2>&1 &&
        cmake --build "$BUILD_DIR" -j"$(nproc)" --target test_cuda_general general_bench \
            >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    T=$BUILD_DIR
    [ -x "$T/tests/test_cuda_general" ] && mkdir -p "$T/bin" && cp "$T/tests/test_cuda_general" "$T/general_bench" "$T/bin/" && T=$T/bin
fi
[ -n "$T" ] || { echo "no binaries (set BIN or add the build stage)"; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"

if has test; then
    echo "== test_cuda_general"
    timeout 200 "$T/test_cuda_general" >"$OUT/test.log" 2>&1
    rc=$?
    tail -5 "$OUT/test.log"
    echo "exit $rc"
    [ $rc -eq 0 ] || status=1
fi
if has sanitize; then
    echo "== compute-sanitizer memcheck (GCUT_TEST_QUICK=1)"
    GCUT_TEST_QUICK=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$T/test_cuda_general" >"$OUT/memcheck.log" 2>&1
    rc=$?
    tail -4 "$OUT/memcheck.log"
    echo "exit $rc"
    [ $rc -eq 0 ] || status=1
    # racecheck stopped cuda-grid's cooperative kernel ("illegal instruction"); cuda-general's
    # default grid kernels are cooperative: the launch-per-step path (docs/CUDA-GENERAL.md).
    echo "== compute-sanitizer racecheck (GCUT_TEST_QUICK=2, GCUT_CUDAGENERAL_PERSIST=0)"
    GCUT_CUDAGENERAL_PERSIST=0 GCUT_TEST_QUICK=2 timeout 120 compute-sanitizer --tool racecheck \
        --error-exitcode 9 \
        "$T/test_cuda_general" >"$OUT/racecheck.log" 2>&1
    rc=$?
    tail -4 "$OUT/racecheck.log"
    echo "exit $rc"
    [ $rc -eq 0 ] || status=1
fi
if has bench; then
    echo "== general_bench"
    # shellcheck disable=SC2086
    "$T/general_bench" --repeats "$REPEATS" --max-ms "$MAX_MS" $INSTANCES 2>&1 |
        tee "$OUT/bench.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
exit $status
