"""grader.one_line: a long reason or explanation cut to one summary line keeps the part that
says what happened, its end, not only its start (issue 48: `...put back the read-only and tes…`
in make autograde and make grades, `...but a gradient has it…` in make insight)."""

from grader.faults import Fault, reason_of
from grader.one_line import cut, reason

PASTED = ("the notebook had no nbgrader cell metadata (answers pasted into a new notebook, or a "
          "copy of the solutions?): matched 3 of 3 answer cells to the lesson's by their code, "
          "put back the read-only and test cells it lacked, and graded it")
GRADIENT = ("Linear.backward returned grad_x of shape (4, 3) for x of shape (3,): autograd's "
            "engine summed it down to x's shape for you here, but a gradient has its input's "
            "shape; which dims does your formula leave that the input lacks?")


def test_a_long_text_keeps_its_start_and_its_end():
    """Cut to a width, does the text keep its first words and its last (what happened), whole
    words only, the middle marked as left out; and a text that fits stay as it is?"""
    short = reason(PASTED, 160)
    assert len(short) <= 160 and " … " in short
    assert short.startswith("the notebook had no nbgrader cell metadata")
    assert short.endswith("put back the read-only and test cells it lacked, and graded it")
    explained = cut(GRADIENT, 120)
    assert len(explained) <= 120
    assert explained.endswith("which dims does your formula leave that the input lacks?")
    assert all(word in GRADIENT.split() for word in explained.replace(" … ", " ").split())
    assert cut("a loop", 120) == reason("a loop", 120) == "a loop"


def test_a_clause_is_kept_whole_or_left_out_never_cut_at_both_ends():
    """Is the end kept only as whole clauses, so that no fragment like "... for … is meant to
    drop." is left (issue 48's instructor trial); and where no clause fits, the start alone,
    its subject first, marked as cut?"""
    saved = ("FusedLinearReLU saved a float64 intermediate of shape (4,) (32 bytes) for the "
             "backward pass, which the packed mask of one torch.bool per output element is "
             "meant to drop.")
    short = cut(saved, 120)
    assert len(short) <= 120 and short.startswith("FusedLinearReLU saved")
    assert short.endswith(" … which the packed mask of one torch.bool per output element is "
                          "meant to drop.")
    one_clause = "IndexSelect lost repeated rows of index and summed " + "every row " * 20
    alone = cut(one_clause, 80)
    assert len(alone) <= 80 and alone.startswith("IndexSelect lost repeated rows")
    assert alone.endswith(" …") and alone.count("…") == 1


def test_a_reason_of_several_faults_keeps_whole_messages_and_counts_the_rest():
    """A reason of several faults (most serious first): are the first messages that fit kept
    whole, the first always (the status's), and the others counted, not cut mid-word?"""
    timeouts = [Fault("timeout", f"answer_{name} ran past the 60 s limit", f"answer_{name}")
                for name in ("Outer", "Inner")]
    text = reason_of([Fault("no-nbgrader-metadata", PASTED), *timeouts])
    assert reason(text, 160) == ("answer_Outer ran past the 60 s limit; answer_Inner ran past "
                                 "the 60 s limit (+1 more: the reason column of grades.csv)")
    alone = reason(reason_of([Fault("no-nbgrader-metadata", PASTED),
                              Fault("edited-locked-cell", "a read-only cell was edited")]), 200)
    assert len(alone) <= 200 and alone.endswith(
        "and graded it (+1 more: the reason column of grades.csv)")


SAVED = ("FusedLinearReLU saved a float64 intermediate of shape (4,) (32 bytes) for backward: a "
         "float number per output element, the memory fusing is meant to drop. What does the ReLU "
         "part of backward need to know about the pre-activation at each element, and how few "
         "bytes hold that (question 1 before the exercise)?")
ON_CLASS = ("GradientReversal.forward sets GradientReversal.alpha: a class attribute is shared by "
            "every call, so what one call keeps there every other call sees and can change; keep "
            "it on ctx (ctx.alpha = ...) if backward needs it; a count of calls belongs to the "
            "code that calls GradientReversal.apply")


def test_the_start_of_a_cut_text_ends_at_a_clause_end():
    """Does the start kept end where a clause ends, never mid-clause ("for backward: a …",
    "so what one …", issue 48's second trial), nor inside a bracket's aside (the reason's
    "(answers pasted into a new …"), and the end start outside brackets too?"""
    assert cut(SAVED, 240) == ("FusedLinearReLU saved a float64 intermediate of shape (4,) (32 "
                               "bytes) for backward … What does the ReLU part of backward need "
                               "to know about the pre-activation at each element, and how few "
                               "bytes hold that (question 1 before the exercise)?")
    assert cut(ON_CLASS, 240).startswith("GradientReversal.forward sets GradientReversal.alpha: "
                                         "a class attribute is shared by every call … keep it")
    assert reason(PASTED, 200) == ("the notebook had no nbgrader cell metadata … matched 3 of 3 "
                                   "answer cells to the lesson's by their code, put back the "
                                   "read-only and test cells it lacked, and graded it")
    for text in (SAVED, ON_CLASS, PASTED, GRADIENT):
        for width in (60, 90, 120, 160):
            head, _, tail = cut(text, width).partition(" … ")
            assert head.count("(") == head.count(")") or not tail, (text, width)
            assert tail.count("(") == tail.count(")"), (text, width)


def test_a_pasted_notebooks_missing_answer_stays_on_its_summary_line():
    """A pasted notebook that lacked an answer: does its summary line keep which answer was not
    found (the end of the message), not hide it among "+N more"?"""
    from grader.adopt import adopt_cells
    from tests.grader.test_intake import _pasted, _reference

    fault, = adopt_cells(_pasted("print('between')", "twice = 2"), _reference())
    added = Fault("added-test-cell", "test cell extra was added to the lesson on 2026-01-02 UTC, "
                  "after this notebook was handed in: put it in after its answer and graded it")
    line = reason(reason_of([fault, added]))
    assert line.endswith("but found no answer for answer_Square (its stub graded instead: 0 "
                         "points) (+1 more: the reason column of grades.csv)")


def test_an_answer_error_and_its_hint_name_no_path_of_the_graders_machine(monkeypatch, tmp_path):
    """Instructor trial 2: dave's ImportError reached his feedback and grades.csv with
    "/tmp/s82/itrial2/.venv/lib/python3.11/site-packages/...". Is the environment's prefix
    said as ".../site-packages/" and a path under the course root or the repository relative
    to it, in the answer-error fault (grades.csv's reason) and the test's hint?"""
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from grader.answers import answer_error_faults
    from grader.lessons import ROOT
    from grader.one_line import without_paths

    monkeypatch.setenv("COURSE_ROOT", str(tmp_path))
    said = ("cannot import name 'StraightThrough' from 'torch.autograd' (/tmp/s82/itrial2/.venv/"
            "lib/python3.11/site-packages/torch/autograd/__init__.py)")
    answer = new_code_cell("from torch.autograd import StraightThrough", outputs=[new_output(
        "error", ename="ImportError", evalue=said, traceback=[])])
    answer.metadata["nbgrader"] = {"solution": True, "grade_id": "answer_SignSTE"}
    [fault] = answer_error_faults(new_notebook(cells=[answer]))
    assert "(.../site-packages/torch/autograd/__init__.py)" in fault.message
    assert "/tmp/s82" not in fault.message
    assert (without_paths(f"{tmp_path}/autograded/dave/03_ste/03_ste.ipynb and {ROOT}/lessons/x.py"
                          f" and /usr/lib/python3/dist-packages/numpy/a.py")
            == "autograded/dave/03_ste/03_ste.ipynb and lessons/x.py and "
               ".../dist-packages/numpy/a.py")
