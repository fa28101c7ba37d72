#!/usr/bin/env bash
# cpu_route.sh - issue #17's one-process bar on the CPU route: parallel-bk's variants on the
# energy of the hard 1920x1080 photo's one cut (`gcut segment --write-grid`), then whole
# `gcut segment` processes of both routes through bench/gpu_process.sh (fresh processes in
# turn, masks compared). docs/CPU-PARALLEL.md, "Seventh pass"; docs/PERFORMANCE.md.
#
# Environment (all optional):
#   BIN=build           folder with gcut and walltime
#   STAGES="grid route" OUT=bench/out/cpu-route  DATA=/tmp/gcut-cpu-route
#   SIZE=1920x1080  THREADS=$(nproc)  RUNS=5 (grid)  ROUTE_RUNS=10 (route)
#   GRID_VARIANTS="none:;pre168:GCUT_PBK_PREPASS=16,8"   LABEL:NAME=VALUE ..., ';' between,
#                       each a `gcut maxflow --solver parallel-bk` environment; run in turn
#                       (A B C A B C ...); every flow checked against bk's and certified once
#   BENCH_GRIDS="1920x1080:8 2048x2048:4"   the bench's hard synthetic grids (seed 5, WxH:CONN)
#                       timed with the same variants after the photo's energy
#   ROUTE_VARIANTS="gpu:...;cpu:..."   as bench/gpu_process.sh's VARIANTS
# The ninth pass (docs/CPU-PARALLEL.md, "Ninth pass") ran, on a build that had a switch
# GCUT_PBK_SETUP_LEGACY (since removed with the change it measured, which did not win),
#   GRID_VARIANTS="old:GCUT_PBK_PREPASS=16,8 GCUT_PBK_SETUP_LEGACY=1;new:GCUT_PBK_PREPASS=16,8"
#   ROUTE_VARIANTS="old:GCUT_PBK_SETUP_LEGACY=1;new:"
# The grid stage's profiles (grid-profiles.txt) keep parallel-bk's setup steps.
# The seventh pass's calls (docs/PERFORMANCE.md, "One process, seventh pass") set, for the tree
# as merged before it, GCUT_SEG_GRID_ZERO=1 GCUT_PBK_PREPASS_STOP=0 in a variant, e.g.
#   GRID_VARIANTS="old:GCUT_PBK_PREPASS=16,8 GCUT_SEG_GRID_ZERO=1 GCUT_PBK_PREPASS_STOP=0;new:GCUT_PBK_PREPASS=16,8"
#   ROUTE_VARIANTS="gpu:GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=0;old:GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=100000000 GCUT_SEG_GRID_ZERO=1 GCUT_PBK_PREPASS_STOP=0;auto:"
# Exit status: non-zero if a run failed, a flow differs from bk's, or masks differ.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build}
STAGES=${STAGES:-grid route}
OUT=${OUT:-bench/out/cpu-route}
DATA=${DATA:-/tmp/gcut-cpu-route}
SIZE=${SIZE:-1920x1080}
THREADS=${THREADS:-$(nproc)}
RUNS=${RUNS:-5}
ROUTE_RUNS=${ROUTE_RUNS:-10}
GRID_VARIANTS=${GRID_VARIANTS:-none:;pre168:GCUT_PBK_PREPASS=16,8}
CPU=GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=100000000
GPU=GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=0
BENCH_GRIDS=${BENCH_GRIDS:-}
ROUTE_VARIANTS=${ROUTE_VARIANTS:-gpu:$GPU;cpu:$CPU GCUT_PBK_PREPASS=none}
has() { [[ " $STAGES " == *" $1 "* ]]; }
mkdir -p "$OUT" "$DATA"
G=$BIN/gcut
status=0
echo "cpu_route: $(hostname), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc)" \
    "cores, $(date -u '+%Y-%m-%d %H:%M UTC'), $THREADS threads"

# One grid file: the variants in turn, flows against bk's, a table.
grid_variants() { # name file
    local name=$1 grid=$2 ref raw v o
    ref=$("$G" maxflow --solver bk --quiet "$grid" | awk '$1=="s" {print $2}')
    echo "== $name: bk flow $ref"
    IFS=';' read -ra variants <<<"$GRID_VARIANTS"
    raw=$OUT/grid-raw-$name.csv
    echo "variant,run,build_ms,solve_ms,flow" >"$raw"
    for v in "${variants[@]}"; do # the certificate once per variant (not timed)
        # shellcheck disable=SC2086,SC2046
        env ${v#*:} "$G" maxflow --solver parallel-bk --threads "$THREADS" --verify --quiet \
            "$grid" >/dev/null 2>&1 || { echo "VERIFY FAILED: $name ${v%%:*}"; status=1; }
    done
    for ((r = 1; r <= RUNS; r++)); do
        for v in "${variants[@]}"; do
            # shellcheck disable=SC2086
            o=$(env ${v#*:} "$G" maxflow --solver parallel-bk --threads "$THREADS" "$grid" 2>&1)
            awk -v l="${v%%:*}" -v r="$r" '$1=="c" && $2=="build_ms" {b=$3} $1=="c" &&
                $2=="solve_ms" {s=$3} $1=="s" {f=$2} END {print l "," r "," b "," s "," f}' \
                <<<"$o" >>"$raw"
        done
    done
    for v in "${variants[@]}"; do # one profile each (not timed)
        # shellcheck disable=SC2086
        { echo "== $name ${v%%:*}"; env ${v#*:} GCUT_PBK_PROFILE=1 "$G" maxflow --solver \
            parallel-bk --threads "$THREADS" "$grid" 2>&1 | grep -E "prepass|phase setup|Phase A|solve_ms"; } \
            >>"$OUT/grid-profiles.txt"
    done
    echo "| variant | build ms | solve ms (median of $RUNS) | range | flow = bk | x ${variants[0]%%:*} |"
    echo "|---|---:|---:|---|---|---:|"
    awk -F, -v ref="$ref" '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++) { t = a[i]; j = i - 1; while (j >= 1 && a[j] + 0 > t + 0) { a[j + 1] = a[j]; j-- } a[j + 1] = t }
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function lo(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
    function hi(list,   a, n, i, m) { n = split(list, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
    NR == 1 { next }
    { if (!($1 in s)) order[++k] = $1; b[$1] = b[$1] " " $3; s[$1] = s[$1] " " $4; if ($5 != ref) bad[$1] = 1 }
    END {
        base = median(s[order[1]])
        for (i = 1; i <= k; i++) { v = order[i]; m = median(s[v])
            printf "| %s | %.1f | %.1f | %s-%s | %s | %.2f |\n", v, median(b[v]), m, lo(s[v]), hi(s[v]),
                (v in bad) ? "NO" : "yes", base / m }
    }' "$raw" | tee "$OUT/grid-table-$name.md"
    if grep -q "| NO |" "$OUT/grid-table-$name.md"; then status=1; fi
}

if has grid; then
    img=$DATA/photo.png seeds=$DATA/seeds.png
    "$G" gen synth --size "$SIZE" --level hard --seed 1 -o "$img" --seeds "$seeds" >/dev/null &&
        "$G" segment "$img" --seeds "$seeds" -o "$DATA/mask-grid.png" --iterations 1 \
            --write-grid "$DATA/photo.grid" >"$OUT/write-grid.txt" || { echo "photo failed" >&2; exit 1; }
    grid_variants photo "$DATA/photo.grid"
    for spec in $BENCH_GRIDS; do # the bench's hard synthetic grids (seed 5), as parallel_16core.sh
        "$G" gen synth --size "${spec%%:*}" --seed 5 --level hard --connectivity "${spec##*:}" \
            --grid "$DATA/bench.grid" >/dev/null || { echo "gen failed: $spec" >&2; status=1; continue; }
        grid_variants "hard-${spec%%:*}-c${spec##*:}" "$DATA/bench.grid"
    done
fi

if has route; then
    env BIN="$BIN" STAGES=segment OUT="$OUT/route" RUNS="$ROUTE_RUNS" SIZE="$SIZE" \
        DATA="$DATA/route" VARIANTS="$ROUTE_VARIANTS" bash bench/gpu_process.sh || status=1
fi
exit $status
