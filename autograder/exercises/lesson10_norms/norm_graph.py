"""Lesson 10's RMSNorm module: whether an output was computed through a custom Function (the
learner's RMSNormFunction), read off its graph."""

import torch

from ...errors import GradingError

NAME = "RMSNorm"


def custom_node(output: torch.Tensor):
    """The first custom Function's node in the output's graph (near its end), or None."""
    stack, seen = [output.grad_fn], set()
    while stack and len(seen) < 20:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if isinstance(node, torch.autograd.function.BackwardCFunction):
            return node
        stack.extend(next_node for next_node, _ in node.next_functions)
    return None


def check_through_function(output, described: str) -> None:
    """An output the module's weight reaches (it requires grad) made without a custom
    Function's node: forward took another path than RMSNormFunction.apply for this input."""
    if isinstance(output, torch.Tensor) and output.requires_grad \
            and custom_node(output) is None:
        made_by = type(output.grad_fn).__name__
        raise GradingError(f"{described} does not compute through RMSNormFunction.apply (its "
                           f"output's graph has no custom Function node, only {made_by} and "
                           "torch's ops): forward(x) computes through your RMSNormFunction for "
                           "every input, half precision included",
                           mistake=f"{NAME}/bypasses-function")
