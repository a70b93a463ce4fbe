"""PerSampleClippedLinear at the ends of its contract: samples of tiny norm (a clamp or an eps
on the norm scales them), max_norm far below any guard a learner might put on the norm (down
to 1e-120 against entries of 1e-60, far inside float64's range), and samples just above
max_norm."""

import torch

from ...checks import case, make_inputs, run_backward, run_forward
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
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
