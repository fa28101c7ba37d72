#!/usr/bin/env bash
# python_ab.sh BASE_COMMIT [PAIRS] [SHAPE] - the Python layer's own cost before and after a
# change: installs BASE_COMMIT's package into build-py/base-site (beside the working tree's
# install in build-py/venv, which must exist: tests/run_all.sh makes it), then runs
# `python_bench.py --overhead` (3 rounds in one process, medians) alternately on the base and
# the current install, PAIRS times (default 5), each line tagged base/new with the load.
# "layer_ms" = total minus the solver's own setup and solve (the same solver work on both
# sides), i.e. argument checks, array conversions, the grid fill and the labels.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench/python_ab.sh BASE_COMMIT [PAIRS] [SHAPE]}
pairs=${2:-5}
shape=${3:-2048x2048}
py=build-py/venv/bin/python
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive "$base" | tar -x -C "$src"
rm -rf build-py/base-site
(cd "$src" && "$OLDPWD/$py" -m pip install -q --disable-pip-version-check --no-build-isolation \
    --no-deps --target "$OLDPWD/build-py/base-site" . --config-settings=build-dir="$src/sk" \
    --config-settings=cmake.define.GCUT_CUDA=OFF)
for _ in $(seq "$pairs"); do
    for v in base new; do
        pp=; [ $v = new ] || pp=build-py/base-site
        echo "$v $(PYTHONPATH=$pp "$py" bench/python_bench.py --overhead --rounds 3 \
            --shape "$shape" --solvers bk) load $(cut -d' ' -f1 /proc/loadavg)"
    done
done
