#!/bin/bash
# parallel_16core.sh - gcut's parallel max-flow solvers (parallel-bk, cpu-pr) against gcut bk and
# the parallel solvers of Jensen et al.'s review (P-EIBFS, P-ARD through the review code's
# mfa_maxflow binary) on the hard synthetic grids of issue #16; build and solve apart, medians,
# flows checked equal. docs/CPU-PARALLEL.md and docs/PERFORMANCE.md ("Parallel max-flow").
#
# usage: bash bench/parallel_16core.sh [-m MFA_MAXFLOW] [-t THREADS] [-r REPEATS] [-o OUTDIR]
#                                      [-i "WxH[xD]:CONN ..."] [-s "BLOCKS ..."] [-b BUILD_DIR]
#                                      [-p PEERS] [-w WORK_DIR]
#   -m  the review's mfa_maxflow binary; without it (or not executable) the peers are skipped
#       and the table says so
#   -p  comma list of its algorithms (default peibfs,pard)
#   -w  folder for the instances (default: the output folder); they are large (4096x4096:
#       ~400 MB as a grid file, ~2 GB as DIMACS while a peer reads it)
#   -t  threads of every parallel solver (default: nproc)
#   -r  runs per gcut solver and instance (default 3; each its own process, the solvers' order
#       rotating run by run); each peer runs once with --repeats REPEATS (one file read)
#   -o  output folder (default bench/out/par16): instances, raw CSV, table, profiles
#   -i  instances, hard synthetic seed 5 (default "2048x2048:4 1920x1080:8 192x192x192:6
#       4096x4096:4"); "photo:WxH" is instead the energy of `gcut segment`'s one cut of the
#       hard synthetic photo (seed 1, its seeds; `--write-grid`), issue #17's 1080p photo at
#       photo:1920x1080
#   -S  gcut solvers timed on every instance (default "bk parallel-bk cpu-pr"; grid-ibfs too)
#   -s  variants of parallel-bk to run too on every instance (default none): a number N
#       (GCUT_QPBO_BLOCKS=N), rows (tiles of whole rows / slices, GCUT_PBK_TILES=rows),
#       stripes (bk's serial layout cut into index ranges, GCUT_PBK_TILES=0), two-phase
#       (GCUT_PBK_OVERLAP=0), size-order (smallest union merged first, GCUT_PBK_ORDER=size),
#       tN (parallel-bk on N threads)
#   -b  build folder (default build-par16: Release, no CUDA; configured and built if missing)
# Every gcut row is `gcut maxflow FILE.grid` (build_ms: the solver's layout from the grid;
# solve_ms: the max flow and the cut); the peers read FILE.max, written from the same grid by
# bench/par_grid2dimacs (their build_ms: the review code's graph construction). Reading files
# is in neither.
set -u
mfa=""; peer_list=peibfs,pard; work=""; threads=$(nproc); repeats=3; out=bench/out/par16; sweep=""; build=build-par16
instances="2048x2048:4 1920x1080:8 192x192x192:6 4096x4096:4"; gsolvers="bk parallel-bk cpu-pr"
while getopts "m:t:r:o:i:s:b:p:w:S:h" o; do
    case $o in
    m) mfa=$OPTARG;; t) threads=$OPTARG;; r) repeats=$OPTARG;; o) out=$OPTARG;;
    i) instances=$OPTARG;; s) sweep=$OPTARG;; S) gsolvers=$OPTARG;; b) build=$OPTARG;; p) peer_list=$OPTARG;; w) work=$OPTARG;;
    *) sed -n '2,32p' "$0"; exit 2;;
    esac
done
[ -z "$mfa" ] || mfa=$(readlink -f "$mfa") # before the cd: a relative path is the caller's
cd "$(dirname "$0")/.." || exit 1
[ -n "$work" ] || work=$out
mkdir -p "$out" "$work"
if [ ! -x "$build/gcut" ] || [ ! -x "$build/par_grid2dimacs" ]; then
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF -DGCUT_BUILD_TESTS=OFF \
        >"$work/cmake.log" 2>&1 || { echo "configure failed: $work/cmake.log" >&2; exit 1; }
    cmake --build "$build" -j "$(nproc)" --target gcut_cli par_grid2dimacs >>"$work/cmake.log" 2>&1 ||
        { echo "build failed: $work/cmake.log" >&2; exit 1; }
fi
gcut=$PWD/$build/gcut
peers=()
if [ -n "$mfa" ] && [ -x "$mfa" ]; then
    IFS=, read -r -a peers <<<"$peer_list"
else
    echo "peers SKIPPED: no mfa_maxflow binary (-m PATH)" | tee "$out/peers-skipped.txt" >&2
fi
raw=$out/raw.csv
echo "instance,solver,run,build_ms,solve_ms,flow" >"$raw"
: >"$out/failures.txt"
: >"$out/profiles.txt"

gcut_run() { # label file solver [env...] -> appends a raw row
    local label=$1 name=$2 solver=$3 run=$4 th=$threads; shift 4
    [ "${1:-}" != "THREADS" ] || { th=$2; shift 2; }
    local o
    o=$(env "$@" "$gcut" maxflow --solver "$solver" --threads "$th" "$work/$name.grid" 2>&1)
    local b s f
    b=$(awk '$1=="c" && $2=="build_ms" {print $3}' <<<"$o")
    s=$(awk '$1=="c" && $2=="solve_ms" {print $3}' <<<"$o")
    f=$(awk '$1=="s" {print $2}' <<<"$o")
    echo "$name,$label,$run,${b:-NA},${s:-NA},${f:-NA}" >>"$raw"
    echo "  $name $label run $run: build $b solve $s flow $f" >&2
}

for spec in $instances; do
    size=${spec%%:*}; conn=${spec##*:}
    if [ "$size" = photo ]; then # the segmentation energy of issue #17's photo
        size=$conn; name=photo-$size
        "$gcut" gen synth --size "$size" --seed 1 --level hard -o "$work/$name.png" \
            --seeds "$work/$name-seeds.png" >/dev/null &&
            "$gcut" segment "$work/$name.png" --seeds "$work/$name-seeds.png" --iterations 1 \
                -o "$work/$name-mask.png" --write-grid "$work/$name.grid" >"$work/$name.segment.txt" ||
            { echo "photo failed for $spec" >&2; continue; }
    else
        name=hard-$size-c$conn
        "$gcut" gen synth --size "$size" --seed 5 --level hard --connectivity "$conn" \
            --grid "$work/$name.grid" || { echo "gen failed for $spec" >&2; continue; }
    fi
    # The certificate once per gcut solver (not timed), then the timed runs.
    read -r -a solvers <<<"$gsolvers"
    for s in "${solvers[@]}"; do
        "$gcut" maxflow --solver "$s" --threads "$threads" --verify --quiet "$work/$name.grid" \
            >"$work/$name.verify-$s.txt" 2>&1 || echo "VERIFY FAILED: $name $s" | tee -a "$out/failures.txt" >&2
    done
    for ((r = 0; r < repeats; r++)); do
        for ((j = 0; j < ${#solvers[@]}; j++)); do
            s=${solvers[$(((j + r) % ${#solvers[@]}))]}
            gcut_run "$s" "$name" "$s" $((r + 1))
        done
    done
    { echo "== $name"; GCUT_PBK_PROFILE=1 "$gcut" maxflow --solver parallel-bk \
        --threads "$threads" "$work/$name.grid" 2>&1; } >>"$out/profiles.txt"
    for v in $sweep; do
        case $v in
        rows) envs=(GCUT_PBK_TILES=rows);;
        stripes) envs=(GCUT_PBK_TILES=0);;
        two-phase) envs=(GCUT_PBK_OVERLAP=0);;
        size-order) envs=(GCUT_PBK_ORDER=size);;
        t[0-9]*) envs=(THREADS "${v#t}");;
        *[!0-9]*) echo "unknown variant $v" >&2; continue;;
        *) envs=(GCUT_QPBO_BLOCKS=$v); v=$v-blocks;;
        esac
        for ((r = 0; r < repeats; r++)); do
            gcut_run "parallel-bk/$v" "$name" parallel-bk $((r + 1)) "${envs[@]}"
        done
    done
    if [ ${#peers[@]} -gt 0 ]; then
        "$build/par_grid2dimacs" "$work/$name.grid" "$work/$name.max" || continue
        for p in "${peers[@]}"; do
            o=$(cd "$work" && timeout 300 "$mfa" "$p" "$name.max" --threads "$threads" \
                --repeats "$repeats" 2>&1)
            awk -v n="$name" -v p="$p" '$1=="c" && $2=="run" {
                for (i = 3; i < NF; i++) { if ($i=="build_ms") b=$(i+1); if ($i=="solve_ms") s=$(i+1);
                                           if ($i=="flow") f=$(i+1) }
                print n "," p "," $3 "," b "," s "," f }' <<<"$o" >>"$raw"
            echo "  $name $p: $(grep -c "^c run" <<<"$o") runs" >&2
        done
        rm -f "$work/$name.max"
    fi
done

{
    echo "parallel_16core: $(hostname), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'),"\
        "$(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), gcut ${GCUT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
    echo "threads $threads; medians of $repeats runs; flows checked against gcut bk's"
    echo
    echo "| instance | solver | build ms | solve ms | build + solve ms | flow = bk | x bk solve | x P-EIBFS solve | x P-EIBFS build + solve |"
    echo "|---|---|---:|---:|---:|---|---:|---:|---:|"
    awk -F, '
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 2; i <= n; i++) { t = a[i]; j = i - 1; while (j >= 1 && a[j] + 0 > t + 0) { a[j + 1] = a[j]; j-- } a[j + 1] = t }
        return n == 0 ? "" : (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    NR == 1 { next }
    {
        k = $1 SUBSEP $2
        if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
        if ($5 == "NA") { bad[k] = 1; next }
        b[k] = b[k] " " $4; s[k] = s[k] " " $5; t[k] = t[k] " " ($4 + $5)
        if (!(k in flow)) flow[k] = $6; else if (flow[k] != $6) bad[k] = 1
    }
    END {
        for (i = 1; i <= nk; i++) {
            split(order[i], kk, SUBSEP); inst = kk[1]; sol = kk[2]
            mb = median(b[order[i]]); ms = median(s[order[i]]); mt = median(t[order[i]])
            ref = inst SUBSEP "bk"; pe = inst SUBSEP "peibfs"
            eq = (order[i] in bad) ? "FAILED" : (flow[order[i]] == flow[ref]) ? "yes" : "NO"
            xb = (ms > 0 && (ref in s)) ? sprintf("%.2f", median(s[ref]) / ms) : "-"
            xp = (ms > 0 && (pe in s)) ? sprintf("%.2f", median(s[pe]) / ms) : "-"
            xt = (mt > 0 && (pe in t)) ? sprintf("%.2f", median(t[pe]) / mt) : "-"
            printf "| %s | %s | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n", inst, sol, mb, ms, mt, eq, xb, xp, xt
        }
    }' "$raw"
} | tee "$out/table.md"
if [ -s "$out/failures.txt" ]; then cat "$out/failures.txt"; else rm -f "$out/failures.txt"; fi
