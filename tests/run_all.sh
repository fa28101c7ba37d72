#!/usr/bin/env bash
# run_all.sh - the whole test suite, as the README gives it and .ci/run runs it:
#   1. a warnings-as-errors Release build (with the CUDA solvers compiled when nvcc is found;
#      GPU tests skip without a device) and every ctest test;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build (CPU only) and its tests.
# Build folders: build-test/ and build-asan/ (set GCUT_TEST_JOBS to change parallelism).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GCUT_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}

echo "== release build (-Werror) =="
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON >/dev/null
cmake --build build-test -j "$jobs"
ctest --test-dir build-test --output-on-failure -j "$jobs" -LE slow

echo "== ASan + UBSan build =="
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGCUT_WERROR=ON -DGCUT_SANITIZE=ON \
      -DGCUT_CUDA=OFF >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE slow
