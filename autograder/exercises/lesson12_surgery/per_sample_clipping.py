"""Lesson 12's transfer exercise: PerSampleClippedLinear, DP-SGD's per-sample clipping for
``x @ weight.T`` without the noise.

Sample n's gradient of ``weight`` is the outer product ``g_n x_n^T``, whose norm is
``||g_n|| ||x_n||``; backward sums those products, each scaled by
``min(1, max_norm / (||g_n|| ||x_n||))``, and never creates the ``(N, out, in)`` stack of them.
The reference below builds that stack on purpose (the definition, not the identity), so the
battery checks the learner's shortcut against the thing it stands for.
"""

import math

import torch

from ...checks import (Spec, case, check_backward_by_hand, check_is_function, check_no_ctx_tensors,
                      make_inputs, run_backward, run_forward)
from ...contract import check_each_input_alone, covers
from ...diagnose import diagnose_gradient, diagnose_values
from ...domain import Constant, Domain
from ...errors import GradingError
from ...exercise import Exercise, sample
from ...memory import TensorAccounting
from ..lesson10_norms.norm_checks import check_needs_input_grad
from .per_sample_checks import (CountingAccounting, check_exact_factors,
                                check_no_stack_outside_torch, check_tall_batch,
                                check_no_chunk_of_gradients, check_no_gradient_per_sample,
                                check_no_pieces_of_gradients)
from .per_sample_ends import check_threshold, check_tiny_samples
from .surgery_checks import check_strided, matches, strided_grad_output

LATER_IN_LESSON = True  # after GradientReversal, ClipGradientNorm and SoftThreshold


def clip_factors(norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    """min(1, max_norm / norm), and 1 for a norm of 0."""
    return torch.where(norms > max_norm, max_norm / norms.clamp(min=max_norm), 1.0)


def expected_gradients(x, weight, max_norm, grad_output) -> dict:
    """grad_x and grad_weight from the definition: every per-sample outer product built."""
    per_sample = torch.einsum("no,ni->noi", grad_output, x)
    norms = torch.linalg.vector_norm(per_sample, dim=(1, 2))
    factors = clip_factors(norms, max_norm)
    return {"x": grad_output @ weight,
            "weight": (factors[:, None, None] * per_sample).sum(0)}


class _Reference(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grads = expected_gradients(x, weight, ctx.max_norm, grad_output)
        return grads["x"], grads["weight"], None


SPEC = Spec("PerSampleClippedLinear", ("x", "weight", "max_norm"),
            lambda x, weight, max_norm: _Reference.apply(x, weight, max_norm))


def clipping_values(n, d_in, d_out, device, *, max_norm=1.0, seed=0, dtype=torch.float64):
    """x (n, d_in), weight (d_out, d_in) and max_norm; sample 1 of x is all zeros (n > 2)."""
    x = sample((n, d_in), device, seed=seed, dtype=dtype)
    if n > 2:
        x[1] = 0
    return {"x": x, "weight": sample((d_out, d_in), device, seed=seed + 50, dtype=dtype),
            "max_norm": max_norm}


def clipping_grad_output(n, d_out, device, *, max_norm=1.0, seed=0, dtype=torch.float64):
    """Rows of very different sizes, so some samples are clipped and some are not; row 2 is
    all zeros (n > 3): a sample whose gradient is 0 keeps factor 1."""
    scales = torch.logspace(-2, 1.5, n, dtype=dtype) * max_norm
    grad = sample((n, d_out), device, seed=seed + 100, dtype=dtype) * scales[:, None].to(device)
    if n > 3:
        grad[2] = 0
    return grad


def _mistake_hint(got, grad_output, x, weight, max_norm, expected) -> str | None:
    """Name a known slip when ``got`` (grad_weight) is exactly what it would produce."""
    plain = grad_output.T @ x
    by_g = clip_factors(torch.linalg.vector_norm(grad_output, dim=1), max_norm)
    total = torch.linalg.vector_norm(plain)
    outer_norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)
    by_x = clip_factors(torch.linalg.vector_norm(x, dim=1), max_norm)
    squared = clip_factors(outer_norms ** 2, max_norm)
    summed = clip_factors(torch.linalg.vector_norm(grad_output, dim=1)
                          + torch.linalg.vector_norm(x, dim=1), max_norm)
    whole = clip_factors(torch.linalg.vector_norm(grad_output) * torch.linalg.vector_norm(x, dim=1),
                         max_norm)
    with_bias = clip_factors(torch.linalg.vector_norm(grad_output, dim=1)
                             * (torch.linalg.vector_norm(x, dim=1) ** 2 + 1).sqrt(), max_norm)
    candidates = [
        ((grad_output * whole[:, None]).T @ x,
         "clips with the factor from ||grad_output|| ||x_n||: the factor uses one norm for the "
         "whole batch, not each sample's ||g_n|| ||x_n||"),
        ((grad_output * by_x[:, None]).T @ x,
         "clips by ||x_n|| alone: sample n's gradient of weight is the outer product g_n x_n^T. "
         "What is its norm in terms of g_n and x_n? Fix the norms in backward, before the "
         "factors"),
        ((grad_output * squared[:, None]).T @ x,
         "divides max_norm by each sample's squared norm (or applies the factor twice): the "
         "factor is min(1, max_norm / norm), with the norm itself, applied once"),
        (plain, "sums the per-sample gradients unclipped: scale sample n's gradient g_n x_n^T "
                "by min(1, max_norm / ||g_n x_n^T||) before the sum"),
        ((grad_output * by_g[:, None]).T @ x,
         "clips by ||g_n|| alone: sample n's gradient of weight is the outer product g_n x_n^T. "
         "What is its norm in terms of g_n and x_n? Fix the norms in backward, before the "
         "factors"),
        ((grad_output * summed[:, None]).T @ x,
         "clips by ||g_n|| + ||x_n||: sample n's gradient of weight is the outer product "
         "g_n x_n^T. Is the norm of a product a sum? Fix the norms in backward, before the "
         "factors"),
        ((grad_output * with_bias[:, None]).T @ x,
         "clips by ||g_n|| sqrt(||x_n||^2 + 1), the norm of a layer with a bias (a 1 appended "
         "to x_n, the bias's column of the gradient counted): this layer has no bias, so sample "
         "n's gradient of weight is g_n x_n^T alone"),
        (plain * min(1.0, max_norm / max(total.item(), 1e-300)),
         "clips the summed gradient, as clip_grad_norm_ does: clip each sample's gradient "
         "before the sum"),
        ((grad_output * (max_norm / outer_norms.clamp(min=1e-300))[:, None]).T @ x,
         "scales every sample's gradient to norm max_norm, small ones up too: the factor is "
         "min(1, max_norm / norm)"),
    ]
    for candidate, hint in candidates:
        if matches(got, candidate, expected):
            return hint
    return None


def check_clipped_case(function, values: dict, grad_output, *, rtol=1e-5, atol=1e-7):
    """Values, both gradients, grad_output and inputs untouched, no (N, out, in) tensor."""
    inputs = make_inputs(values)
    forward = run_forward(function, SPEC, inputs)
    x, weight, max_norm = values["x"], values["weight"], values["max_norm"]
    diagnose_values("PerSampleClippedLinear's output", forward.output, x @ weight.T,
                    rtol=rtol, atol=atol)
    check_no_ctx_tensors(SPEC, forward)
    pristine = grad_output.clone()
    n, d_out, d_in = grad_output.shape[0], weight.shape[0], x.shape[1]
    with CountingAccounting(d_out * d_in) as books:
        backward = run_backward(SPEC, forward.output, inputs, grad_output)
    largest = books.phase.largest
    per_sample_size = n * d_out * d_in  # checked where it exceeds every tensor backward needs
    if (largest is not None and largest.numel >= per_sample_size
            and per_sample_size > max(n * d_out, n * d_in, d_out * d_in)):
        raise GradingError(
            f"PerSampleClippedLinear's backward created a tensor of shape {largest.shape}, "
            f"{largest.numel} elements, as many as N * out * in = "
            f"{per_sample_size} or more, the size of one outer product per sample: the norm of "
            "g_n x_n^T needs no outer product (what is it in terms of g_n and x_n?), and the scaled sum is "
            "one matrix product",
            mistake="PerSampleClippedLinear/per-sample-outer-products")
    check_no_chunk_of_gradients(books.phase.shapes, n, d_out, d_in)
    check_no_gradient_per_sample(books.made, books.kept, pristine, x,
                                 _factors(pristine, x, max_norm))
    check_no_pieces_of_gradients(books.kept, pristine, x, _factors(pristine, x, max_norm))
    expected = expected_gradients(x, weight, max_norm, pristine)
    grad_x, grad_weight = backward.grads[:2]
    if isinstance(grad_weight, torch.Tensor) and not torch.isfinite(grad_weight).all():
        raise GradingError("PerSampleClippedLinear's grad_weight has nan or inf where a sample's "
                           "gradient is 0 (its grad_output row or its x row is zero): that "
                           "sample's norm is 0, below max_norm, so its factor is 1",
                           mistake="PerSampleClippedLinear/nan-on-zero-sample")
    if matches(grad_x, (pristine * _factors(pristine, x, max_norm)[:, None]) @ weight,
               expected["x"]):
        raise GradingError("PerSampleClippedLinear clips grad_x too: only the weight's "
                           "per-sample gradients are clipped; grad_x = grad_output @ weight",
                           mistake="PerSampleClippedLinear/clips-grad-x")
    diagnose_gradient("x", grad_x, expected["x"], rtol=rtol, atol=atol)
    hint = _mistake_hint(grad_weight, pristine, x, weight, max_norm, expected["weight"])
    if hint:
        raise GradingError(f"PerSampleClippedLinear {hint}", mistake={
            "clips by ||x_n|| alone": "PerSampleClippedLinear/norm-of-x-alone",
            "one norm for the whole batch": "PerSampleClippedLinear/whole-grad-output-norm",
            "by the squared norm": "PerSampleClippedLinear/squared-norm",
            "sums the per-sample gradients unclipped": "PerSampleClippedLinear/no-clipping",
            "clips by ||g_n|| alone": "PerSampleClippedLinear/norm-of-g-alone",
            "the norm of a layer with a bias": "PerSampleClippedLinear/bias-in-norm",
            "clips the summed gradient": "PerSampleClippedLinear/clips-summed-gradient",
            "scales every sample's gradient to norm max_norm":
                "PerSampleClippedLinear/scales-small-samples-up"})
    check_exact_factors(grad_weight, pristine, x, max_norm, expected["weight"])
    diagnose_gradient("weight", grad_weight, expected["weight"], rtol=rtol, atol=atol)
    return backward


def check_empty_batch(function, device) -> None:
    """N = 0 is a batch like any other: grad_weight is the empty sum, zeros of weight's shape,
    and grad_x has shape (0, in). A shortcut through norms.max() (or any reduction with no
    identity) raises there."""
    values = clipping_values(0, 4, 3, device, max_norm=0.5, seed=3)
    grad_output = torch.zeros((0, 3), dtype=torch.float64, device=device)
    with case("x of shape (0, 4), weight of shape (3, 4), max_norm=0.5: an empty batch"):
        inputs = make_inputs(values)
        output = run_forward(function, SPEC, inputs).output
        try:
            grads = run_backward(SPEC, output, inputs, grad_output).grads
        except GradingError as error:
            raise GradingError(
                "PerSampleClippedLinear's backward fails on an empty batch (N = 0): the sum "
                "over no samples is zeros of weight's shape, and grad_x has shape (0, in). "
                "Which step of yours needs at least one sample (a max, an index, a loop's "
                "first item)? What it raised: " + str(error).splitlines()[0],
                mistake="PerSampleClippedLinear/fails-on-empty-batch") from None
        expected = expected_gradients(values["x"], values["weight"], 0.5, grad_output)
        diagnose_gradient("x", grads[0], expected["x"])
        diagnose_gradient("weight", grads[1], expected["weight"])


def _factors(grad_output, x, max_norm):
    norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)
    return clip_factors(norms, max_norm)


def clipped_linear_full(PerSampleClippedLinear, device) -> None:
    function = check_is_function(PerSampleClippedLinear, SPEC)
    for seed, (n, d_in, d_out, max_norm) in enumerate(
            [(8, 5, 3, 1.0), (6, 4, 7, 1e-4), (5, 3, 2, 1e6), (1, 4, 3, 0.5), (3, 1, 1, 2.0)]):
        values = clipping_values(n, d_in, d_out, device, max_norm=max_norm, seed=seed)
        grad_output = clipping_grad_output(n, d_out, device, max_norm=max_norm, seed=seed)
        with case(f"x of shape {(n, d_in)}, weight of shape {(d_out, d_in)}, "
                  f"max_norm={max_norm:g}, samples clipped and not, a zero x row and a zero "
                  "grad_output row"):  # grad_output, so every gradient, scales with max_norm
            backward = check_clipped_case(function, values, grad_output,
                                          atol=1e-7 * min(1.0, max_norm))
    for edge in ("a zero sample", "one sample", "no sample clipped"):
        covers(edge)
    check_threshold(function, SPEC, expected_gradients, device)
    check_empty_batch(function, device)
    covers("an empty batch")
    check_tiny_samples(function, SPEC, expected_gradients, device)
    check_backward_by_hand(SPEC, backward)
    check_each_input_alone(function, SPEC, clipping_values(6, 4, 3, device, max_norm=0.5),
                           frozen_get_none=True)
    check_needs_input_grad(function, SPEC, clipping_values(6, 4, 3, device, max_norm=0.5))
    check_no_norms_for_x_alone(function, clipping_values(7, 4, 3, device, max_norm=0.5))
    check_no_stack_outside_torch(function, SPEC, device)
    check_tall_batch(function, SPEC, device)
    values = clipping_values(5, 4, 6, device, max_norm=0.5, seed=9)
    grad_output = strided_grad_output((5, 6), device, seed=10)
    check_strided(function, SPEC, values, grad_output,
                  expected_gradients(values["x"], values["weight"], 0.5, grad_output))


def check_no_norms_for_x_alone(function, values: dict) -> None:
    """With weight frozen, neither forward nor backward creates a tensor of N entries (norms,
    factors): grad_x = grad_output @ weight needs none, so they are work for the gradient nobody
    asked for. N = 7 differs from every size grad_x's work makes (N * in, N * out, out * in).
    The op count of check_needs_input_grad misses it: the gated matrix product still adds work."""
    inputs = make_inputs(values, requires_grad={"x"})
    n = values["x"].shape[0]
    with TensorAccounting() as books:
        forward = run_forward(function, SPEC, inputs)
        made = {"forward": books.phase.shapes}
        made["backward"] = books.start("backward").shapes
        run_backward(SPEC, forward.output, {"x": inputs["x"], "weight": inputs["weight"]},
                     torch.ones_like(forward.output))
    for where, shapes in made.items():
        per_sample = sorted(s for s in shapes if math.prod(s) == n)
        if per_sample:
            raise GradingError(
                f"PerSampleClippedLinear's {where} computes per-sample work when only x "
                f"requires grad: it created a tensor of shape {per_sample[0]}, one entry per "
                "sample (norms or factors?), which only grad_weight needs. Does grad_x = "
                "grad_output @ weight use them? Compute nothing of grad_weight when "
                "ctx.needs_input_grad[1] is False", mistake="PerSampleClippedLinear/norms-when-weight-frozen")


def domain_values(device, dtype=torch.float64, seed=0, max_norm=1.0) -> dict:
    """x (6, 4) whose rows' norms run from 0.03 to 30 times max_norm (row 1 all zeros), so that
    with a standard-normal grad_output some samples are clipped and some not, at any max_norm:
    a small max_norm meets small sample norms, where an epsilon added to the norm shows."""
    values = clipping_values(6, 4, 3, device, max_norm=max_norm, seed=seed, dtype=dtype)
    x = values["x"]
    scales = max_norm * torch.logspace(-1.5, 1.5, x.shape[0], dtype=dtype).to(device)
    norms = torch.linalg.vector_norm(x, dim=1, keepdim=True)
    values["x"] = torch.where(norms > 0, x / norms.clamp(min=torch.finfo(dtype).tiny), 0.0) \
        * scales[:, None]
    return values


EXERCISES = [
    Exercise("PerSampleClippedLinear", "12_surgery", clipped_linear_full,
             contract=("a zero sample", "one sample", "no sample clipped", "an empty batch",
                       "non-contiguous grad_output"),
             domain=Domain(SPEC, domain_values,
                           constants={"max_norm": Constant(1e-4, 10.0, "max_norm a positive "
                                                           "Python float, 1e-4 as well as 10")})),
]
