#!/usr/bin/env bash
# gpu_cold7.sh - one device call of issue #17's seventh cold pass (docs/CUDA-GRID.md, "Seventh
# pass on the cold solve"): bench/gpu_shape.sh with one build (build-new) and the switches as
# variants by environment, alternating round by round on hard 1920x1080 4-connected (bk in the
# same process),
# 8-connected, 2048^2 and 192^3 (seed 5), P-EIBFS on hard 1920x1080 8-connected between cuda-grid
# runs, then bench/gpu_profile.sh (--verbose) on 1920x1080 4- and 8-connected. VARIANTS,
# PEIBFS_V and PROF_V name the variants ("name:ENV=V,ENV=V;..."), MEMCHECK=1 / RACECHECK=1 the
# sanitizers. Logs under $OUT. Run from the tree to test, with the review's peers at ../.peers.
set -u
O=${OUT:-bench/out/cold7}
mkdir -p "$O"
with_dir() { # "name:ENV=V;..." -> "name:build-new:ENV=V;..."
    local out="" v
    IFS=";" read -ra vs <<<"$1"
    for v in "${vs[@]}"; do out="$out${out:+;}${v%%:*}:build-new:${v#*:}"; done
    echo "$out"
}
# The default variants: the code before the seventh pass, each of its two switches and both
# (docs/CUDA-GRID.md, "Seventh pass on the cold solve"). Each gcut_bench process is cut at
# BENCH_TIMEOUT (default 20 s; a hard 1920x1080 process with bk takes ~3 s) and each test at
# TEST_TIMEOUT (60 s), so that a variant that does not finish costs seconds, not the call (the
# first call of that pass spent most of its 8 minutes on one that did not, at 60 s a process).
V=${VARIANTS:-base:;trim:GCUT_CUDAGRID_TRIM=1;occ:GCUT_CUDAGRID_SWEEP_OCC=1;both:GCUT_CUDAGRID_TRIM=1,GCUT_CUDAGRID_SWEEP_OCC=1}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-20} TEST_TIMEOUT=${TEST_TIMEOUT:-60} \
    SQ=0 JOBS=${JOBS:-16} TESTS=${TESTS:-build-new/tests/test_cuda_grid build-new/tests/test_cuda_context} \
    SANITIZE=${MEMCHECK:-} SAN_TIMEOUT=${SAN_TIMEOUT:-150} \
    SAN_TESTS=${SAN_TESTS:-build-new/tests/test_cuda_grid build-new/tests/test_cuda_context} \
    RACECHECK=${RACECHECK:-} REPS=${REPS:-2} SHAPE_VARIANTS="$(with_dir "$V")" \
    SHAPE_INSTANCES=${INSTANCES:-1920x1080:4:1:bk 1920x1080:8:5 2048x2048:4:5 192x192x192:6:5} \
    PROF_VARIANTS="" PEIBFS=${PEIBFS:-../.peers/mfa_maxflow} PEIBFS_REPEATS=${PEIBFS_REPEATS:-5} \
    PEIBFS_VARIANTS="$(with_dir "${PEIBFS_V:-$V}")" OUT="$O" bash bench/gpu_shape.sh
BUILD=build-new PROF_INSTANCES="1920x1080:4 1920x1080:8" PROF_VARIANTS="${PROF_V:-$V}" OUT="$O" \
    bash bench/gpu_profile.sh
