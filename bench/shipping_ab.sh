#!/usr/bin/env bash
# shipping_ab.sh OLD_GCUT NEW_GCUT [RUNS] - docs/PERFORMANCE.md, "Shipping (issue #10)": two
# gcut binaries run alternately (A B A B) on malformed headers (wall time and peak resident
# memory from /usr/bin/time) and on valid inputs (their own c read/build/solve lines and
# segment's total), RUNS times each (default 5). Flows and masks are printed for comparison.
set -euo pipefail
old=${1:?usage: shipping_ab.sh OLD_GCUT NEW_GCUT [RUNS]}
new=${2:?usage: shipping_ab.sh OLD_GCUT NEW_GCUT [RUNS]}
runs=${3:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
work=${TMPDIR:-/tmp}/gcut-shipping-ab
mkdir -p "$work" && cd "$work"
printf 'p max 100000000 0\n' >hdr.max
[ -f big.grid ] || "$new" gen synth --size 2048x2048 --level hard --grid big.grid >/dev/null
for _ in $(seq "$runs"); do
    for side in old new; do
        bin=${!side}
        /usr/bin/time -f "hdr $side %e s %M KB" "$bin" maxflow hdr.max >/dev/null 2>t.err || true
        tail -1 t.err
        printf 'gcut-grid 1 ndim 2 shape 8000 8000 conn 4\n' |
            /usr/bin/time -f "pipe $side %e s %M KB" "$bin" maxflow - >/dev/null 2>t.err || true
        tail -1 t.err
        "$bin" maxflow --solver bk big.grid >g.out
        echo "grid $side $(grep -E '^(s|c read_ms|c build_ms|c solve_ms)' g.out | tr '\n' ' ')"
        "$bin" segment "$src/examples/coffee.png" --seeds "$src/examples/coffee-seeds.png" \
            -o "m-$side.png" >s.out
        echo "seg $side $(grep -E '^(total|solve)' s.out | tr -s ' ' | tr '\n' ' ')"
    done
done
cmp m-old.png m-new.png && echo "masks equal"
