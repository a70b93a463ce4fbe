"""PerSampleClippedLinear's probes of how backward works, beside its values: no per-sample
gradient of ``weight`` built one at a time, no write into a saved input, clipping factors
exact to float64's rounding (no eps added to the norm, no step in float32), and on a tall
batch memory linear in it and no loop over its samples."""

import math
import tracemalloc

import torch
from torch.utils._pytree import tree_flatten

from ...checks import case, make_inputs, run_backward, run_forward
from ...comparison import fresh_leaves
from ...errors import GradingError
from ...exercise import sample
from ...function_contract import rule_reference
from ...linear_memory import FACTOR, SLACK, backward_peak
from ...memory import TensorAccounting

# eps a learner may add to the norm (Opacus-style 1e-6 down to 1e-12), inside or outside a sqrt
_EPSILONS = (1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12)


class CountingAccounting(TensorAccounting):
    """TensorAccounting that also counts the tensors of exactly ``numel`` elements each op
    creates or writes in place (views are neither): ``made``; and keeps a copy of each small
    floating tensor so created or written, as it was then: ``kept``."""

    def __init__(self, numel: int):
        super().__init__()
        self.numel, self.made, self.kept = numel, 0, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if all(r.alias_info is None or r.alias_info.is_write for r in func._schema.returns):
            made = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
            self.made += sum(1 for t in made if t.numel() == self.numel)
            self.kept += [t.detach().to(torch.float64, copy=True) for t in made
                          if t.is_floating_point() and 4 <= t.numel() <= _KEPT]
        return out


_KEPT = 4096  # the battery's cases are small: every tensor backward makes is kept


def check_no_pieces_of_gradients(kept, grad_output, x, factors) -> None:
    """No tensor backward made holds entries g_n[o] x_n[i] (scaled by s_n or not) of two or
    more samples: pieces of their gradients of weight, side by side, in any shape (a block
    (N, out / 2, in) of the stack, a slice (N, 1, in), a row g[:, o:o+1] * x of shape (N, in)),
    which the size and shape checks miss once a piece is no larger than x. Random values: no
    tensor a right answer makes (norms, factors, a scaled x or grad_output, grad_weight's sums)
    shares its entries with these products. Checked where out >= 2 and in >= 2 (else a sample's
    whole gradient is a row of a scaled x or grad_output)."""
    n, d_out, d_in = grad_output.shape[0], grad_output.shape[1], x.shape[1]
    if n < 2 or d_out < 2 or d_in < 2:
        return
    products = grad_output[:, :, None] * x[:, None, :]
    owner = torch.arange(n)[:, None, None].expand_as(products).reshape(-1)
    for stack in (products, products * factors[:, None, None]):
        values = stack.reshape(-1).cpu()
        nonzero = values != 0
        values, owners = values[nonzero], owner[nonzero]
        order = values.argsort()
        values, owners = values[order], owners[order]
        if values.numel() == 0:
            return
        for tensor in kept:
            entries = tensor.reshape(-1).cpu()
            entries = entries[(entries != 0) & entries.isfinite()]
            if entries.numel() < 4:
                continue
            at = torch.searchsorted(values, entries).clamp(max=values.numel() - 1)
            below = (at - 1).clamp(min=0)
            nearest = torch.where((values[at] - entries).abs() <= (values[below] - entries).abs(),
                                  at, below)
            hit = (values[nearest] - entries).abs() <= 1e-9 * entries.abs()
            samples = owners[nearest[hit]].unique().numel()
            if hit.sum() >= max(4, entries.numel() // 2) and samples >= 2:
                raise GradingError(
                    f"PerSampleClippedLinear's backward created a tensor of shape "
                    f"{tuple(tensor.shape)} that holds pieces of {samples} samples' gradients "
                    "of weight: its entries are products g_n[o] * x_n[i], entries of g_n x_n^T, "
                    "side by side for several samples, a part of the (N, out, in) stack "
                    "however it is cut. The norm of g_n x_n^T needs no outer product (what is "
                    "it in terms of g_n and x_n?), and the scaled sum over samples is one "
                    "matrix product", mistake="PerSampleClippedLinear/per-sample-outer-products")


def check_no_gradient_per_sample(made: int, kept, grad_output, x, factors) -> None:
    """A loop over samples builds or adds one (out, in) term per sample (never an (N, out, in)
    tensor): N or more ops that create or update a tensor of out * in elements, where the answer
    needs one or two, and among them, for most samples, that sample's own gradient g_n x_n^T
    (scaled by s_n or not), alone or as the step between two of them (in place too): all but
    one of the samples whose gradient is not 0. A sum over chunks of 2 or more samples makes as
    many ops but no step of one sample (save a chunk whose other samples are 0). Checked where
    N >= 5, at least 4 samples' gradients are not 0, and out * in is no other size backward
    needs (N * out, N * in, N)."""
    n, d_out, d_in = grad_output.shape[0], grad_output.shape[1], x.shape[1]
    size = d_out * d_in
    if n < 5 or made < n or size in (n * d_out, n * d_in, n):
        return
    steps = _samples_stepped(kept, grad_output, x, factors)
    nonzero = int(((grad_output != 0).any(1) & (x != 0).any(1)).sum())
    if nonzero < 4 or steps < nonzero - 1:  # a chunk beside a zero sample: one term
        return
    raise GradingError(
        f"PerSampleClippedLinear's backward created or updated a tensor of {size} elements, "
        f"the size of weight, {made} times for N = {n} samples, {steps} of them one sample's "
        "g_n x_n^T alone or added alone: one step (or more) per sample, as a loop over "
        "samples that "
        "builds or adds each sample's g_n x_n^T does. The norm of g_n x_n^T needs no outer "
        "product (what is it in terms of g_n and x_n?), and the scaled sum over samples is one "
        "matrix product", mistake="PerSampleClippedLinear/gradient-per-sample")


def _samples_stepped(kept, grad_output, x, factors) -> int:
    """How many samples' gradients g_n x_n^T (scaled or not, (out, in) or (in, out)) are a
    weight-sized tensor backward made, or the difference of two of them."""
    g, xs = grad_output.double().cpu(), x.double().cpu()
    size = g.shape[1] * xs.shape[1]
    made = [t.reshape(-1).cpu() for t in kept if t.numel() == size]
    if not made:
        return 0
    made = torch.stack(made)
    pairs = (made[None, :, :] - made[:, None, :]).reshape(-1, size)
    items = torch.cat([made, pairs])
    products = g[:, :, None] * xs[:, None, :]  # (N, out, in)
    scaled = products * factors.double().cpu()[:, None, None]
    candidates = torch.cat([products, scaled]).reshape(-1, size)
    candidates = torch.cat([candidates,
                            torch.cat([products, scaled]).transpose(1, 2).reshape(-1, size)])
    owners = torch.arange(g.shape[0]).repeat(4)
    scale = candidates.abs().amax(1)
    live = scale > 0
    candidates, owners, scale = candidates[live], owners[live], scale[live]
    stepped = set()
    for chunk in items.split(256):
        gap = (chunk[:, None, :] - candidates[None, :, :]).abs().amax(2)
        hit = (gap <= 1e-9 * scale[None, :]).any(0)
        stepped.update(owners[hit].tolist())
    return len(stepped)


def _chunk_of_gradients(shape, d_out: int, d_in: int) -> int:
    """How many samples' (out, in) gradients ``shape`` holds side by side, in any layout: dims
    out and in (or one dim of out * in) beside dims whose product k is 2 or more; 0 if none."""
    dims = list(shape)
    for pair in ((d_out, d_in), (d_in, d_out), (d_out * d_in,)):
        rest = list(dims)
        if all(size in rest and not rest.remove(size) for size in pair):
            if len(rest) >= 1 and math.prod(rest) >= 2:
                return math.prod(rest)
    return 0


def check_no_chunk_of_gradients(shapes, n: int, d_out: int, d_in: int) -> None:
    """No created tensor holds two or more samples' (out, in) gradients side by side, in any
    layout ((k, out, in), (out, k, in), (k, out * in), ...): a chunk of the (N, out, in) stack,
    which the size check misses once the chunk is smaller than N. Sizes backward needs (N * out,
    N * in, N, out * in) are never taken for one."""
    if d_out < 2 or d_in < 2:
        return
    needed = {n * d_out, n * d_in, n, d_out * d_in}
    for shape in sorted(shapes):
        k = _chunk_of_gradients(shape, d_out, d_in) if math.prod(shape) not in needed else 0
        if k >= 2:
            raise GradingError(
                f"PerSampleClippedLinear's backward created a tensor of shape {shape}: the "
                f"(out, in) = {(d_out, d_in)} gradients of {k} samples side "
                "by side, a chunk of the (N, out, in) stack. The norm of g_n x_n^T needs no "
                "outer product (what is it in terms of g_n and x_n?), and the scaled sum is one "
                "matrix product", mistake="PerSampleClippedLinear/per-sample-outer-products")


def _with_factors(grad_output, x, factors):
    return (grad_output * factors[:, None]).T @ x


def _factors(norms, max_norm, eps=0.0, inside=False):
    below = (norms * norms + eps).sqrt() if inside else norms + eps
    return torch.where(norms > max_norm, max_norm / below.clamp(min=1e-300), 1.0)


def check_exact_factors(got, grad_output, x, max_norm: float, expected) -> None:
    """grad_weight is sum_n s_n g_n x_n^T with s_n = min(1, max_norm / norm) to float64's
    rounding. The tolerance is relative to the size of the terms, sum_n s_n |g_n| |x_n|^T (a sum
    that cancels keeps its terms' rounding), 1e-9 of it: an eps added to the norm is a relative
    error of eps / norm on each clipped term, 1e-6 for eps 1e-10 at max_norm = 1e-4."""
    if not isinstance(got, torch.Tensor) or got.shape != expected.shape or \
            got.dtype != torch.float64:
        return
    norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)
    terms = _with_factors(grad_output.abs(), x.abs(), _factors(norms, max_norm))
    scale = terms.clamp(min=1e-300)
    off = ((got - expected).abs() / scale).max().item()
    if off <= 1e-9 or not (norms > max_norm).any():
        return

    def exactly(candidate):
        return ((got - candidate).abs() / scale).max().item() <= 1e-11

    for eps in _EPSILONS:
        for inside in (False, True):
            if exactly(_with_factors(grad_output, x, _factors(norms, max_norm, eps, inside))):
                where = "under the square root" if inside else "to the norm"
                raise GradingError(
                    f"PerSampleClippedLinear adds an eps of {eps:g} {where}: its clipped samples "
                    f"are off by a relative {off:.1g} at max_norm={max_norm:g} (eps / norm, "
                    "largest where the norms are small). The factor is min(1, max_norm / norm) "
                    "exactly: a sample whose "
                    "norm is 0 is not clipped, so no division by 0 needs a guard",
                    mistake="PerSampleClippedLinear/eps-in-norm")
    rounded = float(torch.tensor(max_norm, dtype=torch.float32))
    if rounded != max_norm and exactly(_with_factors(grad_output, x, _factors(norms, rounded))):
        raise GradingError(
            f"PerSampleClippedLinear computes with a float32 constant in float64 arithmetic: "
            f"its clipped samples are off by a relative {off:.1g} at max_norm={max_norm:g}, "
            "exactly what max_norm rounded to float32 gives. Which tensor holds max_norm, and in "
            "what dtype?", mistake="PerSampleClippedLinear/float32-constant")
    if off < 1e-2:
        raise GradingError(
            f"PerSampleClippedLinear's grad_weight is off by a relative {off:.1g} of the size of "
            f"its terms at max_norm={max_norm:g}, far above float64's rounding: the factor is "
            "min(1, max_norm / norm) exactly, with nothing added to the norm (an eps shows once "
            "the norms are small) and every step in float64 (a float32 constant or tensor "
            "loses digits)")


def check_no_stack_outside_torch(function, spec, device) -> None:
    """No (N, out, in) stack built outside torch (a NumPy einsum, Python lists), where the
    tensor accounting cannot see it: tracemalloc counts what backward allocates outside torch
    (NumPy's buffers, Python objects; torch's own are not traced). N = 32 and in = out = 128
    make the stack 524288 entries; the threshold, one byte an entry, lies far above what a
    right answer allocates outside torch (a few kB) and above x and grad_output as Python lists."""
    n, width = 32, 128
    values = {"x": sample((n, width), device, seed=64), "weight": sample((width, width), device,
                                                                          seed=65),
              "max_norm": 1.0}
    stack = n * width * width
    with case(f"x of shape ({n}, {width}), weight of shape ({width}, {width}), max_norm=1"):
        inputs = make_inputs(values, requires_grad={"weight"})
        output = run_forward(function, spec, inputs).output
        grad_output = sample((n, width), device, seed=66)
        tracing = tracemalloc.is_tracing()
        if not tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        try:
            run_backward(spec, output, inputs, grad_output)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            if not tracing:
                tracemalloc.stop()
    if peak >= stack:
        raise GradingError(
            f"PerSampleClippedLinear's backward allocated {peak / 2 ** 20:.1f} MiB outside "
            f"torch (NumPy arrays or Python objects) for x of shape ({n}, {width}) and weight "
            f"of shape ({width}, {width}): as much as the (N, out, in) stack of per-sample "
            f"gradients, {stack} entries, or more. Built in NumPy it is still the stack: the "
            "norm of g_n x_n^T needs no outer product, and the scaled sum is one matrix product",
            mistake="PerSampleClippedLinear/stack-outside-torch")


def _backward_ops(function, spec, n: int, device) -> int:
    """How many ops one backward dispatches for a batch of n samples (in = 3, out = 2)."""
    values = {"x": sample((n, 3), device, seed=67), "weight": sample((2, 3), device, seed=68),
              "max_norm": 0.5}
    inputs = make_inputs(values)
    output = run_forward(function, spec, inputs).output
    with TensorAccounting() as books:
        run_backward(spec, output, inputs, sample((n, 2), device, seed=69))
    return len(books.phase.ops)


def _budget(sized: int) -> int:
    return FACTOR * sized + SLACK  # rule 3's, as the generic check grants it


def check_tall_batch(function, spec, device) -> None:
    """A batch of 512 samples on a layer 3 wide: backward holds memory linear in the batch (an
    (N, N) matrix of factors or a Gram matrix is 85 times x's size there), and runs as many ops
    as for 16 samples (a loop over samples, one or a few at a time, runs more for more)."""
    n = 512
    values = {"x": sample((n, 3), device, seed=67), "weight": sample((2, 3), device, seed=68),
              "max_norm": 0.5}
    with case(f"x of shape ({n}, 3), weight of shape (2, 3), max_norm=0.5: a tall batch"):
        measured = backward_peak(function, fresh_leaves(values), _budget)
        if measured and measured[0] > _budget(measured[1]):
            peak, sized, largest = measured
            made = f"{largest.shape}, made by {largest.op}" if largest else "(in NumPy)"
            raise GradingError(
                f"PerSampleClippedLinear's backward held {peak:,} bytes at once for a batch of "
                f"{n} samples, where its inputs and outputs hold {sized:,}: its largest tensor "
                f"has shape {made}, which grows as the square of "
                "the batch (a diagonal matrix of factors, a Gram matrix?). Each sample's norm "
                "and factor is one number per sample, and scaling row n by s_n is a broadcast "
                "product. " + rule_reference("by-hand"),
                mistake="PerSampleClippedLinear/batch-squared")
        few, many = _backward_ops(function, spec, 16, device), _backward_ops(function, spec, n,
                                                                              device)
        if many > few + 16:
            raise GradingError(
                f"PerSampleClippedLinear's backward ran {few} tensor operations for a batch of "
                f"16 samples and {many} for {n}: a count that grows with the batch is a loop "
                "over samples (one or a few at a time). Which of your steps runs once per "
                "sample, and how would it act on every sample at once?",
                mistake="PerSampleClippedLinear/loops-over-samples")
