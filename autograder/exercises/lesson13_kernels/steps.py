"""Lesson 13's "check one step live" cells: the learner's numbers in, a verdict printed. The
slips each wrong number is compared with live here, not in the notebook, whose source would
otherwise show the answer next to the question."""

import torch
import torch.nn.functional as F

_NEAR = 5e-4


def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):  # not a number: shown, not raised
        return None


def _entry(label: str, mine, truth: float, slips: dict, right: str, otherwise: str) -> str:
    number = _number(mine)
    if number is None:
        return f"{label}: ✗ {mine!r} is not a number"
    if abs(number - truth) < _NEAR:
        return f"{label}: ✓ {right}"
    near = next((why for value, why in slips.items() if abs(number - value) < _NEAR), None)
    rounded = _rounding_of(number, truth)
    if near is None and rounded is not None:
        return (f"{label}: ✗ {number}: autograd's value rounded to {rounded} "
                f"decimal{'s' if rounded != 1 else ''}: give 4")
    return f"{label}: ✗ {number}: " + (near or otherwise)


def _rounding_of(number: float, truth: float) -> int | None:
    """The decimals (1 to 3) to which ``truth`` rounds to ``number``, if it does: a right
    derivation written too short, not a wrong one."""
    return next((places for places in range(1, 4)
                 if abs(number - truth) <= 0.5 * 10 ** -places + 1e-12
                 and abs(number - round(number, places)) < 1e-12), None)


def _silu_dy_da(a: float, b: float, sign: float = 1.0) -> float:
    s = torch.sigmoid(torch.tensor(a, dtype=torch.float64)).item()
    return b * s * (1 + sign * a * (1 - s))


_A, _B, _G = (torch.tensor(v, dtype=torch.float64) for v in (
    (-3.0, -0.5, 0.7, 2.5), (1.3, -0.4, 2.0, 0.9), (0.6, 1.7, -1.1, 0.8)))
_NAMES = {"sigmoid": torch.sigmoid, "σ": torch.sigmoid, "exp": torch.exp, "silu": F.silu,
          "torch": torch, "a": _A, "b": _B, "g": _G}


def _shared_verdict(my_shared) -> str:
    """Question 1's free answer, an expression in a, b and g, evaluated at four points and
    compared with sigmoid(a) and g * sigmoid(a) (both factors of both gradients) and with the
    near misses (y, g * b, exp(-a))."""
    if my_shared is None:
        return "answer it in my_shared"
    text = str(my_shared).strip().casefold()
    try:
        value = eval(text, {"__builtins__": {}}, dict(_NAMES))  # noqa: S307 -- the learner's own
        value = value(_A) if callable(value) else value
        value = torch.as_tensor(value, dtype=torch.float64).expand(_A.shape)
    except Exception:  # noqa: BLE001 -- shown, not raised
        return (f"✗ {my_shared!r} is no expression in a, b and g this cell can evaluate "
                "(sigmoid, exp and silu are there)")
    def near(other):
        return torch.allclose(value, other, rtol=1e-6, atol=1e-9)
    if near(torch.sigmoid(_A)):
        return "✓ both gradients need it"
    if near(_G * torch.sigmoid(_A)):  # a true factor of both: g s is in each (issue 68)
        return "✓ a factor of both gradients: compute it once"
    if near(torch.exp(-_A)):
        return "✗ closer: both gradients need a function of it. Which one?"
    if any(near(t) for t in (F.silu(_A) * _B, _G * _B, F.silu(_A), _G * F.silu(_A))):
        return ("✗ is that a factor of both? Write both gradients out: which factor is in "
                "each?")
    return "✗ not a factor of both gradients: write both out, and look for what they share"


def check_silu_steps(my_dy_da, my_shared, my_exps_per_element) -> None:
    """Exercise 1: dy/da of silu(a) * b at a = -2, b = 3 against autograd, and the two
    design answers (the factor both gradients share, the exponentials per element)."""
    a = torch.tensor(-2.0, dtype=torch.float64, requires_grad=True)
    (F.silu(a) * 3.0).backward()
    truth, s = a.grad.item(), torch.sigmoid(torch.tensor(-2.0, dtype=torch.float64)).item()
    slips = {3 * s: "3·σ(-2): the product rule has a second term. silu(a) = a·σ(a), and σ "
                    "moves with a too: what does σ'(a) add?",
             truth / 3: "d silu/da alone: y is silu(a)·b, so what does b = 3 do to it?",
             _silu_dy_da(-2.0, 3.0, sign=-1.0): "a sign: what is σ'(a) in terms of σ(a), and "
                                                "what is a here?",
             -2 * s: "silu(-2): that is dy/db, not dy/da"}
    print("dy/da: write your number into my_dy_da first" if my_dy_da is None else _entry(
        "dy/da at a = -2, b = 3", my_dy_da, truth, slips,
        "negative, as autograd's: silu decreases below a ≈ -1.28",
        "not autograd's. Which factors of y move with a?"))
    print("question 1: " + _shared_verdict(my_shared))
    exps = my_exps_per_element
    print("question 2: " + (
        "answer it in my_exps_per_element" if exps is None else
        "✓ one exponential per element" if exps == 1 else
        "✗ silu(a) itself needs one" if exps == 0 else
        f"✗ {exps}: once one is computed, what does the other one give you?"))


def check_rms_saved(my_rms_saved) -> None:
    """Exercise 2's saving bound, live: what setup_context keeps ({name: "input", or its element
    count as an expression in rows and D}), sized at 1,000 and a million rows of D = 4096
    against the contract's bound, the inputs plus one number per row."""
    if my_rms_saved is None:
        print("saved: answer in my_rms_saved")
        return
    if not isinstance(my_rms_saved, dict) or not my_rms_saved:
        print(f"saved: ✗ {my_rms_saved!r}: write a dict, {{name: \"input\" or its number of "
              "elements in rows and D}")
        return
    D, totals = 4096, {}
    for rows in (1_000, 1_000_000):
        total = 0
        for name, size in my_rms_saved.items():
            if str(size).strip() == "input":
                if name not in ("x", "weight"):
                    print(f"saved: ✗ {name!r} marked \"input\": rms_norm_rows's tensor inputs "
                          "are x and weight")
                    return
                continue
            try:  # the learner's own expression, in rows and D only
                count = eval(str(size), {"__builtins__": {}}, {"rows": rows, "D": D})  # noqa: S307
                total += int(count)
            except Exception:  # noqa: BLE001 -- shown, not raised
                print(f"saved: ✗ {name!r}: {size!r} is not an element count in rows and D")
                return
        totals[rows] = total
    worst = max(totals, key=lambda rows: totals[rows] / rows)
    if totals[worst] > worst:
        print(f"saved: ✗ {totals[worst]:,} numbers besides the inputs at {worst:,} rows of "
              f"D = {D}, over the contract's bound of one per row ({worst:,}): which of them "
              "can your backward get from the others?")
    else:
        print(f"saved: ✓ within the bound: {totals[1_000]:,} numbers besides the inputs at "
              f"1,000 rows, {totals[1_000_000]:,} at a million (at most one per row)")


def check_rms_steps(my_dy0_dx1, my_partials_1k, my_partials_1m, my_rms_saved=None) -> None:
    """Exercise 2: dy[0]/dx[1] of F.rms_norm for one row against autograd's Jacobian; what
    setup_context keeps, against the contract's bound (check_rms_saved); then the learner's
    own layout of the weight gradient's partial rows, sized at 1,000 rows and at a million
    (the layout itself is theirs: no group size is given or asked)."""
    row, w_row = (torch.tensor(v, dtype=torch.float64)
                  for v in ((1.0, 2.0, 3.0), (1.0, 0.5, 2.0)))
    jacobian = torch.autograd.functional.jacobian(
        lambda x: F.rms_norm(x, (3,), w_row, 0.0), row)
    r = row.square().mean().rsqrt().item()
    truth = jacobian[0, 1].item()
    slips = {0.0: "0: y_0 = x_0 r w_0 has no x_1 in it, but r does. Which sum is r made of?",
             truth * 3: "no 1/D: r is the root of a mean; what does the mean bring to dr/dx_1?",
             -truth: "the sign: r = (q + ε)^(-1/2) falls as x_1 grows",
             jacobian[1, 0].item(): "that is dy_1/dx_0: which index is the output's?"}
    assert abs(truth * 3 + 2 * r ** 3) < 1e-12  # x_0 w_0 x_1 = 2: the slip is -2 r^3
    print("dy[0]/dx[1]: write your number into my_dy0_dx1 first" if my_dy0_dx1 is None
          else _entry("dy[0]/dx[1]", my_dy0_dx1, truth, slips,
                      "autograd's: the path through r reaches every y_k",
                      "not autograd's. Through which of y_0's factors does x_1 reach it?"))
    check_rms_saved(my_rms_saved)
    if my_partials_1k is None or my_partials_1m is None:
        print("layout: write my_partials_1k and my_partials_1m first")
        return
    counts = {}
    for rows, given in ((1_000, my_partials_1k), (1_000_000, my_partials_1m)):
        if isinstance(given, bool) or not isinstance(given, int) or not 1 <= given <= rows:
            print(f"layout: ✗ {given!r} partial rows at {rows:,} rows: a whole number from 1 "
                  f"(one program for every row) to {rows:,} (one program per row)")
            return
        counts[rows] = given
    D = 4096  # the contract's largest row; float32 partials

    def size(n):
        return f"{n * D * 4 / 2**20:,.1f} MiB"
    for rows, n in counts.items():
        print(f"  {rows:,} rows of D = {D}: your buffer holds {n:,} partial row{'s' * (n != 1)}, {size(n)} "
              f"in float32 (x itself: {size(rows)})")
    small, large = counts[1_000], counts[1_000_000]
    if large > small:
        percent = 100 * large / 1_000_000  # one significant digit at least: 0.1%, not 0%
        print("layout: graded as right, but your buffer grows with the batch: at a million "
              f"rows it is {f'{percent:.0f}' if percent >= 1 else f'{percent:.1g}'}% of x, "
              "allocated in backward and summed on "
              "the host. What would keep it the same size whatever the number of rows?")
    elif large == 1:
        print("layout: graded as right, but one program then does every row, one after the "
              "other, where a GPU has a hundred or more multiprocessors. How many programs "
              "would keep them busy?")
    else:
        print("layout: ✓ the same size whatever the batch. How many rows does each program "
              "then take, and what stops the last one at the end of x?")


def check_silu_design(my_saved, my_backward_launch) -> None:
    """Exercise 1's design, before the answer cell: what setup_context saves, against the
    derivation (a and b are what both gradients read, with g), and where the backward's kernel
    launches, in the learner's words, against what the worked example printed (the registered
    backward is handed a FunctionalTensor under torch.compile; an operator's body is handed
    real tensors). Any answer that puts the launch behind an operator of its own is right,
    whatever that operator takes and returns."""
    if my_saved is not None:
        saved = {str(name).strip() for name in ((my_saved,) if isinstance(my_saved, str)
                                                else my_saved)}
        missing = [name for name in ("a", "b") if name not in saved]
        print("saved: " + (
            f"✗ {' and '.join(missing)} missing: which of your two gradients reads "
            f"{'them' if len(missing) > 1 else 'it'}?" if missing else
            "✗ a and b, but y too: which gradient reads y that a and b do not give? (y kept "
            "for backward is a whole extra activation in memory)"
            if "y" in saved else "✓ a and b: with g, all that both gradients read"))
    else:
        print("saved: answer in my_saved")
    print("launch: " + _launch_verdict(my_backward_launch))


def _launch_verdict(answer) -> str:
    """The verdict on where the backward's kernel launches, from the words of the answer."""
    if answer is None:
        return "answer in my_backward_launch"
    words = " ".join(str(answer).lower().replace("_", " ").split())
    if "triton op" in words:
        return "✗ a triton_op: the contract asks for a custom_op, not a triton_op"
    if "forward" in words and "backward" not in words:
        return "✗ forward runs before grad_output exists, and the kernel reads it"
    if "operator" in words or {"op", "ops"} & set(words.split()):
        return ("✓ behind an operator of its own: its body is handed real tensors, eager and "
                "compiled, and the tracers ask its fake for the outputs")
    if "fake" in words:
        return "✗ a fake implementation is only ever handed tensors without memory"
    if "backward" in words or "register autograd" in words:
        return ("✗ under torch.compile the registered backward was handed a FunctionalTensor "
                "(the worked example's second line): no memory for a kernel to read. What "
                "was handed real tensors both times?")
    return (f"? {answer!r}: name what launches it. Which of the worked example's functions "
            "was handed real tensors under torch.compile?")
