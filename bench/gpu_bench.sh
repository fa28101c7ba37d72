#!/usr/bin/env bash
# gpu_bench.sh - the GPU run behind docs/CUDA-GRID.md, for a machine with an NVIDIA GPU: builds
# gcut with CUDA, runs the cuda tests (optionally under compute-sanitizer), measures the
# device's copy bandwidth, and times cuda-grid against cpu-pr and bk with bench/gcut_bench.
#
# Environment (all optional):
#   STAGES="build test bw bench"   any of: build test sanitize bw profile tune construct bench
#                                  context (bench/gpu_context: contexts, warm re-solves)
#   CONTEXT_CASES="--size 1920x1080"   one gpu_context run per ';'-separated argument list
#   CONSTRUCT_SIZES="1920x1080:hard 256x256x256:hard"   the construct stage's instances
#   BUILD_DIR=build-dev            CMake build folder
#   OUT=bench/out/gpu              where logs go
#   SIZES=320x240,640x480,1280x720,1920x1080,2560x1440,3840x2160   2D synthetic sizes
#   VOLUMES=128,256,512            3D volumes
#   SOLVERS=cuda-grid,cpu-pr,bk    solvers, in one run (flows are compared)
#   REPEATS=5  THREADS=16          gcut_bench settings
#   CONNECTIVITY=                  gcut_bench --connectivity (e.g. 8,26); empty = 4 and 6
#   BENCH_NAME=bench  BENCH_CSV=$OUT/bench.csv   where the bench stage writes its log and CSV
#   TUNE_SIZES=1920x1080  TUNE_VOLUMES=none   the tune stage's instances, and its settings:
#   TUNE_VARIANTS="GCUT_CUDAGRID_COOP=0 GCUT_CUDAGRID_COOP=1" (env settings, ',' between two),
#   or else the grid TUNE_K="2 4 8" x TUNE_R="16 32 64" (sweeps per relabel x rounds per visit)
#   SANITIZE_GRID_ONLY=1           sanitize test_cuda_grid only
#   ab stage: gcut_bench under each variant of AB_VARIANTS ("name:ENV=V,ENV=V;name:..."; default
#   passes / default), the variants alternating for AB_REPS rounds on AB_SIZES
#   (default 1920x1080), AB_VOLUMES (none), AB_CONN, hard instances, AB_SOLVERS (cuda-grid,bk,
#   flows compared), AB_REPEATS solves each (5), AB_SEED; prints round, variant, instance,
#   solver, solve ms, flow, sweeps, relabels
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
        >"$OUT/build.log" 2>&1 && cmake --build "$BUILD_DIR" -j"$(nproc)" --target gcut_bench gpu_context test_cuda_grid test_cuda_seg test_cuda_context >>"$OUT/build.log" 2>&1 ||
        { tail -30 "$OUT/build.log"; exit 1; }
fi
if has test; then
    echo "== ctest -L cuda"
    (cd "$BUILD_DIR" && ctest -L cuda --output-on-failure --timeout 240) 2>&1 | tee "$OUT/test.log" | tail -15 ||
        status=1
    # The same cases through the other global-relabel path and with the least local work per
    # sweep (one round, one sweep per relabel): both must stay exact.
    for variant in "GCUT_CUDAGRID_COOP=1" "GCUT_CUDAGRID_ROUNDS=1 GCUT_CUDAGRID_SWEEPS=1"; do
        echo "== test_cuda_grid with $variant"
        env $variant timeout 240 "$BUILD_DIR/tests/test_cuda_grid" >>"$OUT/test.log" 2>&1
        rc=$?
        echo "exit $rc"
        [ $rc -eq 0 ] || status=1
    done
    tail -1 "$OUT/test.log"
fi
if has sanitize; then
    for tool in memcheck racecheck; do
        echo "== compute-sanitizer --tool $tool test_cuda_grid"
        GCUT_TEST_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 9 \
            "$BUILD_DIR/tests/test_cuda_grid" >"$OUT/sanitize.tmp" 2>&1
        rc=$?
        if [ -z "${SANITIZE_GRID_ONLY:-}" ]; then
            for t in test_cuda_seg test_cuda_context; do
                GCUT_TEST_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                    "$BUILD_DIR/tests/$t" >>"$OUT/sanitize.tmp" 2>&1 || rc=$?
            done
        fi
        echo "exit $rc"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed," "$OUT/sanitize.tmp" | tail -4
        cat "$OUT/sanitize.tmp" >>"$OUT/sanitize.log" && rm -f "$OUT/sanitize.tmp"
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
if has profile; then
    echo "== profile: cuda-grid --verbose on $TUNE_SIZES and volumes ${PROFILE_VOLUMES:-128}"
    timeout 120 "$BUILD_DIR/gcut_bench" --sizes "$TUNE_SIZES" --volumes "${PROFILE_VOLUMES:-128}" \
        --solvers cuda-grid --repeats 2 --verbose --no-markdown --csv /dev/null 2>&1 |
        grep -E "building|flow" | tee "$OUT/profile.log"
fi
if has tune; then
    echo "== tune: cuda-grid under each setting (csv: ... solve_ms, flow, ..., sweeps, relabels)"
    variants=${TUNE_VARIANTS:-}
    if [ -z "$variants" ]; then
        for k in $TUNE_K; do
            for r in $TUNE_R; do
                variants="$variants GCUT_CUDAGRID_SWEEPS=$k,GCUT_CUDAGRID_ROUNDS=$r"
            done
        done
    fi
    for variant in $variants; do
        line=$(env ${variant//,/ } timeout 120 "$BUILD_DIR/gcut_bench" --sizes "$TUNE_SIZES" \
            --volumes "${TUNE_VOLUMES:-none}" --solvers cuda-grid --repeats 3 --no-markdown \
            --csv - 2>/dev/null | grep cuda-grid | tr '\n' ' ')
        echo "$variant $line"
    done | tee "$OUT/tune.log"
fi
if has ab; then
    echo "== ab: round variant instance solver solve_ms flow sweeps relabels"
    IFS=";" read -ra abv <<<"${AB_VARIANTS:-passes:GCUT_CUDAGRID_RELAX=0;default:}"
    for rep in $(seq 1 "${AB_REPS:-2}"); do
        for v in "${abv[@]}"; do
            name=${v%%:*}
            envs=${v#*:}
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout 200 "$BUILD_DIR/gcut_bench" --sizes "${AB_SIZES:-1920x1080}" \
                --volumes "${AB_VOLUMES:-none}" --levels hard --solvers "${AB_SOLVERS:-cuda-grid,bk}" \
                --repeats "${AB_REPEATS:-5}" --threads "$THREADS" --seed "${AB_SEED:-1}" \
                ${AB_CONN:+--connectivity "$AB_CONN"} --no-markdown --csv - 2>>"$OUT/ab.err" |
                grep -v '^instance,' | awk -F, -v n="$name" -v r="$rep" '{print r, n, $1, $6, $10, $11, $14, $15}'
            rc=${PIPESTATUS[0]}
            [ "$rc" -eq 0 ] || { echo "gcut_bench exit $rc ($name)"; status=1; }
        done
    done | tee -a "$OUT/ab.log"
fi
if has construct; then
    echo "== construction: host-built + upload vs built on the GPU from the image"
    scratch=$(mktemp -d)
    cat >"$scratch/gpu_construct.c" <<'EOF'
/* gpu_construct.c - written by bench/gpu_bench.sh: times the synthetic benchmark's energy built
 * on the host (gcut__seg_fill_grid) then uploaded, against built on the GPU from the image
 * (gcut__cudagrid_solve_image), and checks both solves give the same flow. */
#include "internal.h"
#include "../seg/seg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv) {
    enum { R = 5 };
    int bad = 0;
    printf("| instance | host construct ms | upload+init ms | solve ms | GPU construct kernel ms "
           "| GPU build ms (upload image+tables, construct, init) | solve ms | flows |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (int a = 1; a < argc; a++) {
        long long w = 0, h = 0, d = 1;
        char level_name[8] = "hard";
        if (sscanf(argv[a], "%lldx%lldx%lld:%7s", &w, &h, &d, level_name) < 3 &&
            sscanf(argv[a], "%lldx%lld:%7s", &w, &h, level_name) < 2) {
            fprintf(stderr, "bad size %s\n", argv[a]);
            return 64;
        }
        if (strchr(argv[a], ':') == NULL)
            strcpy(level_name, "hard");
        gcut_synth_level level = strcmp(level_name, "easy") == 0 ? GCUT_SYNTH_EASY
                                                                  : GCUT_SYNTH_HARD;
        int three_d = d > 1, conn = three_d ? 6 : 4;
        const gcut__seg_tables *tables;
        if (gcut__synth_tables(level, conn, &tables) != GCUT_OK) {
            fprintf(stderr, "%s\n", gcut_last_error());
            return 1;
        }
        long long n = w * h * d;
        uint8_t *pixels = malloc((size_t)(n * tables->channels)), *seeds = malloc((size_t)n);
        uint8_t *labels = malloc((size_t)n);
        gcut__synth_pixels(w, h, d, 1, level, pixels, NULL);
        gcut_synth_seeds(w, h, d, seeds);
        int64_t shape[3] = {d, h, w};
        const int64_t *sh = three_d ? shape : shape + 1;
        double host_c[R], host_b[R], host_s[R], dev_k[R], dev_b[R], dev_s[R];
        int64_t host_flow = -1, dev_flow = -1;
        gcut_options options;
        gcut_options_init(&options);
        options.solver = "cuda-grid";
        for (int r = 0; r < R; r++) {
            gcut_grid *grid = NULL;
            double t0 = gcut__now_ms();
            gcut_grid_create(three_d ? 3 : 2, sh, conn, &grid);
            gcut__seg_fill_grid(pixels, seeds, tables, grid);
            host_c[r] = gcut__now_ms() - t0;
            gcut_stats st;
            if (gcut_grid_solve(grid, &options, &host_flow, NULL, &st) != GCUT_OK) {
                fprintf(stderr, "%s\n", gcut_last_error());
                return 1;
            }
            host_b[r] = st.build_ms;
            host_s[r] = st.solve_ms;
            gcut_grid_free(grid);
            double k = 0;
            if (gcut__cudagrid_solve_image(pixels, seeds, tables, three_d ? 3 : 2, sh, conn,
                                           &options, &dev_flow, labels, &st, &k,
                                           NULL) != GCUT_OK) {
                fprintf(stderr, "%s\n", gcut_last_error());
                return 1;
            }
            dev_k[r] = k;
            dev_b[r] = st.build_ms;
            dev_s[r] = st.solve_ms;
        }
        bad += host_flow != dev_flow;
        printf("| %s-%s | %.2f | %.2f | %.2f | %.3f | %.2f | %.2f | %s |\n", level_name,
               argv[a], median(host_c, R), median(host_b, R), median(host_s, R),
               median(dev_k, R), median(dev_b, R), median(dev_s, R),
               host_flow == dev_flow ? "equal" : "MISMATCH");
        free(pixels);
        free(seeds);
        free(labels);
    }
    return bad ? 2 : 0;
}
EOF
    gcc -O2 -std=c11 -DGCUT_HAVE_CUDA=1 -Iinclude -Isrc/core -c "$scratch/gpu_construct.c" \
        -o "$scratch/gpu_construct.o" &&
        (cd "$BUILD_DIR" && eval g++ "$scratch/gpu_construct.o" -o "$scratch/gpu_construct" \
            "$(cat CMakeFiles/gcut_bench.dir/linkLibs.rsp)" \
            -L/usr/local/cuda/targets/x86_64-linux/lib/stubs \
            -L/usr/local/cuda/targets/x86_64-linux/lib) &&
        timeout 300 "$scratch/gpu_construct" ${CONSTRUCT_SIZES:-1920x1080:easy 1920x1080:hard 3840x2160:hard 256x256x256:hard} |
        tee "$OUT/construct.md" || status=1
fi
if has context; then
    IFS=';' read -ra cases <<<"${CONTEXT_CASES:---size 1920x1080}"
    for c in "${cases[@]}"; do
        echo "== gpu_context $c"
        # shellcheck disable=SC2086
        timeout 300 "$BUILD_DIR/gpu_context" $c 2>&1 | tee -a "$OUT/context.md"
        rc=${PIPESTATUS[0]}
        [ "$rc" -eq 0 ] || { echo "gpu_context exit $rc"; status=1; }
    done
fi
if has bench; then
    echo "== gcut_bench"
    timeout "${BENCH_TIMEOUT:-400}" "$BUILD_DIR/gcut_bench" --sizes "$SIZES" --volumes "$VOLUMES" --solvers "$SOLVERS" \
        --repeats "$REPEATS" --threads "$THREADS" ${CONNECTIVITY:+--connectivity "$CONNECTIVITY"} --csv "${BENCH_CSV:-$OUT/bench.csv}" \
        2>&1 | tee "$OUT/${BENCH_NAME:-bench}.log" | grep -v "^gcut_bench: .*: \(building\|.* x[0-9]*\)$"
    rc=${PIPESTATUS[0]}
    echo "gcut_bench exit $rc"
    [ "$rc" -eq 0 ] || status=1
fi
exit $status
