"""What grading records of each test cell's verdict: its mistake id (signed in the kernel) or,
where the cell has none, what the grader knows (a timeout, a dead kernel); and the store insight
reads it from."""

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import grading, seal
from autograder.errors import GradingError
from autograder.verdict import read_signed
from grader import verdict_store
from grader.faults import Fault
from grader.answers import unparsed
from grader.verdicts import apply_verdicts
from tools.solutions import solution

KEY = b"k" * 32


def _signed(verdict) -> list:
    """The outputs of a test cell whose sealed grade() got ``verdict`` (fixed here)."""
    published = []
    grade = seal.make_sealed_grade(KEY, lambda: [], lambda name, submission: verdict,
                                   lambda passed, message: None, published.append)
    grade("Square", object())
    return [nbformat.NotebookNode(output_type="display_data", data=bundle, metadata={})
            for bundle in published]


def _notebook(test_outputs: list) -> nbformat.NotebookNode:
    answer = new_code_cell("class Square: ...")
    answer.metadata = {"nbgrader": {"solution": True, "grade": False, "grade_id":
                                    "answer_Square", "locked": False, "schema_version": 3}}
    test = new_code_cell("grade('Square', Square)")
    test.metadata = {"nbgrader": {"grade": True, "solution": False, "grade_id": "Square",
                                  "points": 1, "locked": True, "schema_version": 3}}
    test.outputs = test_outputs
    return new_notebook(cells=[answer, test])


def test_a_sealed_verdict_signs_the_mistake_id():
    """Does a sealed grade() sign the mistake a probe proved with the verdict?"""
    published = []
    grade = seal.make_sealed_grade(KEY, lambda: [], grading.classified_verdict,
                                   lambda passed, message: None, published.append)
    try:
        grade("Square", solution("MySigmoid"))
    except GradingError:
        pass
    outputs = [{"output_type": "display_data", "data": bundle} for bundle in published]
    verdict = read_signed(outputs, KEY)["Square"]
    assert not verdict.passed and verdict.mistake == "unproven:wrong-value"


def test_each_test_cell_is_recorded_with_its_mistake():
    """Is a failing verdict recorded with its mistake and first line, a pass as passed?"""
    failing = _notebook(_signed((False, "Square forgets x (with x of shape (5,))\ndetails",
                                 None, "Square/forgets-x")))
    assert apply_verdicts(failing, KEY) == {"Square": {
        "passed": False, "score": None, "mistake": "Square/forgets-x",
        "hint": "Square forgets x (with x of shape (5,))"}}
    assert apply_verdicts(_notebook(_signed((True, "ok"))), KEY) == {"Square": {"passed": True}}


def test_what_stopped_a_cell_is_its_category():
    """Without a verdict, is a test recorded as what stopped it (its own timeout, or its
    answer's); with one, is a kernel lost before the test what the failure is recorded as?"""
    timed_out = [Fault("timeout", "Square ran past the 30 s limit", "Square")]
    assert apply_verdicts(_notebook([]), KEY, timed_out)["Square"]["mistake"] == "timeout"
    answer_died = [Fault("kernel-died", "the kernel exited", "answer_Square")]
    assert apply_verdicts(_notebook([]), KEY, answer_died)["Square"]["mistake"] == "kernel-died"
    after_death = _notebook(_signed((False, "Square raised NameError: name 'Square' is not "
                                            "defined", None, "raised:NameError")))
    assert apply_verdicts(after_death, KEY, answer_died)["Square"]["mistake"] == "kernel-died"
    assert apply_verdicts(_notebook([]), KEY)["Square"]["mistake"] == "no-verdict"


def test_an_answer_cell_whose_kernel_died_shows_it_and_its_test_blames_the_dead_kernel():
    """Trial 82: the cell whose os._exit killed the kernel showed nothing under it on the
    learner's page. Does it now show one error line saying Python stopped there (how the
    kernel ended, that grading went on), and is its test still recorded as kernel-died, its hint
    the fault's, not "your answer cell stopped with KernelDied"?"""
    from grader.answers import answer_error_faults
    from grader.outcomes import died_outputs

    undefined = (False, "the test raised NameError (line 1 of the test cell): name 'Square' is "
                 "not defined", None, "raised:NameError")
    notebook = _notebook(_signed(undefined))
    printed = nbformat.v4.new_output("stream", name="stdout", text="freeing memory\n")
    notebook.cells[0].outputs = died_outputs(
        [printed], "exited with status 1 (os._exit or sys.exit?)")
    shown = notebook.cells[0].outputs
    assert shown[0] == printed and len(shown) == 2 and shown[1]["output_type"] == "error"
    assert shown[1]["evalue"].startswith("Python stopped while this cell ran: the kernel exited "
                                         "with status 1 (os._exit or sys.exit?). It was "
                                         "restarted")
    died = [Fault("kernel-died", "the kernel exited with status 1 (os._exit or sys.exit?) while "
                  "answer_Square ran: it was restarted", "answer_Square")]
    record = apply_verdicts(notebook, KEY, died)["Square"]
    assert record["mistake"] == "kernel-died"
    assert "KernelDied" not in record["hint"]
    assert notebook.cells[1].outputs[0]["evalue"].startswith(  # the test's hint on the page
        "the kernel exited with status 1 (os._exit or sys.exit?) while answer_Square ran: it "
        "was restarted; then: the test raised NameError")
    assert answer_error_faults(notebook) == []  # the dead kernel's fault says it


def test_a_mistake_the_test_proved_outlives_a_kernel_lost_before_it():
    """A cell ran out of memory before the test, the kernel was restarted and the test then
    proved a mistake of the answer: is that mistake recorded, and its hint shown alone, not
    blamed on the lost kernel (which explains only failures such as a NameError)?"""
    notebook = _notebook(_signed((False, "Square forgets x (with x of shape (5,))", None,
                                  "Square/forgets-x")))
    out_of_memory = [Fault("memory-limit", "answer_Square ran out of memory", "answer_Square")]
    recorded = apply_verdicts(notebook, KEY, out_of_memory)["Square"]
    assert recorded["mistake"] == "Square/forgets-x"
    assert notebook.cells[1].outputs[0]["evalue"] == "Square forgets x (with x of shape (5,))"


def test_an_exercise_added_after_hand_in_says_so_not_the_name_error():
    """A test cell added (with its exercise) after the notebook was handed in meets a class the
    notebook never defined: does the learner read that the exercise came later, not a
    NameError, while the record keeps the NameError insight counts as handed in before it?"""
    undefined = (False, "the test raised NameError (line 1 of the test cell): name 'Square' is "
                 "not defined", None, "raised:NameError")
    notebook = _notebook(_signed(undefined))
    later = [Fault("added-test-cell", "test cell Square was added to the lesson", "Square")]
    recorded = apply_verdicts(notebook, KEY, later)["Square"]
    assert recorded["mistake"] == "raised:NameError"
    assert recorded["hint"] == ("not answered: Square was added to the lesson after you fetched "
                                "your copy of it, so your notebook has no answer for it "
                                "(0 points)")
    assert "NameError" not in notebook.cells[1].outputs[0]["evalue"]


ADDED_ON = "test cell Square was added to the lesson on 2026-11-28 10:00:00 UTC, "
STUB = (False, "Square is not implemented yet: its stub still raises NotImplementedError",
        None, "not-implemented")


@pytest.mark.parametrize("put_in, learners_own", [
    ("after this notebook was handed in: put it in after the stub of its answer (answer_Square: "
     "not answered) and graded it", False),
    ("after this notebook was handed in: put it in after its answer and graded it", True)],
    ids=["answer-put-in-by-intake", "learners-own-stub"])
def test_a_test_added_after_hand_in_meeting_a_stub(put_in, learners_own):
    """A test cell added after hand-in that meets a stub (issue 68): where intake put the stub
    in for an exercise the notebook never had, does the test's line say "not answered" and that
    the exercise came after the learner handed in; where the stub was the learner's own (trial),
    do they read the stub's own line? The record keeps not-implemented either way."""
    notebook = _notebook(_signed(STUB))
    later = [Fault("added-test-cell", ADDED_ON + put_in, "Square")]
    recorded = apply_verdicts(notebook, KEY, later)["Square"]
    shown = notebook.cells[1].outputs[0]["evalue"]
    assert recorded["mistake"] == "not-implemented"
    if learners_own:
        assert recorded["hint"].startswith("Square is not implemented yet")
        assert "handed it in" not in shown
    else:
        assert shown == ("not answered: Square was added to the lesson after you fetched your "
                         "copy of it, so your notebook has no answer for it (0 points)")


def test_the_store_keeps_one_record_per_learner_and_lesson(tmp_path):
    """Is a submission's record written whole, replaced by a regrade, and read back per
    lesson?"""
    verdict_store.write(tmp_path, "ana", "00_template", "d1", {"00_template": {"Square": {
        "passed": True}}})
    verdict_store.write(tmp_path, "ana", "00_template", "d2", {})
    verdict_store.write(tmp_path, "ben", "00_template", "d3", {"00_template": {}})
    assert verdict_store.read_lesson(tmp_path, "00_template") == {
        "ana": {"digest": "d2", "notebooks": {}},
        "ben": {"digest": "d3", "notebooks": {"00_template": {}}}}
    assert verdict_store.read_lesson(tmp_path, "01_sigmoid") == {}


def test_a_name_the_answer_cell_never_defined_is_blamed_on_what_stopped_that_cell():
    """A syntax error in the answer cell leaves the exercise undefined, so its test raises a
    NameError: is the failure recorded as the answer cell's SyntaxError, first, with the
    NameError after it? An unanswered stub's NotImplementedError is not blamed."""
    undefined = (False, "the test raised NameError (line 1 of the test cell): name 'Square' is "
                 "not defined", None, "raised:NameError")
    notebook = _notebook(_signed(undefined))
    notebook.cells[0].outputs = [nbformat.v4.new_output(
        "error", ename="SyntaxError", evalue="expected ':' (cell, line 1)", traceback=[])]
    record = apply_verdicts(notebook, KEY)["Square"]
    assert record["mistake"] == "raised:SyntaxError"
    assert record["hint"] == ("your answer cell stopped with SyntaxError: expected ':' (cell, line "
                              "1); then: the test raised NameError (line 1 of the test cell): name "
                              "'Square' is not defined")
    stub = _notebook(_signed(undefined))
    stub.cells[0].outputs = [nbformat.v4.new_output(
        "error", ename="NotImplementedError", evalue="", traceback=[])]
    assert apply_verdicts(stub, KEY)["Square"]["mistake"] == "raised:NameError"


def test_an_answer_that_does_not_parse_is_worded_as_the_reason_words_it():
    """Does a test whose answer cell does not parse say what grades.csv's reason says (the
    parse error with its line), without the kernel's temp-file name or the knock-on NameError,
    and is it recorded as grades.csv's `syntax-error`, not `raised:SyntaxError` (issue 48: none
    of that cell ran, so nothing raised)?"""
    undefined = (False, "the test raised NameError (line 1 of the test cell): name 'Square' is "
                 "not defined", None, "raised:NameError")
    notebook = _notebook(_signed(undefined))
    notebook.cells[0].source = "class Square:\n    def forward(ctx, x:\n        return x"
    notebook.cells[0].outputs = [nbformat.v4.new_output(
        "error", ename="SyntaxError", evalue="incomplete input (511447697.py, line 2)",
        traceback=[])]
    record = apply_verdicts(notebook, KEY)["Square"]
    assert record["mistake"] == "syntax-error"  # grades.csv's status: none of the cell ran
    assert record["hint"] == unparsed(notebook.cells[0])
    assert record["hint"].startswith("answer cell answer_Square does not parse (SyntaxError at "
                                     "line 2: '(' was never closed)")
    assert ".py" not in record["hint"] and "NameError" not in record["hint"]


def test_a_test_stopped_at_the_time_limit_names_itself_and_the_limit():
    """The kernel's verdict for a test interrupted at the cell limit says only "interrupted
    (time limit)": does the record (insight's hint) and the feedback's output name the test and
    the limit, as grades.csv's reason does (issue 48)?"""
    interrupted = _notebook(_signed((False, "the test cell was interrupted (time limit)", None,
                                     "timeout")))
    stopped = [Fault("timeout", "Square ran past the 30 s limit and was interrupted (an endless "
                     "loop?)", "Square")]
    record = apply_verdicts(interrupted, KEY, stopped)["Square"]
    said = ("the test cell Square ran past the 30 s time limit and was interrupted: does the "
            "code it grades (a forward or backward) loop endlessly?")
    assert record == {"passed": False, "score": None, "mistake": "timeout", "hint": said}
    assert interrupted.cells[1].outputs[0]["evalue"] == said
