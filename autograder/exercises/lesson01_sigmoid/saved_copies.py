"""Lesson 01: a saved tensor of its own that holds the output's values, named as what it is: a
copy of y (y.clone(), y.contiguous() of a strided y, y computed again) or y in a wider dtype
(y computed in float64 for a float32 x), rather than as "a tensor of its own"."""

import torch


def copy_of_output(saved, output) -> str:
    """Words for ``saved`` (a ``SavedTensor``) when it is new memory holding exactly the values
    of ``output``, forward's y (in y's dtype once cast back); '' otherwise. Only where y has an
    entry of ordinary size, neither about 0 nor +-1, so that a derivative or mask that rounds
    to y on tail values (y * (1 - y) at y = 1e-300, sign(y) at y = 1) is not taken for a copy."""
    tensor = getattr(saved, "tensor", None)
    if (saved.role != "intermediate" or not isinstance(output, torch.Tensor)
            or not isinstance(tensor, torch.Tensor) or not tensor.dtype.is_floating_point
            or tuple(tensor.shape) != tuple(output.shape) or tensor.device != output.device):
        return ""
    y, copy = output.detach(), tensor.detach()
    ordinary = (y.abs() > 1e-3) & (y.abs() != 1) & torch.isfinite(y)
    if not bool(ordinary.any()) or not torch.equal(copy.to(y.dtype), y):
        return ""
    size = copy.element_size()
    if copy.dtype != y.dtype:
        return (f"a {str(copy.dtype).removeprefix('torch.')} copy of its output y (y's values, "
                f"for a {str(y.dtype).removeprefix('torch.')} y: {size} bytes an element, all "
                "of it new)")
    return (f"a copy of its output y (y's values in new memory, {size} bytes an element: "
            "y.clone(), y.contiguous() of a strided y, or y computed again)")


def derivative_of_output(saved, output, derivative, words: str) -> str:
    """Words for ``saved`` when it is new memory holding ``derivative(y)`` for forward's y (to
    a few ulps, where y has an entry of ordinary size); '' otherwise. ``words``: the formula."""
    tensor = getattr(saved, "tensor", None)
    if (saved.role != "intermediate" or not isinstance(output, torch.Tensor)
            or not isinstance(tensor, torch.Tensor) or not tensor.dtype.is_floating_point
            or tuple(tensor.shape) != tuple(output.shape) or tensor.device != output.device):
        return ""
    y = output.detach().double()
    ordinary = (y.abs() > 1e-3) & (y.abs() < 1e3) & ((1 - y).abs() > 1e-3)
    if not bool(ordinary.any()):
        return ""
    want = derivative(y)[ordinary]
    got = tensor.detach().double()[ordinary]
    eps = torch.finfo(tensor.dtype).eps
    if not torch.allclose(got, want, rtol=64 * eps, atol=0):
        return ""
    return (f"the derivative {words}, computed in forward ({tensor.element_size()} bytes an "
            "element, all of it new)")
