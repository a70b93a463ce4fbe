"""Checks shared by lesson 10's LayerNormFunction and RMSNormFunction: inputs, the exact shapes
backward returns, what forward saved, counted work per needed gradient, and the gradient's
terms (which one a wrong backward left out)."""

import itertools
from types import SimpleNamespace

import torch

from ...checks import (Spec, case, make_inputs, reference_gradients, run_backward,
                      run_forward)
from ...diagnose import diagnose_gradient
from ...errors import GradingError
from ...exercise import sample
from ...probes import same_tensor
from ...comparison import check_saved_dtypes

BOOKKEEPING = ("detach", "alias")  # ops autograd adds when it unpacks saved tensors


def norm_values(leading: tuple, features: int, device, *, weight=True, bias=True, seed=0,
                dtype=torch.float64, eps=1e-5, shift=0.0, centred=True) -> dict:
    """Inputs in ``apply``'s order: x of shape (*leading, features), weight and bias of shape
    (features,) or None (bias only for LayerNorm, ``centred``), eps."""
    values = {"x": shift + sample((*leading, features), device, seed=seed, dtype=dtype)}
    values["weight"] = (1 + 0.5 * sample((features,), device, seed=seed + 1, dtype=dtype)
                        if weight else None)
    if centred:
        values["bias"] = sample((features,), device, seed=seed + 2, dtype=dtype) if bias else None
    values["eps"] = eps
    return values


def describe(values: dict) -> str:
    """``x of shape (2, 3), weight=None, bias a tensor, float32``."""
    parts = [f"x of shape {tuple(values['x'].shape)}"]
    parts += [f"{name}={'None' if values[name] is None else 'a tensor'}"
              for name in ("weight", "bias") if name in values]
    return ", ".join(parts + [str(values["x"].dtype).removeprefix("torch.")])


def row_statistics(x: torch.Tensor, eps: float, centred: bool):
    """(mean or None, rstd, x_hat) of every row, in float64: the truth the checks compare with."""
    wide = x.double()
    mean = wide.mean(-1, keepdim=True) if centred else None
    centred_x = wide - mean if centred else wide
    rstd = torch.rsqrt(centred_x.square().mean(-1, keepdim=True) + eps)
    return mean, rstd, centred_x * rstd


def gradient_terms(x, weight, grad_output, eps: float, centred: bool) -> dict:
    """The input gradient's terms, row by row, in float64 (g = grad_output * weight):
    direct ``rstd * g``, mean ``-rstd * mean(g)`` (LayerNorm only; zeros for RMSNorm) and
    projection ``-rstd * x_hat * mean(g * x_hat)``. Their sum is the gradient."""
    _, rstd, x_hat = row_statistics(x, eps, centred)
    g = grad_output.double() * (weight.double() if weight is not None else 1)
    mean_term = -rstd * g.mean(-1, keepdim=True) if centred else torch.zeros_like(g)
    return {"direct": rstd * g,
            "mean": mean_term.expand_as(g),
            "projection": -rstd * x_hat * (g * x_hat).mean(-1, keepdim=True)}


def eps_outside_root(values: dict, centred: bool) -> torch.Tensor:
    """The output of a forward that adds eps after the square root, rstd = 1 / (sqrt(var) + eps)."""
    x, eps = values["x"], values["eps"]
    centred_x = x - x.mean(-1, keepdim=True) if centred else x
    y = centred_x / (centred_x.square().mean(-1, keepdim=True).sqrt() + eps)
    if values["weight"] is not None:
        y = y * values["weight"]
    return y + values["bias"] if values.get("bias") is not None else y


EPS_OUTSIDE_ROOT = ("adds eps outside the square root (with eps=0.5 its output is the one for "
                    "rstd = 1 / (sqrt(variance) + eps)): compare where your eps enters with the "
                    "lesson's formula for r")


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

    if matches(truth):
        return
    for kept, hint, mistake in WRONG_GRAD_X:
        if not centred and "mean" not in kept:
            continue
        if matches(sum(terms[name] for name in kept)) and not matches(truth):
            raise GradingError(f"{spec.name}'s grad_x {hint}", mistake=f"{spec.name}/{mistake}")
    if not centred:
        if matches(truth - terms["direct"].mean(-1, keepdim=True)):  # -rstd * mean(g)
            raise GradingError(f"{spec.name}'s grad_x subtracts a mean term, as LayerNorm's "
                               "does: RMSNorm never subtracts the mean, so its gradient has "
                               "no such term", mistake=f"{spec.name}/subtracts-mean-term")
    if weight is not None:
        unweighted = sum(gradient_terms(x, None, grad_output, eps, centred).values())
        if matches(unweighted):
            raise GradingError(f"{spec.name}'s grad_x ignores the weight: y = weight * x_hat, "
                               "so dL/dx_hat (your Step 1) carries it",
                               mistake=f"{spec.name}/ignores-weight")
        if matches(unweighted * weight.double()):
            raise GradingError(f"{spec.name}'s grad_x multiplies by the weight after the row "
                               "means: which g do Step 4's row sums take, dL/dy or dL/dx_hat?",
                               mistake=f"{spec.name}/weight-after-row-means")


# ------------------------------------------------------------------ what backward returned
def record_backward_returns(function: type) -> tuple[type, list]:
    """A subclass of ``function`` whose backward records the tuple it returns, before the
    engine checks and sums it (the engine quietly reduces a gradient of shape (3, D) for a
    (D,) input, which hides a missing sum from the values)."""
    calls: list[tuple] = []

    def backward(ctx, *grad_outputs):
        returned = function.backward(ctx, *grad_outputs)
        calls.append(returned if isinstance(returned, tuple) else (returned,))
        return returned

    return type(function.__name__, (function,), {"backward": staticmethod(backward)}), calls


def check_returned(spec: Spec, returned: tuple, inputs: dict) -> None:
    """One gradient per input, of exactly its shape, and None for every input that needs none."""
    for (name, value), grad in zip(inputs.items(), returned):
        wanted = isinstance(value, torch.Tensor) and value.requires_grad
        if not wanted and grad is not None:
            raise GradingError(f"{spec.name}.backward returned a gradient for {name}, which "
                               f"needs none: return None when ctx.needs_input_grad for {name} "
                               "is False (and compute nothing of it)")
        if wanted and isinstance(grad, torch.Tensor) and grad.shape != value.shape:
            raise GradingError(
                f"{spec.name}.backward returned grad_{name} of shape {tuple(grad.shape)} for "
                f"{name} of shape {tuple(value.shape)}: return exactly {name}'s shape (sum over "
                "every leading dim; the engine sums a broadcastable gradient, but only by luck "
                "of the shapes)")


def scalar_weight_hint(spec: Spec, returned: list, values: dict) -> None:
    """A 1-D x whose weight gradient came back 0-d: ``sum(dim=())`` summed everything."""
    if values["x"].dim() != 1 or not returned:
        return
    for name, grad in zip(values, returned[-1]):
        if name in ("weight", "bias") and isinstance(grad, torch.Tensor) and grad.dim() == 0:
            raise GradingError(f"{spec.name}.backward returned a 0-d grad_{name} for a 1-D x: "
                               "with no leading dims there is nothing to sum (and sum(dim=()) "
                               "sums every dim in PyTorch): which one reduction covers any "
                               "number of leading dims, none included?")


def unbiased_variance_hint(function, spec: Spec, values: dict) -> None:
    """LayerNorm's output computed with the unbiased variance (divided by D - 1)."""
    x, features = values["x"], values["x"].shape[-1]
    if "bias" not in values or features < 2:
        return
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    variance, mean = torch.var_mean(x, -1, keepdim=True, correction=1)
    unbiased = (x - mean) * torch.rsqrt(variance + values["eps"])
    unbiased = unbiased * (values["weight"] if values["weight"] is not None else 1)
    unbiased = unbiased + (values["bias"] if values["bias"] is not None else 0)
    if isinstance(output, torch.Tensor) and output.shape == unbiased.shape and \
            torch.allclose(output, unbiased):
        raise GradingError(f"{spec.name} normalises with the unbiased variance (divided by D - 1, "
                           "correction=1): LayerNorm divides by D (correction=0, "
                           "unbiased=False)", mistake=f"{spec.name}/unbiased-variance")


# ------------------------------------------------------------------------- what was saved
def check_saved(spec: Spec, forward, values: dict, *, per_row_limit: int,
                keep_hint: str, x_itself: bool = False) -> None:
    """One full-size tensor, at most ``per_row_limit`` per-row tensors, the weight itself,
    nothing else (nothing when a dimension makes full-size and per-row sizes coincide)."""
    x = values["x"]
    features = x.shape[-1]
    rows = x.numel() // features
    if features == 1:
        return
    full, per_row, weights, other = [], [], [], []
    for saved in forward.saved:
        numel = saved.tensor.numel()
        if saved.role == "input weight":
            weights.append(saved)
        elif saved.role == "input bias":
            other.append(saved)
        elif numel == x.numel():
            full.append(saved)
        elif numel == rows:
            per_row.append(saved)
        else:
            other.append(saved)
    kept = ", ".join(f"{s.role} of shape {s.shape}" for s in forward.saved) or "nothing"
    if len(full) != 1:
        raise GradingError(f"{spec.name} saved {len(full)} full-size tensors ({kept}): "
                           f"{keep_hint}")
    if x_itself and full[0].role != "input x":
        raise GradingError(f"{spec.name} saved a new full-size tensor ({full[0].role} of shape "
                           f"{full[0].shape}) instead of x: {keep_hint} (x costs nothing new "
                           "while the caller holds it; backward rebuilds x * rstd)")
    if full[0].role != "input x" and full[0].nbytes > x.numel() * x.element_size():
        raise GradingError(f"{spec.name} saved a {full[0].dtype} copy of x ({full[0].nbytes} "
                           f"bytes): keep x itself, or a normalised copy in x's dtype")
    if len(per_row) > per_row_limit:
        raise GradingError(f"{spec.name} saved {len(per_row)} per-row tensors ({kept}): "
                           f"{keep_hint}")
    if other:
        what = other[0]
        whose = "the bias, which backward never needs" if what.role == "input bias" else \
            f"{what.role} of shape {what.shape}"
        raise GradingError(f"{spec.name} saved {whose}: {keep_hint}")
    if values["weight"] is not None and not weights:
        copies = [s for s in forward.saved if s.tensor.shape == values["weight"].shape
                  and not same_tensor(s.tensor, values["weight"])]
        if copies:
            raise GradingError(f"{spec.name} saved a copy of the weight: save the weight "
                               "itself (no memory of its own)")


def check_saved_precision(function, spec: Spec, values: dict) -> None:
    """Before any value is compared: a statistic forward computed and saved narrower than the
    float64 input (a float32 rstd) is named as what it is, a tensor seen saved in a narrower
    dtype, not as the small value error it later causes (the domain's saved-dtype rule, run
    first: the same rule, its first line proven by what was saved)."""
    forward = run_forward(function, spec, make_inputs(values))
    dtype = values["x"].dtype
    check_saved_dtypes(SimpleNamespace(spec=spec), forward, dtype, dtype)


# ------------------------------------------------------------------------ counted work
def _work(function, spec: Spec, values: dict, wanted: set) -> tuple[int, tuple]:
    """(ops backward dispatched, what it returned) when only ``wanted`` require grad."""
    probe, returned = record_backward_returns(function)
    inputs = make_inputs(values, requires_grad=wanted)
    forward = run_forward(probe, spec, inputs)
    tensors = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor)}
    backward = run_backward(spec, forward.output, tensors, torch.ones_like(forward.output))
    check_returned(spec, returned[-1], inputs)
    return sum(op not in BOOKKEEPING for op in backward.ops), returned[-1]


def check_needs_input_grad(function, spec: Spec, values: dict) -> None:
    """None for an input that needs no gradient, and strictly more work whenever one more
    gradient is needed: nothing of an unneeded gradient is computed."""
    names = [n for n, v in values.items() if isinstance(v, torch.Tensor)]
    work = {}
    for count in range(1, len(names) + 1):
        for wanted in itertools.combinations(names, count):
            work[frozenset(wanted)] = _work(function, spec, values, set(wanted))[0]
    for wanted, ops in work.items():
        for extra in set(names) - wanted:
            if work[wanted | {extra}] <= ops:
                needed = " and ".join(sorted(wanted, key=names.index))
                raise GradingError(
                    f"{spec.name}.backward does as much work when only {needed} "
                    f"require{'s' if len(wanted) == 1 else ''} grad as when {extra} does too "
                    f"({ops} ops): check ctx.needs_input_grad and compute nothing of grad_"
                    f"{extra} when it is False")


# ------------------------------------------------------------- accuracy at a large offset
# ------------------------------------------------------------- non-contiguous grad_output
def strided_grad_outputs(x: torch.Tensor) -> dict:
    """Non-contiguous grad_outputs of x's shape, by layout: every other column of a wider
    tensor (a slice downstream), and, for 3 or more dims, the first two dims transposed (a
    transpose downstream: no view flattens the leading dims then)."""
    shape, device, dtype = tuple(x.shape), x.device, x.dtype
    wide = sample((*shape[:-1], 2 * shape[-1]), device, seed=13, dtype=dtype)
    layouts = {"every other column of a wider tensor": wide[..., ::2]}
    if x.dim() >= 3:
        swapped = (shape[1], shape[0], *shape[2:])
        layouts["its first two dims transposed"] = sample(swapped, device, seed=14,
                                                          dtype=dtype).transpose(0, 1)
    return layouts


def check_strided_grad_output(function, spec: Spec, values: dict, described: str) -> None:
    """Backward given a non-contiguous grad_output (``strided_grad_outputs``): the same
    gradients as a contiguous one (``described``: the inputs, for the hint)."""
    for layout, grad_output in strided_grad_outputs(values["x"]).items():
        inputs = make_inputs(values)
        forward = run_forward(function, spec, inputs)
        tensors = {n: v for n, v in inputs.items() if isinstance(v, torch.Tensor)}
        with case(f"a non-contiguous grad_output, {layout}; {described}"):
            grads = run_backward(spec, forward.output, tensors, grad_output).grads
            truth = reference_gradients(spec, inputs, grad_output.contiguous())
            for name, grad in zip(tensors, grads):
                diagnose_gradient(name, grad, truth[name])
