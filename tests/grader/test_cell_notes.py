"""A cell the learner wrote that raised under grading (issue 68's instructor trial: bob's
`import torchviz`, seen only as a traceback on his feedback page): a routine note the instructor
reads in `make autograde`'s line, the reason and `make grades`, with the scores unchanged."""

import nbformat

from grader.answers import cell_error_notes
from grader.faults import CELL_ERROR, Fault, own_status, reason_of

IMPORTS = "import torch\nfrom autograder import self_check"


def _code(source, nbgrader=None, error=None):
    cell = nbformat.v4.new_code_cell(source, metadata={"nbgrader": nbgrader} if nbgrader else {})
    if error:
        cell.outputs = [nbformat.v4.new_output("error", ename=error[0], evalue=error[1],
                                               traceback=[])]
    return cell


def _notebook(learner_source="import torchviz"):
    released = _code(IMPORTS, {"grade_id": "cell-002", "locked": True, "grade": False,
                               "solution": False}, ("ModuleNotFoundError", "on purpose"))
    title = nbformat.v4.new_markdown_cell("# Lesson")
    learner = _code(learner_source, error=("ModuleNotFoundError", "No module named 'torchviz'"))
    answer = _code("def square(x):\n    return x * x", {"grade_id": "answer_Square",
                                                       "solution": True, "grade": False})
    test = _code("self_check('Square', square)", {"grade_id": "Square", "grade": True,
                                                  "solution": False, "points": 1},
                 ("AssertionError", "wrong"))
    return nbformat.v4.new_notebook(cells=[title, released, learner, answer, test])


def test_a_learner_cell_that_raised_is_a_note_naming_it_and_whether_anything_graded_used_it():
    """Is only the learner's own cell noted (not the lesson's cell that raises on purpose, not
    an answer or a test), by its place and first line, its error, and 'nothing graded uses
    what it sets' when no graded cell reads what it binds; and is the status still ok?"""
    notes = cell_error_notes(_notebook(), released_demos=[IMPORTS])
    assert [(note.kind, note.cell) for note in notes] == [(CELL_ERROR, 'cell 3 "import torchviz"')]
    assert notes[0].message == ('note: cell 3 "import torchviz" raised ModuleNotFoundError: No '
                                "module named 'torchviz' (nothing graded uses what it sets)")
    assert own_status(notes) == "ok" and reason_of(notes) == notes[0].message
    # without the released notebook, the lesson's own (locked) cells are still not the learner's
    assert [note.cell for note in cell_error_notes(_notebook(), released_demos=None)] == [
        'cell 3 "import torchviz"']


def test_a_learner_cell_whose_names_a_test_reads_says_graded_cells_may_use_it():
    notebook = _notebook("from torchviz import make_dot\nsquare = make_dot")
    notes = cell_error_notes(notebook, released_demos=[IMPORTS])
    assert notes[0].message.endswith("(graded cells may use what it sets: their tests say how "
                                     "they went)")


def test_a_cell_a_fault_of_the_run_already_names_is_not_noted_again():
    label = 'cell 3 "import torchviz"'
    assert cell_error_notes(_notebook(), [Fault("timeout", "ran past", label)], [IMPORTS]) == []


def test_autograde_grades_and_feedback_say_the_note():
    """Does `make autograde`'s report and `make grades`' summary give the note a line of its own
    for that notebook, and the learner's status line say it in their words?"""
    from grader.batch import Summary
    from grader.feedback import learner_text
    from grader.grades_csv import CELL_NOTES, NOTED, status_report

    note = cell_error_notes(_notebook(), released_demos=[IMPORTS])[0]
    line = f"  bob 07_outputs/07_outputs: {note.message}"
    summary = Summary(noted=[("bob", "07_outputs", "07_outputs", CELL_ERROR, note.cell)],
                      cell_notes=[("bob", "07_outputs", "07_outputs", note.message)])
    assert summary.report() == line
    row = {"assignment": "07_outputs", "student_id": "bob", "notebook": "07_outputs",
           "status": "ok", "reason": note.message, NOTED: [(CELL_ERROR, note.cell)],
           CELL_NOTES: [note.message]}
    assert status_report([row]).splitlines() == ["statuses: 1 ok", line]
    shown = learner_text([note])
    assert shown.startswith("**Grading status: `ok`**")
    assert 'A cell you wrote (neither an answer nor a test) stopped with an error' in shown
