"""SwishFunction's value and gradients in the sigmoid's saturated tail, graded relative to their
size (as lesson 01 grades the sigmoid's): where beta * x is far below 0, sigma(beta x) is tiny
but a normal float, and so are the value and both gradients; the absolute tolerance elsewhere
would pass a forward that cancels (x - x sigma(-beta x) is 0 there) and a backward that clamps
beta * x (to +-80, say) and is wrong there by a factor of 1e8. Both dtypes, both signs of beta,
every subset of x and beta requiring grad."""

import torch

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...errors import GradingError

# |beta x| from 78 to 705: past a clamp at 80 in both dtypes, and at 700 ("float64's safe
# range") in float64, while sigma(beta x) and both gradients stay normal numbers (float32's
# normal range ends near e^-87, float64's near e^-708).
TAILS = {torch.float64: ([80.0, 300.0, 500.0, 542.3], 1e-9), torch.float32: ([60.0, 65.0], 1e-4)}
SUBSETS = (("x", "beta"), ("x",), ("beta",))


def _truth(x: torch.Tensor, beta: torch.Tensor) -> dict:
    """The value and both gradients for grad_output = 1, in float64: s = sigma(z) is accurate
    for z < 0."""
    x, beta = x.double(), beta.double()
    s = torch.sigmoid(beta * x)
    ds = s * torch.sigmoid(-beta * x)
    return {"value": x * s, "x": s + beta * x * ds, "beta": (x * x * ds).sum()}


def check_saturated_tails(function, spec: Spec, device) -> None:
    """The gradients where sigma(beta x) is tiny, to a relative tolerance."""
    for dtype, (magnitudes, rtol) in TAILS.items():
        for beta in (1.3, -1.3):
            sign = -1.0 if beta > 0 else 1.0  # beta * x far below 0
            values = {"x": torch.tensor([sign * m for m in magnitudes], dtype=dtype,
                                        device=device),
                      "beta": torch.tensor(beta, dtype=dtype, device=device)}
            truth = _truth(values["x"], values["beta"])
            for wanted in SUBSETS:
                points = ", ".join(f"{v:g}" for v in values["x"].tolist())
                with case(f"{str(dtype)[6:]} x = ({points}), beta={beta}: the sigmoid's "
                          f"saturated tail, gradients for {' and '.join(wanted)}"):
                    _check_one(function, spec, values, set(wanted), truth, rtol)


def _check_one(function, spec: Spec, values: dict, wanted: set, truth: dict, rtol: float):
    inputs = make_inputs(values, requires_grad=wanted)
    forward = run_forward(function, spec, inputs)
    _check_value(forward.output, values, truth["value"], rtol)
    backward = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output))
    for name, grad in zip(inputs, backward.grads):
        if name not in wanted or grad is None:
            continue  # a missing gradient is the main battery's to name
        got = grad.detach().double().cpu().reshape(truth[name].shape)
        true = truth[name].cpu()
        relative = ((got - true).abs() / true.abs()).reshape(-1)
        if bool((relative <= rtol).all()):
            continue
        i = int((~(relative <= rtol)).nonzero()[0])  # the smallest |beta x| that fails
        beta, xs = values["beta"].item(), values["x"].reshape(-1).tolist()
        at = (f"x = {xs[i]:g}, beta = {beta:g} ({str(values['x'].dtype)[6:]}; beta x = "
              f"{beta * xs[i]:g})" if name == "x" else  # beta's gradient sums every point
              f"x = ({', '.join(f'{v:g}' for v in xs)}), beta = {beta:g} "
              f"({str(values['x'].dtype)[6:]}; beta x from {beta * xs[0]:g} to {beta * xs[-1]:g})")
        raise GradingError(
            f"your gradient for {name} is wrong in the sigmoid's saturated tail, relative to its "
            f"size: at {at} it is {got.reshape(-1)[i].item():.3g} where the true value is "
            f"{true.reshape(-1)[i].item():.3g} (relative error {relative[i].item():.2g})"
            + _observed(name, got.reshape(-1), true.reshape(-1), values, i),
            f"x = {values['x'].tolist()}, beta = {beta}, needs grad: {sorted(wanted)}\n"
            f"{name}'s gradient = {got.tolist()}\ntrue = {true.tolist()}",
            mistake="SwishFunction/clamped-tail")


def _check_value(output, values: dict, truth: torch.Tensor, rtol: float) -> None:
    """Forward's value x sigma(beta x), relative to its size."""
    got = output.detach().double().cpu().reshape(truth.shape)
    relative = (got - truth.cpu()).abs() / truth.cpu().abs()
    if bool((relative <= rtol).all()):
        return
    i = int((~(relative <= rtol)).nonzero()[0])
    beta, xs = values["beta"].item(), values["x"].tolist()
    raise GradingError(
        f"your forward's value is wrong in the sigmoid's saturated tail, relative to its size: "
        f"at x = {xs[i]:g}, beta = {beta:g} ({str(values['x'].dtype)[6:]}; beta x = "
        f"{beta * xs[i]:g}) it is {got[i].item():.3g} where x sigma(beta x) is "
        f"{truth[i].item():.3g} (relative error {relative[i].item():.2g}); sigma(beta x) there "
        "is tiny but a normal number, which torch.sigmoid keeps to full relative precision: "
        "which step of your forward loses it?",
        f"x = {xs}, beta = {beta}\nyour value = {got.tolist()}\ntrue = {truth.tolist()}",
        mistake="SwishFunction/value-lost-in-tail")


def _observed(name: str, got: torch.Tensor, true: torch.Tensor, values: dict, i: int) -> str:
    """What the numbers show, and no cause they do not confirm: a gradient of 0, x's gradient
    equal to sigma(beta x) alone (its beta x sigma'(beta x) term came out 0), or a gradient that
    stops shrinking along the tail; otherwise the property graded."""
    tail = ("; sigma(beta x) there is tiny but a normal number, which torch.sigmoid keeps to "
            "full relative precision")
    if float(got[i]) == 0:
        return tail + ": which step of your backward rounds it to 0?"
    z = (values["beta"].double() * values["x"].double()).reshape(-1).cpu()
    s, ds = torch.sigmoid(z), torch.sigmoid(z) * torch.sigmoid(-z)
    if name == "x" and abs(float(got[i]) - float(s[i])) <= 1e-3 * float(s[i]):
        return (f": it equals sigma(beta x) alone, so its term beta x sigma'(beta x) came out "
                f"0 or nearly where sigma'(beta x) is {float(ds[i]):.3g}, a normal number; which "
                "step of your sigma' rounds it to 0 there?")
    if name == "x" and len(got) > 1 and float(got[0]) != 0:
        ratio, truth = abs(float(got[-1] / got[0])), abs(float(true[-1] / true[0]))
        if ratio > 10 * truth:
            return (f": from beta x = {float(z[0]):g} to {float(z[-1]):g} it changes by a factor "
                    f"{ratio:.3g} where the true one shrinks by {truth:.3g}, so it stops following "
                    "sigma's tail; which step of your backward stops shrinking with sigma(beta x)?")
    return tail
