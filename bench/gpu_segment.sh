#!/usr/bin/env bash
# gpu_segment.sh - `gcut segment` file to mask on a machine with an NVIDIA GPU (docs/CUDA-GRID.md,
# docs/PERFORMANCE.md "Segmentation, file to mask"): one process per picture with its phase
# times, the CUDA start-up thread and the session pool on and off (alternating runs), GrabCut
# rounds on cuda-grid against bk (masks and flows compared), and `--batch` throughput against
# bk on every core (one process per core), all on hard synthetic 1920x1080 photos.
#
# Environment (all optional):
#   STAGES="build test single grabcut batch context sanitize"   which parts to run
#   VARIANTS="before:GCUT_SEGMENT_PRESTART=0 GCUT_CUDAGRID_POOL=0 GCUT_SEG_MODEL_THREADS=1;now:"
#                 the single stage's variants, LABEL:ENV settings, ';' between (run in turn)
#   CONTEXT_ARGS="--size 1920x1080 --repeats 5"   the context stage: bench/gpu_context with the
#                 marked warm path's gather on the device and on the host, alternating
#   BUILD_DIR=build-dev  OUT=bench/out/gpu  DATA=/tmp/gcut-seg   folders
#   RUNS=5        single-process runs of each variant (alternating)
#   BATCH=48      photos in the batch stage  JOBS=16  batch threads / bk processes
#   SIZE=1920x1080  NO_TRUTH=1 (single stage: no --truth scoring, file to mask only)
# Exit status: non-zero if a stage fails (a mask or flow mismatch included).
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-build test single grabcut batch sanitize}
VARIANTS=${VARIANTS:-before:GCUT_SEGMENT_PRESTART=0 GCUT_CUDAGRID_POOL=0 GCUT_SEG_MODEL_THREADS=1;now:}
CONTEXT_ARGS=${CONTEXT_ARGS:---size 1920x1080 --repeats 5}
BUILD_DIR=${BUILD_DIR:-build-dev}
OUT=${OUT:-bench/out/gpu}
DATA=${DATA:-/tmp/gcut-seg}
RUNS=${RUNS:-5}
BATCH=${BATCH:-48}
JOBS=${JOBS:-16}
SIZE=${SIZE:-1920x1080}
mkdir -p "$OUT" "$DATA"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
G=$BUILD_DIR/gcut
ms_now() { echo $(($(date +%s%N) / 1000000)); }

if has build; then
    echo "== build"
    t0=$(ms_now)
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON -DGCUT_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
        cmake --build "$BUILD_DIR" -j"$(nproc)" --target gcut_cli gpu_context test_cuda_grid test_cuda_seg test_cuda_band \
            test_cuda_context >>"$OUT/build.log" 2>&1 ||
        {
            tail -30 "$OUT/build.log"
            exit 1
        }
    echo "built in $(($(ms_now) - t0)) ms"
fi
if has test; then
    echo "== ctest -L cuda"
    if (cd "$BUILD_DIR" && ctest -L cuda --output-on-failure --timeout 200) >"$OUT/test.log" 2>&1; then
        tail -4 "$OUT/test.log"
    else
        status=1
        grep -E "FAIL|failed|passed,|before the pooled|Test +#" "$OUT/test.log" | tail -30
    fi
fi

# The photos: hard synthetic pictures with their seeds and truth, made in parallel.
need=1
has batch && need=$BATCH
for i in $(seq 1 "$need"); do echo "$i"; done | xargs -P "$(nproc)" -I{} sh -c \
    "[ -f $DATA/img{}.png ] || $G gen synth --size $SIZE --level hard --seed {} -o $DATA/img{}.png \
     --seeds $DATA/seeds{}.png --truth $DATA/truth{}.png >/dev/null"

# One process, file to mask: wall time around the process and the phases it prints.
one() { # label, then gcut segment arguments
    local label=$1
    shift
    local t0 t1
    t0=$(ms_now)
    # NO_TRUTH=1: file to mask only (no --truth scoring after the total).
    local truth=(--truth "$DATA/truth1.png")
    [ -z "${NO_TRUTH:-}" ] || truth=()
    "$G" segment "$DATA/img1.png" --seeds "$DATA/seeds1.png" "${truth[@]}" "$@" \
        >"$OUT/one.txt" 2>&1
    local rc=$?
    t1=$(ms_now)
    [ $rc -eq 0 ] || {
        cat "$OUT/one.txt"
        status=1
    }
    printf '%-28s wall %5d ms | %s\n' "$label" $((t1 - t0)) "$(grep -E '^(image|model|build|solve|device|write|total|rounds|error|gcut_device_init)' "$OUT/one.txt" |
        sed -E 's/  +/ /g; s/ \(read/(read/' | tr '\n' '|' | cut -c1-400)"
    cat "$OUT/one.txt" >>"$OUT/single.log"
}
if has single; then
    echo "== process start and exit alone: gcut --version, 3 runs"
    for r in 1 2 3; do
        t0=$(ms_now)
        "$G" --version >/dev/null
        echo "gcut --version wall $(($(ms_now) - t0)) ms"
    done
    echo "== one process per picture, --iterations 1 (one cut), variants in turn: $VARIANTS"
    IFS=';' read -ra variants <<<"$VARIANTS"
    for r in $(seq 1 "$RUNS"); do
        for v in "${variants[@]}"; do
            # shellcheck disable=SC2086
            env ${v#*:} bash -c "$(declare -f one ms_now); G=$G DATA=$DATA OUT=$OUT status=0; one '${v%%:*} auto it1 run $r' -o $DATA/v-${v%%:*}.png --iterations 1"
        done
        first=${variants[0]%%:*}
        for v in "${variants[@]}"; do
            cmp -s "$DATA/v-$first.png" "$DATA/v-${v%%:*}.png" || {
                echo "MISMATCH: masks of $first and ${v%%:*} differ"
                status=1
            }
        done
    done
    if [ -z "${SKIP_BK_SINGLE:-}" ]; then
        one "bk it1" -o "$DATA/k.png" --iterations 1 --solver bk
        cmp -s "$DATA/k.png" "$DATA/v-$first.png" && echo "masks equal: cuda-grid and bk, one cut" ||
            echo "masks differ: cuda-grid and bk, one cut (compare flows above)"
    fi
fi
if has grabcut; then
    echo "== GrabCut rounds (the default 5 with seeds; a box), cuda-grid against bk"
    for variant in "seeds:" "box:--rect 240,100,1440,880"; do
        name=${variant%%:*}
        args=${variant#*:}
        for r in 1 2; do
            # shellcheck disable=SC2086
            GCUT_SEGMENT_PRESTART=0 GCUT_CUDAGRID_POOL=0 GCUT_SEG_MODEL_THREADS=1 one "A grabcut $name run $r" -o "$DATA/ga.png" $args --solver cuda-grid --verbose
            # shellcheck disable=SC2086
            one "B grabcut $name run $r" -o "$DATA/gb.png" $args --solver cuda-grid --verbose
        done
        grep -E '^round' "$OUT/one.txt" >"$OUT/rounds-gpu.txt"
        # shellcheck disable=SC2086
        one "bk grabcut $name" -o "$DATA/gk.png" $args --solver bk --verbose
        grep -E '^round' "$OUT/one.txt" >"$OUT/rounds-bk.txt"
        if cmp -s "$DATA/gb.png" "$DATA/gk.png" && cmp -s "$OUT/rounds-gpu.txt" "$OUT/rounds-bk.txt"; then
            echo "grabcut $name: masks and every round's energy equal, cuda-grid and bk"
        else
            echo "grabcut $name: DIFFER between cuda-grid and bk"
            paste "$OUT/rounds-gpu.txt" "$OUT/rounds-bk.txt"
            status=1
        fi
    done
fi
if has batch; then
    echo "== --batch over $BATCH photos: cuda-grid --jobs $JOBS (one process) against bk on $JOBS processes"
    list=$DATA/list.txt
    : >"$list"
    for i in $(seq 1 "$BATCH"); do
        echo "$DATA/img$i.png $DATA/seeds$i.png $DATA/out-$i.png" >>"$list"
    done
    sed "s/out-/bk-/" "$list" >"$DATA/list-bk.txt"
    rm -f "$DATA"/part-*
    split -n l/"$JOBS" "$DATA/list-bk.txt" "$DATA/part-"
    for rep in 1 2; do
        t0=$(ms_now)
        for part in "$DATA"/part-*; do
            "$G" segment --batch "$part" --iterations 1 --solver bk >"$part.log" 2>&1 &
        done
        wait
        t1=$(ms_now)
        GCUT_SEGMENT_PRESTART=0 GCUT_CUDAGRID_POOL=0 GCUT_SEG_MODEL_THREADS=1 "$G" segment --batch "$list" --iterations 1 \
            --solver cuda-grid --jobs "$JOBS" >"$OUT/batch-a.log" 2>&1 || status=1
        t2=$(ms_now)
        "$G" segment --batch "$list" --iterations 1 --solver cuda-grid --jobs "$JOBS" \
            >"$OUT/batch-b.log" 2>&1 || status=1
        t3=$(ms_now)
        bk=$((t1 - t0)) a=$((t2 - t1)) b=$((t3 - t2))
        awk -v r="$rep" -v n="$BATCH" -v j="$JOBS" -v k="$bk" -v a="$a" -v b="$b" 'BEGIN {
            printf "rep %d: bk %d processes %d ms (%.1f images/s); cuda-grid A (before) %d ms (%.1f/s); B %d ms (%.1f/s); B/bk %.2fx, A/bk %.2fx\n",
                r, j, k, n * 1000 / k, a, n * 1000 / a, b, n * 1000 / b, k / b, k / a }'
    done
    tail -1 "$OUT/batch-b.log"
    bad=0
    for i in $(seq 1 "$BATCH"); do
        fb=$(grep -h "img$i.png ->" "$DATA"/part-*.log | sed -E 's/.*flow ([0-9]+).*/\1/')
        fg=$(grep -h "img$i.png ->" "$OUT/batch-b.log" | sed -E 's/.*flow ([0-9]+).*/\1/')
        [ -n "$fb" ] && [ "$fb" = "$fg" ] || bad=$((bad + 1))
    done
    echo "batch flows: $((BATCH - bad)) of $BATCH equal between cuda-grid and bk"
    [ $bad -eq 0 ] || status=1
fi
if has context; then
    echo "== gpu_context $CONTEXT_ARGS, marked warm path gathering on the device (1) / host (0)"
    for rep in 1 2; do
        for g in 1 0; do
            echo "-- GCUT_CUDAGRID_GATHER=$g, repetition $rep"
            # shellcheck disable=SC2086
            GCUT_CUDAGRID_GATHER=$g timeout 120 "$BUILD_DIR/gpu_context" $CONTEXT_ARGS >"$OUT/ctx.txt" 2>&1 ||
                {
                    echo "gpu_context exit $?"
                    status=1
                }
            cat "$OUT/ctx.txt" >>"$OUT/context.log"
            grep -vE '^\|---' "$OUT/ctx.txt" | tail -3
        done
    done
fi
if has sanitize; then
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
        for t in ${SANITIZE_TESTS:-test_cuda_seg}; do
            echo "== compute-sanitizer --tool $tool $t (GCUT_TEST_QUICK=1)"
            GCUT_TEST_QUICK=1 timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$BUILD_DIR/tests/$t" >"$OUT/sanitize.tmp" 2>&1
            echo "exit $?"
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed," "$OUT/sanitize.tmp" | tail -3
            cat "$OUT/sanitize.tmp" >>"$OUT/sanitize.log"
        done
    done
    rm -f "$OUT/sanitize.tmp"
fi
exit $status
