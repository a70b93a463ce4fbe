"""PerSampleClippedLinear at the ends of its contract: samples of tiny norm (a clamp or an eps
on the norm scales them), max_norm far below any guard a learner might put on the norm (down
to where float64's entries of 1e-60 take it), and the edge of the range clause (s_n times each
entry of the sample's rows a normal number), in both dtypes. (A float32 layer 2048 wide with
every entry 1e8, where the product of a sample's two squared norms overflows, is no model's
and is not tried.)"""

import torch

from ...checks import case, make_inputs, run_backward, run_forward
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from .max_norm_ends import underflow_error
from .surgery_checks import clamp_guard


def _backward(function, spec, values, grad_output, requires_grad=True):
    inputs = make_inputs(values, requires_grad=requires_grad)
    output = run_forward(function, spec, inputs).output
    return run_backward(spec, output, inputs, grad_output.clone()).grads[1]


def check_tiny_samples(function, spec, expected_gradients, device) -> None:
    """Samples whose gradients have norms 5e-13 and 4e-13, non-zero and below max_norm, keep
    factor 1: a clamp of the norm at 1e-12 (F.normalize's) or an eps scales them. x's rows are
    orthogonal, so grad_weight[n, n] is sample n's term alone (n = 0, 1)."""
    x = torch.tensor([[5e-7, 0.0, 0.0], [0.0, 4e-7, 0.0], [0.0, 0.0, 2.0]], dtype=torch.float64,
                     device=device)
    grad_output = torch.tensor([[1e-6, 0.0], [0.0, 1e-6], [3.0, 4.0]], dtype=torch.float64,
                               device=device)
    values = {"x": x, "weight": sample((2, 3), device, seed=60), "max_norm": 1.0}
    with case("x of shape (3, 3), weight of shape (2, 3), max_norm=1, samples whose gradients "
              "have norms 5e-13, 4e-13 and 10"):
        got = _backward(function, spec, values, grad_output)
        if isinstance(got, torch.Tensor) and got.shape == (2, 3):
            for n, norm in ((0, "5e-13"), (1, "4e-13")):
                factor = (got[n, n] / (grad_output[n, n] * x[n, n])).item()
                if not abs(factor - 1) <= 1e-9:
                    raise GradingError(
                        f"PerSampleClippedLinear changed a sample whose gradient has norm "
                        f"{norm}, below max_norm=1: its factor is {factor:.3g}, not 1. A clamp "
                        "or an eps on the norm (as F.normalize's 1e-12) scales every sample "
                        "below it; a sample at or below max_norm keeps factor 1",
                        mistake="PerSampleClippedLinear/changes-tiny-sample")
        diagnose_gradient("weight", got,
                          expected_gradients(x, values["weight"], 1.0, grad_output)["weight"])
    # max_norm below any guard on the norm: 1e-14 against a sample of norm 5e-13, then the
    # float64 end, entries of 2e-60 and 5e-60 (a norm of 1e-119) against max_norm 1e-120
    check_max_norm_end(function, spec, expected_gradients, values, grad_output, 1e-14, "5e-13")
    x_end = torch.tensor([[2e-60, 0.0, 0.0], [0.0, 0.0, 2.0]], dtype=torch.float64,
                         device=device)
    g_end = torch.tensor([[5e-60, 0.0], [3.0, 4.0]], dtype=torch.float64, device=device)
    check_max_norm_end(function, spec, expected_gradients,
                       {**values, "x": x_end}, g_end, 1e-120, "1e-119")


def check_max_norm_end(function, spec, expected_gradients, values, grad_output, max_norm,
                       norm_text) -> None:
    """Sample 0's term alone sits at grad_weight[0, 0] (x's rows orthogonal), its norm there
    brought to max_norm exactly; a guard on the norm (a clamp, a floor, an eps) shows as the
    norm it divided by instead, which the message gives."""
    x = values["x"]
    shape = f"({x.shape[0]}, {x.shape[1]})"
    with case(f"x of shape {shape}, weight of shape (2, 3), max_norm={max_norm:g}, sample 0's "
              f"gradient of norm {norm_text} (entries {x[0, 0].item():g} in x, "
              f"{grad_output[0, 0].item():g} in grad_output)"):
        got = _backward(function, spec, {**values, "max_norm": max_norm}, grad_output)
        if isinstance(got, torch.Tensor) and got.shape == (2, 3) and torch.isfinite(got).all():
            norm = abs(got[0, 0].item())  # s_0 g_0 x_0^T: one entry, the other samples' 0 there
            if not abs(norm / max_norm - 1) <= 1e-9:
                guard = clamp_guard(max_norm, abs((grad_output[0, 0] * x[0, 0]).item()), norm)
                raise GradingError(
                    f"PerSampleClippedLinear brings a sample whose gradient has norm "
                    f"{norm_text} to norm {norm:.3g}, not to max_norm={max_norm:g}{guard}: "
                    "max_norm may be any positive float, and a clamp, a floor or an eps on the "
                    "norm changes the factor of every sample whose norm lies below it. The "
                    "factor is min(1, max_norm / norm), with the norm itself",
                    mistake="PerSampleClippedLinear/clamps-norm")
        diagnose_gradient("weight", got, expected_gradients(x, values["weight"], max_norm,
                                                            grad_output)["weight"])


# The range clause at its edge: s_n times every non-zero entry of the sample's rows a normal
# number, and no more. (dtype, max_norm, grad_output, x, what): x's rows orthogonal, so
# grad_weight[n, n] is sample n's term alone, and each is exactly max_norm (g_n x_n / norm = 1)
_RANGE_CASES = (
    (torch.float64, 5e-248, ([1e-60, 0.0], [0.0, 1e60]), ([1e60, 0.0], [0.0, 1e-60]),
     "tiny grad_output with huge x, and the mirror"),
    (torch.float32, 3e-30, ([1e-8, 0.0], [0.0, 1e8]), ([1e8, 0.0], [0.0, 1e-8]),
     "tiny grad_output with huge x, and the mirror"),
    (torch.float64, 1e-300, ([1e-60, 0.0], [0.0, 1e-60]), ([1e-60, 0.0], [0.0, 1e-60]),
     "both tiny"),
    (torch.float32, 1e-36, ([1e-8, 0.0], [0.0, 1e-8]), ([1e-8, 0.0], [0.0, 1e-8]),
     "both tiny"),
    # squared norms 1e20, inside float32; their product, 1e40, is not
    (torch.float32, 1.0, ([1e10, 0.0], [0.0, 1e10]), ([1e10, 0.0], [0.0, 1e10]),
     "rows of norm 1e10 in both (squared norms 1e20)"),
)


def check_range_edges(function, spec, device) -> None:
    """Each sample at the edge of the contract's range (s_n times its smallest entry 2 to 3
    times the dtype's tiny, or well above it with both factors tiny): scaling either factor's
    row by s_n, or dividing max_norm by one norm then the other, stays in range there;
    max_norm * grad_output (or a split of the factor that starts with it) underflows."""
    for dtype, max_norm, grads, xs, what in _RANGE_CASES:
        kind = str(dtype).removeprefix("torch.")
        grad_output = torch.tensor(grads, dtype=dtype, device=device)
        x = torch.tensor(xs, dtype=dtype, device=device)
        values = {"x": x, "weight": sample((2, 2), device, seed=62, dtype=dtype),
                  "max_norm": max_norm}
        with case(f"{kind} x and grad_output of shape (2, 2), max_norm={max_norm:g}, {what}"):
            for wanted in ({"weight"}, True):  # weight alone, then x too: either path
                got = _backward(function, spec, values, grad_output, requires_grad=wanted)
                if not isinstance(got, torch.Tensor) or got.shape != (2, 2):
                    return  # the float64 cases name a missing or misshapen gradient
                _name_range_edge(got, grad_output, x, max_norm, dtype)
                expected = torch.diag(torch.tensor([max_norm, max_norm], dtype=torch.float64))
                rtol = 1e-9 if dtype == torch.float64 else 1e-5
                diagnose_gradient("weight", got.double(), expected.to(device), rtol=rtol, atol=0)


def _name_range_edge(got, grad_output, x, max_norm, dtype) -> None:
    rtol = 1e-9 if dtype == torch.float64 else 1e-5
    for n in range(2):
        value = got[n, n].item()
        if abs(value / max_norm - 1) <= rtol:
            continue
        g, xn = grad_output[n, n].item(), x[n, n].item()
        factor = max_norm / abs(g * xn)
        kind = str(dtype).removeprefix("torch.")
        squares = grad_output[n].square().sum() * x[n].square().sum()  # in the dtype
        if value == 0 and not torch.isfinite(squares) and \
                torch.isfinite(grad_output[n].square().sum() + x[n].square().sum()):
            raise GradingError(
                f"PerSampleClippedLinear gives 0, not {max_norm:g}, for a {kind} sample with "
                f"entry {g:g} in grad_output and {xn:g} in x: each squared norm ({g * g:.2g}, "
                f"{xn * xn:.2g}) is inside {kind}'s range, their product "
                f"({g * g * xn * xn:.2g}) is not (its largest is {torch.finfo(dtype).max:.2g}), "
                "and a norm of inf gives factor 0, as here. Of which numbers do you take the "
                "square root, and in which order?",
                mistake="PerSampleClippedLinear/squared-norms-product-overflows")
        raise underflow_error("PerSampleClippedLinear", f"{value:.3g}",
                              f"a {kind} sample with entry {g:g} in grad_output and {xn:g} in x",
                              max_norm, "s_n", factor, dtype)


# samples whose gradients' norms lie just above max_norm, as multiples of it
THRESHOLD_SLACKS = {torch.float64: (1 + 2 ** -40, 1.0005, 1.005),
                    torch.float32: (1 + 2 ** -16, 1.0005, 1.005)}


def check_threshold(function, spec, expected_gradients, device) -> None:
    """Every sample whose gradient's norm is above max_norm is clipped, however slightly above:
    x = the identity, so grad_weight's column n is s_n g_n, with g_n of norm max_norm * f for
    f = 1 (at max_norm: kept) and f = 1 + 2^-40 (float32: 1 + 2^-16), 1.0005, 1.005."""
    for dtype, slacks in THRESHOLD_SLACKS.items():
        factors = (1.0,) + slacks
        for max_norm in (1.0, 0.2, 3.0):
            grad_output = torch.tensor([[0.6 * max_norm * f, 0.8 * max_norm * f]
                                        for f in factors], dtype=torch.float64).to(device, dtype)
            n = len(factors)
            values = {"x": torch.eye(n, dtype=dtype, device=device),
                      "weight": sample((2, n), device, seed=63, dtype=dtype), "max_norm": max_norm}
            with case(f"{str(dtype).removeprefix('torch.')} x of shape ({n}, {n}) (the identity), "
                      f"weight of shape (2, {n}), max_norm={max_norm:g}, samples whose gradients' "
                      "norms are just above max_norm"):
                got = _backward(function, spec, values, grad_output)
                expected = expected_gradients(values["x"].double(), values["weight"].double(),
                                              max_norm, grad_output.double())["weight"]
                if not isinstance(got, torch.Tensor) or got.shape != (2, n):
                    return  # the battery names a missing or misshapen gradient
                for k, f in enumerate(slacks, start=1):
                    if torch.equal(got[:, k], grad_output[k]):
                        raise GradingError(
                            f"PerSampleClippedLinear left a sample whose gradient has norm "
                            f"{f:.13g} * max_norm unclipped (max_norm={max_norm:g}, "
                            f"{str(dtype).removeprefix('torch.')}): a slack on the threshold "
                            "(norms > max_norm * (1 + something), or a tolerance): every sample "
                            "above max_norm, however slightly, is scaled by max_norm / norm",
                            mistake="PerSampleClippedLinear/slack-on-threshold")
                rtol = 1e-9 if dtype == torch.float64 else 1e-5
                diagnose_gradient("weight", got.double(), expected, rtol=rtol, atol=0)
