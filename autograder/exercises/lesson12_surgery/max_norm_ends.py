"""Both ends of "max_norm any positive float", in float64 and float32, for ClipGradientNorm and
PerSampleClippedLinear: a huge max_norm (1e300; 1e30 or 1e31 in float32) against rows or
samples below it, which must pass unchanged, and a tiny max_norm (1e-300; 1e-30) against rows
or samples of norm 5e9 or 5e8, which must come out at norm max_norm. Every step of a sound order
stays in range there (the factor max_norm / norm is 2e-310 or 2e-39, a subnormal number that
still carries 13 or 6 digits); grad_output * max_norm overflows at the huge end, and
norm / max_norm (5e309, 5e38) at the tiny end, so the first gives inf and the second zeros."""

import torch

from ...checks import case, make_inputs, run_backward, run_forward
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .surgery_checks import surgery_case

# (dtype, max_norm, rows of grad_output (ClipGradientNorm), what the case says)
_CLIP_CASES = (
    (torch.float64, 1e300, ([3e10, 4e10, 0.0], [1.0, 0.0, 2.0]), "rows of norm 5e10 and 2.2"),
    (torch.float32, 1e30, ([3e9, 4e9, 0.0], [1.0, 0.0, 2.0]), "rows of norm 5e9 and 2.2"),
    (torch.float64, 1e-300, ([3e10, 4e10, 0.0], [0.0, 3e9, 4e9]), "rows of norm 5e10 and 5e9"),
    (torch.float32, 1e-30, ([3e8, 4e8, 0.0], [0.0, 6e8, 8e8]), "rows of norm 5e8 and 1e9"),
)
# (dtype, max_norm, grad_output, x): x's rows orthogonal, so each sample's term stands alone
_PS_CASES = (
    (torch.float64, 1e300, ([3e10, 4e10], [1.0, -2.0]), ([1.0, 0.0, 2.0], [0.0, 3.0, 0.0])),
    (torch.float32, 1e31, ([6e7, 8e7], [1.0, -2.0]), ([1.0, 0.0, 2.0], [0.0, 3.0, 0.0])),
    (torch.float64, 1e-300, ([3e4, 4e4], [0.0, 5e3]), ([1e5, 0.0, 0.0], [0.0, 4e5, 3e5])),
    (torch.float32, 1e-30, ([3e3, 4e3], [0.0, 5e2]), ([1e5, 0.0, 0.0], [0.0, 4e5, 3e5])),
)


def _scaled(terms: torch.Tensor, max_norm: float) -> torch.Tensor:
    """Each term (rows of a 2-D, or the (out, in) blocks of a 3-D float64 tensor) brought to
    norm max_norm if above it, computed as (term / norm) * max_norm: no step leaves range."""
    dims = tuple(range(1, terms.dim()))
    norms = torch.linalg.vector_norm(terms, dim=dims, keepdim=True)
    return torch.where(norms > max_norm, terms / norms.clamp(min=1e-300) * max_norm, terms)


def _name_end(name: str, unit: str, got, max_norm: float, dtype, norm: float):
    """The first line for a wrong answer at an end of max_norm: inf at the huge end, zeros (or
    a wrong norm) at the tiny end."""
    kind = str(dtype).removeprefix("torch.")
    if not torch.isfinite(got).all():
        raise GradingError(
            f"{name} multiplies by max_norm before dividing by the norm: at max_norm="
            f"{max_norm:g} its {unit} of norm {norm:.2g}, below max_norm and to pass unchanged, "
            f"comes back inf or nan, as grad_output * max_norm overflows {kind} (its largest is "
            f"{torch.finfo(dtype).max:.2g}). max_norm may be any positive float: in which order "
            "do your steps stay in range?", mistake=f"{name}/max-norm-product-overflows")
    if max_norm < 1 and not got.any():
        raise GradingError(
            f"{name} divides by norm / max_norm, which overflows {kind} at max_norm="
            f"{max_norm:g}: its {unit} of norm {norm:.2g} comes back as zeros (x / inf), not at "
            f"norm max_norm. max_norm may be any positive float: which quotient of yours leaves "
            f"{kind}'s range, and which one stays in it (max_norm / norm = "
            f"{max_norm / norm:.1g} is a subnormal number, still accurate)?",
            mistake=f"{name}/norm-ratio-overflows")


def check_clip_max_norm_ends(function, spec, device) -> None:
    for dtype, max_norm, rows, what in _CLIP_CASES:
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
            rtol = 1e-9 if dtype == torch.float64 else 1e-5
            scale = torch.linalg.vector_norm(expected, dim=-1, keepdim=True)
            close = (got.double() - expected).abs() <= rtol * scale
            if close.all():
                continue
            row = int((~close).any(-1).nonzero()[0])
            norm = torch.linalg.vector_norm(grad_output[row].double()).item()
            _name_end("ClipGradientNorm", "row", got[row], max_norm, dtype, norm)
            diagnose_gradient("x", got.double(), expected, rtol=rtol, atol=0)


def check_per_sample_max_norm_ends(function, spec, device) -> None:
    for dtype, max_norm, grads, xs in _PS_CASES:
        kind = str(dtype).removeprefix("torch.")
        grad_output = torch.tensor(grads, dtype=dtype, device=device)
        x = torch.tensor(xs, dtype=dtype, device=device)
        norms = (torch.linalg.vector_norm(grad_output.double(), dim=1)
                 * torch.linalg.vector_norm(x.double(), dim=1))
        with case(f"{kind} x of shape (2, 3), weight of shape (2, 3), max_norm={max_norm:g}, "
                  f"samples whose gradients have norms {norms[0].item():.2g} and "
                  f"{norms[1].item():.2g}"):
            values = {"x": x, "weight": sample((2, 3), device, seed=61, dtype=dtype),
                      "max_norm": max_norm}
            for wanted in ({"weight"}, True):  # weight alone, then x too: either path
                inputs = make_inputs(values, requires_grad=wanted)
                output = run_forward(function, spec, inputs).output
                got = run_backward(spec, output, inputs, grad_output.clone()).grads[1]
                _check_sample_ends(got, grad_output, x, norms, max_norm, dtype)


def _check_sample_ends(got, grad_output, x, norms, max_norm, dtype) -> None:
    """grad_weight against the definition at an end of max_norm, and the overflow named."""
    terms = torch.einsum("no,ni->noi", grad_output.double(), x.double())
    expected = _scaled(terms, max_norm).sum(0)
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
        return  # the float64 cases name a missing or odd gradient
    rtol = 1e-9 if dtype == torch.float64 else 1e-5
    if ((got.double() - expected).abs() <= rtol * expected.abs().max()).all():
        return
    # x's rows are orthogonal: sample n's term is x_n's columns of grad_weight
    for n in range(2):
        columns = x[n] != 0
        part = got[:, columns]
        if not torch.isfinite(part).all() or not part.any():
            _name_end("PerSampleClippedLinear", "sample's gradient", part, max_norm, dtype,
                      norms[n].item())
    diagnose_gradient("weight", got.double(), expected, rtol=rtol, atol=0)
