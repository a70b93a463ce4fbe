"""Lesson 12: the live checker of the SoftThreshold derivation (my_soft_threshold_slopes). It
compares the learner's two slopes with autograd's through the forward formula and says, per
class of points, where they differ, never the right values: the reference lives here, not in
the learner's cell, where printing it would hand the answer over."""

import torch

DERIVATIVES = ("dy/dx", "dy/dλ")


def _autograd_slopes(x: torch.Tensor, lam: float) -> tuple:
    """dy_i/dx_i and dy_i/dlam, by autograd through the forward formula (one lam per entry)."""
    x = x.detach().clone().requires_grad_()
    lams = torch.full_like(x, lam, requires_grad=True)
    (torch.sign(x) * torch.relu(x.abs() - lams)).sum().backward()
    return x.grad, lams.grad


def slope_verdicts(grid: torch.Tensor, lam: float, dx: torch.Tensor, dlam: torch.Tensor) -> list:
    """One line per derivative on step 1's three pieces (x > λ, x < -λ, |x| < λ): ✓, or ✗ and
    the pieces where it differs, with how many points. The kinks |x| = λ (step 2) are left to
    the learner and the self-check: a checker that confirmed them too would confirm the whole
    formula the exercise asks for."""
    classes = [("x > λ", grid > lam), ("x < -λ", grid < -lam), ("|x| < λ", grid.abs() < lam)]
    kinks = int((grid.abs() == lam).sum())
    pieces = sum(int(at.sum()) for _, at in classes)
    lines = []
    for name, mine, truth in zip(DERIVATIVES, (dx, dlam), _autograd_slopes(grid, lam)):
        wrong = ~torch.isclose(mine, truth)
        missed = [f"{where} ({int(wrong[at].sum())} of {int(at.sum())} points)"
                  for where, at in classes if wrong[at].any()]
        rest = "; the other pieces agree" if len(missed) < sum(bool(at.any())
                                                               for _, at in classes) else ""
        lines.append(f"{name}, λ = {lam}: " + (
            f"✓ at the {pieces} points off the kinks" if not missed
            else "✗ on " + "; ".join(missed) + rest)
            + f" ({kinks} kink point{'s' * (kinks != 1)} |x| = λ not checked: step 2 is "
               "yours)")
    return lines
