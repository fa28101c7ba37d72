#!/usr/bin/env bash
# band_cpu.sh - multilevel narrow-banded cuts (gcut segment --levels; docs/BAND.md) against the
# full solve of the same solver on the synthetic benchmark (gcut gen synth), same run, same
# machine. Full and banded runs alternate (A B A B ...) so that load hits both sides; each
# side's time is `gcut segment`'s "cut" line (energy construction + solve, the banded side with
# every level's coarsening, band and graph building); medians of RUNS. One more banded run with
# --check gives the pixels that differ from the exact cut, the energy gap and each level's band.
# The CPU columns are each whole process's user + system time (GNU time; medians), which a
# loaded machine inflates less than wall time; they include what both sides share (reading the
# PNG, learning the colour model).
#
#   bench/band_cpu.sh [path/to/gcut]
#   env: SIZES ("1920x1080 3840x2160"), DIFFS ("easy hard"), RUNS (3), LEVELS (auto), BAND (2),
#        SOLVER (bk: the full side's solver and the coarsest level's), EXTRA (more options for
#        the banded side, e.g. --band-grow), WORK (/tmp/gcut-band-bench)
set -euo pipefail
gcut=${1:-build/gcut}
sizes=${SIZES:-"1920x1080 3840x2160"}
diffs=${DIFFS:-"easy hard"}
runs=${RUNS:-3}
levels=${LEVELS:-auto}
band=${BAND:-2}
solver=${SOLVER:-bk}
extra=${EXTRA:-}
work=${WORK:-/tmp/gcut-band-bench}
mkdir -p "$work"

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
cut_ms() { awk '/^cut /{print $2}'; }
# run_cut OUTVAR CPUVAR command...: the command's "cut" ms and its process CPU seconds.
run_cut() {
    local -n ms_=$1 cpu_=$2
    shift 2
    /usr/bin/time -f '%U %S' -o "$work/time.txt" "$@" >"$work/out.txt"
    ms_=$(cut_ms <"$work/out.txt")
    cpu_=$(awk '{print $1 + $2}' "$work/time.txt")
}

echo "machine: $(uname -n), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "gcut: $gcut; full: --solver $solver; banded: --solver $solver --levels $levels --band $band $extra; runs: $runs"
echo
echo "| image | level | full ms | banded ms | speed-up | CPU s full / banded | pixels differ | energy gap | levels: band nodes (share), ms |"
echo "|---|---|---|---|---|---|---|---|---|"
for size in $sizes; do
    for diff in $diffs; do
        img="$work/$diff-$size.png" seeds="$work/$diff-$size-seeds.png"
        [ -f "$img" ] || "$gcut" gen synth --size "$size" --seed 1 --level "$diff" -o "$img" \
            --seeds "$seeds" >/dev/null
        full=() banded=() fcpu=() bcpu=()
        for ((r = 0; r < runs; r++)); do
            run_cut ms cpu "$gcut" segment "$img" --seeds "$seeds" -o "$work/full.png" --solver "$solver"
            full+=("$ms") fcpu+=("$cpu")
            # shellcheck disable=SC2086
            run_cut ms cpu "$gcut" segment "$img" --seeds "$seeds" -o "$work/band.png" --solver "$solver" \
                --levels "$levels" --band "$band" $extra
            banded+=("$ms") bcpu+=("$cpu")
        done
        fm=$(printf '%s\n' "${full[@]}" | median)
        bm=$(printf '%s\n' "${banded[@]}" | median)
        fc=$(printf '%s\n' "${fcpu[@]}" | median)
        bc=$(printf '%s\n' "${bcpu[@]}" | median)
        # shellcheck disable=SC2086
        check=$("$gcut" segment "$img" --seeds "$seeds" -o "$work/band.png" --solver "$solver" \
            --levels "$levels" --band "$band" $extra --check)
        differ=$(echo "$check" | awk '/^check/{for (i = 1; i <= NF; i++) if ($i == "differ") {
                 p = $(i+1); gsub(/[(),]/, "", p); print $(i-2), "(" p ")"}}')
        gap=$(echo "$check" | awk '/^check/{for (i = 1; i <= NF; i++) if ($i == "gap") {
                 p = $(i+2); gsub(/[():,]/, "", p); print $(i+1), "(" p ")"}}')
        lv=$(echo "$check" | awk '/^level/{
                ms = $3; if ($0 ~ /in full/) {printf "L%s full %.0f ms; ", $2, ms}
                else {for (i = 1; i <= NF; i++) if ($i == "nodes") {n = $(i-1); s = $(i+1)}
                      printf "L%s %s %s %.0f ms; ", $2, n, s, ms}}')
        printf '| %s | %s | %.0f (%s) | %.0f (%s) | %.2fx | %s / %s | %s | %s | %s |\n' "$size" "$diff" \
            "$fm" "$(IFS=/; echo "${full[*]}")" "$bm" "$(IFS=/; echo "${banded[*]}")" \
            "$(awk -v a="$fm" -v b="$bm" 'BEGIN {print a / b}')" "$fc" "$bc" "$differ" "$gap" "$lv"
    done
done
