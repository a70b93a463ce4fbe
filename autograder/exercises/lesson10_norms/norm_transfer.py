"""Lesson 10's transfer exercise: GroupNormFunction, graded against the group-norm formula in
composed ops (in torch 2.13 on CPU, F.group_norm's own backward raises "tensor does not have
a device" when weight is None and bias is given, so it cannot be the reference)."""

import warnings

import torch

from ...checks import (case, check_backward_by_hand, check_is_function,
                      check_no_ctx_tensors, check_values_and_gradients, make_inputs,
                      run_forward)
from ...contract import check_each_input_alone, covers
from ...domain import Case, Constant, Domain, Tolerance
from ...errors import GradingError
from ...exercise import Exercise, sample
from .norm_checks import (check_needs_input_grad, check_returned, gradient_terms,
                          record_backward_returns)
from .norm_eps_backward import check_eps_placement
from .norm_offsets import check_shifted_rows
from .norm_rank import recognise_fixed_rank
from .norm_saved import check_budget, check_saved_precision
from .norm_square import check_no_square_matrix
from .group_norm_spec import GROUP_NORM, NAME, describe, gn_values, group_norm

KEEP = ("which of the tensors backward reads can it rebuild from the others, and which does "
        "the caller hold anyway?")
# (x's shape, num_groups): spatial dims or none, one group (LayerNorm over C and positions),
# one channel per group (instance norm), N = 1
CASES = [((2, 6, 5), 3), ((3, 4), 2), ((2, 4, 2, 3), 2), ((2, 3, 4), 1), ((2, 4, 3), 4),
         ((1, 6, 2, 2), 3)]


def check_terms(function, device) -> None:
    """Name a left-out term of grad_x: each group is a row of LayerNorm's derivation."""
    values = gn_values((2, 4, 3), 2, device, weight=False, bias=False, seed=5)
    inputs = make_inputs(values)
    output = function.apply(*inputs.values())
    grad_output = sample(output.shape, device, seed=6)
    grad_x, = torch.autograd.grad(output, inputs["x"], grad_output)
    rows = (2, 2, -1)
    terms = gradient_terms(values["x"].reshape(rows), None, grad_output.reshape(rows), 1e-5,
                           centred=True)
    got = grad_x.double().reshape(rows)
    if torch.allclose(got, sum(terms.values()), rtol=1e-4, atol=1e-6):
        return
    for kept, what, mistake in (
            (("direct", "mean"), "the projection term: rstd moves with x too",
             "misses-projection-term"),
            (("direct", "projection"), "the mean term: the group mean moves with x",
             "misses-mean-term"),
            (("direct",), "the mean and projection terms: the group's mean and rstd move with x",
             "statistics-held-constant")):
        if torch.allclose(got, sum(terms[n] for n in kept), rtol=1e-4, atol=1e-6):
            raise GradingError(f"{NAME}'s grad_x misses {what} (each group is one row of the "
                               "LayerNorm derivation)", case=describe(values),
                               mistake=f"{NAME}/{mistake}")
    # a group's sums divided by its channels, C / num_groups, not by its M elements
    C, G = values["x"].shape[1], values["num_groups"]
    positions = values["x"].shape[2:].numel()
    if torch.allclose(got, terms["direct"] + positions * (terms["mean"] + terms["projection"]),
                      rtol=1e-4, atol=1e-6):
        raise GradingError(f"{NAME}'s grad_x divides each group's sums by C / num_groups = "
                           f"{C // G}, the channels of a group, where a group holds "
                           f"M = C / num_groups x positions = {C // G * positions} elements: "
                           f"its mean and projection terms are {positions} times the right "
                           "ones", case=describe(values), mistake=f"{NAME}/group-size-without-positions")


def check_saved(forward, values: dict) -> None:
    """The contract's budget: x's size in x's dtype, two numbers per group, the weight free."""
    x = values["x"]
    check_budget(NAME, forward, x, values["weight"], rows=x.shape[0] * values["num_groups"],
                 per_row=2, keep_hint=KEEP, unit="group")


def recognise_per_channel(function, values: dict) -> None:
    """Statistics per channel instead of per group: instance norm's output (never on an empty
    batch, where every output is empty and alike: the error itself is quoted there)."""
    if not values["x"].numel():
        return
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    channels = values["x"].shape[1]
    if channels == values["num_groups"] or not isinstance(output, torch.Tensor):
        return
    instance = group_norm(**{**values, "num_groups": channels})
    if output.shape == instance.shape and torch.allclose(output, instance):
        raise GradingError(f"{NAME} normalises each channel on its own (instance norm): a "
                           f"group is C / num_groups consecutive channels, with every "
                           f"position of each, and shares one mean and one rstd",
                           mistake=f"{NAME}/instance-norm")
    for misreading, hint in ((_interleaved, "puts channel c in group c % num_groups: a group "
                              "is C / num_groups consecutive channels (channels 0 to C/G - 1 "
                              "form group 0, the next C/G group 1, and so on)"),
                             (_per_position, "normalises each position of a group separately: "
                              "a group's mean and rstd run over its channels and every "
                              "position of them (all the spatial dims) at once")):
        other = misreading(values)
        if other is not None and output.shape == other.shape and torch.allclose(output, other):
            raise GradingError(f"{NAME} {hint}")


def recognise_unbiased(function, values: dict) -> None:
    """Each group's variance divided by its count less one (torch.var's default)."""
    x, groups = values["x"], values["num_groups"]
    if x.numel() == 0 or x[0].numel() // groups < 2:
        return
    try:
        with torch.no_grad():
            output = function.apply(*make_inputs(values, requires_grad=False).values())
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    rows = x.reshape(x.shape[0], groups, -1)
    variance, mean = torch.var_mean(rows, -1, keepdim=True, correction=1)
    unbiased = _affine(((rows - mean) * torch.rsqrt(variance + values["eps"])).reshape(x.shape),
                       values)
    if isinstance(output, torch.Tensor) and output.shape == unbiased.shape and \
            torch.allclose(output, unbiased):
        raise GradingError(f"{NAME} normalises each group with the unbiased variance (divided "
                           "by the group's count less one, correction=1): does group norm divide "
                           "by the count or by the count less one?",
                           mistake=f"{NAME}/unbiased-variance")


def check_shifted(function, device) -> None:
    """Groups far from 0 with a spread of 1, in float32 (1e4) and float64 (1e8), where
    E[x^2] - E[x]^2 cancels: as LayerNorm's rows (the contract's accuracy bullet)."""
    for dtype, shift in ((torch.float32, 1e4), (torch.float64, 1e8)):
        values = gn_values((2, 4, 3), 2, device, seed=27, dtype=dtype)
        values["x"] = values["x"] + shift
        with case(f"groups like {shift:.0e} + N(0, 1), x of shape (2, 4, 3), num_groups=2, "
                  f"{str(dtype).removeprefix('torch.')}".replace("e+0", "e")):
            check_shifted_rows(function, GROUP_NORM, values, shift,
                               tolerance=1e-2 if dtype == torch.float32 else 1e-6)


def _affine(y, values: dict):
    per_channel = (values["x"].shape[1],) + (1,) * (values["x"].dim() - 2)
    if values["weight"] is not None:
        y = y * values["weight"].reshape(per_channel)
    if values["bias"] is not None:
        y = y + values["bias"].reshape(per_channel)
    return y


def _interleaved(values: dict):
    """Group norm with channel c in group c % G."""
    x, G = values["x"], values["num_groups"]
    N, C = x.shape[:2]
    if G in (1, C):
        return None
    order = torch.arange(C, device=x.device).reshape(C // G, G).T.reshape(-1)  # group by group
    y = torch.empty_like(x)
    y[:, order] = group_norm(x[:, order], G, None, None, values["eps"])
    return _affine(y, values)


def _per_position(values: dict):
    """Each position's channels of a group normalised on their own (spatial dims left out)."""
    x, G = values["x"], values["num_groups"]
    if x.dim() < 3 or x[0, 0].numel() == 1:
        return None
    N, C = x.shape[:2]
    rows = x.reshape(N, G, C // G, -1)
    mean = rows.mean(2, keepdim=True)
    centred = rows - mean
    y = (centred * torch.rsqrt(centred.square().mean(2, keepdim=True) + values["eps"]))
    return _affine(y.reshape(x.shape), values)


def recognise_weight(function, values: dict) -> None:
    """grad_x with g = grad_output, the weight left out, or multiplied in after the group
    means: each compared with the learner's grad_x for the same grad_output."""
    weight = values["weight"]
    if not values["x"].numel() or weight is None or torch.allclose(weight, torch.ones_like(weight)):
        return
    inputs = make_inputs(values, requires_grad={"x"})
    try:
        output = function.apply(*inputs.values())
        grad_output = sample(tuple(output.shape), output.device, seed=6, dtype=output.dtype)
        got, = torch.autograd.grad(output, inputs["x"], grad_output)
    except Exception:  # the learner's code may raise anything: the first hint stands
        return
    if not isinstance(got, torch.Tensor) or got.shape != values["x"].shape:
        return
    if output.shape != values["x"].shape or not torch.allclose(output.detach(),
                                                                group_norm(**values)):
        return  # the output is wrong too: the hints below are about grad_x alone
    x = values["x"].detach().requires_grad_()
    G, eps = values["num_groups"], values["eps"]
    truth, = torch.autograd.grad(group_norm(x, G, weight, None, eps), x, grad_output)
    plain, = torch.autograd.grad(group_norm(x, G, None, None, eps), x, grad_output)
    per_channel = (x.shape[1],) + (1,) * (x.dim() - 2)
    if torch.allclose(got, truth, rtol=1e-4, atol=1e-6):
        return
    if torch.allclose(got, plain, rtol=1e-4, atol=1e-6):
        raise GradingError(f"{NAME}'s grad_x ignores the weight: y = weight * x_hat per "
                           "channel (dim 1), so dL/dx_hat carries it",
                           mistake=f"{NAME}/ignores-weight")
    if torch.allclose(got, plain * weight.reshape(per_channel), rtol=1e-4, atol=1e-6):
        raise GradingError(f"{NAME}'s grad_x multiplies by the weight after the group means: "
                           "a group holds several channels, each with its own weight; which g "
                           "do the group means take, dL/dy or dL/dx_hat?",
                           mistake=f"{NAME}/weight-after-group-means")


def check_case(function, values: dict, *, tolerance=None) -> None:
    probe, returned = record_backward_returns(function)
    with case(describe(values)):
        try:
            forward, backward = check_values_and_gradients(probe, GROUP_NORM, values,
                                                           **(tolerance or {}))
        except GradingError:
            recognise_fixed_rank(function, values)
            recognise_per_channel(function, values)
            recognise_weight(function, values)
            recognise_unbiased(function, values)
            raise
        except NotImplementedError:
            raise
        except Exception as error:  # the learner's own error, which no probe explains
            raise _raised(error, values) from error
        check_returned(GROUP_NORM, returned[-1], make_inputs(values))
        check_no_ctx_tensors(GROUP_NORM, forward)
        check_backward_by_hand(GROUP_NORM, backward)
        x = values["x"]  # the saved sizes tell nothing apart in an empty batch
        if x.numel() and (x.shape[2:].numel() > 1 or x.shape[1] > values["num_groups"]):
            check_saved(forward, values)


def _raised(error: Exception, values: dict) -> GradingError:
    """The learner's own error, quoted, in the case it raised in (case() adds the inputs)."""
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    empty = (": an empty batch, N = 0, has no x[0]; which sizes does your code read off a "
             "sample rather than off x.shape?" if values["x"].shape[0] == 0 else "")
    return GradingError(f"{NAME} raised {type(error).__name__}: {message}{empty}", str(error))


def full(submission, device) -> None:
    """The battery on ``device``."""
    function = check_is_function(submission, GROUP_NORM)
    with case("x of shape (2, 4, 3), num_groups=2, float64"):
        check_saved_precision(function, GROUP_NORM, gn_values((2, 4, 3), 2, device))
    check_terms(function, device)
    spread = gn_values((2, 4, 3), 2, device, seed=24, eps=0.5)
    spread["x"][:, :2] *= 0.1  # the first group's variance far below eps, the second's above
    check_eps_placement(function, GROUP_NORM, spread,
                        group_norm(**spread, eps_outside_root=True),
                        group_norm(**spread, eps_floor=True), unit="groups",
                        described=describe(spread))
    covers("eps=0.5")  # eps across its range, float32 and strided inputs: the domain's
    for seed, (shape, groups) in enumerate(CASES):
        check_case(function, gn_values(shape, groups, device, seed=seed))
    covers("x without spatial dims")
    with case("x of shape (2, 4, 16), num_groups=2, float64"):  # groups of 32: no 32 x 32 matrix
        check_no_square_matrix(function, GROUP_NORM, gn_values((2, 4, 16), 2, device, seed=31),
                               32, "group")
    with case("x of shape (2, 4, 3), num_groups=2, float32"):
        values = gn_values((2, 4, 3), 2, device, seed=7, dtype=torch.float32)
        check_saved(run_forward(function, GROUP_NORM, make_inputs(values)), values)
    for seed, (weight, bias) in enumerate([(False, True), (True, False), (False, False)]):
        check_case(function, gn_values((2, 6, 3), 3, device, weight=weight, bias=bias,
                                       seed=10 + seed))
    covers("weight=None")
    covers("bias=None")
    values = gn_values((2, 4, 2, 3), 2, device, seed=29)
    values["x"] = values["x"].transpose(2, 3)  # a view no view() flattens the spatial dims of
    with case("its spatial dims transposed"):
        check_case(function, values)
    check_shifted(function, device)
    covers("groups like 1e4 + N(0, 1) in float32")
    covers("groups like 1e8 + N(0, 1) in float64")
    # 6 groups, 4 channels, 12 (sample, channel) pairs: a group sum differs from the others
    # (and with weight=None or bias=None: a branch for a missing weight reads needs_input_grad too)
    for weight, bias, dtype in ((True, True, torch.float64), (False, True, torch.float64),
                                (True, False, torch.float64), (True, True, torch.float32)):
        values = gn_values((3, 4, 2), 2, device, weight=weight, bias=bias, seed=26, dtype=dtype)
        with case(describe(values)):
            check_needs_input_grad(function, GROUP_NORM, values, rows=6)
    # the contract: None for, and nothing computed of, a gradient nobody needs
    check_each_input_alone(function, GROUP_NORM, gn_values((2, 4, 3), 2, device, seed=22),
                           frozen_get_none=True)
    # an empty batch, as F.group_norm takes it, last: a slip of shape, after every slip of maths
    with warnings.catch_warnings():  # torch.var_mean warns of 0 degrees of freedom there
        warnings.filterwarnings("ignore", message=r"var(_mean)?\(\): degrees of freedom")
        check_case(function, gn_values((0, 4, 3), 2, device, seed=30))
    covers("an empty batch")


def _groups_apart(device, dtype) -> dict:
    """Groups of one tensor shifted far apart (0, 1e4, -3e3, 5e3): one shift for the whole
    tensor leaves the others' variance to cancel."""
    values = gn_values((2, 4, 3), 2, device, seed=28)
    shift = torch.tensor([0.0, 1e4, -3e3, 5e3], dtype=torch.float64, device=device)
    values["x"] = (values["x"].reshape(2, 2, -1) + shift.reshape(2, 2, 1)).reshape(2, 4, 3)
    return {n: v.to(dtype) if isinstance(v, torch.Tensor) else v for n, v in values.items()}


LATER_IN_LESSON = True  # the lesson's last exercise
EXERCISES = [
    Exercise(NAME, "10_norms", full,
             example=lambda: tuple(gn_values((2, 4, 3), 2, "cpu").values()),
             # two shapes by seed (C = 4 either way, so that every num_groups divides it)
             domain=Domain(GROUP_NORM, lambda device, dtype=torch.float64, seed=0, num_groups=2,
                           eps=1e-5: gn_values((2, 4, 3) if seed % 2 == 0 else (3, 4, 2, 2),
                                               num_groups, device, seed=seed, dtype=dtype,
                                               eps=eps),
                           constants={"num_groups": Constant(1, 4, "C divisible by num_groups",
                                                             integer=True),
                                      "eps": Constant(1e-12, 1.0, "eps a Python float > 0",
                                                      also=(0.5,))},
                           rows_apart=Case(_groups_apart, "float32 groups such as 1e4 + N(0, 1) "
                                           "keep their accuracy, each group on its own",
                                           torch.float32, Tolerance(0, 1e-2))),
             contract=("x without spatial dims", "weight=None", "bias=None", "eps=0.5",
                       "groups like 1e4 + N(0, 1) in float32",
                       "groups like 1e8 + N(0, 1) in float64", "an empty batch")),
]
