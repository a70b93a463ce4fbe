"""Lesson 09, selections and a normalisation: the IndexSelect and Normalize exercises (their
batteries are in ``index_select.py`` and ``normalize.py``)."""

import torch

from ...domain import Constant, Domain
from ...exercise import Exercise, sample
from .index_select import SELECT, select_full, select_values
from .normalize import NORMALIZE, normalize_full, normalize_values
from .normalize_rows import rows_around_eps
from .pattern_cases import LESSON



EXERCISES = [
    Exercise("IndexSelect", LESSON, select_full,
             example=lambda: (sample((4, 2), "cpu"), torch.tensor([3, 0, 3, 3])),
             contract=("repeated index", "empty index", "1-D x", "saves only index",
                       "non-contiguous grad_output", "3-D x transposed or expanded", "0-d x"),
             domain=Domain(SELECT, select_values)),
    # the domain's empty and 0-d case: an empty batch, and a 0-d x, a row of one entry along
    # dim=-1 as F.normalize takes it (Function contract, rule 1)
    Exercise("Normalize", LESSON, normalize_full,
             example=lambda: (rows_around_eps("cpu")[0][:3, :4], 1e-2),
             contract=("rows below eps and a row of zeros", "1-D x",
                       "saves the output and one norm per row", "closed form",
                       "non-contiguous grad_output"),
             domain=Domain(NORMALIZE, normalize_values,
                           constants={"eps": Constant(1e-12, 10.0, "eps a Python float; "
                                                      "correct on rows whose norm is below "
                                                      "eps", also=(1e-3,))})),
]
