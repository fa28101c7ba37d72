#!/usr/bin/env bash
# video_cpu.sh - `gcut video` end to end (frames in, masks out) on the synthetic test videos of
# docs/VIDEO.md, per size: frames per second, per-stage milliseconds per frame and the accuracy
# against the generator's ground truth. Runs the configurations of each size alternately
# (A B A B ...) and reports the median of REPS runs, so that load on a shared machine hits
# every configuration alike. Usage:
#   bash bench/video_cpu.sh [BUILD_DIR] [SIZES] [FRAMES] [REPS]
# e.g. bash bench/video_cpu.sh build "320x240 640x480 1280x720 1920x1080" 60 3
# Extra arguments for every `gcut video` run: GCUT_VIDEO_ARGS (e.g. "--solver cpu-pr").
# Configurations: CONFIGS, a list of NAME=ARGS separated by ';' (default: the band graph with
# the threaded pipeline, the same frame by frame, and the whole-frame cut). The "x BASELINE"
# column is each configuration's fps over BASELINE's (default: the last configuration), both
# medians of the same alternating run.
set -euo pipefail
build=${1:-build}
sizes=${2:-"320x240 640x480 1280x720 1920x1080"}
frames=${3:-60}
reps=${4:-3}
gcut="$build/gcut"
work=${GCUT_BENCH_DIR:-$(mktemp -d)}
configs=${CONFIGS:-"band-threads=--queue 4;band-serial=--queue 0;full-frame=--queue 4 --full-frame"}
IFS=';' read -r -a cfgs <<<"$configs"
baseline=${BASELINE:-${cfgs[-1]%%=*}} # fps ratios against this configuration (default: the last)
echo "# gcut video: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $frames frames per video, median of $reps runs, configurations run alternately"
printf "%-10s %-13s %8s %8s %8s %8s %8s %8s %8s %s\n" size config fps "x $baseline" decode model \
    build solve write "IoU / error%"
for size in $sizes; do
    dir="$work/$size"
    mkdir -p "$dir"
    if [ ! -d "$dir/frames" ]; then
        "$gcut" gen video --size "$size" --frames "$frames" -o "$dir/frames" --truth "$dir/truth" \
            --format jpg
    fi
    declare -A runs=()
    for ((r = 0; r < reps; r++)); do
        for cfg in "${cfgs[@]}"; do
            name=${cfg%%=*}
            args=${cfg#*=}
            # shellcheck disable=SC2086
            out=$("$gcut" video "$dir/frames" --init "$dir/truth/truth_000000.png" \
                -o "$dir/masks-$name" --truth "$dir/truth" --quiet $args ${GCUT_VIDEO_ARGS:-})
            runs[$name]+="$out"$'\n'"@@"$'\n'
        done
    done
    lines=()
    base_fps=""
    for cfg in "${cfgs[@]}"; do
        name=${cfg%%=*}
        line=$(printf "%s" "${runs[$name]}" | awk -v size="$size" -v name="$name" '
            BEGIN { n = 0 }
            /^frames/ { fps[n] = $4 + 0 }
            /^per frame/ { dec[n] = $4; mod[n] = $7; bld[n] = $10; sol[n] = $13; wr[n] = $16 }
            /^truth/ { iou[n] = $4; err[n] = $7; sub(/,/, "", iou[n]) }
            /^@@/ { n++ }
            function med(a,   i, j, t, b) { for (i = 0; i < n; i++) b[i] = a[i]
                for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
                return b[int(n / 2)] }
            END { printf "%s %s %.1f %.2f %.2f %.2f %.2f %.2f %s %s\n", size, name,
                  med(fps), med(dec), med(mod), med(bld), med(sol), med(wr), iou[0], err[0] }')
        lines+=("$line")
        [ "$name" = "$baseline" ] && base_fps=$(echo "$line" | awk '{ print $3 }')
    done
    for line in "${lines[@]}"; do
        echo "$line" | awk -v b="${base_fps:-0}" '{
            r = (b > 0) ? sprintf("%.2fx", $3 / b) : "-"
            printf "%-10s %-13s %8.1f %8s %8.2f %8.2f %8.2f %8.2f %8.2f %s / %s\n", $1, $2, $3, r,
                $4, $5, $6, $7, $8, $9, $10 }'
    done
    unset runs
done
