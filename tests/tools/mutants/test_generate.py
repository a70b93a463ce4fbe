"""Which statements of an answer are mutated, and that generation is the same every time."""

import textwrap

from tools.mutants.answers import Answer, scope
from tools.mutants.generate import mutants

CELL = textwrap.dedent('''
    def _twice(t):
        return t * 2


    def _unused(t):
        return t + 1


    class Square(torch.autograd.Function):
        """y = x ** 2."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            if x.dim() > 3:
                raise NotImplementedError("not yet")
            return grad_output * _twice(x)


    class Outer(torch.autograd.Function):
        @staticmethod
        def forward(ctx, u, v):
            return _twice(u)[:, None] * v
''')


def _answer() -> Answer:
    return Answer("Square", "a toy", (CELL,))


def test_scope_is_the_exercise_and_the_helpers_it_reads():
    """Are Square and the helper it calls mutated, and neither another exercise in the same cell
    (Outer) nor a helper Square never reads?"""
    assert scope(_answer()) == {0: [0, 2]}


def test_arid_lines_are_never_edited():
    """Do docstrings and a raise of NotImplementedError stay as written in every mutant?"""
    edited = {line for mutant in mutants(_answer()) for line in mutant.before.splitlines()}
    assert '"""y = x ** 2."""' not in edited
    assert 'raise NotImplementedError("not yet")' not in edited
    assert "return grad_output * _twice(x)" in edited and "return t * 2" in edited


def test_generation_is_deterministic():
    """Does the same answer give the same mutants, in the same order, twice?"""
    first, second = mutants(_answer()), mutants(_answer())
    assert [(m.operator, m.edit) for m in first] == [(m.operator, m.edit) for m in second]
    assert len({(m.before, m.after, m.edit) for m in first}) == len(first)  # no duplicates


def test_a_mutant_diff_shows_its_one_edited_line():
    """Is a mutant's diff the one line it changes, before and after?"""
    answer = _answer()
    mutant = next(m for m in mutants(answer) if m.operator == "swap_comparison")
    assert mutant.diff(answer).splitlines()[-2:] == ["-        if x.dim() > 3:",
                                                    "+        if x.dim() >= 3:"]
