#!/usr/bin/env bash
# golden_qpbo.sh - `gcut qpbo` and `gcut gen qpbo-*` on good and bad inputs: exit codes, the
# 'c labeled', 'c lower_bound' and 's E' lines (E recomputed from the file and the written
# labels with awk), qpbo and pqpbo giving the same labels, and errors naming FILE:LINE.
# Usage: golden_qpbo.sh PATH/TO/gcut  (ctest passes it)
set -u
gcut=${1:?usage: golden_qpbo.sh PATH/TO/gcut}
work=$(mktemp -d "${TMPDIR:-/tmp}/gcut-golden-qpbo.XXXXXX")
trap 'rm -rf "$work"' EXIT
limit=
if command -v timeout >/dev/null 2>&1; then limit="timeout 120"; fi

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}
run() { # EXPECTED_EXIT NAME ARGS...
    local want=$1 name=$2
    shift 2
    $limit "$gcut" "$@" >"$work/out" 2>"$work/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then pass; else
        fail "$name: exit $got, expected $want (stderr: $(head -c 400 "$work/err"))"
    fi
}
expect_line() {
    if grep -qxF -- "$2" "$work/out"; then pass; else
        fail "$1: no line '$2' in output: $(head -c 400 "$work/out")"
    fi
}
expect_err() {
    if grep -qF -- "$2" "$work/err"; then pass; else
        fail "$1: stderr lacks '$2': $(head -c 400 "$work/err")"
    fi
}
# energy FILE LABELS: E(labels) from the file, unlabeled (-1) as 0.
energy() {
    awk 'NR == FNR { x[NR] = ($1 == 1) ? 1 : 0; next }
         $1 == "u" { e += x[$2] ? $4 : $3 }
         $1 == "e" { a = x[$2]; b = x[$3]; e += $(4 + 2 * a + b) }
         END { printf "%d\n", e }' "$2" "$1"
}

# ---- a hand-made energy: two nodes that want to differ, non-submodular coupling ----
cat >"$work/small.qpbo" <<'Q'
c two nodes; E(0,0)=5 E(0,1)=0 E(1,0)=2 E(1,1)=9 plus unaries
p qpbo 2 1
u 1 0 1
u 2 3 0
e 1 2 5 0 2 9
Q
run 0 "small" qpbo --labels "$work/small.lab" "$work/small.qpbo"
expect_line "small" "c labeled 2 of 2"
expect_line "small" "s 0"
if [ "$(tr '\n' ' ' <"$work/small.lab")" = "0 1 " ]; then pass; else fail "small labels: $(cat "$work/small.lab")"; fi

# ---- generated energies: s E equals E of the labels written; pqpbo = qpbo ----
for kind in "qpbo-random --size 40x30 --nonsub 30 --seed 3" "qpbo-objects --size 60x50 --objects 5 --seed 2"; do
    run 0 "gen $kind" gen $kind -o "$work/g.qpbo"
    run 0 "qpbo $kind" qpbo --labels "$work/a.lab" "$work/g.qpbo"
    cp "$work/out" "$work/a.out"
    e=$(awk '$1 == "s" { print $2 }' "$work/a.out")
    if [ "$(energy "$work/g.qpbo" "$work/a.lab")" = "$e" ]; then pass; else
        fail "$kind: s $e but the labels' energy is $(energy "$work/g.qpbo" "$work/a.lab")"
    fi
    lb=$(awk '$2 == "lower_bound" { print $3 }' "$work/a.out")
    if [ -n "$lb" ] && [ "$lb" -le "$e" ]; then pass; else fail "$kind: lower bound $lb > $e"; fi
    for t in 1 2 3; do
        run 0 "pqpbo $kind threads $t" qpbo --solver pqpbo --threads "$t" --labels "$work/b.lab" "$work/g.qpbo"
        if cmp -s "$work/a.lab" "$work/b.lab"; then pass; else fail "$kind: pqpbo ($t threads) labels differ from qpbo"; fi
        expect_line "pqpbo $kind" "s $e"
    done
done
cat "$work/g.qpbo" | $limit "$gcut" qpbo - >"$work/out" 2>"$work/err" && pass || fail "stdin"
expect_line "stdin" "s $e"

# ---- malformed files: exit 1, the message names the line ----
bad() { # NAME EXPECTED_TEXT FILE_CONTENT
    printf '%b' "$3" >"$work/bad.qpbo"
    run 1 "$1" qpbo "$work/bad.qpbo"
    expect_err "$1" "$2"
}
bad "no problem line" "no problem line" "c nothing\n"
bad "u before p" "bad.qpbo:1: 'u' line before the problem line" "u 1 0 0\np qpbo 1 0\n"
bad "wrong format" "bad.qpbo:1: the problem line must read 'p qpbo N M'" "p max 2 1\n"
bad "second p" "bad.qpbo:2: second problem line (the first is line 1)" "p qpbo 2 0\np qpbo 2 0\n"
bad "node out of range" "bad.qpbo:2: node I 3 is outside [1, 2]" "p qpbo 2 0\nu 3 0 0\n"
bad "node zero" "bad.qpbo:3: node J 0 is outside [1, 2]" "p qpbo 2 1\nc x\ne 1 0 0 0 0 0\n"
bad "self term" "bad.qpbo:2: term on node 2 twice" "p qpbo 2 1\ne 2 2 0 1 1 0\n"
bad "not a number" "bad.qpbo:2: E1 'x' is not an integer" "p qpbo 2 0\nu 1 0 x\n"
bad "past int32" "bad.qpbo:2: E01 2147483648 is outside" "p qpbo 2 1\ne 1 2 0 2147483648 0 0\n"
bad "coupling" "bad.qpbo:2: gcut_qpbo_add_pairwise: term 0" "p qpbo 2 1\ne 1 2 -2147483648 2147483647 2147483647 0\n"
bad "missing field" "bad.qpbo:2: missing E11" "p qpbo 2 1\ne 1 2 0 1 1\n"
bad "extra field" "bad.qpbo:2: unexpected '7' after the last field" "p qpbo 2 0\nu 1 0 0 7\n"
bad "unknown line" "bad.qpbo:2: unknown line type 'a'" "p qpbo 2 0\na 1 2 3\n"
bad "too many terms" "bad.qpbo:3: more term lines than the 1 of the problem line (line 1)" "p qpbo 2 1\ne 1 2 0 1 1 0\ne 1 2 0 1 1 0\n"
bad "too few terms" "the file ends after 1 term lines, but the problem line (line 1) declares 2" "p qpbo 2 2\ne 1 2 0 1 1 0\n"
bad "block out of range" "bad.qpbo:2: block B -1 is outside" "p qpbo 2 0\nb 1 -1\n"
# block ids (b lines) change nothing in the answer
printf 'p qpbo 3 2\nb 1 1\nb 3 1\nu 1 4 0\nu 2 0 3\ne 1 2 0 5 5 0\ne 2 3 2 0 0 7\n' >"$work/blocks.qpbo"
run 0 "blocks" qpbo --solver pqpbo --threads 2 "$work/blocks.qpbo"
cp "$work/out" "$work/blocks.out"
run 0 "blocks serial" qpbo "$work/blocks.qpbo"
if [ "$(grep '^s' "$work/out")" = "$(grep '^s' "$work/blocks.out")" ]; then pass; else fail "blocks: pqpbo and qpbo differ"; fi
run 1 "missing file" qpbo "$work/none.qpbo"
expect_err "missing file" "cannot open"
run 2 "bad solver" qpbo --solver bk "$work/small.qpbo"
run 2 "no file" qpbo

echo "golden_qpbo: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
