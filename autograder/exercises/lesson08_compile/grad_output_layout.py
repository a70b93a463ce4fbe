"""Lesson 08: grad_output's shape and strides left as backward was handed them, for the two
exercises whose backward puts a reduced dim back (LogSumExp and squared_norm)."""

import torch

from ...errors import GradingError
from ...function_contract import rule_reference


def check_grad_output_layout_kept(given: torch.Tensor, pristine: torch.Tensor,
                                  name: str = "LogSumExp") -> None:
    """grad_output's shape and strides as handed to backward: an in-place view op on it
    (unsqueeze_, squeeze_, t_, as_strided_) changes them and leaves its values alone, so a check
    of its values sees nothing, and what backward computed from it looks like another mistake."""
    before = (tuple(pristine.shape), pristine.stride())
    after = (tuple(given.shape), given.stride())
    if after != before:
        raise GradingError(
            f"{name}'s backward changed grad_output's shape in place: it was handed a "
            f"grad_output of shape {before[0]} (strides {before[1]}) and left it of shape "
            f"{after[0]} (strides {after[1]}), as an in-place view op such as "
            "grad_output.unsqueeze_(dim) does; autograd may read grad_output again after your "
            "backward returns: make a new view instead (grad_output.unsqueeze(dim)) "
            + rule_reference("unwritten"),
            mistake=f"{name}/reshapes-grad-output")
