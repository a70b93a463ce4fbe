"""Lesson 06: no work for an input that needs no gradient (Function contract, rule 2), seen in
the matrix products backward makes, for every exercise of the lesson. With Lq 3, Lk 4, d 2 and
dv 5, each of dQ (3, 2), dK (4, 2) and dV (4, 5) is a product of a shape no other product of
attention's backward has, either way round; dP = dO V^T is the one Lq x Lk product summed over
the dv value columns (the scores, recomputed, sum over d)."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...checks import case, make_inputs, run_forward
from ...errors import GradingError
from ...probes import record_returned_gradients

LQ, LK, D, DV = 3, 4, 2, 5
GRADIENT_PRODUCTS = {"Q": ("dQ = dS K", (LQ, D)), "K": ("dK = dS^T Q", (LK, D)),
                     "V": ("dV = P^T dO", (LK, DV))}


class ProductShapes(TorchDispatchMode):
    """The shapes of every matrix product's result inside the block, and the number of
    entries every sum or mean leaves."""

    def __init__(self):
        super().__init__()
        self.shapes: list[tuple] = []
        self.inner: list[tuple] = []  # (result's last two sizes, the size summed over)
        self.reduced: list[int] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in ("mm", "bmm", "addmm", "baddbmm"):
            self.shapes.append(tuple(result.shape[-2:]))
            first = args[1] if name in ("addmm", "baddbmm") else args[0]
            self.inner.append((tuple(result.shape[-2:]), first.shape[-1]))
        elif name in ("sum", "mean") and isinstance(result, torch.Tensor):
            self.reduced.append(result.numel())
        return result


def products_with_alone(function, spec, values: dict, alone: str) -> tuple:
    """Forward on ``values`` with ``alone`` the only input requiring grad, then backward under
    the recorder: (the products, the names of the inputs backward returned a tensor for)."""
    probe, returned = record_returned_gradients(function)
    inputs = make_inputs(values, requires_grad={alone})
    output = run_forward(probe, spec, inputs).output
    with ProductShapes() as products:
        torch.autograd.grad(output, [inputs[alone]], torch.ones_like(output))
    raw = returned[-1] if returned else ()
    given = {name for name, grad in zip(values, raw) if isinstance(grad, torch.Tensor)}
    return products, given


def check_no_gradient_unasked(function, spec, values: dict, describe: str, *,
                              others: tuple = (), dp: bool = False, serves: str = "dQ and dK",
                              gate: str = "Q or K", extra=None,
                              dp_returned_named: bool = False) -> None:
    """Each of Q, K, V (and ``others``) alone requiring grad: a product in backward of the
    shape of another input's gradient (either way round) is that gradient, computed for
    nobody; with ``dp`` and V alone, dP = dO V^T too, which serves only ``serves`` (an
    exercise whose contract bounds the work says so; with ``dp_returned_named``, not where
    backward returns dQ or dK too, which the generic check names). P recomputed is the
    learner's choice: every gradient needs it. ``values`` must have the module's sizes. ``extra(alone, products)``, where given, checks more of each run."""
    for alone in ("Q", "K", "V", *others):
        with case(f"{describe}, {alone} alone requiring grad"):
            products, given = products_with_alone(function, spec, values, alone)
            for other, (formula, shape) in GRADIENT_PRODUCTS.items():
                # a gradient returned for an input that needs none is rule 2's other half,
                # which the generic check names: here only the work done for nobody
                if other in given:
                    continue
                if other != alone and {shape, shape[::-1]} & set(products.shapes):
                    raise GradingError(
                        f"{spec.name}.backward computes {formula} (a {shape} product here, or "
                        f"its transpose) when only {alone} requires grad: compute each gradient "
                        "only when its entry of ctx.needs_input_grad is True")
            # dP for a gradient backward also returned: rule 2's other half names it
            named = dp_returned_named and bool({"Q", "K"} & given)
            if dp and alone == "V" and not named and any(
                    shape in ((LQ, LK), (LK, LQ)) and inner == DV
                    for shape, inner in products.inner):
                raise GradingError(
                    f"{spec.name}.backward computes dP = dO V^T (a {(LQ, LK)} product over the "
                    f"{DV} value columns here) when only V requires grad: dV = P^T dO needs no "
                    f"dP, which serves only {serves}; compute dP and dS only when {gate} needs "
                    "a gradient")
            if extra is not None:
                extra(alone, products)
