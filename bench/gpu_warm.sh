#!/usr/bin/env bash
# gpu_warm.sh - one device call for issue #17's warm re-solve bar (docs/CUDA-GRID.md,
# "Incremental warm re-solves"): builds this tree, runs the cuda tests, then alternates
# gpu_context processes between the code before the incremental start ("old":
# GCUT_CUDAGRID_WARM_INC=0 GCUT_CUDAGRID_LABEL_FLIPS=0, read at context creation) and the
# default ("new"), ROUNDS rounds (A B A B ...), then --verbose splits of both, and with
# SANITIZE=1 compute-sanitizer memcheck on the quick sets (SAN_TESTS: which tests), with
# RACECHECK=1 racecheck on the GCUT_TEST_QUICK=2 sets (RACE_TESTS). Logs under
# $OUT (or bench/out/warm).
# Run on a machine with a GPU from the tree's root: ROUNDS=2 SANITIZE=1 bash bench/gpu_warm.sh
set -u
O=${OUT:-bench/out/warm}
mkdir -p "$O"
nvidia-smi -L
cmake -S . -B build-dev -DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
    cmake --build build-dev -j"${JOBS:-16}" --target gpu_context test_cuda_context test_cuda_grid \
        >>"$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
# TESTS: names, NAME:quick for GCUT_TEST_QUICK=1 (the small cases only)
for entry in ${TESTS:-test_cuda_context test_cuda_grid}; do
    t=${entry%%:*}
    quick=; [ "$entry" != "$t" ] && quick=1
    s=$(date +%s%N)
    env ${quick:+GCUT_TEST_QUICK=1} timeout "${TEST_TIMEOUT:-200}" build-dev/tests/"$t" >"$O/$t.log" 2>&1
    echo "$t rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(tail -1 "$O/$t.log")"
    grep -E "FAIL|MISMATCH|CHECK|incremental start|sparse phase|warm pull" "$O/$t.log" | head -16
done 2>&1 | tee "$O/tests-summary.log"
CTX=${CTX_ARGS:---size 1920x1080 --repeats 7}
# VARIANTS: "name:ENV=V,ENV=V[:extra gpu_context args];..." (old = the code before this session)
IFS=";" read -ra variants <<<"${VARIANTS:-old:GCUT_CUDAGRID_WARM_INC=0,GCUT_CUDAGRID_LABEL_FLIPS=0;new:}"
for r in $(seq 1 "${ROUNDS:-2}"); do
    for v in "${variants[@]}"; do
        IFS=":" read -r name envs args <<<"$v"
        echo "-- round $r $name"
        # shellcheck disable=SC2086
        env ${envs//,/ } timeout 120 build-dev/gpu_context $CTX ${args:-} 2>&1 |
            grep -E '^\| cuda|x faster|incremental|sparse|pull|flows|MISMATCH|bk build|instance|^step'
    done
done 2>&1 | tee "$O/context.log"
for v in "${variants[@]}"; do
    IFS=":" read -r name envs args <<<"$v"
    case " ${VERBOSE:-$name} " in *" $name "*) ;; *) continue ;; esac
    echo "-- verbose $name"
    # shellcheck disable=SC2086
    env ${envs//,/ } timeout 120 build-dev/gpu_context --size 1920x1080 --repeats 1 --verbose \
        ${args:-} 2>&1 |
        grep -E 'verbose|cuda-grid:' | grep -v 'active tiles$'
done 2>&1 | tee "$O/verbose.log"
if [ "${SANITIZE:-0}" = 1 ]; then
    for t in ${SAN_TESTS:-test_cuda_context test_cuda_grid}; do
        GCUT_TEST_QUICK=1 timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool memcheck \
            --error-exitcode 3 build-dev/tests/"$t" >"$O/memcheck-$t.log" 2>&1
        echo "memcheck $t rc=$?: $(grep -E 'ERROR SUMMARY' "$O/memcheck-$t.log" | tail -1) \
$(grep -E 'passed' "$O/memcheck-$t.log" | tail -1)"
    done 2>&1 | tee "$O/memcheck.log"
fi
# RACECHECK=1: compute-sanitizer racecheck on RACE_TESTS' GCUT_TEST_QUICK=2 sets.
if [ "${RACECHECK:-0}" = 1 ]; then
    for t in ${RACE_TESTS:-test_cuda_context}; do
        GCUT_TEST_QUICK=2 timeout "${RACE_TIMEOUT:-150}" compute-sanitizer --tool racecheck \
            --error-exitcode 3 build-dev/tests/"$t" >"$O/racecheck-$t.log" 2>&1
        echo "racecheck $t rc=$?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$O/racecheck-$t.log" | tail -1) \
$(grep -E 'passed' "$O/racecheck-$t.log" | tail -1)"
    done 2>&1 | tee "$O/racecheck.log"
fi
