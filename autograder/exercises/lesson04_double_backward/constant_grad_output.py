"""Lesson 04: a backward that records its ops only when grad_output requires grad. Under
create_graph=True a loss such as ``y.sum()`` hands backward a grad_output that needs no grad (the
ones it starts from are a constant), so such a backward returns gradients with no graph there, and
the second derivative of that loss is lost. The checks that differentiate a first derivative taken
with a constant grad_output (beta wider than x, the Hessian-vector product) take it here: where it
has no graph, the same call with a grad_output that requires grad tells the two causes apart."""

import torch

from ...errors import GradingError


def _recorded(gradients) -> bool:
    return all(gradient is not None and gradient.requires_grad for gradient in gradients)


def first_derivatives(name: str, call, inputs: tuple, grad_output) -> tuple:
    """torch.autograd.grad(call(*inputs), inputs, grad_output, create_graph=True), each with a
    graph, or the error that names why not."""
    gradients = torch.autograd.grad(call(*inputs), inputs, grad_output, create_graph=True,
                                    allow_unused=True)
    if _recorded(gradients):
        return gradients
    probe = grad_output.detach().clone().requires_grad_()
    again = torch.autograd.grad(call(*inputs), inputs, probe, create_graph=True,
                                allow_unused=True)
    seen = ("with create_graph=True and a grad_output that needs no grad (as the loss y.sum() "
            f"hands backward), the gradients {name}'s backward returned had no graph")
    if _recorded(again):
        raise GradingError(
            f"{seen}, while with a grad_output that requires grad they had one: your backward "
            "records its ops only when grad_output requires grad, so the second derivative of "
            "a loss like y.sum() is lost", mistake=f"{name}/records-only-for-grad-output")
    raise GradingError(f"{seen}, and none with a grad_output that requires grad either: your "
                       "backward's ops are not recorded, so no second derivative can be taken",
                       mistake=f"{name}/backward-records-nothing")
