#!/usr/bin/env bash
# `make install`: the course environment in VENV (default .venv), one step at a time, each
# saying what it does, about how long it takes on an idle 2-core machine (measured from a
# clean clone with pip's cache cold), the most it should take at the load this machine has as
# the step starts, and how long it took here.
set -euo pipefail
venv="${1:-.venv}"
python="$venv/bin/python"
started=$(date +%s)
step_started=$started

# how many times slower than idle a step may run now: 1 + the last minute's load per core (a
# step that keeps every core busy gets 1 / (1 + load) of each; pip's single process less
# slowed), read again at each step, as the load moves; below a tenth per core, idle.
# LOADAVG: another file in /proc/loadavg's format (the tests')
slowdown() {
  awk -v cores="$(nproc)" '{ s = $1 / cores; if (s < 0.1) print 1; else printf "%.2f\n", 1 + s }' \
    "${LOADAVG:-/proc/loadavg}" 2>/dev/null || echo 1
}

step() {  # step NUMBER TEXT SECONDS: announce a step, its idle estimate and its bound at this load
  step_started=$(date +%s)
  local times estimate="about $3 s on an idle 2-core machine"
  times=$(slowdown)
  if [ "$times" != 1 ]; then
    estimate+=", up to $(awk -v s="$3" -v t="$times" 'BEGIN { printf "%d", s * t + 0.999 }') s"
    estimate+=" at this machine's load"
  fi
  echo "[install $1/4] $2 ($estimate; elapsed so far $(( step_started - started )) s)"
}
done_step() {
  echo "             done in $(( $(date +%s) - step_started )) s"
}

step 1 "creating $venv and upgrading pip" 10
test -x "$python" || python3 -m venv "$venv"
"$python" -m pip install --quiet --upgrade pip
done_step

step 2 "installing the pinned packages of requirements.txt: torch $(grep -oP '^torch==\K\S+' requirements.txt) (CPU build), JupyterLab, nbgrader, Triton and the test tools" 50
# pip prints a line per package it collects, so a slow download shows where it is
"$python" -m pip install --no-compile --progress-bar off -r requirements.txt \
  | { grep --line-buffered -E '^(Collecting|Successfully installed)' || true; } | cut -c1-100
done_step

step 3 "installing the course itself (autograder, grader, widgets), editable" 5
# setuptools says an editable install of top-level packages may be shadowed by same-named
# folders in the working directory: here those folders are the packages themselves
PYTHONWARNINGS="ignore:Editable installation:UserWarning" \
  "$python" -m pip install --quiet --no-deps --no-build-isolation --editable .
done_step

step 4 "byte-compiling the environment on every core, so the first lesson starts quickly" 32
# a file only a newer Python compiles (torch ships one, in Python 3.12 syntax) is left as pip
# leaves it, without an error; one run over everything (groups would wait on their slowest
# file), with a line every 10 s so that a slow machine shows it is still at work. Left out:
# the packages' own test suites (every test/ and tests/ folder) and sympy.physics, which no
# kernel, grader, server or test of the course imports: 1,951 of 11,014 files, and 18% of the
# step's CPU (70 s against 86 s, the two run side by side on one machine; 39 s of CI's run
# becomes about 32). torch.testing._internal stays: importing torch reads parts of it.
"$python" -m compileall -qq -j 0 -x '/site-packages/(.+/)?tests?/|/site-packages/sympy/physics/' "$venv/lib" &
compiling=$!
said_at=10
while kill -0 "$compiling" 2>/dev/null; do
  sleep 1
  waited=$(( $(date +%s) - step_started ))
  if [ "$waited" -ge "$said_at" ] && kill -0 "$compiling" 2>/dev/null; then
    echo "             still compiling after $waited s"
    said_at=$(( said_at + 10 ))
  fi
done
wait "$compiling" || true
done_step

echo "installed in $(( $(date +%s) - started )) s: make lab opens the course, make test runs the tests"
