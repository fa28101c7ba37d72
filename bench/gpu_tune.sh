#!/usr/bin/env bash
# gpu_tune.sh - knob variants of cuda-grid alternated in one device call (docs/CUDA-GRID.md,
# "Fifth session"): for each instance of TUNE_INSTANCES ("WxH:CONN" or "NxNxN:CONN", hard
# synthetic, seed TUNE_SEED) and REPS rounds, every variant of TUNE_VARIANTS ("name:ENV=V,ENV=V;
# ..."; an empty env list is the default) solves it TUNE_REPEATS times through gcut_bench in its
# own process (with bk in the same process tree when TUNE_BK=1, flows compared); then the
# median per variant and instance of the per-process medians. Build: BUILD (default build-new).
# Log: $OUT/tune.log (gcut_bench's stderr: TUNE_ERR, default /tmp/gpu_tune.err).
set -u
O=${OUT:-bench/out/tune}
mkdir -p "$O"
B=${BUILD:-build-new}
IFS=";" read -ra variants <<<"${TUNE_VARIANTS:-default:}"
solvers=cuda-grid
[ -n "${TUNE_BK:-}" ] && solvers=cuda-grid,bk
for spec in ${TUNE_INSTANCES:-1920x1080:8}; do
    size=${spec%%:*}; conn=${spec##*:}
    case $size in *x*x*) args="--sizes none --volumes ${size%%x*}";;
    *) args="--sizes $size --volumes none --connectivity $conn";; esac
    for r in $(seq 1 "${REPS:-3}"); do
        for v in "${variants[@]}"; do
            IFS=":" read -r name envs <<<"$v"
            # shellcheck disable=SC2086
            env ${envs//,/ } timeout 120 "$B/gcut_bench" $args --levels hard --seed "${TUNE_SEED:-1}" \
                --solvers "$solvers" --repeats "${TUNE_REPEATS:-5}" --no-markdown --csv - 2>>"${TUNE_ERR:-/tmp/gpu_tune.err}" |
                grep -v '^instance,' | awk -F, -v n="$name" -v r="$r" -v c="$conn" \
                '{print "tune", r, n, $1, "c" c, $6, $10, $11, $14, $15}'
            rc=${PIPESTATUS[0]} # read at once: the test below would replace it
            [ "$rc" -eq 0 ] || echo "tune: gcut_bench exit $rc ($name $spec)"
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
