"""Lesson 10: backward's vector-Jacobian product computed without a D x D matrix (M x M per
group for GroupNorm): on rows long enough that such a matrix dwarfs x, no tensor backward
allocates may hold more than a few times x's elements."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import Spec, make_inputs, run_backward, run_forward
from ...errors import GradingError

TIMES_X = 4  # a correct backward allocates nothing larger than x; a D x D matrix is D / rows x


class _Largest(TorchDispatchMode):
    """The largest tensor any op allocates (a new output, not a view), with the op's name."""

    def __init__(self):
        super().__init__()
        self.numel, self.shape, self.op = 0, (), ""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        outputs = out if isinstance(out, (tuple, list)) else (out,)
        for returned, value in zip(func._schema.returns, outputs):
            if isinstance(value, torch.Tensor) and returned.alias_info is None and \
                    value.numel() > self.numel:
                self.numel, self.shape = value.numel(), tuple(value.shape)
                self.op = func.overloadpacket.__name__
        return out


def check_no_square_matrix(function, spec: Spec, values: dict, row: int, unit: str) -> None:
    """Every input requiring grad, backward on rows of ``row`` elements (a ``unit``) allocates
    no tensor of more than TIMES_X times x's elements: none a ``row`` x ``row`` matrix."""
    inputs = make_inputs(values)
    forward = run_forward(function, spec, inputs)
    tensors = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    with _Largest() as log:
        run_backward(spec, forward.output, tensors, torch.ones_like(forward.output))
    x = values["x"]
    if log.numel <= TIMES_X * x.numel():
        return
    article, letter = ("an", "M") if unit == "group" else ("a", "D")
    raise GradingError(
        f"{spec.name}.backward allocates a tensor of shape {log.shape} ({log.op}), "
        f"{log.numel // x.numel()} times the elements of x: {article} {letter} x {letter} "
        f"matrix per {unit} ({letter} = {row}), where the contract asks for the vector-Jacobian "
        f"product without one; which sums over the {unit} can stand in for that matrix product?",
        mistake=f"{spec.name}/square-matrix-in-backward")
