"""SwishFunction's gradients in the sigmoid's saturated tail, graded relative to their size
(as lesson 01 grades the sigmoid's): where beta * x is far below 0, sigma(beta x) is tiny but a
normal float, and so are both gradients; the absolute tolerance elsewhere would pass a backward
that clamps beta * x (to +-80, say) and is wrong there by a factor of 1e8. Both dtypes, both
signs of beta, every subset of x and beta requiring grad."""

import torch

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...errors import GradingError

# |beta x| from 78 to 650: past a clamp at 80 in both dtypes, while sigma(beta x) and both
# gradients stay normal numbers (float32's normal range ends near e^-87, float64's near e^-708).
TAILS = {torch.float64: ([80.0, 300.0, 500.0], 1e-9), torch.float32: ([60.0, 65.0], 1e-4)}
SUBSETS = (("x", "beta"), ("x",), ("beta",))


def _truth(x: torch.Tensor, beta: torch.Tensor) -> dict:
    """Both gradients for grad_output = 1, in float64: s = sigma(z) is accurate for z < 0."""
    x, beta = x.double(), beta.double()
    s = torch.sigmoid(beta * x)
    ds = s * torch.sigmoid(-beta * x)
    return {"x": s + beta * x * ds, "beta": (x * x * ds).sum()}


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
            f"{true.reshape(-1)[i].item():.3g} (relative error {relative[i].item():.2g}): "
            + _cause(float(got.reshape(-1)[i]), float(relative[i])),
            f"x = {values['x'].tolist()}, beta = {beta}, needs grad: {sorted(wanted)}\n"
            f"{name}'s gradient = {got.tolist()}\ntrue = {true.tolist()}",
            mistake="SwishFunction/clamped-tail")


def _cause(got: float, relative: float) -> str:
    """The likely cause, from how far the gradient is off: a clamp moves the tail by a factor
    (e^4 and more here), a difference of two numbers near 1 keeps few or no digits of it."""
    cancels = ("a difference of two numbers near 1, as in (1 + tanh(z / 2)) / 2 or "
               "1 - sigmoid(-z), keeps few or no digits of sigma(z) there, which is tiny but "
               "still a normal number; torch.sigmoid(z) keeps them all")
    if got == 0:
        return "backward's sigmoid rounds to 0: " + cancels
    if relative < 0.5:
        return "backward's sigmoid loses digits: " + cancels
    return ("does backward clamp beta * x (or exp's argument)? A clamp cuts off the tail, "
            "where sigma(beta x) is tiny but still a normal number, and torch.sigmoid keeps it "
            "to full relative precision")
