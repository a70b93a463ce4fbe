"""Lesson 09's Normalize: rows whose norms sit on either side of eps, the kink where the
gradient changes formula: far from it, and near it, a relative 1e-3 away, where a test in
backward that is not the norm against eps (|y| against 1 with a loose margin, isclose's
absolute tolerance at a tiny eps, no test at all) puts a row in the wrong case. Rows within a
relative 1e-3 of eps may take either side (the contract), so none is tried closer."""

import torch
import torch.nn.functional as F

from ...errors import GradingError
from ...exercise import sample
from .pattern_cases import listed

NEAR = 1e-3  # how far from eps, relatively, the rows near it lie


def near_eps_rows(eps: float, width: int, device, dtype, seed: int = 6) -> torch.Tensor:
    """Two rows below eps yet close to it, norms 0.9 eps and (1 - 1e-3) eps, where
    |y| = norm / eps is 0.9 and 0.999."""
    direction = F.normalize(sample((width,), device, seed=seed, dtype=dtype), dim=-1)
    return torch.stack([direction * (0.9 * eps), direction.flip(0) * ((1 - NEAR) * eps)])


def near_above_rows(eps: float, width: int, device, dtype, seed: int = 7) -> torch.Tensor:
    """Rows just above eps, where a test with a loose margin or isclose calls them below:
    (1 + 1e-3) eps and 1.1 eps, and for eps <= 1e-8 a row of 1e3 eps, which isclose's default
    atol of 1e-8 still calls equal to eps."""
    direction = F.normalize(sample((width,), device, seed=seed, dtype=dtype), dim=-1)
    rows = [direction * ((1 + NEAR) * eps), direction.flip(0) * (1.1 * eps)]
    if eps <= 1e-8:
        rows.append(direction.roll(1) * (1e3 * eps))
    return torch.stack(rows)


def rows_around_eps(device, dtype=torch.float64,
                    eps: float = 1e-2) -> tuple[torch.Tensor, float]:
    """Rows with norms 2, 0.5, 0.1 eps and 0 (two above eps up to 0.4, two far below), then
    0.9 eps and (1 - 1e-3) eps, then (1 + 1e-3) eps and 1.1 eps (and 1e3 eps where
    eps <= 1e-8)."""
    directions = F.normalize(sample((4, 5), device, seed=5, dtype=dtype), dim=-1)
    norms = torch.tensor([2.0, 0.5, 0.1 * eps, 0.0], dtype=dtype, device=device)
    return torch.cat([directions * norms.unsqueeze(-1), near_eps_rows(eps, 5, device, dtype),
                      near_above_rows(eps, 5, device, dtype)]), eps


def around_eps(eps: float) -> str:
    """The rows of ``rows_around_eps``, in words."""
    far = ", 1e3 eps" if eps <= 1e-8 else ""
    return (f"with row norms 2, 0.5, 0.1 eps, 0, 0.9 eps, (1 - 1e-3) eps, "
            f"(1 + 1e-3) eps, 1.1 eps{far}, eps={eps:g}")


# rows of rows_around_eps: below eps (4:6 near it), and above it near it
BELOW, NEAR_BELOW, NEAR_ABOVE = slice(2, 6), slice(4, 6), slice(6, None)


def check_near_above(x: torch.Tensor, got: torch.Tensor, truth: torch.Tensor,
                     grad_output: torch.Tensor, eps: float) -> None:
    """Right on rows far above and on every row below eps, wrong on a row just above it:
    named where that row has no projection term, as a row below eps (grad_output / eps, or
    grad_output / norm)."""
    details = (f"on the rows just above eps: got {listed(got, truth)}\n"
               f"expected {listed(truth, got)}")
    norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
    unprojected = (torch.isclose(got, grad_output / eps).all(-1)
                   | torch.isclose(got, grad_output / norm).all(-1))
    if unprojected.any():
        raise GradingError("Normalize's gradient on a row just above eps has no projection "
                           "term, as a row below eps: what does your backward compare with "
                           "eps, and is it the norm forward compared, without a margin or a "
                           f"tolerance? ({around_eps(eps)})", details,
                           mistake="Normalize/near-above-as-below")
    raise GradingError("Normalize's gradient is right on rows far above eps and on every row "
                       "below it, but wrong on a row just above eps; there the norm moves with "
                       f"x ({around_eps(eps)})", details, mistake="Normalize/wrong-just-above-eps")
