"""Lesson 10: RMSNorm, an nn.Module whose forward calls RMSNormFunction.apply, graded against
torch.nn.RMSNorm: its parameter, its state_dict, values, gradients and a few SGD steps."""

import copy
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from ...checks import Spec, case
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from .norm_graph import custom_node
from .norm_half import (check_bfloat16_weight_range, check_half_range,
                        check_half_x_in_float32_module)
from .norm_module_eps import (DEFAULT_EPS, DIM, HALF, HELD, NAME, build,
                              check_default_eps, check_half,
                              check_own_eps, check_positional_eps, check_zero_eps, loaded_pair)

def check_module_class(submission) -> type:
    """The submission is a subclass of nn.Module (the class itself)."""
    if isinstance(submission, nn.Module):
        raise GradingError(f"{NAME} is an instance: pass the class itself, which is built as "
                           f"{NAME}(dim, eps=1e-6)")
    if not (isinstance(submission, type) and issubclass(submission, nn.Module)):
        raise GradingError(f"{NAME} must be a class deriving from torch.nn.Module, got "
                           f"{type(submission).__name__}")
    return submission


def check_parameter(module: nn.Module, dim: int) -> None:
    """Exactly one nn.Parameter, named weight, of shape (dim,), ones at start."""
    parameters = dict(module.named_parameters())
    if not parameters:
        plain = isinstance(getattr(module, "weight", None), torch.Tensor)
        raise GradingError(f"{NAME} has no parameters" + (
            ": its weight is a plain tensor attribute, which optimisers, .to() and state_dict "
            "do not see: what makes a module count a tensor as one of its parameters?" if plain else ": give it one nn.Parameter, weight"))
    if list(parameters) != ["weight"]:
        raise GradingError(f"{NAME} has the parameters {list(parameters)}: give it exactly one, "
                           "named weight, as torch.nn.RMSNorm (its state_dict key)")
    weight = parameters["weight"]
    if tuple(weight.shape) != (dim,):
        raise GradingError(f"{NAME}({dim}).weight has shape {tuple(weight.shape)}: it should "
                           f"be ({dim},)")
    expected = nn.RMSNorm(dim).weight.dtype  # torch's default dtype, float32 unless changed
    if weight.dtype != expected:
        raise GradingError(f"{NAME}({dim}).weight is {str(weight.dtype).removeprefix('torch.')}"
                           f", where torch.nn.RMSNorm({dim}).weight is "
                           f"{str(expected).removeprefix('torch.')}: its state_dict differs, and "
                           "a float32 input comes out in another dtype; which dtype does a "
                           "tensor made without one get?", mistake=f"{NAME}/weight-dtype")
    if not torch.equal(weight.detach(), torch.ones_like(weight)):
        raise GradingError(f"{NAME}({dim}).weight does not start as ones: a fresh RMSNorm is "
                           "the identity scaling, torch.ones(dim)")


def check_own_weight(cls: type, dim: int) -> None:
    """Two modules built alike own two weights: a weight shared between instances (a cached
    tensor wrapped in nn.Parameter, a class attribute) moves them all when one trains or
    loads a state_dict."""
    first, second = build(cls, dim), build(cls, dim)
    weights = [getattr(module, "weight", None) for module in (first, second)]
    if not all(isinstance(weight, torch.Tensor) and weight.numel() for weight in weights):
        return  # check_parameter names a missing weight
    if weights[0].untyped_storage().data_ptr() == weights[1].untyped_storage().data_ptr():
        raise GradingError(f"two {NAME}({dim}) modules share one weight tensor: loading a "
                           "state_dict into one, or training it, changes the other; each "
                           "module must build its own weight in __init__",
                           mistake=f"{NAME}/shared-weight")


def _why_no_weight_gradient(output: torch.Tensor, weight: nn.Parameter) -> str:
    """Which of three things kept the gradient from the parameter, read off the graph."""
    if not weight.requires_grad:
        return (f"{NAME}.weight does not require grad (nn.Parameter(..., requires_grad=False), "
                "or requires_grad_(False)): an optimiser would never move it; keep the default")
    node = custom_node(output)
    if node is not None and _reaches(node, weight):
        return (f"{NAME} passes self.weight to RMSNormFunction.apply, and its backward "
                "returns None for it: return the weight's gradient when "
                "ctx.needs_input_grad[1] is True")
    return (f"{NAME}.weight received no gradient: the weight RMSNormFunction.apply receives is "
            "cut off from self.weight (.data, .detach() or a copy); pass the parameter itself")


def _reaches(node, weight: torch.Tensor) -> bool:
    """True when the graph below ``node`` accumulates into ``weight`` (through any ops)."""
    stack, seen = [next_node for next_node, _ in node.next_functions], set()
    while stack and len(seen) < 50:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if getattr(node, "variable", None) is weight:
            return True
        stack.extend(next_node for next_node, _ in node.next_functions)
    return False


def check_matches(cls: type, shape: tuple, device, dtype=torch.float64, *, eps=DEFAULT_EPS,
                  seed=0, tolerance=None, state_dtype=None) -> None:
    """Loaded from torch.nn.RMSNorm's state_dict, the module gives its values and gradients,
    in their dtypes, for an input in ``dtype`` (its state in ``state_dtype``, by default the
    same)."""
    tolerance = tolerance or {}
    reference, mine = loaded_pair(cls, shape[-1], device, state_dtype or dtype, eps=eps,
                                  seed=seed)
    x = sample(shape, device, seed=seed, dtype=dtype)
    x_mine, x_reference = x.clone().requires_grad_(), x.clone().requires_grad_()
    output = mine(x_mine)
    with warnings.catch_warnings():  # a float64 x and a float32 weight: torch says it unfused
        warnings.filterwarnings("ignore", "Mismatch dtype between input and weight")
        expected = reference(x_reference)
    if not isinstance(output, torch.Tensor) or custom_node(output) is None:
        raise GradingError(f"{NAME}.forward does not call RMSNormFunction.apply: the module "
                           "wraps the Function you wrote, with self.weight and self.eps")
    # a float64 x is computed in float64 by torch, whatever the weight's dtype: its output and
    # grad_x are graded to float64's precision (a float32 step is noted, named at the end)
    wide = {"computed_in": torch.float64, "rtol": 1e-9, "atol": 1e-10} \
        if dtype == torch.float64 else {}
    diagnose_values(f"{NAME}'s output", output, expected, **{**wide, **tolerance})
    grad_output = sample(shape, device, seed=seed + 1, dtype=dtype)
    output.backward(grad_output)
    expected.backward(grad_output)
    diagnose_gradient("x", x_mine.grad, x_reference.grad, **{**wide, **tolerance})
    if mine.weight.grad is None:
        raise GradingError(_why_no_weight_gradient(output, mine.weight))
    diagnose_gradient("weight", mine.weight.grad, reference.weight.grad,
                      **({**wide, **tolerance} if mine.weight.dtype == torch.float64
                         else tolerance))


def check_as_built(cls: type, device) -> None:
    """``RMSNorm(dim)`` moved to ``device`` alone, its dtype as built, and torch.nn.RMSNorm(dim)
    likewise: the same output and gradients, in the same dtypes, for a float32 input."""
    mine, reference = build(cls, DIM).to(device), nn.RMSNorm(DIM, eps=DEFAULT_EPS).to(device)
    x = sample((3, DIM), device, seed=12, dtype=torch.float32)
    x_mine, x_reference = x.clone().requires_grad_(), x.clone().requires_grad_()
    output, expected = mine(x_mine), reference(x_reference)
    if isinstance(output, torch.Tensor) and output.dtype != expected.dtype:
        raise GradingError(f"{NAME}({DIM})(x) is {str(output.dtype).removeprefix('torch.')} for "
                           f"a float32 x, where torch.nn.RMSNorm({DIM})'s is float32: keep the "
                           "input's dtype", mistake=f"{NAME}/weight-dtype")
    diagnose_values(f"{NAME}'s output", output, expected, rtol=1e-5, atol=1e-5)
    grad_output = sample((3, DIM), device, seed=13, dtype=torch.float32)
    output.backward(grad_output)
    expected.backward(grad_output)
    diagnose_gradient("x", x_mine.grad, x_reference.grad, rtol=1e-5, atol=1e-5)


def check_training(cls: type, device, dtype=torch.float64, *, steps=4, rtol=1e-7) -> None:
    """Linear -> norm -> Linear trained with SGD on the same data: after every step the
    learner's weight equals torch.nn.RMSNorm's."""
    first, last = nn.Linear(DIM, DIM), nn.Linear(DIM, 2)
    with torch.no_grad():
        for seed, parameter in enumerate([*first.parameters(), *last.parameters()]):
            parameter.copy_(sample(parameter.shape, "cpu", seed=200 + seed))
    reference = nn.Sequential(first, nn.RMSNorm(DIM, eps=DEFAULT_EPS), last)
    reference = reference.to(device=device, dtype=dtype)
    mine = nn.Sequential(copy.deepcopy(first), build(cls, DIM, eps=DEFAULT_EPS),
                         copy.deepcopy(last)).to(device=device, dtype=dtype)
    mine[1].load_state_dict(reference[1].state_dict())
    inputs = sample((16, DIM), device, seed=300, dtype=dtype)
    targets = sample((16, 2), device, seed=301, dtype=dtype)
    optimisers = [torch.optim.SGD(model.parameters(), lr=0.2) for model in (reference, mine)]
    for step in range(1, steps + 1):
        for model, optimiser in zip((reference, mine), optimisers):
            optimiser.zero_grad()
            nn.functional.mse_loss(model(inputs), targets).backward()
            optimiser.step()
        got, want = mine[1].weight.detach(), reference[1].weight.detach()
        if not torch.allclose(got, want, rtol=rtol, atol=rtol):
            raise GradingError(
                f"after {step} SGD step{'s' if step > 1 else ''} {NAME}.weight differs from "
                f"torch.nn.RMSNorm's by {(got - want).abs().max().item():.3g}: its gradient "
                "must reach self.weight (pass the parameter itself to RMSNormFunction.apply)")


def _stale(mine: nn.Module, x: torch.Tensor, event: str, described: str) -> None:
    """After ``event``, the used module's output is a fresh module's holding its weight now."""
    reference = nn.RMSNorm(DIM, eps=DEFAULT_EPS).to(device=x.device, dtype=mine.weight.dtype)
    fresh = build(type(mine), DIM, eps=DEFAULT_EPS).to(device=x.device, dtype=mine.weight.dtype)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Mismatch dtype between input and weight")
        reference.weight.copy_(mine.weight)
        fresh.load_state_dict(reference.state_dict())
        got, want, new = mine(x), reference(x), fresh(x)
    if not all(isinstance(t, torch.Tensor) and t.shape == want.shape for t in (got, new)):
        return  # the output's shape is the other checks' to name
    tolerance = HALF.get(x.dtype, 1e-9)
    if torch.allclose(got.double(), want.double(), rtol=tolerance, atol=tolerance) or \
            not torch.allclose(new.double(), want.double(), rtol=tolerance, atol=tolerance):
        return  # right, or wrong for a fresh module too: the other checks name that
    gap = (got.double() - want.double()).abs().max().item()
    raise GradingError(
        f"{NAME} computes with a copy of its weight kept from an earlier call: {described}, "
        f"called once, then {event}, gives outputs {gap:.3g} "
        "away from torch.nn.RMSNorm's with the same weight (a fresh module gives them); a copy "
        "of the parameter (.to(dtype), .float()) is a new tensor that load_state_dict and an "
        "optimiser never update: derive it from self.weight on every call",
        mistake=f"{NAME}/stale-weight-copy")


# (the module's dtype, x's): every case where x is not in the weight's dtype, or is computed
# in another, so that a copy of the weight is a new tensor
USED = ((torch.float32, torch.float64), (torch.bfloat16, torch.bfloat16),
        (torch.float16, torch.float16))


def check_used(cls: type, device, configurations=USED) -> None:
    """A module that has run still computes with its weight as it is now: called once, then
    loaded from torch.nn.RMSNorm's state_dict, then moved by an SGD step, its outputs are those
    of torch.nn.RMSNorm holding the same weight (``USED``)."""
    for state, dtype in configurations:
        described = (f"a {_short(state)} module" + (f" given a {_short(dtype)} x"
                                                    if dtype != state else ""))
        with case(f"x of shape (3, {DIM}), {_short(dtype)}, {described}, used before "
                  "load_state_dict and an SGD step"):
            mine = build(cls, DIM, eps=DEFAULT_EPS).to(device=device, dtype=state)
            x = sample((3, DIM), device, seed=21, dtype=dtype)
            mine(x)
            source = nn.RMSNorm(DIM, eps=DEFAULT_EPS).to(device=device, dtype=state)
            with torch.no_grad():
                source.weight.copy_(1 + 0.5 * sample((DIM,), device, seed=22, dtype=state))
            mine.load_state_dict(source.state_dict())
            _stale(mine, x, "load_state_dict", described)
            optimiser = torch.optim.SGD(mine.parameters(), lr=0.5)
            output = mine(x)
            if isinstance(output, torch.Tensor) and output.requires_grad:
                (output.double() * sample((3, DIM), device, seed=23)).sum().backward()
            if mine.weight.grad is None:  # a half module's weight cut off names it so
                raise GradingError(f"{described}: {_why_no_weight_gradient(output, mine.weight)}",
                                   mistake=f"{NAME}/half-weight-cut-off" if state in HALF
                                   else "")
            optimiser.step()
            _stale(mine, x, "one SGD step", described)


def _short(dtype) -> str:
    return str(dtype).removeprefix("torch.")


MODULE = Spec(NAME, ("x", "weight", "eps"),
              lambda x, weight, eps=DEFAULT_EPS: F.rms_norm(x, x.shape[-1:], weight, eps))


class WithWeight:
    """``apply(x, weight, eps)``: the learner's module, built as ``RMSNorm(dim, eps=eps)``,
    called with ``weight`` in place of its parameter (``torch.func.functional_call``), so that
    x and the weight can each be the only input that requires grad, and two modules of
    different eps can run in one graph (the domain's per call)."""

    def __init__(self, cls: type):
        self.cls = cls

    def apply(self, x, weight, eps=DEFAULT_EPS):
        module = build(self.cls, x.shape[-1], eps=eps).to(device=x.device, dtype=x.dtype)
        return torch.func.functional_call(module, {"weight": weight}, (x,))


def _module_values(device, dtype=torch.float64, seed=0, eps=DEFAULT_EPS) -> dict:
    """x and weight of two shapes by seed (two modules in one graph differ in size too)."""
    shape = (2, 3, DIM) if seed % 2 == 0 else (4, DIM - 1)
    return {"x": sample(shape, device, seed=seed, dtype=dtype),
            "weight": 1 + 0.5 * sample(shape[-1:], device, seed=seed + 1, dtype=dtype),
            "eps": eps}


def full(submission, device) -> None:
    """The hidden battery on ``device``; a failure that a correct RMSNormFunction in place of
    the learner's takes away is said to come from their RMSNormFunction."""
    try:
        _held_battery(submission, device)
    except GradingError as error:
        if not _passes_with_reference_function(submission, device):
            raise
        raise GradingError(f"{NAME} fails through the RMSNormFunction it calls (with a correct "
                           f"RMSNormFunction in its place it passes): fix RMSNormFunction "
                           f"first; {NAME} saw: {error.hint}", error.details,
                           mistake=error.mistake or f"{NAME}/fails-through-function") from error


def _held_battery(submission, device) -> None:
    """The battery; a half output rounded per step is named at its end, when nothing else was
    (a float16 overflow, a wrong eps say more); then, last, half inputs to a float32 module, as
    autocast makes them: the output in x's dtype, rounded once."""
    held = []
    token = HELD.set(held)
    try:
        _battery(submission, device)
    finally:
        HELD.reset(token)
    if held:
        raise held[0]
    with case(f"x of shape (3, {DIM}), bfloat16 and float16, the module float32"):
        check_half_x_in_float32_module(check_module_class(submission), device)


class _ReferenceRMSNormFunction(torch.autograd.Function):
    """A correct RMSNormFunction, put in the learner's in place to tell where a failure comes
    from."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        ctx.save_for_backward(x, weight, rstd)
        y = x * rstd
        return y * weight if weight is not None else y

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, rstd = ctx.saved_tensors
        x_hat = x * rstd
        grad_x = grad_weight = None
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
        return grad_x, grad_weight, None


def _passes_with_reference_function(submission, device) -> bool:
    """Does the module pass once the RMSNormFunction its forward reads is a correct one?"""
    forward = getattr(submission, "forward", None) if isinstance(submission, type) else None
    names = getattr(forward, "__globals__", None)
    learner = names.get("RMSNormFunction") if names is not None else None
    if not (isinstance(learner, type) and issubclass(learner, torch.autograd.Function)):
        return False
    names["RMSNormFunction"] = _ReferenceRMSNormFunction
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _held_battery(submission, device)
    except Exception:  # the module's own failure, or anything else: the first hint stands
        return False
    finally:
        names["RMSNormFunction"] = learner
    return True


def _battery(submission, device) -> None:
    cls = check_module_class(submission)
    check_own_weight(cls, DIM)
    for dim in (DIM, 1):
        check_parameter(build(cls, dim), dim)
    for seed, shape in enumerate([(3, 4, DIM), (DIM,), (1, DIM), (5, 1)]):
        with case(f"x of shape {shape}, float64"):
            check_matches(cls, shape, device, seed=seed)
    with case(f"x of shape (3, {DIM}), float32"):
        check_matches(cls, (3, DIM), device, torch.float32, seed=4,
                      tolerance={"rtol": 1e-5, "atol": 1e-5})
    with case(f"x of shape (3, {DIM}), float64, the module's weight float32"):
        check_matches(cls, (3, DIM), device, seed=5, state_dtype=torch.float32)
    # eps across its range, float32 and strided inputs: the domain's, through WithWeight
    covers("torch.nn.RMSNorm's state_dict")
    check_default_eps(cls, device)
    check_positional_eps(cls, device)
    check_own_eps(cls, device)
    check_zero_eps(cls, device)
    with case(f"x of shape (3, {DIM}), float32, the module as built (no .to(dtype))"):
        check_as_built(cls, device)
    check_each_input_alone(WithWeight(cls), MODULE,
                           {"x": sample((3, DIM), device, seed=7),
                            "weight": 1 + 0.5 * sample((DIM,), device, seed=8),
                            "eps": DEFAULT_EPS})
    with case("Linear -> RMSNorm -> Linear, float64"):
        check_training(cls, device, steps=5)
    with case("Linear -> RMSNorm -> Linear, float32"):
        check_training(cls, device, torch.float32, steps=5, rtol=1e-4)
    check_used(cls, device, USED[:1])  # the outputs clause, on a module that has run
    covers("SGD steps beside torch.nn.RMSNorm")
    # last, after every other clause: half precision
    for dtype in HALF:  # the output only, in the input's dtype, to its precision
        check_half(cls, device, dtype)
    covers("float16 and bfloat16 outputs")
    check_used(cls, device, USED[1:])
    for dtype in HALF:  # last: both ends of float16's range, |x| near 300 and near 1e-4
        check_half_range(cls, device, dtype)
    with case(f"x of shape (3, {DIM}), bfloat16, the module's weight holding 1e5 and 1e-8"):
        check_bfloat16_weight_range(cls, device)


LATER_IN_LESSON = True  # after the lesson's other module's exercises
EXERCISES = [
    # graded as apply(x, weight, eps): RMSNorm(dim, eps=eps) called with weight in place of
    # its parameter; what is particular to a module (its parameter, state_dict, default eps,
    # training) stays in the battery
    Exercise(NAME, "10_norms", full, contract=("torch.nn.RMSNorm's state_dict",
                                               "float16 and bfloat16 outputs",
                                               "SGD steps beside torch.nn.RMSNorm"),
             # float64 only: float32 is the battery's; no memory rule for the module (a float32
             # x computed in float64, its float64 copy saved, passes)
             domain=Domain(MODULE, _module_values, dtypes=(torch.float64,),
                           dtype_clause="the same outputs and gradients as torch.nn.RMSNorm, "
                                        "in the same dtypes",
                           prepare=lambda submission: WithWeight(check_module_class(submission)),
                           constants={"eps": Constant(1e-12, 1.0, "RMSNorm(dim, eps=1e-6): eps "
                                                      "a float > 0", also=(0.1,))})),
]
