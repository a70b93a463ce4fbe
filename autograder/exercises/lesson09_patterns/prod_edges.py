"""Lesson 09's ProdOverDim on the shapes at the edge of what torch.prod takes (Function contract,
rule 1): a 0-d x, which is its own product along dim 0 or -1, and an x empty along dim, whose
products are all 1 and whose gradient has no entries."""

import torch

from ...checks import Spec, case
from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from .pattern_cases import described, graded_case

# (x's shape, dim): 0-d with both dims torch.prod accepts, then empty along dim (first, last,
# middle, negative), beside sizes that are not 0
EDGE_CASES = [((), 0), ((), -1), ((3, 0), 1), ((0, 4), 0), ((0,), 0), ((2, 0, 3), -2)]


def check_edge_shapes(function, spec: Spec, device) -> None:
    """Values and gradients against torch.prod's on each edge shape; where forward or backward
    raises there, the first line says what torch.prod gives on that shape."""
    for shape, dim in EDGE_CASES:
        values = {"x": sample(shape, device, seed=3, away_from_zero=0.3), "dim": dim}
        try:
            with case(described(values, torch.float64)):
                graded_case(function, spec, values)
        except GradingError as error:
            if not error.hint.startswith((f"{spec.name}.forward raised",
                                          f"{spec.name}.backward raised")):
                raise
            raised = error.hint.split(" with ")[0]  # "ProdOverDim.backward raised IndexError"
            given = (f"a 0-d x (dim={dim}, float64): torch.prod returns it as it is, its own "
                     "product, and its gradient is grad_output" if not shape else
                     f"an x of shape {shape}, empty along dim={dim} (float64): torch.prod gives "
                     "1 for each empty product, and x's gradient is empty, of x's shape")
            raise GradingError(f"{raised} on {given} {rule_reference('values')}",
                               str(error)) from error
