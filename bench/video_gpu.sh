#!/usr/bin/env bash
# video_gpu.sh - gcut video on the GPU machine (docs/PERFORMANCE.md, "Video on the H100"): builds
# gcut with CUDA, runs the GPU path's test, then bench/video_bench (segmentation in memory:
# cuda-grid on the whole frame through one context against bk on the band graph, bk on the
# whole frame and cpu-pr on the whole frame, alternately, flows and masks checked against bk's
# frame by frame) and, where the build reads JPEG and writes PNG, `gcut video` end to end
# (JPEG frames in, PNG masks out) with auto (the GPU) against bk, alternately.
#   bash bench/video_gpu.sh [BUILD_DIR] [OUT_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-dev}
out=${2:-bench/out/video}
mkdir -p "$out"
frames=${FRAMES:-30}
reps=${REPS:-3}
sizes=${SIZES:-640x480,1280x720,1920x1080}
configs=${CONFIGS:-"gpu=cuda-grid:full;bk-band=bk:band;bk-full=bk:full:12;cpupr-full=cpu-pr:full:6"}
echo "== $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
grep "gcut:" "$out/cmake.log"
cmake --build "$build" -j"$(nproc)" --target gcut_cli video_bench test_cuda_video test_video \
    >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== test_cuda_video"
"$build/tests/test_cuda_video" 2>&1 | tee "$out/test_cuda_video.log" | tail -8
if [ "${UNIT:-1}" = 1 ]; then
    echo "== test_video"
    "$build/tests/test_video" 2>&1 | tail -1
fi
echo "== video_bench"
"$build/video_bench" --sizes "$sizes" --frames "$frames" --reps "$reps" --configs "$configs" \
    --ref "${REF:-bk-full}" 2>&1 |
    tee "$out/bench.log"
if [ "${E2E:-1}" = 1 ]; then
    # PPM frames in, PGM masks out: the device machine has no libpng/libjpeg, and these formats
    # need no image library (so the codecs' cost is left out: raw frames as from a camera).
    echo "== gcut video end to end (PPM frames in, PGM masks out, truth scored)"
    for size in ${E2E_SIZES:-${sizes//,/ }}; do
        d=/tmp/gcut-video-$size
        mkdir -p "$d"
        "$build/gcut" gen video --size "$size" --frames "$frames" -o "$d/frames" --truth "$d/truth" \
            --format ppm >/dev/null 2>&1 || { echo "gen video failed"; break; }
        for r in $(seq "${E2E_REPS:-$reps}"); do
            for cfg in "auto=" "bk-band=--solver bk"; do
                # shellcheck disable=SC2086
                echo "$size ${cfg%%=*} $("$build/gcut" video "$d/frames" --init "$d/truth/truth_000000.pgm" \
                    -o "$d/masks-${cfg%%=*}" --mask-format pgm --truth "$d/truth" --quiet ${cfg#*=} 2>&1 | tr '\n' ' ')"
            done
        done
    done 2>&1 | tee "$out/e2e.log"
fi
if command -v compute-sanitizer >/dev/null && [ "${SANITIZE:-1}" = 1 ]; then
    echo "== compute-sanitizer memcheck (quick)"
    GCUT_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 \
        "$build/tests/test_cuda_video" 2>&1 | tail -4
fi
