#!/usr/bin/env bash
# golden_grabcut.sh - `gcut segment --rect / --iterations` (GrabCut, Rother et al. 2004) end to
# end on the bundled photographs: masks written, box outside = background, seeds kept, warm and
# cold rounds giving the same mask, energies that never rise, and every bad box refused with
# a message that names it.
# Usage: golden_grabcut.sh PATH/TO/gcut   (GCUT_SOURCE_DIR = repository root)
set -u
gcut="$1"
src="${GCUT_SOURCE_DIR:?GCUT_SOURCE_DIR must point at the repository}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
checks=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
pass() { checks=$((checks + 1)); }
expect() {
    local want="$1" what="$2"
    shift 3
    "$@" >"$work/out" 2>&1
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, expected $want"
        sed 's/^/    /' "$work/out" >&2
    else
        pass
    fi
}
grep_out() {
    if grep -Eq -- "$1" "$work/out"; then pass; else
        fail "$2: no '$1' in output"
        sed 's/^/    /' "$work/out" >&2
    fi
}

coffee="$src/examples/coffee.png"
# Box alone, warm (default) and cold: the same mask, the energy of each round printed.
expect 0 "box" -- "$gcut" segment "$coffee" --rect 60,20,330,260 -o "$work/warm.png" --verbose
grep_out '^rounds +[1-5] ' "rounds line"
grep_out '^round 1 +energy [0-9.]+ nats' "energy per round"
# Energies never rise (printed with 6 decimals; compare as numbers).
if awk '/^round [0-9]+ +energy/ { e = $4 + 0; if (n++ && e > prev) bad = 1; prev = e }
        END { exit !(n >= 1 && !bad) }' "$work/out"; then pass; else
    fail "energy rose between rounds"
    sed 's/^/    /' "$work/out" >&2
fi
expect 0 "box, cold rounds" -- "$gcut" segment "$coffee" --rect 60,20,330,260 -o "$work/cold.png" --cold
if cmp -s "$work/warm.png" "$work/cold.png"; then pass; else fail "warm and cold masks differ"; fi
# Box and seeds together (the bundled strokes), more rounds.
expect 0 "box and seeds" -- "$gcut" segment "$coffee" --rect 60,20,330,260 \
    --seeds "$src/examples/coffee-seeds.png" --iterations 3 -o "$work/both.png"
grep_out '^seeds +[1-9][0-9]* foreground' "foreground seeds counted"
# Seeds alone with re-fitting.
expect 0 "seeds, 3 rounds" -- "$gcut" segment "$coffee" --seeds "$src/examples/coffee-seeds.png" \
    --iterations 3 -o "$work/seeds3.png"
grep_out '^rounds +[1-3] ' "rounds with seeds"
# Half-size first rounds: the coffee box has 85800 unknown pixels, so the default makes them
# (the warm = cold check above ran through them); none, an explicit count, and bad values.
expect 0 "box, coarse rounds default" -- "$gcut" segment "$coffee" --rect 60,20,330,260 \
    -o "$work/auto.png"
grep_out '^coarse +[1-4] rounds' "half-size rounds by default"
grep_out '^rounds +1 at full size' "one full-size round by default"
expect 0 "box, no coarse rounds" -- "$gcut" segment "$coffee" --rect 60,20,330,260 \
    --coarse-rounds none -o "$work/none.png"
if grep -Eq '^coarse' "$work/out"; then fail "--coarse-rounds none made half-size rounds"; else pass; fi
expect 0 "box, 2 coarse rounds of 3" -- "$gcut" segment "$coffee" --rect 60,20,330,260 \
    --iterations 3 --coarse-rounds 2 -o "$work/two.png"
grep_out '^coarse +[12] rounds' "explicit coarse rounds"
expect 2 "coarse rounds 0" -- "$gcut" segment "$coffee" --rect 1,2,3,4 --coarse-rounds 0 \
    -o "$work/x.png"
expect 2 "coarse rounds junk" -- "$gcut" segment "$coffee" --rect 1,2,3,4 --coarse-rounds x \
    -o "$work/x.png"
# A gray photograph (histogram model).
expect 0 "gray box" -- "$gcut" segment "$src/examples/camera.png" --rect 100,20,300,480 \
    -o "$work/camera.png"
grep_out 'histogram' "gray uses the histogram model"

# Bad boxes and options: exit 1 with a message naming the problem, or 2 for usage errors.
expect 1 "empty box" -- "$gcut" segment "$coffee" --rect 10,10,0,5 -o "$work/x.png"
grep_out 'is empty' "empty box named"
expect 1 "box outside" -- "$gcut" segment "$coffee" --rect 500,10,20,20 -o "$work/x.png"
grep_out 'outside the 450x300 image' "box outside named"
expect 1 "whole-image box" -- "$gcut" segment "$coffee" --rect 0,0,450,300 -o "$work/x.png"
grep_out 'covers the whole 450x300 image' "whole box named"
expect 2 "malformed box" -- "$gcut" segment "$coffee" --rect 1,2,3 -o "$work/x.png"
grep_out "bad value '1,2,3' for --rect" "malformed box named"
expect 2 "iterations 0" -- "$gcut" segment "$coffee" --rect 1,2,3,4 --iterations 0 -o "$work/x.png"
expect 2 "neither box nor seeds" -- "$gcut" segment "$coffee" -o "$work/x.png"
expect 2 "box on a volume" -- "$gcut" segment "$coffee" "$coffee" --rect 1,1,5,5 -o "$work/x.raw"

echo "golden_grabcut: $checks passed, $failures failed"
[ "$failures" -eq 0 ]
