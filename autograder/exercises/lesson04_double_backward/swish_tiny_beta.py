"""SwishFunction where beta is small but beta * x is not: the contract's beta is any real value,
and what sigma sees is beta * x alone, so a backward that treats a small beta apart (a "beta ~ 0"
branch with sigma linearised, or a series in beta) is wrong however small its threshold. Drawn
where a model can meet it (|beta| from 1e-4 down to 5e-7, beta x up to 30, both signs), in each
dtype; both gradients at each point, relative to their size."""

import torch

from ...checks import Spec, case, make_inputs, run_backward, run_forward
from ...errors import GradingError

# (beta, beta * x at each point, whether beta's gradient is graded there)
TINY = {torch.float64: ([(5e-7, (30.0, -30.0, 0.5), True),
                         (-1e-4, (10.0, -3.0, 0.25), True)], 1e-9),
        torch.float32: ([(-1e-4, (3.0, -3.0, 0.5), True)], 1e-4)}


def _truth(x: torch.Tensor, beta: torch.Tensor) -> dict:
    """Both gradients for grad_output = 1, in float64 (beta's may overflow; it is then unused)."""
    x, beta = x.double().cpu(), beta.double().cpu()
    s = torch.sigmoid(beta * x)
    ds = s * torch.sigmoid(-beta * x)
    return {"x": s + beta * x * ds, "beta": ((x * ds) * x).sum()}


def tiny_beta_error(name: str, beta: float, xs: list, got: float, true: float, dtype,
                    details: str) -> GradingError:
    """A gradient wrong where beta is tiny and beta x is not; a cause only where confirmed."""
    zs = ", ".join(f"{beta * v:.3g}" for v in xs)
    return GradingError(
        f"your gradient for {name} is wrong where beta is tiny but beta * x is not: at beta = "
        f"{beta:g}, x = ({', '.join(f'{v:.3g}' for v in xs)}) ({str(dtype)[6:]}; beta x = "
        f"({zs}), inside |beta x| <= 800) it is {got:.4g} where the true value is {true:.4g} "
        f"(relative error {abs(got - true) / abs(true):.2g})" + _observed(name, beta, xs, got),
        details, mistake="SwishFunction/tiny-beta-branch")


def _observed(name: str, beta: float, xs: list, got: float) -> str:
    """What the gradient shows, and no cause it does not confirm: the gradient of sigma
    linearised around 0 (s = 1/2 + beta x / 4, sigma' = 1/4), a branch for beta ~ 0; x's
    gradient equal to sigma(beta x) alone, its beta x sigma'(beta x) term lost."""
    close = lambda value: abs(got - value) <= 1e-3 * abs(value)  # noqa: E731
    linear = (0.5 + beta * xs[0] / 2 if name == "x"
              else sum(v * v for v in xs) / 4 if all(abs(v) < 1e150 for v in xs) else None)
    if linear is not None and close(linear):
        return (f": that is the gradient of sigma linearised around 0 (sigma(beta x) = 1/2 + "
                f"beta x / 4), {linear:.4g} here. Does backward treat a tiny beta apart? The "
                "contract's beta is any real value, tiny too, and sigma sees only beta * x")
    z = torch.tensor(beta * xs[0], dtype=torch.float64)
    if name == "x" and close(float(torch.sigmoid(z))):
        term = float(z * torch.sigmoid(z) * torch.sigmoid(-z))
        return (": it equals sigma(beta x) alone, so its term beta x sigma'(beta x) came out 0 "
                f"or nearly where it is {term:.4g}; which product in that term can give 0 when "
                "beta is tiny and beta * x is not?")
    return ("; the contract's beta is any real value, tiny too, and sigma sees only beta * x, "
            "which may be large however small beta is")


def check_tiny_beta(function, spec: Spec, device) -> None:
    """Both gradients, relative to their size, where |beta| is tiny and |beta x| up to 100."""
    for dtype, (cases, rtol) in TINY.items():
        for beta, zs, beta_finite in cases:
            values = {"x": torch.tensor([z / beta for z in zs], dtype=dtype, device=device),
                      "beta": torch.tensor(beta, dtype=dtype, device=device)}
            truth = _truth(values["x"], values["beta"])
            for wanted in (("x", "beta"), ("x",)) + ((("beta",),) if beta_finite else ()):
                with case(f"{str(dtype)[6:]} beta = {beta:g}, beta x = {zs}: a tiny beta, "
                          f"gradients for {' and '.join(wanted)}"):
                    _check_one(function, spec, values, set(wanted), truth, rtol, beta_finite)


def _check_one(function, spec, values, wanted, truth, rtol, beta_finite) -> None:
    inputs = make_inputs(values, requires_grad=wanted)
    forward = run_forward(function, spec, inputs)
    grads = run_backward(spec, forward.output, inputs, torch.ones_like(forward.output)).grads
    for name, grad in zip(inputs, grads):
        if name not in wanted or grad is None or (name == "beta" and not beta_finite):
            continue  # a missing gradient is the main battery's to name
        got = grad.detach().double().cpu().reshape(truth[name].shape).reshape(-1)
        true = truth[name].reshape(-1)
        relative = (got - true).abs() / true.abs()
        if bool((relative <= rtol).all()):
            continue
        i = int((~(relative <= rtol)).nonzero()[0])
        xs = values["x"].reshape(-1).tolist()
        raise tiny_beta_error(name, values["beta"].item(), xs if name == "beta" else [xs[i]],
                              float(got[i]), float(true[i]), values["x"].dtype,
                              f"x = {xs}, beta = {values['beta'].item()}, needs grad: "
                              f"{sorted(wanted)}\n{name}'s gradient = {got.tolist()}\n"
                              f"true = {true.tolist()}")
