#!/usr/bin/env bash
# band_volume.sh - multilevel narrow-banded cuts on synthetic volumes (gcut gen synth, raw 8-bit
# gray, ellipsoids; docs/BAND.md): for each side length, the banded solve's time per level, band
# share and peak memory (GNU time's maximum resident set), and, where FULL=1 and the full grid
# fits, the full solve in the same run (alternating, RUNS each, medians) with --check's pixels
# that differ and energy gap. Volumes too large for a full grid are run banded only.
#
#   bench/band_volume.sh [path/to/gcut]
#   env: SIDES ("128 256"), DIFF (easy), RUNS (1), LEVELS (auto), BAND (2), SOLVER (bk),
#        FULL (1: also time the full solve and --check; 0: banded only), EXTRA (banded options),
#        WORK (/tmp/gcut-band-vol; holds the raw files: 3 bytes per voxel)
set -euo pipefail
gcut=${1:-build/gcut}
sides=${SIDES:-"128 256"}
diff=${DIFF:-easy}
runs=${RUNS:-1}
levels=${LEVELS:-auto}
band=${BAND:-2}
solver=${SOLVER:-bk}
full=${FULL:-1}
extra=${EXTRA:-}
work=${WORK:-/tmp/gcut-band-vol}
mkdir -p "$work"
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
timed() { # run "$@" under GNU time; print its stdout, then "maxrss KB" and "wall S"
    /usr/bin/time -f 'maxrss %M KB, wall %e s' -o "$work/time.txt" "$@"
    cat "$work/time.txt"
}
echo "machine: $(uname -n), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GB memory"
echo "gcut: $gcut; solver $solver; banded: --levels $levels --band $band $extra; runs: $runs"
for s in $sides; do
    img="$work/$diff-$s.raw" seeds="$work/$diff-$s-seeds.raw"
    [ -f "$img" ] || "$gcut" gen synth --size "${s}x${s}x${s}" --seed 1 --level "$diff" -o "$img" \
        --seeds "$seeds" >/dev/null
    raw=(--raw "${s}x${s}x${s}")
    echo
    echo "== ${s}^3 $diff"
    fm=() bm=()
    do_full=$full
    for ((r = 0; r < runs; r++)); do
        if [ "$do_full" = 1 ]; then
            if out=$(timed "$gcut" segment "${raw[@]}" "$img" --seeds "$seeds" -o "$work/full.raw" \
                --solver "$solver" 2>"$work/err.txt"); then
                fm+=("$(echo "$out" | awk '/^cut /{print $2}')")
                echo "full:   cut $(echo "$out" | awk '/^cut /{print $2}') ms; $(echo "$out" | tail -1)"
            else
                echo "full:   failed: $(tail -1 "$work/err.txt") ($(cat "$work/time.txt" | tail -1))"
                do_full=0
            fi
        fi
        # shellcheck disable=SC2086
        out=$(timed "$gcut" segment "${raw[@]}" "$img" --seeds "$seeds" -o "$work/band.raw" \
            --solver "$solver" --levels "$levels" --band "$band" $extra 2>/dev/null)
        bm+=("$(echo "$out" | awk '/^cut /{print $2}')")
        echo "banded: cut $(echo "$out" | awk '/^cut /{print $2}') ms; $(echo "$out" | tail -1)"
    done
    echo "$out" | grep -E '^(level|energy|build|model|total)'
    if [ "$do_full" = 1 ]; then
        f=$(printf '%s\n' "${fm[@]}" | median) b=$(printf '%s\n' "${bm[@]}" | median)
        echo "median cut: full $f ms, banded $b ms, speed-up $(awk -v a="$f" -v b="$b" 'BEGIN {printf "%.2f", a / b}')x"
        # shellcheck disable=SC2086
        "$gcut" segment "${raw[@]}" "$img" --seeds "$seeds" -o "$work/band.raw" --solver "$solver" \
            --levels "$levels" --band "$band" $extra --check 2>/dev/null | grep -E '^check'
    fi
done
