"""The cap: operators take turns, the solution first, the same mutants every run."""

from tools.mutants.answers import SOLUTION, Answer
from tools.mutants.generate import mutants
from tools.mutants.selection import chosen

CELL = ("class Square(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n"
        "        return x ** 2 + 0 * x\n")


def _answers() -> dict[str, Answer]:
    return {SOLUTION: Answer("Square", SOLUTION, (CELL,)),
            "other": Answer("Square", "other", (CELL.replace("0 * x", "x - x"),))}


def _made(answers):
    return [mutant for answer in answers.values() for mutant in mutants(answer)]


def test_a_cap_gives_each_operator_a_turn():
    """Under a cap as small as the number of the solution's operators, is each of them run?"""
    answers = _answers()
    made = _made(answers)
    operators = {mutant.operator for mutant in made if mutant.origin == SOLUTION}
    picked = chosen(made, answers, len(operators))
    assert {mutant.operator for mutant in picked} == operators


def test_the_solution_comes_first():
    """Do the solution's mutants all run before any other answer's?"""
    answers = _answers()
    made = _made(answers)
    solution = sum(mutant.origin == SOLUTION for mutant in chosen(made, answers, None))
    picked = chosen(made, answers, solution + 1)
    assert [mutant.origin for mutant in picked] == [SOLUTION] * solution + ["other"]


def test_a_cap_never_leaves_out_a_mutant_of_the_solution():
    """Under a cap smaller than the solution's mutants, does every one of them still run, and
    none of another answer's?"""
    answers = _answers()
    made = _made(answers)
    solution = sum(mutant.origin == SOLUTION for mutant in chosen(made, answers, None))
    assert solution > 2
    assert [mutant.origin for mutant in chosen(made, answers, 2)] == [SOLUTION] * solution


def test_capping_is_deterministic_and_without_a_cap_takes_all():
    """Does the cap choose the same mutants each time, and no cap every compiling mutant?"""
    answers = _answers()
    made = _made(answers)
    assert chosen(made, answers, 5) == chosen(list(reversed(made)), answers, 5)
    assert len(chosen(made, answers, None)) == sum(m.compiles(answers[m.origin]) for m in made)
