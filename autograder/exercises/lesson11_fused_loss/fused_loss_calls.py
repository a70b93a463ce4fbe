"""Lesson 11: linear_cross_entropy called twice in one graph, each call's gradients its own."""

import torch

from ...checks import case, make_inputs
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from .fused_loss_work import NAME, Called, _describe, _truth


def check_two_calls(function: Called, first: dict, second: dict) -> None:
    """Two calls in one graph (two losses added, one backward), each call's inputs its own
    and of the same shapes: each call's gradients are its own. A buffer kept between calls
    and saved again (grad_weight reused per shape, to save an allocation) fails here, with
    the case named, rather than as PyTorch's bare version-counter error further on."""
    with case(f"two calls in one graph, {_describe(first)}, each call's inputs its own"):
        inputs = [make_inputs(values) for values in (first, second)]
        leaves = [one[n] for one in inputs for n in ("x", "weight")]
        loss = sum(function.apply(*one.values()) for one in inputs)
        try:
            grads = torch.autograd.grad(loss, leaves)
        except RuntimeError as error:
            if "modified by an inplace operation" not in str(error):
                raise
            raise GradingError(
                f"{NAME}'s backward failed with two calls in one graph: the second call's "
                "forward wrote into a tensor the first call had saved for backward, a buffer "
                "both calls share (PyTorch's words: a variable needed for gradient computation "
                "has been modified by an inplace operation)", str(error),
                mistake="linear_cross_entropy/buffer-shared-between-calls") from error
        truths = [grad for values in (first, second) for grad in _truth(values)[1]]
        for k, (got, true) in enumerate(zip(grads, truths)):
            label = f"{'x' if k % 2 == 0 else 'weight'} of the {('first', 'second')[k // 2]} call"
            try:
                diagnose_gradient(label, got.double(), true)
            except GradingError as error:
                raise GradingError(
                    f"{NAME} is right for one call at a time but not for two calls in one "
                    f"graph ({error.hint}): one call changed what the other saved or computes "
                    "with", error.details,
                    mistake=f"{NAME}/state-shared-between-calls") from error
