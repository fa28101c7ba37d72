#!/usr/bin/env bash
# serial_grids_ab.sh - gcut's serial grid solvers and EIBFS-I alternated on the synthetic grids
# (docs/CPU-SERIAL.md, "Fourth pass"; the table in docs/PERFORMANCE.md): for each instance, writes
# the grid file (`gcut gen synth --seed 5`) and its DIMACS copy (bench/serial_instances.c), then
# runs bench/serial_ab.sh on it: gcut's solvers read the grid, EIBFS-I the DIMACS file (through a
# wrapper that swaps the extension), each run its own process, order rotating, medians, flows
# checked equal.
#
# usage: bench/serial_grids_ab.sh [-r RUNS] [-p MFA_MAXFLOW] [-s SOLVERS] [-B BASE_GCUT]
#                                 [-b BUILD_DIR] [-o OUT_DIR] [-c CPU] [-n] INSTANCE...
#   INSTANCE  hard|easy-WxH-C (2D, C = 4 or 8) or hard|easy-NxNxN-C (3D, C = 6 or 26)
#   -r N      runs per command (default 5)
#   -p PATH   the peers' mfa_maxflow (or env MFA_MAXFLOW); without it EIBFS-I is SKIPPED, visibly
#   -s LIST   gcut solvers (default grid-ibfs)
#   -B PATH   another gcut binary whose grid-ibfs runs beside them (a baseline build)
#   -b DIR    CMake build folder (default build-serial; Release, CPU only)
#   -o DIR    instance files (default bench/out/serial; kept and reused)
#   -c CPU    pin every run to this core (taskset -c CPU), so that several of these scripts
#             can run at once on a many-core host, one core each (skipped, visibly, without
#             taskset)
#   -n        no build (the build folder's gcut and serial_instances are used as they are)
# The DIMACS copy is written only for EIBFS-I (with -p).
# Exit status: 0, or 2 on a flow mismatch or a failed run.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=5
MFA=${MFA_MAXFLOW:-}
SOLVERS=grid-ibfs
BASE=""
BUILD_DIR=build-serial
OUT=bench/out/serial
PIN=""
NOBUILD=0
while getopts "r:p:s:B:b:o:c:n" opt; do
    case $opt in
    r) RUNS=$OPTARG ;;
    p) MFA=$OPTARG ;;
    s) SOLVERS=$OPTARG ;;
    B) BASE=$OPTARG ;;
    b) BUILD_DIR=$OPTARG ;;
    o) OUT=$OPTARG ;;
    c) PIN=$OPTARG ;;
    n) NOBUILD=1 ;;
    *) sed -n 2,24p "$0" >&2; exit 64 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n 2,24p "$0" >&2; exit 64; }
mkdir -p "$OUT"
if [ $NOBUILD = 0 ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF -DGCUT_BUILD_TESTS=OFF \
        >/dev/null
    cmake --build "$BUILD_DIR" -j"$(nproc)" --target gcut_cli serial_instances >/dev/null
fi
gcut=$(cd "$BUILD_DIR" && pwd)/gcut
pin=""
if [ -n "$PIN" ]; then
    if command -v taskset >/dev/null; then
        pin="taskset -c $PIN "
    else
        echo "serial_grids_ab.sh: taskset not found: runs NOT pinned to core $PIN" >&2
    fi
fi
cmds=()
IFS=, read -r -a solver_list <<<"$SOLVERS"
for s in "${solver_list[@]}"; do cmds+=("$pin$gcut maxflow --solver $s"); done
[ -n "$BASE" ] && cmds+=("$pin$BASE maxflow --solver grid-ibfs")
dimacs=0
if [ -n "$MFA" ] && [ -x "$MFA" ]; then
    printf '#!/bin/sh\nexec "%s" eibfs_i "${1%%.grid}.max"\n' "$MFA" >"$OUT/eibfs_i.sh"
    chmod +x "$OUT/eibfs_i.sh"
    cmds+=("$pin$OUT/eibfs_i.sh")
    dimacs=1
else
    echo "serial_grids_ab.sh: no mfa_maxflow binary (-p or MFA_MAXFLOW): EIBFS-I SKIPPED" >&2
fi
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')${pin:+, pinned: $pin}"
status=0
for name in "$@"; do
    level=${name%%-*} rest=${name#*-}
    size=${rest%-*} conn=${rest##*-}
    f="$OUT/$name"
    [ -s "$f.grid" ] || "$gcut" gen synth --size "$size" --seed 5 --level "$level" \
        --connectivity "$conn" --grid "$f.grid" >/dev/null
    [ $dimacs = 0 ] || [ -s "$f.max" ] || "$BUILD_DIR/serial_instances" grid "$f.grid" "$f.max"
    bash bench/serial_ab.sh -r "$RUNS" "$f.grid" -- "${cmds[@]}" || status=2
done
exit $status
