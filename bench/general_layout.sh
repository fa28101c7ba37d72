#!/usr/bin/env bash
# general_layout.sh - the device run behind cuda-general's fourth pass (docs/CUDA-GENERAL.md,
# "Fourth pass: the padded layout"; docs/PERFORMANCE.md): the padded (slot-major) layout against
# the CSR in the same process, bk and cuda-grid alongside, flows checked equal and first cuts
# certified by bench/general_bench; the quick tests, compute-sanitizer memcheck and racecheck
# (the cooperative grid kernels included).
#
# Environment: BIN (folder with general_bench and test_cuda_general, else built here into
# build-general with every core), OUT (logs; default bench/out/general), REPEATS (default 5),
# STAGES (any of "quick memcheck racecheck grids dimacs hub trace ab" (run 1) and "orders
# dimacs2 hub2 raceprobe" (run 2: the sorted build's arc orders), "confirm" (run 3: the final
# defaults, auto beside both layouts); default run 1 but ab), OLD
# (stage ab: a general_bench built from the commit before this pass, run in turn with this one,
# A B A B, on the CSR path: did templating the kernels on the layout cost the CSR anything?).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out/general}
STAGES=${STAGES:-quick memcheck racecheck grids dimacs hub trace}
REPEATS=${REPEATS:-5}
mkdir -p "$OUT"
has() { [[ " $STAGES " == *" $1 "* ]]; }
B=${BIN:-}
if [ -n "$B" ]; then
    "$B/general_bench" --help >/dev/null 2>&1
    [ $? -eq 2 ] || { echo "prebuilt binaries do not run here; building"; B=""; }
fi
if [ -z "$B" ]; then
    echo "== build"
    cmake -S . -B build-general -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON -DGCUT_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
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
csr=cuda-general+GCUT_CUDAGENERAL_LAYOUT=csr
pad=cuda-general+GCUT_CUDAGENERAL_LAYOUT=padded
sorted=cuda-general+GCUT_CUDAGENERAL_LAYOUT=csr+GCUT_CUDAGENERAL_SORTED=1
step() { # NAME TIMEOUT COMMAND... : run, log to $OUT/NAME.log, print its tail and time
    local name=$1 limit=$2
    shift 2
    echo "== $name"
    local s
    s=$(date +%s)
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local rc=$?
    tail -3 "$OUT/$name.log"
    echo "exit $rc, $(($(date +%s) - s)) s"
    [ $rc -eq 0 ] || status=1
}
has quick && step test_quick "${QUICK_TIMEOUT:-120}" env GCUT_TEST_QUICK=1 "$T"
if has grids; then
    echo "== grids as graphs: bk, CSR, padded, CSR in edge order, cuda-grid (one process)"
    timeout "${GRIDS_TIMEOUT:-200}" "$G" --repeats "$REPEATS" --solvers \
        "bk,$csr,$pad,$sorted,cuda-grid" grid:3840x2160:hard grid:256x256x256:hard \
        grid:1920x1080:hard grid:1920x1080:easy 2>&1 | tee "$OUT/grids.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if has dimacs; then
    echo "== DIMACS families and random graphs: CSR against padded (bk: earlier passes)"
    timeout "${DIMACS_TIMEOUT:-150}" "$G" --repeats 3 --solvers "$csr,$pad" \
        genrmf:32:32 genrmf:64:64 rlg:64:2048 rlg:2048:64 random:1000000:500000 \
        random:2000000:5000000 random:10000000:50000000 2>&1 | tee "$OUT/dimacs.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if has hub; then
    echo "== hubs: auto, padded asked (a hub of 10^5 arcs must stay on the CSR), bk"
    timeout "${HUB_TIMEOUT:-100}" "$G" --repeats 3 --solvers "bk,cuda-general,$pad" \
        hub:1000000:2000000:100000 hub:1000000:2000000:28 2>&1 | tee "$OUT/hub.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if has trace; then
    echo "== traces of hard 4K and 256^3, both layouts (stderr in $OUT/trace.log)"
    timeout 60 "$G" --repeats 1 --solvers \
        "$csr+GCUT_BENCH_VERBOSE=1,$pad+GCUT_BENCH_VERBOSE=1" grid:3840x2160:hard \
        grid:256x256x256:hard >"$OUT/trace.md" 2>"$OUT/trace.log" || status=1
    grep -c "sweeps" "$OUT/trace.log"
fi
if has ab && [ -n "${OLD:-}" ]; then
    echo "== CSR before (OLD) and after this pass, processes in turn A B A B (solve ms)"
    for i in 1 2; do
        for side in old new; do
            if [ $side = old ]; then bin=$OLD; solver=cuda-general; else bin=$G; solver=$csr; fi
            timeout 60 "$bin" --repeats 3 --solvers "$solver" grid:3840x2160:hard \
                grid:256x256x256:hard genrmf:32:32 rlg:2048:64 2>&1 | tee "$OUT/ab_${side}_$i.md" |
                grep '^| [gr]' | awk -F'|' -v s=$side '{print s, $2, $7}'
        done
    done
fi
p1=$pad+GCUT_CUDAGENERAL_ORDER=1
p2=$pad+GCUT_CUDAGENERAL_ORDER=2
if has orders; then
    echo "== grids: bk, CSR, padded in edge order / own edges first / hashed order, cuda-grid"
    timeout "${GRIDS_TIMEOUT:-200}" "$G" --repeats "$REPEATS" --solvers \
        "bk,$csr,$pad+GCUT_CUDAGENERAL_ORDER=0,$p1,$p2,cuda-grid" grid:3840x2160:hard \
        grid:256x256x256:hard grid:1920x1080:hard 2>&1 | tee "$OUT/orders.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if has dimacs2; then
    echo "== DIMACS families and random graphs: CSR, padded own edges first, padded hashed"
    timeout "${DIMACS_TIMEOUT:-150}" "$G" --repeats 3 --solvers "$csr,$p1,$p2" genrmf:32:32 \
        rlg:2048:64 random:1000000:500000 2>&1 | tee "$OUT/dimacs2.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if has hub2; then
    echo "== hubs (no bk: minutes on these): auto, padded asked"
    timeout "${HUB_TIMEOUT:-100}" "$G" --repeats 3 --solvers "cuda-general,$pad" \
        hub:1000000:2000000:100000 hub:1000000:2000000:28 2>&1 | tee "$OUT/hub2.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
if has raceprobe; then
    # racecheck on one small solve: the grid kernels (cooperative), then the launch-per-step
    # kernels, to tell a racecheck that cannot run cooperative launches from a slow one.
    for persist in 1 0; do
        step "raceprobe_persist$persist" "${PROBE_TIMEOUT:-20}" env GCUT_CUDAGENERAL_PERSIST=$persist \
            compute-sanitizer --tool racecheck --error-exitcode 9 "$G" --repeats 1 \
            --solvers cuda-general random:2000:8000
    done
fi
if has confirm; then
    echo "== final defaults: bk, auto, CSR, padded, CSR sorted (hashed order), cuda-grid"
    timeout "${GRIDS_TIMEOUT:-200}" "$G" --repeats "$REPEATS" --solvers \
        "bk,cuda-general,$csr,$pad,$sorted,cuda-grid" grid:3840x2160:hard grid:256x256x256:hard \
        grid:1920x1080:hard grid:1920x1080:easy 2>&1 | tee "$OUT/confirm.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    timeout "${DIMACS_TIMEOUT:-150}" "$G" --repeats 3 --solvers \
        "cuda-general,$csr,$pad,$sorted" genrmf:32:32 genrmf:64:64 rlg:64:2048 rlg:2048:64 \
        random:2000000:5000000 2>&1 | tee "$OUT/confirm_dimacs.md"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
has memcheck && step memcheck "${MEMCHECK_TIMEOUT:-150}" env GCUT_TEST_QUICK=2 \
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T"
# racecheck on the default path: the cooperative grid kernels (earlier passes ran it on
# GCUT_CUDAGENERAL_PERSIST=0 only).
has racecheck && step racecheck "${RACECHECK_TIMEOUT:-120}" env GCUT_TEST_QUICK=2 \
    compute-sanitizer --tool racecheck --error-exitcode 9 "$T"
exit $status
