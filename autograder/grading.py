"""The two calls a notebook makes: ``self_check`` (visible) and ``grade`` (hidden tests)."""

import functools
import linecache
import warnings

from . import dependencies, mistakes, progress
from .errors import GradingError
from .exercises import EXERCISES
from .failure import shorten, show_pass
from .torch_state import known_state
from .verdict import Verdict

# Called as hook(exercise, submission, error) when a visible self-check fails, after the cell
# has shown its hint; `widgets` registers one that shows the gradient-check explorer
# (autograder never imports widgets).
SELF_CHECK_FAILURE_HOOKS: list = []


def _exercise(name: str):
    try:
        return EXERCISES[name]
    except KeyError:
        raise KeyError(f"no exercise called {name!r}; known: {', '.join(EXERCISES)}") from None


def self_check(name: str, submission) -> None:
    """Run the exercise's whole battery, the one grading runs, on this machine's devices. On
    failure the exception (a GradingError with a hint, or whatever the learner's code raised)
    still propagates, so the cell fails, but a notebook shows it in a few lines, the hint first
    (``autograder.failure``)."""
    exercise = _exercise(name)
    caught: list = []
    try:
        with known_state(), warnings.catch_warnings(record=True) as caught:
            devices = dependencies.run(exercise, submission, EXERCISES)
    except Exception as error:
        # the warnings below the verdict, then any view: registered first, run first
        _after_this_cell(functools.partial(show_warnings, caught))
        if isinstance(error, NotImplementedError) and not str(error).strip():  # the stub's
            progress.record(name, exercise.lesson, progress.NOT_STARTED)
        elif isinstance(error, GradingError):
            progress.record(name, exercise.lesson, progress.FAILED, str(error).partition("\n")[0])
            _after_this_cell(functools.partial(_run_failure_hooks, exercise, submission, error))
        else:
            progress.record(name, exercise.lesson, progress.FAILED, f"raised {type(error).__name__}")
        shorten(name, error)
        raise
    progress.record(name, exercise.lesson, progress.PASSED)
    show_pass(exercise.passed_message(devices))
    show_warnings(caught)


WARNINGS_HEADER = "Warnings raised while the self-check ran your code (each shown once):"


def show_warnings(caught: list) -> None:
    """Print the warnings a self-check's battery raised (the learner's ``x.T`` on a 3-D x,
    say), each once, after its verdict: printed as they came, they stood above the verdict,
    whose line must come first. Nothing when there were none."""
    seen = {}
    for message in caught:
        key = (message.category, str(message.message), message.filename, message.lineno)
        seen.setdefault(key, message)
    if not seen:
        return
    lines = [WARNINGS_HEADER]
    for message in seen.values():
        lines.append(f"  {message.filename}:{message.lineno}: {message.category.__name__}: "
                     f"{message.message}")
        if (source := linecache.getline(message.filename, message.lineno).strip()):
            lines.append(f"      {source}")
    print("\n".join(lines), flush=True)


def quick_check(name: str, submission) -> None:
    """Values and gradients on the exercise's typical inputs, each input alone requiring grad,
    on the CPU: a second or two where the whole battery takes longer (lesson 13's kernels run
    in Triton's interpreter), to find a slip while iterating. It promises nothing more:
    ``self_check`` runs every check grading runs. Failures show as a self-check's do."""
    import torch

    from .checks import check_is_function
    from .contract import check_each_input_alone

    exercise = _exercise(name)
    domain = exercise.domain
    if domain is None:
        raise ValueError(f"{name} declares no typical inputs: run self_check({name!r}, ...)")
    try:
        with known_state():
            function = (domain.prepare(submission) if domain.prepare is not None
                        else check_is_function(submission, domain.spec))
            check_each_input_alone(function, domain.spec, domain.values(torch.device("cpu")))
    except Exception as error:
        shorten(name, error)
        raise
    show_pass(f"{name}: values and gradients right on one typical input (a quick check: "
              f"self_check runs every check grading runs)")


def _run_failure_hooks(exercise, submission, error) -> None:
    for hook in SELF_CHECK_FAILURE_HOOKS:
        try:
            hook(exercise, submission, error)
        except Exception as hook_error:  # a broken view must not hide the hint
            warnings.warn(f"self-check failure hook {hook!r} failed: {hook_error}")


def _after_this_cell(callback) -> None:
    """Run ``callback`` once the running notebook cell has shown its error, so that what it
    displays comes below the hint (as matplotlib's inline figures do); outside IPython, now."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        callback()
        return

    def once() -> None:
        shell.events.unregister("post_execute", once)
        callback()

    shell.events.register("post_execute", once)


def verdict(name: str, submission) -> tuple[bool, str]:
    """Run every hidden check; return (passed, message), never raising for the learner's code."""
    return classified_verdict(name, submission)[:2]


def classified_verdict(name: str, submission) -> Verdict:
    """``verdict`` with, for a failure, the mistake: a proven id or a category
    (``autograder.mistakes``); the score is left to ``autograder.partial``."""
    exercise = EXERCISES.get(name)
    if exercise is None:
        return Verdict(False, f"no exercise called {name!r}: the test cell names an unknown "
                       "exercise", mistake=mistakes.UNKNOWN_EXERCISE)
    try:
        with known_state():  # the learner's grad mode, default dtype, ... never cost a mark
            devices = dependencies.run(exercise, submission, EXERCISES)
    except GradingError as error:
        return Verdict(False, str(error), mistake=mistakes.mistake_of(error))
    except NotImplementedError as error:
        if str(error).strip():  # torch's, for an op it lacks; the stub's is bare
            return Verdict(False, mistakes.raised_message(name, error),
                           mistake=mistakes.raised(error))
        return Verdict(False, f"{name} is not implemented yet: its stub still raises "
                       "NotImplementedError", mistake=mistakes.NOT_IMPLEMENTED)
    except Exception as error:  # the learner's code may raise anything
        return Verdict(False, mistakes.raised_message(name, error),
                       mistake=mistakes.raised(error))
    return Verdict(True, exercise.passed_message(devices))


def report(passed: bool, message: str) -> None:
    """Show a verdict in the cell: a tick, or an error whose first line is the hint."""
    if not passed:
        raise GradingError(message.splitlines()[0], "\n".join(message.splitlines()[1:]))
    print(f"✓ {message}")


def grade(name: str, submission) -> None:
    """Hidden-test entry point. In a sealed grading kernel ``autograder.seal.boot`` replaces
    this with a version that restores pristine torch and signs its verdict."""
    report(*verdict(name, submission))
