"""What a failed verdict shows about the mistake: the stable id of a mistake a probe proved
(``GradingError.mistake``, e.g. ``"GradientReversal/forgets-alpha"``), or else a category of
what is known, never a guess. Standard library only: the grader reads these names too.

Categories (none of them contains a ``/``, so none can pass for an id):

- ``not-implemented``: the stub still raises NotImplementedError (an unanswered exercise);
- ``raised:<Type>``: the learner's code raised ``<Type>`` (the hint quotes it);
- ``unproven:wrong-value``: a value or gradient differs, and no probe proved why;
- ``unnamed:check``: a check without a mistake id failed (its hint says which);
- ``test-failed``: an assert of an instructor's own test cell failed;
- ``tampered``: the code replaced torch or the grading library while it was graded;
- ``timeout``: the test was interrupted at the time limit;
- ``unknown-exercise``: the test cell names an exercise the library does not have.

The grader adds what only it knows (a dead kernel, a notebook out of time, no verdict at all):
``grader.insight``.
"""

import re

from .errors import GradingError

NOT_IMPLEMENTED = "not-implemented"
WRONG_VALUE = "unproven:wrong-value"
UNNAMED_CHECK = "unnamed:check"
TEST_FAILED = "test-failed"
TAMPERED = "tampered"
TIMEOUT = "timeout"
UNKNOWN_EXERCISE = "unknown-exercise"
RAISED = "raised:"

# "Exercise/kebab-case": the exercise's name, a slash, lower-case words joined by hyphens
MISTAKE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*/[a-z0-9]+(?:-[a-z0-9]+)*")

# Where a value is compared and found different, with no probe of why.
_VALUE_COMPARISONS = ("autograder.diagnose", "autograder.precision")
_TORCH_COMPARISONS = ("GradcheckError",)  # gradcheck: the analytic Jacobian differs


def is_mistake_id(text: str) -> bool:
    """Is ``text`` a proven mistake's id (not a category)?"""
    return MISTAKE_ID.fullmatch(text) is not None


def raised(error: BaseException) -> str:
    """The category of an error the learner's code raised (the stub's: a bare
    NotImplementedError)."""
    if isinstance(error, NotImplementedError) and not str(error).strip():
        return NOT_IMPLEMENTED
    return f"{RAISED}{type(error).__name__}"


# the call a learner's error was raised in, (phase, its inputs described), where the grading
# library's forward or backward call marked it (``autograder.checks.called_with``)
CALLED_WITH = "autograder_called_with"


def raised_words(name: str, error: BaseException) -> str:
    """``Square raised KeyError``, or with the call that raised it where it was marked:
    ``Square.forward raised KeyError with x of shape (1, 4)``."""
    phase, given = getattr(error, CALLED_WITH, ("", ""))
    return (f"{name}{f'.{phase}' if phase else ''} raised {type(error).__name__}"
            f"{f' with {given}' if given else ''}")


def raised_message(name: str, error: BaseException) -> str:
    """What a verdict says of an error the learner's code raised: ``Square raised KeyError: 3``
    (with the call where it was marked, ``raised_words``), without ": " for an empty message
    (a bare assert), as the self-check shows it."""
    said = f": {error}" if str(error).strip() else ""
    return f"{raised_words(name, error)}{said}"


def mistake_of(error: BaseException) -> str:
    """The id of the mistake ``error`` proves, or the category of what it shows."""
    if not isinstance(error, GradingError):
        return raised(error)
    if error.mistake:
        return error.mistake
    origin, seen = error, {id(error)}  # back through re-raises that kept the hint
    while (isinstance(origin.__cause__, GradingError) and id(origin.__cause__) not in seen
           and origin.hint.startswith(origin.__cause__.hint)):  # (`raise e from e` loops)
        origin = origin.__cause__
        seen.add(id(origin))
    cause = origin.__cause__
    if cause is not None and not isinstance(cause, GradingError):  # a hint about an error
        return WRONG_VALUE if type(cause).__name__ in _TORCH_COMPARISONS else raised(cause)
    return WRONG_VALUE if _raised_in(origin, _VALUE_COMPARISONS) else UNNAMED_CHECK


def _raised_in(error: BaseException, modules: tuple[str, ...]) -> bool:
    """Was ``error`` raised by code of one of ``modules`` (its innermost frame)?"""
    traceback = error.__traceback__
    while traceback is not None and traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback is not None and traceback.tb_frame.f_globals.get("__name__") in modules


# the ids of a write into what forward or backward was given (``autograder.untouched``): every
# value read from it after is corrupt
WRITES = ("writes-grad-output", "writes-input")


def write_first(name: str, found: GradingError, error: BaseException) -> bool:
    """Does the write ``found``, seen on a call before ``error``, come first? Where the battery
    does not name ``error``, and where ``found`` is into grad_output or an input (every later
    value read from it is corrupt) and ``error`` names no write: a probe's named symptom
    (erin's FakeQuantize, grad_output.mul_(inside), then the scale gradient from it, named
    clipped-elements-left-out, a right formula)."""
    named = mistake_of(error) if isinstance(error, GradingError) else ""
    if not named.startswith(f"{name}/"):
        return True
    return found.mistake.partition("/")[2] in WRITES and not about_a_write(named)


def about_a_write(mistake: str) -> bool:
    """Is the named ``mistake`` itself about a tensor written in place: grad_output, an input, a
    saved tensor, or mark_dirty's in-place contract (lesson 07's ReLUInPlace, x marked dirty
    and written, a view of it returned: dirty-not-returned names what the write broke)?"""
    said = mistake.partition("/")[2]
    return said.startswith("writes-") or "in-place" in said or "dirty" in said
