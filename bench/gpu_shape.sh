#!/usr/bin/env bash
# gpu_shape.sh - one device call for issue #17's sixth-session second cold pass (docs/CUDA-GRID.md, "Square 2D
# tiles and a lean sweep"): builds this tree twice, build-new (the default 2D tiles,
# 16x16 since that session) and build-sq (SQ_FLAGS, default -DGCUT_CUDAGRID_TILE4=32
# -DGCUT_CUDAGRID_TILE8=32, the 32x8 tiles before it; SQ=0: no second build), runs TESTS and,
# with SANITIZE=1, compute-sanitizer memcheck on the quick sets of SAN_TESTS; then, for REPS rounds, every variant of SHAPE_VARIANTS
# ("name:build-dir:ENV=V,ENV=V;...") on every instance of SHAPE_INSTANCES ("WxH:CONN:SEED" or
# "WxH:CONN:SEED:bk" for bk in the same process, flows compared), one gcut_bench process of
# SHAPE_REPEATS solves each; medians over rounds per variant; --verbose profiles of
# PROF_VARIANTS on hard 1920x1080 8-connected (seed 1); with PEIBFS=PATH/mfa_maxflow, P-EIBFS on
# 16 threads on hard 1920x1080 8-connected (seed 5) between cuda-grid runs of PEIBFS_VARIANTS.
# Seventh session: an instance "NxNxN:CONN:SEED" is a volume (gcut_bench --volumes N, 6-connected);
# RACECHECK=1 runs compute-sanitizer racecheck on the racecheck set (GCUT_TEST_QUICK=2) of RACE_TESTS;
# BENCH_TIMEOUT (default 60 s) bounds each gcut_bench process, TEST_TIMEOUT (120 s) each test.
# Logs under $OUT. Run from the tree to test: bash bench/gpu_shape.sh
set -u
O=${OUT:-bench/out/shape}
mkdir -p "$O"
nvidia-smi -L
J=${JOBS:-8}
common=(-DGCUT_WERROR=ON -DGCUT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release)
t0=$(date +%s)
(cmake -S . -B build-new "${common[@]}" >/tmp/build-new.log 2>&1 &&
    cmake --build build-new -j"$J" --target gcut_bench gcut test_cuda_grid test_cuda_context \
        test_cuda_seg par_grid2dimacs gcut_cli >>/tmp/build-new.log 2>&1) &
new_pid=$!
if [ "${SQ:-1}" != 0 ]; then
    (cmake -S . -B build-sq "${common[@]}" -DCMAKE_CUDA_FLAGS="${SQ_FLAGS:--DGCUT_CUDAGRID_TILE4=32 -DGCUT_CUDAGRID_TILE8=32}" \
        >/tmp/build-sq.log 2>&1 &&
        cmake --build build-sq -j"$J" --target gcut_bench test_cuda_grid >>/tmp/build-sq.log 2>&1) &
    sq_pid=$!
    wait $sq_pid || { tail -40 /tmp/build-sq.log; exit 1; }
fi
wait $new_pid || { tail -40 /tmp/build-new.log; exit 1; }
echo "builds: $(($(date +%s) - t0)) s"
for t in ${TESTS:-build-new/tests/test_cuda_grid build-sq/tests/test_cuda_grid build-new/tests/test_cuda_context build-new/tests/test_cuda_seg}; do
    s=$(date +%s%N)
    timeout "${TEST_TIMEOUT:-120}" "$t" >"$O/t.tmp" 2>&1
    echo "$t rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(tail -1 "$O/t.tmp")"
    grep -E "FAIL|MISMATCH|CHECK failed" "$O/t.tmp" | head -5
    cat "$O/t.tmp" >>"$O/tests.log"
done 2>&1 | tee "$O/tests-summary.log"
if [ -n "${SANITIZE:-}" ]; then
    for t in ${SAN_TESTS:-build-sq/tests/test_cuda_grid}; do
        s=$(date +%s%N)
        GCUT_TEST_QUICK=1 timeout "${SAN_TIMEOUT:-90}" compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$t" >"$O/san.tmp" 2>&1
        echo "memcheck $t rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(grep -E 'ERROR SUMMARY|passed,' "$O/san.tmp" | tr '\n' ' ')" |
            tee -a "$O/tests-summary.log"
    done
    rm -f "$O/san.tmp"
fi
# RACECHECK=1: compute-sanitizer racecheck on GCUT_TEST_QUICK=2 (the racecheck set) of RACE_TESTS.
if [ -n "${RACECHECK:-}" ]; then
    for t in ${RACE_TESTS:-build-new/tests/test_cuda_grid}; do
        s=$(date +%s%N)
        GCUT_TEST_QUICK=2 timeout "${RACE_TIMEOUT:-120}" compute-sanitizer --tool racecheck --error-exitcode 9 \
            "$t" >"$O/race.tmp" 2>&1
        echo "racecheck $t rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|hazard|passed,' "$O/race.tmp" | head -5 | tr '\n' ' ')" |
            tee -a "$O/tests-summary.log"
    done
    rm -f "$O/race.tmp"
fi
IFS=";" read -ra variants <<<"${SHAPE_VARIANTS:-t32:build-new:;t16:build-sq:}"
for r in $(seq 1 "${REPS:-2}"); do
    [ -n "${SHAPE_INSTANCES-x}" ] || break
    for spec in ${SHAPE_INSTANCES:-1920x1080:8:5 1920x1080:4:1:bk}; do
        IFS=":" read -r size conn seed withbk <<<"$spec"
        solvers=cuda-grid
        [ -n "$withbk" ] && solvers=cuda-grid,bk
        for v in "${variants[@]}"; do
            IFS=":" read -r name dir envs <<<"$v"
            # shellcheck disable=SC2086
            case $size in *x*x*) where="--sizes none --volumes ${size%%x*}" ;;
            *) where="--sizes $size --volumes none --connectivity $conn" ;; esac
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout "${BENCH_TIMEOUT:-60}" "$dir/gcut_bench" $where \
                --levels hard --seed "$seed" --solvers "$solvers" --repeats "${SHAPE_REPEATS:-5}" \
                --no-markdown --csv - 2>>"$O/bench.err" |
                grep -v '^instance,' | awk -F, -v n="$name" -v r="$r" -v c="$conn" -v s="$seed" \
                '{print "tune", r, n, $1 "/s" s, "c" c, $6, $10, $11, $14, $15}'
            rc=${PIPESTATUS[0]} # read at once: the test below would replace it
            [ "$rc" -eq 0 ] || echo "gcut_bench exit $rc ($name $spec): flows differ, a run failed or (124) it ran past BENCH_TIMEOUT"
        done
    done
done 2>&1 | tee "$O/tune.log"
echo "== medians over rounds: instance conn variant solver solve_ms (rounds) flows" | tee -a "$O/tune.log"
awk '$1=="tune" { k=$4 " " $5 " " $3 " " $6; v[k]=v[k] " " $7; f[k]=f[k] " " $8; if (!(k in seen)) { seen[k]=1; order[++n]=k } }
    END { for (i = 1; i <= n; i++) { k=order[i]; m=split(v[k], a, " ");
            for (x = 2; x <= m; x++) { t=a[x]; y=x-1; while (y >= 1 && a[y]+0 > t+0) { a[y+1]=a[y]; y-- } a[y+1]=t }
            med = m % 2 ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
            split(f[k], g, " "); same="equal"; for (x = 2; x <= m; x++) if (g[x] != g[1]) same="DIFFER"
            print k, med, "(" v[k] " )", same } }' "$O/tune.log" | tee -a "$O/tune.log"
IFS=";" read -ra prof <<<"${PROF_VARIANTS:-}"
for v in "${prof[@]}"; do
    IFS=":" read -r name dir envs <<<"$v"
    echo "== profile $name 1920x1080 8-conn seed 1 (gcut_bench --verbose, 2 solves)"
    # shellcheck disable=SC2086
    env ${envs//,/ } timeout "${BENCH_TIMEOUT:-60}" "$dir/gcut_bench" --sizes 1920x1080 --volumes none --connectivity 8 \
        --levels hard --seed 1 --solvers cuda-grid --repeats 2 --verbose --no-markdown --csv /dev/null 2>&1 |
        grep -E "flow|block time"
done 2>&1 | tee "$O/prof.log"
if [ -n "${PEIBFS:-}" ]; then
    PEIBFS=$(readlink -f "$PEIBFS")
    pw=$(mktemp -d)
    build-new/gcut gen synth --size 1920x1080 --seed 5 --level hard --connectivity 8 \
        --grid "$pw/g.grid" >/dev/null 2>&1 && build-new/par_grid2dimacs "$pw/g.grid" "$pw/g.max" &&
        rm -f "$pw/g.grid" || echo "peibfs: instance failed"
    gpu_rows() {
        IFS=";" read -ra pv <<<"${PEIBFS_VARIANTS:-t32:build-new:}"
        for v in "${pv[@]}"; do
            IFS=":" read -r name dir envs <<<"$v"
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout "${BENCH_TIMEOUT:-60}" "$dir/gcut_bench" --sizes 1920x1080 --volumes none --connectivity 8 \
                --levels hard --seed 5 --solvers cuda-grid --repeats 5 --no-markdown --csv - 2>>"$O/bench.err" |
                grep -v '^instance,' | awk -F, -v n="$name" '{print "peibfs-run", n, $1, "cuda-grid solve_ms", $10, "flow", $11}'
        done
    }
    {
        gpu_rows
        (cd "$pw" && timeout 120 "$PEIBFS" peibfs g.max --threads "${PEIBFS_THREADS:-16}" --repeats "${PEIBFS_REPEATS:-3}" 2>&1) |
            awk '$1=="c" && $2=="run" { for (i = 3; i < NF; i++) { if ($i=="solve_ms") v=v " " $(i+1); if ($i=="build_ms") b=b " " $(i+1); if ($i=="flow") f=$(i+1) } }
                END { print "peibfs-run P-EIBFS 1920x1080 c8 solve_ms" v, "build_ms" b, "flow", f }'
        gpu_rows
    } 2>&1 | tee "$O/peibfs.log"
    rm -rf "$pw"
fi
