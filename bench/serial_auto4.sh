#!/usr/bin/env bash
# serial_auto4.sh - the measurement behind auto's rule for 4-connected grids (docs/CPU-SERIAL.md,
# "Fifth pass"): grid-ibfs against grid-bk on easy and hard 4-connected synthetic grids from
# 128^2 to 4096^2, through bench/serial_grids_ab.sh (each run its own process, alternating,
# medians, flows checked equal, solve and build + solve). Three lanes run at once, each pinned to
# its own core (taskset), so that the whole set fits one short call on a many-core host; the
# alternation within each lane keeps its ratios fair. Logs: OUT_DIR/serial.log, lane1-3.log.
#
# usage: bench/serial_auto4.sh [OUT_DIR]   (default bench/out/auto4; instances in /tmp/serial)
# Needs at least 7 cores (lanes on cores 2, 4, 6). Exit status: 0, or 2 on a flow mismatch.
set -o pipefail
cd "$(dirname "$0")/.."
D=${1:-bench/out/auto4}
mkdir -p "$D"
L=$D/serial.log
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; uptime; } >"$L"
t0=$(date +%s)
cmake -S . -B build-serial -DCMAKE_BUILD_TYPE=Release -DGCUT_CUDA=OFF -DGCUT_BUILD_TESTS=OFF \
    >"$D/cmake.log" 2>&1 &&
    cmake --build build-serial -j"$(nproc)" --target gcut_cli serial_instances >>"$D/cmake.log" 2>&1 ||
    { tail -30 "$D/cmake.log"; exit 1; }
echo "build $(($(date +%s) - t0)) s" >>"$L"
S="-n -s grid-ibfs,grid-bk -o /tmp/serial"
bash bench/serial_grids_ab.sh $S -r 5 -c 2 hard-4096x4096-4 hard-3840x2160-4 hard-2048x2048-4 \
    >"$D/lane1.log" 2>&1 &
p1=$!
bash bench/serial_grids_ab.sh $S -r 5 -c 4 easy-4096x4096-4 easy-3840x2160-4 easy-2048x2048-4 \
    >"$D/lane2.log" 2>&1 &
p2=$!
bash bench/serial_grids_ab.sh $S -r 7 -c 6 hard-1920x1080-4 easy-1920x1080-4 hard-1024x1024-4 \
    easy-1024x1024-4 hard-512x512-4 easy-512x512-4 hard-256x256-4 easy-256x256-4 \
    hard-128x128-4 easy-128x128-4 >"$D/lane3.log" 2>&1 &
p3=$!
status=0
for p in $p1 $p2 $p3; do wait "$p" || status=2; done
{ uptime; echo "total $(($(date +%s) - t0)) s, status $status"; } >>"$L"
cat "$L" "$D"/lane*.log
exit $status
