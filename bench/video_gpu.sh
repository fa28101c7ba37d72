#!/usr/bin/env bash
# video_gpu.sh - for the lead on the GPU machine: builds gcut with CUDA and FFmpeg (where the
# machine has them), then runs bench/video_cpu.sh on the synthetic test videos at 320x240 to
# 3840x2160 with the CPU solver (bk on the band graph) and with cuda-grid on the whole frame
# (today a fresh solve per frame: the reusable GPU solver context of branch gpu is not used
# yet), each alternately, medians of REPS runs. Prints the two tables; paste them into
# docs/PERFORMANCE.md with the machine's name.
#   bash bench/video_gpu.sh [BUILD_DIR] [FRAMES] [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
frames=${2:-60}
reps=${3:-3}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target gcut_cli >/dev/null
"$build/gcut" solvers
sizes="320x240 640x480 1280x720 1920x1080 3840x2160"
CONFIGS="bk-band=--queue 4;cuda-full=--queue 4 --full-frame --solver cuda-grid;cpupr-full=--queue 4 --full-frame --solver cpu-pr" \
    bash bench/video_cpu.sh "$build" "$sizes" "$frames" "$reps"
