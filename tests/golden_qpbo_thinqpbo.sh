#!/usr/bin/env bash
# golden_qpbo_thinqpbo.sh - `gcut qpbo` against Kolmogorov's QPBO (thinqpbo from PyPI) on
# random and multi-object energies: the same lower bound, the same set of labeled nodes (both
# label maximally, by weak persistencies) and the same strong labels. Skipped (exit 77) where
# python3 or thinqpbo is missing.
# Usage: golden_qpbo_thinqpbo.sh PATH/TO/gcut  (ctest passes it)
set -u
gcut=${1:?usage: golden_qpbo_thinqpbo.sh PATH/TO/gcut}
src=${GCUT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! python3 -c "import thinqpbo" 2>/dev/null; then
    echo "SKIP: python3 with thinqpbo not found (pip install thinqpbo)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/gcut-golden-thinqpbo.XXXXXX")
trap 'rm -rf "$work"' EXIT
seed=${GCUT_TEST_SEED:-20261123}
echo "seed $seed (replay with GCUT_TEST_SEED=$seed)"
passed=0
failed=0
check() { # NAME CONDITION-RESULT(0/1) DETAIL
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else
        failed=$((failed + 1))
        echo "FAIL: $1: $3" >&2
    fi
}
cases=()
for k in 0 1 2 3 4 5; do
    cases+=("qpbo-random --size $((20 + 13 * k))x$((30 + 7 * k)) --nonsub $((10 * k + 5)) --range $((5 + 40 * k)) --seed $((seed + k))")
done
cases+=("qpbo-objects --size 80x70 --objects 6 --seed $seed" "qpbo-objects --size 20x20x16 --objects 4 --seed $seed")
for c in "${cases[@]}"; do
    "$gcut" gen $c -o "$work/e.qpbo" >/dev/null || { check "$c" 1 "gen failed"; continue; }
    python3 "$src/tests/qpbo_thinqpbo.py" "$work/e.qpbo" "$work/k.lab" >"$work/k.out"
    for solver in qpbo pqpbo; do
        "$gcut" qpbo --solver $solver --threads 3 --labels "$work/g.lab" "$work/e.qpbo" >"$work/g.out" ||
            { check "$c $solver" 1 "gcut qpbo failed"; continue; }
        twice=$(awk '$2 == "twice_lower_bound" { print $3 }' "$work/k.out")
        want=$(( twice >= 0 ? (twice + 1) / 2 : twice / 2 ))
        got=$(awk '$2 == "lower_bound" { print $3 }' "$work/g.out")
        check "$c $solver bound" $([ "$got" = "$want" ]; echo $?) "lower bound $got, Kolmogorov's $want (twice $twice)"
        diff_set=$(paste "$work/g.lab" "$work/k.lab" | awk '(($1 < 0) != ($2 < 0)) { n++ } END { print n + 0 }')
        check "$c $solver labeled set" $([ "$diff_set" = 0 ]; echo $?) "$diff_set nodes labeled by one solver only"
        diff_strong=$(paste "$work/g.lab" "$work/k.lab.strong" | awk '$2 >= 0 && $1 != $2 { n++ } END { print n + 0 }')
        check "$c $solver strong labels" $([ "$diff_strong" = 0 ]; echo $?) "$diff_strong strong labels differ"
    done
done
echo "golden_qpbo_thinqpbo: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
