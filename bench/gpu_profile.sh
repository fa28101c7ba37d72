#!/usr/bin/env bash
# gpu_profile.sh - where a cold cuda-grid solve spends its time (docs/CUDA-GRID.md, "One barrier
# per round"): gcut_bench --verbose (device ms of sweeps, relabel init and relax kernels, the
# relax kernel's block time split) of each variant of PROF_VARIANTS ("name:ENV=V,ENV=V;...") on
# each instance of PROF_INSTANCES ("WxH:CONN" or "NxNxN:CONN", hard, seed PROF_SEED); then, with
# NCU=1 and Nsight Compute installed, ncu's warp-state, occupancy and memory sections of the sweep
# and relax kernels (NCU_KERNELS, a regex) of the first instance, NCU_COUNT launches each, clocks
# left as they are. Build: BUILD (default build-new). Logs: $OUT/profile.log, $OUT/ncu.log.
set -u
O=${OUT:-bench/out/profile}
mkdir -p "$O"
B=${BUILD:-build-new}
IFS=";" read -ra variants <<<"${PROF_VARIANTS:-default:}"
args_of() {
    local size=${1%%:*} conn=${1##*:}
    case $size in *x*x*) echo "--sizes none --volumes ${size%%x*}" ;;
    *) echo "--sizes $size --volumes none --connectivity $conn" ;; esac
}
for spec in ${PROF_INSTANCES:-1920x1080:4 1920x1080:8}; do
    for v in "${variants[@]}"; do
        IFS=":" read -r name envs <<<"$v"
        echo "== profile $name $spec (gcut_bench --verbose, 2 solves)"
        # shellcheck disable=SC2086
        env ${envs//,/ } timeout 60 "$B/gcut_bench" $(args_of "$spec") --levels hard \
            --seed "${PROF_SEED:-1}" --solvers cuda-grid --repeats 2 --verbose --no-markdown \
            --csv /dev/null 2>&1 | grep -E "flow|block time"
    done
done 2>&1 | tee "$O/profile.log"
if [ -n "${NCU:-}" ]; then
    if ! command -v ncu >/dev/null 2>&1; then
        echo "ncu: not installed here; skipped" | tee "$O/ncu.log"
        exit 0
    fi
    spec=${PROF_INSTANCES:-1920x1080:8}
    spec=${spec%% *}
    for v in "${variants[@]}"; do
        IFS=":" read -r name envs <<<"$v"
        echo "== ncu $name $spec"
        # shellcheck disable=SC2086
        env ${envs//,/ } timeout "${NCU_TIMEOUT:-120}" ncu --clock-control none \
            --kernel-name "regex:${NCU_KERNELS:-sweep|relax_async}" \
            --launch-skip "${NCU_SKIP:-2}" --launch-count "${NCU_COUNT:-4}" \
            --section LaunchStats --section Occupancy --section WarpStateStats \
            --section SchedulerStats --section MemoryWorkloadAnalysis \
            "$B/gcut_bench" $(args_of "$spec") --levels hard --seed "${PROF_SEED:-1}" \
            --solvers cuda-grid --repeats 1 --no-markdown --csv /dev/null 2>&1 |
            grep -vE "^==PROF==|^\s*$|^  *-+ *-+"
    done 2>&1 | tee "$O/ncu.log"
fi
