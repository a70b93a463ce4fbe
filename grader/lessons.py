"""The course's lessons: one jupytext source each in ``lessons/``, turned into the nbgrader
"source" notebook (solutions and hidden tests included) that ``nbgrader generate_assignment``
releases."""

import platform
import re
import tomllib
from pathlib import Path

import nbformat

from .notebook_format import NBGRADER_SCHEMA, SKIP_WHEN_GRADING

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
COURSE, SOLUTIONS = ROOT / "course", ROOT / "solutions"  # the generated notebooks


# What an IPython kernel on this Python reports as its language (ipykernel's
# IPythonKernel.language_info). JupyterLab writes it into a notebook's metadata as the kernel
# starts: a notebook built with less shows as modified the moment it opens (the browser test
# test_a_built_lesson_opens_unmodified). With another Python, JupyterLab records its version.
LANGUAGE_INFO = {"name": "python", "version": platform.python_version(),
                 "mimetype": "text/x-python", "codemirror_mode": {"name": "ipython", "version": 3},
                 "pygments_lexer": "ipython3", "nbconvert_exporter": "python",
                 "file_extension": ".py"}

PACKAGE_VARIABLE = "AUTOGRAD_COURSE_PACKAGE"
# The course is published nowhere: a learner installs it from a copy of the course or its wheel
# (README, "Learners"), or the first cell installs what AUTOGRAD_COURSE_PACKAGE names.
SETUP_CELL = """\
# Setup. Under `make lab` it does nothing; where the course is not installed (Colab, a
# JupyterHub) it installs what ${variable} names (a wheel, a folder or a pip requirement).
import importlib.util, os, subprocess, sys

if importlib.util.find_spec("autograder") is None:
    course_package = os.environ.get("${variable}")
    if not course_package:
        raise ModuleNotFoundError(
            "The course package (autograder, widgets) is not installed in this kernel: "
            "`%pip install ${wheel}` "
            "(the course's wheel, from your instructor or built by `pip wheel --no-deps .` in "
            "a copy of the course) or `%pip install /path/to/the/course`, then run this cell "
            "again; or set ${variable} to one of them "
            "(`%env ${variable}=...` in a cell above) and this cell installs it.")
    print(f"Installing the course package: pip install {course_package}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", course_package], check=True)
    importlib.invalidate_caches()
    print("Installed autograder and widgets; the notebook goes on as usual.")

import autograder

autograder.check_environment()"""


PROGRESS_NOTE = """\
## Where you stand

Every self-check you run is remembered in `.autograd-progress.json` beside this notebook. The
cell below lists this lesson's exercises with the outcome of their last self-check, how far you
are in each lesson, and the next exercise to do. (`from widgets import progress_view;
progress_view()` shows every exercise as a table with a Refresh button.)"""


def course_wheel() -> str:
    """The file name of the course's wheel, as `pip wheel --no-deps .` builds it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name = re.sub(r"[-_.]+", "_", project["name"]).lower()
    return f"{name}-{project['version']}-py3-none-any.whl"


def setup_cell() -> nbformat.NotebookNode:
    """The first cell (``source_notebook`` collapses its code in JupyterLab: a learner trial read
    its install code, which does nothing under `make lab`, as noise; its output shows)."""
    source = (SETUP_CELL.replace("${variable}", PACKAGE_VARIABLE)
              .replace("${wheel}", course_wheel()))
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"locked": True}})


def lesson_names() -> list[str]:
    return sorted(path.stem for path in LESSONS.glob("[0-9][0-9]_*.py"))


def _nbgrader_metadata(cell, index: int) -> dict | None:
    """Complete the short nbgrader metadata written in a cell header."""
    given = cell.metadata.get("nbgrader")
    if given is None and cell.cell_type == "markdown":
        given = {"locked": True}
    if given is None:
        return None
    grade, solution = given.get("grade", False), given.get("solution", False)
    metadata = {
        "grade": grade,
        "grade_id": given.get("grade_id", f"cell-{index:03d}"),
        "locked": given.get("locked", not solution),
        "schema_version": NBGRADER_SCHEMA,
        "solution": solution,
    }
    if grade:
        metadata["points"] = given["points"]
    return metadata


GENERATED_FROM = "autograd_course"  # notebook metadata: which lesson source a notebook came from
# Code cells that run on after an error under Run All (JupyterLab 4 and nbclient honour the
# tag): an unsolved exercise shows its hint and the rest of the lesson still runs. nbgrader's
# Validate runs every cell anyway and reports each failing test cell.
RUN_ON = "raises-exception"


# An ungraded scratch cell (a live checker's input, a "try it") may carry its worked answer:
#     ### BEGIN WORKED
#     derivative_from_y = lambda y: y * (1 - y)
#     ### LEARNER
#     derivative_from_y = None  # your step 2: lambda y: ...
#     ### END WORKED
# The source nbgrader releases keeps the learner's lines only; the solutions keep the worked.
WORKED = re.compile(r"^[ \t]*### BEGIN WORKED\n(.*?)"
                    r"^[ \t]*### LEARNER\n(.*?)"
                    r"^[ \t]*### END WORKED\n?", re.MULTILINE | re.DOTALL)


def with_worked(source: str, worked: bool) -> str:
    """``source`` with each worked region replaced by its worked or its learner's lines."""
    replaced = WORKED.sub(lambda match: match[1] if worked else match[2], source)
    return replaced if source.endswith("\n") else replaced.rstrip("\n")


def source_notebook(lesson: str, *, worked: bool = False) -> nbformat.NotebookNode:
    """The instructor's nbgrader source notebook for a lesson (``worked``: scratch cells with
    their worked answers, for the solutions)."""
    import jupytext  # here, not above: grading imports this module but reads no lesson source

    path = LESSONS / f"{lesson}.py"
    notebook = jupytext.read(path, fmt="py:percent")
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.source = with_worked(cell.source, worked)
    setup = setup_cell()
    notebook.cells[:0] = [setup]
    notebook.cells += [nbformat.v4.new_markdown_cell(PROGRESS_NOTE),
                       nbformat.v4.new_code_cell(f"autograder.show_progress({lesson!r})")]
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index:03d}"
        metadata = _nbgrader_metadata(cell, index)
        skipped = SKIP_WHEN_GRADING in cell.metadata.get("tags", [])
        # collapsed in JupyterLab (the setup cell, and a helper's cell whose header asks for it):
        # a learner needs its output, not its code
        hidden = cell is setup or cell.metadata.get("jupyter", {}).get("source_hidden", False)
        cell.metadata = {"nbgrader": metadata} if metadata else {}
        if hidden:
            cell.metadata["jupyter"] = {"source_hidden": True}
        if cell.cell_type == "code" and cell is not setup:
            cell.metadata["tags"] = [RUN_ON, SKIP_WHEN_GRADING] if skipped else [RUN_ON]
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                       "name": "python3"},
        "language_info": LANGUAGE_INFO,
        # for course authors and the drift test, out of the learner's sight
        GENERATED_FROM: {"generated_from": f"lessons/{lesson}.py",
                         "note": "Generated by `make notebooks`: edit the lesson source, not "
                                 "this notebook."},
    }
    nbformat.validate(notebook)
    return notebook


def resolve_lessons(given: list[str], known: list[str]) -> list[str]:
    """Each of ``given`` as one of ``known``: its full name, its number (``07`` or ``7`` for
    ``07_outputs``), or its number and the start of the rest of one lesson's name (``07_out``,
    ``7_out``, ``1_``: the number is read as a number wherever it is given, so ``1`` and ``1_``
    are both 01_sigmoid, never 10_norms). Raises ValueError naming each one that matches no
    lesson or several, with the lessons it could mean."""
    resolved, problems = [], []
    for name in given:
        if name in known:
            resolved.append(name)
            continue
        number = re.match(r"\d+", name)
        if number:  # a lesson's number, then the start of its name: 7, 07, 7_out are 07_outputs
            rest = name[number.end():]
            candidates = [lesson for lesson in known if re.match(r"\d+", lesson)
                          and int(re.match(r"\d+", lesson)[0]) == int(number[0])
                          and lesson[re.match(r"\d+", lesson).end():].startswith(rest)]
        else:
            candidates = [lesson for lesson in known if lesson.startswith(name)]
        if len(candidates) == 1:
            resolved.append(candidates[0])
        elif candidates:
            problems.append(f"{name!r} could be {' or '.join(candidates)}")
        else:
            close = [lesson for lesson in known if name.lower() in lesson.lower()]
            problems.append(f"no lesson {name!r}" + (
                f" (did you mean {' or '.join(close)}?)" if close else ""))
    if problems:
        raise ValueError(f"{'; '.join(problems)}; the lessons: {', '.join(known)}")
    return list(dict.fromkeys(resolved))
