"""Submissions that break the grader's assumptions, one per fault it must survive.

Each is the solved lesson with one thing wrong, as the files of a submitted folder
({relative path: bytes}). Written for lesson 00 (exercises Square and WeightedSum) but any lesson
whose first two exercises have answer cells ``answer_<name>`` works.
"""

import copy
import textwrap

import nbformat

from tools.submissions import solved, with_answer, with_cell_before


def _code(text: str) -> str:
    return textwrap.dedent(text).strip()


def _files(notebook, name: str, **extra: bytes) -> dict[str, bytes]:
    return {f"{name}.ipynb": nbformat.writes(notebook).encode(), **extra}


def _without(notebook, grade_id: str):
    changed = copy.deepcopy(notebook)
    changed.cells = [c for c in changed.cells
                     if c.metadata.get("nbgrader", {}).get("grade_id") != grade_id]
    return changed


def _cell(notebook, grade_id: str):
    return next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


# The loops sleep rather than spin: the grader sees the same cell that never ends, and a test
# machine's other work keeps the core.
LOOP = "import time\nwhile True:\n    time.sleep(0.1)"
IGNORES_SIGINT = """
import signal
import time
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    time.sleep(0.1)
"""
EXITS = "import os\nos._exit(3)"
HOGS_MEMORY = """
hog = []
while True:
    hog.append(torch.ones(10_000_000))  # 40 MB a step, until the memory cap stops it
"""
FLOODS_OUTPUT = 'print("x" * 30_000_000)  # 30 MB of output'
LEAVES_PROCESSES = """
import os, subprocess
subprocess.Popen(["sleep", "{first}"])
if os.fork() == 0:  # a daemon that detaches itself
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "{second}"])
    os._exit(0)
os.wait()
"""
SHADOW = b'raise SystemExit("a submission shadowed a module the grader imports")\n'
FAKE_SEAL = b'def boot():\n    print("forged boot")\n'


# student -> (the status the grades CSV must give, which exercise it may cost: "first",
# "second", "all" or None)
EXPECTED = {
    "clean": ("ok", None),
    "loops-forever": ("timeout", "first"),
    "loops-ignoring-sigint": ("timeout", "first"),
    "kernel-exits": ("kernel-died", "second"),
    "exhausts-memory": ("memory-limit", None),
    "floods-output": ("output-limit", None),
    "invalid-json": ("invalid-notebook", "all"),
    "empty-notebook": ("invalid-notebook", "all"),
    "renamed-notebook": ("renamed-notebook", None),
    "edited-test-cell": ("edited-test-cell", None),
    "deleted-test-cell": ("deleted-test-cell", None),
    "markdown-test-cell": ("markdown-test-cell", None),
    "duplicated-test-cell": ("duplicated-test-cell", None),
    "torch-py-beside": ("shadowing-file", None),
    "sitecustomize-beside": ("shadowing-file", None),
    "grading-package-beside": ("shadowing-file", None),
    "leaves-processes": ("stray-process", None),
}


def stray_commands(token: int) -> tuple[str, str]:
    """The two processes the leaves-processes submission starts: sleeps of a length unique to
    ``token``, so that a test can look for exactly them."""
    return f"sleep 600.{token}", f"sleep 601.{token}"


def fault_submissions(released, source, name: str, first: str, second: str,
                      token: int = 0) -> dict:
    """student -> the files of a submitted folder, one student per entry of EXPECTED."""
    good = solved(released, source)
    answer_first = _cell(good, f"answer_{first}").source
    answer_second = _cell(good, f"answer_{second}").source

    def loop_in_backward(body: str):
        # the first exercise's class, with an endless loop at the top of every method
        lines = answer_first.splitlines()
        out = []
        for line in lines:
            out.append(line)
            if line.strip().startswith("def "):
                indent = " " * (len(line) - len(line.lstrip()) + 4)
                out.append(textwrap.indent(body, indent))
        return "\n".join(out)

    markdown = copy.deepcopy(good)
    test = _cell(markdown, second)
    test.cell_type = "markdown"
    test.pop("outputs", None)
    test.pop("execution_count", None)
    edited = copy.deepcopy(good)
    _cell(edited, first).source = 'print("all tests passed, trust me")'
    duplicated = copy.deepcopy(good)
    index = duplicated.cells.index(_cell(duplicated, first))
    duplicate = copy.deepcopy(duplicated.cells[index])
    duplicate.id = "learner-duplicate"
    duplicated.cells.insert(index + 1, duplicate)
    return {
        "clean": _files(good, name),
        "loops-forever": _files(with_answer(good, f"answer_{first}", loop_in_backward(LOOP)),
                                name),
        "loops-ignoring-sigint": _files(with_answer(
            good, f"answer_{first}", answer_first + "\n\n" + _code(IGNORES_SIGINT)), name),
        "kernel-exits": _files(with_answer(
            good, f"answer_{second}", answer_second + "\n\n" + EXITS), name),
        "exhausts-memory": _files(with_cell_before(good, second, _code(HOGS_MEMORY)), name),
        "floods-output": _files(with_cell_before(good, first, FLOODS_OUTPUT), name),
        "invalid-json": {f"{name}.ipynb": b'{"cells": [ this is not json'},
        "empty-notebook": {f"{name}.ipynb": b""},
        "renamed-notebook": {"my copy.ipynb": nbformat.writes(good).encode()},
        "edited-test-cell": _files(edited, name),
        "deleted-test-cell": _files(_without(good, second), name),
        "markdown-test-cell": _files(markdown, name),
        "duplicated-test-cell": _files(duplicated, name),
        "torch-py-beside": _files(good, name, **{"torch.py": SHADOW}),
        "sitecustomize-beside": _files(good, name, **{"sitecustomize.py": SHADOW}),
        "grading-package-beside": _files(good, name, **{"autograder/__init__.py": SHADOW,
                                                         "autograder/seal.py": FAKE_SEAL}),
        "leaves-processes": _files(with_cell_before(good, second, _code(LEAVES_PROCESSES).format(
            first=stray_commands(token)[0].split()[1],
            second=stray_commands(token)[1].split()[1])), name),
    }


def write_folder(folder, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
