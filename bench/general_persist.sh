#!/usr/bin/env bash
# general_persist.sh - the device run behind cuda-general's third pass (docs/CUDA-GENERAL.md,
# "Third pass"; docs/PERFORMANCE.md): the persistent grid kernels (one cooperative launch per BFS
# and per push phase) against the launch-per-step path in the same process, bk alongside, flows
# checked equal and first cuts certified by bench/general_bench; tests and compute-sanitizer.
#
# Environment: BIN (folder with general_bench and test_cuda_general, else built here into
# build-general), OUT (logs; default bench/out/general), STAGES (any of "quick full memcheck
# racecheck" and "ab dimacs trace knobs" (first run), "ab2 dimacs2 trace2 knobs2" (second),
# "ab3 dimacs3 trace3 knobs3" (third), "confirm", "big" (past 2^31 arcs); default "quick ab3 dimacs3
# trace3").
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/general}
STAGES=${STAGES:-quick ab3 dimacs3 trace3}
mkdir -p "$OUT"
has() { [[ " $STAGES " == *" $1 "* ]]; }
B=${BIN:-}
if [ -n "$B" ]; then
    "$B/general_bench" --help >/dev/null 2>&1
    [ $? -eq 2 ] || { echo "prebuilt binaries do not run here; building"; B=""; }
fi
if [ -z "$B" ]; then
    echo "== build"
    cmake -S . -B build-general -DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        >"$OUT/build.log" 2>&1 &&
        cmake --build build-general -j"$(nproc)" --target test_cuda_general general_bench \
            >>"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
    mkdir -p build-general/bin
    cp build-general/general_bench build-general/tests/test_cuda_general build-general/bin/
    B=build-general/bin
fi
T=$B/test_cuda_general
[ -x "$T" ] || T=$B/tests/test_cuda_general
G=$B/general_bench
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
status=0
old=cuda-general+GCUT_CUDAGENERAL_PERSIST=0
run_test() { # NAME TIMEOUT ENV... -- test_cuda_general under ENV
    local name=$1 limit=$2
    shift 2
    echo "== test_cuda_general $name"
    local s
    s=$(date +%s)
    env "$@" timeout "$limit" "$T" >"$OUT/test_$name.log" 2>&1
    local rc=$?
    tail -2 "$OUT/test_$name.log"
    echo "exit $rc, $(($(date +%s) - s)) s"
    [ $rc -eq 0 ] || status=1
}
has quick && run_test quick "${QUICK_TIMEOUT:-150}" GCUT_TEST_QUICK=1
has full && run_test full "${FULL_TIMEOUT:-240}" GCUT_TEST_QUICK=0
if has memcheck; then
    echo "== compute-sanitizer memcheck (GCUT_TEST_QUICK=2)"
    GCUT_TEST_QUICK=2 timeout "${MEMCHECK_TIMEOUT:-200}" compute-sanitizer --tool memcheck --error-exitcode 9 "$T" \
        >"$OUT/memcheck.log" 2>&1
    rc=$?; tail -3 "$OUT/memcheck.log"; echo "exit $rc"; [ $rc -eq 0 ] || status=1
fi
if has racecheck; then
    # racecheck stopped cuda-grid's cooperative kernel ("illegal instruction"): the
    # launch-per-step path only.
    echo "== compute-sanitizer racecheck (GCUT_TEST_QUICK=2, GCUT_CUDAGENERAL_PERSIST=0)"
    GCUT_CUDAGENERAL_PERSIST=0 GCUT_TEST_QUICK=2 timeout 120 compute-sanitizer --tool racecheck \
        --error-exitcode 9 "$T" >"$OUT/racecheck.log" 2>&1
    rc=$?; tail -3 "$OUT/racecheck.log"; echo "exit $rc"; [ $rc -eq 0 ] || status=1
fi
if has ab; then
    echo "== grids: bk, grid kernels (default), launch per step, block-0 limit 1024, bottom-up past 5%"
    timeout 150 "$G" --repeats "${REPEATS:-3}" --solvers \
        "bk,cuda-general,$old,cuda-general+GCUT_CUDAGENERAL_GRID_SMALL=1024,cuda-general+GCUT_CUDAGENERAL_BOTTOM_UP=5" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard || status=1
fi
if has dimacs; then
    echo "== DIMACS families and random graphs: grid kernels against launch per step"
    timeout 90 "$G" --repeats "${REPEATS:-3}" --solvers "cuda-general,$old" genrmf:32:32 \
        rlg:64:2048 rlg:2048:64 random:1000000:500000 random:2000000:5000000 || status=1
fi
if has trace; then
    echo "== traces of hard 4K (stderr in $OUT/trace_4k.log)"
    timeout 60 "$G" --repeats 1 --solvers \
        "cuda-general+GCUT_BENCH_VERBOSE=1,$old+GCUT_BENCH_VERBOSE=1" grid:3840x2160:hard \
        2>"$OUT/trace_4k.log" >/dev/null
    grep -h "flow" "$OUT/trace_4k.log"
fi
if has knobs; then
    echo "== balance 25 / 50 (default) / 100 under the grid kernels"
    timeout 90 "$G" --repeats "${REPEATS:-3}" --solvers \
        "bk,cuda-general,cuda-general+GCUT_CUDAGENERAL_BALANCE=25,cuda-general+GCUT_CUDAGENERAL_BALANCE=100" \
        grid:3840x2160:hard grid:1920x1080:hard || status=1
fi
# Second run: list appends aggregated per warp, BFS arcs spread over the lanes, a light vertex's
# arcs loaded before its pushes (all on both paths), against the second pass's kernels (sp2).
sp2=cuda-general+GCUT_CUDAGENERAL_PERSIST=0+GCUT_CUDAGENERAL_AGGREGATE=0+GCUT_CUDAGENERAL_BFS_SPREAD=0+GCUT_CUDAGENERAL_PREFETCH=0
if has ab2; then
    echo "== grids: bk, default, second pass's kernels, launch per step, no aggregation, no prefetch, min 8 sweeps"
    timeout 200 "$G" --repeats "${REPEATS:-3}" --solvers \
        "bk,cuda-general,$sp2,$old,cuda-general+GCUT_CUDAGENERAL_AGGREGATE=0,cuda-general+GCUT_CUDAGENERAL_PREFETCH=0,cuda-general+GCUT_CUDAGENERAL_MIN_SWEEPS=8" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard grid:1920x1080:easy || status=1
fi
if has dimacs2; then
    echo "== DIMACS families and random graphs: default, second pass's kernels, launch per step"
    timeout 120 "$G" --repeats "${REPEATS:-3}" --solvers "cuda-general,$sp2,$old" genrmf:32:32 \
        genrmf:16:128 rlg:64:2048 rlg:2048:64 random:1000000:500000 random:2000000:5000000 ||
        status=1
fi
if has trace2; then
    echo "== traces of hard 4K and 256^3, default (stderr in $OUT/trace2.log)"
    timeout 60 "$G" --repeats 1 --solvers "cuda-general+GCUT_BENCH_VERBOSE=1,$sp2+GCUT_BENCH_VERBOSE=1" \
        grid:3840x2160:hard grid:256x256x256:hard 2>"$OUT/trace2.log" >/dev/null
    grep -h "flow" "$OUT/trace2.log"
fi
if has knobs2; then
    echo "== knobs on hard 4K: balance 25/100, min sweeps 16, bottom-up 5%, block-0 limit 1024, no spread"
    timeout 120 "$G" --repeats "${REPEATS:-3}" --solvers \
        "cuda-general,cuda-general+GCUT_CUDAGENERAL_BALANCE=25,cuda-general+GCUT_CUDAGENERAL_BALANCE=100,cuda-general+GCUT_CUDAGENERAL_MIN_SWEEPS=16,cuda-general+GCUT_CUDAGENERAL_BOTTOM_UP=5,cuda-general+GCUT_CUDAGENERAL_GRID_SMALL=1024,cuda-general+GCUT_CUDAGENERAL_BFS_SPREAD=0" \
        grid:3840x2160:hard grid:1920x1080:hard || status=1
fi
# Third run: dense sweeps (every node in id order while more than 5% are active) and BFS
# appends without list marks, against the second pass's kernels and the knobs.
if has ab3; then
    echo "== grids: bk, default, second pass's kernels, list sweeps, launch per step, balance 100, min 16 sweeps"
    timeout 240 "$G" --repeats "${REPEATS:-5}" --solvers \
        "bk,cuda-general,$sp2,cuda-general+GCUT_CUDAGENERAL_DENSE=0,$old,cuda-general+GCUT_CUDAGENERAL_BALANCE=100,cuda-general+GCUT_CUDAGENERAL_MIN_SWEEPS=16" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard || status=1
fi
if has dimacs3; then
    echo "== DIMACS families and random graphs: default, second pass's kernels, list sweeps"
    timeout 120 "$G" --repeats 3 --solvers "cuda-general,$sp2,cuda-general+GCUT_CUDAGENERAL_DENSE=0" \
        genrmf:32:32 genrmf:16:128 rlg:64:2048 rlg:2048:64 random:1000000:500000 \
        random:2000000:5000000 || status=1
fi
if has trace3; then
    echo "== traces of hard 4K and 256^3, default (stderr in $OUT/trace3.log)"
    timeout 60 "$G" --repeats 1 --solvers "cuda-general+GCUT_BENCH_VERBOSE=1" \
        grid:3840x2160:hard grid:256x256x256:hard 2>"$OUT/trace3.log" >/dev/null
    grep -h "flow" "$OUT/trace3.log"
fi
if has knobs3; then
    echo "== knobs: dense 2 / 10 percent, grid blocks per SM 1 / 2, balance 100 with min 8 sweeps"
    timeout 120 "$G" --repeats 3 --solvers \
        "cuda-general,cuda-general+GCUT_CUDAGENERAL_DENSE=2,cuda-general+GCUT_CUDAGENERAL_DENSE=10,cuda-general+GCUT_CUDAGENERAL_GRID_BLOCKS_PER_SM=1,cuda-general+GCUT_CUDAGENERAL_GRID_BLOCKS_PER_SM=2,cuda-general+GCUT_CUDAGENERAL_BALANCE=100+GCUT_CUDAGENERAL_MIN_SWEEPS=8" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard || status=1
fi
# Confirmation of the defaults against bk, cuda-grid and the second pass's kernels.
if has confirm; then
    echo "== confirm: bk, default, cuda-grid, second pass's kernels"
    timeout 200 "$G" --repeats "${REPEATS:-5}" --solvers "bk,cuda-general,cuda-grid,$sp2" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard || status=1
fi
# A graph past 2^31 arcs (arc offsets and arc indices past INT32_MAX for real): 10^7 nodes and
# 1.1 x 10^9 edges, 2.2 x 10^9 arcs; device peak about 44.5 GB (17.6 GB upload, 26.4 GB CSR,
# 0.5 GB per-node arrays), host graph 17.6 GB. bk would take hours: the oracles are the two
# device paths' flows (equal) and the certificate on each cut.
if has big; then
    echo "== past 2^31 arcs: random:10000000:1100000000, grid kernels and launch per step"
    timeout "${BIG_TIMEOUT:-400}" "$G" --repeats 1 --solvers "cuda-general,$old" \
        random:10000000:1100000000 || status=1
fi
exit $status
