#!/usr/bin/env bash
# gpu_ab.sh - one device call for issue #17's third pass (docs/CUDA-GRID.md, "Fourth session"):
# builds this tree (build-new) and, when BASE_DIR names another checkout, that one (build-base,
# the "before" of every A/B), runs the cuda tests of this tree, then alternates the variants of
# VARIANTS ("name:build-dir:ENV=V,ENV=V;..."; build-dir is build-new or build-base) for REPS
# rounds through gcut_bench (hard AB_SIZES, cuda-grid and bk in the same process tree, flows
# compared, AB_REPEATS solves) and through gpu_context (CTX_ARGS: warm re-solves against the cold
# solve of the new problem); then --verbose profiles of PROF_VARIANTS, with EXTRA=1 hard
# 1920x1080 8-connected and 128^3 / 256^3 6-connected against bk (PEER_SIZES=1: also the P-EIBFS
# instances of issue #17, seed 5, cuda-grid alone), with STARTUP=1 one `gcut segment` process
# per run with CUDA's lazy and eager module loading, and with SANITIZE=1 compute-sanitizer
# memcheck on the quick sets, with PEIBFS=PATH/mfa_maxflow P-EIBFS on 16 threads beside cuda-grid
# on issue #17's three P-EIBFS instances (fifth session). Logs under $OUT.
# Run from the tree to test: BASE_DIR=.. bash bench/gpu_ab.sh
set -u
O=${OUT:-bench/out/ab}
mkdir -p "$O"
nvidia-smi -L
targets=(gcut_bench gpu_context)
cmake -S . -B build-new -DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_BUILD_TYPE=Release >/tmp/build-new.log 2>&1 &&
    cmake --build build-new -j"${JOBS:-16}" --target "${targets[@]}" gcut gcut_cli test_cuda_grid test_cuda_context \
        test_cuda_seg par_grid2dimacs >>/tmp/build-new.log 2>&1 &
new_pid=$!
if [ -n "${BASE_DIR:-}" ]; then
    cmake -S "$BASE_DIR" -B build-base -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_BUILD_TYPE=Release >/tmp/build-base.log 2>&1 &&
        cmake --build build-base -j"${JOBS:-16}" --target "${targets[@]}" >>/tmp/build-base.log 2>&1 &
    base_pid=$!
    wait $base_pid || { tail -20 /tmp/build-base.log; exit 1; }
fi
wait $new_pid || { tail -40 /tmp/build-new.log; exit 1; }
for t in ${TESTS:-test_cuda_grid test_cuda_context test_cuda_seg}; do
    s=$(date +%s%N)
    timeout "${TEST_TIMEOUT:-150}" build-new/tests/"$t" >"$O/t.tmp" 2>&1
    rc=$?
    echo "$t rc=$rc $((($(date +%s%N) - s) / 1000000)) ms: $(tail -1 "$O/t.tmp")"
    grep -E "FAIL|MISMATCH|CHECK failed" "$O/t.tmp" | head -5
    cat "$O/t.tmp" >>/tmp/tests.log
done 2>&1 | tee "$O/tests-summary.log"
rm -f "$O/t.tmp"
IFS=";" read -ra variants <<<"${VARIANTS:-base:build-base:;new:build-new:}"
echo "== gcut_bench: round variant instance solver solve_ms flow sweeps relabels"
for r in $(seq 1 "${REPS:-2}"); do
    for v in "${variants[@]}"; do
        IFS=":" read -r name dir envs <<<"$v"
        # shellcheck disable=SC2086
        env ${envs//,/ } timeout 120 "$dir/gcut_bench" --sizes "${AB_SIZES:-1920x1080}" --volumes none \
            --levels hard --solvers cuda-grid,bk --repeats "${AB_REPEATS:-5}" --seed 1 \
            ${AB_CONN:+--connectivity "$AB_CONN"} --no-markdown --csv - 2>>"$O/ab.err" |
            grep -v '^instance,' | awk -F, -v n="$name" -v r="$r" '{print r, n, $1, $6, $10, $11, $14, $15}'
        [ "${PIPESTATUS[0]}" -eq 0 ] || echo "gcut_bench exit ${PIPESTATUS[0]} ($name): flows differ or a run failed"
    done
done 2>&1 | tee "$O/ab.log"
echo "== gpu_context ${CTX_ARGS:---size 1920x1080 --repeats 7}"
IFS=";" read -ra ctx_variants <<<"${CTX_VARIANTS:-${VARIANTS:-base:build-base:;new:build-new:}}"
for r in $(seq 1 "${CTX_REPS:-2}"); do
    for v in "${ctx_variants[@]}"; do
        IFS=":" read -r name dir envs <<<"$v"
        echo "-- round $r $name"
        # shellcheck disable=SC2086
        env ${envs//,/ } timeout 90 "$dir/gpu_context" ${CTX_ARGS:---size 1920x1080 --repeats 7} 2>&1 |
            grep -E "^\| |MISMATCH|flows|warm \(|relabel first"
    done
done 2>&1 | tee "$O/ctx.log"
IFS=";" read -ra prof <<<"${PROF_VARIANTS:-${VARIANTS:-base:build-base:;new:build-new:}}"
for v in "${prof[@]}"; do
    IFS=":" read -r name dir envs <<<"$v"
    echo "== profile $name (cold, gcut_bench --verbose, 2 solves)"
    # shellcheck disable=SC2086
    env ${envs//,/ } timeout 60 "$dir/gcut_bench" --sizes "${AB_SIZES:-1920x1080}" --volumes none \
        --levels hard --solvers cuda-grid --repeats 2 --verbose --no-markdown --csv /dev/null 2>&1 |
        grep -E "flow|block time"
    echo "== profile $name (warm marked and cold, gpu_context --verbose)"
    # shellcheck disable=SC2086
    env ${envs//,/ } timeout 60 "$dir/gpu_context" --size "${AB_SIZES:-1920x1080}" --repeats 1 --verbose 2>&1 |
        grep -E "^-- verbose|cuda-grid: flow|block time"
done 2>&1 | tee "$O/prof.log"
if [ -n "${EXTRA:-}" ]; then
    # 8-connected and 3D figures beside the 4-connected bar, each variant of EXTRA_VARIANTS
    # (default: VARIANTS) against bk in the same process tree; then, with PEER_SIZES=1, the
    # instances of the issue's P-EIBFS figures (hard, seed 5) through cuda-grid alone.
    echo "== extra: variant instance solver solve_ms flow sweeps relabels"
    IFS=";" read -ra extra_variants <<<"${EXTRA_VARIANTS:-${VARIANTS:-base:build-base:;new:build-new:}}"
    for args in "--sizes 1920x1080 --volumes none --connectivity 8" "--sizes none --volumes ${EXTRA_VOLUMES:-128,256}"; do
        for v in "${extra_variants[@]}"; do
            IFS=":" read -r name dir envs <<<"$v"
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout 120 "$dir/gcut_bench" $args --levels hard --seed 1 \
                --solvers cuda-grid,bk --repeats 3 --no-markdown --csv - 2>>"$O/ab.err" |
                grep -v '^instance,' | awk -F, -v n="$name" '{print n, $1, $6, $10, $11, $14, $15}'
        done
    done 2>&1 | tee "$O/extra.log"
    if [ -n "${PEER_SIZES:-}" ]; then
        for args in "--sizes 2048x2048 --volumes none" "--sizes 1920x1080 --volumes none --connectivity 8" \
            "--sizes none --volumes 192"; do
            for v in ${PEER_VARIANTS:-new:build-new:}; do
                IFS=":" read -r name dir envs <<<"$v"
                # shellcheck disable=SC2086
                env ${envs//,/ } timeout 60 "$dir/gcut_bench" $args --levels hard --seed 5 \
                    --solvers cuda-grid --repeats 5 --no-markdown --csv - 2>>"$O/ab.err" |
                    grep -v '^instance,' | awk -F, -v n="$name" '{print n, $1, "seed 5", $6, $10, $11}'
            done
        done 2>&1 | tee -a "$O/extra.log"
    fi
fi
if [ -n "${PEIBFS:-}" ]; then
    # P-EIBFS (the review's parallel EIBFS, PEIBFS=path to mfa_maxflow) on 16 threads against
    # cuda-grid in the same call, on the P-EIBFS instances of issue #17 (hard synthetic, seed 5):
    # cuda-grid (gcut_bench, PEIBFS_VARIANT's build, 5 solves), P-EIBFS (one process, 5
    # repeats of its solve on the DIMACS copy of the same grid), cuda-grid again; flows compared.
    IFS=":" read -r pname pdir penvs <<<"${PEIBFS_VARIANT:-new:build-new:}"
    PEIBFS=$(readlink -f "$PEIBFS")
    pw=$(mktemp -d)
    for spec in ${PEIBFS_INSTANCES:-2048x2048:4 1920x1080:8 192x192x192:6}; do
        size=${spec%%:*}; conn=${spec##*:}
        case $size in *x*x*) gargs="--sizes none --volumes ${size%%x*}";; *) gargs="--sizes $size --volumes none --connectivity $conn";; esac
        build-new/gcut gen synth --size "$size" --seed 5 --level hard --connectivity "$conn" \
            --grid "$pw/g.grid" >/dev/null 2>&1 && build-new/par_grid2dimacs "$pw/g.grid" "$pw/g.max" ||
            { echo "peibfs: instance $spec failed"; continue; }
        rm -f "$pw/g.grid"
        gpu_row() {
            # shellcheck disable=SC2086
            env ${penvs//,/ } timeout 60 "$pdir/gcut_bench" $gargs --levels hard \
                --seed 5 --solvers cuda-grid --repeats 5 --no-markdown --csv - 2>>"$O/ab.err" |
                grep -v '^instance,' | awk -F, -v n="$pname" '{print "peibfs-run", n, $1, "cuda-grid solve_ms", $10, "flow", $11}'
        }
        gpu_row
        (cd "$pw" && timeout 200 "$PEIBFS" peibfs g.max --threads "${PEIBFS_THREADS:-16}" --repeats "${PEIBFS_REPEATS:-5}" 2>&1) |
            awk -v s="$size" -v c="$conn" '$1=="c" && $2=="run" { for (i = 3; i < NF; i++) { if ($i=="solve_ms") v=v " " $(i+1); if ($i=="build_ms") b=b " " $(i+1); if ($i=="flow") f=$(i+1) } }
                END { print "peibfs-run P-EIBFS", s, "c" c, "solve_ms" v, "build_ms" b, "flow", f }'
        gpu_row
        rm -f "$pw/g.max"
    done 2>&1 | tee "$O/peibfs.log"
    rm -rf "$pw"
fi
if [ -n "${STARTUP:-}" ]; then
    # One `gcut segment` process on a hard synthetic 1920x1080 photo, file to mask, with CUDA's
    # module loading lazy (its default) and eager, alternating; the start-up's split from
    # GCUT_DEVICE_INIT_VERBOSE=1 and the phases the process prints.
    d=$(mktemp -d)
    build-new/gcut gen synth --size 1920x1080 --level hard --seed 1 -o "$d/img.png" \
        --seeds "$d/seeds.png" >/dev/null 2>&1
    for r in 1 2 3; do
        for mode in LAZY EAGER; do
            s=$(date +%s%N)
            CUDA_MODULE_LOADING=$mode GCUT_DEVICE_INIT_VERBOSE=1 build-new/gcut segment "$d/img.png" \
                --seeds "$d/seeds.png" --solver cuda-grid --iterations 1 -o "$d/mask.png" >"$d/out.txt" 2>&1
            rc=$?
            echo "$mode run $r rc=$rc wall $((($(date +%s%N) - s) / 1000000)) ms | $(grep -E '^(gcut_device_init|total|solve|model|image|write)' "$d/out.txt" | sed -E 's/  +/ /g' | tr '\n' '|' | cut -c1-300)"
        done
    done 2>&1 | tee "$O/startup.log"
    rm -rf "$d"
fi
if [ -n "${SANITIZE:-}" ]; then
    for t in test_cuda_grid test_cuda_context; do
        s=$(date +%s%N)
        GCUT_TEST_QUICK=1 timeout "${SAN_TIMEOUT:-60}" compute-sanitizer --tool memcheck --error-exitcode 9 \
            build-new/tests/$t >"$O/san.tmp" 2>&1
        echo "memcheck $t rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(grep -E 'ERROR SUMMARY|passed,' "$O/san.tmp" | tr '\n' ' ')"
        cat "$O/san.tmp" >>"$O/sanitize.log"
    done
    rm -f "$O/san.tmp"
fi
