#!/usr/bin/env bash
# video_sweep.sh - the propagation choices of docs/VIDEO.md measured: mean IoU and error of
# `gcut video` on the bundled coffee clip (against its reference masks) and on the easy and hard
# synthetic test videos at 320x240, 90 frames, seed 1 (against their truth), one option changed at a time from the defaults. Accuracy does
# not depend on machine load; the time per frame printed beside it does (shared machine).
#   bash bench/video_sweep.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
gcut="$build/gcut"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gcut" gen video --size 320x240 --frames 90 -o "$work/s1" --truth "$work/t1" >/dev/null
"$gcut" gen video --size 320x240 --frames 90 --level hard -o "$work/h1" --truth "$work/u1" >/dev/null
options=("" "--forget 0" "--forget 0.9" "--bins 16" "--bins 64" "--band-min 2"
    "--band-min 6" "--band-motion 0" "--band-motion 2" "--band-motion 4" "--no-colour-check"
    "--colour-reach 0" "--colour-reach 2" "--band-max 16" "--full-frame" "--lambda 25"
    "--lambda 100" "--connectivity 4")
run() { # INPUT INIT TRUTH OPTIONS
    # shellcheck disable=SC2086
    "$gcut" video "$1" --init "$2" -o "$work/m" --truth "$3" --quiet --queue 0 $4 |
        awk '/^per frame/ { t = $7 + $10 + $13 } /^truth/ { i = $4; e = $7; sub(/,/, "", i) }
             END { printf "%s %s %.1f", i, e, t }'
}
printf "| option | clip IoU | clip error | clip ms/frame | easy IoU | easy error | hard IoU | hard error |\n"
printf "|---|---|---|---|---|---|---|---|\n"
for o in "${options[@]}"; do
    read -r ci ce ct <<<"$(run examples/coffee-clip examples/coffee-clip-init.png examples/coffee-clip/reference "$o")"
    read -r si se _ <<<"$(run "$work/s1" "$work/t1/truth_000000.png" "$work/t1" "$o")"
    read -r ti te _ <<<"$(run "$work/h1" "$work/u1/truth_000000.png" "$work/u1" "$o")"
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "${o:-defaults}" "$ci" "$ce" "$ct" "$si" "$se" "$ti" "$te"
done
