#!/usr/bin/env bash
# Here, before a GPU check: the wheels the grading tests need beyond what a lent GPU machine's
# Python has (torch, triton, numpy, matplotlib, pytest, xdist are there; the notebook stack is
# not, and the machine reaches no package registry), for its Python 3.12, into .whl/ (ignored).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx "/.whl/" .git/info/exclude 2>/dev/null || echo "/.whl/" >> .git/info/exclude
pins=$(.venv/bin/python -m pip freeze | grep -iE "^(asttokens|comm|executing|fastjsonschema|ipython|ipython.pygments.lexers|ipywidgets|jedi|jsonschema|jsonschema.specifications|jupyter.client|jupyter.core|jupyterlab.widgets|jupytext|matplotlib.inline|mdit.py.plugins|nbclient|nbformat|parso|pexpect|platformdirs|prompt.toolkit|ptyprocess|pure.eval|python.dateutil|pyzmq|referencing|rpds.py|six|stack.data|tornado|traitlets|wcwidth|widgetsnbextension)==")
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 -d .whl $pins
echo "$(ls .whl | wc -l) wheels in .whl ($(du -sh .whl | cut -f1)); on the GPU machine, with .whl carried:"
echo "  bash tools/gpu_check/run.sh"
