"""Grading library for the custom autograd Functions course.

Notebooks call ``self_check(name, submission)`` in visible checks and ``grade(name, submission)``
in hidden tests; everything else here is what those two are built from.
"""

from .errors import GradingError
from .grading import grade, self_check

__all__ = ["GradingError", "grade", "self_check"]
