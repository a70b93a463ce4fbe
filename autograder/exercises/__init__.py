"""Every graded exercise, by the name the syllabus gives it.

Each module here covers one lesson (or one exercise) and lists its exercises in a module-level
``EXERCISES``, in the order the lesson teaches them; a helper module shared by several has none.
A module whose exercises come later in a lesson than another module's says so with
``LATER_IN_LESSON = True``: the collected order is the course's order within each lesson.
"""

import importlib
import pkgutil

from ..exercise import Exercise


def _collect() -> dict[str, Exercise]:
    found: dict[str, Exercise] = {}
    modules = [importlib.import_module(f"{__name__}.{info.name}")
               for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)]
    for module in sorted(modules, key=lambda m: getattr(m, "LATER_IN_LESSON", False)):
        for exercise in getattr(module, "EXERCISES", ()):  # helper modules have none
            if exercise.name in found:
                raise ValueError(f"exercise {exercise.name!r} is defined twice")
            found[exercise.name] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()
