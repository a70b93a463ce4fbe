"""Lesson 08's transfer exercise: squared_norm as the custom operator
autograd_course::squared_norm, with a fake implementation, a hand-written backward and a
batching rule registered with torch.library.register_vmap (not the per-sample fallback)."""

from types import SimpleNamespace

import torch
from torch._library.custom_ops import _maybe_get_opdef

from ...checks import (case, check_backward_by_hand, check_no_ctx_tensors,
                      check_values_and_gradients)
from ...contract import check_each_input_alone, covers
from ...domain import Constant, Domain, sampled
from ...errors import GradingError
from ...exercise import Exercise, sample
from .reduced_dim import Reduction, check_dim_from_shapes, check_grad_output_unsqueezed
from .operators import _Calls, check_custom_operator, fake_and_real, operator_of, run_opcheck
from .squared_norm_vmap import (BATCH_POSITIONS, BATCHED, SQUARED_NORM, _operator_error,
                                _vmapped, check_vmap,
                                check_fresh_batches)

LATER_IN_LESSON = True
OPERATOR = "autograd_course::squared_norm"
# (x's shape, dim): first, middle, last and negative dims, a 1-D x to a 0-d result
CASES = [((3, 4), 1), ((3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), -3), ((5,), 0),
         ((5,), -1), ((4, 4), 0), ((2, 3, 3), 1)]


def check_operator(squared_norm) -> None:
    """squared_norm is the current definition of autograd_course::squared_norm and calls it."""
    check_custom_operator(squared_norm, "squared_norm", (torch.ones(2, 3, dtype=torch.float64), 1))


def check_fake(squared_norm, x, dim) -> None:
    """The fake implementation gives the real output's shape, dtype, device and strides."""
    fake, real = fake_and_real(squared_norm, x, dim, lambda error: _operator_error(
        "fake implementation", error, dim))
    got, want = ((tuple(t.shape), t.dtype, t.device.type) for t in (fake, real))
    if got != want:
        rule = ("x's shape without dim" if got[0] != want[0] else
                "x's dtype" if got[1] != want[1] else "x's device")
        raise GradingError(
            f"squared_norm's fake implementation returns shape {got[0]}, {got[1]} on {got[2]}, "
            f"but the operator returns shape {want[0]}, {want[1]} on {want[2]}: the output has "
            f"{rule}", mistake="squared_norm/fake-mismatch")
    significant = [i for i, size in enumerate(real.shape) if size > 1]  # opcheck's comparison
    if any(fake.stride(i) != real.stride(i) for i in significant):
        raise GradingError(
            f"squared_norm's output has strides {real.stride()} for x of shape "
            f"{tuple(x.shape)} and strides {x.stride()}, dim={dim}, but its fake implementation "
            f"returns strides {fake.stride()}: torch.compile plans memory with the fake's "
            "layout, and opcheck compares the two", mistake="squared_norm/fake-strides")


def check_values(squared_norm, values: dict, **tolerance) -> None:
    """Values and a hand-written gradient against (x * x).sum(dim); no tensor on ctx."""
    operator = SimpleNamespace(apply=squared_norm)
    try:
        forward, backward = check_values_and_gradients(operator, SQUARED_NORM, values,
                                                       **tolerance)
    except GradingError as error:
        cause = error.__cause__
        x, dim = values["x"], values["dim"]
        if (dim not in (-1, x.dim() - 1) and isinstance(cause, RuntimeError)
                and "must match the size of tensor" in str(cause)
                and error.hint.startswith("squared_norm.backward raised")):
            raise GradingError(
                f"squared_norm's backward fails for dim={dim}, which is not the last dimension "
                f"(x of shape {tuple(x.shape)}; the last one passed): grad_output has x's shape "
                "with dim removed, so it meets x only once dim is put back where ctx.dim says, "
                "not at the end", str(cause),
                mistake="squared_norm/backward-assumes-last-dim") from error
        if cause is not None and not isinstance(cause, GradingError):
            named = _operator_error("call", cause, values["dim"])
            if not named.hint.startswith("squared_norm's call raised"):  # a registration
                raise named from error
        raise
    check_no_ctx_tensors(SQUARED_NORM, forward)
    check_backward_by_hand(SQUARED_NORM, backward)


def check_vmap_equal_sizes(squared_norm, device) -> None:
    """torch.vmap on samples with equal sizes and a reduced dim that is not the last: (4, 4)
    with dim=0 and (2, 3, 3) with dim=1 (torch.func.grad does not run through a custom op)."""
    for seed, (shape, dim) in enumerate([((4, 4), 0), ((2, 3, 3), 1)]):
        batch = sample((3, *shape), device, seed=30 + seed)
        with case(f"torch.vmap over a batch of 3, x of shape {shape}, dim={dim}"):
            got = _vmapped(squared_norm, batch, dim, phase="vmap")
            if not torch.allclose(got, (batch * batch).sum(dim + 1)):
                raise GradingError(f"squared_norm's output under vmap is wrong for x of shape "
                                   f"{shape}, dim={dim}", f"got {got}")


def check_batching_rule(squared_norm) -> None:
    """A rule registered with register_vmap: without one, vmap runs the operator once per
    sample (PyTorch's C++ fallback, BatchedFallback.cpp, and its 'performance drop' warning)."""
    definition = _maybe_get_opdef(OPERATOR)
    if definition is not None and getattr(definition, "_vmap_fn", None) is None:
        raise GradingError(
            "squared_norm has no batching rule: torch.vmap falls back to calling the operator "
            "once per sample (the 'performance drop' warning); register one with "
            f'torch.library.register_vmap("{OPERATOR}", rule) or squared_norm.register_vmap',
            mistake="squared_norm/no-batching-rule")


def check_one_call(squared_norm, device) -> None:
    """The rule batches, wherever x's batch dim is (first, between a sample's dims, last): under
    vmap the operator runs once on the whole batch (or not at all, when the rule computes the
    result itself), not once per sample as the fallback does, nor once per piece of the batch;
    and what the rule dispatches does not grow with the batch (a loop over the samples, calling
    the operator or not, dispatches more for a larger batch)."""
    for position in (0, *BATCH_POSITIONS):
        _one_call_at(squared_norm, device, position)


def _one_call_at(squared_norm, device, position: int) -> None:
    counts = {}
    for size in (BATCHED[0], 2 * BATCHED[0]):
        batch = sample((size, *BATCHED[1:]), device, seed=7).movedim(0, position)
        with _Calls() as calls:
            _vmapped(squared_norm, batch, 1, position)
        counts[size] = vars(calls).get("names", [])
    where = "" if position == 0 else (
        f" with x's batch dim at {position % len(BATCHED)} (in_dims=({position}, None)), "
        "though one call when it is first")
    count = counts[BATCHED[0]].count("autograd_course.squared_norm")
    if count >= BATCHED[0]:
        raise GradingError(
            f"squared_norm's batching rule calls the operator once per sample ({count} calls "
            f"for a batch of {BATCHED[0]}{where}): that is the fallback's loop written by hand; "
            "call it once on the whole batched x, with dim translated past the batch dimension, "
            "wherever in_dims puts it", mistake="squared_norm/rule-loops-over-samples")
    calls = {size: names.count("autograd_course.squared_norm") for size, names in counts.items()}
    if max(calls.values()) > 1:
        raise GradingError(
            f"squared_norm's batching rule calls the operator {calls[BATCHED[0]]} times for a "
            f"batch of {BATCHED[0]} and {calls[2 * BATCHED[0]]} for {2 * BATCHED[0]}{where}: it "
            "splits the batch into pieces, a loop by hand; a batching rule calls the operator "
            "once, on the whole batched x", mistake="squared_norm/rule-splits-batch")
    small, large = (len(counts[size]) for size in sorted(counts))
    if large > small:
        raise GradingError(
            f"squared_norm's batching rule dispatches {small} operations for a batch of "
            f"{BATCHED[0]} samples and {large} for {2 * BATCHED[0]}{where}: it works sample by "
            "sample (a loop over the batch), or skips work for a batch it saw before, where a "
            "batching rule runs the same few operations on the whole batched x whatever its "
            "size, wherever its batch dim and whatever ran before",
            mistake="squared_norm/rule-loops-over-samples")


def check_opcheck(x, dim) -> None:
    """torch.library.opcheck: schema, autograd registration, fake tensor, AOT dispatch."""
    run_opcheck("squared_norm", x, dim, lambda error: _operator_error("opcheck", error, dim))


def squared_norm_full(squared_norm, device) -> None:
    check_operator(squared_norm)
    reduction = Reduction("squared_norm", squared_norm,
                          lambda shape, seed: sample(shape, device, seed=seed),
                          lambda x, dim, at: 2 * x)
    check_grad_output_unsqueezed(reduction)
    check_dim_from_shapes(reduction)
    for seed, (shape, dim) in enumerate(CASES):
        x = sample(shape, device, seed=seed)
        with case(f"x of shape {shape}, dim={dim}"):
            check_fake(squared_norm, x, dim)
            check_values(squared_norm, {"x": x, "dim": dim})
    for edge in ("a dim other than the last", "negative dim", "1-D x"):
        covers(edge)
    with case("x of shape (3, 4) in float32, dim=0"):  # its values: the domain's float32
        check_fake(squared_norm, sample((3, 4), device, dtype=torch.float32), 0)
    check_each_input_alone(SimpleNamespace(apply=squared_norm), SQUARED_NORM, {"x": sample((3, 4), device), "dim": 0})
    check_batching_rule(squared_norm)
    covers("a rule registered with register_vmap")
    check_fresh_batches(squared_norm, device)
    check_vmap(squared_norm, device)
    check_vmap_equal_sizes(squared_norm, device)
    covers("torch.vmap matches a loop for every dim")
    covers("the batch dim anywhere in x")
    check_one_call(squared_norm, device)
    for shape, dim in [((3, 4), 1), ((2, 3), -2)]:
        check_opcheck(sample(shape, device, seed=3), dim)
    strided = sample((4, 3, 2), device, seed=5).transpose(0, 1)
    for dim in (0, 1):
        with case(f"x of shape (3, 4, 2), transposed in dims 0 and 1, dim={dim}"):
            check_fake(squared_norm, strided, dim)
    with case("x of shape (3, 4, 2), transposed in dims 0 and 1, dim=1"):
        check_opcheck(strided, 1)
    permuted = sample((2, 3, 4), device, seed=6).permute(2, 1, 0)
    for dim in (0, 1, 2, -1):
        with case(f"x = base.permute(2, 1, 0) of a (2, 3, 4) base, dim={dim}"):
            check_fake(squared_norm, permuted, dim)
    covers("torch.library.opcheck")


EXERCISES = [
    Exercise("squared_norm", "08_compile", squared_norm_full,
             example=lambda: (sample((3, 4), "cpu"), 1),
             domain=Domain(SQUARED_NORM, sampled(SQUARED_NORM, {"x": (3, 4)}, {"dim": 1}),
                           prepare=operator_of(check_operator),
                           constants={"dim": Constant(-2, 1, "dim a Python int, negative "
                                                      "allowed", integer=True,
                                                      also=(0,))}),
             contract=("a dim other than the last", "negative dim", "1-D x",
                       "a rule registered with register_vmap",
                       "torch.vmap matches a loop for every dim", "the batch dim anywhere in x",
                       "torch.library.opcheck")),
]

