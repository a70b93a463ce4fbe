"""Lesson 10's GroupNormFunction: a forward that raises for one number of spatial dims but
runs on the same x with its spatial dims flattened into one (a per-channel shape such as
(C, 1) written for a 3-D x)."""

import torch

from ...checks import make_inputs
from ...errors import GradingError
from .group_norm_spec import NAME


def recognise_fixed_rank(function, values: dict) -> None:
    """A contiguous x of shape (N, C, *) with other than one spatial dim: if forward raises
    there and runs on x.reshape(N, C, -1) (a view), name the per-channel shape that fits one
    rank only."""
    x = values["x"]
    if x.dim() == 3 or not x.numel() or not x.is_contiguous():
        return  # (a strided x flattened is a contiguous copy: it would differ in layout too)
    flat = {**values, "x": x.reshape(*x.shape[:2], -1)}
    try:
        with torch.no_grad():
            function.apply(*make_inputs(values, requires_grad=False).values())
        return  # forward runs: the first hint stands
    except Exception:  # the learner's code may raise anything
        pass
    try:
        with torch.no_grad():
            function.apply(*make_inputs(flat, requires_grad=False).values())
    except Exception:  # raises for a 3-D x too: the first hint stands
        return
    spatial = x.dim() - 2
    raise GradingError(
        f"{NAME}.forward runs for x of shape {tuple(flat['x'].shape)} (one spatial dim) but "
        f"raises for the same x as {tuple(x.shape)} ({spatial} spatial dim"
        f"{'s' * (spatial != 1)}): the shape your weight or bias broadcasts in fits one number "
        "of spatial dims; how many 1s must follow C for an x of x.dim() dims?",
        mistake=f"{NAME}/per-channel-shape-fixed-rank")
