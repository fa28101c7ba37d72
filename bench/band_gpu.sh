#!/usr/bin/env bash
# band_gpu.sh - the multilevel narrow-banded run for a machine with an NVIDIA GPU (docs/BAND.md;
# not yet run: written on a machine without one). Builds gcut with CUDA, runs test_band, then
# the banded solve with the coarsest level on cuda-grid (bands on bk) against the full cuda-grid
# solve and against full bk, on 2D synthetic images and on volumes; finally the largest volume
# banded only, from a raw file, with its time and peak host memory. Logs go to $OUT.
#
# Environment (all optional):
#   STAGES="build test images volumes large"
#   BUILD_DIR=build-band  OUT=bench/out/band
#   SIZES="1920x1080 3840x2160 7680x4320"   RUNS=5
#   VOLUMES="256 512 1024"                  volumes timed banded and full (--check)
#   LARGE="1536"                            volumes timed banded only (the full grid does not
#                                           fit the device: 1536^3 x 32 B = 116 GB)
#   WORK=/tmp/gcut-band                     synthetic inputs (3 bytes per voxel)
set -uo pipefail
cd "$(dirname "$0")/.."
STAGES=${STAGES:-build test images volumes large}
BUILD_DIR=${BUILD_DIR:-build-band}
OUT=${OUT:-bench/out/band}
SIZES=${SIZES:-1920x1080 3840x2160 7680x4320}
RUNS=${RUNS:-5}
VOLUMES=${VOLUMES:-256 512 1024}
LARGE=${LARGE:-1536}
WORK=${WORK:-/tmp/gcut-band}
mkdir -p "$OUT" "$WORK"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
gcut=$BUILD_DIR/gcut
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >"$OUT/device.txt" 2>&1

if has build; then
    echo "== build"
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=ON >/dev/null &&
        cmake --build "$BUILD_DIR" -j "$(nproc)" >"$OUT/build.log" 2>&1 || { echo "build failed"; exit 1; }
fi
if has test; then
    echo "== test_band, test_cuda_seg"
    (cd "$BUILD_DIR" && ctest -R 'test_band|test_cuda_seg' --output-on-failure) >"$OUT/test.log" 2>&1 || status=1
    tail -3 "$OUT/test.log"
fi
if has images; then
    # banded with cuda-grid at the coarsest level against full cuda-grid, then against full bk
    for solver in cuda-grid bk; do
        echo "== images, full and coarsest level on $solver"
        SIZES="$SIZES" RUNS=$RUNS SOLVER=$solver WORK="$WORK" \
            bash bench/band_cpu.sh "$gcut" | tee "$OUT/images-$solver.md" || status=1
    done
fi
if has volumes; then
    for solver in cuda-grid bk; do
        echo "== volumes, full and coarsest level on $solver"
        SIDES="$VOLUMES" RUNS=3 SOLVER=$solver FULL=1 WORK="$WORK" \
            bash bench/band_volume.sh "$gcut" | tee "$OUT/volumes-$solver.txt" || status=1
    done
fi
if has large; then
    echo "== large volumes, banded only (coarsest level on cuda-grid)"
    SIDES="$LARGE" RUNS=1 SOLVER=cuda-grid FULL=0 WORK="$WORK" \
        bash bench/band_volume.sh "$gcut" | tee "$OUT/large.txt" || status=1
fi
exit $status
