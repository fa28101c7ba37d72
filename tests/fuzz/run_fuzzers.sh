#!/usr/bin/env bash
# run_fuzzers.sh [SECONDS] - build the libFuzzer harnesses of tests/fuzz with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer (build-fuzz/) and run each for SECONDS
# (default 30; GCUT_FUZZ_SECONDS too) from a copy of its seed corpus. A crash, leak, sanitizer
# report or broken cut certificate fails the run; the input that did it is kept in
# build-fuzz/crashes/ (replay it with build-fuzz/tests/fuzz/fuzz_READER FILE). Without clang
# (or its libFuzzer runtime) it says so and exits 0: the corpus replay tests still run in ctest.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-${GCUT_FUZZ_SECONDS:-30}}
jobs=${GCUT_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
cc=${GCUT_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "fuzz: SKIPPED: no clang on this machine (install clang to fuzz; corpus replays ran)"
    exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
    >"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>/dev/null; then
    echo "fuzz: SKIPPED: $cc cannot link -fsanitize=fuzzer (its libFuzzer runtime is missing)"
    exit 0
fi
echo "== libFuzzer + ASan + UBSan build (build-fuzz/, $cc) =="
CC=$cc cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DGCUT_FUZZ=ON -DGCUT_SANITIZE=ON \
    -DGCUT_CUDA=OFF -DGCUT_BUILD_SHARED=OFF >/dev/null
readers=$(sed -n 's/^set(GCUT_FUZZ_READERS \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt)
targets=()
for r in $readers; do targets+=("fuzz_$r"); done
cmake --build build-fuzz -j "$jobs" --target "${targets[@]}" >build-fuzz/build.log 2>&1 || {
    tail -40 build-fuzz/build.log
    exit 1
}
mkdir -p build-fuzz/crashes
status=0
for r in $readers; do
    work=build-fuzz/corpus-$r
    rm -rf "$work" && mkdir -p "$work"
    cp tests/fuzz/corpus/"$r"/* "$work"/
    # Only the small corpus files: the examples the replay test adds decode to 450x300 and
    # larger pictures, which would cut the executions per second tenfold.
    echo "== fuzz_$r for ${seconds}s =="
    if ! ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        build-fuzz/tests/fuzz/fuzz_"$r" -max_total_time="$seconds" -max_len=16384 \
        -timeout=20 -rss_limit_mb=2048 -artifact_prefix=build-fuzz/crashes/"$r"- \
        -print_final_stats=1 "$work" >build-fuzz/fuzz-"$r".log 2>&1; then
        echo "FAIL: fuzz_$r (log: build-fuzz/fuzz-$r.log; input in build-fuzz/crashes/)"
        tail -40 build-fuzz/fuzz-"$r".log
        status=1
    else
        grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" build-fuzz/fuzz-"$r".log |
            tr '\n' ' '
        echo
    fi
done
exit $status
