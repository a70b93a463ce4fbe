"""An instructor's own tests, graded as nbgrader would and under the seal.

The instructor adds test cells of plain asserts to lesson 00 the ordinary nbgrader way (edit the
source notebook, release again), writes a lesson of their own with a ``FunctionExercise``, and
grades the class with the course's own commands (``python -m grader release|autograde|grades``,
what ``make release`` etc. run).
"""

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.gradebook import db_url
from grader.lessons import ROOT
from tools.submissions import solved, with_answer, with_cell_before

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("instructor")]

LESSON = "00_template"
ASSERTS = """\
### BEGIN HIDDEN TESTS
x = torch.tensor([1.5, -2.0, 0.25], dtype=torch.float64, requires_grad=True)
y = Square.apply(x)
assert torch.allclose(y, x ** 2), "Square's forward is not x ** 2"
y.sum().backward()
assert torch.allclose(x.grad, 2 * x.detach()), "Square's gradient is not 2x"
### END HIDDEN TESTS
"""
PARTIAL = """\
### BEGIN HIDDEN TESTS
x = torch.linspace(-2, 2, 5, dtype=torch.float64, requires_grad=True)
Square.apply(x).sum().backward()
1.0 + float(torch.allclose(x.grad, 2 * x.detach()))  # nbgrader: a number is the points earned
### END HIDDEN TESTS
"""
WRONG_SQUARE = """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return -2 * x * grad_output
"""
SILENCE_ERRORS = """
import sys
get_ipython().set_custom_exc((BaseException,), lambda *args, **kwargs: None)
get_ipython().showtraceback = lambda *args, **kwargs: None
sys.excepthook = lambda *args: None
"""
FORGE = """
import json, hmac, hashlib
from IPython.display import publish_display_data
import autograder

def _key(function, seen=()):
    for cell in function.__closure__ or ():
        value = cell.cell_contents
        if isinstance(value, bytes) and len(value) == 32:
            return value
        if callable(value) and getattr(value, "__closure__", None) and value not in seen:
            found = _key(value, seen + (function,))
            if found:
                return found

_stolen = _key(autograder.grade)

def _forge(result):
    for name in ("Square", "Square_asserts", "Square_partial", "WeightedSum"):
        payload = json.dumps({"exercise": name, "message": "ok", "passed": True}, sort_keys=True)
        signature = hmac.new(_stolen, payload.encode(), hashlib.sha256).hexdigest()
        publish_display_data({"application/vnd.autograd-course.verdict+json":
                              {"payload": payload, "signature": signature}})

get_ipython().events.register("post_run_cell", _forge)
"""


def _grader(*args: str, root: Path) -> str:
    environment = {**os.environ, "COURSE_ROOT": str(root), "AUTOGRADER_CELL_TIMEOUT": "60"}
    done = subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _test_cell(grade_id: str, points: float, source: str):
    cell = nbformat.v4.new_code_cell(source)
    cell.id = grade_id.lower().replace("_", "-")
    cell.metadata = {"nbgrader": {"grade": True, "grade_id": grade_id, "locked": True,
                                  "points": points, "schema_version": 3, "solution": False}}
    return cell


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Lesson 00 with two instructor test cells, and a lesson of the instructor's own
    (``my_tanh``), released together, submitted by learners, graded in one run (as an
    instructor's term would hold both); returns the root, lesson 00's grades.csv rows, and what
    the second release printed."""
    root = tmp_path_factory.mktemp("instructor")
    _grader("release", LESSON, root=root)
    source_path = root / "source" / LESSON / f"{LESSON}.ipynb"
    source = nbformat.read(source_path, as_version=4)
    after = next(i for i, cell in enumerate(source.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "Square")
    source.cells[after + 1:after + 1] = [_test_cell("Square_asserts", 2, ASSERTS),
                                         _test_cell("Square_partial", 2, PARTIAL)]
    nbformat.write(source, source_path)
    (root / "source" / TANH_LESSON).mkdir(parents=True)
    nbformat.write(_tanh_source(), root / "source" / TANH_LESSON / f"{TANH_LESSON}.ipynb")
    release_output = _grader("release", LESSON, TANH_LESSON, root=root)
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    good = solved(released, source)
    wrong = with_answer(good, "answer_Square", textwrap.dedent(WRONG_SQUARE).strip())
    submissions = {
        "correct": good, "wrong": wrong,
        "wrong-silenced": with_cell_before(wrong, "Square", SILENCE_ERRORS.strip()),
        "forger": with_cell_before(wrong, "Square", FORGE.strip()),
    }
    for student, notebook in submissions.items():
        folder = root / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{LESSON}.ipynb")
    _hand_in_tanh(root)
    _grader("autograde", LESSON, TANH_LESSON, "--workers", "2", root=root)
    _grader("grades", root=root)
    with open(root / "grades.csv") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)
                if row["assignment"] == LESSON}
    return root, rows, release_output


def _scores(root: Path, student: str) -> dict[str, float]:
    with Gradebook(db_url(root)) as gradebook:
        notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
        return {grade.name: grade.score for grade in notebook.grades}


def test_release_keeps_the_instructors_edited_source(course):
    """Does releasing again keep the test cells the instructor added to source/?"""
    _, _, output = course
    assert "keeping your edited source/00_template/00_template.ipynb" in output


def test_a_release_of_every_lesson_names_each_as_nbgrader_starts_it(course):
    """Does the one nbgrader run that releases every lesson of the root say what it is doing,
    lesson by lesson, rather than stay silent until all are done?"""
    _, _, output = course
    assert "releasing 2 lessons in one nbgrader generate_assignment run" in output
    progress = [line.split()[0] for line in output.splitlines() if line.startswith("  ")]
    assert sorted(progress) == sorted([LESSON, TANH_LESSON])
    assert output.index("(2/2)") < output.index(f"released {LESSON} ->")


def test_release_tags_an_added_test_cell_so_run_all_goes_on(course):
    """Does the release give the instructor's test cells the course's raises-exception tag, and
    say so, so that a learner's Run All goes on past them while an exercise is unsolved?"""
    root, _, output = course
    assert ("00_template: gave test cells Square_asserts, Square_partial the tag "
            "raises-exception, as the course's own test cells have it, so a learner's Run All "
            "goes on past them" in output)
    released = nbformat.read(root / "release" / LESSON / f"{LESSON}.ipynb", as_version=4)
    tags = {cell.metadata.nbgrader.grade_id: cell.metadata.get("tags", [])
            for cell in released.cells if cell.metadata.get("nbgrader", {}).get("grade")
            and not cell.metadata.nbgrader.get("solution")}
    assert {"Square_asserts", "Square_partial"} < set(tags)
    assert all("raises-exception" in cell_tags for cell_tags in tags.values())


def test_plain_asserts_give_a_correct_answer_their_points(course):
    """Does a correct Square earn the 2 points of a test cell that has only asserts, and the
    full 2 of a cell whose result is the number of points?"""
    root, rows, _ = course
    assert _scores(root, "correct") == {"Square": 1.0, "Square_asserts": 2.0,
                                        "Square_partial": 2.0, "WeightedSum": 1.0, "Outer": 2.0}
    assert rows["correct"]["status"] == "ok"


def test_a_failing_assert_earns_nothing(course):
    """Does a wrong Square lose the asserts cell, keep nbgrader's partial credit, and show the
    assert's message (not the hidden code) in the autograded notebook?"""
    root, _, _ = course
    assert _scores(root, "wrong") == {"Square": 0.0, "Square_asserts": 0.0,
                                      "Square_partial": 1.0, "WeightedSum": 1.0, "Outer": 2.0}
    notebook = nbformat.read(root / "autograded" / "wrong" / LESSON / f"{LESSON}.ipynb",
                             as_version=4)
    cell = next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "Square_asserts")
    assert "Square's gradient is not 2x" in cell.outputs[0]["evalue"]
    assert "allclose" not in json.dumps(cell.outputs)


def test_silenced_errors_earn_nothing(course):
    """Can a learner who silences tracebacks turn a failing assert into points? (No.)"""
    root, _, _ = course
    assert _scores(root, "wrong-silenced") == _scores(root, "wrong")


def test_code_that_reaches_into_the_grader_is_flagged(course):
    """Does a submission that steals the key and forges verdicts get status suspicious-code,
    with the offending line, without its scores being changed?"""
    root, rows, _ = course
    assert rows["forger"]["status"] == "suspicious-code"
    assert "__closure__" in rows["forger"]["reason"]
    assert rows["wrong-silenced"]["status"] == "suspicious-code"  # set_custom_exc is a hook
    assert rows["wrong"]["status"] == "ok"


def test_one_student_can_be_regraded(course):
    """Does `autograde --student ID --force` regrade that learner only?"""
    root, _, _ = course
    output = _grader("autograde", LESSON, "--force", "--student", "correct", root=root)
    assert "graded 1 (1 ok), skipped 0 unchanged" in output
    assert _scores(root, "correct")["Square_asserts"] == 2.0


TANH_LESSON = "my_tanh"
TANH_SOLUTION = """\
class MyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, = ctx.saved_tensors
        return grad_output * (1 - y * y)
        ### END SOLUTION
"""
TANH_TEST = """\
MY_TANH = FunctionExercise("MyTanh", reference=torch.tanh, saves="output")
MY_TANH.self_check(MyTanh)
### BEGIN HIDDEN TESTS
MY_TANH.grade(MyTanh)
### END HIDDEN TESTS
"""
TANH_MISTAKES = {  # student -> (changes to the solution, a phrase the hint must contain)
    "sign": ([("return grad_output * (1 - y * y)", "return -grad_output * (1 - y * y)")],
             "check the sign"),
    "saves-input": ([("ctx.save_for_backward(y)", "ctx.save_for_backward(x)"),
                     ("y, = ctx.saved_tensors", "x, = ctx.saved_tensors\n        y = torch.tanh(x)")],
                    "MyTanh saved its input: save the output instead"),
    "ignores-grad-output": ([("return grad_output * (1 - y * y)", "return 1 - y * y")],
                            "MyTanh.backward ignores grad_output"),
}


def _tanh_source():
    cells = [nbformat.v4.new_markdown_cell("# My own lesson: `MyTanh`"),
             nbformat.v4.new_code_cell("import torch\n\nfrom autograder.custom import "
                                       "FunctionExercise"),
             nbformat.v4.new_code_cell(TANH_SOLUTION), nbformat.v4.new_code_cell(TANH_TEST)]
    kinds = [{"grade": False, "solution": False}, {"grade": False, "solution": False},
             {"grade": False, "solution": True}, {"grade": True, "solution": False, "points": 3}]
    for index, (cell, kind) in enumerate(zip(cells, kinds)):
        cell.id = f"tanh-{index}"
        name = {2: "answer_MyTanh", 3: "MyTanh"}.get(index, f"tanh-cell-{index}")
        cell.metadata = {"nbgrader": {**kind, "grade_id": name, "schema_version": 3,
                                      "locked": not kind["solution"]}}
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    return notebook


def _tanh_answers() -> dict[str, str]:
    """student -> their MyTanh answer: a correct one, and each of TANH_MISTAKES."""
    answer = TANH_SOLUTION.replace("        ### BEGIN SOLUTION\n", "").replace(
        "        ### END SOLUTION\n", "")
    answers = {"correct": answer}
    for student, (changes, _) in TANH_MISTAKES.items():
        answers[student] = answer
        for old, new in changes:
            answers[student] = answers[student].replace(old, new)
    return answers


def _hand_in_tanh(root: Path) -> None:
    released = nbformat.read(root / "release" / TANH_LESSON / f"{TANH_LESSON}.ipynb",
                             as_version=4)
    for student, code in _tanh_answers().items():
        folder = root / "submitted" / student / TANH_LESSON
        folder.mkdir(parents=True)
        nbformat.write(with_answer(released, "answer_MyTanh", code),
                       folder / f"{TANH_LESSON}.ipynb")


@pytest.fixture(scope="module")
def tanh_course(course):
    """The instructor's own lesson with a MyTanh exercise, graded for a correct answer and
    three named mistakes; returns (root, scores by student)."""
    root = course[0]
    with Gradebook(db_url(root)) as gradebook:
        scores = {student: gradebook.find_submission_notebook(
            TANH_LESSON, TANH_LESSON, student).score for student in _tanh_answers()}
    return root, scores


def test_an_exercise_of_the_instructors_own_grades_a_correct_answer_full(tanh_course):
    """Does a correct MyTanh get all 3 points of an exercise written as a FunctionExercise?"""
    _, scores = tanh_course
    assert scores["correct"] == 3.0


@pytest.mark.parametrize("student", TANH_MISTAKES)
def test_an_exercise_of_the_instructors_own_names_each_mistake(tanh_course, student):
    """Does each named mistake score 0 with a hint that names it?"""
    root, scores = tanh_course
    assert scores[student] == 0.0
    notebook = nbformat.read(root / "autograded" / student / TANH_LESSON / f"{TANH_LESSON}.ipynb",
                             as_version=4)
    cell = next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "MyTanh")
    assert TANH_MISTAKES[student][1] in cell.outputs[0]["evalue"], cell.outputs


def test_the_help_says_what_the_commands_do_in_whole_sentences():
    """Does `python -m grader --help` describe the commands in a whole sentence, not one cut
    off at the end of the docstring's first line?"""
    from grader.instructor import DESCRIPTION

    assert DESCRIPTION.endswith("(insight).") and "grades, and the class's" in DESCRIPTION
