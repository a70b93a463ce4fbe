"""autograder.failure: what a failed self-check shows in a notebook, the hint first."""

import re

import pytest
import torch

from autograder import grading
from autograder.errors import GradingError
from autograder.failure import (FULL_TRACEBACK, MAX_DETAIL_LINES, MORE_DETAIL, _walk, headline,
                                keep_learner_frames, learner_frames, summary)
from tests.autograder.catalogued import mistake
from tools.solutions import solution, stub
from tests.autograder.passing import passes

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class RaisesInBackward(torch.autograd.Function):
    """A Square whose backward fails in the learner's own line."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output @ x.unsqueeze(0)  # shapes (4,) @ (1, 4): a size error


def failure(name: str, submission) -> BaseException:
    """The exception ``self_check`` raises for ``submission``."""
    with pytest.raises(Exception) as info:
        grading.self_check(name, submission)
    return info.value


def shown(error: BaseException, name: str = "Square") -> list[str]:
    return [ANSI.sub("", line) for line in summary(name, error)]


def test_a_wrong_gradient_reads_case_and_hint_only():
    """Is a wrong Square one line, exercise and case, then the hint, with no pointer to a %tb
    that would show only the grader's own error (nothing of the learner's raised)?"""
    wrong = mistake("Square", "wrong sign")
    lines = shown(failure("Square", wrong))
    assert lines[0].startswith("✗ Square failed its self-check (tried with x of shape (5,)): "
                               "your gradient for x is the expected one times -1: check the sign")
    assert "(with" not in lines[0] and lines[1:] == []


def test_the_distinguishing_context_comes_first_and_the_inputs_once():
    """Issue 48: a hint that quotes the inputs, inside a case that names them again and what
    tells this failure apart: are the inputs said once, and the context before the hint?"""
    hint = "Linear.backward raised RuntimeError with x of shape (5, 3), w of shape (2, 3): boom"
    error = GradingError(hint, case="x of shape (5, 3), w of shape (2, 3), bias=a tensor")
    assert error.hint == f"{hint} (with bias=a tensor)"
    error = GradingError(hint, case="grad_output not contiguous")
    assert shown(error, "Linear")[0] == ("✗ Linear failed its self-check (tried with grad_output "
                                         f"not contiguous): {hint}")
    # an input named only in passing, or another input's name, is not a repetition
    kept = GradingError("mask of shape (3,) is float", case="x of shape (3,), dim=1")
    assert kept.case == "x of shape (3,), dim=1"
    assert GradingError("fails (with x of shape (3,))", case="x of shape (3,)").case == ""


def test_the_case_reads_as_the_inputs_it_was_tried_on():
    """Issue 48: does a case read as the inputs the check tried ('tried with bias=a tensor', in
    brackets), not as what is wrong ('failed its self-check with bias=a tensor' blamed the
    bias)?"""
    error = GradingError("grad_bias has shape () but bias has shape (1,)", case="bias=a tensor")
    assert shown(error, "MyLinearFunction")[0] == (
        "✗ MyLinearFunction failed its self-check (tried with bias=a tensor): grad_bias has "
        "shape () but bias has shape (1,)")
    assert " with bias" not in shown(error, "MyLinearFunction")[0].replace("tried with", "")


def test_the_details_show_below_the_hint_and_the_message_still_starts_with_it():
    """Issue 48: are a GradingError's details (the numbers, the grad_output) shown below the
    hint, not only under %tb, with no %tb pointer where nothing is left to see, while the
    message nbgrader records (its evalue) still starts with the hint?"""
    numbers = ("your gradient for x is wrong: largest error 4.19 at index (2, 2), where x = 0 "
               "(got 4.189, expected 0; grad_output is random)")
    error = GradingError("which entries does your mask keep?", numbers, case="bias=None")
    assert shown(error, "FusedLinearReLU")[1:] == [f"  Details: {numbers}"]
    assert str(error).splitlines() == ["which entries does your mask keep? (with bias=None)",
                                       numbers]
    two = GradingError("the hint", "grad_output: [[inf, nan]]\nyour grad_x: [[0.0, 0.5]]")
    assert shown(two)[1:] == ["  Details: grad_output: [[inf, nan]]",
                              "           your grad_x: [[0.0, 0.5]]"]
    # details the hint already quotes (the learner's own error message) are not said twice
    quoting = GradingError("Square.backward raised RuntimeError: view size is not compatible. "
                           "Use .reshape(...) instead; read it by its shape",
                           "view size is not compatible. Use .reshape(...) instead.")
    assert shown(quoting)[1:] == []


def test_long_details_are_a_few_lines_and_point_at_the_rest():
    """Are details of many lines or very long ones cut to a few lines, with %tb offered for
    the rest, and never shown as a traceback?"""
    error = GradingError("the hint", "\n".join(f"row {i}: " + "1.7976931348623157e+308, " * 30
                                               for i in range(12)))
    lines = shown(error)
    assert len(lines) == 1 + MAX_DETAIL_LINES + 1 and lines[-1] == f"  {MORE_DETAIL}"
    assert all(len(line) <= 520 for line in lines) and lines[1].endswith("…")
    assert not any("Traceback" in line for line in lines)


def test_the_case_is_split_off_the_hint_but_stays_in_the_message():
    """Does the exception's first line still end with its case, for the grader and the tests?"""
    error = GradingError("the hint", "the details", case="x of shape (3,)")
    assert str(error).splitlines() == ["the hint (with x of shape (3,))", "the details"]
    assert (error.hint, error.case) == ("the hint (with x of shape (3,))", "x of shape (3,)")
    assert headline("Square", error) == "the hint"


def test_a_rule_check_s_case_is_said_up_front_not_before_its_rule_reference():
    """Learner trial 82: a rule check's hint keeps its case before the rule reference, so the
    self-check's first line read '... saved-tensor hooks see it (with x of shape (7,))
    (Function contract, rule 4: ...)'. Is the case said once, up front, and the reference
    still the end of the line (and of the message's first line)?"""
    rule = " (Function contract, rule 4: A call keeps its state on its own ctx)"
    error = GradingError("MySigmoid stores a tensor as ctx.y: use ctx.save_for_backward" + rule,
                         case="x of shape (7,)")
    assert str(error).splitlines()[0].endswith("(with x of shape (7,))" + rule)
    assert headline("MySigmoid", error) == ("MySigmoid stores a tensor as ctx.y: use "
                                            "ctx.save_for_backward" + rule)
    first = re.sub(r"\x1b\[[0-9;]*m", "", summary("MySigmoid", error)[0])
    assert first.startswith("✗ MySigmoid failed its self-check (tried with x of shape (7,)): ")
    assert first.endswith(rule) and first.count("x of shape (7,)") == 1


def test_an_optional_input_passed_as_none_says_its_case_once(monkeypatch):
    """Learner trial 82: MyLinearFunction's two returns read '(tried with an optional input
    passed as None; contract: ...)' and then '(with bias=None passed to apply)'. Is the case
    said once, up front: the input, then the contract's clause?"""
    monkeypatch.setattr(grading, "SELF_CHECK_FAILURE_HOOKS", [])
    wrong = mistake("MyLinearFunction", "2 gradients returned when there is no bias")
    first = shown(failure("MyLinearFunction", wrong), "MyLinearFunction")[0]
    assert first.startswith("✗ MyLinearFunction failed its self-check (tried with bias=None "
                            "passed to apply; contract: an optional input passed as None")
    assert first.count("passed to apply") == 1 and "(with " not in first


def test_an_error_raised_in_the_learners_code_shows_their_line():
    """Does a size error in backward point at the learner's own line, and only at it?"""
    lines = shown(failure("Square", RaisesInBackward))
    assert lines[0].startswith("✗ Square failed its self-check: Square.backward raised "
                               "RuntimeError")
    assert any(line.endswith(", in backward:") and "test_failure.py" in line for line in lines)
    learners_line = "return grad_output @ x.unsqueeze(0)  # shapes (4,) @ (1, 4): a size error"
    assert f"      {learners_line}" in lines
    assert not any("checks.py" in line or "torch" in line.split(",")[0] for line in lines)
    assert lines[-1] == f"  {FULL_TRACEBACK}" and len(lines) <= 6
    assert not any(line.startswith("  Details:") for line in lines)  # the hint quotes them


def test_a_stub_keeps_its_type_and_says_it_is_not_implemented():
    """Does an untouched stub still raise NotImplementedError, shown as not implemented yet?"""
    error = failure("Square", stub("Square"))
    assert type(error) is NotImplementedError
    assert shown(error)[0] == ("✗ Square failed its self-check: Square is not implemented yet: "
                               "its stub still raises NotImplementedError")
    # issue 48: nothing to read in %tb (the stub's own raise): no pointer to it
    assert not any("%tb" in line for line in shown(error))


def test_any_other_exception_is_named_with_its_message():
    """Is a LookupError from the learner's forward named, with its message, its phase and the
    inputs it was raised with, in the first line? (A ValueError is quoted with its phase and
    inputs, as a RuntimeError is.)"""

    class Raises(solution("Square")):
        @staticmethod
        def forward(ctx, x):
            raise LookupError("boom")

    error = failure("Square", Raises)
    assert type(error) is LookupError
    assert shown(error)[0] == ("✗ Square failed its self-check: Square.forward raised "
                               "LookupError with x of shape (4,): boom")
    assert learner_frames(error)[-1][2:] == ("forward", 'raise LookupError("boom")')


def test_no_learner_frames_when_the_grading_library_raised_it():
    """Is a hint found by the checks shown without any frame (the learner's code ran fine)?"""
    assert learner_frames(failure("Square", mistake("Square", "wrong sign"))) == []


def test_ipython_renders_it_short_once_then_in_full():
    """Does IPython's renderer give the short form once, so that %tb then shows everything?"""
    error = failure("Square", mistake("Square", "wrong sign"))
    short = error._render_traceback_()
    assert ANSI.sub("", short[0]).startswith(
        "✗ Square failed its self-check (tried with x of shape (5,)): ")
    assert not hasattr(error, "_render_traceback_")  # %tb: IPython's own full traceback


def test_a_passing_self_check_is_unchanged(capsys):
    """Does a correct answer still get its tick?"""
    grading.self_check("Square", solution("Square"))
    assert capsys.readouterr().out.startswith(f"✓ {passes('Square')}.")


def _shown_by_tb(error: BaseException) -> list[BaseException]:
    """The chain ``%tb`` shows after the short form rendered: sys.last_value's, as IPython
    walks it (a cause, else a context not suppressed), each link once."""
    import sys

    sys.last_type, sys.last_value, sys.last_traceback = type(error), error, error.__traceback__
    keep_learner_frames(error)
    chain, link = [], sys.last_value
    while link is not None and all(link is not seen for seen in chain):
        chain.append(link)
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
    return chain


def test_tb_shows_a_failed_self_check_once_and_the_learners_error_when_theirs():
    """Issue 48 (lesson 00's Outer): does %tb after a failed self-check show the GradingError
    once, not again for each case that named its inputs ("The above exception was the direct
    cause ..."), while the error keeps its chain for what reads it (its mistake's id)? And
    where the learner's own code raised, does their error stay below the hint, with their
    line?"""
    error = failure("Square", mistake("Square", "wrong sign"))
    assert isinstance(error.__cause__, GradingError)  # case() raised it again with its case
    tb_chain = _shown_by_tb(error)
    assert [type(link) for link in tb_chain] == [GradingError]
    assert str(tb_chain[0]) == str(error) and isinstance(error.__cause__, GradingError)
    error = failure("Square", RaisesInBackward)
    tb_chain = _shown_by_tb(error)
    assert [type(link) for link in tb_chain] == [GradingError, RuntimeError]
    assert any(tb.tb_frame.f_code.co_name == "backward" for tb in _walk(tb_chain[1].__traceback__))


def test_a_long_line_breaks_between_words_within_the_width():
    """Issue 48: JupyterLab broke a long red line inside a word ("NotImplementedE" / "rror"):
    is it cut between words, colour codes not counted, the pieces after the first indented,
    and a line of the learner's code left whole?"""
    from autograder.failure import CODE_INDENT, RED_BOLD, RESET, wrapped

    line = f"{RED_BOLD}✗ GroupNormFunction failed its self-check:{RESET} " + "word " * 30
    pieces = wrapped(line.rstrip(), width=40)
    assert all(len(ANSI.sub("", piece)) <= 40 for piece in pieces)
    assert ANSI.sub("", " ".join(piece.strip() for piece in pieces)) == ANSI.sub("", line).strip()
    assert pieces[0].startswith(RED_BOLD) and all(p.startswith("  ") for p in pieces[1:])
    assert wrapped("  Details: " + "x " * 60, width=40)[1].startswith(" " * 4)
    code = CODE_INDENT + "return 2 * x * grad_output.shape[3]" * 4
    assert wrapped(code, width=40) == [code]
    assert wrapped("short", width=40) == ["short"]


def test_a_hint_about_one_input_keeps_the_pair_it_failed_for():
    """Issue 48 (learner 57): BroadcastMul's header read '(tried with b of shape (1, 4))' above
    a message about grad_a for a of shape (3, 1). Where the hint names only some of the
    case's shapes, does the case keep them all, so the header names the pair it failed for?"""
    hint = "BroadcastMul.backward returned grad_a of shape (3, 4) for a of shape (3, 1): sum?"
    error = GradingError(hint, case="a of shape (3, 1), b of shape (1, 4), float64")
    assert error.case == "a of shape (3, 1), b of shape (1, 4), float64"


def test_a_case_of_two_clauses_says_the_inputs_once():
    """Issue 48 (learner 57): '(tried with a non-contiguous grad_output, its first two dims
    transposed; x of shape (2, 3, 4))' came above 'raised RuntimeError with x of shape (2, 3,
    4), weight of shape (4,)': is an input the hint names dropped from a clause after a ';'?"""
    hint = ("RMSNormFunction.backward raised RuntimeError with x of shape (2, 3, 4), weight of "
            "shape (4,): view size is not compatible")
    error = GradingError(hint, case="a non-contiguous grad_output, its first two dims "
                                    "transposed; x of shape (2, 3, 4)")
    assert error.case == "a non-contiguous grad_output, its first two dims transposed"
    assert shown(error, "RMSNormFunction")[0].count("x of shape (2, 3, 4)") == 1


def test_the_full_message_quotes_the_learners_error_once():
    """Issue 48 (learner 57): %tb's last line printed PyTorch's message twice, in the hint and
    again as the details. Does the message (what %tb and nbgrader print) say it once, and keep
    details the hint does not say?"""
    said = "view size is not compatible with input tensor's size and stride. Use .reshape(...)."
    error = GradingError(f"F.backward raised RuntimeError: {said}", f"{said}\nmore context")
    assert str(error).count("view size is not compatible") == 1
    assert str(error).endswith("\nmore context") and said in error.details
