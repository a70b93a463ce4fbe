"""How a cell's run ended and what it costs: the words the grades CSV and feedback use."""

import nbformat
import pytest

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
    assert [(f.kind, f.cell) for f in faults] == [("notebook-timeout", "cell 1"),
                                                 ("notebook-timeout", "T")]


def test_giving_up_on_the_kernel_names_what_did_not_run():
    faults = gave_up_faults(_cells(), 0, 3)
    assert "restarted 3 times; the cells after cell 1 did not run" in faults[0].message
    assert [f.cell for f in faults[1:]] == ["T"]
