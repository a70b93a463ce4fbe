"""Every graded exercise, by the name the syllabus gives it.

Each module here covers one lesson and lists its exercises in a module-level ``EXERCISES``.
"""

import importlib
import pkgutil

from ..exercise import Exercise


def _collect() -> dict[str, Exercise]:
    found: dict[str, Exercise] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for exercise in module.EXERCISES:
            if exercise.name in found:
                raise ValueError(f"exercise {exercise.name!r} is defined twice")
            found[exercise.name] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()
