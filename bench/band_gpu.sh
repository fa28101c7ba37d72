#!/usr/bin/env bash
# band_gpu.sh - the multilevel narrow-banded run for a machine with an NVIDIA GPU (docs/BAND.md,
# figures in docs/PERFORMANCE.md). Stages (each bounded by `timeout`, logs under $OUT):
#   build    gcut with CUDA (Release, CMAKE_CUDA_ARCHITECTURES=$ARCH), the band targets only
#   test     test_band and test_cuda_band (label cuda: the device pipeline against the host
#            pipelines; cuda-grid coarsest with cuda-general or bk bands)
#   images   bench/band_bench.c on $IMAGES: full cuda-grid, banded GPU (the device pipeline;
#            bands on bk and on cuda-general), banded CPU (all threads and one), full bk (first
#            $BK_RUNS rounds), in one process after a warm-up, alternating; pixels differing,
#            energy gap, levels ($VARIANTS: a subset, band_bench's --variants)
#   volumes  the same on $VOLUMES (full bk $VOL_BK_RUNS rounds)
#   large    for each side in $LARGE: bench/band_volgen.c writes an easy volume and its seeds as
#            raw files into $WORK, then `gcut segment --raw` banded with the coarsest level on
#            cuda-grid and the bands on $LARGE_BAND_SOLVER, under /usr/bin/time -v (peak resident
#            memory) with nvidia-smi sampling the device memory every 100 ms (peak); with
#            $LARGE_FULL, also the full cuda-grid solve of the same file (where it fits)
# Environment (all optional): STAGES, BUILD_DIR (build-band), OUT (bench/out/band), ARCH (90),
#   RUNS (3), BK_RUNS (3), IMAGES, VOLUMES, VOL_BK_RUNS (1), LARGE ("1024 1536"),
#   LARGE_FULL ("1024"), LARGE_BAND_SOLVER (auto), WORK (/tmp/gcut-band), STAGE_LIMIT (200 s),
#   FULL_LIMIT (90 s: the large full solve), BIG_IMAGES (7680x4320 easy and hard, no full bk),
#   VARIANTS (all)
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-build test images volumes large}
BUILD_DIR=${BUILD_DIR:-build-band}
OUT=${OUT:-bench/out/band}
ARCH=${ARCH:-90}
RUNS=${RUNS:-3}
BK_RUNS=${BK_RUNS:-3}
IMAGES=${IMAGES:-1920x1080:easy 1920x1080:hard 3840x2160:easy 3840x2160:hard}
BIG_IMAGES=${BIG_IMAGES-7680x4320:easy 7680x4320:hard}
VOLUMES=${VOLUMES:-256x256x256:easy 256x256x256:hard 512x512x512:easy 512x512x512:hard}
VOL_BK_RUNS=${VOL_BK_RUNS:-1}
LARGE=${LARGE:-1024 1536}
LARGE_FULL=${LARGE_FULL:-1024}
LARGE_BAND_SOLVER=${LARGE_BAND_SOLVER:-auto}
WORK=${WORK:-/tmp/gcut-band}
STAGE_LIMIT=${STAGE_LIMIT:-200}
VARIANTS=${VARIANTS:-}
vargs=()
[ -n "$VARIANTS" ] && vargs=(--variants "$VARIANTS")
mkdir -p "$OUT" "$WORK"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
gcut=$BUILD_DIR/gcut
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/Mem:/{print $2}') GB"
    git log -1 --format='commit %H %s' 2>/dev/null || true
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

if has build; then
    echo "== build $(date +%T)"
    t0=$(date +%s)
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >"$OUT/build.log" 2>&1 &&
        cmake --build "$BUILD_DIR" -j "$(nproc)" --target gcut_cli band_bench band_volgen \
            test_band test_cuda_band >>"$OUT/build.log" 2>&1 || {
        tail -20 "$OUT/build.log"
        echo "build failed"
        exit 1
    }
    echo "built in $(($(date +%s) - t0)) s"
fi
if has test; then
    echo "== test $(date +%T)"
    (cd "$BUILD_DIR" && timeout "$STAGE_LIMIT" ctest -R '^(test_band|test_cuda_band)$' \
        --output-on-failure -V) >"$OUT/test.log" 2>&1 || status=1
    grep -E "provable|first band|device |passed|failed|skipped|Test +#" "$OUT/test.log" | tail -24
fi
if has images; then
    echo "== images $(date +%T)"
    # shellcheck disable=SC2086
    timeout "$STAGE_LIMIT" "$BUILD_DIR/band_bench" "${vargs[@]}" --runs "$RUNS" --bk-runs "$BK_RUNS" $IMAGES |
        tee "$OUT/images.md" || status=1
    if [ -n "$BIG_IMAGES" ]; then # no full bk here: minutes per run (the CPU table has it)
        # shellcheck disable=SC2086
        timeout "$STAGE_LIMIT" "$BUILD_DIR/band_bench" "${vargs[@]}" --runs "$RUNS" --bk-runs 0 $BIG_IMAGES |
            tee -a "$OUT/images.md" || status=1
    fi
fi
if has volumes; then
    echo "== volumes $(date +%T)"
    for v in $VOLUMES; do
        timeout "$STAGE_LIMIT" "$BUILD_DIR/band_bench" "${vargs[@]}" --runs "$RUNS" --bk-runs "$VOL_BK_RUNS" "$v" |
            tee -a "$OUT/volumes.md" || status=1
    done
fi
if has large; then
    for s in $LARGE; do
        echo "== large ${s}^3 $(date +%T)"
        img=$WORK/vol-$s.raw seeds=$WORK/seeds-$s.raw
        /usr/bin/time -f 'volgen %e s wall' "$BUILD_DIR/band_volgen" "$s" "$img" "$seeds" easy 2>&1 |
            tee -a "$OUT/large.txt"
        for mode in banded full; do
            if [ "$mode" = full ] && [[ " $LARGE_FULL " != *" $s "* ]]; then continue; fi
            args=(--solver cuda-grid)
            [ "$mode" = banded ] && args+=(--levels auto --band-solver "$LARGE_BAND_SOLVER")
            nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 \
                >"$WORK/gpumem.txt" 2>/dev/null &
            smi=$!
            sleep 0.5
            base=$(head -1 "$WORK/gpumem.txt" 2>/dev/null)
            echo "-- ${s}^3 $mode: gcut segment --raw ${s}x${s}x${s} ${args[*]}" | tee -a "$OUT/large.txt"
            limit=$STAGE_LIMIT
            [ "$mode" = full ] && limit=${FULL_LIMIT:-90}
            rm -f "$WORK/out-$mode.raw"
            timeout "$limit" /usr/bin/time -v "$gcut" segment --raw "${s}x${s}x${s}" "$img" \
                --seeds "$seeds" -o "$WORK/out-$mode.raw" "${args[@]}" >"$WORK/seg.txt" 2>"$WORK/time.txt"
            rc=$?
            kill "$smi" 2>/dev/null
            wait "$smi" 2>/dev/null
            grep -E '^(image|model|level|build|solve|energy|cut|write|total|mask|check)' "$WORK/seg.txt" |
                tee -a "$OUT/large.txt"
            grep -E 'Maximum resident|Elapsed|error|gcut' "$WORK/time.txt" | tee -a "$OUT/large.txt"
            echo "exit $rc; device memory used MiB: before ${base:-?}, peak $(sort -n "$WORK/gpumem.txt" | tail -1)" |
                tee -a "$OUT/large.txt"
            [ $rc = 0 ] || [ "$mode" = full ] || status=1
        done
        if [[ " $LARGE_FULL " == *" $s "* ]] && [ -f "$WORK/out-full.raw" ]; then
            echo "voxels differing, banded vs full cuda-grid: $(cmp -l "$WORK/out-banded.raw" \
                "$WORK/out-full.raw" | wc -l)" | tee -a "$OUT/large.txt"
        fi
        rm -f "$WORK"/out-*.raw "$img" "$seeds"
    done
fi
exit $status
