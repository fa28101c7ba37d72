#!/usr/bin/env bash
# run_all.sh - the whole test suite, as the README gives it and .ci/run runs it:
#   1. a warnings-as-errors Release build (with the CUDA solvers compiled when nvcc is found;
#      GPU tests skip without a device) and every ctest test, the `slow` label included;
#   2. `cmake --install` of that build into a temporary prefix and a consumer program built
#      against it with pkg-config and with find_package(gcut) (tests/install_consumer.sh);
#   3. an AddressSanitizer + UndefinedBehaviorSanitizer build (CPU only) and its tests, all but
#      the `slow` label (sanitizers make those 5-10x slower; step 1 ran them);
#   4. the Python package: `pip install .` into a venv in build-py/ and its pytest suite, also
#      on an ASan + UBSan build of the extension (GCUT_SKIP_PYTHON=1 skips it);
#   5. a ThreadSanitizer build (clang, LLVM libomp and its Archer tool; skipped, saying so,
#      without them) of the tests labelled `threads` (tests/CMakeLists.txt:
#      GCUT_THREADED_TESTS);
#   6. the libFuzzer harnesses of tests/fuzz, 30 s each under ASan + UBSan, when clang with
#      libFuzzer is present (tests/fuzz/run_fuzzers.sh; it says so when it skips).
# Build folders: build-test/, build-asan/, build-tsan/, build-fuzz/. Environment:
#   GCUT_TEST_JOBS=N     parallelism (default: all cores)
#   GCUT_FUZZ_SECONDS=S  seconds per fuzz target (default 30; 0 skips step 6)
#   GCUT_QUICK=1         steps 1 (without `slow`), 3 and 4 only: the quick edit-test loop
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${GCUT_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
quick=${GCUT_QUICK:-0}
step_start=$SECONDS
step() {
    echo "   ($((SECONDS - step_start)) s)"
    step_start=$SECONDS
    echo "== $* =="
}

echo "== release build (-Werror) =="
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DGCUT_WERROR=ON >/dev/null
cmake --build build-test -j "$jobs"
if [ "$quick" = 1 ]; then
    ctest --test-dir build-test --output-on-failure -j "$jobs" -LE slow
else
    ctest --test-dir build-test --output-on-failure -j "$jobs"

    step "install into a prefix; pkg-config and find_package(gcut) consumers"
    bash tests/install_consumer.sh build-test
fi

step "ASan + UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGCUT_WERROR=ON -DGCUT_SANITIZE=ON \
    -DGCUT_CUDA=OFF >/dev/null
cmake --build build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE slow

# ---- 4. the Python package (python/, tests/python/): a venv in build-py/, `pip install .`
#      (CUDA off: no GPU in CI, and nvcc would add minutes), then pytest, then the same tests on
#      an ASan + UBSan build of the extension. PyMaxflow from PyPI is the comparison oracle;
#      where it cannot be installed those tests skip, visibly. GCUT_SKIP_PYTHON=1 skips this.
step "python package"
py=build-py/venv/bin/python
pip_q=(-m pip install -q --disable-pip-version-check)
if [ "${GCUT_SKIP_PYTHON:-0}" = 1 ]; then
    echo "SKIPPED python tests: GCUT_SKIP_PYTHON=1"
elif ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "SKIPPED python tests: python3 with venv and ensurepip not found" \
         "(Debian: apt-get install python3-venv python3-dev)"
    [ "${CI:-}" != true ] || exit 1
elif ! { [ -x "$py" ] || python3 -m venv build-py/venv; } ||
     ! "$py" "${pip_q[@]}" numpy pytest "scikit-build-core>=0.10"; then
    # Offline: said loudly; in CI (CI=true) a missing test dependency is a failure.
    echo "SKIPPED python tests: numpy / pytest / scikit-build-core could not be installed"
    [ "${CI:-}" != true ] || exit 1
else
    "$py" "${pip_q[@]}" PyMaxflow ||
        echo "NOTE: PyMaxflow could not be installed: the comparisons with it will be skipped"
    "$py" "${pip_q[@]}" --no-build-isolation . \
        --config-settings=build-dir=build-py/skbuild \
        --config-settings=cmake.define.GCUT_CUDA=OFF \
        --config-settings=cmake.define.GCUT_WERROR=ON
    (cd tests/python && GCUT_CLI="$PWD/../../build-test/gcut" "../../$py" -m pytest -q -rs -p no:cacheprovider)
    # The sanitizer build is installed beside the venv and loaded first, with gcc's sanitizer
    # runtimes preloaded into python.
    asan=$(gcc -print-file-name=libasan.so 2>/dev/null || true)
    ubsan=$(gcc -print-file-name=libubsan.so 2>/dev/null || true)
    if [ -f "$asan" ] && [ -f "$ubsan" ]; then
        step "python package, ASan + UBSan"
        "$py" "${pip_q[@]}" --no-build-isolation --no-deps --upgrade \
            --target build-py/asan-site . \
            --config-settings=build-dir=build-py/skbuild-asan \
            --config-settings=cmake.build-type=Debug \
            --config-settings=cmake.define.GCUT_CUDA=OFF \
            --config-settings=cmake.define.GCUT_WERROR=ON \
            --config-settings=cmake.define.GCUT_SANITIZE=ON
        (cd tests/python && PYTHONPATH="$PWD/../../build-py/asan-site" LD_PRELOAD="$asan $ubsan" \
            ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            GCUT_CLI="$PWD/../../build-test/gcut" \
            "../../$py" -m pytest -q -p no:cacheprovider -k "not concurrent_solves_equal_serial")
    else
        echo "SKIPPED python ASan run: gcc's libasan/libubsan not found"
    fi
fi

if [ "$quick" = 1 ]; then
    echo "GCUT_QUICK=1: skipped the slow tests, install check, TSan build and fuzzing"
    exit 0
fi

step "ThreadSanitizer build of the tests labelled 'threads'"
# clang + LLVM's libomp + Archer: gcc's libgomp synchronises with futexes TSan cannot see, so
# every OpenMP barrier would be reported as a race there.
archer=
for lib in /usr/lib/llvm-*/lib/libarcher.so /usr/local/lib/libarcher.so; do
    [ -f "$lib" ] && archer=$lib
done
if ! command -v clang >/dev/null 2>&1 || [ -z "$archer" ]; then
    echo "SKIPPED: ThreadSanitizer needs clang and LLVM's libomp with Archer (Debian: clang" \
        "libomp-dev); gcc's libgomp is not TSan-aware"
else
    CC=clang cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGCUT_WERROR=ON \
        -DGCUT_TSAN=ON -DGCUT_CUDA=OFF -DGCUT_BUILD_SHARED=OFF >/dev/null
    if ! grep -q "^OpenMP_C_FOUND:BOOL=TRUE" build-tsan/CMakeCache.txt &&
        ! grep -q "OpenMP_C_FLAGS:STRING=-fopenmp" build-tsan/CMakeCache.txt; then
        echo "SKIPPED: clang finds no OpenMP here (libomp-dev): the threaded solvers would" \
            "run on one thread"
    else
        mapfile -t tsan_tests < <(ctest --test-dir build-tsan -N -L threads |
            sed -n 's/^ *Test *#[0-9]*: //p')
        echo "tests: ${tsan_tests[*]} (clang, archer $archer)"
        cmake --build build-tsan -j "$jobs" --target "${tsan_tests[@]}"
        TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" \
            OMP_TOOL_LIBRARIES=$archer \
            ctest --test-dir build-tsan --output-on-failure -j 1 -L threads
    fi
fi

if [ "${GCUT_FUZZ_SECONDS:-30}" != 0 ]; then
    step "fuzz targets (libFuzzer, ASan + UBSan)"
    bash tests/fuzz/run_fuzzers.sh "${GCUT_FUZZ_SECONDS:-30}"
fi
step "done"
