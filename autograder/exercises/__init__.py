"""Every graded exercise, by the name the syllabus gives it.

Where a new exercise's pieces go:

- ``lessonNN_<name>/`` holds one lesson's grading: a module per exercise (or per group of the
  lesson's exercises) defining its ``Spec``, battery, ``Domain`` and ``Exercise``, listed in a
  module-level ``EXERCISES`` in the order the lesson teaches them; beside it, one module per
  concept that exercise needs (its input values, its probes that name a mistake, its memory or
  precision checks). A module whose exercises come later in the lesson than another module's
  says so with ``LATER_IN_LESSON = True``.
- ``shared/`` holds what exercises of several lessons use; checks every exercise runs live a
  level up, in ``autograder/`` (``checks``, ``properties``, ``domain``, ``contract``).
"""

import importlib
import pkgutil

from ..exercise import Exercise


def _lesson_modules():
    """Each lesson's modules, lesson by lesson; within a lesson, by name, later ones last."""
    packages = sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg)
    for package in packages:
        path = importlib.import_module(f"{__name__}.{package}").__path__
        modules = [importlib.import_module(f"{__name__}.{package}.{info.name}")
                   for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name)]
        yield from sorted(modules, key=lambda m: getattr(m, "LATER_IN_LESSON", False))


def _collect() -> dict[str, Exercise]:
    found: dict[str, Exercise] = {}
    for module in _lesson_modules():
        for exercise in getattr(module, "EXERCISES", ()):  # helper modules have none
            if exercise.name in found:
                raise ValueError(f"exercise {exercise.name!r} is defined twice")
            found[exercise.name] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()
