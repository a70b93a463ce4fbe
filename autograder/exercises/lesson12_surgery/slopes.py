"""Lesson 12: the live checker of the SoftThreshold derivation (my_soft_threshold_slopes). It
compares the learner's dy/dx with autograd's through the forward formula off the kinks and says
only whether it agrees there, and at how many points not: never the right values, never which
piece. dy/dλ and the kinks |x| = λ are left to the learner and the self-check (a checker that
confirmed them too, or named the piece that differs, would confirm the whole formula the
exercise asks for). The reference lives here, not in the learner's cell, where printing it
would hand the answer over."""

import torch


def _autograd_dx(x: torch.Tensor, lam: float) -> torch.Tensor:
    """dy_i/dx_i by autograd through the forward formula."""
    x = x.detach().clone().requires_grad_()
    (torch.sign(x) * torch.relu(x.abs() - lam)).sum().backward()
    return x.grad


def slope_verdicts(grid: torch.Tensor, lam: float, dx: torch.Tensor, dlam: torch.Tensor) -> list:
    """One line: dy/dx off the kinks, ✓ or ✗ with how many of those points differ. ``dlam`` is
    plotted by the cell, not judged."""
    off = grid.abs() != lam
    kinks = int((~off).sum())
    wrong = int((~torch.isclose(dx, _autograd_dx(grid, lam)) & off).sum())
    verdict = (f"✓ at the {int(off.sum())} points off the kinks" if not wrong else
               f"✗ at {wrong} of the {int(off.sum())} points off the kinks: your plot beside "
               "y's shows where")
    return [f"dy/dx, λ = {lam}: {verdict} ({kinks} kink point{'s' * (kinks != 1)} |x| = λ not "
            "checked, nor dy/dλ: they are yours, and the self-check grades them)"]
