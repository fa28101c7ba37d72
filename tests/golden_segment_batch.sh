#!/usr/bin/env bash
# golden_segment_batch.sh - `gcut segment --batch LIST`: every line segmented in one process (and
# three at once with --jobs), each mask byte-identical to the one-image command's on the same
# input, and clean failures (a bad
# line or a missing file: exit 1 naming it, the other lines still done; options beside --batch
# that LIST replaces: exit 2).
# Usage: golden_segment_batch.sh PATH/TO/gcut   (GCUT_SOURCE_DIR = repository root)
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

"$gcut" gen synth --size 160x120 --level hard --seed 5 -o "$work/s1.png" \
    --seeds "$work/s1-seeds.png" >/dev/null || fail "gen synth 1"
"$gcut" gen synth --size 96x64 --level easy --seed 6 -o "$work/s2.png" \
    --seeds "$work/s2-seeds.png" >/dev/null || fail "gen synth 2"
ex="$src/examples"
{
    echo "# a comment, then a blank line"
    echo
    echo "$ex/camera.png $ex/camera-seeds.png $work/b1.png"
    echo "  $work/s1.png $work/s1-seeds.png $work/b2.png"
    echo "$work/s2.png $work/s2-seeds.png $work/b3.png"
} >"$work/list"
for solver in bk cpu-pr; do
    if "$gcut" segment --batch "$work/list" --solver "$solver" >"$work/out" 2>&1; then pass; else
        fail "batch with $solver: exit $?"
        sed 's/^/    /' "$work/out" >&2
    fi
    grep -q "3 images segmented, 0 failed" "$work/out" && pass || fail "batch summary ($solver)"
    k=1
    for pair in "$ex/camera.png $ex/camera-seeds.png" "$work/s1.png $work/s1-seeds.png" \
        "$work/s2.png $work/s2-seeds.png"; do
        set -- $pair
        "$gcut" segment "$1" --seeds "$2" -o "$work/one$k.png" --solver "$solver" \
            >/dev/null 2>&1 || fail "one-image run $k ($solver)"
        cmp -s "$work/b$k.png" "$work/one$k.png" && pass ||
            fail "batch mask $k differs from the one-image mask ($solver)"
        k=$((k + 1))
    done
    # Three images at once: the same masks.
    "$gcut" segment --batch "$work/list" --solver "$solver" --jobs 3 >"$work/out" 2>&1 &&
        grep -q "3 images segmented, 0 failed.*with 3 jobs" "$work/out" && pass ||
        fail "batch --jobs 3 ($solver)"
    for k in 1 2 3; do
        cmp -s "$work/b$k.png" "$work/one$k.png" && pass ||
            fail "batch --jobs 3 mask $k differs from the one-image mask ($solver)"
    done
done

# A malformed line and a missing seed mask fail alone; the good line is still done.
{
    echo "$work/s2.png $work/s2-seeds.png $work/c1.png"
    echo "only two-fields"
    echo "$work/s2.png $work/nope.png $work/c2.png"
} >"$work/bad"
"$gcut" segment --batch "$work/bad" --solver bk >"$work/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && pass || fail "bad list: exit $rc, expected 1"
grep -q "bad:2: expected 'IMAGE SEEDS MASK_OUT'" "$work/out" && pass || fail "bad line not named"
grep -q "nope.png" "$work/out" && pass || fail "missing seed mask not named"
grep -q "1 images segmented, 2 failed" "$work/out" && pass || fail "bad list summary"
[ -f "$work/c1.png" ] && pass || fail "the good line of a bad list was not written"
"$gcut" segment --batch "$work/missing-list" >"$work/out" 2>&1
[ $? -eq 1 ] && pass || fail "missing list: expected exit 1"
"$gcut" segment --batch "$work/list" -o "$work/x.png" >"$work/out" 2>&1
[ $? -eq 2 ] && pass || fail "--batch with -o: expected exit 2"

echo "golden_segment_batch: $checks passed, $failures failed"
[ "$failures" -eq 0 ]
