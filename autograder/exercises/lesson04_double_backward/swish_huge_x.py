"""SwishFunction's gradient for beta where x is huge and beta tiny (|beta x| = 60, inside the
contract's |beta x| <= 800): the true dL/dbeta = sum g x^2 sigma'(beta x) is a normal number, but
x * x alone overflows (float32 past 1.8e19, float64 past 1.3e154), so a backward that squares x
before multiplying by the small sigma' returns inf (or nan, inf * 0, where sigma' rounds to 0).
Both dtypes, both signs of beta x, each subset in which beta requires grad."""

import torch

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...errors import GradingError
from .swish_tiny_beta import tiny_beta_error

HUGE = {torch.float64: 1e160, torch.float32: 1e20}
SUBSETS = (("x", "beta"), ("beta",))


def check_huge_x(function, spec: Spec, device) -> None:
    """dL/dbeta at x huge, beta = +-60 / x: finite, and right where sigma'(beta x) is kept."""
    for dtype, big in HUGE.items():
        for z in (-60.0, 60.0):
            values = {"x": torch.tensor([big], dtype=dtype, device=device),
                      "beta": torch.tensor(z / big, dtype=dtype, device=device)}
            x64, b64 = values["x"].double().cpu(), values["beta"].double().cpu()
            s = torch.sigmoid(b64 * x64)
            true = float(((x64 * (s * torch.sigmoid(-b64 * x64))) * x64).sum())
            for wanted in SUBSETS:
                with case(f"{str(dtype)[6:]} x = ({big:g}), beta = {z / big:g} (beta x = {z:g}), "
                          f"gradients for {' and '.join(wanted)}"):
                    inputs = make_inputs(values, requires_grad=set(wanted))
                    forward = run_forward(function, spec, inputs)
                    grads = run_backward(spec, forward.output, inputs,
                                         torch.ones_like(forward.output)).grads
                    got = grads[list(inputs).index("beta")]
                    if got is None:
                        continue  # a missing gradient is the main battery's to name
                    got = float(got.detach().double().cpu().reshape(-1)[0])
                    # where sigma'(60) rounds to 0 (s = 1 exactly), 0 is what autograd gives too
                    ok = (abs(got - true) <= 1e-3 * abs(true) if z < 0
                          else got == got and abs(got) <= 2 * abs(true))
                    if ok:
                        continue
                    _name_tiny_beta(function, spec, values, z, true)
                    overflow = not (abs(got) < float("inf"))  # inf or nan: an overflow
                    raise GradingError(
                        (f"your gradient for beta overflows: x * x overflows before the small "
                         f"factor sigma'(beta x) can scale it down" if overflow else
                         "your gradient for beta is wrong where x is huge and beta tiny")
                        + f"; at x = {big:g}, beta = "
                        f"{z / big:g} ({str(dtype)[6:]}; beta x = {z:g}, inside |beta x| <= 800) it "
                        f"is {got:.3g} where the true value is {true:.3g}. In which order can the "
                        f"factors be multiplied so that no intermediate overflows?",
                        f"x = {big}, beta = {z / big}, needs grad: {sorted(wanted)}\n"
                        f"beta's gradient = {got}\ntrue = {true}",
                        mistake="SwishFunction/x-squared-overflow")


def _name_tiny_beta(function, spec: Spec, values: dict, z: float, true_beta: float) -> None:
    """Before naming an overflow, confirm it: an x * x that overflows leaves x's gradient right
    at the same point, a branch for tiny beta (sigma linearised) does not."""
    inputs = make_inputs(values, requires_grad={"x", "beta"})
    forward = run_forward(function, spec, inputs)
    grads = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output)).grads
    x64, b64 = values["x"].double().cpu(), values["beta"].double().cpu()
    s = torch.sigmoid(b64 * x64)
    true = float((s + b64 * x64 * s * torch.sigmoid(-b64 * x64))[0])
    if grads[0] is None:
        return
    got = float(grads[0].detach().double().cpu().reshape(-1)[0])
    if abs(got - true) <= 1e-3 * abs(true):
        return
    raise tiny_beta_error("x", values["beta"].item(), values["x"].reshape(-1).tolist(), got,
                          true, values["x"].dtype, f"x = {values['x'].tolist()}, beta = "
                          f"{values['beta'].item()}: x's gradient = {got}, true = {true} "
                          f"(beta's true gradient = {true_beta})")
