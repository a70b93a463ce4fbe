"""Grading library for the custom autograd Functions course.

Notebooks call ``self_check(name, submission)`` in visible checks and ``grade(name, submission)``
in hidden tests; everything else here is what those two are built from. The names below load on
first use, so that the grader can read the verdict format (``autograder.verdict``) without
importing torch.
"""

__all__ = ["GradingError", "check_environment", "grade", "quick_check", "self_check",
           "show_progress"]
_HOMES = {"GradingError": "grading", "grade": "grading", "self_check": "grading",
          "quick_check": "grading",
          "show_progress": "progress", "check_environment": "environment"}


def __getattr__(name: str):
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
