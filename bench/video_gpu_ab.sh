#!/usr/bin/env bash
# video_gpu_ab.sh - gcut video's GPU path before and after a change, in one run on the GPU
# machine (docs/PERFORMANCE.md, "Video on the H100"): builds two source trees (CUDA, Release) at
# once, runs the new tree's GPU video test (and compute-sanitizer memcheck on its quick set),
# then bench/video_bench in memory and `gcut video` end to end (PPM frames in, PGM masks out,
# truth scored), the two builds alternately (A B A B ...), each figure later the median.
#   bash bench/video_gpu_ab.sh BASE_SRC NEW_SRC OUT_DIR
# Environment: SIZES (in memory, default 640x480,1280x720,1920x1080), E2E_SIZES (default the
# same), FRAMES (30), E2E_FRAMES (90), REPS (3), CONFIGS (video_bench --configs).
set -uo pipefail
base_src=$1
new_src=$2
out=$3
mkdir -p "$out"
sizes=${SIZES:-640x480,1280x720,1920x1080}
e2e_sizes=${E2E_SIZES:-${sizes//,/ }}
frames=${FRAMES:-30}
e2e_frames=${E2E_FRAMES:-90}
reps=${REPS:-3}
configs=${CONFIGS:-"gpu=cuda-grid:full;bk-band=bk:band;bk-full=bk:full:6"}
jobs=$(($(nproc) / 2 > 0 ? $(nproc) / 2 : 1))
echo "== $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)," \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)"
echo "== image libraries: $(dpkg -l 2>/dev/null | grep -E '^ii +(libpng|libjpeg|libav)[^ ]*-dev' |
    awk '{print $2}' | tr '\n' ' ')"
build() { # SRC DIR LOG TARGETS...
    local src=$1 dir=$2 log=$3
    shift 3
    cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 >"$log" 2>&1 &&
        cmake --build "$dir" -j"$jobs" --target "$@" >>"$log" 2>&1
}
t0=$(date +%s)
build "$base_src" /tmp/vab-base "$out/build-base.log" gcut_cli video_bench &
pb=$!
build "$new_src" /tmp/vab-new "$out/build-new.log" gcut_cli video_bench test_cuda_video \
    test_video_gpu_rule
rn=$?
wait $pb
rb=$?
echo "== builds: base rc $rb, new rc $rn, $(($(date +%s) - t0)) s"
grep "gcut:" "$out/build-new.log"
[ $rn = 0 ] || { tail -30 "$out/build-new.log"; exit 1; }
[ $rb = 0 ] || tail -30 "$out/build-base.log"
echo "== test_cuda_video (new)"
/tmp/vab-new/tests/test_cuda_video 2>&1 | tee "$out/test_cuda_video.log" | tail -12
/tmp/vab-new/tests/test_video_gpu_rule 2>&1 | tail -1
if command -v compute-sanitizer >/dev/null; then
    echo "== compute-sanitizer memcheck (quick)"
    GCUT_TEST_QUICK=1 timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 \
        /tmp/vab-new/tests/test_cuda_video 2>&1 | tail -4
fi
echo "== video_bench in memory, base and new alternately, $reps times each"
for r in $(seq "$reps"); do
    for side in base new; do
        [ -x /tmp/vab-$side/video_bench ] || continue
        echo "-- $side run $r"
        /tmp/vab-$side/video_bench --sizes "$sizes" --frames "$frames" --reps 1 \
            --configs "$configs" --ref bk-full --base bk-band 2>&1 | grep -v '^#'
    done
done 2>&1 | tee "$out/bench.log"
echo "== hard video, new, in memory (accuracy)"
/tmp/vab-new/video_bench --sizes 640x480 --frames "$frames" --reps 1 --level hard \
    --configs "gpu=cuda-grid:full;bk-band=bk:band" --ref bk-band --base bk-band 2>&1 |
    grep -v '^#' | tee "$out/hard.log"
echo "== gcut video end to end: PPM frames in, PGM masks out, truth scored; base and new alternately"
for size in $e2e_sizes; do
    d=/tmp/gcut-vab-$size
    mkdir -p "$d"
    /tmp/vab-new/gcut gen video --size "$size" --frames "$e2e_frames" -o "$d/frames" \
        --truth "$d/truth" --format ppm >/dev/null 2>&1 || { echo "gen video failed"; break; }
    for r in $(seq "$reps"); do
        for side in base new; do
            [ -x /tmp/vab-$side/gcut ] || continue
            s0=$(date +%s.%N)
            res=$(/tmp/vab-$side/gcut video "$d/frames" --init "$d/truth/truth_000000.pgm" \
                -o "$d/masks-$side" --mask-format pgm --truth "$d/truth" --quiet 2>&1 |
                tr '\n' ' ')
            s1=$(date +%s.%N)
            echo "$size $side run $r: command $(awk "BEGIN{printf \"%.2f\", $s1 - $s0}") s: $res"
        done
    done
    cmp -s <(cat "$d"/masks-base/*) <(cat "$d"/masks-new/*) && echo "$size: masks of base and new identical" ||
        echo "$size: masks of base and new DIFFER"
    rm -rf "$d"
done 2>&1 | tee "$out/e2e.log"
