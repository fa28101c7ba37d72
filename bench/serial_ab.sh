#!/usr/bin/env bash
# serial_ab.sh - two or more max-flow commands alternated on one instance, for the serial solvers'
# before/after measurements on a loaded machine (docs/CPU-SERIAL.md, third pass): each run its
# own process, the order rotating run by run (A B C, B C A, ...), the process CPU time from
# `perf stat -e task-clock` (a process waiting for a core does not accumulate it) beside the
# printed solve time, and build + solve where the command prints `c build_ms` (gcut maxflow:
# what one gcut_grid_solve call costs, the solver's own setup included); medians; flows checked
# equal. Output: one line per command.
#
# usage: bench/serial_ab.sh [-r RUNS] FILE -- 'CMD A' 'CMD B' ...
#   each CMD is run as `CMD FILE` and must print `c solve_ms X` and `s FLOW` (gcut maxflow,
#   mfa_maxflow ALGO); e.g.
#   bench/serial_ab.sh -r 7 g.max -- 'build/gcut maxflow --solver ibfs' \
#       'PATH/mfa_maxflow eibfs_i'
#   -r N   runs per command (default 5)
# Needs perf (linux-perf); without it only the solve times are printed, visibly.
# Exit status: 0, or 2 on a flow mismatch or a failed run.
set -euo pipefail
RUNS=5
while getopts "r:" opt; do
    case $opt in
    r) RUNS=$OPTARG ;;
    *) sed -n 2,15p "$0" >&2; exit 64 ;;
    esac
done
shift $((OPTIND - 1))
FILE=$1
shift
[ "${1:-}" = "--" ] && shift
cmds=("$@")
k=${#cmds[@]}
[ "$k" -ge 1 ] || { sed -n 2,15p "$0" >&2; exit 64; }
have_perf=1
perf stat -x, -e task-clock true >/dev/null 2>&1 || {
    have_perf=0
    echo "serial_ab.sh: perf stat unavailable: CPU time column SKIPPED" >&2
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for ((r = 0; r < RUNS; r++)); do
    for ((j = 0; j < k; j++)); do
        i=$(((j + r) % k))
        if [ $have_perf = 1 ]; then
            out=$(perf stat -x, -e task-clock ${cmds[$i]} "$FILE" 2>&1) || out="FAIL"
        else
            out=$(${cmds[$i]} "$FILE" 2>&1) || out="FAIL"
        fi
        awk -v i="$i" '/^c solve_ms/ {s=$3} /^c build_ms/ {b=$3} /^s / {f=$2}
            /task-clock/ {split($0, a, ","); c=a[1]} /FAIL/ {s="FAIL"}
            END {print i, s, (c == "" ? "-" : c), f, (b == "" ? "-" : b + s)}' <<<"$out" >>"$tmp"
    done
done
python3 - "$tmp" "$FILE" "${cmds[@]}" <<'EOF'
import sys, statistics
path, inst, cmds = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [l.split() for l in open(path)]
flows, bad = set(), False
print('# %s, %s, load %s' % (inst, '%d runs each' % (len(rows) // len(cmds)),
                             open('/proc/loadavg').read().split()[0]))
for i, c in enumerate(cmds):
    mine = [r for r in rows if r[0] == str(i)]
    if any(r[1] == 'FAIL' or len(r) < 4 for r in mine):
        print('%-60s FAILED' % c); bad = True; continue
    flows |= {r[3] for r in mine}
    solve = statistics.median(float(r[1]) for r in mine)
    cpu = [float(r[2]) for r in mine if r[2] != '-']
    total = [float(r[4]) for r in mine if len(r) > 4 and r[4] != '-']
    print('%-60s solve %9.1f ms   build+solve %s   cpu %s   flow %s' % (
        c, solve, '%9.1f ms' % statistics.median(total) if total else '-',
        '%9.1f ms' % statistics.median(cpu) if cpu else '-', mine[0][3]))
if len(flows) != 1:
    print('FLOW MISMATCH: ' + ' '.join(sorted(flows))); bad = True
sys.exit(2 if bad else 0)
EOF
