"""Lesson 11, linear_cross_entropy's memory: no tensor near the N x V logits, forward or
backward, in any grad mode, and forward's peak a few chunks, not all of them."""

import torch

from ...checks import case, make_inputs, run_backward, run_forward
from ...errors import GradingError
from ...memory import _MATMULS, TensorAccounting
from .fused_loss_work import LCE, NAME, Called, _describe, _sizes


# when the loss is computed (grad mode, which inputs require grad) and what runs then
LARGEST_TENSOR_SITUATIONS = (("", True, True, ("forward", "backward")),
                             (" with neither x nor weight requiring grad", True, False,
                              ("forward",)),
                             (" under torch.no_grad()", False, True, ("forward",)))


def check_largest_tensor(function: Called, values: dict) -> None:
    """No tensor bigger than chunk_size x V, N x d or V x d elements, forward or backward, in
    every grad mode (a shortcut to the composed ops where no gradient is needed builds the
    whole N x V logits too)."""
    N, d, V, chunk = _sizes(values)
    limit = max(chunk * V, N * d, V * d)
    for situation, grad_mode, requires_grad, phases in LARGEST_TENSOR_SITUATIONS:
        inputs = make_inputs(values, requires_grad=requires_grad)
        with case(_describe(values) + situation), TensorAccounting() as books:
            books.start("forward")
            with torch.set_grad_enabled(grad_mode):
                output = run_forward(function, LCE, inputs).output
            if "backward" in phases:
                books.start("backward")
                run_backward(LCE, output, inputs, torch.ones_like(output))
        for phase in phases:
            largest = books.phases[phase].largest
            if largest is not None and largest.numel > limit:
                if largest.op in _MATMULS:  # a product that large is the logits of every row
                    advice = ("the logits of more than chunk_size rows at once: compute "
                              "chunk_size rows of logits at a time, never all N x V, whichever "
                              "gradients are needed")
                else:
                    advice = (f"{largest.op} is not a matrix product, so this is no chunk's "
                              "logits but a tensor as large as all of them (a one-hot, a mask, a "
                              "buffer for every row?): build it chunk by chunk, as the logits")
                raise GradingError(
                    f"{NAME}'s {phase}{situation} creates a tensor of shape {largest.shape} "
                    f"({largest.numel} elements, by {largest.op}) where chunks need at most "
                    f"{limit}: {advice} (with {_describe(values)})",
                    mistake="linear_cross_entropy/materialises-logits")


CHUNKS_ALIVE = 8  # the contract's bound on chunk_size x V tensors alive at once in forward
X_AND_WEIGHT_SIZED = 3  # each gradient, its float32 accumulator, the float32 weight copy


def _chunks_alive(function: Called, values: dict) -> float:
    """Forward's live tensors at their peak, less a few of x's and weight's sizes (counted in
    float32 or wider), in chunk_size x V tensors."""
    N, d, V, chunk = _sizes(values)
    wide = torch.promote_types(values["x"].dtype, torch.float32).itemsize
    inputs = make_inputs(values)
    with case(_describe(values)), TensorAccounting() as books:
        function.apply(*inputs.values())  # no saved-tensor hooks: they would keep every chunk
    return (books.phase.peak - X_AND_WEIGHT_SIZED * (N * d + V * d) * wide) / (chunk * V * wide)


def check_forward_peak(function: Called, values: dict) -> None:
    """Forward's live tensors at their peak, beyond a few of x's and weight's sizes, are at
    most CHUNKS_ALIVE chunk_size x V tensors, however many chunks. Past the bound, the same
    call on half the rows tells the two mistakes apart: every chunk kept shrinks with the
    number of chunks, too many tensors per chunk does not."""
    N, d, V, chunk = _sizes(values)
    alive = _chunks_alive(function, values)
    chunks = -(-N // chunk)
    if alive <= CHUNKS_ALIVE:
        return
    seen = (f"{NAME}'s forward has {alive:.1f} chunk_size x V tensors' worth alive at once, of "
            f"{chunks} chunks, where the contract allows {CHUNKS_ALIVE}")
    half = dict(values, x=values["x"][:N // 2].clone(), target=values["target"][:N // 2].clone())
    fewer = chunks - -(-(N // 2) // chunk)
    if alive - _chunks_alive(function, half) >= fewer / 2:  # about one per chunk dropped
        raise GradingError(
            f"{seen}: are the chunks all alive at once, each one's logits (or G) kept in a list, "
            "or for a second pass? let each chunk's go before the next one's exist "
            f"(with {_describe(values)})", mistake="linear_cross_entropy/keeps-every-chunk")
    raise GradingError(
        f"{seen}: one chunk makes more chunk-sized tensors than it needs alive together (copies "
        "or intermediates of its logits kept to the end of the loop?): count the chunk_size x V "
        "tensors alive at the loop's busiest line, and let each go once it is used "
        f"(with {_describe(values)})", mistake="linear_cross_entropy/too-many-chunk-tensors")
