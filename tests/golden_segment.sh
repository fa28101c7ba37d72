#!/usr/bin/env bash
# golden_segment.sh - `gcut segment` and `gcut gen synth` end to end: the bundled examples and
# generated synthetic images (Hussein 2007, VII) segmented from files, exit codes, files written,
# the error rate against the truth (Garrett 2009, Table 1), and clean failures on bad input.
# Usage: golden_segment.sh PATH/TO/gcut   (GCUT_SOURCE_DIR = repository root)
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
pass() {
    checks=$((checks + 1))
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
        pass
    fi
}

# grep_out PATTERN DESCRIPTION: the last command's output matches.
grep_out() {
    if grep -Eq -- "$1" "$work/out"; then pass; else
        fail "$2: no '$1' in output"
        sed 's/^/    /' "$work/out" >&2
    fi
}

# percent_below LABEL LIMIT: the number after "LABEL" (a percentage) is below LIMIT.
percent_below() {
    local value
    value="$(sed -n "s/^$1 *\([0-9.]*\)%.*/\1/p" "$work/out" | head -1)"
    if [ -n "$value" ] && awk -v v="$value" -v l="$2" 'BEGIN { exit !(v < l) }'; then
        pass
    else
        fail "$1 '$value' is not below $2%"
        sed 's/^/    /' "$work/out" >&2
    fi
}

exists() {
    if [ -s "$1" ]; then pass; else fail "$1 was not written"; fi
}

# Without PNG support (no libpng at build time) there is nothing to test here.
if ! "$gcut" gen synth --size 8x8 -o "$work/probe.png" >/dev/null 2>&1; then
    if "$gcut" gen synth --size 8x8 -o "$work/probe.png" 2>&1 | grep -qi "support"; then
        echo "skip: this build cannot write PNG"
        exit 77
    fi
fi

# ---- usage ----
expect 0 "segment --help" -- "$gcut" segment --help
grep_out "--seeds" "segment --help"
expect 0 "gen --help" -- "$gcut" gen --help
expect 2 "segment without arguments" -- "$gcut" segment
expect 2 "segment with an unknown option" -- "$gcut" segment a.png --seeds b.png -o c.png --frobnicate 1
expect 2 "segment with a bad --lambda value" -- "$gcut" segment a.png --seeds b.png -o c.png --lambda abc
expect 2 "gen without a size" -- "$gcut" gen synth -o "$work/x.png"
expect 2 "gen with a bad size" -- "$gcut" gen synth --size 12 -o "$work/x.png"
expect 2 "gen with a bad level" -- "$gcut" gen synth --size 12x12 --level medium -o "$work/x.png"

# ---- the bundled example: the README's command ----
expect 0 "segment coffee example" -- "$gcut" segment "$src/examples/coffee.png" \
    --seeds "$src/examples/coffee-scribbles.png" --seed-encoding color \
    -o "$work/coffee_mask.png" --overlay "$work/coffee_overlay.png"
exists "$work/coffee_mask.png"
exists "$work/coffee_overlay.png"
grep_out "^model +[0-9.]+ ms" "coffee timings"
grep_out "^build +[0-9.]+ ms .*scale [0-9.]+" "coffee construction and scale"
grep_out "^solve +[0-9.]+ ms" "coffee solve"
# Cup, saucer and spoon cover about 45% of the picture.
fg="$(sed -n 's/.*foreground pixels (\([0-9.]*\)%).*/\1/p' "$work/out")"
if [ -n "$fg" ] && awk -v f="$fg" 'BEGIN { exit !(f > 30 && f < 60) }'; then pass; else
    fail "coffee foreground ${fg:-?}% is not between 30% and 60%"
fi
expect 0 "the README's command (coffee, gcut seed codes)" -- "$gcut" segment \
    "$src/examples/coffee.png" --seeds "$src/examples/coffee-seeds.png" \
    -o "$work/coffee_mask2.png" --overlay "$work/coffee_overlay2.png"
if cmp -s "$work/coffee_mask.png" "$work/coffee_mask2.png"; then pass; else
    fail "coffee-seeds.png and coffee-scribbles.png give different masks"
fi
expect 0 "segment camera example (gray, gcut codes)" -- "$gcut" segment "$src/examples/camera.png" \
    --seeds "$src/examples/camera-seeds.png" -o "$work/camera_mask.png" --model hist
exists "$work/camera_mask.png"
grep_out "histogram" "camera uses a histogram"

# ---- synthetic images against their truth ----
expect 0 "gen synth easy" -- "$gcut" gen synth --size 320x240 --seed 5 -o "$work/easy.png" \
    --truth "$work/easy_truth.png" --seeds "$work/easy_seeds.png" --grid "$work/easy.grid"
for f in easy.png easy_truth.png easy_seeds.png easy.grid; do exists "$work/$f"; done
expect 0 "segment synth easy" -- "$gcut" segment "$work/easy.png" --seeds "$work/easy_seeds.png" \
    --truth "$work/easy_truth.png" -o "$work/easy_mask.png" --solver bk
grep_out "^error +[0-9.]+% \(false positives [0-9.]+%, false negatives [0-9.]+%" "error line"
percent_below error 1.0
flow_bk="$(sed -n 's/^solve .*flow \([0-9]*\).*/\1/p' "$work/out")"
expect 0 "segment synth easy with cpu-pr" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/easy_mask2.png" --solver cpu-pr
flow_pr="$(sed -n 's/^solve .*flow \([0-9]*\).*/\1/p' "$work/out")"
if [ -n "$flow_bk" ] && [ "$flow_bk" = "$flow_pr" ]; then pass; else
    fail "bk flow '$flow_bk' and cpu-pr flow '$flow_pr' differ"
fi
expect 0 "maxflow on the generated benchmark grid" -- "$gcut" maxflow --verify "$work/easy.grid"
grep_out "^s [0-9]+" "maxflow solution line"

expect 0 "gen synth hard" -- "$gcut" gen synth --size 320x240 --seed 5 --level hard \
    -o "$work/hard.png" --truth "$work/hard_truth.png" --seeds "$work/hard_seeds.png"
expect 0 "segment synth hard" -- "$gcut" segment "$work/hard.png" --seeds "$work/hard_seeds.png" \
    --truth "$work/hard_truth.png" -o "$work/hard_mask.png" --connectivity 4
percent_below error 5.0

# ---- auto's route for one picture (docs/SEGMENT.md): one cut of a 320x240 picture under auto
# goes to parallel-bk on the CPU threads when it has at most GCUT_SEGMENT_CPU_PIXELS_PER_THREAD
# pixels per thread (76800 / 2 here, inside the default), never starting CUDA; a limit
# of 0, or a named solver, or GrabCut rounds, keep auto's GPU rule. Each route's flow is bk's.
expect 0 "segment easy, auto, one cut" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/route_cpu.png" --iterations 1 --verbose --threads 2
grep_out "auto: CPU route, parallel-bk: 76800 pixels on 2 CPU threads = 38400 per thread, within the CPU route's limit of [0-9]+" \
    "auto's CPU route named with its reason"
grep_out "^solve .* parallel-bk " "the CPU route solves with parallel-bk"
flow_route="$(sed -n 's/^solve .*flow \([0-9]*\).*/\1/p' "$work/out")"
expect 0 "segment easy, bk's mask as the truth of the CPU route's" -- "$gcut" segment \
    "$work/easy.png" --seeds "$work/easy_seeds.png" -o "$work/route_bk.png" --iterations 1 \
    --solver bk --truth "$work/route_cpu.png"
grep_out "^error +0\.000% " "the CPU route's mask is bk's"
flow_bk="$(sed -n 's/^solve .*flow \([0-9]*\).*/\1/p' "$work/out")"
if [ -n "$flow_bk" ] && [ "$flow_bk" = "$flow_route" ]; then pass; else
    fail "bk flow '$flow_bk' and the CPU route's flow '$flow_route' differ"
fi
expect 0 "segment easy, auto, limit 0" -- env GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=0 "$gcut" \
    segment "$work/easy.png" --seeds "$work/easy_seeds.png" -o "$work/route_gpu.png" \
    --iterations 1 --verbose
grep_out "auto: auto's GPU rule kept: 76800 pixels on [0-9]+ CPU threads? = [0-9]+ per thread, past the CPU route's limit of 0" \
    "a limit of 0 keeps auto's GPU rule"
flow_route="$(sed -n 's/^solve .*flow \([0-9]*\).*/\1/p' "$work/out")"
if [ "$flow_bk" = "$flow_route" ]; then pass; else
    fail "bk flow '$flow_bk' and auto's GPU-rule flow '$flow_route' differ"
fi
expect 0 "segment easy, auto, one thread" -- env GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=80000 \
    "$gcut" segment "$work/easy.png" --seeds "$work/easy_seeds.png" -o "$work/route_1.png" \
    --iterations 1 --verbose --threads 1
grep_out "auto: CPU route, parallel-bk: 76800 pixels on 1 CPU thread = 76800 per thread, within the CPU route's limit of 80000" \
    "--threads counts in the rule"
expect 0 "segment easy, auto, two threads and a tighter limit" -- \
    env GCUT_SEGMENT_CPU_PIXELS_PER_THREAD=38399 "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/route_2.png" --iterations 1 --verbose --threads 2
grep_out "auto's GPU rule kept: 76800 pixels on 2 CPU threads = 38400 per thread, past" \
    "one pixel per thread past the limit keeps auto's GPU rule"
# The CPU route's heap faulted in on the other threads while the picture is read (cmd_segment.c,
# heap_prefault_*; docs/CPU-PARALLEL.md "Tenth pass"): the same mask as bk's with it (the
# default) and without it (GCUT_SEGMENT_PREFAULT=0), the fault-in on the timeline only when on.
for pf in default 0 64; do
    expect 0 "segment easy, CPU route, heap fault-in $pf" -- env GCUT_TIMELINE=1 \
        GCUT_SEGMENT_PREFAULT="$([ "$pf" = default ] || echo "$pf")" \
        GCUT_SEGMENT_PREFAULT_THREADS="$([ "$pf" = 64 ] && echo 1)" "$gcut" segment \
        "$work/easy.png" --seeds "$work/easy_seeds.png" -o "$work/route_pf.png" --iterations 1 \
        --threads 3 --truth "$work/route_bk.png"
    grep_out "^error +0\.000% " "the CPU route's mask with heap fault-in $pf is bk's"
    if [ "$pf" = 0 ]; then
        if grep -q "heap fault-in" "$work/out"; then fail "GCUT_SEGMENT_PREFAULT=0 faulted in"; else pass; fi
    else
        grep_out "heap fault-in begins" "the CPU route faults its heap in ($pf)"
        grep_out "heap fault-in joined" "the fault-in threads joined ($pf)"
    fi
done
expect 0 "segment easy, named solver" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/route_n.png" --iterations 1 --verbose --solver bk
if grep -q "auto: " "$work/out"; then fail "a named solver took auto's route rule"; else pass; fi
expect 0 "segment easy, GrabCut rounds" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/route_r.png" --iterations 2 --verbose
if grep -q "auto: CPU route" "$work/out"; then fail "GrabCut rounds took the CPU route"; else pass; fi

expect 0 "gen synth volume" -- "$gcut" gen synth --size 48x48x40 --seed 2 -o "$work/vol.raw" \
    --truth "$work/vol_truth.raw" --seeds "$work/vol_seeds.raw"
expect 0 "segment volume" -- "$gcut" segment "$work/vol.raw" --raw 40x48x48 \
    --seeds "$work/vol_seeds.raw" --truth "$work/vol_truth.raw" -o "$work/vol_mask.raw"
percent_below error 2.0
if [ "$(wc -c <"$work/vol_mask.raw")" -eq $((48 * 48 * 40)) ]; then pass; else
    fail "volume mask has the wrong size"
fi

# A volume from slices: three 2D pictures, raw seeds, the truth as a list of slices.
for k in 1 2 3; do
    expect 0 "gen slice $k" -- "$gcut" gen synth --size 64x48 --seed 7 -o "$work/slice$k.png" \
        --truth "$work/slice_truth$k.png"
done
expect 0 "gen volume seeds" -- "$gcut" gen synth --size 64x48x3 --seeds "$work/slice_seeds.raw"
expect 0 "segment slices" -- "$gcut" segment "$work/slice1.png" "$work/slice2.png" \
    "$work/slice3.png" --seeds "$work/slice_seeds.raw" -o "$work/slice_mask.raw" \
    --truth "$work/slice_truth1.png,$work/slice_truth2.png,$work/slice_truth3.png"
grep_out "64x48x3" "slice volume size"
percent_below error 2.0
if [ "$(wc -c <"$work/slice_mask.raw")" -eq $((64 * 48 * 3)) ]; then pass; else
    fail "slice mask has the wrong size"
fi
expect 1 "slice truth of the wrong depth" -- "$gcut" segment "$work/slice1.png" \
    "$work/slice2.png" "$work/slice3.png" --seeds "$work/slice_seeds.raw" -o "$work/x.raw" \
    --truth "$work/slice_truth1.png,$work/slice_truth2.png"
grep_out "64x48x2 but the volume is 64x48x3" "slice count mismatch named"

# ---- the timeline (GCUT_TIMELINE=1): on standard error, nothing else changes ----
# On and off: exit 0, the same mask, every line of standard output through a pipe (the error
# line is the last one printed); the timeline, when on, from main's entry to the last exit
# handler. A failure after the mask was written to its temporary file leaves no file behind.
for on in 0 1; do
    GCUT_TIMELINE=$on "$gcut" segment "$work/easy.png" --seeds "$work/easy_seeds.png" \
        --truth "$work/easy_truth.png" -o "$work/tl$on.png" --solver bk 2>"$work/tl$on.err" |
        cat >"$work/tl$on.out"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ] && [ -s "$work/tl$on.png" ] && grep -q "^error " "$work/tl$on.out" &&
        grep -q "^mask " "$work/tl$on.out"; then
        pass
    else
        fail "GCUT_TIMELINE=$on: exit $rc, or the mask or a line of output missing"
    fi
    if [ "$on" = 1 ]; then
        for event in "main entered" "image read" "segmentation done" "mask written" \
            "outputs committed" "last atexit handler"; do
            if grep -Eq "^timeline +[0-9.]+ ms +main +$event" "$work/tl$on.err"; then pass; else
                fail "GCUT_TIMELINE=1: no '$event' on the timeline"
                sed 's/^/    /' "$work/tl$on.err" >&2
            fi
        done
    elif [ -s "$work/tl$on.err" ]; then
        fail "GCUT_TIMELINE=0 printed on standard error"
        sed 's/^/    /' "$work/tl$on.err" >&2
    else
        pass
    fi
    # The truth is read after the mask is written (to its temporary file): that file goes.
    GCUT_TIMELINE=$on "$gcut" segment "$work/easy.png" --seeds "$work/easy_seeds.png" \
        --truth "$work/no_truth.png" -o "$work/tlbad$on.png" --solver bk >/dev/null 2>&1
    rc=$?
    if [ "$rc" -eq 1 ] && [ ! -e "$work/tlbad$on.png" ] &&
        [ -z "$(find "$work" -name '.tlbad*')" ]; then pass; else
        fail "GCUT_TIMELINE=$on: a failed run exits $rc or leaves a file behind"
    fi
done
if cmp -s "$work/tl0.png" "$work/tl1.png" && cmp -s "$work/tl0.png" "$work/easy_mask.png"; then
    pass
else
    fail "the masks with and without the timeline differ"
fi
# Standard output the same but for the times and the mask's name.
same_out() { sed -E 's/[0-9.]+ ms//g; s/ +/ /g; s/tl[01]\.png/tl.png/' "$1"; }
if diff <(same_out "$work/tl0.out") <(same_out "$work/tl1.out") >/dev/null; then pass; else
    fail "standard output differs with the timeline on"
fi

# ---- a mask of 512 KiB and more: compressed in strips on threads (GCUT_PNG_THREADS=N) or by
# libpng (1): different files, the same pixels (the one scored against the other as its truth).
expect 0 "gen synth 1024x640" -- "$gcut" gen synth --size 1024x640 --seed 3 -o "$work/big.png" \
    --seeds "$work/big_seeds.png"
expect 0 "segment 1024x640, mask through libpng" -- env GCUT_PNG_THREADS=1 "$gcut" segment \
    "$work/big.png" --seeds "$work/big_seeds.png" -o "$work/big_libpng.png" --solver bk \
    --connectivity 4
expect 0 "segment 1024x640, mask in 4 strips" -- env GCUT_PNG_THREADS=4 "$gcut" segment \
    "$work/big.png" --seeds "$work/big_seeds.png" -o "$work/big_strips.png" --solver bk \
    --connectivity 4 --truth "$work/big_libpng.png"
grep_out "^error +0\.000% \(false positives 0\.000%, false negatives 0\.000%" \
    "the strip-written mask has the libpng-written mask's pixels"
if cmp -s "$work/big_libpng.png" "$work/big_strips.png"; then
    fail "GCUT_PNG_THREADS=1 and =4 wrote the same bytes: one writer only"
else
    pass
fi

# ---- bad input fails cleanly with a message ----
expect 0 "gen a smaller image" -- "$gcut" gen synth --size 100x80 --seeds "$work/small_seeds.png"
expect 1 "seeds of the wrong size" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/small_seeds.png" -o "$work/x.png"
grep_out "100x80 but the image is 320x240" "size mismatch message"
expect 1 "truth mask read as seed codes" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_truth.png" -o "$work/x.png"
grep_out "pixel \(x [0-9]+, y [0-9]+\) has value 255" "bad seed value names the pixel"
expect 1 "scribbles without the color encoding" -- "$gcut" segment "$src/examples/coffee.png" \
    --seeds "$src/examples/coffee-scribbles.png" -o "$work/x.png"
grep_out "coloured" "coloured seed message"
# Codes 0/1/2 read as a trimap are all "black": every pixel a background seed.
expect 1 "seeds without foreground" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" --seed-encoding color -o "$work/x.png"
grep_out "no foreground seeds" "missing seed class named"
expect 1 "missing image" -- "$gcut" segment "$work/nope.png" --seeds "$work/easy_seeds.png" \
    -o "$work/x.png"
expect 1 "unknown solver" -- "$gcut" segment "$work/easy.png" --seeds "$work/easy_seeds.png" \
    -o "$work/x.png" --solver nonesuch
expect 1 "raw volume of the wrong size" -- "$gcut" segment "$work/vol.raw" --raw 40x48x49 \
    --seeds "$work/vol_seeds.raw" -o "$work/x.raw"

# ---- --write-grid (docs/SEGMENT.md): the first cut's energy as a grid file; its maximum flow
# (bk and parallel-bk, certified) is the flow the one-cut segmentation prints, its minimal cut the
# mask; refused with --rect and --batch, and when it names an input.
expect 0 "segment easy --write-grid" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/wg_mask.png" --iterations 1 --solver bk \
    --write-grid "$work/wg.grid"
grep_out "^grid +.*wg.grid: the first cut's energy" "--write-grid reported"
flow_seg="$(sed -n 's/^solve .*flow \([0-9]*\).*/\1/p' "$work/out")"
for s in bk parallel-bk; do
    expect 0 "maxflow on the written grid ($s)" -- "$gcut" maxflow --solver "$s" --threads 3 \
        --verify --cut "$work/wg_cut_$s.txt" "$work/wg.grid"
    flow_grid="$(sed -n 's/^s \([0-9]*\)$/\1/p' "$work/out")"
    if [ -n "$flow_seg" ] && [ "$flow_seg" = "$flow_grid" ]; then pass; else
        fail "--write-grid: segment flow '$flow_seg', $s on the grid '$flow_grid'"
    fi
done
# The grid's cut (source side, linear indices) has as many nodes as the mask's foreground.
fg_cut="$(wc -l <"$work/wg_cut_bk.txt")"
expect 0 "segment easy (bk) for its foreground count" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/wg_mask2.png" --iterations 1 --solver bk
fg_mask="$(sed -n 's/^mask .*: \([0-9]*\) foreground pixels.*/\1/p' "$work/out")"
if [ -n "$fg_mask" ] && [ "$fg_cut" = "$fg_mask" ]; then pass; else
    fail "--write-grid: the grid's minimal cut has '$fg_cut' nodes, the mask '$fg_mask' pixels"
fi
expect 2 "--write-grid with --rect" -- "$gcut" segment "$work/easy.png" --rect 10,10,100,100 \
    -o "$work/x.png" --write-grid "$work/x.grid"
grep_out "--write-grid writes the energy of a cut from --seeds" "--write-grid with --rect named"
expect 2 "--write-grid with --batch" -- "$gcut" segment --batch "$work/nope.txt" \
    --write-grid "$work/x.grid"
grep_out "or --write-grid beside it" "--write-grid with --batch named"
expect 2 "--write-grid naming the image" -- "$gcut" segment "$work/easy.png" \
    --seeds "$work/easy_seeds.png" -o "$work/x.png" --write-grid "$work/easy.png"
if [ -e "$work/x.grid" ]; then fail "a refused --write-grid left a file"; else pass; fi

echo "golden_segment: $checks passed, $failures failed"
[ "$failures" -eq 0 ]
