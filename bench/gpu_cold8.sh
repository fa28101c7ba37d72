#!/usr/bin/env bash
# gpu_cold8.sh - one device call of issue #17's ninth-session cold pass (docs/CUDA-GRID.md,
# "The tail of a solve; idle nodes raised in the sweep"): the binaries of one tree (BIN, default
# build-new: built here with -j16 unless BIN already holds gcut_bench, test_cuda_grid,
# par_grid2dimacs and gcut; a CPU-only gcut and par_grid2dimacs serve), then
#   - TESTS: each "ENV=V,ENV=V" entry (";"-separated, "-" for none) runs test_cuda_grid once
#     under that environment (TEST_QUICK=1: its quick set);
#   - REPS rounds of every variant of VARIANTS ("name:ENV=V,ENV=V;...") on every instance of
#     INSTANCES ("WxH:CONN:SEED[:bk]" or "NxNxN:6:SEED"), one gcut_bench process of 5 solves
#     each, the variants alternating inside each round; medians over rounds per variant;
#   - PROF_V: gcut_bench --verbose per variant on PROF_INSTANCES (per-cycle split of sweeps and
#     relabels);
#   - PEIBFS=PATH/mfa_maxflow: P-EIBFS (16 threads) on hard 1920x1080 8-connected, 2048^2
#     4-connected and 192^3 6-connected (seed 5), each between two cuda-grid runs of PEIBFS_V;
#   - MEMCHECK=1 / RACECHECK=1: compute-sanitizer on test_cuda_grid's quick / racecheck sets,
#     under SAN_ENV.
# Every gcut_bench process is cut at BENCH_TIMEOUT (20 s), every test at TEST_TIMEOUT (90 s).
# Logs: $OUT/cold8.log (everything) and $OUT/tests.log. Run from the tree's root.
set -u
O=${OUT:-bench/out/cold8}
mkdir -p "$O"
B=${BIN:-build-new}
exec > >(tee -a "$O/cold8.log") 2>&1
nvidia-smi -L
t0=$(date +%s)
if [ ! -x "$B/gcut_bench" ]; then
    cmake -S . -B "$B" -DGCUT_WERROR=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release \
        >/tmp/cold8-build.log 2>&1 &&
        cmake --build "$B" -j"${JOBS:-16}" --target gcut_bench test_cuda_grid test_cuda_context \
            par_grid2dimacs gcut_cli >>/tmp/cold8-build.log 2>&1 || {
        tail -40 /tmp/cold8-build.log
        exit 1
    }
    echo "build: $(($(date +%s) - t0)) s"
fi
TG=$B/tests/test_cuda_grid
[ -x "$TG" ] || TG=$B/test_cuda_grid
IFS=";" read -ra tenvs <<<"${TESTS:--}"
for e in "${tenvs[@]}"; do
    [ -n "$e" ] || continue
    [ "$e" = "-" ] && e=""
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    env ${e//,/ } GCUT_TEST_QUICK=${TEST_QUICK:-0} timeout "${TEST_TIMEOUT:-90}" "$TG" >"$O/t.tmp" 2>&1
    echo "test_cuda_grid [${e:-default}] rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(tail -1 "$O/t.tmp")"
    grep -E "FAIL|MISMATCH|CHECK failed" "$O/t.tmp" | head -5
    cat "$O/t.tmp" >>"$O/tests.log"
done
rm -f "$O/t.tmp"
where_of() {
    case $1 in *x*x*) echo "--sizes none --volumes ${1%%x*}" ;;
    *) echo "--sizes $1 --volumes none --connectivity $2" ;; esac
}
IFS=";" read -ra variants <<<"${VARIANTS:-base:;raise:GCUT_CUDAGRID_SWEEP_RAISE=1}"
for r in $(seq 1 "${REPS:-2}"); do
    for spec in ${INSTANCES:-1920x1080:4:1:bk 1920x1080:8:5 2048x2048:4:5 192x192x192:6:5}; do
        IFS=":" read -r size conn seed withbk <<<"$spec"
        solvers=cuda-grid
        [ -n "$withbk" ] && solvers=cuda-grid,bk
        for v in "${variants[@]}"; do
            IFS=":" read -r name envs <<<"$v"
            # shellcheck disable=SC2086,SC2046
            env ${envs//,/ } timeout "${BENCH_TIMEOUT:-20}" "$B/gcut_bench" $(where_of "$size" "$conn") \
                --levels hard --seed "$seed" --solvers "$solvers" --repeats 5 --no-markdown --csv - \
                2>>"$O/bench.err" |
                grep -v '^instance,' | awk -F, -v n="$name" -v r="$r" -v c="$conn" -v s="$seed" \
                '{print "tune", r, n, $1 "/s" s, "c" c, $6, $10, $11, $14, $15}'
            rc=${PIPESTATUS[0]}
            [ "$rc" -eq 0 ] || echo "gcut_bench exit $rc ($name $spec): flows differ, a run failed or (124) timeout"
        done
    done
done
echo "== medians over rounds: instance conn variant solver solve_ms (rounds) flows"
awk '$1=="tune" { k=$4 " " $5 " " $3 " " $6; v[k]=v[k] " " $7; f[k]=f[k] " " $8; if (!(k in seen)) { seen[k]=1; order[++n]=k } }
    END { for (i = 1; i <= n; i++) { k=order[i]; m=split(v[k], a, " ");
            for (x = 2; x <= m; x++) { t=a[x]; y=x-1; while (y >= 1 && a[y]+0 > t+0) { a[y+1]=a[y]; y-- } a[y+1]=t }
            med = m % 2 ? a[(m+1)/2] : (a[m/2] + a[m/2+1]) / 2
            split(f[k], g, " "); same="equal"; for (x = 2; x <= m; x++) if (g[x] != g[1]) same="DIFFER"
            print k, med, "(" v[k] " )", same } }' "$O/cold8.log"
IFS=";" read -ra prof <<<"${PROF_V:-}"
for spec in ${PROF_INSTANCES:-1920x1080:8:5 1920x1080:4:1}; do
    IFS=":" read -r size conn seed <<<"$spec"
    for v in "${prof[@]}"; do
        IFS=":" read -r name envs <<<"$v"
        echo "== profile $name $spec (gcut_bench --verbose, second of 2 solves)"
        # shellcheck disable=SC2086,SC2046
        env ${envs//,/ } timeout "${BENCH_TIMEOUT:-20}" "$B/gcut_bench" $(where_of "$size" "$conn") \
            --levels hard --seed "$seed" --solvers cuda-grid --repeats 2 --verbose --no-markdown \
            --csv /dev/null 2>&1 | grep -E "cycle|flow|block time|first relabel" | tail -n "${PROF_TAIL:-14}"
    done
done
if [ -n "${PEIBFS:-}" ]; then
    PEIBFS=$(readlink -f "$PEIBFS")
    pw=$(mktemp -d)
    IFS=";" read -ra pv <<<"${PEIBFS_V:-base:}"
    for spec in 1920x1080:8 2048x2048:4 192x192x192:6; do
        IFS=":" read -r size conn <<<"$spec"
        case $size in *x*x*) gs="--size ${size%%x*}x${size%%x*}x${size%%x*}" ;; *) gs="--size $size" ;; esac
        # shellcheck disable=SC2086
        "$B/gcut" gen synth $gs --seed 5 --level hard --connectivity "$conn" --grid "$pw/g.grid" \
            >/dev/null 2>&1 && "$B/par_grid2dimacs" "$pw/g.grid" "$pw/g.max" >/dev/null &&
            rm -f "$pw/g.grid" || echo "peibfs: instance $spec failed"
        gpu_rows() {
            for v in "${pv[@]}"; do
                IFS=":" read -r name envs <<<"$v"
                # shellcheck disable=SC2086,SC2046
                env ${envs//,/ } timeout "${BENCH_TIMEOUT:-20}" "$B/gcut_bench" $(where_of "$size" "$conn") \
                    --levels hard --seed 5 --solvers cuda-grid --repeats 5 --no-markdown --csv - \
                    2>>"$O/bench.err" | grep -v '^instance,' |
                    awk -F, -v n="$name" -v c="$conn" '{print "peibfs-run", n, $1, "c" c, "cuda-grid solve_ms", $10, "flow", $11, "sweeps", $14, "relabels", $15}'
            done
        }
        gpu_rows
        (cd "$pw" && timeout 120 "$PEIBFS" peibfs g.max --threads 16 --repeats "${PEIBFS_REPEATS:-5}" 2>&1) |
            awk -v s="$spec" '$1=="c" && $2=="run" { for (i = 3; i < NF; i++) { if ($i=="solve_ms") v=v " " $(i+1); if ($i=="flow") f=$(i+1) } }
                END { print "peibfs-run P-EIBFS", s, "solve_ms" v, "flow", f }'
        gpu_rows
        rm -f "$pw/g.max"
    done
    rm -rf "$pw"
fi
san_env=${SAN_ENV:-}
if [ -n "${MEMCHECK:-}" ]; then
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    env ${san_env//,/ } GCUT_TEST_QUICK=1 timeout "${SAN_TIMEOUT:-150}" compute-sanitizer --tool memcheck \
        --error-exitcode 9 "$TG" >"$O/san.tmp" 2>&1
    echo "memcheck test_cuda_grid [${san_env:-default}] rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(grep -E 'ERROR SUMMARY|passed,' "$O/san.tmp" | tr '\n' ' ')"
fi
if [ -n "${RACECHECK:-}" ]; then
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    env ${san_env//,/ } GCUT_TEST_QUICK=2 timeout "${RACE_TIMEOUT:-120}" compute-sanitizer --tool racecheck \
        --error-exitcode 9 "$TG" >"$O/san.tmp" 2>&1
    echo "racecheck test_cuda_grid [${san_env:-default}] rc=$? $((($(date +%s%N) - s) / 1000000)) ms: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|hazard|passed,' "$O/san.tmp" | head -5 | tr '\n' ' ')"
fi
rm -f "$O/san.tmp"
echo "total: $(($(date +%s) - t0)) s"
