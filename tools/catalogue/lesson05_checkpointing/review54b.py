"""Lesson 05: the answers of review 54b not already catalogued in the same form, with the hint
each gets. The reviewer's wrong answer recomputed on leaves cast to grad_output's dtype, which
every case with the arguments' dtype in grad_output let through; the case run_fn(a, b) with a
float64, b float32 and a float32 output names it, and any cast of every leaf to one dtype. Not
here: the reviewer's CPU-only random state (ungradable without a GPU; the page says so)."""

from .. import Mistake
from .review54 import _backward

# CheckpointFunction: fresh leaves cast to grad_output's dtype ("the gradient's dtype is the one
# backward works in"): a float64 argument recomputed in float32 when run_fn returns float32.
WRONG_01_LEAVES_IN_GRAD_OUTPUT_DTYPE = _backward(
    "(tensor.detach().to(grad_output.dtype) if tensor.is_floating_point() else tensor.detach())"
    ".requires_grad_(tensor.requires_grad)")

# CheckpointFunction: fresh leaves upcast to float64 "for an exact recomputation": a float32
# argument is recomputed in float64, which is not the computation forward ran.
WRONG_02_LEAVES_UPCAST = _backward(
    "(tensor.detach().double() if tensor.is_floating_point() else tensor.detach())"
    ".requires_grad_(tensor.requires_grad)")

MISTAKES = [
    Mistake("CheckpointFunction", "fresh leaves cast to grad_output's dtype",
            "float32 is grad_output's dtype", WRONG_01_LEAVES_IN_GRAD_OUTPUT_DTYPE),
    Mistake("CheckpointFunction", "fresh leaves upcast to float64",
            "recomputed run_fn on float64 copies of arguments that were float32",
            WRONG_02_LEAVES_UPCAST),
]
