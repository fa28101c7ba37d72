#!/usr/bin/env bash
# gpu_route.sh - the two routes of one `gcut segment` process on the device machine (issue #17's
# one-process bar; docs/CUDA-GRID.md, "Segmentation process time (fifth pass)"): the CPU route
# (parallel-bk on every core, CUDA never started) against the GPU route (cuda-grid, CUDA started
# on a second thread) and a base build, at hard 1920x1080 and at the sizes around their
# crossover, all through bench/gpu_process.sh (fresh processes in turn, fork to reaped, masks
# and flows compared, each phase's median). Binaries are taken from BIN (gcut, walltime) and
# BASE; run it from a copy of the tree that holds them.
#
# Environment (all optional):
#   BIN=build  BASE=  (a second gcut, e.g. the branch point, as variant "base")
#   STAGES="photo solvers sizes 4k"   OUT=bench/out/route (one folder per stage)
#   RUNS=10 (photo)  SIZE_RUNS=5 (sizes, 4k)  SOLVER_RUNS=3
#   SIZES="640x480 1024x768 1280x720 1600x900"
# Exit status: non-zero if a stage failed (a run, or masks that differ).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build}
BASE=${BASE:-}
STAGES=${STAGES:-photo solvers sizes 4k}
OUT=${OUT:-bench/out/route}
RUNS=${RUNS:-10}
SIZE_RUNS=${SIZE_RUNS:-5}
SOLVER_RUNS=${SOLVER_RUNS:-3}
SIZES=${SIZES:-640x480 1024x768 1280x720 1600x900}
has() { [[ " $STAGES " == *" $1 "* ]]; }
status=0
CPU=GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=100000000 # the CPU route whatever the size
GPU=GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=0         # auto's GPU rule whatever the size
process() { # stage-name, then settings for bench/gpu_process.sh
    local name=$1
    shift
    echo "== $name"
    env BIN="$BIN" STAGES=segment OUT="$OUT/$name" "$@" bash bench/gpu_process.sh ||
        status=1
}
if has photo; then
    # auto (this build's default), the CPU route forced, the CPU route without the fifth
    # pass's speed-ups (libpng's decoder, one-thread fill and costs, seeds after the picture).
    process photo BASE="$BASE" RUNS="$RUNS" DATA=/tmp/gcut-route \
        VARIANTS="auto:;cpu:$CPU;gpu:$GPU;cpuold:$CPU GCUT_PNG_DECODER=libpng GCUT_SEG_FILL_THREADS=1 GCUT_SEG_COST_THREADS=1 GCUT_SEGMENT_SEED_THREAD=0"
fi
if has solvers; then
    process solvers BASE= RUNS="$SOLVER_RUNS" DATA=/tmp/gcut-route \
        VARIANTS="cpupr:--solver cpu-pr --threads 16;ibfs:--solver grid-ibfs;pbk8:--solver parallel-bk --threads 8;pbksize:$CPU GCUT_PBK_ORDER=size;pbk32:$CPU GCUT_QPBO_BLOCKS=32;pbkprof:$CPU GCUT_PBK_PROFILE=1;gpuv:$GPU --verbose"
fi
if has sizes; then
    for s in $SIZES; do
        process "size-$s" BASE= SIZE="$s" RUNS="$SIZE_RUNS" DATA="/tmp/gcut-route-$s" \
            VARIANTS="cpu:$CPU;gpu:$GPU"
    done
fi
if has 4k; then
    process 4k BASE="$BASE" SIZE=3840x2160 RUNS="$SIZE_RUNS" DATA=/tmp/gcut-route-4k \
        VARIANTS="cpu:$CPU;gpu:$GPU"
fi
exit $status
