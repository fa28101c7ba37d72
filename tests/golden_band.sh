#!/usr/bin/env bash
# golden_band.sh - `gcut segment --levels` (multilevel narrow-banded cuts, docs/BAND.md) end to
# end: a generated synthetic image and volume segmented banded with --check (the printed gap is
# >= 0 and the check's minimum equals a plain full run's flow), the per-level and energy lines,
# a band as wide as the image giving the exact minimum, and clean usage errors.
# Usage: golden_band.sh PATH/TO/gcut   (GCUT_SOURCE_DIR = repository root)
set -u
gcut="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
checks=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
# expect CODE DESCRIPTION -- command...: run, keep stdout+stderr in $work/out, check the code.
expect() {
    local want="$1" what="$2"
    shift 3
    "$@" >"$work/out" 2>&1
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, expected $want"
        sed 's/^/    /' "$work/out" >&2
    else
        checks=$((checks + 1))
    fi
}
grep_out() {
    if grep -Eq -- "$1" "$work/out"; then checks=$((checks + 1)); else
        fail "$2: no '$1' in output"
        sed 's/^/    /' "$work/out" >&2
    fi
}

expect 0 "gen 2D" -- "$gcut" gen synth --size 301x203 --seed 4 --level hard -o "$work/img.png" \
    --seeds "$work/seeds.png"
# One cut (--iterations 1): the energy the banded solve approximates; the default with seeds
# would re-fit the models over GrabCut rounds and so minimise another energy.
expect 0 "full" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" -o "$work/full.png" \
    --solver bk --iterations 1
flow=$(awk '/^solve/{print $NF}' "$work/out")
expect 0 "banded --check" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" \
    -o "$work/band.png" --solver bk --levels 2 --band 1 --check
grep_out '^level 2 .* 76x51 in full' "per-level line of the coarsest level"
grep_out '^level 0 .* 301x203 band: [0-9]+ nodes' "per-level line of the finest band"
grep_out '^energy +[0-9]+' "energy line"
grep_out "^check .* flow $flow = minimum energy; [0-9]+ pixels differ" "check names the full minimum"
energy=$(awk '/^energy/{print $2}' "$work/out")
if [ -n "$flow" ] && [ -n "$energy" ] && [ "$energy" -ge "$flow" ]; then checks=$((checks + 1)); else
    fail "banded energy '$energy' below the minimum '$flow'"
fi
[ -s "$work/band.png" ] && checks=$((checks + 1)) || fail "no banded mask written"
expect 0 "band covering the image" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" \
    -o "$work/band.png" --solver bk --levels 3 --band 400 --check
grep_out "energy gap 0 .*a minimum" "a band as wide as the image gives the minimum"
expect 0 "gen 3D" -- "$gcut" gen synth --size 37x30x21 --seed 2 -o "$work/vol.raw" \
    --seeds "$work/vseeds.raw"
expect 0 "volume banded --check" -- "$gcut" segment --raw 21x30x37 "$work/vol.raw" \
    --seeds "$work/vseeds.raw" -o "$work/vmask.raw" --levels auto --band-grow --check
grep_out '^check .* voxels|^check .* pixels differ' "volume check"
expect 2 "bad --levels" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" \
    -o "$work/x.png" --levels 9
grep_out "bad value '9' for --levels" "names the bad --levels"
expect 2 "bad --band" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" \
    -o "$work/x.png" --levels 1 --band -3
expect 1 "grids-only band solver" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" \
    -o "$work/x.png" --levels 1 --band-solver grid-bk
grep_out "band_solver 'grid-bk' takes grids only" "names the band solver that cannot take a band"
expect 0 "bands on bk, named" -- "$gcut" segment "$work/img.png" --seeds "$work/seeds.png" \
    -o "$work/band.png" --solver bk --levels 2 --band 1 --band-solver bk
grep_out '^level 0 .* band: .*\(bk\), flow' "the band's solver on its level line"
echo "golden_band: $checks passed, $failures failed"
[ "$failures" -eq 0 ]
