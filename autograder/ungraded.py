"""Checks of a lesson's ungraded steps, kept out of the notebook (their hints would give the
step away) and shown as a self-check shows itself: a green box, or the hint first in a few
lines. No points and no progress entry: these steps are practice on the way to an exercise."""

import re

import torch
import torch.nn.functional as F

from .errors import GradingError
from .failure import shorten, show_pass
from .memory import TensorAccounting


def check_grad_row(my_grad_row) -> None:
    """Lesson 11, the derivation's steps 1 and 2: ``my_grad_row(z, y)``, the gradient of one
    row's loss lse(z) - z[y] with respect to z, against autograd; says which class is off."""
    example = torch.randn(5, 4, dtype=torch.float64,
                          generator=torch.Generator().manual_seed(0))  # the lesson's logits
    generator = torch.Generator().manual_seed(1)
    for label, z, y in [
            ("row 0 of the example above, target 2", example[0], 2),
            ("7 classes, target 6", torch.randn(7, dtype=torch.float64, generator=generator) * 3,
             6),
            ("3 classes, target 0", torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64), 0)]:
        leaf = z.clone().requires_grad_()
        want, = torch.autograd.grad(torch.logsumexp(leaf, 0) - leaf[y], leaf)
        try:
            got = torch.as_tensor(my_grad_row(z.clone(), y)).reshape(want.shape)
        except Exception as failure:  # shown, not raised: Run All goes on
            print(f"{label}: ✗ {_first_line(failure)}")
            continue
        error = (got - want).abs().max().item()
        if error < 1e-10:
            print(f"{label}: ✓ largest error {error:.2g}")
            continue
        column = int((got - want).abs().argmax())
        where = "the target's class" if column == y else "a class that is not the target"
        print(f"{label}: ✗ largest error {error:.2g}, at class {column} ({where}); "
              f"your row sums to {round(got.sum().item(), 4) + 0.0:.4f}")  # + 0.0: no -0.0000


def check_linear_grads(my_linear_grads) -> None:
    """Lesson 11, z = x W^T: ``my_linear_grads(G, x, weight)`` -> (grad_x, grad_W) against
    autograd on 4 rows, d = 3 and V = 5; says which shape or which gradient is off."""
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(4, 3, dtype=torch.float64, generator=generator).requires_grad_()
    weight = torch.randn(5, 3, dtype=torch.float64, generator=generator).requires_grad_()
    z = x @ weight.T
    G, *want = torch.autograd.grad(F.cross_entropy(z, torch.tensor([0, 4, 2, 1])),
                                   (z, x, weight))
    shapes = {"G": tuple(G.shape), "x": tuple(x.shape), "weight": tuple(weight.shape)}
    try:
        got = tuple(my_linear_grads(G, x.detach(), weight.detach()))
    except Exception as failure:  # shown, not raised: Run All goes on
        print(f"my_linear_grads: ✗ {_first_line(failure)}")
        for name, other, like in (("grad_x", "weight", "x"), ("grad_W", "x", "weight")):
            rows, cols = shapes[other]
            if f"{rows}x{cols}" in str(failure) or f"{cols}x{rows}" in str(failure):
                print(f"   in {name}, the product with {other} {shapes[other]} in it: {name} "
                      f"must have shape {shapes[like]}, {like}'s, from G {shapes['G']} and {other}")
                return
        print(f"   grad_x must have shape {shapes['x']} and grad_W {shapes['weight']}, from G "
              f"{shapes['G']}, x {shapes['x']} and weight {shapes['weight']}")
        return
    for name, mine, theirs in zip(("grad_x", "grad_W"), got, want):
        if tuple(mine.shape) != tuple(theirs.shape):
            print(f"{name}: ✗ shape {tuple(mine.shape)}, autograd's is {tuple(theirs.shape)}")
            continue
        error = (mine - theirs).abs().max().item()
        print(f"{name}: {_tick(error < 1e-10)} shape {tuple(mine.shape)}, largest error "
              f"{error:.2g}")


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"[:100]


def check_chunked(chunked, rows: int = 50, chunk_size: int = 8) -> None:
    """Lesson 11, step 1: ``chunked(x, weight, target, chunk_size)`` is the mean cross-entropy
    of ``x @ weight.T``, no tensor it makes is bigger than one chunk of logits, and it stays
    finite at logits of magnitude 1e3."""
    name = "chunked_cross_entropy"
    try:
        message = _chunked(chunked, rows, chunk_size)
    except Exception as error:
        shorten(name, error)
        raise
    show_pass(f"{name}: {message}")


def _chunked(chunked, rows: int, chunk_size: int) -> str:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(rows, 16, generator=generator)
    weight = torch.randn(300, 16, generator=generator) / 4
    target = torch.randint(0, 300, (rows,), generator=generator)
    with torch.no_grad(), TensorAccounting() as books:
        got = chunked(x, weight, target, chunk_size)
    expected = F.cross_entropy(x @ weight.T, target)
    largest = books.phase.largest
    if not isinstance(got, torch.Tensor) or got.shape != ():
        raise GradingError(f"returned {type(got).__name__}"
                           f"{f' of shape {tuple(got.shape)}' if isinstance(got, torch.Tensor) else ''}"
                           ": the loss is one number, a 0-d tensor")
    if not torch.allclose(got, expected, rtol=1e-5):
        means = [F.cross_entropy(x[s:s + chunk_size] @ weight.T, target[s:s + chunk_size])
                 for s in range(0, rows, chunk_size)]
        if torch.allclose(got, torch.stack(means).mean()):
            raise GradingError("the mean of each chunk's mean: the short last chunk's rows weigh "
                               "more; add up every row's loss and divide by N once")
        raise GradingError(f"the loss is {got.item():.5f}, F.cross_entropy says "
                           f"{expected.item():.5f}", case=f"{rows} rows, chunks of {chunk_size}")
    if largest.numel > chunk_size * 300:
        raise GradingError(f"a tensor of shape {tuple(largest.shape)} (by {largest.op}) is "
                           f"bigger than one chunk of logits, {chunk_size} x 300")
    with torch.no_grad():  # logits of magnitude about 1e3, float32: exp overflows there
        big = chunked(x * 1e3, weight, target, chunk_size)
    if not torch.isfinite(torch.as_tensor(big)).all():
        raise GradingError("the loss is not finite at logits of magnitude 1e3, where "
                           "F.cross_entropy is: log-sum-exp, as in ✎ 1",
                           case=f"x times 1000 (float32; F.cross_entropy gives "
                                f"{F.cross_entropy((x * 1e3) @ weight.T, target).item():.1f})")
    return (f"the loss matches F.cross_entropy, and the largest tensor, "
            f"{tuple(largest.shape)}, is one chunk of logits")


class _Decides(torch.autograd.Function):
    """Forward returns whether it would compute the gradients, under one way (a)-(d)."""

    @staticmethod
    def forward(ctx, a, way, grad_mode):
        if way == "a":  # the caller's grad mode, handed in as one more argument
            return grad_mode and ctx.needs_input_grad[0]
        if way == "b":  # asked inside forward, after switching grad mode on there
            with torch.enable_grad():
                return torch.is_grad_enabled() and ctx.needs_input_grad[0]
        if way == "c":  # the caller detached the input when grad mode was off
            return ctx.needs_input_grad[0]
        return True  # (d): the answer comes in backward, after forward has done the work


def _decides(a, way: str) -> bool:
    grad_mode = torch.is_grad_enabled()  # the caller's grad mode, still in force here
    if way == "c" and not grad_mode:
        a = a.detach()
    return _Decides.apply(a, way, grad_mode)


def try_grad_mode_designs(design: dict | None = None) -> None:
    """Lesson 11: each way (a)-(d) of letting a Function's forward act on the caller's grad
    mode, tried with grad mode on and under ``torch.no_grad()``; prints which ones work beside
    the learner's ``design`` ({"where to ask": ..., "ways that work": ...})."""
    a, works = torch.randn(3, requires_grad=True), set()
    for way in "abcd":
        with torch.no_grad():
            skipped_when_off = not _decides(a, way)
        computed_when_on = bool(_decides(a, way))
        print(f"({way}) computes the gradients with grad mode on: {computed_when_on}; "
              f"skips them under no_grad: {skipped_when_off}")
        if computed_when_on and skipped_when_off:
            works.add(way)
    design = design or {}
    said = design.get("ways that work")
    text = (said if isinstance(said, str) else " ".join(map(str, said))
            if isinstance(said, (set, list, tuple)) else None)
    letters = None if text is None else set(re.findall(r"\b[a-d]\b", text.lower()))
    print(f"{_tick(letters == works)} ways that work: "
          f"{' and '.join(f'({way})' for way in sorted(works))}; you said {said!r}")
    where = design.get("where to ask")
    right = isinstance(where, str) and "wrapper" in where.lower() and not any(
        other in where.lower() for other in ("forward", "backward"))
    print(f"{_tick(right)} where to ask: {WHERE_TO_ASK!r} (the plain function that calls "
          f"apply, where the caller's grad mode is still in force); you said {where!r}")


WHERE_TO_ASK = "the wrapper, before apply"


def _tick(right: bool) -> str:
    return "✓" if right else "✗"
