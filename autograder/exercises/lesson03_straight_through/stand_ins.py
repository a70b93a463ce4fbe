"""Lesson 03's live checker of the two stand-ins the learner writes before Exercise 1 (A for
round, B for sign): each judged by its properties on a fine grid (continuous, within half a step
of round with one slope; sign where |x| >= 1 with the gentlest steepest slope), never compared
with an answer, and both drawn beside their forward."""

import torch


def stand_in_verdicts(stand_in_round, stand_in_sign) -> None:
    """Print whether each stand-in is continuous and does what its exercise asks, on a fine
    grid; on ✗, where."""
    # every 0.05, exact at 0 and halves
    grid = torch.arange(-20000, 20001, dtype=torch.float64) / 20
    inside = grid.abs() < 1
    offsets = torch.arange(1, 61, dtype=torch.float64) / 20  # 0.05, 0.1, ..., 3
    probes = torch.cat([offsets.new_zeros(1), torch.stack([offsets, -offsets], 1).flatten()])
    # 0, 0.05, -0.05, 0.1, ...: a jump at any of these shows, the nearest to 0 first

    def check_stand_in(name, stand_in, requirement, failure):
        """Print whether ``stand_in`` is continuous and meets its requirement; on ✗, where.
        ``failure(values, slopes)`` says how it misses the requirement, or None."""
        if stand_in is None:
            print(f"{name}: write the stand-in first.")
            return
        leaf = grid.clone().requires_grad_()
        stand_in(leaf).sum().backward()  # autograd's slope of your stand-in
        values = stand_in(grid).detach()
        jumps = (stand_in(probes + 1e-9) - stand_in(probes - 1e-9)).detach().abs() > 1e-6
        missed = None if jumps.any() else failure(values, leaf.grad)
        print(f"{name}: continuous, {requirement}:", "✗" if jumps.any() or missed else "✓")
        if jumps.any():
            k = jumps.nonzero()[0, 0]
            print(f"    yours jumps at x = {probes[k].item():g}. Autograd's slope sees no "
                  "jump: it is the slope of the pieces between the jumps (for "
                  f"{name} itself 0, the true derivative, which trains nothing)")
        elif missed:
            print(f"    {missed}")

    def round_failure(values, slopes):
        """Measured, never compared with an answer: more than half a step off round(x) by more
        than rounding (a few ulps of x: a stand-in exactly half a step off at a half, such as
        x itself or a smooth staircase, computes to 0.5 plus noise there), then one slope."""
        gap = (values - torch.round(grid)).abs() - 0.5
        gap = torch.where(gap > 4 * torch.finfo(grid.dtype).eps * grid.abs(), gap, 0.0)
        k = gap.argmax()
        if gap[k] > 0:
            return (f"furthest off at x = {grid[k].item():g}: yours {values[k].item():.12g}, "
                    f"round(x) {torch.round(grid[k]).item():g}")
        if slopes.min() != slopes.max():
            low, high = slopes.argmin(), slopes.argmax()
            return (f"its slope is {slopes[low].item():g} at x = {grid[low].item():g} but "
                    f"{slopes[high].item():g} at x = {grid[high].item():g}, not one slope "
                    "throughout")
        return None

    def sign_failure(values, slopes):
        """Measured, never compared with an answer: sign(x) where |x| >= 1 (to rounding: a few
        ulps of x, which a closed form such as |x + 1| rounds by), and the steepest slope,
        autograd's and between neighbouring grid points (0.05 apart)."""
        gap = torch.where(inside, 0.0, (values - torch.sign(grid)).abs())
        gap = torch.where(gap > 4 * torch.finfo(grid.dtype).eps * grid.abs(), gap, 0.0)
        if gap.max() > 0:
            k = gap.argmax()  # the furthest from sign, every digit shown
            return (f"at x = {grid[k].item():g}, where |x| >= 1, yours is {values[k].item()!r}, "
                    f"not sign(x) = {torch.sign(grid[k]).item():g}")
        steepest = max(slopes.abs().max().item(), (values.diff().abs().max() / 0.05).item())
        if steepest > 1 + 1e-9:
            return (f"its steepest slope is {steepest:g}: can a continuous function that equals "
                    "sign(x) wherever |x| >= 1 have a gentler steepest slope?")
        return None

    check_stand_in("round", stand_in_round, "within half a step of round(x), with one slope "
                   "throughout", round_failure)
    check_stand_in("sign", stand_in_sign, "sign(x) where |x| ≥ 1, the gentlest steepest slope in "
                   "between", sign_failure)


def check_stand_ins(stand_in_round, stand_in_sign) -> None:
    """Judge both stand-ins (``stand_in_verdicts``) and, once both are written, draw each
    beside its forward."""
    stand_in_verdicts(stand_in_round, stand_in_sign)
    if None in (stand_in_round, stand_in_sign):
        return
    import matplotlib.pyplot as plt  # here: grading never draws, and never loads matplotlib

    xs = torch.linspace(-2.5, 2.5, 501, dtype=torch.float64)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), sharey=True)
    for ax, (name, forward, stand_in) in zip(axes, [("round", torch.round, stand_in_round),
                                                    ("sign", torch.sign, stand_in_sign)]):
        ax.plot(xs, forward(xs), lw=2, label=f"forward: {name}(x)")
        ax.plot(xs, stand_in(xs), lw=1, label="your stand-in")
        ax.plot(xs, torch.zeros_like(xs), "k--", lw=1, label="true derivative: 0")
        ax.set(title=f"{name}: forward and stand-in", xlabel="x")
        ax.legend(fontsize=8, loc="upper left")
    plt.show()
