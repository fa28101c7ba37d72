#!/usr/bin/env bash
# run_cpu.sh - the CPU run behind docs/PERFORMANCE.md: gcut_bench on the synthetic grids of
# Hussein et al. 2007 (VII) for the CPU solvers, Kolmogorov's BK (kolmogorov_bk.py) against gcut
# bk on the same dumps, and the "CPU (build machine)" section rewritten between its markers.
#
# Environment (all optional):
#   REPEATS=5                 solves per solver and instance (medians reported)
#   SIZES=all                 2D sizes for gcut_bench (see gcut_bench --help)
#   VOLUMES=128,256           3D volumes (512^3 does not fit this 24 GB machine with bk)
#   SOLVERS=bk,cpu-pr         gcut solvers
#   THREADS=0                 threads for parallel solvers (0 = all cores)
#   KBK_SIZES=1024x1024,2048x2048   grids dumped for Kolmogorov's BK
#   KBK_SEEDS="1 2 3"         seeds of the dumped grids (each seed is another picture)
#   GRAPHS=random:1000000,layered:40000   general graphs for gcut bk against Kolmogorov's BK
#   TIMEOUT=900               seconds per solver and instance (all repeats) before it is killed
#   GCUT_COMMIT=...           commit to name in the doc when the tree is not a git checkout
#   KBK_IMPLS="pymaxflow thinmaxflow"   Python wrappers of Kolmogorov's BK to time
#   BUILD_DIR=build-perf      CMake build folder
#   NO_DOC=1                  do not touch docs/PERFORMANCE.md
# Outputs go to bench/out/ (git-ignored). Exit status: non-zero on any flow MISMATCH.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=bench/out
mkdir -p "$out"
REPEATS=${REPEATS:-5}
SIZES=${SIZES:-all}
VOLUMES=${VOLUMES:-128,256}
SOLVERS=${SOLVERS:-bk,cpu-pr}
THREADS=${THREADS:-0}
KBK_SIZES=${KBK_SIZES:-1024x1024,2048x2048}
KBK_SEEDS=${KBK_SEEDS:-1 2 3}
GRAPHS=${GRAPHS:-random:1000000,layered:40000}
TIMEOUT=${TIMEOUT:-900}
KBK_IMPLS=${KBK_IMPLS:-pymaxflow thinmaxflow}
BUILD_DIR=${BUILD_DIR:-build-perf}
command_line="bench/run_cpu.sh"
for var in REPEATS SIZES VOLUMES SOLVERS THREADS KBK_SIZES KBK_SEEDS KBK_IMPLS GRAPHS; do
    # Record the non-default settings so that the documented command reproduces the run.
    case "$var=${!var}" in
    REPEATS=5 | SIZES=all | VOLUMES=128,256 | SOLVERS=bk,cpu-pr | THREADS=0 | \
        KBK_SIZES=1024x1024,2048x2048 | "KBK_SEEDS=1 2 3" | "KBK_IMPLS=pymaxflow thinmaxflow" | \
        GRAPHS=random:1000000,layered:40000) ;;
    *) command_line="$var='${!var}' $command_line" ;;
    esac
done

echo "== build (Release, CPU only) in $BUILD_DIR =="
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF -DGCUT_BUILD_TESTS=OFF \
    >/dev/null
cmake --build "$BUILD_DIR" -j2 --target gcut_bench gcut_cli
bench_bin="$BUILD_DIR/gcut_bench"

echo "== Python venv with Kolmogorov's BK wrappers ($out/venv) =="
if [ ! -x "$out/venv/bin/python" ]; then
    python3 -m venv "$out/venv"
fi
for impl in $KBK_IMPLS; do
    case $impl in
    pymaxflow) pkg=PyMaxflow module=maxflow ;;
    thinmaxflow) pkg=thinmaxflow module=thinmaxflow ;;
    *) echo "run_cpu.sh: unknown KBK_IMPLS entry '$impl'" >&2; exit 64 ;;
    esac
    if ! "$out/venv/bin/python" -c "import numpy, $module" 2>/dev/null; then
        "$out/venv/bin/pip" install --quiet numpy "$pkg"
    fi
done

# gcut_bench: 0 ok, 1 some solver failed or was not built (reported in the table), 2 MISMATCH.
run_bench() {
    local rc=0
    "$bench_bin" "$@" || rc=$?
    if [ "$rc" -eq 2 ]; then
        echo "run_cpu.sh: *** gcut_bench reported a MISMATCH; docs not updated ***" >&2
        exit 2
    elif [ "$rc" -ne 0 ]; then
        echo "run_cpu.sh: gcut_bench exited $rc (a solver failed or is missing; see table)" >&2
    fi
}

# The machine may be shared: a busy core slows parallel solvers far more than serial ones, so
# the 1-minute load average is sampled through the run and reported with the numbers.
load_log="$out/load.log"
: >"$load_log"
(while :; do cut -d' ' -f1 /proc/loadavg >>"$load_log"; sleep 5; done) &
sampler=$!
trap 'kill "$sampler" 2>/dev/null || true' EXIT
echo "== gcut solvers on all instances =="
run_bench --sizes "$SIZES" --volumes "$VOLUMES" --solvers "$SOLVERS" --repeats "$REPEATS" \
    --threads "$THREADS" --timeout "$TIMEOUT" --csv "$out/cpu.csv" >"$out/cpu.md"
cat "$out/cpu.md"

echo "== gcut bk and Kolmogorov's BK on the same dumped instances =="
rm -rf "$out/dump"
: >"$out/kbk-gcut.csv"
first=1
for seed in $KBK_SEEDS; do
    # The general graphs once, with the first seed.
    graphs=none
    [ "$first" = 1 ] && graphs=$GRAPHS
    # One solve each: enough for the dump and its flow; the times come from the alternated
    # solves below.
    run_bench --sizes "$KBK_SIZES" --graphs "$graphs" --solvers bk --repeats 1 \
        --seed "$seed" --timeout "$TIMEOUT" --dump-dir "$out/dump" --csv "$out/kbk-seed.csv" \
        >/dev/null
    if [ "$first" = 1 ]; then cat "$out/kbk-seed.csv"; else tail -n +2 "$out/kbk-seed.csv"; fi \
        >>"$out/kbk-gcut.csv"
    first=0
done
# Version order keeps the seeds of one instance together (easy-1024x1024, then its -s2, -s3).
mapfile -t instances < <(ls -d "$out"/dump/*/ "$out"/dump/*.max 2>/dev/null | sed 's#/$##' |
    sort -V)
: >"$out/kbk.md"
[ ${#instances[@]} -eq 0 ] && KBK_IMPLS=""
for impl in $KBK_IMPLS; do
    "$out/venv/bin/python" bench/kolmogorov_bk.py --impl "$impl" --repeats "$REPEATS" \
        --gcut-csv "$out/kbk-gcut.csv" --gcut-cli "$BUILD_DIR/gcut" \
        --markdown "$out/kbk-$impl.md" "${instances[@]}"
    { cat "$out/kbk-$impl.md"; echo; } >>"$out/kbk.md"
done
rm -rf "$out/dump"

if [ -n "${NO_DOC:-}" ]; then
    exit 0
fi

kill "$sampler" 2>/dev/null || true
load_range=$(sort -n "$load_log" | sed -n '1p;$p' | paste -sd' ' -)
echo "== docs/PERFORMANCE.md =="
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
cores=$(nproc)
memory=$(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo)
if [ -n "${GCUT_COMMIT:-}" ]; then
    commit=$GCUT_COMMIT
else
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    dirty=$(git status --porcelain -- src include 2>/dev/null | head -1)
    [ -n "$dirty" ] && commit="$commit + uncommitted changes in src/ or include/"
fi
cc_version=$(cc --version | head -1)
{
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on **$cpu_model**, $cores cores, $memory,"
    echo "$cc_version, Release build (-O3), gcut commit $commit."
    echo "Each figure is the median of $REPEATS solves; threads = $THREADS (0 = all cores)."
    echo "The 1-minute load average, sampled every 5 s through the run, ranged over"
    echo "${load_range:-unknown} (min max) on $cores cores: above about 1 other work shared the"
    echo "machine, which slows the parallel \`cpu-pr\` far more than serial \`bk\`."
    echo "Command: \`$command_line\`."
    echo
    echo "### gcut solvers (speed-ups against gcut \`bk\` in the same run)"
    echo
    echo "\"construct\" is \`gcut_synth_grid\` (image synthesis and energy), timed once. \"build\""
    echo "is the solver's own setup as it reports it (for \`bk\`: the grid-to-graph conversion and"
    echo "its internal layout), \"solve\" the max-flow itself. \"x bk solve\" = bk solve / solver"
    echo "solve; \"x bk total\" compares build + solve. \"cut\" is the certificate"
    echo "(\`gcut_grid_verify\`: the cut's capacity equals the flow); all solvers' flows were"
    echo "checked equal per instance (the run stops on a mismatch)."
    echo
    sed -n '/^|/p' "$out/cpu.md"
    echo
    echo "### gcut \`bk\` against Kolmogorov's BK (same instances, same run)"
    echo
    echo "Grids: $KBK_SIZES, easy and hard (1024x1024 and 2048x2048 are the issue's bar), seeds"
    echo "$KBK_SEEDS (a name ending in -sN is seed N; no suffix is seed 1). General graphs"
    echo "(\`random:N\`:"
    echo "N nodes with 3 random edges each, capacities 1-100 both ways, a quarter of the nodes tied"
    echo "to s or t; \`layered:N\`: about sqrt(N) layers of sqrt(N) nodes, 3 forward arcs per node"
    echo "into the next layer) go to Kolmogorov's BK as DIMACS, one edge per arc, so a gcut edge"
    echo "with both capacities becomes two edges there (same flow, slightly different graph)."
    echo
    echo "gcut_bench dumps each instance (\`--dump-dir\`); \`bench/kolmogorov_bk.py\` loads it"
    echo "with numpy, builds the identical graph (one edge per neighbour pair with forward and"
    echo "reverse capacity in gcut's edge order, the same terminal capacities; node and edge"
    echo "counts checked) and times only \`maxflow()\`, $REPEATS times; before each of those"
    echo "solves it runs \`gcut maxflow --solver bk\` on the same dumped problem and keeps the"
    echo "solve_ms and build_ms it prints, so both solvers are timed alternately under the same"
    echo "load. Every flow was checked equal to gcut's (gcut_bench's and the command's)."
    echo "Speed-up = Kolmogorov maxflow ms / gcut bk solve ms (> 1: gcut is faster). gcut's"
    echo "build ms (conversion + layout) is shown apart, since Kolmogorov's graph construction"
    echo "in Python is not comparable and is not reported."
    echo
    cat "$out/kbk.md"
} >"$out/cpu-section.md"

python3 - "$root/docs/PERFORMANCE.md" "$out/cpu-section.md" <<'EOF'
import sys
doc_path, section_path = sys.argv[1], sys.argv[2]
begin, end = "<!-- cpu:begin (bench/run_cpu.sh writes this part) -->", "<!-- cpu:end -->"
section = open(section_path).read().rstrip("\n")
doc = open(doc_path).read()
if begin not in doc or end not in doc:
    sys.exit("run_cpu.sh: %s lacks the markers %s ... %s" % (doc_path, begin, end))
head, rest = doc.split(begin, 1)
_, tail = rest.split(end, 1)
open(doc_path, "w").write(head + begin + "\n" + section + "\n" + end + tail)
EOF
echo "run_cpu.sh: docs/PERFORMANCE.md updated"
