"""Lesson 11: linear_cross_entropy called twice in one graph, each call's gradients its own;
backward's gradients new tensors, never the saved ones, even at grad_output == 1."""

import torch
from torch.autograd.graph import saved_tensors_hooks

from ...checks import case, make_inputs
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...probes import _shares_memory
from .fused_loss_work import NAME, Called, _describe, _truth


def check_returns_new_tensors(function: Called, values: dict) -> None:
    """At grad_output == 1, where multiplying changes nothing, no gradient backward returns
    shares memory with a tensor forward saved: handing the saved gradient itself back lets a
    caller who changes it in place (clipping it, say) change what the next walk of the graph
    reads."""
    inputs = make_inputs(values)
    saved: list[torch.Tensor] = []

    def pack(tensor):
        saved.append(tensor)
        return tensor

    with case(_describe(values) + ", grad_output=1"):
        with saved_tensors_hooks(pack, lambda tensor: tensor):
            output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, (inputs["x"], inputs["weight"]),
                                    torch.ones_like(output))
        for name, grad in zip(("x", "weight"), grads):
            if any(_shares_memory(grad, kept) for kept in saved):
                raise GradingError(
                    f"{NAME}'s backward returned the tensor forward saved, itself, as "
                    f"grad_{name} at grad_output == 1: a caller who changes that gradient in "
                    "place (clipping it) changes what the next walk of the graph reads; return "
                    f"a new tensor, grad_output * grad_{name}, whatever grad_output is",
                    mistake=f"{NAME}/returns-saved-tensor")


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
