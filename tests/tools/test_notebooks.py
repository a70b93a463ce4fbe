"""The generated notebooks: in sync with their sources, free of answers, and runnable.

Solutions run as a stranger would run them: in a fresh environment with only what Colab ships
and the course's wheel (tests/stranger.py), so a notebook that needs anything else fails. Where
Chromium is installed the browser test runs them so, in JupyterLab; here, only where it is not.
A learner's copy differs only in its answer cells; the untouched copy of every lesson is run
by real grading instead (tests/grader/test_course_config.py: it fails only with its stubs'
NotImplementedError)."""

import re

import nbformat
import pytest

from grader.lessons import lesson_names, source_notebook
from grader.notebook_format import GRADE_CALL, HIDDEN_TESTS, SOLUTION_MARKER, is_test_cell
from tests.jupyterlab import browser_missing
from tests.kernels import bounded_environment, run_notebook
from tests.released import every_lesson_released
from tests.stranger import colab_python, course_site, layered_environment
from tools.notebooks import (C10_LOG_CLOCK, COURSE, KERNEL_PID, SOLUTIONS, solution_notebook,
                             without_log_clock, without_outputs)

LESSONS = lesson_names()


@pytest.fixture(scope="module")
def stranger(tmp_path_factory):
    """(python, environment): Colab's packages in a layer of its own (what lesson 13's first
    cell installs goes there), and the course's wheel on the path."""
    folder = tmp_path_factory.mktemp("stranger")
    python = layered_environment(colab_python(), folder / "python")
    return python, bounded_environment(PYTHONPATH=str(course_site(folder)))


def _run(notebook, cwd, stranger) -> nbformat.NotebookNode:
    python, environment = stranger
    return run_notebook(notebook, cwd, python=python, env=environment, allow_errors=True)


def _errors(notebook) -> list[str]:
    return [f"{output.ename}: {output.evalue}" for cell in notebook.cells
            if cell.cell_type == "code" for output in cell.outputs
            if output.output_type == "error"]


SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION(.*?)### END SOLUTION", re.DOTALL)


def _solution_lines(source) -> set[str]:
    """Lines found only inside BEGIN/END SOLUTION regions of a source notebook."""
    inside, outside = set(), set()
    for cell in source.cells:
        inside |= {line.strip() for region in SOLUTION_REGION.findall(cell.source)
                   for line in region.splitlines() if line.strip()}
        outside |= {line.strip() for line in SOLUTION_REGION.sub("", cell.source).splitlines()}
    return inside - outside


def test_every_syllabus_lesson_has_both_copies():
    """Is there a learner and a solution notebook for every lesson source, and nothing else?"""
    assert LESSONS, "no lesson sources found"
    assert sorted(p.stem for p in COURSE.glob("*.ipynb")) == LESSONS
    assert sorted(p.stem for p in SOLUTIONS.glob("*.ipynb")) == LESSONS


@pytest.mark.slow
def test_learner_copies_match_their_sources(tmp_path_factory):
    """Would `make notebooks` regenerate course/ byte for byte? (It releases the sources with
    nbgrader generate_assignment, as `make release` does: the tests' released course is read.)"""
    released = every_lesson_released(tmp_path_factory)
    for lesson in LESSONS:
        notebook = nbformat.read(released / "release" / lesson / f"{lesson}.ipynb", as_version=4)
        committed = (COURSE / f"{lesson}.ipynb").read_text()
        built_on = nbformat.reads(committed, as_version=4).metadata.language_info.version
        notebook.metadata.language_info.version = built_on  # the one difference a Python makes
        assert committed == nbformat.writes(notebook) + "\n", (
            f"course/{lesson}.ipynb is stale: run `make notebooks`")


@pytest.mark.parametrize("lesson", LESSONS)
def test_solution_copies_match_their_sources(lesson):
    """Apart from outputs, is solutions/ exactly what the source generates?"""
    committed = nbformat.read(SOLUTIONS / f"{lesson}.ipynb", as_version=4)
    expected = solution_notebook(source_notebook(lesson, worked=True))
    assert nbformat.writes(without_outputs(committed)) == nbformat.writes(without_outputs(expected)), (
        f"solutions/{lesson}.ipynb is stale: run `make notebooks`")


@pytest.mark.parametrize("lesson", LESSONS)
def test_learner_copies_hold_no_answers_and_no_hidden_tests(lesson):
    """Can a learner read a solution or a hidden test in course/?"""
    text = (COURSE / f"{lesson}.ipynb").read_text()
    assert "HIDDEN TESTS" not in text and "grade(" not in text
    assert "BEGIN SOLUTION" not in text
    learner = nbformat.reads(text, as_version=4)
    code_lines = {line.strip() for cell in learner.cells if cell.cell_type == "code"
                  for line in cell.source.splitlines()}
    leaked = sorted(_solution_lines(source_notebook(lesson)) & code_lines)
    assert not leaked, f"solution code in course/{lesson}.ipynb: {leaked[:3]}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_solution_copies_hold_no_hidden_tests(lesson):
    """Do the self-study solutions leave out hidden tests and nbgrader markers?"""
    text = (SOLUTIONS / f"{lesson}.ipynb").read_text()
    assert "HIDDEN TESTS" not in text and "grade(" not in text
    assert not SOLUTION_MARKER.search(text) and not HIDDEN_TESTS.search(text)


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_setup_cell_and_helpers_alone_open_collapsed(lesson):
    """Does each copy open with its setup cell's code collapsed (a learner trial read its
    install code, which does nothing under `make lab`, as noise), and is every other collapsed
    cell a helper the lesson's source collapses (a cell that only defines a function the
    learner calls, never an exercise or a test; a learner trial scrolled past 30 lines of
    checker code to reach its result)?"""
    for folder in (COURSE, SOLUTIONS):
        cells = nbformat.read(folder / f"{lesson}.ipynb", as_version=4).cells
        hidden = [i for i, cell in enumerate(cells)
                  if cell.metadata.get("jupyter", {}).get("source_hidden")]
        assert hidden[:1] == [0] and "autograder.check_environment()" in cells[0].source
        for cell in (cells[i] for i in hidden[1:]):
            nbgrader = cell.metadata.get("nbgrader", {})
            assert cell.cell_type == "code" and not nbgrader.get("solution") \
                and not nbgrader.get("grade") and cell.source.startswith("def "), cell.source


@pytest.mark.parametrize("lesson", LESSONS)
def test_committed_solutions_were_executed_cleanly(lesson):
    """Does every code cell of the committed solutions have run, without an error output?"""
    notebook = nbformat.read(SOLUTIONS / f"{lesson}.ipynb", as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "solutions were not executed"
    assert not _errors(notebook)
    text = SOLUTIONS.joinpath(f"{lesson}.ipynb").read_text()
    assert not C10_LOG_CLOCK.search(text) and not KERNEL_PID.search(text), \
        "an output keeps a clock or a pid: the next rebuild would change the bytes"


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_shows_a_widget_view(lesson):
    """Does every lesson's executed solution display at least one widget view
    (widgets.inspect_saved, widgets.backward_flow, a lesson's explorer)?"""
    notebook = nbformat.read(SOLUTIONS / f"{lesson}.ipynb", as_version=4)
    assert any(WIDGET_MIME in output.get("data", {}) for cell in notebook.cells
               for output in cell.get("outputs", [])), f"solutions/{lesson} shows no widget view"


def test_a_warning_loses_its_clock_and_pid_and_keeps_its_words():
    """Does a rebuild give the same bytes when PyTorch's C++ or a Python warning prints?"""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("stream", name="stderr", text=(
            "[W1124 12:34:03.608093071 BatchedFallback.cpp:82] Warning: slow\n"
            "[W1124 12:34:03 not a clock\n"
            "/tmp/ipykernel_16885/3090928919.py:13: UserWarning: hook\n"))])])
    without_log_clock(notebook)
    assert notebook.cells[0].outputs[0].text == (
        "[W BatchedFallback.cpp:82] Warning: slow\n[W1124 12:34:03 not a clock\n"
        "/tmp/ipykernel/3090928919.py:13: UserWarning: hook\n")


# a "# %% [markdown]" marker left out turns prose into comments of the code cell above it
MARKDOWN_IN_CODE = re.compile(r"^# (<details|</details>|#{2,4} )", re.MULTILINE)


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_markdown_is_left_in_a_code_cell(lesson):
    """Does every collapsed block and heading of the source render as markdown?"""
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    stray = [cell.id for cell in notebook.cells
             if cell.cell_type == "code" and MARKDOWN_IN_CODE.search(cell.source)]
    assert not stray, f"course/{lesson}.ipynb shows markdown as code comments in {stray}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_learner_copies_carry_no_execution_state(lesson):
    """Are learner copies clean: no outputs, no execution counts, deterministic cell ids?"""
    notebook = nbformat.read(COURSE / f"{lesson}.ipynb", as_version=4)
    for index, cell in enumerate(notebook.cells):
        assert cell.id == f"cell-{index:03d}"
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


@pytest.mark.slow
@pytest.mark.skipif(browser_missing() is None, reason="run top to bottom on the same "
                    "stranger's kernel by tests/test_browser.py (make test-all), and under "
                    "nbgrader by tests/grader/test_course_config.py (every tier)")
@pytest.mark.parametrize("lesson", LESSONS)
def test_solution_runs_top_to_bottom(lesson, tmp_path, stranger):
    """Does the solution notebook run from a fresh kernel without a single error?"""
    notebook = nbformat.read(SOLUTIONS / f"{lesson}.ipynb", as_version=4)
    assert _errors(_run(without_outputs(notebook), tmp_path, stranger)) == []


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_course_test_cell_grades_its_own_exercise(lesson):
    """Does every test cell of the course's lessons call grade() once, on its own grade_id,
    inside its hidden tests (so the hint names the exercise the points belong to)?"""
    for cell in source_notebook(lesson).cells:
        if is_test_cell(cell):
            grade_id = cell.metadata.nbgrader["grade_id"]
            hidden = HIDDEN_TESTS.search(cell.source)
            assert hidden and GRADE_CALL.findall(hidden.group()) == [grade_id], grade_id
