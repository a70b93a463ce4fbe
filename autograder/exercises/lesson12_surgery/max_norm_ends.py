"""Both ends of max_norm's range, for ClipGradientNorm (1e-3 and 1e3, in float64, float32 and
float16, against rows whose squared norms are inside the dtype's range) and
PerSampleClippedLinear (max_norm as large or as small as float64 and float32 hold: 1e300 and
1e-300, 1e31 and 1e-30). A sound order (each row divided by its norm, then times max_norm)
stays in range at every end; grad_output * max_norm overflows float16 at max_norm 1e3 (a row
entry of 200 gives 2e5 > 65504), and norm / max_norm overflows it at 1e-3 (a row of norm 250
gives 2.5e5), so the first gives inf and the second zeros. In float64 and float32 no order
leaves the range for ClipGradientNorm there; for PerSampleClippedLinear the huge and tiny
max_norm do (grad_output * max_norm, norm / max_norm, and max_norm times an entry of 5e-150
underflowing)."""

import torch

from ...checks import case, make_inputs, run_backward, run_forward
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


def _name_end(name: str, unit: str, got, max_norm: float, dtype, norm: float,
              span: str = "max_norm may be any positive float"):
    """The first line for a wrong answer at an end of max_norm: inf at the huge end, zeros (or
    a wrong norm) at the tiny end: norm / max_norm overflowing, or else a product such as
    grad_output * max_norm underflowing. (A nan for zeros is a 0 / 0 the main battery names.)"""
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
            f"norm max_norm. {span}: which quotient of yours leaves {kind}'s range, and which "
            f"one stays in it (grad_output / norm is at most 1, max_norm / norm = "
            f"{max_norm / norm:.1g})?",
            mistake=f"{name}/norm-ratio-overflows")
    if max_norm < 1 and norm > max_norm and span.startswith("max_norm may be any"):
        top = got.double().abs().max()  # scaled: the squares of 6e-301 underflow
        got_norm = (top * torch.linalg.vector_norm(got.double() / top)).item() if top else 0.0
        raise underflow_error(name, f"a {unit} of norm {got_norm:.3g}",
                              f"a {kind} {unit} of norm {norm:.2g}",
                              max_norm, "max_norm / norm", max_norm / norm, dtype)


def underflow_error(name: str, value: str, subject: str, max_norm: float, factor_name: str,
                    factor: float, dtype) -> GradingError:
    """The first line for an answer that leaves the dtype's range inside the contract's range
    at a tiny max_norm (grad_output * max_norm underflowing, say), for both exercises."""
    kind = str(dtype).removeprefix("torch.")
    return GradingError(
        f"{name} gives {value}, not {max_norm:g}, for {subject} at max_norm={max_norm:g}: its "
        f"factor {factor_name} = {factor:.3g}, and {factor_name} times each entry is a normal "
        f"{kind} number, inside the contract's range, yet a step of yours leaves {kind}'s range "
        "(a product such as max_norm * grad_output underflows to 0, or to a subnormal number "
        "that has lost digits). In which order do your steps stay in range?",
        mistake=f"{name}/underflows-inside-range")


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


def check_per_sample_max_norm_ends(function, spec, device, cases=_PS_CASES) -> None:
    for dtype, max_norm, grads, xs in cases:
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
        if norms[n] == 0:  # its columns hold others' terms: any nan is a 0 / 0 of its own
            if not torch.isfinite(got).all():
                _name_end("PerSampleClippedLinear", "sample's gradient", got, max_norm, dtype, 0.0)
            continue
        columns = x[n] != 0
        part = got[:, columns]
        if not torch.isfinite(part).all() or not part.any():
            _name_end("PerSampleClippedLinear", "sample's gradient", part, max_norm, dtype,
                      norms[n].item())
    diagnose_gradient("weight", got.double(), expected, rtol=rtol, atol=0)
