#!/usr/bin/env bash
# golden_ffmpeg_module.sh - gcut's FFmpeg module (src/ffmpeg/, loaded by src/io/ffmpeg_load.c
# only when a video file is opened; Garrett & Saito 2009, 4): the gcut binary links no FFmpeg
# library; with the module beside it a video file is written and segmented; a missing module,
# a wrong GCUT_FFMPEG_MODULE and a library that is not a module give errors naming what to do,
# and `gcut segment` works without the module.
# Usage: golden_ffmpeg_module.sh PATH/TO/gcut   (GCUT_SOURCE_DIR = repository root)
set -u
gcut="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
checks=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
pass() { checks=$((checks + 1)); }
# expect STATUS WHAT -- COMMAND...: run it (output in $work/out), check its exit status.
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
grep_out() {
    if grep -Eq -- "$1" "$work/out"; then pass; else
        fail "$2: no '$1' in output"
        sed 's/^/    /' "$work/out" >&2
    fi
}

if ! "$gcut" gen video --size 32x32 --frames 1 -o "$work/probe" >/dev/null 2>&1; then
    echo "SKIP: this build cannot write PNG frames"
    exit 77
fi
unset GCUT_FFMPEG_MODULE

# 1. The command itself needs no FFmpeg library: none among its dynamic dependencies.
if command -v readelf >/dev/null; then
    if readelf -d "$gcut" | grep NEEDED | grep -Eq 'libav(format|codec|util)|libswscale'; then
        fail "the gcut binary links FFmpeg: $(readelf -d "$gcut" | grep -E 'libav|libsw')"
    else
        pass
    fi
fi

# 2. The same binary alone in a folder (no module beside it, none installed for it): segment
#    works; a video file is refused with a message naming the module and what to do.
mkdir -p "$work/alone"
cp "$gcut" "$work/alone/gcut"
"$gcut" gen synth --size 64x48 -o "$work/s.png" --seeds "$work/s-seeds.png" >/dev/null
expect 0 "segment without the module" -- "$work/alone/gcut" segment "$work/s.png" \
    --seeds "$work/s-seeds.png" -o "$work/s-mask.png"
printf 'not a video' >"$work/x.mp4"
module="$(dirname "$gcut")/libgcut_ffmpeg.so"
if [ -e "$(dirname "$(dirname "$gcut")")/lib/gcut/libgcut_ffmpeg.so" ] ||
    [ -e /usr/local/lib/gcut/libgcut_ffmpeg.so ]; then
    echo "note: an installed module is visible to a lone binary; check 2b skipped"
else
    expect 1 "video file without the module" -- "$work/alone/gcut" video "$work/x.mp4" \
        --init "$work/s-mask.png" -o "$work/m0"
    grep_out "libgcut_ffmpeg.so, which was not found" "missing module: names the module"
    grep_out "GCUT_FFMPEG_MODULE" "missing module: names the variable"
fi

# 3. GCUT_FFMPEG_MODULE naming nothing, or a library that is not a module.
expect 1 "GCUT_FFMPEG_MODULE to a missing file" -- env GCUT_FFMPEG_MODULE="$work/none.so" \
    "$gcut" video "$work/x.mp4" --init "$work/s-mask.png" -o "$work/m1"
grep_out "GCUT_FFMPEG_MODULE names .*none.so, which does not exist" "missing file named"
notmod=""
for lib in "$(dirname "$gcut")/libgcut.so" /lib/x86_64-linux-gnu/libm.so.6 /usr/lib64/libm.so.6; do
    if [ -e "$lib" ]; then
        notmod="$lib"
        break
    fi
done
if [ -n "$notmod" ]; then
    expect 1 "GCUT_FFMPEG_MODULE to another library" -- env GCUT_FFMPEG_MODULE="$notmod" \
        "$gcut" video "$work/x.mp4" --init "$work/s-mask.png" -o "$work/m2"
    grep_out "is not a gcut FFmpeg module" "another library refused"
fi

# 4. With the module (where this build made one): a video written by `gcut gen video` is
#    segmented frame by frame, with the default search (beside the binary) and through
#    GCUT_FFMPEG_MODULE from the lone binary.
if [ -e "$module" ]; then
    expect 0 "gen video --video" -- "$gcut" gen video --size 96x64 --frames 6 \
        -o "$work/frames" --truth "$work/truth" --video "$work/clip.avi"
    expect 0 "video file" -- "$gcut" video "$work/clip.avi" --init "$work/truth/truth_000000.png" \
        -o "$work/m3" --quiet
    n=$(ls "$work/m3" | grep -c '^mask_.*\.png$')
    if [ "$n" -eq 6 ]; then pass; else fail "video file: $n masks, expected 6"; fi
    expect 0 "video file, module by variable" -- env GCUT_FFMPEG_MODULE="$module" \
        "$work/alone/gcut" video "$work/clip.avi" --init "$work/truth/truth_000000.png" \
        -o "$work/m4" --quiet
    if cmp -s "$work/m3/mask_000005.png" "$work/m4/mask_000005.png"; then pass; else
        fail "the two runs' last masks differ"
    fi
    expect 1 "garbage video" -- "$gcut" video "$work/x.mp4" --init "$work/s-mask.png" \
        -o "$work/m5"
    grep_out "x.mp4" "garbage video named"
else
    echo "note: this build made no FFmpeg module (FFmpeg's development libraries not found)"
fi

echo "golden_ffmpeg_module: $checks checks, $failures failures"
[ "$failures" -eq 0 ]
