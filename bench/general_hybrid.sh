#!/usr/bin/env bash
# general_hybrid.sh - the device run behind cuda-general's hybrid finish and auto rule
# (docs/CUDA-GENERAL.md, docs/PERFORMANCE.md "cuda-general"): tests, profile traces and A/B
# timings of settings in one process each (bench/general_bench runs NAME+VAR=VALUE solver
# specs in rotation; flows checked equal, first cuts certified).
#
# Environment: BIN (folder with general_bench and tests/test_cuda_general, else built here
# into build-general), OUT (logs; default bench/out/general), STAGES (any of "test memcheck
# full ab trace knobs dimacs cube" (first run) "grids2 dimacs2 balance" (second run) "confirm" (third run) "cycles" (fourth) "bfs" (the lead's run at 2edd88b); default
# the first run's without full and memcheck).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/general}
STAGES=${STAGES:-test ab trace knobs dimacs cube}
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
    cp build-general/general_bench build-general/bin/
    cp build-general/tests/test_cuda_general build-general/bin/
    B=build-general/bin
fi
T=$B/test_cuda_general
[ -x "$T" ] || T=$B/tests/test_cuda_general
G=$B/general_bench
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
status=0
off=cuda-general+GCUT_CUDAGENERAL_HYBRID=0
if has test; then
    echo "== test_cuda_general (GCUT_TEST_QUICK=1)"
    GCUT_TEST_QUICK=1 timeout 150 "$T" >"$OUT/test_quick.log" 2>&1
    rc=$?; tail -3 "$OUT/test_quick.log"; echo "exit $rc"; [ $rc -eq 0 ] || status=1
fi
if has full; then
    echo "== test_cuda_general (full)"
    s=$(date +%s); timeout "${FULL_TIMEOUT:-300}" "$T" >"$OUT/test_full.log" 2>&1
    rc=$?; tail -3 "$OUT/test_full.log"; echo "exit $rc, $(($(date +%s) - s)) s"
    [ $rc -eq 0 ] || status=1
fi
if has memcheck; then
    echo "== compute-sanitizer memcheck (GCUT_TEST_QUICK=${MEMCHECK_QUICK:-1})"
    GCUT_TEST_QUICK=${MEMCHECK_QUICK:-1} timeout 200 compute-sanitizer --tool memcheck \
        --error-exitcode 9 "$T" \
        >"$OUT/memcheck.log" 2>&1
    rc=$?; tail -3 "$OUT/memcheck.log"; echo "exit $rc"; [ $rc -eq 0 ] || status=1
fi
if has ab; then
    echo "== bk, GPU only, hybrid (default)"
    timeout 120 "$G" --repeats 3 --solvers "bk,$off,cuda-general" grid:1920x1080:hard \
        grid:1920x1080:easy grid:3840x2160:hard random:1000000:500000 || status=1
fi
if has trace; then
    echo "== traces (stderr in $OUT/trace_*.log)"
    timeout 60 "$G" --repeats 1 --solvers "$off+GCUT_BENCH_VERBOSE=1" grid:1920x1080:hard \
        grid:3840x2160:hard 2>"$OUT/trace_gpu.log" >/dev/null
    timeout 60 "$G" --repeats 1 --solvers "cuda-general+GCUT_BENCH_VERBOSE=1" \
        grid:1920x1080:hard grid:3840x2160:hard 2>"$OUT/trace_hybrid.log" >/dev/null
    grep -h "hybrid\|flow" "$OUT/trace_hybrid.log" | head -20
fi
if has knobs; then
    echo "== settings on hard 4K and 1080p (sweeps per phase, hybrid switch point)"
    for inst in grid:3840x2160:hard grid:1920x1080:hard; do
        timeout 120 "$G" --repeats 3 --solvers "$off,$off+GCUT_CUDAGENERAL_SWEEPS=16,$off+GCUT_CUDAGENERAL_SWEEPS=64,cuda-general+GCUT_CUDAGENERAL_HYBRID_ACTIVE=4096,cuda-general,cuda-general+GCUT_CUDAGENERAL_HYBRID_ACTIVE=600000,cuda-general+GCUT_CUDAGENERAL_HYBRID_ACTIVE=2000000+GCUT_CUDAGENERAL_HYBRID_NODES=9000000,cuda-general+GCUT_CUDAGENERAL_SWEEPS=16" \
            "$inst" || status=1
    done
    timeout 90 "$G" --repeats 3 --solvers "$off+GCUT_CUDAGENERAL_CYCLES=1,$off+GCUT_CUDAGENERAL_CYCLES=16,cuda-general+GCUT_CUDAGENERAL_SWEEPS=32,cuda-general+GCUT_CUDAGENERAL_SWEEPS=8,cuda-general+GCUT_CUDAGENERAL_SWEEPS=16+GCUT_CUDAGENERAL_HYBRID_ACTIVE=600000" \
        grid:3840x2160:hard || status=1
fi
if has dimacs; then
    echo "== DIMACS families: GPU only against hybrid (bk: docs/PERFORMANCE.md)"
    for inst in genrmf:32:32 genrmf:16:128 rlg:64:2048 rlg:2048:64 random:2000000:5000000; do
        timeout 40 "$G" --repeats 3 --max-ms 5000 \
            --solvers "$off,cuda-general,cuda-general+GCUT_BENCH_VERBOSE=1" "$inst" \
            2>>"$OUT/trace_dimacs.log" || { echo "$inst: exit $?"; status=1; }
    done
    grep -h "hybrid: bk\|hybrid: res" "$OUT/trace_dimacs.log" | head -20
fi
if has cube; then
    echo "== 256^3 hard"
    timeout 150 "$G" --repeats 3 --solvers "bk,$off,cuda-general" grid:256x256x256:hard ||
        status=1
fi
# Second run: the phase rule (GCUT_CUDAGENERAL_BALANCE; 0 = the first version's depth rule)
# and the hybrid, against bk and cuda-grid.
old=cuda-general+GCUT_CUDAGENERAL_BALANCE=0+GCUT_CUDAGENERAL_HYBRID=0
if has grids2; then
    echo "== grids: bk, cuda-grid, first version, balance rule alone, balance + hybrid"
    timeout 150 "$G" --repeats 3 --solvers "bk,cuda-grid,$old,$off,cuda-general" \
        grid:1920x1080:hard grid:1920x1080:easy grid:3840x2160:hard grid:256x256x256:hard ||
        status=1
fi
if has dimacs2; then
    echo "== DIMACS families and random graphs: first version, balance alone, balance + hybrid"
    timeout 60 "$G" --repeats 3 --max-ms 3000 --solvers "bk,$old,$off,cuda-general" \
        genrmf:32:32 genrmf:16:128 random:1000000:500000 random:2000000:5000000 || status=1
    timeout 60 "$G" --repeats 3 --solvers "$old,$off,cuda-general" rlg:64:2048 rlg:2048:64 ||
        status=1
fi
if has balance; then
    echo "== balance 25/50/200/400 percent (GPU only)"
    timeout 90 "$G" --repeats 3 --solvers "$off+GCUT_CUDAGENERAL_BALANCE=25,$off+GCUT_CUDAGENERAL_BALANCE=50,$off,$off+GCUT_CUDAGENERAL_BALANCE=200,$off+GCUT_CUDAGENERAL_BALANCE=400" \
        grid:3840x2160:hard genrmf:32:32 rlg:64:2048 rlg:2048:64 || status=1
    timeout 30 "$G" --repeats 1 --solvers "$off+GCUT_BENCH_VERBOSE=1,cuda-general+GCUT_BENCH_VERBOSE=1" \
        grid:3840x2160:hard genrmf:32:32 2>"$OUT/trace_balance.log" >/dev/null
fi
# Third run: the defaults chosen from the second (balance 50%, hybrid off) against bk and
# cuda-grid in one process, and the first version's rule on the DIMACS families.
if has confirm; then
    echo "== defaults: bk, cuda-grid, cuda-general, balance 100%"
    timeout 120 "$G" --repeats 3 --solvers \
        "bk,cuda-grid,cuda-general,cuda-general+GCUT_CUDAGENERAL_BALANCE=100" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard || status=1
    timeout 60 "$G" --repeats 3 --solvers \
        "cuda-general,cuda-general+GCUT_CUDAGENERAL_BALANCE=0,cuda-general+GCUT_CUDAGENERAL_HYBRID=1" \
        genrmf:32:32 rlg:64:2048 rlg:2048:64 random:1000000:500000 random:2000000:5000000 ||
        status=1
fi
# Fourth run: discharge rounds per vertex per sweep under the balanced phases.
if has cycles; then
    echo "== cycles 1, 2 against the default 4"
    timeout 90 "$G" --repeats 3 --solvers \
        "bk,cuda-general,cuda-general+GCUT_CUDAGENERAL_CYCLES=1,cuda-general+GCUT_CUDAGENERAL_CYCLES=2" \
        grid:3840x2160:hard grid:256x256x256:hard || status=1
    timeout 40 "$G" --repeats 3 --solvers \
        "cuda-general,cuda-general+GCUT_CUDAGENERAL_CYCLES=1,cuda-general+GCUT_CUDAGENERAL_CYCLES=2" \
        genrmf:32:32 rlg:64:2048 || status=1
fi
# The lead's run (2edd88b, docs/PERFORMANCE.md): one-block BFS levels up to 8192 frontier nodes against the default
# 1024.
if has bfs; then
    echo "== BFS one-block limit 8192 against the default 1024"
    timeout 90 "$G" --repeats 3 --solvers \
        "bk,cuda-general,cuda-general+GCUT_CUDAGENERAL_BFS_SMALL=8192" \
        grid:3840x2160:hard grid:256x256x256:hard grid:1920x1080:hard || status=1
    timeout 40 "$G" --repeats 3 --solvers "cuda-general,cuda-general+GCUT_CUDAGENERAL_BFS_SMALL=8192" \
        genrmf:32:32 rlg:64:2048 rlg:2048:64 random:2000000:5000000 || status=1
fi
exit $status
