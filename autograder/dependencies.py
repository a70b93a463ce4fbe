"""A failure explained by the learner's own earlier exercise: lesson 10's ``RMSNorm`` module calls
the learner's ``RMSNormFunction``, so a broken Function fails both, and the module's hint (a
wrong value) sends the learner to the wrong cell.

When an answer fails with no proven cause of its own (a wrong value, an error its code raised),
each other exercise of its lesson that its code calls by name (a name in
its functions' code, bound in their globals to something other than the answer itself) is graded
on its own; the first that fails is named in the answer's first line, with its own hint, and the
failure gets the id ``<Exercise>/uses-failing-exercise``. The notebook calls (``autograder.grading``) run exercises
through ``run`` here."""

import types
from contextvars import ContextVar

from .errors import GradingError
from .mistakes import is_mistake_id, mistake_of

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


def failing_dependency(exercise, submission, exercises: dict) -> GradingError | None:
    """The error that names the first exercise ``submission`` calls that fails on its own, or
    None where every one passes (the answer's own failure then stands)."""
    busy = _grading.get() | {exercise.name}
    token = _grading.set(busy)
    try:
        for name, used in used_exercises(exercise, submission, exercises).items():
            if name in busy:
                continue
            try:
                run(exercises[name], used, exercises)
            except Exception as error:  # noqa: BLE001 - its own failure, whatever it raised
                hint = (str(error).splitlines() or [type(error).__name__])[0]
                return GradingError(
                    f"{exercise.name} calls your {name}, which fails its own check: fix {name} "
                    f"first, then check {exercise.name} again ({name}'s hint: {hint})",
                    mistake=f"{exercise.name}/uses-failing-exercise")
    finally:
        _grading.reset(token)
    return None


def run(exercise, submission, exercises: dict) -> list:
    """``exercise.run(submission)``, with a failure that has no proven cause of its own named
    after the first exercise of ``exercises`` it calls that fails on its own."""
    try:
        return exercise.run(submission)
    except Exception as error:
        if is_mistake_id(mistake_of(error)):  # a cause of its own, proven
            raise
        blamed = failing_dependency(exercise, submission, exercises)
        if blamed is None:
            raise
        raise blamed from error
