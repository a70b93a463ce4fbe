"""ClipGradientNorm in float32 and float16, at the edges of the rows its contract covers: rows
whose squared norms are inside the dtype's range (float32: from 1.2e-38 to 3.4e38; float16:
from 6.1e-5 to 65504), at max_norm inside its range (1e-3 to 1e3). Within that range the
quotient grad_output / norm (at most 1), the factor max_norm / norm and the product
grad_output * max_norm stay float16 numbers at these max_norm, so any order of the steps works
here; max_norm_ends tries the ends of max_norm's range. A row of a model's width (1024) whose
entries' squares fall below float16's normal numbers, though its squared norm does not, tells a
sum of squares accumulated in float16 from one accumulated wider (as torch.linalg.vector_norm
does)."""

import torch

from ...checks import case
from ...errors import GradingError
from ...exercise import sample
from .surgery_checks import surgery_case

# (dtype, max_norm, rows, what the case says): rows of 16 entries (or the longest row's),
# zeros past those given
_CASES = (
    (torch.float32, 3e-3, ([2e-19] * 4, [1.2e-19, 1.6e-19], [2e-3] * 4, [0.0]),
     "rows of norm 4e-19, 2e-19 and 4e-3 (squared norms 1.6e-37 and 4e-38, float32's smallest "
     "normal being 1.2e-38)"),
    (torch.float32, 1.0, ([1e19] * 3, [3.0, 4.0], [0.0]),
     "a row of norm 1.7e19 (squared norm 3e38, below float32's largest 3.4e38)"),
    (torch.float16, 1.0, ([63.0] * 16, [150.0, 200.0], [0.3] * 16, [2e-3] * 16, [0.0]),
     "rows of norm 252, 250, 1.2 and 8e-3 (squared norms 63504, 62500, 1.44 and 6.4e-5)"),
    (torch.float16, 2.0, ([120.0, 160.0], [0.6, 0.8], [30.0] * 16, [0.0]),
     "rows of norm 200, 1 and 120"),
    (torch.float16, 0.1, ([60.0, 80.0], [0.03, 0.04], [0.3] * 16, [0.0]),
     "rows of norm 100, 0.05 and 1.2"),
    (torch.float16, 1e-3, ([3e-4, -3e-4] * 512, [0.3] * 16, [0.0]),
     "rows of norm 9.6e-3 (1024 entries of 3e-4, squares 9e-8) and 1.2"),
)


def _rows(rows, dtype, device) -> torch.Tensor:
    grad = torch.zeros((len(rows), max(16, *map(len, rows))), dtype=torch.float64)
    for i, row in enumerate(rows):
        grad[i, :len(row)] = torch.tensor(row, dtype=torch.float64)
    return grad.to(dtype).to(device)


def _clipped(grad: torch.Tensor, norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    return torch.where(norms > max_norm, (grad / norms) * max_norm, grad)


def check_dtype_edges(function, spec, device) -> None:
    """Each case's rows against the float64 clipping of the same (rounded) values, to the
    dtype's rounding."""
    for dtype, max_norm, rows, what in _CASES:
        grad_output = _rows(rows, dtype, device)
        with case(f"a {str(dtype).removeprefix('torch.')} grad_output of shape "
                  f"{tuple(grad_output.shape)}, max_norm={max_norm:g}, {what}"):
            _, backward = surgery_case(function, spec, sample(grad_output.shape, device, seed=42,
                                                              dtype=dtype),
                                       max_norm, grad_output.clone())
            got = backward.grads[0]
            exact = grad_output.double()
            expected = _clipped(exact, torch.linalg.vector_norm(exact, dim=-1, keepdim=True),
                                max_norm)
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                continue  # surgery_case and the float64 cases name a missing or odd gradient
            # each entry to its own size: a float16 factor below the normal numbers keeps 7 bits
            rtol = 1e-2 if dtype == torch.float16 else 1e-5
            tiny = torch.finfo(dtype).tiny * torch.finfo(dtype).eps  # the smallest subnormal
            scale = torch.linalg.vector_norm(expected, dim=-1, keepdim=True)  # each row's own
            close = ((got.double() - expected).abs()
                     <= rtol * (expected.abs() + 1e-3 * scale) + tiny)
            if close.all():
                continue
            row = int((~close).any(-1).nonzero()[0])
            got_norm = torch.linalg.vector_norm(got[row].double()).item()
            want = torch.linalg.vector_norm(expected[row]).item()
            kind = str(dtype).removeprefix('torch.')
            squares = exact[row][exact[row] != 0].square()
            subnormal = (f" (its entries' squares go down to {squares.min().item():.2g}, below "
                         f"{kind}'s normal numbers: where are they summed?)"
                         if squares.numel() and squares.min() < torch.finfo(dtype).tiny else "")
            raise GradingError(
                f"ClipGradientNorm brings a {str(dtype).removeprefix('torch.')} row of norm "
                f"{torch.linalg.vector_norm(exact[row]).item():.3g} to norm {got_norm:.3g}, not "
                f"{want:.3g} (max_norm={max_norm:g}): the contract covers every row whose "
                + f"squared norm is a normal {str(dtype).removeprefix('torch.')} number"
                + f". Which step of yours leaves the dtype's range{subnormal}?",
                mistake="ClipGradientNorm/dtype-range")
