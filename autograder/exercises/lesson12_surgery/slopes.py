"""Lesson 12: the live checker of the SoftThreshold derivation (my_soft_threshold_slopes). It
compares the learner's dy/dx with autograd's through the forward formula off the kinks and says
only whether it agrees there, and at how many points not: never the right values, never which
piece. dy/dλ and the kinks |x| = λ are left to the learner and the self-check (a checker that
confirmed them too, or named the piece that differs, would confirm the whole formula the
exercise asks for). The reference lives here, not in the learner's cell, where printing it
would hand the answer over. The diagnosis checker of BrokenSwish's two faulty lines lives here
too, for the same reason."""

import hashlib

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


# BrokenSwish.backward's faulty lines, and the lines that pass each fault on, as fingerprints
# only: the notebook prints verdicts, never a line or a hash
_MAKES = {"bug 1, beta's gradient": "d29dd958ee1a", "bug 2, the nan": "3ed6f30c6a04"}
_PASSES_ON = {"bug 1, beta's gradient": {"220936ea1618"},
              "bug 2, the nan": {"97c5453c4a39", "2e5a080af59d", "d29dd958ee1a",
                                 "220936ea1618"}}


def fingerprint(line) -> str:
    """A short hash of a line of code, comments and spaces removed: equal lines, equal hashes."""
    return hashlib.sha256("".join(str(line).split("#")[0].split()).encode()).hexdigest()[:12]


def diagnosis_verdicts(bug_1_line, bug_2_line, backward_source: str) -> list:
    """One line per bug: found, passes the fault on, not at fault, or not a line at all."""
    lines = {fingerprint(line) for line in backward_source.splitlines()}
    verdicts = []
    for bug, answer in (("bug 1, beta's gradient", bug_1_line), ("bug 2, the nan", bug_2_line)):
        if answer is None:
            verdicts.append(f"{bug}: no line written at the top of this cell: write yours, then "
                            "run it again")
        elif fingerprint(answer) not in lines:
            verdicts.append(f"{bug}: not a line of BrokenSwish.backward: copy one as it is "
                            "written")
        elif fingerprint(answer) == _MAKES[bug]:
            verdicts.append(f"{bug}: found")
        elif fingerprint(answer) in _PASSES_ON[bug]:
            verdicts.append(f"{bug}: that line passes the fault on; which line computes it "
                            "first?")
        else:
            verdicts.append(f"{bug}: that line is not at fault; what did gradcheck, the hooks "
                            "and anomaly mode point to?")
    return verdicts
