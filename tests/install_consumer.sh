#!/usr/bin/env bash
# install_consumer.sh BUILD_DIR - install a built tree into a fresh prefix and build the
# program in tests/consumer/ against it four ways: pkg-config (shared and --static) and
# find_package(gcut) (gcut::gcut and gcut::gcut_static); each must run and print "ok".
# Also checks that the prefix holds what `cmake --install` promises (README "Install").
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name gcut.pc -print -quit)")/..
for f in include/gcut.h bin/gcut share/licenses/gcut/LICENSE; do
    [ -e "$prefix/$f" ] || { echo "FAIL: $prefix/$f not installed"; exit 1; }
done
for f in libgcut.a libgcut.so pkgconfig/gcut.pc cmake/gcut/gcutConfig.cmake; do
    [ -e "$libdir/$f" ] || { echo "FAIL: $f not installed in $libdir"; exit 1; }
done
"$prefix/bin/gcut" --version
# gcut's FFmpeg module (where the build made one) goes to LIBDIR/gcut, where the installed gcut
# finds it relative to itself (src/io/ffmpeg_load.c), in this prefix as in any other.
if [ -e "$build/libgcut_ffmpeg.so" ]; then
    [ -e "$libdir/gcut/libgcut_ffmpeg.so" ] ||
        { echo "FAIL: libgcut_ffmpeg.so not installed in $libdir/gcut"; exit 1; }
    help=$(env -u GCUT_FFMPEG_MODULE "$prefix/bin/gcut" video --help)
    grep -q "decoded by gcut's FFmpeg module" <<<"$help" ||
        { echo "FAIL: the installed gcut does not find its FFmpeg module"; exit 1; }
fi
cc=${CC:-cc}
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
"$cc" -o "$work/pc_shared" "$src/tests/consumer/main.c" $(pkg-config --cflags --libs gcut)
LD_LIBRARY_PATH=$libdir "$work/pc_shared"
# The README's static line: the archive by path, the libraries it needs from --static.
# shellcheck disable=SC2046
"$cc" -o "$work/pc_static" "$src/tests/consumer/main.c" $(pkg-config --cflags gcut) \
    "$(pkg-config --variable=libdir gcut)/libgcut.a" \
    $(pkg-config --static --libs-only-other --libs-only-l gcut | sed 's/-lgcut//')
"$work/pc_static"
cmake -S "$src/tests/consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/cm" >"$work/cm.log" 2>&1 || { cat "$work/cm.log"; exit 1; }
"$work/cm/consumer_shared"
"$work/cm/consumer_static"
# Each linked the library it says: the shared ones need libgcut.so.*, the static ones do not.
if command -v ldd >/dev/null 2>&1; then
    # ldd's output is read whole before grep: `ldd | grep -q` under pipefail fails at random
    # when grep exits at the first match and ldd, still writing, dies of SIGPIPE.
    for exe in pc_shared cm/consumer_shared; do
        libs=$(LD_LIBRARY_PATH=$libdir ldd "$work/$exe")
        grep -q 'libgcut\.so' <<<"$libs" ||
            { echo "FAIL: $exe does not load libgcut.so"; exit 1; }
    done
    for exe in pc_static cm/consumer_static; do
        libs=$(ldd "$work/$exe")
        if grep -q 'libgcut\.so' <<<"$libs"; then
            echo "FAIL: $exe loads libgcut.so"
            exit 1
        fi
    done
fi
echo "ok: installed into a prefix; pkg-config and find_package(gcut) consumers (shared and static) run"
