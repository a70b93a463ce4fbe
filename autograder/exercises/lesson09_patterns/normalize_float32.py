"""Lesson 09's Normalize on float32 rows at eps: F.normalize computes a float32 row's norm in
float32 and compares it with eps as float32 holds it, so a row whose float32 norm is one ulp
above eps is above it, even where the exact norm (or one taken in float64 "for accuracy") is
below eps, and the other way round. A backward that places the row by a norm in another dtype
takes the other case."""

import functools

import torch
import torch.nn.functional as F

from ...errors import GradingError
from ...exercise import sample
from .normalize_rows import _land
from .pattern_cases import gradient_for

EPS32 = 0.1  # float32 holds it as 0.10000000149
WHERE32 = ("with x of shape (4, 8), float32, eps=0.1: a row of norm 2, one of norm 1e-3, one "
           "whose float32 norm is one ulp above eps while its exact norm is below eps, and one "
           "whose float32 norm is one ulp below eps while its exact norm is at or above eps")


@functools.lru_cache(maxsize=None)
def _row_at_eps(above: bool) -> torch.Tensor | None:
    """A float32 row (on the CPU) whose norm in float32 is one ulp above eps = 0.1 as float32
    holds it while its float64 norm is below 0.1 (``above``), or one ulp below it while its
    float64 norm is at or above 0.1. About one landed row in 2000 for the first, one in 200 for
    the second: a seeded search, cached; None where it finds none."""
    held = torch.tensor(EPS32, dtype=torch.float32)
    target = torch.nextafter(held, 2 * held if above else 0 * held)
    generator = torch.Generator().manual_seed(2)
    for _ in range(16):
        directions = torch.randn(512, 8, generator=generator, dtype=torch.float64)
        rows = _land(F.normalize(directions, dim=-1).float(), target)
        exact = torch.linalg.vector_norm(rows.double(), dim=-1)
        other_side = exact < EPS32 if above else exact >= EPS32
        hit = ((torch.linalg.vector_norm(rows, dim=-1) == target) & other_side).nonzero()
        if len(hit):
            return rows[hit[0, 0]].clone()
    return None


def rows_at_eps_float32(device) -> torch.Tensor | None:
    """Rows of norm 2 and 1e-3, then the two rows of ``_row_at_eps``, in float32; None where
    the search found none or ``device`` rounds their norms otherwise."""
    found = [_row_at_eps(True), _row_at_eps(False)]
    if any(row is None for row in found):
        return None
    near = torch.stack(found).to(device)
    held = torch.tensor(EPS32, dtype=torch.float32, device=device)
    norm = torch.linalg.vector_norm(near, dim=-1)
    if not (norm[0] > held and norm[1] < held):
        return None
    far = F.normalize(sample((2, 8), device, seed=13, dtype=torch.float32), dim=-1)
    return torch.cat([far * torch.tensor([[2.0], [1e-3]], device=device), near])


def check_float32_rows_at_eps(function, spec, device) -> None:
    """Rows placed by F.normalize's float32 norm: named as a norm in float64 where the answer's
    gradient is that of each row placed by its float64 norm (the exact norm, in float64,
    decides the other case on both rows near eps)."""
    x = rows_at_eps_float32(device)
    if x is None:
        return
    got, truth, grad_output = gradient_for(function, spec, {"x": x, "eps": EPS32})
    if not isinstance(got, torch.Tensor) or got.shape != truth.shape:
        return  # the graded cases name a missing or mis-shaped gradient
    close = functools.partial(torch.isclose, rtol=1e-4, atol=1e-5)
    right = close(got, truth).all(-1)
    if right.all() or not right[:2].all():
        return  # wrong far from eps too: the other checks name it
    details = f"got {got[2:].tolist()}\nexpected {truth[2:].tolist()}"
    exact = torch.linalg.vector_norm(x.double(), dim=-1, keepdim=True)
    y, g = (x.double() / exact), grad_output.double()
    projected = (g - y * (y * g).sum(-1, keepdim=True)) / exact
    by_float64 = torch.where(exact >= EPS32, projected, g / EPS32).to(x.dtype)
    if close(got[2:], by_float64[2:]).all():
        raise GradingError("Normalize places a float32 row by a norm taken in float64, not by "
                           "F.normalize's: F.normalize computes a float32 row's norm in float32, "
                           "x.norm(dim=-1), and compares it with eps as float32 holds it, so a "
                           "row whose float32 norm is one ulp above eps is above it even where "
                           "its float64 norm is below eps (and the other way round): in which "
                           "dtype must backward take the norm to place the row as forward did? "
                           f"({WHERE32})", details,
                           mistake="Normalize/norm-in-another-dtype")
    raise GradingError("Normalize's gradient is wrong on a float32 row within one ulp of eps, "
                       "though right far above and far below it: does backward place each row "
                       "by its norm as F.normalize computes it, in x's dtype, tested against "
                       f"eps as x's dtype holds it? ({WHERE32})", details)

