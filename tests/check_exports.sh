#!/usr/bin/env bash
# check_exports.sh LIBGCUT.so GCUT.H - the shared library exports exactly the public API: every
# dynamic symbol it defines is a gcut_ name of gcut.h (no gcut__ internals, no CUDA runtime,
# no libc-like helpers), every function gcut.h declares is there, and the SONAME carries the
# version of gcut.h (libgcut.so.0.MINOR before 1.0, libgcut.so.MAJOR after).
set -euo pipefail
lib=$1
header=$2
command -v nm >/dev/null && command -v readelf >/dev/null || {
    echo "SKIP: nm or readelf (binutils) not found"
    exit 77
}
fail=0
# Declarations in the header: lines that are neither comments nor preprocessor lines.
declared=$(grep -v '^[[:space:]]*\(/\?\*\|#\)' "$header" | grep -oE '\bgcut_[a-z0-9_]+\(' |
    tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$extra" ]; then
    echo "FAIL: exported but not declared in gcut.h:"
    echo "$extra" | sed 's/^/  /'
    fail=1
fi
if [ -n "$missing" ]; then
    echo "FAIL: declared in gcut.h but not exported:"
    echo "$missing" | sed 's/^/  /'
    fail=1
fi
major=$(sed -n 's/^#define GCUT_VERSION_MAJOR \([0-9]*\)$/\1/p' "$header")
minor=$(sed -n 's/^#define GCUT_VERSION_MINOR \([0-9]*\)$/\1/p' "$header")
if [ "$major" = 0 ]; then want="libgcut.so.0.$minor"; else want="libgcut.so.$major"; fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "$want" ]; then
    echo "FAIL: SONAME '$soname', expected '$want' from gcut.h's version"
    fail=1
fi
count=$(echo "$exported" | wc -l)
[ $fail = 0 ] && echo "ok: $count exported symbols, all declared in gcut.h; SONAME $soname"
exit $fail
