"""Checks of a lesson's ungraded steps, kept out of the notebook (their hints would give the
step away) and shown as a self-check shows itself: a green box, or the hint first in a few
lines. No points and no progress entry: these steps are practice on the way to an exercise."""

import torch
import torch.nn.functional as F

from .errors import GradingError
from .failure import shorten, show_pass
from .memory import TensorAccounting


def check_chunked(chunked, rows: int = 50, chunk_size: int = 8) -> None:
    """Lesson 11, step 1: ``chunked(x, weight, target, chunk_size)`` is the mean cross-entropy
    of ``x @ weight.T``, and no tensor it makes is bigger than one chunk of logits."""
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
    return (f"the loss matches F.cross_entropy, and the largest tensor, "
            f"{tuple(largest.shape)}, is one chunk of logits")
