"""Lesson 10's named mistakes of grad_x for LayerNormFunction and RMSNormFunction: which term a
wrong backward left out, scaled or averaged over the wrong dims, or whether it forgot the
weight."""

import torch

from ...checks import Spec
from ...errors import GradingError
from .norm_checks import gradient_terms, row_statistics


# The backwards people write, by the term they leave out or get wrong: (terms kept, hint, the
# mistake's id after the exercise's name). The hints name the term and its cause, never its
# formula: the learner's own derivation (Step 2's dr/dx, Step 3's Jacobian) holds it.
WRONG_GRAD_X = [
    (("direct", "mean"), "misses the projection term: rstd moves with x too, and its "
                         "derivative dr/dx_j (your Step 2) adds a term to the sum over i",
     "misses-projection-term"),
    (("direct", "projection"), "misses the mean term: the mean moves with x too, and its "
                               "derivative dmu/dx_j adds a term to the sum over i",
     "misses-mean-term"),
    (("direct",), "treats the mean and rstd as constants: differentiate them too (a mean "
                  "term and a projection term)", "statistics-held-constant"),
]


def diagnose_grad_x(spec: Spec, got, values: dict, grad_output, *, centred: bool) -> None:
    """Name the term a wrong grad_x leaves out, or the weight it forgot, when it is one of
    those; otherwise leave the verdict to the generic comparison."""
    if not isinstance(got, torch.Tensor) or got.shape != values["x"].shape:
        return
    x, weight, eps = values["x"], values["weight"], values["eps"]
    terms = gradient_terms(x, weight, grad_output, eps, centred)
    truth = sum(terms.values())
    got = got.double()

    def matches(candidate):
        return torch.allclose(got, candidate, rtol=1e-4, atol=1e-6)

    if x.dtype == torch.float64:  # off by eps / variance only: told apart in float64 alone
        _diagnose_projection_count(spec, got, values, terms, centred=centred)
    if matches(truth):
        return
    for kept, hint, mistake in WRONG_GRAD_X:
        if not centred and "mean" not in kept:
            continue
        if matches(sum(terms[name] for name in kept)) and not matches(truth):
            raise GradingError(f"{spec.name}'s grad_x {hint}", mistake=f"{spec.name}/{mistake}")
    _diagnose_row_means(spec, got, values, grad_output, terms, matches, centred=centred)
    if not centred:
        if matches(truth - terms["direct"].mean(-1, keepdim=True)):  # -rstd * mean(g)
            raise GradingError(f"{spec.name}'s grad_x subtracts a mean term, as LayerNorm's "
                               "does: does RMSNorm's forward subtract a mean, and if not, where "
                               "would that term come from?", mistake=f"{spec.name}/subtracts-mean-term")
    if weight is not None:
        _diagnose_unweighted_term(spec, values, grad_output, terms, matches, centred=centred)
        unweighted = sum(gradient_terms(x, None, grad_output, eps, centred).values())
        if matches(unweighted):
            raise GradingError(f"{spec.name}'s grad_x ignores the weight: y = weight * x_hat, "
                               "so dL/dx_hat (your Step 1) carries it",
                               mistake=f"{spec.name}/ignores-weight")
        if matches(unweighted * weight.double()):
            raise GradingError(f"{spec.name}'s grad_x multiplies by the weight after the row "
                               "means: which g do Step 4's row sums take, dL/dy or dL/dx_hat?",
                               mistake=f"{spec.name}/weight-after-row-means")


def _diagnose_unweighted_term(spec: Spec, values: dict, grad_output, terms: dict, matches, *,
                              centred: bool) -> None:
    """One row mean (the mean term's or the projection's) taken of grad_output where
    grad_output * weight belongs, the other right."""
    unweighted = gradient_terms(values["x"], None, grad_output, values["eps"], centred)
    truth = sum(terms.values())
    for name in ("mean", "projection") if centred else ("projection",):
        if matches(truth - terms[name] + unweighted[name]):
            raise GradingError(f"{spec.name}'s grad_x takes the {name} term's row mean of "
                               "grad_output where grad_output * weight belongs (the other "
                               "terms are right): which g do Step 4's row sums take, dL/dy "
                               "or dL/dx_hat?", mistake=f"{spec.name}/unweighted-{name}-term")


def _diagnose_projection_count(spec: Spec, got, values: dict, terms: dict, *,
                               centred: bool) -> None:
    """The projection's row sum divided by sum(x_hat ** 2) (a unit-length projection), not by
    D: the two agree only where eps is small next to the row's variance, so the candidate is
    compared to float64's precision (eps as a floor, 1e-5 away in relative terms, is not it)."""
    _, _, x_hat = row_statistics(values["x"], values["eps"], centred)
    squares = (x_hat * x_hat).sum(-1, keepdim=True)
    candidate = (sum(terms.values()) - terms["projection"]
                 + terms["projection"] * x_hat.shape[-1] / squares)
    truth = sum(terms.values())
    if not torch.allclose(got, truth, rtol=1e-9, atol=1e-12) and \
            torch.allclose(got, candidate, rtol=1e-9, atol=1e-12):
        raise GradingError(f"{spec.name}'s grad_x divides the projection term's row sum by "
                           "the row's sum of x_hat ** 2, not by its length D: the two agree "
                           "only where eps is small next to the variance (x_hat's squares "
                           "add up to less than D); where does Step 2's 1/D come from?",
                           mistake=f"{spec.name}/projection-over-x-hat-norm")


def _diagnose_row_means(spec: Spec, got, values: dict, grad_output, terms: dict, matches, *,
                        centred: bool) -> None:
    """A row mean of grad_x taken over the whole tensor (its dim forgotten), or divided by
    another count than the row's length D (the mean and projection terms off by a factor)."""
    x, weight, eps = values["x"], values["weight"], values["eps"]
    _, rstd, x_hat = row_statistics(x, eps, centred)
    g = grad_output.double() * (weight.double() if weight is not None else 1)
    truth = sum(terms.values())
    whole = {"mean": -rstd * g.mean(), "projection": -rstd * x_hat * (g * x_hat).mean()}
    for name in ("mean", "projection") if centred else ("projection",):
        if x.dim() > 1 and matches(truth - terms[name] + whole[name]):
            raise GradingError(f"{spec.name}'s grad_x takes the {name} term's mean over the "
                               "whole tensor, not over each row: which dim does each row's "
                               "statistic run over, and so each term's mean?",
                               mistake=f"{spec.name}/mean-over-whole-tensor")
    names = ["mean", "projection"] if centred else ["projection"]
    basis = torch.stack([terms[name].reshape(-1) for name in names], 1)
    factors = torch.linalg.lstsq(basis, (got - terms["direct"]).reshape(-1, 1)).solution
    factors = factors.reshape(-1).tolist()
    fitted = terms["direct"] + sum(f * terms[n] for f, n in zip(factors, names))
    off = [(n, f) for n, f in zip(names, factors) if abs(f - 1) > 1e-3]
    if off and all(abs(f) > 1e-3 for f in factors) and matches(fitted):
        which = " and ".join(f"the {n} term {f:.3g} times the right one" for n, f in off)
        raise GradingError(f"{spec.name}'s grad_x has {which}: a row mean divides by the "
                           f"row's length D = x.shape[-1] ({x.shape[-1]} here); "
                           f"{_divisor(x, off[0][1])}", mistake=f"{spec.name}/wrong-row-length")


def _divisor(x: torch.Tensor, factor: float) -> str:
    """What a row mean off by ``factor`` divided by, named when it is another size of x."""
    divisor = x.shape[-1] / factor
    sizes = [(f"x.shape[{dim}]", x.shape[dim]) for dim in range(x.dim() - 1)]
    sizes.append(("the number of rows", x.numel() // max(x.shape[-1], 1)))
    for name, size in sizes:
        if size and abs(divisor - size) < 1e-3 * size:
            return f"yours divides by {size}, {name} here: which dim is the row's?"
    return "what does yours divide by?"
