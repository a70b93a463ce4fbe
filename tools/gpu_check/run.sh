#!/usr/bin/env bash
# On a lent GPU machine (its own CUDA torch; no registry): the CUDA half of the grading
# library's tests, then the GPU benchmarks, in a copy of this tree. Results under $OUT (or
# ./gpu_check_out): gpu.txt, tests.log, cuda.xml, bench.log. TEST_S and BENCH_S bound each part;
# TESTS (pytest paths and options, e.g. '-k "cuda and silu_mul" tests/autograder') narrows a
# rerun, and BENCH_S=0 leaves the benchmarks out.
set -uo pipefail
source_tree="$(cd "$(dirname "$0")/../.." && pwd)"
out="${OUT:-$source_tree/gpu_check_out}"; mkdir -p "$out"
work=$(mktemp -d); cp -r "$source_tree/." "$work"; cd "$work"
python3 -m pip install -q --no-index --no-deps --no-compile --target "$work/.site" .whl/*.whl || exit 1
# nbgrader itself (a server extension stack) is not needed for these tests: only the two cell
# predicates grader.notebook_format imports from it
mkdir -p .site/nbgrader && : > .site/nbgrader/__init__.py
cat > .site/nbgrader/utils.py <<'PY'
def is_grade(cell):
    return cell.metadata.get("nbgrader", {}).get("grade", False)


def is_solution(cell):
    return cell.metadata.get("nbgrader", {}).get("solution", False)
PY
# the JupyterLab fixtures (nbclient, a server, Chromium) are not there: this copy's conftest
# leaves them out, and the tests that need them are not run
sed -i 's/^from tests.kernels import THREADS/THREADS = {"OMP_NUM_THREADS": "1"}/; /^from tests.jupyterlab import/d' tests/conftest.py
export PYTHONPATH="$work/.site:$work" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())" | tee -a "$out/gpu.txt"
# INT, not TERM, at the limit: pytest then still writes its summary and the XML
eval "tests=(${TESTS:-tests/autograder tests/widgets})"
timeout -s INT -k 20 "${TEST_S:-330}" python3 -m pytest "${tests[@]}" -n 16 -q \
  -m "not browser and not slow" --continue-on-collection-errors -p no:cacheprovider \
  -o addopts="--import-mode=importlib -rfE" --junitxml="$out/cuda.xml" > "$out/tests.log" 2>&1
echo "pytest exit $?" >> "$out/tests.log"
grep -E "^(FAILED|ERROR)|passed|failed" "$out/tests.log" | cut -c1-300 | head -150
[ "${BENCH_S:-150}" = 0 ] && exit 0
timeout "${BENCH_S:-150}" python3 -m tools.bench kernels attention fused checkpointing norms > "$out/bench.log" 2>&1
echo "bench exit $?" >> "$out/bench.log"
tail -120 "$out/bench.log"
