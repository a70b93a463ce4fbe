"""Every graded exercise, by the name the syllabus gives it.

Each module here covers one lesson (or one exercise) and lists its exercises in a module-level
``EXERCISES``; a helper module shared by several has none.
"""

import importlib
import pkgutil

from ..exercise import Exercise


def _collect() -> dict[str, Exercise]:
    found: dict[str, Exercise] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for exercise in getattr(module, "EXERCISES", ()):  # helper modules have none
            if exercise.name in found:
                raise ValueError(f"exercise {exercise.name!r} is defined twice")
            found[exercise.name] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()
