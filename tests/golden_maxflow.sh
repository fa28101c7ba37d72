#!/usr/bin/env bash
# golden_maxflow.sh - the `gcut` command line on good and bad max-flow inputs: exit codes, the
# exact "s VALUE" line, --verify, --cut (checked by recomputing the cut's capacity from the
# file with awk), standard input, grid files, and error messages that name FILE:LINE.
# Usage: golden_maxflow.sh PATH/TO/gcut  (ctest passes it; GCUT_SOURCE_DIR = the repo root)
set -u
gcut=${1:?usage: golden_maxflow.sh PATH/TO/gcut}
src=${GCUT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
data=$src/tests/data
examples=$src/examples
work=$(mktemp -d "${TMPDIR:-/tmp}/gcut-golden-maxflow.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A hung solve is a failure, not a stuck suite.
limit=
if command -v timeout >/dev/null 2>&1; then limit="timeout 120"; fi

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# run EXPECTED_EXIT NAME ARGS...: runs gcut, keeps stdout/stderr in $work/out, $work/err.
run() {
    local want=$1 name=$2
    shift 2
    $limit "$gcut" "$@" >"$work/out" 2>"$work/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then pass; else
        fail "$name: exit $got, expected $want (stderr: $(head -c 400 "$work/err"))"
    fi
}

expect_line() { # NAME LINE: stdout has exactly this line
    if grep -qxF -- "$2" "$work/out"; then pass; else
        fail "$1: no line '$2' in output: $(head -c 400 "$work/out")"
    fi
}

expect_err() { # NAME TEXT: stderr contains TEXT
    if grep -qF -- "$2" "$work/err"; then pass; else
        fail "$1: stderr lacks '$2': $(head -c 400 "$work/err")"
    fi
}

# cut_value FILE.max CUT: capacity of the arcs leaving the source side listed in CUT.
cut_value() {
    awk 'NR == FNR { side[$1] = 1; next }
         $1 == "a" && ($2 in side) && !($3 in side) { total += $4 }
         END { printf "%d\n", total }' "$2" "$1"
}

# ---- the top-level command ----
run 0 "--help" --help
expect_line "--help" "  maxflow   solve a DIMACS max-flow or gcut grid problem exactly"
run 0 "--version" --version
if grep -qE '^gcut [0-9]+\.[0-9]+\.[0-9]+$' "$work/out"; then pass; else fail "--version: $(cat "$work/out")"; fi
run 0 "solvers" solvers
if grep -qE '^bk ' "$work/out"; then pass; else fail "solvers: bk not listed"; fi
run 2 "no command"
run 2 "unknown command" nosuchcommand

# ---- usage errors (exit 2) ----
run 0 "maxflow --help" maxflow --help
if grep -q '^usage: gcut maxflow' "$work/out"; then pass; else fail "maxflow --help text"; fi
run 2 "no input file" maxflow
run 2 "unknown option" maxflow --frobnicate "$data/clrs-26-1.max"
expect_err "unknown option" "--frobnicate"
run 2 "two inputs" maxflow "$data/clrs-26-1.max" "$data/clrs-26-1.max"
run 2 "--threads garbage" maxflow --threads many "$data/clrs-26-1.max"
run 2 "--solver without value" maxflow "$data/clrs-26-1.max" --solver
run 2 "unknown solver" maxflow --solver nosuch "$data/clrs-26-1.max"
expect_err "unknown solver" "no solver named 'nosuch'"
expect_err "unknown solver lists the others" "bk"

# ---- good DIMACS files ----
run 0 "clrs" maxflow --verify "$data/clrs-26-1.max"
expect_line "clrs" "s 23"
expect_line "clrs verify" "c verify: ok (cut capacity 23)"
if grep -q '^c solver ibfs$' "$work/out"; then pass; else fail "clrs: no 'c solver ibfs' line (auto)"; fi
for key in read_ms build_ms solve_ms nodes edges; do
    if grep -qE "^c $key " "$work/out"; then pass; else fail "clrs: no 'c $key' line"; fi
done

run 0 "clrs --cut" maxflow --cut "$work/clrs.cut" "$data/clrs-26-1.max"
if [ "$(tr '\n' ' ' <"$work/clrs.cut")" = "1 2 3 5 " ]; then pass; else
    fail "clrs --cut: got '$(tr '\n' ' ' <"$work/clrs.cut")', expected '1 2 3 5 '"
fi
run 0 "--quiet" maxflow --quiet --solver bk --threads 1 "$data/clrs-26-1.max"
if [ "$(cat "$work/out")" = "s 23" ]; then pass; else fail "--quiet printed: $(cat "$work/out")"; fi

run 0 "--opt=value" maxflow --quiet --solver=bk --threads=1 "--cut=$work/eq.cut" "$data/clrs-26-1.max"
if [ "$(cat "$work/out")" = "s 23" ] && [ "$(tr '\n' ' ' <"$work/eq.cut")" = "1 2 3 5 " ]; then pass; else
    fail "--opt=value: $(cat "$work/out")"
fi
run 2 "--verify=1" maxflow --verify=1 "$data/clrs-26-1.max"
run 0 "stdin" maxflow - <"$data/clrs-26-1.max"
expect_line "stdin" "s 23"
run 0 "stdin --cut to stdout" maxflow --quiet --cut - - <"$data/clrs-26-1.max"
if [ "$(tr '\n' ' ' <"$work/out")" = "s 23 1 2 3 5 " ]; then pass; else
    fail "stdin --cut -: got '$(tr '\n' ' ' <"$work/out")'"
fi

# Pipes given by name (process substitution) can be read once only: still detected right.
run 0 "DIMACS through a named pipe" maxflow --quiet <(cat "$data/clrs-26-1.max")
if [ "$(cat "$work/out")" = "s 23" ]; then pass; else fail "named pipe: $(cat "$work/out")"; fi
run 0 "grid through a named pipe" maxflow --quiet <(cat "$examples/tiny-12x16.grid")
if [ "$(cat "$work/out")" = "s 253" ]; then pass; else fail "grid pipe: $(cat "$work/out")"; fi
run 1 "a directory" maxflow "$work"
expect_err "a directory" "is a directory"

run 0 "sums above 2^31" maxflow --verify "$data/int32-sums.max"
expect_line "sums above 2^31" "s 8589934588"

# The README's main command: the bundled example and its value from make_examples.py.
run 0 "segment-64" maxflow --verify --cut "$work/seg.cut" "$examples/segment-64.max"
expect_line "segment-64" "s 1532"
expect_line "segment-64 verify" "c verify: ok (cut capacity 1532)"
if [ "$(cut_value "$examples/segment-64.max" "$work/seg.cut")" = 1532 ]; then pass; else
    fail "segment-64 --cut: the listed side cuts $(cut_value "$examples/segment-64.max" "$work/seg.cut"), not 1532"
fi
if grep -qx 4097 "$work/seg.cut" && ! grep -qx 4098 "$work/seg.cut"; then pass; else
    fail "segment-64 --cut: source 4097 must be listed and sink 4098 not"
fi

# ---- grid files, recognised by content whatever their name ----
cp "$examples/tiny-12x16.grid" "$work/tiny.max"
run 0 "grid" maxflow --verify "$work/tiny.max"
expect_line "grid" "s 253"
expect_line "grid shape" "c grid 12x16 conn 4"
run 0 "grid stdin" maxflow - <"$examples/tiny-12x16.grid"
expect_line "grid stdin" "s 253"
while read -r solver; do
    run 0 "grid --solver $solver" maxflow --verify --solver "$solver" "$examples/tiny-12x16.grid"
    expect_line "grid --solver $solver" "s 253"
done < <("$gcut" solvers | awk '$3 == "yes" && $2 ~ /grid|graph/ { print $1 }')
run 0 "grid --cut" maxflow --cut "$work/grid.cut" "$examples/tiny-12x16.grid"
if awk '$1 !~ /^[0-9]+$/ || $1 > 191 { bad = 1 } END { exit bad }' "$work/grid.cut" &&
    [ -s "$work/grid.cut" ]; then pass; else fail "grid --cut: not indices in 0..191"; fi
run 1 "grid solver on a graph" maxflow --solver cpu-pr "$data/clrs-26-1.max"
expect_err "grid solver on a graph" "grids only"

# ---- bad input (exit 1, the message names FILE:LINE) ----
bad() { # NAME LINE TEXT...: the file made of TEXT must fail at LINE
    local name=$1 line=$2
    shift 2
    printf "$@" >"$work/bad.max"
    run 1 "$name" maxflow "$work/bad.max"
    expect_err "$name" "$work/bad.max:$line:"
}
head="p max 4 1\nn 1 s\nn 4 t\n"
bad "negative capacity" 4 "${head}a 1 2 -3\n"
bad "capacity above INT32_MAX" 4 "${head}a 1 2 2147483648\n"
bad "garbage capacity" 4 "${head}a 1 2 ten\n"
bad "trailing garbage" 4 "${head}a 1 2 3 4\n"
bad "id out of range" 4 "${head}a 1 9 3\n"
bad "truncated arc" 4 "${head}a 1 2\n"
bad "min-cost problem" 1 "p min 4 1\n"
bad "no problem line" 1 "c nothing\n"
bad "two problem lines" 2 "p max 4 0\np max 4 0\n"
bad "source twice" 3 "p max 4 0\nn 1 s\nn 2 s\n"
bad "no sink" 2 "p max 4 0\nn 1 s\n"
bad "fewer arcs than declared" 4 "p max 4 2\nn 1 s\nn 4 t\na 1 2 3\n"
bad "more arcs than declared" 5 "${head}a 1 2 3\na 2 4 3\n"
bad "binary garbage" 1 '\x7fELF\x02\x01\x01\x00\x00\x00'
bad "empty file" 1 ""
expect_err "empty file" "empty file"
printf 'p max 4 1\nn 1 s\nn 4 t\na 1 2 -3\n' >"$work/bad-stdin.max"
run 1 "bad stdin" maxflow - <"$work/bad-stdin.max"
expect_err "bad stdin" "<stdin>:4:"
run 1 "missing file" maxflow "$work/does-not-exist.max"
expect_err "missing file" "$work/does-not-exist.max: cannot open"
head -c 100 "$examples/tiny-12x16.grid" >"$work/short.grid"
run 1 "truncated grid" maxflow "$work/short.grid"
expect_err "truncated grid" "$work/short.grid: truncated"
printf 'gcut-grid 1 ndim 2 shape 0 4 conn 4\n' >"$work/shape.grid"
run 1 "bad grid shape" maxflow "$work/shape.grid"
expect_err "bad grid shape" "$work/shape.grid:1: shape[0] '0'"
printf 'p max 100000000000000 0\n' >"$work/huge.max"
GCUT_MEMORY_LIMIT=256M run 1 "header over the memory cap" maxflow "$work/huge.max"
expect_err "header over the memory cap" "$work/huge.max:1: out of memory"

# Through a pipe the file's size is unknown: the memory cap alone stops a huge arc count.
printf 'p max 4 100000000000000\n' >"$work/huge-arcs.max"
GCUT_MEMORY_LIMIT=256M run 1 "arc count over the memory cap on stdin" maxflow - <"$work/huge-arcs.max"
expect_err "arc count over the memory cap on stdin" "<stdin>:1: out of memory"

echo "golden_maxflow: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
