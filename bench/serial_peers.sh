#!/usr/bin/env bash
# serial_peers.sh - gcut's serial solvers beside EIBFS-I (Goldberg et al. 2015, excesses IBFS;
# the TPAMI 2023 review's build, `mfa_maxflow eibfs_i`) on the hard synthetic grids and general
# graphs: each run its own process, the order rotating run by run (A B, B A, ...), flows checked
# equal, medians of the solve and build times; a markdown table on stdout (docs/PERFORMANCE.md,
# "Serial CPU solvers against EIBFS-I"). gcut reads each grid as a gcut grid file, the peer the
# same problem as DIMACS (bench/serial_instances.c writes it); general graphs are DIMACS for both.
#
# usage: bench/serial_peers.sh [-p MFA_MAXFLOW] [-r REPEATS] [-s SOLVERS] [-P PEER_ALGOS]
#                              [-i INSTANCES] [-b BUILD_DIR] [-o OUT_DIR]
#   -p PATH   the peers' mfa_maxflow binary (or env MFA_MAXFLOW); without it the peer columns
#             are skipped, visibly
#   -r N      runs per solver and instance (default 5; medians)
#   -s LIST   gcut solvers (default grid-ibfs,grid-bk,ibfs,bk; a grid-only solver is left out
#             on general graphs)
#   -P LIST   peer algorithms (default eibfs_i)
#   -i LIST   instances (default: the hard grids and general graphs below), names:
#             hard|easy-WxH-C (2D, C = 4 or 8), hard|easy-NxNxN-C (3D, C = 6 or 26),
#             random-NODES, layered-NODES (gcut_bench's makers), genrmf-A-B (c1 1, c2 10000),
#             wash-ROWS-LEVELS (Washington RLG, bench/gen_washington.c, max capacity 10000,
#             seed 5; e.g. wash-32-2048 long, wash-8192-64 wide)
#   -b DIR    CMake build folder (default build-serial; Release, CPU only)
#   -o DIR    instance files and logs (default bench/out/serial)
# On the 2-core build machine, with the instance files already written, -r 3 took 14 minutes
# for the 8 hard grids (3 gcut solvers and EIBFS-I) and 5 for the 4 general graphs (2 solvers);
# -r 5, more solvers and the first run (writing the DIMACS files) take longer, and reading the
# large DIMACS files dominates the peer's side: split it with -i where a command has a time
# limit. Instance files are kept in OUT_DIR and reused.
# Exit status: 0, or 2 on any flow mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
MFA=${MFA_MAXFLOW:-}
REPEATS=5
SOLVERS=grid-ibfs,grid-bk,ibfs,bk
PEERS=eibfs_i
INSTANCES=hard-2048x2048-4,hard-4096x4096-4,hard-1920x1080-8,hard-4096x4096-8,hard-192x192x192-6,hard-256x256x256-6,hard-96x96x96-26,hard-128x128x128-26,random-1000000,layered-40000,genrmf-16-96,genrmf-48-8
BUILD_DIR=build-serial
OUT=bench/out/serial
while getopts "p:r:s:P:i:b:o:" opt; do
    case $opt in
    p) MFA=$OPTARG ;;
    r) REPEATS=$OPTARG ;;
    s) SOLVERS=$OPTARG ;;
    P) PEERS=$OPTARG ;;
    i) INSTANCES=$OPTARG ;;
    b) BUILD_DIR=$OPTARG ;;
    o) OUT=$OPTARG ;;
    *) sed -n 2,29p "$0" >&2; exit 64 ;;
    esac
done
mkdir -p "$OUT"
command -v python3 >/dev/null || { echo "serial_peers.sh: python3 is needed for the table" >&2; exit 1; }
if [ -z "$MFA" ] || [ ! -x "$MFA" ]; then
    echo "serial_peers.sh: no mfa_maxflow binary (-p or MFA_MAXFLOW): peer columns SKIPPED" >&2
    PEERS=""
fi

cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF -DGCUT_BUILD_TESTS=OFF \
    >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target gcut_cli gcut_bench serial_instances \
    gen_washington >/dev/null
gcut="$BUILD_DIR/gcut"
inst_bin="$BUILD_DIR/serial_instances"
echo "c machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# Make INSTANCE's files: $OUT/NAME.grid (grids) and $OUT/NAME.max.
make_instance() {
    local name=$1 f="$OUT/$1"
    [ -s "$f.max" ] && return 0
    case $name in
    hard-* | easy-*)
        local level=${name%%-*} rest=${name#*-}
        local size=${rest%-*} conn=${rest##*-}
        "$gcut" gen synth --size "$size" --seed 5 --level "$level" --connectivity "$conn" \
            --grid "$f.grid" >/dev/null
        "$inst_bin" grid "$f.grid" "$f.max"
        ;;
    random-* | layered-*)
        local kind=${name%%-*} nodes=${name#*-}
        "$BUILD_DIR/gcut_bench" --sizes none --volumes none --graphs "$kind:$nodes" \
            --solvers bk --repeats 1 --dump-dir "$OUT/dump" --no-markdown >/dev/null
        mv "$(ls -t "$OUT"/dump/*.max | head -1)" "$f.max"
        ;;
    genrmf-*)
        local a b
        IFS=- read -r _ a b <<<"$name"
        "$inst_bin" genrmf "$a" "$b" 1 10000 5 "$f.max"
        ;;
    wash-*)
        local rows levels
        IFS=- read -r _ rows levels <<<"$name"
        "$BUILD_DIR/gen_washington" "$rows" "$levels" 10000 5 "$f.max"
        ;;
    *) echo "serial_peers.sh: unknown instance '$name'" >&2; exit 64 ;;
    esac
}

# One run: prints "build_ms solve_ms flow" (or "FAIL").
run_one() {
    local who=$1 name=$2 f="$OUT/$2" log
    if [[ $who == peer:* ]]; then
        log=$("$MFA" "${who#peer:}" "$f.max" 2>&1) || { echo FAIL; return; }
    else
        local input="$f.max"
        [ -s "$f.grid" ] && input="$f.grid"
        log=$("$gcut" maxflow --solver "$who" "$input" 2>&1) || { echo FAIL; return; }
    fi
    awk '/^c build_ms/ {b=$3} /^c solve_ms/ {s=$3} /^s / {f=$2} END {print b, s, f}' <<<"$log"
}

results="$OUT/results.txt"
: >"$results"
IFS=, read -r -a inst_list <<<"$INSTANCES"
IFS=, read -r -a solver_list <<<"$SOLVERS"
IFS=, read -r -a peer_list <<<"$PEERS"
for name in "${inst_list[@]}"; do
    make_instance "$name"
    who=()
    for s in "${solver_list[@]}"; do
        # Grid-only solvers (no DIMACS path in gcut) sit out the general graphs.
        if [ ! -s "$OUT/$name.grid" ] && ! "$gcut" solvers | grep -qE "^$s +[a-z,]*graph"; then
            continue
        fi
        who+=("$s")
    done
    for p in "${peer_list[@]}"; do who+=("peer:$p"); done
    k=${#who[@]}
    for ((r = 0; r < REPEATS; r++)); do
        for ((j = 0; j < k; j++)); do
            w=${who[$(((j + r) % k))]}
            echo "$name $w $(run_one "$w" "$name")" >>"$results"
        done
    done
    echo "c done $name (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

python3 - "$results" "$SOLVERS" "$PEERS" "$INSTANCES" <<'EOF'
import sys, statistics
path, solvers, peers, instances = sys.argv[1:]
rows = {}
for line in open(path):
    p = line.split()
    rows.setdefault((p[0], p[1]), []).append(p[2:])
solvers = [s for s in solvers.split(',') if s]
peers = ['peer:' + p for p in peers.split(',') if p]
who = solvers + peers
mismatch = False
fmt = lambda v: '%.0f' % v if v >= 100 else '%.1f' % v
hdr = ['instance'] + [w.replace('peer:', '') + ' solve ms' for w in who]
if peers and solvers:
    hdr += ['%s / best gcut solve' % peers[0][5:]]
hdr += [w.replace('peer:', '') + ' build ms' for w in who] + ['flow']
print('| ' + ' | '.join(hdr) + ' |')
print('|---' + '|---:' * (len(hdr) - 2) + '|---|')
for name in instances.split(','):
    med, build, flows = {}, {}, set()
    for w in who:
        runs = rows.get((name, w))
        if not runs or any(r[0] == 'FAIL' or len(r) < 3 for r in runs):
            continue
        med[w] = statistics.median(float(r[1]) for r in runs)
        build[w] = statistics.median(float(r[0]) for r in runs)
        flows |= {r[2] for r in runs}
    ok = len(flows) == 1
    mismatch |= not ok
    cells = [name] + [fmt(med[w]) if w in med else '-' for w in who]
    if peers and solvers:
        mine = [med[s] for s in solvers if s in med]
        cells.append('%.2fx' % (med[peers[0]] / min(mine)) if peers[0] in med and mine else '-')
    cells += [fmt(build[w]) if w in build else '-' for w in who]
    cells.append(flows.pop() if ok else 'MISMATCH ' + ' '.join(sorted(flows)))
    print('| ' + ' | '.join(cells) + ' |')
sys.exit(2 if mismatch else 0)
EOF
