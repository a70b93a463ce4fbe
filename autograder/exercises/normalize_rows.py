"""Lesson 09's Normalize: rows whose norms sit on either side of eps, the kink where the
gradient changes formula, close enough that a test in backward that is not exact (a norm in
a narrower dtype, |y| for the norm, isclose, a safety margin) puts a row in the wrong case."""

import torch
import torch.nn.functional as F

from ..exercise import sample


def just_below(eps: float, dtype) -> torch.Tensor:
    """The largest number of ``dtype`` below ``eps`` as ``dtype`` holds it."""
    eps = torch.tensor(eps, dtype=dtype)
    return torch.nextafter(eps, torch.zeros_like(eps))


def _one_entry(value: torch.Tensor, width: int, device) -> torch.Tensor:
    """A row whose only nonzero entry is ``value``: its norm is that entry exactly."""
    row = torch.zeros(width, dtype=value.dtype, device=device)
    row[0] = value
    return row


def near_eps_rows(eps: float, width: int, device, dtype, seed: int = 6) -> torch.Tensor:
    """Three rows below eps yet close to it, where |y| = norm / eps is close to 1: norms 0.9 eps
    and (1 - 1e-6) eps (apart from eps in float32 too), and one ulp below eps (a single entry,
    so that the norm is that entry exactly)."""
    direction = F.normalize(sample((width,), device, seed=seed, dtype=dtype), dim=-1)
    rows = torch.stack([direction * (0.9 * eps), direction.flip(0) * ((1 - 1e-6) * eps),
                        _one_entry(just_below(eps, dtype), width, device)])
    assert (torch.linalg.vector_norm(rows, dim=-1) < torch.tensor(eps, dtype=dtype)).all()
    return rows


def _one_ulp_above(eps: torch.Tensor, width: int, device, seed: int) -> torch.Tensor:
    """A row of no special direction whose norm is one ulp above ``eps``: a row of a single
    entry has one, but its gradient there is 0 up to rounding (y = (1, 0, ...)), which no
    tolerance scaled to the entries tells from a wrong one. Each try scales a direction one ulp
    at a time towards that norm; the closest norm above eps found is kept if none lands on it."""
    eps = eps.to(device)
    target, best = torch.nextafter(eps, 2 * eps), None
    for k in range(8):
        direction = F.normalize(sample((width,), device, seed=seed + k, dtype=eps.dtype), dim=-1)
        scale = target.clone()
        for _ in range(8):
            row = direction * scale
            norm = torch.linalg.vector_norm(row)
            if norm > eps and (best is None or norm < best[0]):
                best = (norm, row)
            if norm == target:
                return row
            scale = torch.nextafter(scale, 2 * scale if norm < target else 0 * scale)
    return best[1]


def near_above_rows(eps: float, width: int, device, dtype, seed: int = 7) -> torch.Tensor:
    """Rows just above eps, where a test with a margin or isclose calls them below: one ulp
    above eps, (1 + 1e-6) eps, and for eps <= 1e-8 a row of 1e3 eps, which isclose's default
    atol of 1e-8 still calls equal to eps."""
    direction = F.normalize(sample((width,), device, seed=seed, dtype=dtype), dim=-1)
    eps_held = torch.tensor(eps, dtype=dtype)
    rows = [_one_ulp_above(eps_held, width, device, seed + 1),
            direction * ((1 + 1e-6) * eps)]
    if eps <= 1e-8:
        rows.append(direction.flip(0) * (1e3 * eps))
    rows = torch.stack(rows)
    assert (torch.linalg.vector_norm(rows, dim=-1) > eps_held.to(device)).all()
    return rows


def rows_around_eps(device, dtype=torch.float64) -> tuple[torch.Tensor, float]:
    """Rows with norms 2, 0.5, 1e-3 and 0 against eps = 1e-2 (two above, two far below),
    then 0.9 eps, (1 - 1e-6) eps and one ulp below eps, then one ulp above eps and
    (1 + 1e-6) eps."""
    directions = F.normalize(sample((4, 5), device, seed=5, dtype=dtype), dim=-1)
    norms = torch.tensor([2.0, 0.5, 1e-3, 0.0], dtype=dtype, device=device)
    return torch.cat([directions * norms.unsqueeze(-1), near_eps_rows(1e-2, 5, device, dtype),
                      near_above_rows(1e-2, 5, device, dtype)]), 1e-2


AROUND_EPS = ("with row norms 2, 0.5, 1e-3, 0, 0.9 eps, (1 - 1e-6) eps, one ulp below eps, one "
              "ulp above eps and (1 + 1e-6) eps, eps=0.01")
BELOW, NEAR_ABOVE = slice(2, 7), slice(7, 9)  # rows of rows_around_eps: 4:7 just below
