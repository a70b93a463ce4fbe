"""Lesson 13: rms_norm_rows's slips in the row gradient itself, not in the kernel: the path from
x_j through y_j alone, r's dependence on the whole row left out; and the row's sum where the
gradient needs its mean (the 1/D of r's derivative left out, issue 69); the weight left out of
the row's sum (review 80's V39)."""

from .. import Mistake
from .common import _edit
from .rms_norm_rows import RMS

MISTAKES = [
    Mistake("rms_norm_rows", "row gradient with the direct path only: r's dependence on the row "
            "left out", "has only the direct path through y_j",
            _edit(RMS, ("    grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)",
                        "    grad_x = rstd * grad_hat"))),
    Mistake("rms_norm_rows", "the row's sum where the gradient needs its mean (no 1/D)",
            "where it needs the mean, 1/D of it",
            _edit(RMS, ("tl.sum(grad_hat * x_hat, axis=0) / D)", "tl.sum(grad_hat * x_hat, axis=0))"))),
    Mistake("rms_norm_rows", "the weight left out of the projection's row sum",
            "the closed form with the weight left out of the row's sum",
            _edit(RMS, ("tl.sum(grad_hat * x_hat, axis=0) / D)", "tl.sum(grad * x_hat, axis=0) / D)"))),
]
