"""Mutants graded as grading grades a submission: a battery with a hole lets a wrong mutant
through, and the report shows it with its diff."""

import torch

from autograder.errors import GradingError
from autograder.exercise import Exercise
from autograder.exercises import EXERCISES
from tools.mutants.answers import Answer
from tools.mutants.generate import mutants
from tools.mutants.grading import DISCARDED, KILLED, SURVIVED, grade
from tools.mutants.report import Tally, exercise_block

TRIPLE = '''
class Triple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 3
'''


def _forward_only(submission, device):
    """A battery with a hole: it never runs backward."""
    x = torch.tensor([1.5, -2.0], dtype=torch.float64, device=device)
    if not torch.equal(submission.apply(x), x * 3):
        raise GradingError("Triple's forward is not 3 x")


def _outcomes(monkeypatch):
    monkeypatch.setitem(EXERCISES, "Triple", Exercise("Triple", "00_template", _forward_only))
    answer = Answer("Triple", "a toy", (TRIPLE,))
    return answer, [(mutant, grade((answer, mutant))) for mutant in mutants(answer)]


def test_a_battery_with_a_hole_lets_backward_mutants_survive(monkeypatch):
    """Does every mutant of forward die, and a wrong backward survive the forward-only
    battery?"""
    answer, outcomes = _outcomes(monkeypatch)
    assert grade((answer, None)).status == SURVIVED
    forward = [o.status for m, o in outcomes if m.before == "return x * 3"]
    backward = [o.status for m, o in outcomes if m.before == "return grad_output * 3"]
    assert forward and set(forward) == {KILLED}
    assert backward and set(backward) == {SURVIVED}


def test_the_report_shows_each_survivor_with_its_diff(monkeypatch):
    """Does the exercise's block count the survivors and show each one's edited line?"""
    answer, outcomes = _outcomes(monkeypatch)
    tally = Tally("Triple", "00_template", made=len(outcomes), run=len(outcomes))
    for mutant, outcome in outcomes:
        if outcome.status == SURVIVED:
            tally.survivors.append((mutant, answer))
        else:
            tally.killed += 1
    block = exercise_block(tally)
    assert f"{len(tally.survivors)} survivors" in block
    assert "+        return grad_output * 4" in block
    assert "equivalent? EquivalentMutant('Triple', 'nudge_constant', 'return grad_output * 3', "\
        "'return grad_output * 4', reason=...)" in block


def test_a_mutant_that_defines_nothing_is_discarded(monkeypatch):
    """Is a mutant whose cell fails to run discarded rather than counted as killed?"""
    monkeypatch.setitem(EXERCISES, "Triple", Exercise("Triple", "00_template", _forward_only))
    answer = Answer("Triple", "a toy", (TRIPLE + "\nundefined_name\n",))
    assert grade((answer, None)).status == DISCARDED
