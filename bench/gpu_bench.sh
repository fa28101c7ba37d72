#!/usr/bin/env bash
# gpu_bench.sh - the GPU run behind docs/CUDA-GRID.md, for a machine with an NVIDIA GPU: builds
# gcut with CUDA, runs the cuda tests (optionally under compute-sanitizer), measures the
# device's copy bandwidth, and times cuda-grid against cpu-pr and bk with bench/gcut_bench.
#
# Environment (all optional):
#   STAGES="build test bw bench"   any of: build test sanitize bw bench tune
#   BUILD_DIR=build-dev            CMake build folder
#   OUT=bench/out/gpu              where logs go
#   SIZES=320x240,640x480,1280x720,1920x1080,2560x1440,3840x2160   2D synthetic sizes
#   VOLUMES=128,256,512            3D volumes
#   SOLVERS=cuda-grid,cpu-pr,bk    solvers, in one run (flows are compared)
#   REPEATS=5  THREADS=16          gcut_bench settings
#   TUNE_SIZES=1920x1080  TUNE_K="2 4 8"  TUNE_R="16 32 64"   the tune stage's grid
# Exit status: non-zero if a stage fails (a flow MISMATCH included).
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-build test bw bench}
BUILD_DIR=${BUILD_DIR:-build-dev}
OUT=${OUT:-bench/out/gpu}
SIZES=${SIZES:-320x240,640x480,1280x720,1920x1080,2560x1440,3840x2160}
VOLUMES=${VOLUMES:-128,256,512}
SOLVERS=${SOLVERS:-cuda-grid,cpu-pr,bk}
REPEATS=${REPEATS:-5}
THREADS=${THREADS:-16}
TUNE_SIZES=${TUNE_SIZES:-1920x1080}
TUNE_K=${TUNE_K:-2 4 8}
TUNE_R=${TUNE_R:-16 32 64}
mkdir -p "$OUT"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }

if has build; then
    echo "== build"
    cmake -S . -B "$BUILD_DIR" -DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        >"$OUT/build.log" 2>&1 && cmake --build "$BUILD_DIR" -j"$(nproc)" --target gcut_bench test_cuda_grid >>"$OUT/build.log" 2>&1 ||
        { tail -30 "$OUT/build.log"; exit 1; }
fi
if has test; then
    echo "== ctest -L cuda"
    (cd "$BUILD_DIR" && ctest -L cuda --output-on-failure --timeout 240) 2>&1 | tee "$OUT/test.log" | tail -15 ||
        status=1
fi
if has sanitize; then
    for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool test_cuda_grid"
        GCUT_TEST_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 9 \
            "$BUILD_DIR/tests/test_cuda_grid" >"$OUT/sanitize-$tool.log" 2>&1
        rc=$?
        echo "exit $rc"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed," "$OUT/sanitize-$tool.log" | tail -3
        [ $rc -eq 0 ] || status=1
    done
fi
if has bw; then
    echo "== device-to-device copy bandwidth"
    scratch=$(mktemp -d)
    cat >"$scratch/copy_bw.cu" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
    const size_t bytes = size_t(1) << 30;
    void *a, *b;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess)
        return 1;
    cudaMemset(a, 1, bytes);
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    for (int i = 0; i < 3; i++)
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    const int reps = 20;
    cudaEventRecord(t0);
    for (int i = 0; i < reps; i++)
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(t1);
    cudaEventSynchronize(t1);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    printf("copy bandwidth (read + write): %.0f GB/s\n", 2.0 * bytes * reps / (ms * 1e-3) / 1e9);
    return 0;
}
EOF
    nvcc -O2 -arch=sm_90 -o "$scratch/copy_bw" "$scratch/copy_bw.cu" && "$scratch/copy_bw"
fi
if has tune; then
    echo "== tune: sweeps per global relabel (K) x rounds per tile visit (R)"
    for k in $TUNE_K; do
        for r in $TUNE_R; do
            line=$(GCUT_CUDAGRID_SWEEPS=$k GCUT_CUDAGRID_ROUNDS=$r timeout 60 "$BUILD_DIR/gcut_bench" \
                --sizes "$TUNE_SIZES" --volumes none --solvers cuda-grid --repeats 3 \
                --no-markdown --csv - 2>/dev/null | grep cuda-grid | tr '\n' ' ')
            echo "K=$k R=$r $line"
        done
    done | tee "$OUT/tune.log"
fi
if has bench; then
    echo "== gcut_bench"
    timeout "${BENCH_TIMEOUT:-400}" "$BUILD_DIR/gcut_bench" --sizes "$SIZES" --volumes "$VOLUMES" --solvers "$SOLVERS" \
        --repeats "$REPEATS" --threads "$THREADS" --csv "$OUT/bench.csv" \
        2>&1 | tee "$OUT/bench.log" | grep -v "^gcut_bench: .*: \(building\|.* x[0-9]*\)$"
    rc=${PIPESTATUS[0]}
    echo "gcut_bench exit $rc"
    [ "$rc" -eq 0 ] || status=1
fi
exit $status
