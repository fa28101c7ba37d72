#!/usr/bin/env bash
# device_dlpack.sh - the Python package's DLPack test on a GPU machine that has CUDA, CMake, gcc
# and numpy but perhaps no scikit-build-core, CuPy, PyTorch or network: builds the extension
# with plain CMake (the CUDA solvers in), stages it beside python/gcut/__init__.py, and runs
# tests/python/test_dlpack.py without pytest, device memory coming from libcudart through ctypes
# (dlpack_util.CudaArray). GCUT_REQUIRE_GPU=1: a GPU test that skips is a failure. CuPy /
# PyTorch tests run too where they are installed. Log: $OUT/device_dlpack.log (or the build
# folder's). Environment: CUDA_ARCH (default 90), PYTHON (default python3), GCUT_DLPACK_BUILD
# (build folder, default build-dlpack), GCUT_CUDA (default ON; OFF for a CPU-only dry run),
# GCUT_DLPACK_BENCH (default 1): then also bench/python_bench.py's thread-pool run (8 grids of
# 512x512) and its 2048x2048 run (with PyMaxflow's ratio where `import maxflow` works there;
# carry its wheel to get it), each under a time limit, so the whole script stays near 2 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${GCUT_DLPACK_BUILD:-build-dlpack}
out=${OUT:-$build}
mkdir -p "$build" "$out"
log="$out/device_dlpack.log"
py=$("${PYTHON:-python3}" -c "import sys; print(sys.executable)")
start=$SECONDS
{
    echo "== device_dlpack.sh: $(date -u), $(uname -n), $("$py" --version 2>&1), numpy" \
        "$("$py" -c 'import numpy; print(numpy.__version__)')"
    command -v nvidia-smi >/dev/null && nvidia-smi -L || echo "(no nvidia-smi)"
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSKBUILD=ON -DGCUT_BUILD_TESTS=OFF \
        -DGCUT_CUDA="${GCUT_CUDA:-ON}" -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" \
        -DPython_EXECUTABLE="$py" >"$build/cmake.log" 2>&1 ||
        { tail -30 "$build/cmake.log"; exit 1; }
    grep -E "CUDA|Python" "$build/cmake.log" | head -8 || true
    cmake --build "$build" -j "$(nproc)" --target _gcut >"$build/build.log" 2>&1 ||
        { tail -40 "$build/build.log"; exit 1; }
    site="$build/site"
    rm -rf "$site" && mkdir -p "$site/gcut"
    cp python/gcut/__init__.py "$site/gcut/"
    cp "$(find "$build" -name '_gcut*.so' | head -1)" "$site/gcut/"
    echo "built in $((SECONDS - start)) s; solvers:"
    PYTHONPATH="$site" "$py" -c 'import gcut; [print("  ", s) for s in gcut.solvers()]'
    cd tests/python
    PYTHONPATH="../../$site" GCUT_REQUIRE_GPU="${GCUT_REQUIRE_GPU:-1}" PYTHONUNBUFFERED=1 \
        "$py" test_dlpack.py
    cd ../..
    if [ "${GCUT_DLPACK_BENCH:-1}" = 1 ]; then
        echo "== bench (timings: not part of pass/fail)"
        # PyMaxflow (the baseline) from carried wheels, if any: GCUT_WHEELS (default .whl).
        whl=${GCUT_WHEELS:-.whl}
        if ! "$py" -c "import maxflow" 2>/dev/null && ls "$whl"/PyMaxflow-*.whl >/dev/null 2>&1; then
            "$py" -m pip install -q --no-index --no-deps --target "$build/whl-site" \
                "$whl"/PyMaxflow-*.whl && site="$site:$build/whl-site" ||
                echo "(PyMaxflow wheel not installable)"
        fi
        PYTHONPATH="$site" timeout 30 "$py" bench/python_bench.py --pool 8 --shape 512x512 \
            --rounds 5 --solvers bk || echo "(pool bench stopped: rc $?)"
        PYTHONPATH="$site" timeout 75 "$py" bench/python_bench.py --shape 2048x2048 --rounds 3 \
            --no-general --solvers auto,bk,parallel-bk,cpu-pr || echo "(2048 bench stopped: rc $?)"
    fi
    echo "== device_dlpack.sh passed in $((SECONDS - start)) s"
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
