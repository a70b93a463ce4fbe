"""Lesson 09's ProdOverDim where the product of the others is 0 or nearly: exactly 0 wherever it
holds a zero (a zero replaced by a tiny number, or a product through logs, leaves a remainder
allclose lets pass), and a tiny entry beside large ones, which is not a zero (a zero test with
a tolerance takes it for one)."""

import torch

from ...errors import GradingError
from .pattern_cases import gradient_for, listed


def short_slice(values: torch.Tensor) -> str:
    """A slice's entries to four significant digits, a zero as 0 whatever its sign."""
    return "[" + ", ".join(f"{v + 0.0:.4g}" for v in values.tolist()) + "]"


def slice_question(kind: str) -> str:
    """What to ask about a slice with ``kind`` zeros where the gradient is wrong."""
    if kind == "exactly one zero":
        return ("at the zero, the product of the other entries is not 0; which entries of "
                "this slice get a non-zero gradient, and does your backward give them one?")
    if kind == "no zero":
        return "with no zero in the slice, what is the product of the entries other than x_i?"
    return ("with two zeros or more, every product of the others holds a zero: what should "
            "each entry's gradient be?")


def check_exact_zeros_in_gradient(got: torch.Tensor, truth: torch.Tensor, where: str) -> None:
    """Exact where the contract says so: 0, not a tiny number, wherever the product of the
    others holds a zero (every entry of a slice with two zeros or more, every entry but the zero
    of a slice with one), which allclose alone lets pass."""
    zero = truth == 0
    if (got[zero] != 0).any():
        raise GradingError("ProdOverDim's gradient is close to 0 but not exactly 0 where the "
                           "product of the other entries holds a zero: the contract asks for "
                           "an exact gradient; a zero replaced by a tiny number (or a product "
                           "taken through logs) leaves a remainder there: does your backward take "
                           f"the product of the others from x as it is? {where}",
                           f"got {got[zero].tolist()} where 0 is exact",
                           mistake="ProdOverDim/not-exact-at-zeros")


# Slices with tiny non-zero entries beside large ones: none, one zero, none, and a subnormal
# entry (below torch.finfo(x.dtype).tiny, yet not 0); float32's own subnormal slice too.
# The first tiny entry is negative: a sign taken with a tolerance (x < -1e-6) loses it.
TINY_SLICES = torch.tensor([[-1e-13, 1e6, 1e7, 2.0],
                            [0.0, 1e-13, 3.0, -2.0],
                            [1e-300, 1e150, 2.0, 1e140],
                            [1e-310, 2.0, 3.0, -1.0]], dtype=torch.float64)
TINY_WHERE = ("(with x of shape (4, 4), dim=1, float64: rows [-1e-13, 1e6, 1e7, 2], "
              "[0, 1e-13, 3, -2], [1e-300, 1e150, 2, 1e140] and the subnormal [1e-310, 2, 3, "
              "-1], each gradient entry compared with the truth relative to its size)")
TINY_SLICES_32 = torch.tensor([[1e-40, 2.0, 3.0, -1.0]], dtype=torch.float32)
TINY_WHERE_32 = ("(with x = [[1e-40, 2, 3, -1]], dim=1, float32: 1e-40 is subnormal, below "
                 "torch.finfo(torch.float32).tiny, yet not 0; grad_output of ones)")


def check_tiny_entries(function, spec, device) -> None:
    """A tiny entry is not a zero: a zero test with a tolerance (x.abs() < 1e-12, isclose with
    0, or below torch.finfo(x.dtype).tiny, which takes subnormals for zeros) gives 0 where the
    product of the others holds the tiny entry and is not 0. allclose's atol hides such a
    product (1e-13 x 3 x 2), so the comparison here is relative; float64 and float32 alike."""
    _check_tiny(function, spec, TINY_SLICES.to(device), TINY_WHERE, rtol=1e-9)
    x = TINY_SLICES_32.to(device)
    _check_tiny(function, spec, x, TINY_WHERE_32, rtol=1e-4, grad_output=torch.ones_like(x[:, 0]))


def _check_tiny(function, spec, x, where, rtol, grad_output=None) -> None:
    got, truth, grad_output = gradient_for(function, spec, {"x": x, "dim": 1},
                                           grad_output=grad_output)
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return  # graded_case names a missing or mis-shaped gradient
    got = got.to(truth.dtype)
    wrong = ~torch.isclose(got, truth, rtol=rtol, atol=0).all(-1)
    if not wrong.any():
        return
    details = f"got {listed(got, truth)}\nexpected {listed(truth, got)}"
    as_zero = torch.where(x.abs() < 1e-12, torch.zeros_like(x), x)
    zeroed = grad_output.unsqueeze(1) * torch.stack(
        [torch.cat([row[:c], row[c + 1:]]).prod() for row in as_zero for c in range(4)]
    ).reshape(x.shape)
    if torch.isclose(got[wrong], zeroed[wrong], rtol=rtol, atol=0).all():
        raise GradingError("ProdOverDim's gradient treats a tiny entry as a zero: it is 0 where "
                           "the product of the other entries is tiny but not 0; only an exact "
                           "0 is a zero (does your zero test have a tolerance, or compare with "
                           f"torch.finfo(x.dtype).tiny, which subnormals lie below?) {where}",
                           details,
                           mistake="ProdOverDim/tiny-entry-as-zero")
    raise GradingError("ProdOverDim's gradient is wrong on a slice with a tiny non-zero entry "
                       f"beside others {where}", details)
