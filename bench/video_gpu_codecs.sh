#!/usr/bin/env bash
# video_gpu_codecs.sh - `gcut video` end to end with real image codecs on the GPU machine
# (docs/PERFORMANCE.md, "Video on the H100, second pass"): JPEG frames in, PNG masks out, truth
# scored; the GPU path (auto) against bk on the band graph, alternately, then reader / writer /
# thread variants of the GPU path at the largest size, and in-memory rates at the sizes the A/B
# run (bench/video_gpu_ab.sh) left out.
#   bash bench/video_gpu_codecs.sh SRC OUT_DIR
# Environment: SIZES (default 640x480 1280x720 1920x1080), FRAMES (90), REPS (3),
# MEM_SIZES (in memory, default 320x240,3840x2160).
set -uo pipefail
src=$1
out=$2
mkdir -p "$out"
sizes=${SIZES:-640x480 1280x720 1920x1080}
frames=${FRAMES:-90}
reps=${REPS:-3}
b=/tmp/vcodec-build
echo "== $(nproc) cores, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)"
t0=$(date +%s)
{ cmake -S "$src" -B $b -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build $b -j"$(nproc)" --target gcut_cli video_bench; } >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s; $(grep -E 'Found (PNG|JPEG)' "$out/build.log" | tr '\n' ' ')"
run() { # LABEL DIR ARGS...
    local label=$1 d=$2
    shift 2
    local s0 s1 res
    s0=$(date +%s.%N)
    res=$($b/gcut video "$d/frames" --init "$d/truth/truth_000000.png" -o "$d/masks" \
        --truth "$d/truth" --quiet "$@" 2>&1 | tr '\n' ' ')
    s1=$(date +%s.%N)
    echo "$label: command $(awk "BEGIN{printf \"%.2f\", $s1 - $s0}") s: $res"
}
echo "== JPEG frames in, PNG masks out, truth scored: auto (GPU) and bk (band graph) alternately"
last=""
for size in $sizes; do
    d=/tmp/vcodec-$size
    rm -rf "$d"
    mkdir -p "$d"
    $b/gcut gen video --size "$size" --frames "$frames" -o "$d/frames" --truth "$d/truth" \
        --format jpg >/dev/null 2>&1 || { echo "gen video $size failed"; continue; }
    echo "$size: $(du -sh "$d/frames" | cut -f1) of JPEG frames"
    for r in $(seq "$reps"); do
        run "$size auto run $r" "$d"
        run "$size bk run $r" "$d" --solver bk
    done
    last=$size
    [ "$size" = "${sizes##* }" ] || rm -rf "$d"
done 2>&1 | tee "$out/e2e_jpeg.log"
last=${sizes##* }
d=/tmp/vcodec-$last
if [ -d "$d/frames" ]; then
    echo "== $last, GPU path: readers / writers / threads, alternately"
    for r in $(seq "$reps"); do
        run "$last default run $r" "$d"
        run "$last readers 8 writers 6 run $r" "$d" --readers 8 --writers 6
        run "$last threads 4 run $r" "$d" --threads 4
        run "$last readers 8 writers 6 threads 4 run $r" "$d" --readers 8 --writers 6 --threads 4
    done 2>&1 | tee "$out/e2e_variants.log"
fi
echo "== in memory: ${MEM_SIZES:-320x240,3840x2160}"
$b/video_bench --sizes "${MEM_SIZES:-320x240,3840x2160}" --frames 30 --reps 1 \
    --configs "gpu=cuda-grid:full;bk-band=bk:band" --ref bk-band --base bk-band 2>&1 |
    tee "$out/mem.log"
