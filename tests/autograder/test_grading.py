"""autograder.grading: the notebook entry points self_check, verdict, report and grade."""

import pytest
import torch

import autograder
from autograder import grading
from autograder.errors import GradingError
from autograder.exercises import EXERCISES
from tests.autograder.catalogued import mistake
from tools.solutions import solution, stub
from tests.autograder.passing import passes

LESSONS_00_TO_02 = {
    "Square": "00", "WeightedSum": "00", "Outer": "00",
    "MySigmoid": "01", "MyReLU": "01", "ScaledSigmoid": "01", "Softplus": "01",
    "MyLinearFunction": "02", "FusedLinearReLU": "02", "Bilinear": "02",
}


def test_exercise_names_follow_the_syllabus():
    """Are lessons 00-02 graded under exactly the syllabus's names (transfer exercises
    included), in the right lessons?"""
    graded = {name: exercise.lesson[:2] for name, exercise in EXERCISES.items()
              if exercise.lesson[:2] in {"00", "01", "02"}}
    assert graded == LESSONS_00_TO_02
    assert all(EXERCISES[name].name == name for name in LESSONS_00_TO_02)


def test_package_exports():
    """Does the package expose grade, self_check and GradingError to notebooks?"""
    assert autograder.grade is grading.grade and autograder.self_check is grading.self_check
    assert autograder.GradingError is GradingError


def test_grading_error_first_line_is_the_hint():
    """Is a GradingError an AssertionError whose first line is the hint, details after it?"""
    error = GradingError("the hint", "line one\nline two")
    assert isinstance(error, AssertionError)
    assert str(error).splitlines() == ["the hint", "line one", "line two"]
    assert (error.hint, error.details) == ("the hint", "line one\nline two")
    assert str(GradingError("only a hint")) == "only a hint"


class TestSelfCheck:
    """self_check: the visible check in each exercise cell."""

    @pytest.mark.parametrize("name", LESSONS_00_TO_02)
    def test_correct(self, name, capsys):
        """Does a correct solution get a tick that says it passes what grading runs here?"""
        grading.self_check(name, solution(name))
        out = capsys.readouterr().out
        assert out.startswith(f"✓ {passes(name)}")

    @pytest.mark.parametrize("name", LESSONS_00_TO_02)
    def test_stub_raises_not_implemented(self, name):
        """Does an untouched stub raise NotImplementedError, as in the learner's own cell?"""
        with pytest.raises(NotImplementedError):
            grading.self_check(name, stub(name))

    def test_mistake(self, raises_hint):
        """Does a mistake raise the GradingError with its hint?"""
        with raises_hint("off by a constant factor 2.5"):
            grading.self_check("Square", mistake("Square", "constant factor 5x"))

    def test_unknown_name(self):
        """Is a misspelt exercise name refused with the names that exist?"""
        with pytest.raises(KeyError, match="no exercise called 'Sqaure'; known: .*Square"):
            grading.self_check("Sqaure", solution("Square"))


class TestVerdict:
    """verdict: every hidden check, as (passed, message), never raising."""

    @pytest.mark.parametrize("name", LESSONS_00_TO_02)
    def test_correct(self, name):
        """Does a correct solution pass?"""
        assert grading.verdict(name, solution(name)) == (
            True, passes(name))

    @pytest.mark.parametrize("name", LESSONS_00_TO_02)
    def test_stub(self, name):
        """Is an untouched stub reported as not implemented yet (not as a crash)?"""
        assert grading.verdict(name, stub(name)) == (
            False, f"{name} is not implemented yet: its stub still raises NotImplementedError")

    def test_backward_stub(self):
        """Is a stub backward behind a finished forward also not implemented yet?"""
        passed, message = grading.verdict("Square", mistake("Square", "backward left as the stub"))
        assert not passed and "not implemented yet" in message

    def test_torch_not_implementing_an_op_is_not_the_stub(self):
        """A NotImplementedError with a message is torch's (an op it lacks for a dtype), not the
        bare one of nbgrader's stub: the verdict quotes it and does not call the answer
        unwritten."""
        class SquareViaMissingOp(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                raise NotImplementedError('"abs_cpu" not implemented for \'Float8_e4m3fn\'')

        verdict = grading.classified_verdict("Square", SquareViaMissingOp)
        assert verdict.message.startswith("Square.forward raised NotImplementedError with x of "
                                          "shape (4,): \"abs_cpu\" not")
        assert verdict.mistake == "raised:NotImplementedError"

    def test_mistake(self):
        """Is a mistake's hint the first line of the message?"""
        passed, message = grading.verdict("WeightedSum",
                                           mistake("WeightedSum", "two gradients for four inputs"))
        assert not passed
        assert message.splitlines()[0] == (
            "backward returned 2 gradients for 4 inputs: w1 and w2 get no gradient, yet each input "
            "still gets a value, in the order forward takes them: which value stands for no "
            "gradient?")

    def test_unexpected_exception(self):
        """Is any other exception from the learner's code reported, not raised, with the call
        that raised it (instructor trial 82: a forward's IndexError said no input)?"""

        class Raises(solution("Square")):
            @staticmethod
            def forward(ctx, x):
                raise LookupError("boom")

        assert grading.verdict("Square", Raises) == (
            False, "Square.forward raised LookupError with x of shape (4,): boom")

    def test_a_value_error_is_explained_as_a_runtime_error_is(self):
        """A ValueError (torch.einsum raises one where opt_einsum is installed) is quoted with
        the phase and the inputs, as a RuntimeError is."""

        class Raises(solution("Square")):
            @staticmethod
            def forward(ctx, x):
                raise ValueError("Size of label 'i' for operand 1 (3) does not match (2).")

        passed, message = grading.verdict("Square", Raises)
        assert not passed and message.startswith("Square.forward raised ValueError with x of")

    def test_unknown_name(self):
        """Does a test cell with an unknown exercise name fail rather than raise?"""
        passed, message = grading.verdict("Nope", solution("Square"))
        assert not passed and message.startswith("no exercise called 'Nope'")


class TestReportAndGrade:
    """report and grade: what a hidden test cell shows."""

    def test_report_pass(self, capsys):
        """Does a passing verdict print a tick?"""
        grading.report(True, "Square: all hidden checks passed")
        assert capsys.readouterr().out == "✓ Square: all hidden checks passed\n"

    def test_report_fail(self):
        """Does a failing verdict raise a GradingError keeping hint and details apart?"""
        with pytest.raises(GradingError) as info:
            grading.report(False, "the hint\nthe details")
        assert (info.value.hint, info.value.details) == ("the hint", "the details")

    def test_grade_pass(self, capsys):
        """Does grade print a tick for a correct solution?"""
        grading.grade("MyReLU", solution("MyReLU"))
        assert capsys.readouterr().out == f"✓ {passes('MyReLU')}\n"

    def test_grade_fail(self, raises_hint):
        """Does grade raise the hint for a wrong one?"""
        with raises_hint("MyReLU stores a tensor as ctx.mask"):
            grading.grade("MyReLU", mistake("MyReLU", "mask kept as ctx.mask"))

    def test_grade_stub(self, raises_hint):
        """Does grade turn a stub into a GradingError saying it is not implemented yet?"""
        with raises_hint("Square is not implemented yet"):
            grading.grade("Square", stub("Square"))

    def test_grade_leaves_torch_alone(self):
        """After grading, are autograd's entry points the originals?"""
        originals = (torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward)
        grading.verdict("MySigmoid", mistake("MySigmoid", "asks autograd inside backward"))
        assert (torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward) == originals


def _warning_square():
    """Lesson 00's Square, whose forward warns on every call, as a learner's ``x.T`` on a
    3-D x does."""
    base = solution("Square")

    class Square(base):
        @staticmethod
        def forward(ctx, x):
            import warnings
            warnings.warn("a warning of the learner's own", UserWarning)
            return base.forward(ctx, x)

    return Square


class TestWarningsBelowTheVerdict:
    """A warning the learner's code raises during a self-check is shown once, after the verdict:
    the verdict is always the first line (learner trial 82: x.T's deprecation warning stood
    above the cross)."""

    def test_a_pass_comes_first_then_each_warning_once(self, capsys):
        grading.self_check("Square", _warning_square())
        captured = capsys.readouterr()
        lines = captured.out.splitlines()
        assert lines[0].startswith("✓ Square passes")
        assert lines[1] == grading.WARNINGS_HEADER
        assert captured.out.count("UserWarning: a warning of the learner's own") == 1
        assert "UserWarning: a warning of the learner's own" in lines[2]
        assert "warnings.warn(" in lines[3]  # the learner's line that raised it
        assert "a warning of the learner's own" not in captured.err

    def test_a_failure_shows_them_after_its_hint_before_any_view(self, monkeypatch, capsys):
        later = []
        monkeypatch.setattr(grading, "_after_this_cell", later.append)
        wrong = mistake("Square", "constant factor 5x")

        class Square(wrong):
            @staticmethod
            def forward(ctx, x):
                import warnings
                warnings.warn("a warning of the learner's own", UserWarning)
                return wrong.forward(ctx, x)

        with pytest.raises(GradingError):
            grading.self_check("Square", Square)
        assert capsys.readouterr().out == ""  # nothing before the cell shows its hint
        assert later[0].func is grading.show_warnings  # then the warnings, first
        later[0]()
        out = capsys.readouterr().out
        assert out.startswith(grading.WARNINGS_HEADER)
        assert out.count("UserWarning: a warning of the learner's own") == 1

    def test_nothing_without_a_warning(self, capsys):
        grading.self_check("Square", solution("Square"))
        assert grading.WARNINGS_HEADER not in capsys.readouterr().out
