"""ClipGradientNorm in float32 and float16, at the edges of the rows its contract covers: in
float32 (as in float64) rows whose squared norm is a normal number of the dtype; in float16, for
max_norm from 0.1 to 2, rows of norm up to 1e4 * max_norm, whose squares may overflow float16
(300 ** 2 = 90000 > 65504). Within that range the factor max_norm / norm (>= 1e-4), the product
grad_output * max_norm (<= 4e4) and grad_output / norm are all float16 numbers, so any order of
the steps works; what fails is a norm whose squares are added up in float16."""

import torch

from ...checks import case
from ...errors import GradingError
from ...exercise import sample
from .surgery_checks import surgery_case

# (dtype, max_norm, rows, what the case says): rows of 16 entries, zeros past those given
_CASES = (
    (torch.float32, 3e-19, ([2e-19] * 4, [1.2e-19, 1.6e-19], [0.0]),
     "rows of norm 4e-19 and 2e-19 (squared norms 1.6e-37 and 4e-38, float32's smallest "
     "normal being 1.2e-38)"),
    (torch.float32, 1.0, ([1e19] * 3, [3.0, 4.0], [0.0]),
     "a row of norm 1.7e19 (squared norm 3e38, below float32's largest 3.4e38)"),
    (torch.float16, 1.0, ([300.0] * 16, [3000.0, 4000.0], [0.3] * 16, [3e-4] * 16, [0.0]),
     "rows of norm 1200, 5000, 1.2 and 1.2e-3"),
    (torch.float16, 2.0, ([12000.0, 16000.0], [0.6, 0.8], [30.0] * 16, [0.0]),
     "rows of norm 20000 (1e4 * max_norm), 1 and 120"),
    (torch.float16, 0.1, ([600.0, 800.0], [0.03, 0.04], [0.3] * 16, [0.0]),
     "rows of norm 1000 (1e4 * max_norm), 0.05 and 1.2"),
)


def _rows(rows, dtype, device) -> torch.Tensor:
    grad = torch.zeros((len(rows), 16), dtype=torch.float64)
    for i, row in enumerate(rows):
        grad[i, :len(row)] = torch.tensor(row, dtype=torch.float64)
    return grad.to(dtype).to(device)


def _clipped(grad: torch.Tensor, norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    return torch.where(norms > max_norm, grad * (max_norm / norms), grad)


def check_dtype_edges(function, spec, device) -> None:
    """Each case's rows against the float64 clipping of the same (rounded) values, to the
    dtype's rounding; a float16 answer that sums its squares in float16 is named."""
    for dtype, max_norm, rows, what in _CASES:
        with case(f"a {str(dtype).removeprefix('torch.')} grad_output of shape ({len(rows)}, "
                  f"16), max_norm={max_norm:g}, {what}"):
            grad_output = _rows(rows, dtype, device)
            _, backward = surgery_case(function, spec, sample(grad_output.shape, device, seed=42,
                                                              dtype=dtype),
                                       max_norm, grad_output.clone())
            got = backward.grads[0]
            exact = grad_output.double()
            expected = _clipped(exact, torch.linalg.vector_norm(exact, dim=-1, keepdim=True),
                                max_norm)
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                continue  # surgery_case and the float64 cases name a missing or odd gradient
            rtol = 5e-3 if dtype == torch.float16 else 1e-5
            tiny = torch.finfo(dtype).tiny * torch.finfo(dtype).eps  # the smallest subnormal
            scale = torch.linalg.vector_norm(expected, dim=-1, keepdim=True)  # each row's own
            close = (got.double() - expected).abs() <= rtol * scale + tiny
            if close.all():
                continue
            if dtype == torch.float16:
                squares = (grad_output * grad_output).sum(-1, keepdim=True)
                naive = _clipped(grad_output, squares.sqrt(), max_norm).double()
                if torch.allclose(got.double(), naive, rtol=1e-2, atol=1e-7, equal_nan=True):
                    raise GradingError(
                        "ClipGradientNorm sums each row's squares in float16: 300 ** 2 = 90000 "
                        "overflows float16 (its largest is 65504), so a row of norm 1200 comes "
                        "back as zeros (max_norm / inf). The contract covers float16 rows of "
                        "norm up to 1e4 * max_norm: in which dtype can their squares be added "
                        "up?",
                        mistake="ClipGradientNorm/float16-squares")
            row = int((~close).any(-1).nonzero()[0])
            got_norm = torch.linalg.vector_norm(got[row].double()).item()
            want = torch.linalg.vector_norm(expected[row]).item()
            raise GradingError(
                f"ClipGradientNorm brings a {str(dtype).removeprefix('torch.')} row of norm "
                f"{torch.linalg.vector_norm(exact[row]).item():.3g} to norm {got_norm:.3g}, not "
                f"{want:.3g} (max_norm={max_norm:g}): the contract covers every row whose "
                + ("norm is up to 1e4 * max_norm, for max_norm from 0.1 to 2"
                   if dtype == torch.float16 else
                   "squared norm is a normal float32 number")
                + ". Which step of yours leaves the dtype's range?",
                mistake="ClipGradientNorm/dtype-range")
