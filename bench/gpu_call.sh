#!/usr/bin/env bash
# gpu_call.sh - one device call for issue #17's second pass (docs/CUDA-GRID.md): build, the
# cuda tests (timed), the relabel A/B (bench/gpu_bench.sh's ab stage), contexts A/B
# (bench/gpu_context), a --verbose profile. Logs under $OUT.
set -u
O=${OUT:-bench/out/call}
mkdir -p "$O"
nvidia-smi -L
cmake -S . -B build-dev -DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release >"$O/build.log" 2>&1 &&
    cmake --build build-dev -j16 --target gcut_bench gpu_context test_cuda_grid test_cuda_context \
        test_cuda_seg >>"$O/build.log" 2>&1 || { tail -40 "$O/build.log"; exit 1; }
for t in ${TESTS:-test_cuda_grid test_cuda_context test_cuda_seg}; do
    s=$(date +%s%N)
    timeout "${TEST_TIMEOUT:-150}" build-dev/tests/$t >"$O/t.tmp" 2>&1
    rc=$?
    echo "$t rc=$rc $((($(date +%s%N) - s) / 1000000)) ms: $(tail -1 "$O/t.tmp")"
    grep -E "FAIL|MISMATCH" "$O/t.tmp" | head -5
    cat "$O/t.tmp" >>"$O/tests.log"
done
rm -f "$O/t.tmp"
OUT="$O/ab" STAGES=ab BUILD_DIR=build-dev bash bench/gpu_bench.sh
for r in $(seq 1 "${CTX_ROUNDS:-2}"); do
    for v in ${CTX_VARIANTS:-GCUT_CUDAGRID_RELAX=0 GCUT_CUDAGRID_NONE=0}; do
        echo "== gpu_context $v round $r"
        # shellcheck disable=SC2086
        env "$v" timeout 90 build-dev/gpu_context ${CTX_ARGS:---size 1920x1080 --repeats 7} 2>&1 |
            grep -E "context|bk build|MISMATCH|flows|warm"
    done
done 2>&1 | tee "$O/ctx.log"
for v in ${PROF_VARIANTS:-GCUT_CUDAGRID_RELAX=0 GCUT_CUDAGRID_RELAX=1}; do
    echo "== profile $v"
    env "$v" timeout 60 build-dev/gcut_bench --sizes "${PROF_SIZES:-1920x1080}" --volumes none \
        --levels hard --solvers cuda-grid --repeats 2 --verbose --no-markdown --csv /dev/null 2>&1 |
        grep "flow"
done 2>&1 | tee "$O/prof.log"
if [ -n "${PEERS_INSTANCES:-}" ]; then
    # The instances of the P-EIBFS bar (seed 5, hard): 2048x2048 4-conn, 1920x1080 8-conn,
    # 192^3 6-conn; cuda-grid against bk in the same process tree.
    for spec in "--sizes 2048x2048 --volumes none" "--sizes 1920x1080 --volumes none --connectivity 8" \
        "--sizes none --volumes 192"; do
        # shellcheck disable=SC2086
        timeout 120 build-dev/gcut_bench $spec --levels hard --seed 5 --solvers cuda-grid,bk \
            --repeats 5 --no-markdown --csv - 2>/dev/null | grep -v '^instance,' |
            awk -F, '{print $1, $6, $10, $11, $14, $15}'
    done 2>&1 | tee "$O/peers.log"
fi
if [ -n "${SANITIZE:-}" ]; then
    for t in test_cuda_grid test_cuda_context; do
        s=$(date +%s%N)
        GCUT_TEST_QUICK=${SAN_QUICK:-1} timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool memcheck --error-exitcode 9 \
            build-dev/tests/$t >"$O/san.tmp" 2>&1
        echo "memcheck $t rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(grep -E 'ERROR SUMMARY|passed,' "$O/san.tmp" | tr '\n' ' ')"
        cat "$O/san.tmp" >>"$O/sanitize.log"
    done
    rm -f "$O/san.tmp"
fi
