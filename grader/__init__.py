"""The instructor's side of grading: nbgrader integration, sealed and sandboxed kernels, batches,
the gradebook, the grades CSV, and what the class got wrong (insight).

It runs on the grading machine, never in a learner's kernel, and importing it never imports torch:
the kernels import torch and the grading library (``autograder``) themselves. ``python -m grader``
is the instructor's command line (``make release``, ``make autograde``, ...).
"""
