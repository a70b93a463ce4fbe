"""Lesson 11, linear_cross_entropy in float16 and bfloat16: the loss and gradients as accurate
as accumulating in float32 makes them, returned and saved in the input's dtype."""

import itertools

import torch

from ...checks import case, make_inputs, run_backward, run_forward
from ...domain import Tolerance
from ...diagnose import diagnose_values
from ...errors import GradingError
from .fused_loss_work import LCE, NAME, Called, _describe, _truth, lce_values


ACCUMULATION = ("float16/bfloat16 as accurate as accumulating in float32 makes them "
                "(accumulating in the input dtype is not)")
# measured (tests/autograder/exercises/test_fused_loss.py): on these inputs a float32
# accumulator keeps the float16 loss within 2e-4 of float64 and a float16 one is off by 2e-2
ACCUMULATION_TOLERANCE = Tolerance(5e-4, 5e-5)  # 2e-3 at a loss near 4: between the two


def accumulation_values(device, dtype) -> dict:
    """512 rows one chunk at a time: a float16 running loss of about 2000 rounds each step."""
    return lce_values(512, 16, 32, 1, device, seed=3, dtype=dtype)


def check_low_precision(function: Called, values: dict) -> None:
    """float16 / bfloat16 in and out, as accurate as float32 accumulation makes them:
    errors relative to each true value's largest entry."""
    dtype = values["x"].dtype
    tolerance = {torch.bfloat16: 6e-3, torch.float16: 9e-4}[dtype]
    with case(_describe(values)):
        inputs = make_inputs(values)
        forward = run_forward(function, LCE, inputs)
        output = forward.output
        if not isinstance(output, torch.Tensor) or output.dtype != dtype:
            got = getattr(output, "dtype", type(output).__name__)
            raise GradingError(f"{NAME} returned {got} for {str(dtype)[6:]} inputs: accumulate "
                               "in float32 and return the input's dtype")
        backward = run_backward(LCE, output, inputs, torch.ones_like(output))
        loss, truth = _truth(values)
        for name, got, true in (("loss", output, loss), *zip(("grad_x", "grad_weight"),
                                                              backward.grads, truth)):
            if got.dtype != dtype:
                raise GradingError(f"{name} has dtype {got.dtype} for {str(dtype)[6:]} inputs: "
                                   "in which dtype does the contract ask for it?")
            error = ((got.double() - true).abs().max() / true.abs().max()).item()
            if not error <= tolerance:
                wide = _float32_error(function, values, name, true)
                if wide is None or wide > 1e-5:  # wrong in float32 too: no precision loss proven
                    diagnose_values(f"{NAME}'s {name}", got.double(), true, rtol=0,
                                    atol=tolerance * true.abs().max().item())
                raise GradingError(
                    f"{NAME}'s {name} matches in float32 (to {wide:.1g} of its largest entry) "
                    f"and is off by {error:.2g} in {str(dtype)[6:]}, where accumulating in "
                    f"float32 stays within {tolerance:g}: a precision loss, not a wrong formula; "
                    "accumulate the loss and the gradients in float32 and cast at the end",
                    mistake=f"{NAME}/narrow-accumulation")  # proven: float32 matches
        check_saved_dtype(forward, values)
        check_low_precision_without_grad(function, values, loss, tolerance)


# measured at g_range_values' sizes (seeds 0 to 3): G in float32 keeps grad_x within 3.5e-4
# of its largest entry, G rounded to float16 before the products is off by 3.2e-3 to 4.8e-3
G_RANGE_TOLERANCE = 1.5e-3


def g_range_values(device) -> dict:
    """float16, N = 4096, V = 512: away from its target an entry of G = (P - Y)/N is about
    1/(NV) = 4.8e-7, below float16's smallest normal number (6.1e-5), among subnormals
    6e-8 apart."""
    return lce_values(4096, 2, 512, 1024, device, seed=64, dtype=torch.float16)


def check_g_range(function: Called, values: dict) -> None:
    """Both gradients within G_RANGE_TOLERANCE of the truth where G's entries lie below float16's
    normal range; an answer that matches G rounded to float16 is named as such."""
    (N, _), V = values["x"].shape, values["weight"].shape[0]
    with case(_describe(values) + f", G's entries near 1/(NV) = {1 / (N * V):.2g}"):
        inputs = make_inputs(values)
        output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, (inputs["x"], inputs["weight"]))
        # float32 is reference enough at a tolerance of 1.5e-3, and twice as quick as float64
        x, weight = values["x"].float(), values["weight"].float()
        G = torch.softmax(x @ weight.T, dim=1)
        G[torch.arange(N, device=G.device), values["target"]] -= 1
        G /= N
        for name, got, true, product in (
                ("grad_x", grads[0], G @ weight, lambda g: g @ weight),
                ("grad_weight", grads[1], G.T @ x, lambda g: g.T @ x)):
            scale = true.abs().max()
            error = ((got.float() - true).abs().max() / scale).item()
            if error <= G_RANGE_TOLERANCE:
                continue
            if_rounded = product(G.half().float())
            from_rounded = ((got.float() - if_rounded).abs().max() / scale).item()
            if from_rounded < error / 4:
                raise GradingError(
                    f"{NAME}'s {name} is off by {error:.2g} of its largest entry in float16 at "
                    f"N={N}, V={V}, as with G = (P - Y)/N rounded to float16 before the two "
                    f"products (within {from_rounded:.1g} of that): G's entries, about 1/(NV) = "
                    f"{1 / (N * V):.2g} away from the target, lie below float16's smallest "
                    "normal number (6.1e-5), where they keep a few significant bits or none",
                    mistake=f"{NAME}/g-rounded-to-float16")
            narrow = product(_g_from_float16_softmax(values))
            if ((got.float() - narrow).abs().max() / scale).item() < error / 4:
                raise GradingError(
                    f"{NAME}'s {name} is off by {error:.2g} of its largest entry in float16 at "
                    f"N={N}, V={V}, as with each chunk's log-sum-exp and softmax computed in "
                    "float16 (logits - lse and its exp rounded to float16, about 3 significant "
                    "digits): a row's P no longer sums to 1, and G = (P - Y)/N carries that "
                    "error into both products; upcast the chunk's logits to float32 before the "
                    "log-sum-exp and the softmax",
                    mistake=f"{NAME}/softmax-in-float16")
            raise GradingError(
                f"{NAME}'s {name} is off by {error:.2g} of its largest entry in float16 at N={N}, "
                f"V={V}, where float32 accumulation, with the softmax and G = (P - Y)/N in "
                f"float32, stays within {G_RANGE_TOLERANCE:g}: which of your steps runs in "
                "float16?")


def _g_from_float16_softmax(values: dict) -> torch.Tensor:
    """G = (P - Y)/N in float32, with P as an answer that computes the softmax in float16 has
    it: the float16 logits, their log-sum-exp, the difference and its exp each rounded."""
    logits, target = values["x"] @ values["weight"].T, values["target"]
    G = (logits - torch.logsumexp(logits, 1, keepdim=True)).exp().float()
    G[torch.arange(len(target), device=G.device), target] -= 1
    return G / len(target)


def check_low_precision_without_grad(function: Called, values: dict, loss, tolerance: float):
    """The loss under torch.no_grad() as accurate as with grad enabled (a loss-only path of
    its own may accumulate in the input dtype)."""
    dtype = values["x"].dtype
    with torch.no_grad():
        output = function.apply(*make_inputs(values, requires_grad=False).values())
    if not isinstance(output, torch.Tensor) or output.dtype != dtype:
        got = getattr(output, "dtype", type(output).__name__)
        raise GradingError(f"{NAME} returned {got} for {str(dtype)[6:]} inputs under "
                           "torch.no_grad(): return the input's dtype in every grad mode")
    error = ((output.double() - loss).abs().max() / loss.abs().max()).item()
    if not error <= tolerance:
        raise GradingError(
            f"{NAME}'s loss under torch.no_grad() is off by {error:.2g} in {str(dtype)[6:]}, "
            f"where accumulating in float32 stays within {tolerance:g} (as it does with grad "
            "enabled): accumulate the loss in float32 whatever the grad mode",
            mistake="linear_cross_entropy/accumulates-narrow-without-grad")


def _float32_error(function: Called, values: dict, name: str, true) -> float | None:
    """The learner's ``name`` on the same values in float32, as a fraction of the true
    value's largest entry; None where it cannot be had."""
    wide = {n: v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            for n, v in values.items()}
    try:
        inputs = make_inputs(wide)
        output = function.apply(*inputs.values())
        grads = torch.autograd.grad(output, (inputs["x"], inputs["weight"]))
    except Exception:  # the learner's code may raise anything: no probe, no named cause
        return None
    got = dict(zip(("loss", "grad_x", "grad_weight"), (output.detach(), *grads)))[name]
    if got.shape != true.shape:
        return None
    return ((got.double() - true).abs().max() / true.abs().max()).item()


def check_saved_dtype(forward, values: dict) -> None:
    """The gradients saved for backward in the input's dtype: a float32 accumulator kept
    as it is doubles what stays alive between forward and backward."""
    dtype = values["x"].dtype
    names = {tuple(values["x"].shape): "grad_x", tuple(values["weight"].shape): "grad_weight"}
    for saved in forward.saved:
        if saved.role == "intermediate" and saved.shape in names and \
                saved.dtype.itemsize > dtype.itemsize:
            narrow = saved.tensor.numel() * dtype.itemsize
            raise GradingError(
                f"LinearCrossEntropy saves {names[saved.shape]} as {str(saved.dtype)[6:]} for "
                f"{str(dtype)[6:]} inputs: {saved.nbytes} bytes kept from forward to backward "
                f"where the input's dtype takes {narrow}: which dtype does backward need it "
                "in?")


def float16_range_values(device) -> dict:
    """float16, N = 4096: x near 32 and every row's target the class with the lowest mean
    logit, so the sum of the rows' losses (9.9e4) and grad_weight's largest entry before the
    division by N (1.3e5 in size) both pass float16's largest number, 65504, while the mean and
    grad_weight itself lie well inside it."""
    generator = torch.Generator().manual_seed(65)
    x = (torch.randn(4096, 8, generator=generator) + 32).half()
    weight = (torch.randn(16, 8, generator=generator) / 10).half()
    lowest = (x.double() @ weight.double().T).mean(0).argmin()
    return {"x": x.to(device), "weight": weight.to(device),
            "target": torch.full((4096,), int(lowest), device=device), "chunk_size": 1024}


# measured: the course's answer and one that multiplies the logits in float16 stay within 3.1e-4
# of the truth's largest entry (loss and grad_weight); a cast before the division by N gives inf
RANGE_TOLERANCE = 2e-3


def check_float16_range(function: Called, values: dict) -> None:
    """The loss (with grad and without) and grad_weight (with both gradients and alone) finite
    and accurate where their sums over rows, before the division by N, pass float16's range."""
    N = values["x"].shape[0]
    loss, (_, grad_weight) = _truth(values)
    sums = {"loss": N * loss.abs().max().item(), "grad_weight": N * grad_weight.abs().max().item()}
    situations = (("", {"x", "weight"}), (" with only weight requiring grad", {"weight"}),
                  (" with only x requiring grad", {"x"}), (" under torch.no_grad()", ()))
    # 1024 rows a chunk, and one chunk past N: a chunk's own sum passes 65504 only there
    for (situation, wanted), chunk in itertools.product(situations, (1024, N + 904)):
        with case(_describe({**values, "chunk_size": chunk}) + situation):
            inputs = make_inputs({**values, "chunk_size": chunk})
            for name in {"x", "weight"} - set(wanted):
                inputs[name].requires_grad_(False)
            with torch.set_grad_enabled(bool(wanted)):
                output = function.apply(*inputs.values())
            got = {"loss": output.detach()}
            if "weight" in wanted:
                got["grad_weight"] = torch.autograd.grad(output, inputs["weight"])[0]
            for name, true in (("loss", loss), ("grad_weight", grad_weight)):
                if name not in got:
                    continue
                value = got[name]
                error = ((value.double() - true).abs().max() / true.abs().max()).item()
                if not value.isfinite().all():
                    raise GradingError(
                        f"{NAME}'s {name} is not finite in float16{situation} (N={N}, "
                        f"chunk_size={chunk}) where its largest true entry is "
                        f"{true.abs().max().item():.3g}: its sum over the rows before the "
                        f"division by N reaches {sums[name]:.3g}, past float16's largest number "
                        "(65504), so a sum over rows held in float16 before dividing by N (a "
                        "float32 sum cast early, or a chunk's rows summed in float16) "
                        "overflows; where is yours in float16 before the division?",
                        mistake=f"{NAME}/casts-before-dividing-by-n")
                if not error <= RANGE_TOLERANCE:
                    diagnose_values(f"{NAME}'s {name}{situation}", value.double(), true,
                                    rtol=0, atol=RANGE_TOLERANCE * true.abs().max().item())
