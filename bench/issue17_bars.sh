#!/usr/bin/env bash
# issue17_bars.sh - every "done when" bar of issue #17 measured in one device call, on one
# build of this tree (docs/PERFORMANCE.md, "Bars from the issue"):
#   cold    hard 1920x1080 4-connected: cuda-grid against bk in the same gcut_bench process
#           (seed 1, 5 solves each, flows compared), COLD_RUNS processes; hard 8-connected and
#           3D figures beside it (seed 5, cuda-grid alone)
#   peibfs  cuda-grid against P-EIBFS (the review's `mfa_maxflow peibfs`, PEIBFS=PATH, 16
#           threads, 5 solves in one process) on hard 2048^2 4-conn, 1920x1080 8-conn and 192^3
#           6-conn (seed 5, the same grids as DIMACS through par_grid2dimacs), cuda-grid timed
#           before and after the peer, flows compared
#   context gpu_context --size 1920x1080 --repeats 7: upload + solve through a context against
#           bk's build + solve, warm re-solves after 1% terminal changes against the cold solve
#           of the new problem, CTX_RUNS processes
#   process one `gcut segment` process on a hard 1920x1080 photo, file to mask, fresh
#           processes in turn (bench/gpu_process.sh: auto, and the GPU route forced), masks
#           compared
#   batch   `gcut segment --batch` over BATCH hard 1920x1080 photos, cuda-grid --jobs 16 in one
#           process against bk on 16 processes at once, flows compared
#   tests   ctest -L cuda, then compute-sanitizer memcheck on the quick sets of the CUDA test
#           programs and racecheck on test_cuda_grid's and test_cuda_context's QUICK=2 sets
# Environment: BIN=build-bars (built here unless NOBUILD=1), STAGES="build cold peibfs context
# process batch tests", OUT (logs), PEIBFS (skipped without it), COLD_RUNS=2, CTX_RUNS=2,
# CTX_VARIANTS / CTX_ARGS / CTX_VERBOSE (the context stage's, below),
# BATCH=100, ROUTE_RUNS=10, ROUTE_VARIANTS (bench/gpu_process.sh's VARIANTS), SAN_TESTS and
# RACE_TESTS (the test programs for memcheck and racecheck; empty: none). libdeflate is used by the PNG reader where the loader finds it
# (LD_LIBRARY_PATH may name a folder holding libdeflate.so.0).
# Exit status: non-zero if a build, a test or a comparison failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build-bars}
STAGES=${STAGES:-build cold peibfs context process batch tests}
O=${OUT:-bench/out/bars}
mkdir -p "$O"
O=$(readlink -f "$O")
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
t0=$SECONDS
mark() { echo "== [$((SECONDS - t0)) s] $*"; }
mark "issue17_bars: $(nvidia-smi -L 2>/dev/null | head -1); $(grep -m1 'model name' /proc/cpuinfo |
    sed 's/.*: //'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC'); tree $(git rev-parse --short HEAD 2>/dev/null)"

if has build && [ -z "${NOBUILD:-}" ]; then
    mark "build ($BIN, Release, -Werror, sm_90)"
    { cmake -S . -B "$BIN" -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
        cmake --build "$BIN" -j"${JOBS:-16}"; } >"$O/build.log" 2>&1 ||
        { tail -40 "$O/build.log"; exit 1; }
    grep -ci 'warning' "$O/build.log" | sed 's/^/build warnings: /'
fi
G=$BIN/gcut

if has cold; then
    mark "cold: hard 1920x1080 4-conn, cuda-grid and bk (instance solver solve_ms flow sweeps relabels)"
    for r in $(seq 1 "${COLD_RUNS:-2}"); do
        timeout 300 "$BIN/gcut_bench" --sizes 1920x1080 --volumes none --levels hard --seed 1 \
            --solvers cuda-grid,bk --repeats 5 --no-markdown --csv - 2>>"$O/cold.err" |
            grep -v '^instance,' | awk -F, -v r="$r" '{print "cold run " r ":", $1, $6, $10, $11, $14, $15}'
        [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "gcut_bench failed or flows differ"; status=1; }
    done
    for spec in "--sizes 1920x1080 --volumes none --connectivity 8" "--sizes 2048x2048 --volumes none" \
        "--sizes none --volumes 192"; do
        # shellcheck disable=SC2086
        timeout 120 "$BIN/gcut_bench" $spec --levels hard --seed 5 --solvers cuda-grid --repeats 5 \
            --no-markdown --csv - 2>>"$O/cold.err" | grep -v '^instance,' |
            awk -F, '{print "seed 5:", $1, $6, $10, $11, $14, $15}'
    done
fi

if has peibfs; then
    if [ -z "${PEIBFS:-}" ] || [ ! -x "$PEIBFS" ]; then
        mark "peibfs: SKIPPED (PEIBFS=path/to/mfa_maxflow not given)"
    else
        mark "peibfs: cuda-grid (5 solves) / P-EIBFS 16 threads (5 solves) / cuda-grid"
        P=$(readlink -f "$PEIBFS")
        pw=$(mktemp -d)
        for spec in 2048x2048:4 1920x1080:8 192x192x192:6; do
            size=${spec%%:*} conn=${spec##*:}
            case $size in
            *x*x*) gargs="--sizes none --volumes ${size%%x*}" ;;
            *) gargs="--sizes $size --volumes none --connectivity $conn" ;;
            esac
            "$G" gen synth --size "$size" --seed 5 --level hard --connectivity "$conn" \
                --grid "$pw/g.grid" >/dev/null 2>&1 && "$BIN/par_grid2dimacs" "$pw/g.grid" "$pw/g.max" ||
                { echo "peibfs: instance $spec failed"; status=1; continue; }
            gpu_row() {
                # shellcheck disable=SC2086
                timeout 60 "$BIN/gcut_bench" $gargs --levels hard --seed 5 --solvers cuda-grid \
                    --repeats 5 --no-markdown --csv - 2>>"$O/cold.err" | grep -v '^instance,' |
                    awk -F, '{print "peibfs-bar cuda-grid", $1, "solve_ms", $10, "flow", $11}'
            }
            gpu_row
            (cd "$pw" && timeout 200 "$P" peibfs g.max --threads 16 --repeats 5 2>&1) |
                awk -v s="$size" -v c="$conn" '$1=="c" && $2=="run" { for (i = 3; i < NF; i++) {
                    if ($i=="solve_ms") v=v " " $(i+1); if ($i=="flow") f=$(i+1) } }
                    END { print "peibfs-bar P-EIBFS", s, "c" c, "solve_ms" v, "flow", f }'
            gpu_row
            rm -f "$pw/g.grid" "$pw/g.max"
        done
        rm -rf "$pw"
    fi
fi

if has context; then
    # CTX_VARIANTS: "name:ENV=V,ENV=V;..." run in turn in each of CTX_RUNS rounds (default: the
    # tree's defaults alone); CTX_ARGS: more gpu_context arguments (--steps: a line per step);
    # CTX_VERBOSE=1: then one --verbose process of each variant (the solver's phase times).
    IFS=";" read -ra cvars <<<"${CTX_VARIANTS:-default:}"
    for r in $(seq 1 "${CTX_RUNS:-2}"); do
        for v in "${cvars[@]}"; do
            name=${v%%:*} envs=${v#*:}
            mark "context run $r, $name ($envs): gpu_context --size 1920x1080 --repeats 7 ${CTX_ARGS:-}"
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout 300 "$BIN/gpu_context" --size 1920x1080 --repeats 7 \
                ${CTX_ARGS:-} 2>&1 || status=1
        done
    done
    if [ "${CTX_VERBOSE:-0}" = 1 ]; then
        for v in "${cvars[@]}"; do
            name=${v%%:*} envs=${v#*:}
            mark "context --verbose, $name ($envs)"
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout 120 "$BIN/gpu_context" --size 1920x1080 --repeats 1 --verbose \
                2>&1 | grep -E 'verbose|cuda-grid:' | grep -v 'active tiles$'
        done
    fi
fi

if has process; then
    mark "process: one gcut segment process, hard 1920x1080 (bench/gpu_process.sh)"
    BIN=$BIN STAGES=segment RUNS=${ROUTE_RUNS:-10} OUT=$O/process \
        VARIANTS="${ROUTE_VARIANTS:-auto:;gpu:GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=0}" bash bench/gpu_process.sh 2>&1 |
        grep -v '^  *t=' || status=1
fi

if has batch; then
    n=${BATCH:-100}
    mark "batch: $n hard 1920x1080 photos, cuda-grid --jobs 16 (one process) against bk on 16 processes"
    d=$(mktemp -d)
    for i in $(seq 1 "$n"); do
        "$G" gen synth --size 1920x1080 --level hard --seed "$i" -o "$d/img$i.png" \
            --seeds "$d/seeds$i.png" >/dev/null 2>&1 &
        [ $((i % 16)) -eq 0 ] && wait
    done
    wait
    for i in $(seq 1 "$n"); do echo "$d/img$i.png $d/seeds$i.png $d/mask$i.png"; done >"$d/list"
    split -n l/16 "$d/list" "$d/part."
    for rep in 1 2; do
        s=$(date +%s%N)
        for part in "$d"/part.*; do
            "$G" segment --batch "$part" --iterations 1 --solver bk >"$part.log" 2>&1 &
        done
        wait
        bk_ms=$((($(date +%s%N) - s) / 1000000))
        s=$(date +%s%N)
        "$G" segment --batch "$d/list" --iterations 1 --solver cuda-grid --jobs 16 >"$d/gpu.log" 2>&1 ||
            status=1
        gpu_ms=$((($(date +%s%N) - s) / 1000000))
        awk -v b="$bk_ms" -v g="$gpu_ms" -v n="$n" -v r="$rep" 'BEGIN { printf "batch rep %d: bk 16 processes %d ms (%.1f images/s), cuda-grid --jobs 16 %d ms (%.1f images/s), %.2fx\n", r, b, n * 1000 / b, g, n * 1000 / g, b / g }'
    done
    bad=0
    for i in $(seq 1 "$n"); do
        a=$(grep -h "img$i.png ->" "$d/gpu.log" | sed -E 's/.*flow ([0-9]+).*/\1/')
        b=$(cat "$d"/part.*.log | grep -h "img$i.png ->" | sed -E 's/.*flow ([0-9]+).*/\1/')
        [ -n "$a" ] && [ "$a" = "$b" ] || bad=$((bad + 1))
    done
    echo "batch flows: $((n - bad)) of $n equal between cuda-grid and bk"
    [ "$bad" -eq 0 ] || status=1
    rm -rf "$d"
fi

if has tests; then
    mark "tests: ctest -L cuda"
    timeout "${CTEST_TIMEOUT:-300}" ctest --test-dir "$BIN" -L cuda --output-on-failure >"$O/tests.log" 2>&1 || status=1
    grep -E 'tests passed|tests failed|Failed|Passed|\*\*\*' "$O/tests.log" | tail -12
    if command -v compute-sanitizer >/dev/null; then
        for t in ${SAN_TESTS-test_cuda_grid test_cuda_context test_cuda_band test_cuda_seg test_cuda_video test_cuda_general}; do
            q=1
            [ "$t" = test_cuda_general ] && q=2
            s=$SECONDS
            GCUT_TEST_QUICK=$q timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 \
                "$BIN/tests/$t" >"$O/san.tmp" 2>&1
            rc=$?
            echo "memcheck $t: rc $rc, $((SECONDS - s)) s: $(grep -E 'ERROR SUMMARY' "$O/san.tmp" | tail -1) | $(grep -vE '^=========' "$O/san.tmp" | tail -1)"
            [ $rc -eq 0 ] || { status=1; grep -m5 -E 'Invalid|Error' "$O/san.tmp"; }
        done
        for t in ${RACE_TESTS-test_cuda_grid test_cuda_context}; do
            s=$SECONDS
            GCUT_TEST_QUICK=2 timeout 400 compute-sanitizer --tool racecheck --error-exitcode 9 \
                "$BIN/tests/$t" >"$O/san.tmp" 2>&1
            rc=$?
            echo "racecheck $t: rc $rc, $((SECONDS - s)) s: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$O/san.tmp" | tail -1)"
            [ $rc -eq 0 ] || status=1
        done
        rm -f "$O/san.tmp"
    else
        echo "compute-sanitizer: not found, SKIPPED"
    fi
fi
mark "done, status $status"
exit $status
