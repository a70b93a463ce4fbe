"""Both ends of ClipGradientNorm's max_norm range (1e-3 and 1e3, in float64, float32 and
float16, against rows whose squared norms are inside the dtype's range). A sound order (each row
divided by its norm, then times max_norm) stays in range at every end; grad_output * max_norm
overflows float16 at max_norm 1e3 (a row entry of 200 gives 2e5 > 65504), and norm / max_norm
overflows it at 1e-3 (a row of norm 250 gives 2.5e5), so the first gives inf and the second
zeros. In float64 and float32 no order leaves the range there."""

import torch

from ...checks import case
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .surgery_checks import surgery_case

# (dtype, max_norm, rows of grad_output (ClipGradientNorm), what the case says): rows at both
# ends of the squared norms each dtype holds (float16: 65504 and 6.1e-5), with max_norm at both
# ends of its range, 1e-3 and 1e3
_CLIP_CASES = (
    (torch.float64, 1e3, ([6e153, 8e153, 0.0], [0.0, 1e-153, 0.0], [1.0, 0.0, 2.0]),
     "rows of norm 1e154, 1e-153 and 2.2"),
    (torch.float64, 1e-3, ([6e153, 8e153, 0.0], [0.0, 1e-153, 0.0], [6e-3, 0.0, 8e-3]),
     "rows of norm 1e154, 1e-153 and 0.01"),
    (torch.float32, 1e3, ([1e19, 1e19, 1e19], [0.0, 2e-19, 0.0], [1.0, 0.0, 2.0]),
     "rows of norm 1.7e19, 2e-19 and 2.2"),
    (torch.float32, 1e-3, ([1e19, 1e19, 1e19], [0.0, 2e-19, 0.0], [6e-3, 0.0, 8e-3]),
     "rows of norm 1.7e19, 2e-19 and 0.01"),
    (torch.float16, 1e3, ([200.0, 0.0, 0.0], [150.0, 200.0, 0.0], [0.0, 8e-3, 0.0]),
     "rows of norm 200, 250 and 8e-3 (squared norms 4e4, 62500 and 6.4e-5)"),
    (torch.float16, 1e-3, ([150.0, 200.0, 0.0], [0.0, 8e-3, 0.0], [5e-3, 5e-3, 5e-3]),
     "rows of norm 250, 8e-3 and 8.7e-3 (squared norms 62500, 6.4e-5 and 7.5e-5)"),
)


def _scaled(rows: torch.Tensor, max_norm: float) -> torch.Tensor:
    """Each float64 row brought to norm max_norm if above it, computed as (row / norm) *
    max_norm: no step leaves range."""
    norms = torch.linalg.vector_norm(rows, dim=-1, keepdim=True)
    return torch.where(norms > max_norm, rows / norms.clamp(min=1e-300) * max_norm, rows)


def _name_end(name: str, unit: str, got, max_norm: float, dtype, norm: float, span: str):
    """The first line for a wrong answer at an end of max_norm: inf at the huge end (grad_output
    * max_norm overflowing), zeros at the tiny end (norm / max_norm overflowing). (A nan for
    zeros is a 0 / 0 the main battery names.)"""
    kind = str(dtype).removeprefix("torch.")
    if norm == 0:
        return
    if not torch.isfinite(got).all():
        raise GradingError(
            f"{name} multiplies by max_norm before dividing by the norm: at max_norm="
            f"{max_norm:g} its {unit} of norm {norm:.2g}, below max_norm and to pass unchanged, "
            f"comes back inf or nan, as grad_output * max_norm overflows {kind} (its largest is "
            f"{torch.finfo(dtype).max:.2g}). {span}: in which order do your steps stay in "
            "range?", mistake=f"{name}/max-norm-product-overflows")
    if max_norm < 1 and not got.any() and norm / max_norm > torch.finfo(dtype).max:
        raise GradingError(
            f"{name} divides by norm / max_norm, which overflows {kind} at max_norm="
            f"{max_norm:g}: its {unit} of norm {norm:.2g} comes back as zeros (x / inf), not at "
            f"norm max_norm: norm / max_norm is {norm / max_norm:.1g} there. {span}: which "
            f"quotient of yours leaves {kind}'s range, and which quotient could take its "
            "place and stay in it?",
            mistake=f"{name}/norm-ratio-overflows")


def check_clip_max_norm_ends(function, spec, device, cases=_CLIP_CASES) -> None:
    for dtype, max_norm, rows, what in cases:
        kind = str(dtype).removeprefix("torch.")
        with case(f"a {kind} grad_output of shape ({len(rows)}, 3), max_norm={max_norm:g}, "
                  f"{what}"):
            grad_output = torch.tensor(rows, dtype=dtype, device=device)
            _, backward = surgery_case(function, spec, sample(grad_output.shape, device, seed=44,
                                                              dtype=dtype),
                                       max_norm, grad_output.clone())
            got = backward.grads[0]
            expected = _scaled(grad_output.double(), max_norm)
            if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
                continue  # the float64 cases name a missing or odd gradient
            rtol = {torch.float64: 1e-9, torch.float32: 1e-5}.get(dtype, 5e-3)
            scale = expected.abs().amax(dim=-1, keepdim=True)
            close = (got.double() - expected).abs() <= rtol * scale
            if close.all():
                continue
            row = int((~close).any(-1).nonzero()[0])
            norm = torch.linalg.vector_norm(grad_output[row].double()).item()
            _name_end("ClipGradientNorm", "row", got[row], max_norm, dtype, norm,
                      span="max_norm runs from 1e-3 to 1e3")
            diagnose_gradient("x", got.double(), expected, rtol=rtol, atol=0)
