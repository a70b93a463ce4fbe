"""A failure explained by the learner's own earlier exercise: lesson 10's ``RMSNorm`` module calls
the learner's ``RMSNormFunction``, so a broken Function fails both, and the module's hint (a
wrong value) sends the learner to the wrong cell.

When an answer fails, each other exercise of its lesson that its code calls by name (a name in
its functions' code, bound in their globals to something other than the answer itself) is graded
on its own; the first that fails is named in the answer's first line, with its own hint, and the
failure gets the id ``<Exercise>/uses-failing-exercise``: no probe of the answer can be trusted
then, a proven one included (a CheckpointFunction that keeps ``run_fn`` on its class makes a
correct checkpoint_sequential recompute the wrong layers). The answer's own hint follows on the
second line, as what its check saw. Only an answer whose own battery proved that its failure
comes through the exercise it calls (``<Exercise>/fails-through-function``: it passes with a
correct one in its place) keeps that verdict. The notebook calls (``autograder.grading``) run exercises
through ``run`` here."""

import types
from contextvars import ContextVar

from .errors import GradingError
from .mistakes import mistake_of

# the id an answer's own battery gives a failure it proved comes through the exercise it calls
# (with a correct one in its place it passes): the battery's own word stands
THROUGH = "fails-through-function"

# the exercises whose dependencies are being graded: no exercise is graded inside itself
_grading: ContextVar[frozenset] = ContextVar("dependencies_grading", default=frozenset())


def _functions(submission) -> list[types.FunctionType]:
    if isinstance(submission, types.FunctionType):
        return [submission]
    if not isinstance(submission, type):
        return []
    found = []
    for klass in submission.__mro__:
        if klass is object or klass.__module__.partition(".")[0] == "torch":
            continue  # torch's own bases: their code calls no exercise
        for value in vars(klass).values():
            value = getattr(value, "__func__", value)  # staticmethod, classmethod
            if isinstance(value, types.FunctionType):
                found.append(value)
    return found


def names_used(code: types.CodeType) -> set[str]:
    """The global names ``code`` and the functions defined inside it read."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= names_used(constant)
    return names


def used_exercises(exercise, submission, exercises: dict) -> dict:
    """The other exercises of ``exercise``'s lesson that ``submission``'s code calls by name:
    name -> the learner's object bound to it."""
    used = {}
    for function in _functions(submission):
        names = names_used(function.__code__)
        for name, other in exercises.items():
            if (name != exercise.name and other.lesson == exercise.lesson and name in names
                    and name in function.__globals__
                    and function.__globals__[name] is not submission):
                used.setdefault(name, function.__globals__[name])
    return used


def failing_dependency(exercise, submission, exercises: dict,
                       seen: BaseException | None = None) -> GradingError | None:
    """The error that names the first exercise ``submission`` calls that fails on its own, or
    None where every one passes (the answer's own failure then stands); ``seen``: the answer's
    own failure, quoted on the second line."""
    busy = _grading.get() | {exercise.name}
    token = _grading.set(busy)
    try:
        for name, used in used_exercises(exercise, submission, exercises).items():
            if name in busy:
                continue
            try:
                run(exercises[name], used, exercises)
            except Exception as error:  # noqa: BLE001 - its own failure, whatever it raised
                return GradingError(
                    f"{exercise.name} calls your {name}, which fails its own check: fix {name} "
                    f"first, then check {exercise.name} again ({name}'s hint: "
                    f"{_first_line(error)})",
                    "" if seen is None else f"What {exercise.name}'s own check saw, through "
                    f"your {name}: {_first_line(seen)}",
                    mistake=f"{exercise.name}/uses-failing-exercise")
    finally:
        _grading.reset(token)
    return None


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]


def run(exercise, submission, exercises: dict) -> list:
    """``exercise.run(submission)``, with a failure named after the first exercise of
    ``exercises`` it calls that fails on its own."""
    try:
        return exercise.run(submission)
    except Exception as error:
        if mistake_of(error) == f"{exercise.name}/{THROUGH}":  # proven inherited already
            raise
        blamed = failing_dependency(exercise, submission, exercises, error)
        if blamed is None:
            raise
        raise blamed from error
