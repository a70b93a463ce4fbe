"""How a cell's run ended and what it costs: the words the grades CSV and feedback use."""

import nbformat
import pytest

from grader.faults import SEPARATOR, Fault, own_status, reason_of, status_of
from grader.notebook_format import RESTORED, cell_label
from grader.outcomes import (Outcome, classify, gave_up_faults, out_of_time_faults,
                             outcome_fault)

LIMITS = {"cell_timeout": 30, "notebook_seconds": 120, "memory_limit_mb": 512,
          "out_of_time": False, "death": "was killed by SIGKILL (out of memory?)"}


def _error(ename, evalue="") -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": []}


@pytest.mark.parametrize("outputs, interrupted, outcome", [
    ([], False, Outcome.OK), ([_error("AssertionError")], False, Outcome.ERROR),
    ([_error("MemoryError")], False, Outcome.MEMORY),
    ([_error("RuntimeError", "DefaultCPUAllocator: can't allocate memory")], False,
     Outcome.MEMORY),
    ([], True, Outcome.TIMEOUT)])
def test_each_ending_is_told_apart(outputs, interrupted, outcome):
    """Is a memory error told from the learner's own error, and an interrupt from both?"""
    assert classify(outputs, interrupted) is outcome


@pytest.mark.parametrize("outcome, kind, phrase", [
    (Outcome.TIMEOUT, "timeout", "ran past the 30 s limit and was interrupted"),
    (Outcome.HUNG, "timeout", "ignored the interrupt: the kernel was restarted"),
    (Outcome.MEMORY, "memory-limit", "ran out of memory (cap 512 MiB)"),
    (Outcome.DIED, "kernel-died", "the kernel was killed by SIGKILL (out of memory?) while")])
def test_each_fault_says_what_happened(outcome, kind, phrase):
    """Does each ending cost a fault of its kind, naming the cell and the limit?"""
    fault = outcome_fault(outcome, "answer_Square", **LIMITS)
    assert fault.kind == kind and phrase in fault.message and fault.cell == "answer_Square"


def test_the_learners_own_errors_cost_no_fault():
    """Is a cell that merely raised (a wrong answer) no fault of the notebook?"""
    assert outcome_fault(Outcome.ERROR, "Square", **LIMITS) is None
    assert outcome_fault(Outcome.OK, "Square", **LIMITS) is None


def test_a_timeout_at_the_end_of_the_budget_is_the_notebooks():
    """When the notebook's budget ran out, is the stop blamed on the budget, not the cell?"""
    fault = outcome_fault(Outcome.TIMEOUT, "Square", **{**LIMITS, "out_of_time": True})
    assert fault.kind == "notebook-timeout" and "used up its 120 s" in fault.message


def _cells():
    answer = nbformat.v4.new_code_cell("x = 1")
    test = nbformat.v4.new_code_cell("assert x")
    test.metadata = {"nbgrader": {"grade": True, "solution": False, "grade_id": "T",
                                  "points": 1}}
    return [answer, test]


def test_running_out_of_time_fails_every_test_not_run():
    """Does every test cell after the stop get a notebook-timeout fault of its own?"""
    faults = out_of_time_faults(_cells(), 0, 120)
    assert [(f.kind, f.cell) for f in faults] == [("notebook-timeout", 'cell 1 "x = 1"'),
                                                 ("notebook-timeout", "T")]


def test_giving_up_on_the_kernel_names_what_did_not_run():
    faults = gave_up_faults(_cells(), 0, 3)
    assert "restarted 3 times; the cells after cell 1 \"x = 1\" did not run" in faults[0].message
    assert [f.cell for f in faults[1:]] == ["T"]


def test_a_cell_is_named_as_the_learner_finds_it():
    """Is a cell without a grade_id named by its place from the top (counted from 1) and its
    first line, cut with its brackets balanced, and a graded cell by its grade_id?"""
    assert cell_label(_cells(), 1) == "T"
    above = [nbformat.v4.new_markdown_cell("text") for _ in range(53)]
    long = nbformat.v4.new_code_cell("\n# run me\ncheckpointing_explorer(checkpoint_sequential, "
                                     "lambda x: x, layers=7)")
    assert cell_label(above + [long], 53) == 'cell 54 "# run me"'
    long.source = "checkpointing_explorer(checkpoint_sequential, lambda x: x, layers=7)"
    assert cell_label(above + [long], 53) == 'cell 54 "checkpointing_explorer(…)"'
    assert cell_label(above[:2] + [nbformat.v4.new_code_cell("")], 2) == "cell 3"


def test_a_test_cell_grading_put_in_does_not_move_the_learners_cell_numbers():
    """After a test cell added to the lesson later is put into a notebook handed in before,
    is a cell below it still named by its place in the learner's own notebook?"""
    put_in = nbformat.v4.new_code_cell("self_check('Square_again', Square)")
    put_in.id = RESTORED + "Square_again"
    cells = [nbformat.v4.new_markdown_cell("text"), put_in, nbformat.v4.new_code_cell("import os")]
    assert cell_label(cells, 2) == 'cell 2 "import os"'



def test_a_reason_puts_the_cause_first_and_routine_notes_last():
    """When cells ran past their limit and the notebook then ran out of time, does the reason
    say first which cell looped (the cause), keep the status notebook-timeout, and put a routine
    note (a test cell added later) last, outside the status?"""
    faults = [Fault("added-test-cell", "test cell extra was added", "extra"),
              Fault("notebook-timeout", 'cell 54 "explorer(…)" was stopped when the notebook '
                    "used up its 240 s", 'cell 54 "explorer(…)"'),
              Fault("timeout", "checkpoint_sequential ran past the 60 s limit and was "
                    "interrupted (an endless loop?)", "checkpoint_sequential")]
    assert status_of(faults) == own_status(faults) == "notebook-timeout"
    assert reason_of(faults).split(SEPARATOR) == [
        "checkpoint_sequential ran past the 60 s limit and was interrupted (an endless loop?)",
        'cell 54 "explorer(…)" was stopped when the notebook used up its 240 s',
        "test cell extra was added"]
    assert own_status(faults[:1]) == "ok"
