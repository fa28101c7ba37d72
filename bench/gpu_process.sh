#!/usr/bin/env bash
# gpu_process.sh - the one-process bar of issue #17 (`gcut segment` on a hard 1920x1080 photo,
# file to mask, one fresh process): the floor under it (a process that only starts CUDA, with
# and without CUDA's tear-down at exit; `gcut --version`), then `gcut segment` variants in
# turn (A B C A B C ...) with their timelines (GCUT_TIMELINE=1), masks compared. Whole
# processes are timed by bench/walltime (fork to reaped). docs/CUDA-GRID.md, "Segmentation
# process time (fourth pass)".
#
# Environment (all optional):
#   BIN=build                  folder with gcut, walltime, cuda_floor (and cuda_floor_rt,
#                              `nvcc -x cu -DCUDA_FLOOR_RUNTIME bench/cuda_floor.c`)
#   BASE=                      a second gcut (e.g. a build of the branch point) run as the
#                              first variant, "base"
#   VARIANTS="now:;fastexit:GCUT_FAST_EXIT=1"   LABEL:WORDS, ';' between: NAME=VALUE words
#                              set the environment, "base" runs $BASE, other words are
#                              arguments of gcut segment ("pbk:--solver parallel-bk")
#   RUNS=10 FLOOR_RUNS=10      runs of each variant / of each floor program (FLOOR2_RUNS:
#                              of those holding buffers; default FLOOR_RUNS)
#   SIZE=1920x1080             the photo's size
#   STAGES="floor segment"     OUT=bench/out/process  DATA=/tmp/gcut-process
# Exit status: non-zero if a run failed or two variants' masks differ.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
BIN=${BIN:-build}
BASE=${BASE:-}
VARIANTS=${VARIANTS:-now:;fastexit:GCUT_FAST_EXIT=1}
RUNS=${RUNS:-10}
FLOOR_RUNS=${FLOOR_RUNS:-10}
STAGES=${STAGES:-floor segment}
SIZE=${SIZE:-1920x1080}
OUT=${OUT:-bench/out/process}
DATA=${DATA:-/tmp/gcut-process}
mkdir -p "$OUT" "$DATA"
status=0
has() { [[ " $STAGES " == *" $1 "* ]]; }
W=$BIN/walltime

if has floor; then
    echo "== the floor: processes that start CUDA and end ($FLOOR_RUNS runs each, in turn)"
    rt=$BIN/cuda_floor_rt
    [ -x "$rt" ] || rt=$BIN/cuda_floor
    "$W" -n "$FLOOR_RUNS" -w 1 -o "$OUT/floor" -- "$rt" ctx :: "$rt" ctx-exit :: "$BIN/gcut" --version \
        :: "$rt" none || status=1
    echo "== the floor with buffers the size of a 1080p cut (400 MB device, 48 MB pinned)"
    "$W" -n "${FLOOR2_RUNS:-$FLOOR_RUNS}" -o "$OUT/floor2" -- "$rt" alloc :: "$rt" alloc-exit :: "$rt" alloc-release \
        :: "$BIN/cuda_floor" init :: "$BIN/cuda_floor" ctx || status=1
    for f in "$OUT"/floor.A.log "$OUT"/floor2.C.log "$OUT"/floor2.E.log; do
        echo "-- last run of $(basename "$f"):"
        tail -5 "$f" | grep floor
    done
fi

if has segment; then
    G=$BIN/gcut
    [ -f "$DATA/img1.png" ] || "$G" gen synth --size "$SIZE" --level hard --seed 1 \
        -o "$DATA/img1.png" --seeds "$DATA/seeds1.png" --truth "$DATA/truth1.png" >/dev/null
    IFS=';' read -ra variants <<<"$VARIANTS"
    cmds=()
    labels=()
    if [ -n "$BASE" ]; then
        labels+=(base)
        cmds+=(env GCUT_TIMELINE=1 GCUT_DEVICE_INIT_VERBOSE=1 "$BASE" segment "$DATA/img1.png" --seeds
            "$DATA/seeds1.png" -o "$DATA/mask-base.png" --iterations 1 ::)
    fi
    for v in "${variants[@]}"; do
        label=${v%%:*}
        labels+=("$label")
        # shellcheck disable=SC2206
        words=(${v#*:})
        # NAME=VALUE words are the environment; the others are arguments of gcut segment
        # (e.g. "pbk:--solver parallel-bk --threads 16"); a word "base" runs $BASE instead.
        settings=()
        extra=()
        bin=$G
        for w in "${words[@]}"; do
            if [[ $w == *=* ]]; then settings+=("$w"); elif [ "$w" = base ]; then bin=$BASE; else extra+=("$w"); fi
        done
        cmds+=(env GCUT_TIMELINE=1 GCUT_DEVICE_INIT_VERBOSE=1 "${settings[@]}" "$bin" segment
            "$DATA/img1.png" --seeds "$DATA/seeds1.png" -o "$DATA/mask-$label.png" --iterations 1
            "${extra[@]}" ::)
    done
    unset 'cmds[${#cmds[@]}-1]'
    echo "== gcut segment, hard $SIZE, --iterations 1, $RUNS runs of each in turn: ${labels[*]}"
    rm -f "$OUT"/seg.*.log
    "$W" -n "$RUNS" -w 1 -o "$OUT/seg" -- "${cmds[@]}" >"$OUT/seg-wall.txt" || status=1
    grep -E "median" "$OUT/seg-wall.txt" | cut -c1-60 | paste -d' ' - <(printf '%s\n' "${labels[@]}")
    # Masks: the same pixels in every variant (the base build may encode them differently).
    python3 - "$DATA" "${labels[@]}" <<'EOF' || status=1
import sys
data, labels = sys.argv[1], sys.argv[2:]
try:
    from PIL import Image
    import numpy as np
    masks = {l: np.asarray(Image.open(f"{data}/mask-{l}.png")) for l in labels}
except ImportError:  # no Pillow: compare the files' bytes (same encoder only)
    import numpy as np
    labels = [l for l in labels if l != "base"]
    masks = {l: np.frombuffer(open(f"{data}/mask-{l}.png", "rb").read(), np.uint8) for l in labels}
first = labels[0]
bad = [l for l in labels if masks[l].shape != masks[first].shape or (masks[l] != masks[first]).any()]
print("masks: " + ("all equal pixel for pixel (%d foreground)" % int((masks[first] > 0).sum())
                   if not bad else "DIFFER: " + ", ".join(bad)))
sys.exit(1 if bad else 0)
EOF
    # Each event's median time over the runs (the warm-up run left out), per variant.
    python3 - "$OUT" "$RUNS" "${labels[@]}" <<'EOF'
import re, sys, statistics
out, runs, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for k, label in enumerate(labels):
    text = open(f"{out}/seg.{chr(65 + k)}.log").read()
    blocks = []
    for line in text.splitlines():
        if "main entered" in line or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    blocks = blocks[-runs:]
    events, order = {}, []
    for b in blocks:
        for line in b:
            m = re.match(r"timeline +([0-9.]+) ms +(\S+) +(.*)", line)
            if m is None:
                continue
            key = m.group(2) + " " + re.sub(r"[0-9]+(\.[0-9]+)?", "#", m.group(3))[:90]
            if key not in events:
                events[key] = []
                order.append(key)
            events[key].append(float(m.group(1)))
    print(f"-- {label}: median ms from fork (min-max) over {len(blocks)} runs")
    for key in order:
        v = events[key]
        print(f"   {statistics.median(v):8.1f} ({min(v):6.1f}-{max(v):6.1f})  {key}")
    init = re.findall(r"device count \(driver start-up\) ([0-9.]+) ms, context ([0-9.]+) ms, kernel loads ([0-9.]+)", text)[-runs:]
    if init:
        for i, name in enumerate(("driver start-up", "context", "kernel loads")):
            v = [float(x[i]) for x in init]
            print(f"   {name}: median {statistics.median(v):.1f} ms ({min(v):.1f}-{max(v):.1f})")
    flows = sorted(set(re.findall(r"^solve .*, flow ([0-9]+)", text, re.M)))
    solvers = sorted(set(re.findall(r"^solve +[0-9.]+ ms +(\S+)", text, re.M)))
    print(f"   solver {', '.join(solvers)}; flow {', '.join(flows)}")
    for name in ("read", "model", "build", "solve", "write", "total"):
        pat = r"^image .*\(read ([0-9.]+) ms\)" if name == "read" else r"^%s +([0-9.]+) ms" % name
        v = [float(x) for x in re.findall(pat, text, re.M)[-runs:]]
        if v:
            print(f"   printed {name}: median {statistics.median(v):.1f} ms ({min(v):.1f}-{max(v):.1f})")
EOF
    grep -E "^run|median" "$OUT/seg-wall.txt" | tail -n $((RUNS * ${#labels[@]} + ${#labels[@]})) >"$OUT/seg-runs.txt"
fi
exit $status
