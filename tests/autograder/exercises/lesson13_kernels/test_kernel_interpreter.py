"""Lesson 13 graded where Triton compiles (a machine with a GPU): the battery's CPU run interprets
the learner's kernels in-process, so a mistake that only the interpreter's probes see loses its
marks there too. Simulated here in a child process with TRITON_INTERPRET=0: kernels are then
JITFunctions, as on a GPU, and the CPU run is the only one (no CUDA device)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]

# One worker runs the module: its compiled-mode child process runs once, not once per worker.
# The exhaustive tier (`make test-all`): five batteries in compiled mode, most of a minute.
pytestmark = [pytest.mark.lesson13, pytest.mark.slow, pytest.mark.exhaustive,
              pytest.mark.xdist_group("compiled-triton")]
pytest.importorskip("triton")

COMPILED_MODE = r"""
import json, os, sys
import triton.language as tl
from autograder.grading import verdict
from tools import catalogue

def compiled(entry):  # the entry as written on a GPU machine: no interpreter asked for
    code = entry.code.replace('os.environ["TRITON_INTERPRET"] = "1"', "pass")
    return catalogue.load(entry.exercise, code)

from autograder.exercises.lesson13_kernels.kernel_interpreter import _language_objects

def fingerprint():  # every attribute of triton.language's modules and classes, by identity
    return {f"{owner.__name__}.{key}": id(value) for owner in _language_objects()
            for key, value in vars(owner).items()}

before = fingerprint()
names = json.loads(sys.argv[1])
entries = [e for e in catalogue.unusual() + catalogue.mistakes() if [e.exercise, e.name] in names]
results = {e.name: verdict(e.exercise, compiled(e)) for e in entries}
after = fingerprint()
changed = sorted(key for key in before if before[key] != after.get(key))
print(json.dumps({"results": results, "variable": os.environ.get("TRITON_INTERPRET"),
                  "tl.sum": type(tl.sum).__name__, "changed": changed}))
"""

ENTRIES = {  # (exercise, name): the first line's hint, or None for a correct answer
    ("silu_mul", "tl.where picking the branch whose exp cannot overflow; backward with "
                 "tl.sigmoid, the derivative written with silu: s + silu (1 - s)"): None,
    ("rms_norm_rows", "a program per block of 4 rows, a (4, BLOCK_D) block"): None,
    ("silu_mul", "no mask on the tail"): "kernel reads outside its tensors",
    ("silu_mul", "float64 computed in float32"): "computes float64 inputs in float32",
    ("rms_norm_rows", "every program adds into one shared row (load, add, store): a race"):
        "of one kernel launch store to the same address",
}


@pytest.fixture(scope="module")
def graded_compiled():
    """Each entry's verdict in a process where Triton compiles, and what it left behind."""
    environment = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": str(REPO)}
    names = json.dumps([list(key) for key in ENTRIES])
    run = subprocess.run([sys.executable, "-c", COMPILED_MODE, names], cwd=REPO, env=environment,
                         capture_output=True, text=True,
                         timeout=900)  # a loaded 2-core machine: one battery took 6 min
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("key", list(ENTRIES), ids=[name for _, name in ENTRIES])
def test_compiled_kernels_are_graded_as_interpreted_ones(graded_compiled, key):
    """Does a correct answer pass, and a mistake fail with its hint, where Triton compiles?"""
    passed, message = graded_compiled["results"][key[1]]
    hint = ENTRIES[key]
    if hint is None:
        assert passed, message
    else:
        assert not passed and hint in message.splitlines()[0], message


def test_compiled_mode_comes_back(graded_compiled):
    """After the CPU runs, do TRITON_INTERPRET and every attribute of triton.language read as
    before? (The interpreter patches tl.program_id and the rest while it runs a kernel; left
    patched, the next compile for the GPU fails.)"""
    assert graded_compiled["variable"] == "0"
    assert graded_compiled["tl.sum"] == "JITFunction"
    assert graded_compiled["changed"] == []
