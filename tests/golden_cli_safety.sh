#!/usr/bin/env bash
# golden_cli_safety.sh - the `gcut` command never loses or clobbers data and checks the numbers
# it is given (issue #10): outputs naming inputs are refused with the input intact; outputs
# appear only when the whole command succeeds (a later failure leaves no file, an old file
# untouched); write errors on standard output (/dev/full, closed) fail every command; sizes
# and parameters out of range are refused with a message naming them.
# Usage: golden_cli_safety.sh PATH/TO/gcut  (ctest passes it; GCUT_SOURCE_DIR = the repo root)
set -u
gcut=$(cd "$(dirname "${1:?usage: golden_cli_safety.sh PATH/TO/gcut}")" && pwd)/$(basename "$1")
src=${GCUT_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
examples=$src/examples
work=$(mktemp -d "${TMPDIR:-/tmp}/gcut-golden-safety.XXXXXX")
outf=$work.out # outside the folder whose files are checked
errf=$work.err
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work" "$outf" "$errf"' EXIT
cd "$work" || exit 1

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# run EXPECTED_EXIT NAME ARGS...: stdout and stderr kept in out / err (outside the folder).
run() {
    local want=$1 name=$2
    shift 2
    "$gcut" "$@" >"$outf" 2>"$errf"
    local got=$?
    if [ "$got" -eq "$want" ]; then pass; else
        fail "$name: exit $got, expected $want (stderr: $(head -c 400 "$errf"))"
    fi
}

expect_err() { # NAME TEXT: stderr mentions TEXT
    if grep -qF -- "$2" "$errf"; then pass; else
        fail "$1: stderr lacks '$2': $(head -c 400 "$errf")"
    fi
}
same() { # NAME A B: files identical
    if cmp -s "$2" "$3"; then pass; else fail "$1: $2 changed"; fi
}
absent() { # NAME FILE...: none of them exists
    local name=$1
    shift
    for f in "$@"; do
        if [ -e "$f" ]; then fail "$name: $f exists"; else pass; fi
    done
}
no_temps() { # NAME: no temporary output files left in the folder
    local left
    left=$(find . -name '.*.??????*' -newer "$work/stamp" 2>/dev/null | head -3)
    if [ -z "$left" ]; then pass; else fail "$1: temporary files left: $left"; fi
}
touch "$work/stamp"

have_png=1
"$gcut" gen synth --size 8x8 -o probe.png >/dev/null 2>&1 || have_png=0
rm -f probe.png

# ---- outputs naming inputs are refused, the input intact ----
cp "$examples/segment-64.max" p.max
run 2 "maxflow --cut = problem" maxflow p.max --cut p.max
expect_err "maxflow --cut = problem" "refusing to overwrite an input"
same "maxflow --cut = problem" p.max "$examples/segment-64.max"
ln p.max hard-link.max
run 2 "maxflow --cut = hard link of problem" maxflow p.max --cut hard-link.max
same "maxflow --cut = hard link" p.max "$examples/segment-64.max"
run 2 "maxflow --cut = ./problem" maxflow p.max --cut "$work/./p.max"
if [ $have_png = 1 ]; then
    cp "$examples/coffee.png" c.png
    cp "$examples/coffee-seeds.png" s.png
    run 2 "segment -o = image" segment c.png --seeds s.png -o ./c.png
    expect_err "segment -o = image" "is the image"
    same "segment -o = image" c.png "$examples/coffee.png"
    run 2 "segment -o = seeds" segment c.png --seeds s.png -o s.png
    same "segment -o = seeds" s.png "$examples/coffee-seeds.png"
    run 2 "segment --overlay = image" segment c.png --seeds s.png -o m.png --overlay c.png
    same "segment --overlay = image" c.png "$examples/coffee.png"
    run 2 "segment --overlay = -o" segment c.png --seeds s.png -o m.png --overlay m.png
    absent "segment --overlay = -o" m.png
    cp s.png t.png
    run 2 "segment -o = truth" segment c.png --seeds s.png -o t.png --truth t.png
    same "segment -o = truth" t.png "$examples/coffee-seeds.png"
    run 2 "gen -o = --truth" gen synth --size 16x16 -o g.png --truth g.png
    absent "gen -o = --truth" g.png

    # ---- a failure later in the command leaves no file, and an old file untouched ----
    run 1 "segment missing --truth" segment c.png --seeds s.png -o m.png --truth missing.png
    expect_err "segment missing --truth" "missing.png"
    absent "segment missing --truth" m.png
    mkdir ro && chmod a-w ro
    if ! touch ro/probe 2>/dev/null; then
        run 1 "segment unwritable --overlay" segment c.png --seeds s.png -o m.png \
            --overlay ro/ov.png
        expect_err "segment unwritable --overlay" "ro/ov.png"
        absent "segment unwritable --overlay" m.png ro/ov.png
        run 1 "gen unwritable --grid" gen synth --size 16x16 -o g.png --truth t.png \
            --grid ro/g.grid
        absent "gen unwritable --grid" g.png t.png
    fi
    rm -f ro/probe
    # A folder that cannot exist (below a file) is unwritable for root too.
    run 1 "segment --overlay below a file" segment c.png --seeds s.png -o m.png \
        --overlay c.png/ov.png
    absent "segment --overlay below a file" m.png
    run 1 "gen --grid below a file" gen synth --size 16x16 -o g.png --truth t2.png \
        --grid c.png/g.grid
    expect_err "gen --grid below a file" "c.png/g.grid"
    absent "gen --grid below a file" g.png t2.png
    echo old >m.png
    run 1 "segment over old file, failing" segment c.png --seeds s.png -o m.png --truth nope.png
    if [ "$(cat m.png)" = old ]; then pass; else fail "old m.png was replaced by a failed run"; fi
    run 0 "segment over old file" segment c.png --seeds s.png -o m.png --overlay ov.png
    if [ "$(head -c 4 m.png | tail -c 3)" = PNG ] && [ -s ov.png ]; then pass; else
        fail "segment did not replace m.png / write ov.png"
    fi
    # Interrupted while outputs are pending (the --truth FIFO blocks after -o and --overlay
    # were written to their temporary files): SIGINT deletes them.
    if mkfifo truth.fifo 2>/dev/null; then
        "$gcut" segment c.png --seeds s.png -o int-m.png --overlay int-ov.png \
            --truth truth.fifo >/dev/null 2>&1 &
        pid=$!
        for _ in $(seq 100); do
            [ "$(find . -name '.int-*' | wc -l)" -ge 2 ] && break
            sleep 0.1
        done
        pending=$(find . -name '.int-*' | wc -l)
        kill -INT $pid
        wait $pid
        code=$?
        left=$(find . -name '.int-*' -o -name 'int-*.png' | wc -l)
        if [ "$pending" -eq 2 ] && [ "$code" -eq 130 ] && [ "$left" -eq 0 ]; then pass; else
            fail "SIGINT with pending outputs: $pending pending, exit $code, $left files left"
        fi
        rm -f truth.fifo
    fi
    # An output that is a symbolic link stays one; the file it names is replaced. An existing
    # output keeps its mode.
    echo old >target.png
    chmod 600 target.png
    ln -s target.png link.png
    run 0 "segment -o symlink" segment c.png --seeds s.png -o link.png
    if [ -L link.png ] && [ "$(head -c 4 target.png | tail -c 3)" = PNG ]; then pass; else
        fail "-o through a symbolic link: link replaced or target not written"
    fi
    if [ "$(stat -c %a target.png)" = 600 ]; then pass; else
        fail "existing output's mode $(stat -c %a target.png), expected 600 kept"
    fi
    # A read-only output is not replaced (as fopen "w" would refuse it); root may write anyway.
    if [ "$(id -u)" != 0 ]; then
        echo keep >ro.png
        chmod 444 ro.png
        run 1 "segment -o read-only file" segment c.png --seeds s.png -o ro.png
        if [ "$(cat ro.png)" = keep ]; then pass; else fail "read-only output replaced"; fi
    fi
    # Mode of a new output: what a plain fopen would give under the umask.
    (umask 022 && "$gcut" gen synth --size 16x16 -o mode.png >/dev/null 2>&1)
    if [ "$(stat -c %a mode.png 2>/dev/null)" = 644 ]; then pass; else
        fail "output mode $(stat -c %a mode.png 2>/dev/null), expected 644 under umask 022"
    fi
fi
run 1 "maxflow --cut into a missing folder" maxflow p.max --cut nodir/cut.txt
absent "maxflow --cut into a missing folder" nodir/cut.txt
run 0 "maxflow --cut" maxflow -q p.max --cut cut.txt
if [ -s cut.txt ]; then pass; else fail "maxflow --cut wrote nothing"; fi
run 0 "maxflow --cut /dev/null" maxflow -q p.max --cut /dev/null
no_temps "after all the runs above"

# ---- standard output: full or closed is an error for every command ----
if [ -w /dev/full ]; then
    for args in "maxflow $examples/segment-64.max" "maxflow -q $examples/segment-64.max" \
        "maxflow -q $examples/segment-64.max --cut -" "solvers" "--version" "--help" \
        "maxflow --help" "gen synth --size 16x16 -o full.png" \
        "segment $examples/coffee.png --seeds $examples/coffee-seeds.png -o full-m.png"; do
        # shellcheck disable=SC2086
        "$gcut" $args >/dev/full 2>"$errf"
        got=$?
        if [ $got -ne 0 ] && grep -q "standard output" "$errf"; then pass; else
            fail "gcut $args >/dev/full: exit $got, stderr: $(head -c 300 "$errf")"
        fi
    done
    absent "outputs of commands whose stdout failed" full.png full-m.png
fi
"$gcut" maxflow "$examples/segment-64.max" >&- 2>"$errf"
got=$?
if [ $got -ne 0 ] && grep -q "standard output is closed" "$errf"; then pass; else
    fail "closed stdout: exit $got, stderr: $(head -c 300 "$errf")"
fi
"$gcut" maxflow -q "$examples/segment-64.max" --cut closed-cut.txt >&- 2>/dev/null
if [ ! -e closed-cut.txt ]; then pass; else fail "closed stdout: --cut file written"; fi

# ---- numbers are range-checked, the message naming them ----
run 2 "gen --size past int64" gen synth --size 4294967296x4294967296 -o big.png
expect_err "gen --size past int64" "--size"
run 2 "gen --size product" gen synth --size 2000000000x2000000000x2000000000 -o big.png
expect_err "gen --size product" "pixels"
run 2 "gen --size 0" gen synth --size 0x5 -o big.png
run 2 "gen --size junk" gen synth --size 5x5y -o big.png
run 2 "gen --seed negative" gen synth --size 8x8 --seed -1 -o big.png
run 2 "gen --seed past 2^64" gen synth --size 8x8 --seed 18446744073709551616 -o big.png
run 2 "gen --connectivity" gen synth --size 8x8 --connectivity 5 --grid big.grid
expect_err "gen --connectivity" "--connectivity"
absent "gen refused" big.png big.grid
run 2 "segment --sigma tiny" segment "$examples/coffee.png" --seeds "$examples/coffee-seeds.png" \
    -o sig.png --sigma 1e-300
expect_err "segment --sigma tiny" "--sigma"
run 2 "segment --sigma nan" segment "$examples/coffee.png" --seeds "$examples/coffee-seeds.png" \
    -o sig.png --sigma nan
run 2 "segment --lambda inf" segment "$examples/coffee.png" --seeds "$examples/coffee-seeds.png" \
    -o sig.png --lambda inf
expect_err "segment --lambda inf" "--lambda"
run 2 "segment --threads huge" segment "$examples/coffee.png" \
    --seeds "$examples/coffee-seeds.png" -o sig.png --threads 99999999999999999999
expect_err "segment --threads huge" "--threads"
run 2 "segment --raw past int64" segment vol.raw --seeds s.raw -o sig.raw \
    --raw 4294967296x4294967296x4294967296
expect_err "segment --raw past int64" "--raw"
run 2 "segment --raw bits" segment vol.raw --seeds s.raw -o sig.raw --raw 2x2x2:1:12
run 2 "maxflow --threads" maxflow --threads 70000 "$examples/segment-64.max"
expect_err "maxflow --threads" "--threads"
absent "segment refused" sig.png sig.raw

echo "golden_cli_safety: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
