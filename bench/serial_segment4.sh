#!/usr/bin/env bash
# serial_segment4.sh - `gcut segment` end to end where auto's 4-connected grid rule acts
# (docs/CPU-SERIAL.md, "Fifth pass"): one cut (--iterations 1) at --connectivity 4 on the CPU
# (CUDA_VISIBLE_DEVICES= hides any GPU), `--solver grid-bk` (what auto picked before the fifth
# pass) against `--solver auto` (grid-ibfs now), alternating, each run its own process; medians of
# the printed solve, cut (construction + solve) and total (file to mask); masks compared byte for
# byte. Then one GrabCut run (--rect, 5 rounds) with auto, to show which solver it names.
#
# usage: bench/serial_segment4.sh [-r RUNS] [-b BUILD_DIR] [-o OUT_DIR] SIZE...
#   SIZE like hard-1920x1080 or easy-3840x2160 (gcut gen synth --seed 5, its seeds)
# Exit status: 0, or 2 if the masks differ or a run fails.
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=7
BUILD_DIR=build-serial
OUT=bench/out/segment4
while getopts "r:b:o:" opt; do
    case $opt in
    r) RUNS=$OPTARG ;;
    b) BUILD_DIR=$OPTARG ;;
    o) OUT=$OPTARG ;;
    *) sed -n 2,12p "$0" >&2; exit 64 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n 2,12p "$0" >&2; exit 64; }
mkdir -p "$OUT"
gcut=$BUILD_DIR/gcut
export CUDA_VISIBLE_DEVICES=
status=0
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1 /proc/loadavg)"
for name in "$@"; do
    level=${name%%-*} size=${name#*-}
    img=$OUT/$name.png seeds=$OUT/$name-seeds.png
    [ -s "$img" ] || "$gcut" gen synth --size "$size" --seed 5 --level "$level" -o "$img" \
        --seeds "$seeds" >/dev/null || { status=2; continue; }
    log=$OUT/$name.runs
    : >"$log"
    for ((r = 0; r < RUNS; r++)); do
        order="grid-bk auto"
        [ $((r % 2)) = 1 ] && order="auto grid-bk"
        for s in $order; do
            "$gcut" segment "$img" --seeds "$seeds" -o "$OUT/$name-$s.png" --connectivity 4 \
                --iterations 1 --solver "$s" 2>&1 |
                awk -v s="$s" '/^solve/ {v=$2; sv=$4} /^cut/ {c=$2} /^total/ {t=$2}
                    END {print s, sv, v, c, t}' >>"$log" || status=2
        done
    done
    cmp -s "$OUT/$name-grid-bk.png" "$OUT/$name-auto.png" || { echo "$name: MASKS DIFFER"; status=2; }
    python3 - "$log" "$name" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for s in ("grid-bk", "auto"):
    mine = [r for r in rows if r[0] == s and len(r) == 5]
    med[s] = [statistics.median(float(r[k]) for r in mine) for k in (2, 3, 4)]
    print("%-16s --solver %-8s (%s) solve %7.1f ms  cut %7.1f ms  total %7.1f ms  runs %d" % (
        sys.argv[2], s, mine[0][1], *med[s], len(mine)))
print("%-16s grid-bk / auto:   solve %.2fx  cut %.2fx  total %.2fx" % (
    sys.argv[2], *(a / b for a, b in zip(med["grid-bk"], med["auto"]))))
PY
done
name=$1
level=${name%%-*} size=${name#*-}
w=${size%x*} h=${size#*x}
"$gcut" segment "$OUT/$name.png" --rect $((w / 4)),$((h / 4)),$((w / 2)),$((h / 2)) \
    -o "$OUT/$name-rect.png" --solver auto 2>&1 | grep -E '^(solve|total)' | sed "s/^/grabcut --rect, auto: /"
exit $status
