"""ClipGradientNorm in float32 and float16, at the edges of the rows its contract covers: rows
whose squared norms are inside the dtype's range (float32: from 1.2e-38 to 3.4e38; float16:
from 6.1e-5 to 65504), at max_norm inside its range (1e-3 to 1e3). Within that range the
quotient grad_output / norm (at most 1) and the factor max_norm / norm stay float16 numbers at
these max_norm; the product grad_output * max_norm never overflows here, but at max_norm 1e-3 a
wide row's small entries times max_norm fall far below the normal numbers (UNDERFLOW_CASES);
max_norm_ends tries the ends of max_norm's range. A row of a model's width (1024) whose
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
# graded after max_norm's ends (which name an order that overflows first): a row of a model's
# width with entries of two sizes, which times max_norm fall below float16's normal numbers
# (5e-7 keeps 3 bits, 2e-8 rounds to 0), though the clipped row's own entries keep theirs:
# multiplying by max_norm before dividing by the norm loses them
UNDERFLOW_CASES = (
    (torch.float16, 1e-3, ([5e-4, 2e-5] * 512, [0.3] * 16, [0.0]),
     "rows of norm 0.011 (1024 entries of 5e-4 and 2e-5) and 1.2"),
)


def _rows(rows, dtype, device) -> torch.Tensor:
    grad = torch.zeros((len(rows), max(16, *map(len, rows))), dtype=torch.float64)
    for i, row in enumerate(rows):
        grad[i, :len(row)] = torch.tensor(row, dtype=torch.float64)
    return grad.to(dtype).to(device)


def _clipped(grad: torch.Tensor, norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    return torch.where(norms > max_norm, (grad / norms) * max_norm, grad)


def check_dtype_edges(function, spec, device, cases=_CASES) -> None:
    """Each case's rows against the float64 clipping of the same (rounded) values, to the
    dtype's rounding."""
    for dtype, max_norm, rows, what in cases:
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
            norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)
            product = torch.where(norms > max_norm, grad_output * max_norm / norms, grad_output)
            products = (grad_output[row] * max_norm).double().abs()
            if torch.allclose(got[row].double(), product[row].double(), rtol=2e-3, atol=tiny) \
                    and products[products > 0].min() < torch.finfo(dtype).tiny:
                raise GradingError(
                    f"ClipGradientNorm multiplies by max_norm before dividing by the norm: at "
                    f"max_norm={max_norm:g} its {kind} row of norm "
                    f"{torch.linalg.vector_norm(exact[row]).item():.2g} comes back at norm "
                    f"{got_norm:.4g}, not {want:.4g}, as grad_output * max_norm is "
                    f"{(exact[row] * max_norm).abs()[exact[row] != 0].min().item():.2g} for the "
                    f"row's smallest entries, below {kind}'s normal numbers, where it keeps a "
                    "few bits or rounds to 0. max_norm runs from 1e-3 to 1e3: in which order do "
                    "your steps keep what the result depends on?",
                    mistake="ClipGradientNorm/max-norm-product-underflows")
            squares = exact[row][exact[row] != 0].square()
            subnormal = (f" (its entries' squares go down to {squares.min().item():.2g}, below "
                         f"{kind}'s normal numbers: where are they summed?)"
                         if squares.numel() and squares.min() < torch.finfo(dtype).tiny else "")
            raise GradingError(
                f"ClipGradientNorm brings a {str(dtype).removeprefix('torch.')} row of norm "
                f"{torch.linalg.vector_norm(exact[row]).item():.3g} to norm {got_norm:.3g}, not "
                f"{want:.3g} (max_norm={max_norm:g}): the contract covers every row whose "
                + f"squared norm is a normal {str(dtype).removeprefix('torch.')} number"
                + f". Which step of yours overflows, or falls below the dtype's normal numbers"
                + f"{subnormal}?",
                mistake="ClipGradientNorm/dtype-range")
