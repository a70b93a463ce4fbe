"""Grading library for the custom autograd Functions course.

Notebooks call ``self_check(name, submission)`` in visible checks and ``grade(name, submission)``
in hidden tests; everything else here is what those two are built from. The names below load on
first use, so that the grader can read the verdict format (``autograder.verdict``) without
importing torch.
"""

__all__ = ["GradingError", "grade", "self_check"]


def __getattr__(name: str):
    if name in __all__:
        from . import grading

        return getattr(grading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
