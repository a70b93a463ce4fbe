# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 01 · Sigmoid and ReLU: what to save, and how to stay finite
#
# **About 120 minutes** for the main path, up to the Summary, the four exercises included; the
# optional sections after it take about 30 more.
#
# Every `Function` you write makes two decisions that autograd used to make for you: **which
# tensors to keep** for backward, and **how to compute** the forward so that nothing overflows.
# By the end of this lesson you can:
# 1. choose between saving a Function's input, its output or a mask, and say what each costs;
# 2. write a sigmoid whose values and gradients stay finite at $x = \pm 800$;
# 3. decide what a kink's backward needs to know, pick a gradient at ties, and return `None`
#    for a mask or a number;
# 4. keep tiny numbers accurate next to 1, where $\log(1 + u)$ or $e^u - 1$ meets a tiny $u$.
#
# Exercises: **✎ 1 `MySigmoid`**, **✎ 2 `MyReLU`**, **✎ 3 `ScaledSigmoid`**, and **`Softplus`**,
# which you write alone. Every Function obeys lesson 00's
# [Function contract](function_contract.md), and each self-check runs every check the hidden tests
# run. **Predict, then run** cells ask for your prediction in a variable first.

# %% nbgrader={"locked": true}
import warnings

import matplotlib.pyplot as plt
import torch
from torch.autograd.graph import saved_tensors_hooks

from autograder import self_check
from autograder.predictions import compare_all, written
from widgets import backward_flow, inspect_saved

_ = torch.manual_seed(0)
torch.set_printoptions(precision=4)


# %% [markdown]
# ## Why rewrite a sigmoid?
#
# The sigmoid $\sigma(x) = \dfrac{1}{1 + e^{-x}}$ squashes any number into $(0, 1)$, turning
# scores into probabilities. PyTorch has `torch.sigmoid`; we write it again as the smallest
# example of two questions every custom Function answers:
#
# - **What does backward need, and what is the cheapest way to keep it?** Autograd keeps every
#   intermediate any step might need. You can often keep much less.
# - **Can the formula overflow?** The textbook formula contains $e^{-x}$, which is larger than
#   the largest float64 as soon as $x < -709.8$.

# %% [markdown]
# ## The maths: what does the sigmoid's backward need?
#
# Derive it on paper.
#
# 1. Differentiate $\sigma(x) = (1 + e^{-x})^{-1}$ with the chain rule.
# 2. Write your result in terms of $y = \sigma(x)$ alone, without $x$.
# 3. What does the Jacobian look like, and what is the vector-Jacobian product `grad_input`?
# 4. So which tensor must forward keep for backward: $x$, $y$, or both? Weigh what backward
#    would compute from each, and which of them other nodes of a network keep anyway.
#
# **Check your step 1 live.** Write $\sigma'(x)$ of a float64 tensor `x` into the next cell (a
# `lambda x: ...`) and run the one after it, which compares yours with autograd's derivative of
# `torch.sigmoid`. Steps 2 to 4 are Exercise 1's decisions.

# %%
### BEGIN WORKED
sigmoid_slope = lambda x: torch.exp(-x) / (1 + torch.exp(-x)) ** 2
### LEARNER
sigmoid_slope = None  # your step 1: lambda x: ...
### END WORKED

# %%
if sigmoid_slope is None:
    print("Write your step 1 into sigmoid_slope first.")
else:
    probe = torch.linspace(-8, 8, 9, dtype=torch.float64, requires_grad=True)
    torch.sigmoid(probe).sum().backward()
    x = probe.detach()
    try:
        yours = torch.as_tensor(sigmoid_slope(x), dtype=x.dtype).expand_as(x)
    except Exception as error:  # an error in your lambda, shown in one line
        print(f"✗ sigmoid_slope raised {type(error).__name__}: {error}. "
              "Write it with tensor operations on x, which work on every entry at once.")
    else:
        wrong = []
        for point, mine, truth in zip(x.tolist(), yours.tolist(), probe.grad.tolist()):
            right = abs(mine - truth) <= 1e-12 * max(1.0, abs(truth))
            print(f"x = {point:5.1f}   yours {mine:.6g}   autograd {truth:.6g}   "
                  f"{'✓' if right else '✗'}")
            if not right:
                wrong.append(point)
        if not wrong:
            print("✓ all nine match")
        elif torch.allclose(yours, x * (1 - x)):
            print("✗ this is x (1 - x): the checker passes x itself, not y = σ(x); step 1 is "
                  "the derivative written with x")
        else:
            print(f"✗ wrong at x = {', '.join(f'{w:g}' for w in wrong)}: redo step 1 by hand "
                  "at one of them")

# %% [markdown]
# <details><summary><b>Hint</b> (step 2)</summary>
#
# Your step 1 is a product of two fractions, or can be split into one. Which factor is $y$?
# Which short expression in $y$ takes the same values as the other at $x = 0$ and at $x = 2$?
# </details>
#
# <details><summary><b>Numbers to hit</b> (step 2, after your attempt)</summary>
#
# $\sigma'(0) = 0.25$ and $\sigma'(2) = 0.1050$. Compute $y$ at those two points yourself: your
# expression in $y$ must give these from $y$ alone.
# </details>
#
# <details><summary><b>Hint</b> (step 4: questions)</summary>
#
# Lesson 00's `SquareFromOutput` saved its output and lost the sign of $x$. Does $y$ lose anything
# the sigmoid's derivative needs? What would backward have to compute from each of them? And
# in a network, what does the layer after your Function keep for its own backward?
# </details>

# %% [markdown]
# ## Staying finite: the overflow in $e^{-x}$
#
# The largest float64 is about $1.8 \times 10^{308} = e^{709.78}$; beyond it, `torch.exp` returns
# `inf`. Both textbook formulas meet it:
#
# - $\dfrac{1}{1 + e^{-x}}$: for $x < -709.8$ the value is $1/\infty = 0$, but autograd's
#   derivative is `nan`: `ExpBackward0` multiplies a $0$ by the saved $e^{-x} = \infty$.
# - $\dfrac{e^{x}}{1 + e^{x}}$: for $x > 709.8$ the forward itself is $\infty/\infty$: `nan`.

# %%
def value_and_gradient(formula, x):
    """formula(x) and its derivative by autograd, for an element-wise formula."""
    x = x.detach().clone().requires_grad_()
    y = formula(x)
    y.sum().backward()  # y_i depends on x_i only, so x.grad[i] = dy_i / dx_i
    return y.detach(), x.grad


naive = {
    "1 / (1 + exp(-x))": lambda x: 1 / (1 + torch.exp(-x)),
    "exp(x) / (1 + exp(x))": lambda x: torch.exp(x) / (1 + torch.exp(x)),
}
points = torch.tensor([-800.0, -710.0, 0.0, 710.0, 800.0], dtype=torch.float64)
print("x:", points)
for name, formula in naive.items():
    y, grad = value_and_gradient(formula, points)
    print(f"\n{name}\n  value:   ", y, "\n  gradient:", grad)

# %% [markdown]
# ## The fix: one formula per sign
#
# Work out a formula whose every intermediate stays finite on both sides, so that no backward
# built on it meets an `inf`:
#
# 1. For $x \ge 0$, which of the two formulas has only exponentials that are at most $1$?
#    Which one for $x < 0$?
# 2. Find one exponential $z$ that serves both sides and can never overflow. Write each side's
#    formula in terms of $z$ alone.
# 3. What happens to your formula for very negative $x$, where $z$ rounds to $0$?
# 4. How can one tensor expression pick a formula per entry? Does a `nan` in the formula not
#    picked survive in the value?
#
# <details><summary><b>Hint 1</b> (which exponential is small)</summary>
#
# On each side of $0$, one of $e^{x}$, $e^{-x}$ is at most $1$: which one? What do the two small
# ones have in common, as one expression in $x$?
# </details>
#
# **Check your $z$ live.** Write your $z$ of step 2 (a `lambda x: ...`, for any $x$) into the next
# cell and run the one after it: it tries your $z$ on both sides of $0$. Each side's formula in
# $z$ is Exercise 1's.

# %%
### BEGIN WORKED
exponential_z = lambda x: torch.exp(-x.abs())
### LEARNER
exponential_z = None  # your z of step 2, for any x: lambda x: ...
### END WORKED

# %%
def _tensor_of(function, at):
    """function(at) as a float64 tensor of at's shape, or the error it raised, in one line."""
    try:
        return torch.as_tensor(function(at), dtype=torch.float64).expand_as(at), None
    except Exception as error:  # an error in your lambda, shown in one line
        return None, (f"raised {type(error).__name__}: {error}. Write it with tensor "
                      "operations, which work on every entry at once.")


if exponential_z is None:
    print("Write your z into exponential_z first.")
else:
    far_to_near = torch.tensor([1e300, 800.0, 40.0, 5.0, 1.0, 0.25], dtype=torch.float64)
    sides = {"x < 0": -far_to_near, "x > 0": far_to_near}
    said = []
    for side, at in sides.items():  # each side alone: its points from far out towards 0
        zs, failed = _tensor_of(exponential_z, at)
        if failed:
            said.append(f"exponential_z {failed}")
            break
        outside = [f"{p:g} (z = {v:g})" for p, v in zip(at.tolist(), zs.tolist())
                   if not 0 <= v <= 1]  # nan fails both comparisons
        if outside:
            said.append(f"on the side {side}, your z leaves [0, 1] at x = {', '.join(outside)}: "
                        "step 2 asks for an exponential that can never overflow; on that side, "
                        "which one is at most 1?")
        elif not bool((zs[2:].diff() > 0).all()):  # |x| from 40 down to 0.25: z must grow
            said.append(f"on the side {side}, your z does not grow as x nears 0 (at x = "
                        f"{', '.join(f'{p:g}' for p in at[2:].tolist())} it is "
                        f"{', '.join(f'{v:.3g}' for v in zs[2:].tolist())}): a formula in z "
                        "alone could not tell these points apart, or your z is not one that "
                        "shrinks far from 0")
    print("✗ " + "\n✗ ".join(said) if said else
          "✓ your z stays in [0, 1] out to |x| = 1e300 on both sides, and tells the points of "
          "each side apart: each side's formula in z is yours to work out in Exercise 1")

# %% [markdown]
# ## ✎ Exercise 1 · `MySigmoid`
#
# Write `MySigmoid`, with `MySigmoid.apply(x)` returning $\sigma(x)$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - forward and backward are formulas of your own: no PyTorch sigmoid in forward (`torch.sigmoid`,
#   or an op that runs it) and no sigmoid backward op in backward;
# - forward saves one tensor, the one step 4 of the maths asks you to choose, and that tensor
#   itself: `t.detach()` or a view of `t` is another tensor, cut from the graph;
# - in float64, values and gradients finite for $|x|$ up to 800, for $x < 0$ accurate relative to
#   their size wherever they are normal float64 numbers, the left tail included
#   ($\sigma(-40) \approx 4.2 \times 10^{-18}$, not $0$), and for $x \ge 0$ accurate in absolute
#   terms, to a few units in the last place of $1$.
#
# Decide before you write, and say why in a comment beside `save_for_backward`: which tensor will
# your backward read, and what would the other choice have cost, in work and in memory?

# %% nbgrader={"grade_id": "answer_MySigmoid", "solution": true}
class MySigmoid(torch.autograd.Function):
    """y = 1 / (1 + exp(-x)), computed without overflow."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        z = torch.exp(-x.abs())  # in (0, 1]: never overflows
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)  # y(1 - y) needs no exponential; the next layer keeps y anyway
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)  # d/dx sigmoid(x) = y (1 - y)
        ### END SOLUTION


# %% nbgrader={"grade_id": "MySigmoid", "grade": true, "points": 2}
self_check("MySigmoid", MySigmoid)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MySigmoid", MySigmoid)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\sigma'(x) = \sigma(x)\,\big(1 - \sigma(x)\big) = y\,(1 - y)$: a diagonal Jacobian, so the
# vector-Jacobian product is element-wise.
# Backward needs **only the output $y$**: from $x$ it would compute an exponential again; $y$
# costs no new memory wherever the next layer keeps it (a linear layer keeps its input); and from
# $y \in [0, 1]$ backward has no exponential to overflow.
#
# Forward: for $x \ge 0$, $1/(1 + z)$ with $z = e^{-|x|}$; for $x < 0$, multiply the top and
# bottom of $1/(1 + e^{-x})$ by $e^{x} = z$ to get $z/(1 + z)$; `torch.where(x >= 0, ...)` picks
# per entry. The grader checks the contract, not the formula: other forwards of your own pass too
# (the optional "Would a simpler forward have done?" says which, and why this one is kept).
# </details>
#
# Your sigmoid at the points where the textbook formulas broke:

# %%
y, grad = value_and_gradient(MySigmoid.apply, points)
print("x:       ", points)
print("value:   ", y)
print("gradient:", grad)
print("all finite:", bool(torch.isfinite(y).all() and torch.isfinite(grad).all()))

# %% [markdown]
# The inspector lists what your `MySigmoid` saved and its **role**: `output` is what step 4
# asked for.

# %%
inspect_saved(MySigmoid, torch.linspace(-800, 800, 1000, dtype=torch.float64))

# %% [markdown]
# ## Tiny numbers next to 1: `log1p` and `expm1`
#
# Your sigmoid's left tail is a tiny number kept apart from $1$. Two other shapes put a tiny $u$
# next to $1$ often, $\log(1 + u)$ and $e^u - 1$: the log-probability $\log(1 - p)$ of a rare
# event, the growth $e^{rt} - 1$ at a small rate.
# `torch.log1p(u)` computes $\log(1 + u)$ without forming $1 + u$; `torch.expm1(u)` computes
# $e^u - 1$ without forming $e^u$.
#
# **Predict, then run.** float64 keeps about 16 significant digits. For $p = 10^{-20}$, what does
# `torch.log(1 - p)` return? For $u = 10^{-20}$, `torch.exp(u) - 1`? For $p = 10^{-10}$, how many
# correct digits does `torch.log(1 - p)` keep: about 16, 7, or 0?

# %%
### BEGIN WORKED
predicted_tiny = {"log(1 - p) at p = 1e-20": 0.0, "exp(u) - 1 at u = 1e-20": 0.0,
                  "digits of log(1 - p) at p = 1e-10": 7}
### LEARNER
predicted_tiny = {"log(1 - p) at p = 1e-20": None, "exp(u) - 1 at u = 1e-20": None,
                  "digits of log(1 - p) at p = 1e-10": None}
### END WORKED

# %%
small = torch.tensor([1e-20, 1e-10, 1e-3], dtype=torch.float64)
for name, plain, careful in [("log(1 - p)", torch.log(1 - small), torch.log1p(-small)),
                             ("exp(u) - 1", torch.exp(small) - 1, torch.expm1(small))]:
    if written(predicted_tiny):  # the naive results hold the answers
        print(f"{name:<11} naive:   {plain.tolist()}\n{'':<11} careful: {careful.tolist()}")
error = (torch.log(1 - small[1]) - torch.log1p(-small[1])).abs() / small[1]
compare_all(predicted_tiny, {"log(1 - p) at p = 1e-20": torch.log(1 - small[0]).item(),
                    "exp(u) - 1 at u = 1e-20": (torch.exp(small[0]) - 1).item(),
                    "digits of log(1 - p) at p = 1e-10": round(-torch.log10(error).item())})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# $1 - 10^{-20}$ and $e^{10^{-20}}$ are both exactly $1$ in float64, so both naive forms return
# $0$: a relative error of 100%. At $10^{-10}$ they keep about 7 digits of 16: $1 - p$ stored only
# the first digits of $p$. The careful forms keep every digit.
# </details>

# %% [markdown]
# ## A kink: the ReLU
#
# $\mathrm{relu}(x) = \max(x, 0)$. Before the code, answer on paper:
#
# 1. What is $\partial y_i / \partial x_j$? At $x = 0$ the ReLU has no derivative: which value
#    would you use there?
# 2. What does backward need to know about $x$: its values, or less?
# 3. Three tensors could carry that: the input $x$, the output $y$, or a new boolean tensor.
#    What does each cost, counting only memory nobody else keeps?

# %% [markdown]
# ## ✎ Exercise 2 · `MyReLU`
#
# Write `MyReLU`, with `MyReLU.apply(x)` returning $\max(x, 0)$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - the value and the gradient of `torch.relu` for every finite `x`, **$x = 0$ exactly** included
#   (question 1: run `torch.relu` there to see which value it chose), in float64, float32 and
#   float16;
# - forward saves one tensor that adds at most one byte an element of new memory where a linear
#   layer follows, and that tensor itself, not an alias such as `t.detach()`.
#
# Say why in a comment beside `save_for_backward`: what your choice costs per element of new
# memory, and in which network it is the cheaper one.

# %% nbgrader={"grade_id": "answer_MyReLU", "solution": true}
class MyReLU(torch.autograd.Function):
    """y = max(x, 0)."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        # a bool mask, 1 byte an element: the choice where nothing else keeps x or y; where
        # the next layer keeps y anyway, saving y costs nothing new
        positive = x > 0
        ctx.save_for_backward(positive)
        return x.clamp(min=0)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        positive, = ctx.saved_tensors
        # d/dx relu(x) = 1[x > 0]; where, not a product: inf * 0 would be nan
        return torch.where(positive, grad_output, 0)
        ### END SOLUTION


# %% nbgrader={"grade_id": "MyReLU", "grade": true, "points": 1}
self_check("MyReLU", MyReLU)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MyReLU", MyReLU)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Two choices pass: the output $y$ itself (no new memory where the next layer keeps it), or a mask
# of its own: `torch.bool` (or `uint8`), one byte an element, or bits packed eight to a byte, an
# eighth of a byte for the price of packing and unpacking. Not `x` (after a linear layer nothing
# else keeps it), not a copy, and not a mask in a wider dtype. The gradient is $1$ where $x > 0$
# and $0$ elsewhere, $x = 0$ included, as `torch.relu`'s.
# </details>

# %% [markdown]
# ## Worked example: a mask that routes between two inputs (`torch.where`)
#
# Here the mask arrives as an input. `torch.where(mask, a, b)` takes `a`'s entry where `mask`
# holds and `b`'s elsewhere (masked attention scores are built this way); `Select.apply(mask, a,
# b)` writes it as a Function. $\partial y_i / \partial a_i$ is $1$ where $\text{mask}_i$ holds
# and $0$ elsewhere, $\partial y_i / \partial b_i$ the other way round: each element of
# `grad_output` goes to one input, so the mask **routes** the gradient. Backward needs only the
# mask, an input, which costs nothing new. A boolean tensor has no gradient: backward returns
# `None` in its place (rule 2 of the contract).

# %%
class Select(torch.autograd.Function):
    """y = torch.where(mask, a, b) for a boolean mask and float a, b of one shape."""

    @staticmethod
    def forward(ctx, mask, a, b):
        ctx.save_for_backward(mask)  # an input: the caller holds it already
        return torch.where(mask, a, b)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        grad_a = torch.where(mask, grad_output, 0)  # routed to a where a was picked
        grad_b = torch.where(mask, 0, grad_output)  # and to b everywhere else
        return None, grad_a, grad_b  # None: a bool has no gradient


mask = torch.tensor([True, False, True, False])
a = torch.randn(4, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(lambda a, b: Select.apply(mask, a, b), (a, b)))


# %% [markdown]
# Returning only two values raises "returned an incorrect number of gradients (expected 3,
# got 2)".

# %% [markdown]
# ## A Python number as a second input: the scaled sigmoid
#
# Now $y = s\,\sigma(x)$, with the scale $s$ a Python float of any size and sign, zero included.
# `MySigmoid` kept its output because $y$ alone gave its derivative: does that still hold with a
# scale in front? Answer on paper:
#
# 1. What is $\partial y / \partial x$, and what does backward return for $s$?
# 2. Which tensors could forward keep for backward? For each, what does backward compute from it,
#    and what memory does it cost that nothing else in a network keeps?
# 3. For each candidate, at every scale the contract allows, the smallest and largest included,
#    does backward get the gradient from it to float64's precision?
#
# **Check question 1 live, at one point.** Work out $\partial y / \partial x$ at $x = 1$ with
# $s = -2$ ($\sigma(1) \approx 0.7311$), write it into the next cell, then run the one after it.

# %%
### BEGIN WORKED
scaled_slope = -2 * 0.7311 * (1 - 0.7311)
### LEARNER
scaled_slope = None  # your number: dy/dx at x = 1, s = -2
### END WORKED

# %%
if scaled_slope is None:
    print("Write your number for question 1 into scaled_slope first.")
else:
    at = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    (-2.0 * torch.sigmoid(at)).backward()
    truth, sig = at.grad.item(), torch.sigmoid(at).item()
    try:
        mine = float(scaled_slope)
    except (TypeError, ValueError, RuntimeError):  # a lambda or a tensor of several numbers
        mine = None
    near = lambda a, b: a is not None and abs(a - b) <= 1e-3 * abs(b)  # 4 digits will do
    if mine is None:
        print(f"✗ scaled_slope is a {type(scaled_slope).__name__}: write one number")
    elif near(mine, truth):
        print(f"✓ {mine:.4g}: autograd's derivative at x = 1, s = -2 is {truth:.6g}")
    elif near(mine, -truth):
        print("✗ the sign: at s = -2, does y rise or fall as x grows?")
    elif near(mine, sig * (1 - sig)):
        print("✗ that is σ'(1) alone: what does the chain rule do with a constant factor?")
    elif near(mine, -2 * sig):
        print("✗ that is y itself at x = 1: differentiate σ, as in step 1 of the maths")
    else:
        print(f"✗ {mine:.4g} is not ∂y/∂x at x = 1, s = -2: redo question 1 there by hand")

# %% [markdown]
# <details><summary><b>Hint 1</b> (the derivative: questions)</summary>
#
# What does the chain rule do with a constant factor? Of $x$ and the Python float $s$, which can
# carry a gradient, and what does backward return for the other?
# </details>
#
# <details><summary><b>Hint 2</b> (what to save: the candidates)</summary>
#
# Besides $x$ and $y$, forward computes $\sigma(x)$ on the way: a third candidate. Which of the
# three does the caller or the next layer hold anyway? Which is neither an input nor an output of
# your Function (lesson 04 says why that matters)?
# </details>
#
# <details><summary><b>Hint 3</b> (question 3: questions)</summary>
#
# Write $\sigma(x)$ in terms of $y$ and $s$. Is there a scale the contract allows at which that
# expression is not a number? What does $y$ hold there: could any backward tell $x = -3$ from
# $x = 5$ by it? And what is the true gradient there?
# </details>
#
# <details><summary><b>Hint 4</b> (the sizes: questions)</summary>
#
# List the intermediates your backward forms and the size of each in terms of $s$. Which of them
# stays a number at every scale the contract allows? At the largest and the smallest scales,
# does any of them leave float64's range while the gradient itself does not?
# </details>

# %% [markdown]
# ## ✎ Exercise 3 · `ScaledSigmoid`
#
# Write `ScaledSigmoid`, with `ScaledSigmoid.apply(x, scale)` returning `scale * sigmoid(x)`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - `scale` any finite Python float, negative, **zero**, tiny or huge, and $|x|$ up to 800: the
#   value and the gradient for `x` of `scale * torch.sigmoid(x)` in float64, never `nan`;
# - the value and the gradient to float64's precision: for $x < 0$ relative to their own size
#   wherever `scale * torch.sigmoid(x)` is a normal float64 number, the left tail included, and
#   for $x \ge 0$ in absolute terms, in units of `abs(scale)`.
#
# You may use `torch.sigmoid` here: what is new is the extra input and what to save. Say why in a
# comment beside what you save: which tensor does your backward start from, what does it cost,
# and what does it do at each scale?

# %% nbgrader={"grade_id": "answer_ScaledSigmoid", "solution": true}
class ScaledSigmoid(torch.autograd.Function):
    """y = scale * sigmoid(x), with scale a Python float."""

    @staticmethod
    def forward(ctx, x, scale):
        ### BEGIN SOLUTION
        # x: from y, sigma(x) = y / s is 0/0 at scale 0 and y * y overflows at 1e300; from x
        # it costs one exponential more in backward (and x's memory, where nothing else keeps
        # it), and no scale needs a special case
        ctx.save_for_backward(x)
        ctx.scale = scale  # a float: a plain attribute
        return scale * torch.sigmoid(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * ctx.scale * s * (1 - s), None  # None for scale
        ### END SOLUTION


# %% nbgrader={"grade_id": "ScaledSigmoid", "grade": true, "points": 2}
self_check("ScaledSigmoid", ScaledSigmoid)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ScaledSigmoid", ScaledSigmoid)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\partial y / \partial x = s\,\sigma(x)\,\big(1 - \sigma(x)\big)$, and `None` for $s$. Three
# designs pass:
#
# - keep $y$: no new memory where the next layer keeps it, but the case $s = 0$ must be written
#   out ($y / s$ is `nan`, the gradient $0$), and one factor of $s$ kept in every intermediate,
#   $y\,(1 - y / s)$, not $y - y^2 / s$, whose $y^2$ leaves float64's range at huge and tiny $s$;
# - keep $x$ and compute $\sigma(x)$ again: one more exponential, no special case, and new memory
#   wherever nothing else keeps $x$;
# - keep $\sigma(x)$, a new tensor: right for first derivatives, but lesson 04 shows that a saved
#   intermediate gives wrong second derivatives.
#
# The scale is a float: a plain attribute on `ctx`, one per call.
# </details>

# %% [markdown]
# ## ✎ Transfer exercise · `Softplus`
#
# Now alone: no worked example for this one. Softplus, $\mathrm{softplus}(x) = \log(1 + e^x)$, is
# a smooth ReLU: close to $0$ far left, close to $x$ far right. Write `Softplus`, with
# `Softplus.apply(x)` returning $\log(1 + e^x)$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - forward saves one tensor, the one that costs the least new memory in a network of linear
#   layers with `Softplus` between them (say which, and why, in a comment), and that tensor
#   itself, not an alias such as `t.detach()`;
# - in float64, values and gradients finite for $|x|$ up to 800, and accurate in **both tails**:
#   relative error at most $10^{-12}$ wherever the true value is a normal float64 number
#   ($\mathrm{softplus}(-40) \approx 4.2 \times 10^{-18}$, not $0$).
#
# Derive the derivative yourself and test it at one number before you trust it, even a
# formula you found elsewhere: a derivative of softplus must be positive everywhere, as
# softplus rises.
#
# <details><summary><b>Hint 1</b> (forward: questions)</summary>
#
# Where does $e^x$ overflow, and where does $1 + e^x$ lose $e^x$? On the side where $e^x$ is
# large, what can the log's rules do with it? Far out on either side, what does your formula
# compute that this lesson has already met?
# </details>
#
# <details><summary><b>Hint 2</b> (the derivative: questions)</summary>
#
# What is $dy/dx$ of $\log(1 + e^x)$, and have you met it before? Solve $y = \log(1 + e^x)$ for
# $e^x$: can you then write $dy/dx$ from the tensor you chose to save, with no $x$ in it?
# </details>
#
# <details><summary><b>Hint 3</b> (the tails of the gradient: questions)</summary>
#
# Evaluate your expression where $y$ is tiny, far left: does it subtract two numbers near $1$?
# How many digits survive that, and is there a way to write the same number that never forms
# the difference?
# </details>
#
# <details><summary><b>Hint 4</b> (numbers to hit)</summary>
#
# $\mathrm{softplus}(-40)$ = `4.248354255291589e-18` in float64. At $x = 0$, $y = \log 2$ and
# your derivative is $0.5$; at $x = 1$, $y = 1.3133$ and it is $0.7311$. At $x = -40$ your
# derivative is $4.2484 \times 10^{-18}$ too: if you get $0$, Hint 3 is for you.
# </details>

# %% nbgrader={"grade_id": "answer_Softplus", "solution": true}
class Softplus(torch.autograd.Function):
    """y = log(1 + exp(x)), exact in both tails."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        y = x.clamp(min=0) + torch.log1p(torch.exp(-x.abs()))  # exp(-|x|) in (0, 1]
        ctx.save_for_backward(y)
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, = ctx.saved_tensors
        return grad_output * -torch.expm1(-y)  # sigmoid(x) = 1 - exp(-y), without cancelling
        ### END SOLUTION


# %% nbgrader={"grade_id": "Softplus", "grade": true, "points": 2}
self_check("Softplus", Softplus)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Softplus", Softplus)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Forward: for $x > 0$, $\log(1 + e^x) = x + \log(1 + e^{-x})$, so on both sides
# $y = \max(x, 0) + \operatorname{log1p}(e^{-|x|})$: the exponential is at most $1$, and `log1p`
# keeps every digit when it is tiny. Backward:
# $\dfrac{dy}{dx} = \sigma(x) = 1 - e^{-y} = -\operatorname{expm1}(-y)$, which keeps every digit
# in the left tail, where $1 - e^{-y}$ is a difference of two numbers near $1$.
# </details>
#
# Both tails: the relative error of your `Softplus`, its output and its gradient, from $x = -708$
# to $x = 750$, beside $\log(1 + e^x)$ left to autograd. The dashed line is the contract's
# $10^{-12}$; an error of $0$ is drawn at $10^{-18}$, and `inf` or `nan` at $10^{4}$.

# %%
xs = torch.linspace(-708, 750, 487, dtype=torch.float64)
exact = {"output": torch.logaddexp(xs, torch.zeros_like(xs)), "gradient": torch.sigmoid(xs)}
contenders = {"log(1 + exp(x)), autograd": lambda x: torch.log(1 + torch.exp(x)),
              "your Softplus": Softplus.apply}
curves = {name: value_and_gradient(formula, xs) for name, formula in contenders.items()}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for (name, got_both), colour in zip(curves.items(), ["tab:red", "tab:green"]):
    for ax, got, truth in zip(axes, got_both, exact.values()):
        error = ((got - truth).abs() / truth).nan_to_num(nan=1e4, posinf=1e4)
        ax.plot(xs, error.clamp(1e-18, 1e4), color=colour, lw=1.5, label=name)
for ax, title in zip(axes, exact):
    ax.axhline(1e-12, color="k", ls="--", lw=0.8, label="the contract: 1e-12")
    ax.set_yscale("log")
    ax.set_xlabel("x")
    ax.set_title(f"relative error of the {title}")
fig.legend(*axes[1].get_legend_handles_labels(), fontsize=8, loc="lower center", ncol=3)
fig.subplots_adjust(bottom=0.24)  # the legend below both panels, over no curve
plt.show()

# %% [markdown]
# The written-out formula's output is 100% wrong left of $x \approx -37$, where $1 + e^x$ rounds
# to $1$ (autograd's gradient of it, $e^x / (1 + e^x)$, is still right there), and past $709.78$
# its output is `inf` and its gradient `nan`. Both of your curves should stay under the dashed
# line everywhere.

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `torch.exp(x) / (1 + torch.exp(x))` in forward | `nan` for $x > 709.8$ ($x > 88.7$ in float32) | both branches from `torch.exp(-x.abs())` |
# | `1 / (1 + torch.exp(-x))` left to autograd | `nan` gradients for $x < -709.8$ | a Function with a backward from `y` |
# | $y = 1$ past a threshold ($x > 5$, say) | off by up to $0.0067$ | no threshold |
# | saving `x` for the sigmoid | a second exponential, more memory | save `y`: $\sigma'(x) = y(1 - y)$ |
# | `ctx.mask = mask` or `ctx.y = y` | in-place changes go unnoticed (rule 4) | `ctx.save_for_backward(mask)` |
# | `y / scale` with no case for `scale == 0` | `nan` at `scale = 0` | the gradient is $0$ there |
# | `log(1 + exp(x))`, or `1 - exp(-y)` | $0$ in the left tail | `log1p`, `expm1` |

# %% [markdown]
# ## Summary
#
# Save what backward needs in the form that costs least in the whole graph: the output when
# the derivative is written in it and the next layer keeps it anyway (sigmoid, ReLU in
# a plain network), a boolean mask when backward only needs to know *where* and nothing else
# keeps the activation, and the input when recomputing from it is simpler than the cases the
# output needs (a scale of zero). Always through
# `ctx.save_for_backward`; never write into `grad_output`, your inputs or saved tensors.
# At a kink or a tie, copy the convention of the op you replace and test it on exact ties.
# Build forward formulas from pieces that cannot overflow, such as $e^{-|x|}$, and keep tiny
# numbers apart from $1$ with `log1p` and `expm1`.
# Next lesson: a linear layer, where gradients become matrix products.

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above. Each section below backs one of its claims with
# an experiment or a measurement; none is needed for an exercise, and you can skip any of
# them. They run after the main line: several use your `MySigmoid`, `MyReLU` or `Select`.

# %% [markdown]
# ### What `torch.relu` chose
#
# Your `MyReLU` copies `torch.relu`'s gradient at $0$, and saves a mask or its output. What
# did PyTorch's own ReLU choose? **Predict, then run.** What gradient does `torch.relu` give
# at $x = 0$? And what does its backward node keep: `"input"`, `"output"` or `"mask"`? Write
# both into the next cell.

# %%
### BEGIN WORKED
predicted_relu = {"gradient at x = 0": 0.0, "relu's node keeps": "output"}
### LEARNER
predicted_relu = {"gradient at x = 0": None, "relu's node keeps": None}
### END WORKED

# %%
x = torch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
y = torch.relu(x)
saved = y.grad_fn._saved_result  # what ReluBackward0 keeps for backward
kept = ("mask" if saved.dtype == torch.bool else "output" if torch.equal(saved, y)
        else "input")
y.sum().backward()
if written(predicted_relu):  # x.grad holds the gradient at 0
    print("x.grad =", x.grad)
compare_all(predicted_relu, {"gradient at x = 0": x.grad[1].item(), "relu's node keeps": kept})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# At $x = 0$ any value in $[0, 1]$ is a valid subgradient; `torch.relu` uses $0$, the
# convention Exercise 2 copies. Backward needs only the side of $0$ each entry is on, and
# PyTorch's ReLU reads it from its **output** ($y > 0$ exactly where $x > 0$). That is free
# whenever something else keeps $y$ anyway, as the next linear layer does (it needs its input
# for its weight's gradient). The input $x$, 8 bytes an element in float64, is new memory in
# such a network: nobody else keeps the pre-activation. A boolean mask is 1 byte an element,
# always new. It is neither input nor output, but no gradient ever flows through it, so
# double backward (lesson 04) is not affected.
# </details>

# %% [markdown]
# ### Beyond the contract: infinities and `nan`
#
# Your `MyReLU` beside `torch.relu` on an infinite `x` and a `nan`, which `torch.relu` passes
# on (a `nan` turned into $0$ hides the bug that made it); then both gradients for a
# `grad_output` of $\infty$ everywhere. The contract asks for none of this: a `grad_output` of
# $\infty$ where the ReLU blocks is a value no healthy model meets. `torch.relu` gives $0$
# there, and a backward that multiplies by its mask gives $\infty \cdot 0$ = `nan`; a
# `torch.where` picks $0$ without multiplying. The last line says whether yours matches.

# %%
edges = torch.tensor([-float("inf"), -1.0, 0.0, 2.0, float("inf"), float("nan")])
relu_values = {"MyReLU": MyReLU.apply(edges), "torch.relu": torch.relu(edges)}
for name, value in relu_values.items():
    print(f"{name + ':':<20}", value)
infinite = torch.full((5,), float("inf"))
relu_gradients = {}
for name, relu in (("MyReLU", MyReLU.apply), ("torch.relu", torch.relu)):
    x = edges[:5].clone().requires_grad_()
    relu(x).backward(infinite)
    relu_gradients[name] = x.grad
    print(f"{name + ' gradient:':<20}", x.grad)


def differ_at(mine, theirs, points):
    """The points where two results differ (nan equals nan, inf equals inf)."""
    if mine is None or mine.shape != theirs.shape:  # a gradient of None, or misshapen
        return [f"{point:g}" for point in points.tolist()]
    same = torch.isclose(mine.double(), theirs.double(), rtol=0, atol=0, equal_nan=True)
    return [f"{point:g}" for point, ok in zip(points.tolist(), same.tolist()) if not ok]


mismatches = [f"{what} at x = {', '.join(at)}" for what, at in (
    ("values", differ_at(*relu_values.values(), edges)),
    ("gradients", differ_at(*relu_gradients.values(), edges[:5]))) if at]
print("✓ every entry matches torch.relu, values and gradients" if not mismatches
      else f"✗ MyReLU differs from torch.relu: {'; '.join(mismatches)}")

# %% [markdown]
# ### Common misconceptions
#
# - *"A boolean mask has no gradient, so `ctx.mask = mask` is harmless."* Gradients are not
#   the point: a mask kept as an attribute escapes the in-place version check and saved-tensor
#   hooks exactly as `ctx.y = y` does. Every tensor goes through `save_for_backward`.
# - *"Zeroing `grad_output` in place saves a copy."* It passes a quick test with `torch.ones`
#   as the gradient and fails inside real graphs: after `.sum()`, `grad_output` is one number
#   expanded to the input's shape (stride 0), so writing a zero anywhere writes it everywhere.
#   The allocation it saves is not yours to save.
# - *"Save the output whenever the derivative can be written from it."* Only when that is
#   cheapest: a mask can be smaller, and the output can be free. When the output determines
#   the derivative only outside some case (`ScaledSigmoid` at $s = 0$), handle that case
#   explicitly, or save the input.
# - *"The textbook $1/(1 + e^{-x})$ must be avoided."* Left to autograd it gives `nan`
#   gradients; inside your Function with a backward from $y$, it meets the contract.

# %% [markdown]
# ### The textbook formulas over the whole range
#
# The two textbook formulas of "Staying finite" on the whole range $[-800, 800]$, on a log
# scale so that values like $10^{-300}$ are visible. A shaded band marks where a formula gives `nan`. A curve that simply stops has
# reached exactly $0$, which a log scale cannot draw. The dashed line is the exact
# derivative, computed in logarithms (`logsigmoid`) so that nothing overflows.

# %%
xs = torch.linspace(-800, 800, 1601, dtype=torch.float64)
logsigmoid = torch.nn.functional.logsigmoid
exact_gradient = torch.exp(logsigmoid(xs) + logsigmoid(-xs))  # no overflow, no early underflow

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for (name, formula), colour, width in zip(naive.items(), ["tab:blue", "tab:orange"], [5, 1.5]):
    y, grad = value_and_gradient(formula, xs)
    for ax, values in [(left, y), (right, grad)]:
        ax.plot(xs, values, color=colour, lw=width, alpha=0.8, label=name)
        broken = torch.isnan(values)
        if broken.any():
            ax.axvspan(xs[broken].min(), xs[broken].max(), color=colour, alpha=0.2,
                       label=f"nan from {name}")
left.plot(xs, torch.sigmoid(xs), "k--", lw=1, label="torch.sigmoid (stable)")
right.plot(xs, exact_gradient, "k--", lw=1, label="exact derivative")
for ax, title in [(left, "value"), (right, "gradient from autograd")]:
    ax.set_yscale("log", nonpositive="mask")  # zeros are left out, not drawn
    ax.set_ylim(1e-320, 10)
    ax.set_xlabel("x")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
plt.tight_layout()
plt.show()

# %% [markdown]
# Two things to see:
#
# - Each textbook formula produces `nan` on one side, in the forward or in autograd's
#   gradient. A single `nan` in a gradient spreads: every weight it reaches becomes `nan`.
# - Before that, both gradients reach exactly $0$ where the true derivative is tiny: the
#   first's from $x = -373$ on this integer grid (the blue curve ends at $-372$), where an
#   intermediate, $y^2$, underflows; the second's from $x = 37$ (the orange curve ends at
#   $36$), where the two terms autograd subtracts cancel. A zero where the true value is
#   $10^{-160}$ is harmless; a `nan` is not.

# %% [markdown]
# ### Would a simpler forward have done?
#
# **Predict, then run.** Put each forward below inside your `MySigmoid` in place of yours:
# the same saved $y$, the same backward. You saw the first two formulas' values above; the
# $\tanh$ form and $1 - 1/(1 + e^x)$ are new, and the left tail is new for all four. Which of
# the four meet Exercise 1's contract? (A `nan` value or gradient fails; a value of $0$ at
# $x = -40$ fails too.) Write `True` (meets it) or `False` for each into the next cell
# first.

# %%
### BEGIN WORKED
predicted_forwards = {"1 / (1 + exp(-x))": True, "exp(x) / (1 + exp(x))": False,
                      "(1 + tanh(x / 2)) / 2": False, "1 - 1 / (1 + exp(x))": False}
### LEARNER
predicted_forwards = {"1 / (1 + exp(-x))": None, "exp(x) / (1 + exp(x))": None,
                      "(1 + tanh(x / 2)) / 2": None, "1 - 1 / (1 + exp(x))": None}
### END WORKED


# %%
def inside_my_sigmoid(formula):
    """Your MySigmoid with formula(x) as its forward: the same saved y, your backward."""
    class Candidate(MySigmoid):
        @staticmethod
        def forward(ctx, x):
            y = formula(x)
            ctx.save_for_backward(y)
            return y

    return Candidate.apply


def meets_contract(function):
    """Values and gradients finite at |x| <= 800, and the largest relative error of the
    values in the left tail (the contract allows 1e-12), in float64: the clauses these four
    forwards could break (none of them is off by 1e-15 for x >= 0)."""
    y, grad = value_and_gradient(function, torch.linspace(-800, 800, 33, dtype=torch.float64))
    tail = torch.cat([torch.tensor([-708.0, -300.0, -100.0], dtype=torch.float64),
                      torch.arange(-4000, 1, dtype=torch.float64) / 100])  # [-40, 0], 0.01 apart
    relative = ((function(tail) - torch.sigmoid(tail)).abs() / torch.sigmoid(tail)).max().item()
    return bool(torch.isfinite(y).all()), bool(torch.isfinite(grad).all()), relative


candidates = {
    "1 / (1 + exp(-x))": lambda x: 1 / (1 + torch.exp(-x)),
    "exp(x) / (1 + exp(x))": lambda x: torch.exp(x) / (1 + torch.exp(x)),
    "(1 + tanh(x / 2)) / 2": lambda x: (1 + torch.tanh(x / 2)) / 2,
    "1 - 1 / (1 + exp(x))": lambda x: 1 - 1 / (1 + torch.exp(x)),
}
meets = {}
for name, formula in candidates.items():
    values, gradients, relative = meets_contract(inside_my_sigmoid(formula))
    meets[name] = values and gradients and relative <= 1e-12
    if written(predicted_forwards):  # the table holds the four answers
        print(f"{name:<24} values finite: {values!s:<5}  gradients finite: {gradients!s:<5}  "
              f"tail relative error: {relative:<8.2g}")
compare_all(predicted_forwards, meets)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# One meets it, perhaps surprisingly the first textbook formula. Inside a Function whose
# backward is written from $y$, $1/(1 + e^{-x})$ is fine: for $x < -709.8$,
# $e^{-x} = \infty$ and $1/\infty = 0$ exactly, and autograd never differentiates the
# composition (grad mode is off in forward, lesson 00), so its `nan` never appears: the
# gradients printed above are your backward's. It is also accurate in the tail, since
# $1/(1 + \text{large})$ loses nothing. The other three fail: $e^x/(1 + e^x)$ is
# $\infty/\infty$ for large $x$; $1 - 1/(1 + e^x)$ and the $\tanh$ form compute a tiny
# number as the difference of two numbers near $1$ and return $0$ at $x = -40$.
#
# The form built from $z$, one formula per sign as above, meets it too. Why prefer it? It
# has no infinite intermediate at all, so it stays safe when you edit it (compute $1 - y$ as
# $e^{-x}/(1 + e^{-x})$ and the first formula's $\infty$ becomes $\infty/\infty$ = `nan`),
# and it is the pattern that carries over to other functions built from exponentials, such
# as log-sum-exp. Both pass the grader: it checks the contract, not the formula.
# </details>

# %% [markdown]
# #### `torch.where` of the two textbook formulas
#
# Each textbook formula is safe on one side, so
# `torch.where(x >= 0, 1 / (1 + exp(-x)), exp(x) / (1 + exp(x)))` picks a safe one at every
# $x$. **Predict, then run.** At $x = \pm 800$: are its values finite? Inside your
# `MySigmoid`, are its gradients? And left to autograd, with no Function around it?

# %%
### BEGIN WORKED
predicted_where = {"values finite": True, "gradients finite inside MySigmoid": True,
                   "gradients finite, autograd": False}
### LEARNER
predicted_where = {"values finite": None, "gradients finite inside MySigmoid": None,
                   "gradients finite, autograd": None}
### END WORKED

# %%
def picked(x):
    return torch.where(x >= 0, 1 / (1 + torch.exp(-x)), torch.exp(x) / (1 + torch.exp(x)))


ends = torch.tensor([-800.0, 800.0], dtype=torch.float64)
y, ours = value_and_gradient(inside_my_sigmoid(picked), ends)
_, by_autograd = value_and_gradient(picked, ends)
if written(predicted_where):
    print("value:", y, " gradient inside MySigmoid:", ours, " gradient by autograd:", by_autograd)
compare_all(predicted_where, {"values finite": bool(torch.isfinite(y).all()),
                    "gradients finite inside MySigmoid": bool(torch.isfinite(ours).all()),
                    "gradients finite, autograd": bool(torch.isfinite(by_autograd).all())})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `torch.where` computes both branches everywhere and keeps one entry of each pair: at
# $x = 800$ the second branch is $\infty/\infty$ = `nan`, and the value drops it. Inside a
# Function that is all that matters, since your backward works from $y$. Autograd, though,
# differentiates both branches: `where`'s backward sends the branch not picked a gradient of
# $0$, that branch's own backward multiplies it by an infinite intermediate, and
# $0 \cdot \infty$ is `nan`, which then adds into `x.grad`. A classic trap: a `where` that
# guards a value does not guard its gradient. Branches with no infinity in them, like those
# built from $z$, keep autograd's gradient finite. It is still not right everywhere: at exactly
# $x = 0$ autograd differentiates $|x|$ with $\operatorname{sign}(0) = 0$ and gives $0$ where
# $\sigma'(0) = 0.25$, one more reason your Function writes its own backward from $y$.
# </details>

# %% [markdown]
# ### A worked example: asinh, saving its output or its input
#
# The inverse hyperbolic sine, $y = \operatorname{asinh}(x) = \log\big(x + \sqrt{x^2 + 1}\big)$,
# grows like $\log|x|$ in both directions: a log transform that accepts negative numbers and
# $0$, used on heavy-tailed features. It is not one of your exercises; it carries two of the
# lesson's methods.
#
# **Its derivative can be written in the input or in the output.** Differentiating gives
# $\dfrac{dy}{dx} = \dfrac{1}{\sqrt{1 + x^2}}$. And since $x = \sinh(y)$ and
# $1 + \sinh^2(y) = \cosh^2(y)$, the same number is $\dfrac{1}{\cosh(y)}$. So backward can
# keep $x$ and take a square root, or keep $y$ and take a $\cosh$ (two exponentials).
#
# **Its textbook formula breaks, in a way the sigmoid's does not.** **Predict, then run.** In
# float64, what does $\log(x + \sqrt{x^2 + 1})$ return at $x = -10^{8}$, where the true value
# is about $-19.11$? Write it first. If you expect an infinity, write it as `float("inf")` or
# `-float("inf")`, the values that compare equal to it.

# %%
### BEGIN WORKED
predicted_asinh = {"textbook asinh at x = -1e8": -float("inf")}
### LEARNER
predicted_asinh = {"textbook asinh at x = -1e8": None}
### END WORKED

# %%
probe = torch.tensor([-1e8], dtype=torch.float64)
textbook = torch.log(probe + torch.sqrt(probe * probe + 1))
if written(predicted_asinh):
    print("textbook:   ", textbook.item())
    print("torch.asinh:", torch.asinh(probe).item())
compare_all(predicted_asinh, {"textbook asinh at x = -1e8": textbook.item()})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# $\sqrt{x^2 + 1}$ rounds to exactly $10^8$ (floats near $10^{16}$ are 2 apart, and
# $10^{16} + 1$, exactly halfway, rounds to even: $10^{16}$), so $x + \sqrt{x^2 + 1}$ is $0$
# and its log is $-\infty$: two nearly opposite numbers cancelled. Nothing overflowed.
#
# The repair: asinh is odd, $\operatorname{asinh}(-x) = -\operatorname{asinh}(x)$, so compute
# it for $a = |x|$ and put the sign back with `torch.copysign`. For $a \ge 0$ the sum
# $a + \sqrt{a^2 + 1}$ never cancels.
# </details>
#
# Here it is, saving each way. Near $x = 0$ the log meets $1 + \text{tiny}$ and would lose the
# tiny part, so `stable_asinh` hands that part to `torch.log1p`, which computes $\log(1 + u)$
# without forming $1 + u$ (the section "Tiny numbers next to 1" showed why that matters). It is good for $|x|$ below about $10^{154}$, where $a^2$ still fits in
# float64.

# %%
def stable_asinh(x):
    """asinh(x) to full precision for |x| < 1e154: no cancellation, no log of 1 + tiny."""
    a = x.abs()
    u = a + a * a / (1 + torch.sqrt(1 + a * a))  # a + sqrt(1 + a^2) - 1, with no subtraction
    return torch.copysign(torch.log1p(u), x)


class MyAsinh(torch.autograd.Function):
    """y = asinh(x), saving the output."""

    @staticmethod
    def forward(ctx, x):
        y = stable_asinh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output / torch.cosh(y)  # dx/dy = cosh(y)


class AsinhSavesInput(torch.autograd.Function):
    """y = asinh(x), saving the input and writing the derivative in x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return stable_asinh(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output / torch.sqrt(1 + x * x)


# %% [markdown]
# Both give the same gradient, and both pass `gradcheck`; the forward matches `torch.asinh`
# to the last digit or so, from $10^{-300}$ to $10^{150}$ in size, on both sides:

# %%
x = torch.randn(6, dtype=torch.float64, requires_grad=True)
print("MyAsinh:        ", torch.autograd.gradcheck(MyAsinh.apply, (x,)))
print("AsinhSavesInput:", torch.autograd.gradcheck(AsinhSavesInput.apply, (x,)))
sizes = torch.logspace(-300, 150, 451, dtype=torch.float64)
sizes = torch.cat([-sizes, sizes])
relative = ((stable_asinh(sizes) - torch.asinh(sizes)) / torch.asinh(sizes)).abs().max()
print(f"largest relative difference from torch.asinh: {relative.item():.1e}")

# %% [markdown]
# They differ in what they keep. The inspector runs forward once and lists each saved
# tensor with its **role**: `MyAsinh` keeps its output, `AsinhSavesInput` its input.

# %%
inspect_saved(MyAsinh, torch.linspace(-2, 2, 1000, dtype=torch.float64))

# %%
inspect_saved(AsinhSavesInput, torch.linspace(-2, 2, 1000, dtype=torch.float64))

# %% [markdown]
# The inspector counts in KiB, units of 1024 bytes: its 7.8 KiB is 1000 float64 numbers of
# 8 bytes each, 8000 bytes. Neither is new memory on its own: the caller holds `x`, and `y` is
# the result. Which one costs more depends on what the rest of the graph keeps, so let's
# measure the whole graph.

# %% [markdown]
# #### Measuring what backward keeps
#
# `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` calls `pack` on **every tensor
# any node saves** for backward while the `with` block runs: yours, through
# `ctx.save_for_backward`, and those of PyTorch's built-in operations. We use it to list
# the saved tensors and add up their bytes. Saving never copies: two nodes that save the
# same tensor keep one piece of memory alive, so we count each piece of memory once.

# %%
def saved_for_backward(compute):
    """Run compute() and return (number of tensors saved, bytes of distinct memory saved)."""
    saved = []

    def pack(tensor):
        saved.append((tensor.untyped_storage().data_ptr(), tensor.untyped_storage().nbytes()))
        return tensor.detach()  # not the tensor itself: a saved output would hold its own graph

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        compute()
    return len(saved), sum(dict(saved).values())


def report(label, compute):
    count, nbytes = saved_for_backward(compute)
    tensors = "tensor " if count == 1 else "tensors"
    print(f"{label:<36} {count} {tensors} saved, {nbytes:>6} bytes")


# %% [markdown]
# A vector of 1000 float64 numbers takes 8000 bytes. First asinh alone, three ways: the
# textbook formula left to autograd, then our two Functions.

# %%
x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
w = torch.randn(1000, dtype=torch.float64, requires_grad=True)

report("asinh textbook formula, autograd", lambda: torch.log(x + torch.sqrt(x * x + 1)))
report("MyAsinh (saves y)", lambda: MyAsinh.apply(x))
report("AsinhSavesInput (saves x)", lambda: AsinhSavesInput.apply(x))

# %% [markdown]
# Written out, autograd keeps four tensors in three pieces of memory: `x` (twice, for
# `x * x`), the square root's result and the log's input. Either Function keeps one.
#
# Alone, our two Functions cost the same. Now put each in front of a multiplication
# `y * w`, which must keep `y` for its own backward ($\partial (y w) / \partial w = y$):

# %%
report("MyAsinh, then * w", lambda: MyAsinh.apply(x) * w)
report("AsinhSavesInput, then * w", lambda: AsinhSavesInput.apply(x) * w)

# %% [markdown]
# Three tensors are saved both times. With `MyAsinh`, two of them are the same `y`, stored
# once: 16000 bytes. With `AsinhSavesInput`, `x` is extra: 24000 bytes.
#
# **Rule of thumb:** memory that another node saves anyway costs nothing extra; a tensor that
# only your Function keeps is new memory. When the derivative can be written from the
# output, the output is usually the free choice (the next layer very often keeps it). A mask
# (below) is the other choice to weigh: smaller, but always new.

# %% [markdown]
# The same measure on the main line's Functions: your `MySigmoid` beside the first textbook
# formula left to autograd, and `Select` beside `torch.where`, which keeps the same single
# tensor, its condition: 1000 bytes, which the caller holds anyway.

# %%
report("1 / (1 + exp(-x)), autograd", lambda: 1 / (1 + torch.exp(-x)))
report("MySigmoid (saves y)", lambda: MySigmoid.apply(x))

mask = torch.rand(1000) > 0.5
a = torch.randn(1000, dtype=torch.float64, requires_grad=True)
b = torch.randn(1000, dtype=torch.float64, requires_grad=True)
report("torch.where", lambda: torch.where(mask, a, b))
report("Select (the mask it was given)", lambda: Select.apply(mask, a, b))

# %% [markdown]
# ### Two ways to keep a tensor for backward
#
# One more decision every Function makes: how to keep what it saves.
# `MyAsinh` keeps its output with `ctx.save_for_backward(y)`. `AsinhOnCtx` below keeps it as
# a plain attribute, `ctx.y = y`; its backward is otherwise the same. Both give the right
# gradient when nobody touches `y`. Now someone changes `y` in place between forward and
# backward (a `+=` in user code, an in-place op after it), once with each.
# **Predict, then run:** which of the two raises? Does the other return the true gradient?
# How many bytes does `report` (built on saved-tensor hooks) find saved by `AsinhOnCtx` for
# 1000 float64 numbers?

# %%
### BEGIN WORKED
predicted_ctx = {"MyAsinh raises": True, "AsinhOnCtx raises": False,
                 "AsinhOnCtx's gradient is right": False, "bytes report finds": 0}
### LEARNER
predicted_ctx = {"MyAsinh raises": None, "AsinhOnCtx raises": None,
                 "AsinhOnCtx's gradient is right": None, "bytes report finds": None}
### END WORKED


# %%
class AsinhOnCtx(torch.autograd.Function):
    """asinh that keeps its output as a ctx attribute."""

    @staticmethod
    def forward(ctx, x):
        y = stable_asinh(x)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output / torch.cosh(ctx.y)


actual, shown = {}, []
for function in (MyAsinh, AsinhOnCtx):
    x_edited = torch.tensor([0.0, 0.5, 1.0], requires_grad=True)
    y = function.apply(x_edited)
    y.add_(1)  # someone changes y in place before backward
    try:
        y.sum().backward()
        shown.append(f"{function.__name__:<10} x.grad = {x_edited.grad}")
        actual[f"{function.__name__} raises"] = False
    except RuntimeError as error:
        shown.append(f"{function.__name__:<10} RuntimeError: {str(error)[:70]}...")
        actual[f"{function.__name__} raises"] = True
truth = 1 / torch.sqrt(1 + x_edited.detach() ** 2)
actual["AsinhOnCtx's gradient is right"] = bool(torch.allclose(x_edited.grad, truth))

x_many = torch.randn(1000, dtype=torch.float64, requires_grad=True)
if written(predicted_ctx):  # each line holds an answer
    print("\n".join(shown))
    print("true gradient     ", truth)
    report("AsinhOnCtx (y kept as ctx.y)", lambda: AsinhOnCtx.apply(x_many))
actual["bytes report finds"] = saved_for_backward(lambda: AsinhOnCtx.apply(x_many))[1]
compare_all(predicted_ctx, actual)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `MyAsinh` refuses to run. Autograd gives every tensor a **version counter** that goes up
# each time the tensor is changed in place, and `save_for_backward` records the version of
# each tensor it saves: backward found that the saved `y` had changed since forward, when the
# gradient would have been silently wrong. `AsinhOnCtx` returns a wrong gradient without a
# word: its backward divides by $\cosh(y + 1)$, so at $x = 0$ it returns $0.65$ instead of
# $1$. A tensor kept as a plain attribute skips the version check.
# And `report`, which counts through saved-tensor hooks, finds nothing saved, although
# `AsinhOnCtx` keeps 8000 bytes alive: attributes escape the hooks, the mechanism behind
# lesson 05's memory tricks too. For an output there is a third cost: `y.grad_fn` is `ctx`,
# so `ctx.y = y` makes a reference cycle that keeps the graph alive until Python's cycle
# collector runs. (Double backward still works for an input or an output kept this way;
# lesson 04 shows what does break it.)
# </details>
#
# The rule for `ctx` is short: **tensors through `ctx.save_for_backward`, everything else
# (numbers, shapes, flags) as attributes.** That holds for masks too: `ctx.mask = mask` is
# the same mistake as `ctx.y = y`.

# %% [markdown]
# ### Never write into `grad_output`
#
# The Function contract (rule 5) asks backward for a new tensor, and every self-check refuses a
# backward that writes into `grad_output`, on every call it makes. Here is why. It is tempting
# to build one of the gradients inside `grad_output` itself, to save a copy.
# Here is `Select` done that way: `b`'s gradient is a new tensor, then `a`'s is written over
# `grad_output`. With `mask = [True, False, False, False]`, only `a`'s first entry is picked.
# **Predict, then run:** after `.sum().backward()`, what are `a.grad` and `b.grad`? After
# `.backward(g)` with `g = torch.ones(4)`, what is `g`? Write all three as lists.

# %%
### BEGIN WORKED
predicted_grad_output = {"a.grad after .sum().backward()": [0.0, 0.0, 0.0, 0.0],
                         "b.grad after .sum().backward()": [0.0, 1.0, 1.0, 1.0],
                         "g after .backward(g)": [1.0, 0.0, 0.0, 0.0]}
### LEARNER
predicted_grad_output = {"a.grad after .sum().backward()": None,
                         "b.grad after .sum().backward()": None, "g after .backward(g)": None}
### END WORKED


# %%
class SelectInPlace(torch.autograd.Function):
    """torch.where(mask, a, b), whose backward writes a's gradient into grad_output."""

    @staticmethod
    def forward(ctx, mask, a, b):
        ctx.save_for_backward(mask)
        return torch.where(mask, a, b)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        grad_b = torch.where(mask, 0, grad_output)  # a new tensor
        grad_output[~mask] = 0  # a's gradient, written over grad_output
        return None, grad_output, grad_b


mask = torch.tensor([True, False, False, False])


def fresh_inputs():
    return (torch.tensor([3.0, -1.0, 2.0, -4.0], requires_grad=True),
            torch.tensor([0.0, 0.0, 5.0, 0.0], requires_grad=True))


a, b = fresh_inputs()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    SelectInPlace.apply(mask, a, b).sum().backward()
shown = [f"warnings after .sum().backward(): {len(caught)}, the first: "
         + (str(caught[0].message).split(" (Triggered")[0] if caught else "none")]
actual = {"a.grad after .sum().backward()": a.grad.tolist(),
          "b.grad after .sum().backward()": b.grad.tolist()}

a, b = fresh_inputs()
g = torch.ones(4)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    SelectInPlace.apply(mask, a, b).backward(g)
shown.append(f"warnings after .backward(g): {len(caught)}")
actual["g after .backward(g)"] = g.tolist()
if written(predicted_grad_output):  # the warnings tell what happened
    print("\n".join(shown))
compare_all(predicted_grad_output, actual)
if written(predicted_grad_output):
    print("(the true gradients: a.grad = [1, 0, 0, 0], b.grad = [0, 1, 1, 1]; g should stay "
          "[1, 1, 1, 1])")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `grad_output` does not belong to your backward.
#
# - After `.sum()`, `grad_output` is an **expanded view** in which every element is one memory
#   location: the backward of `.sum()` expands a single `1`. Writing a zero into one element
#   wrote it into all four, so `a`'s gradient is zero **everywhere**, with no error, only a
#   warning (printed above: writing into an expanded tensor is deprecated). `b`'s is right
#   only because it was computed before the write: swap the two lines and it is wrong too.
# - After `.backward(g)`, `grad_output` **is** the caller's `g`, which has lost its entries
#   where `b` was picked, without an error or a warning. Autograd may also pass the same
#   tensor to other nodes.
#
# The fix is the one `Select` uses: build a new tensor and leave `grad_output` alone. (If you
# really want to write into something, write into a clone.)
# </details>

# %% [markdown]
# ### Your Functions in one neuron, backward step by step
#
# Your two Functions in one small neuron, $\sigma(\mathrm{relu}(w \odot x) + b)$, and its
# backward one node at a time. Step to `MyReLU.backward`: where $w \odot x \le 0$ it sends a
# zero on, so the same entries of `x.grad` and `w.grad` end up zero.

# %%
x_in = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
w_in = torch.tensor([0.5, 1.0, -1.0, 2.0], requires_grad=True)
b_in = torch.tensor([0.1, 0.1, 0.1, 0.1], requires_grad=True)
neuron = MySigmoid.apply(MyReLU.apply(w_in * x_in) + b_in).sum()
backward_flow(neuron, names={"x": x_in, "w": w_in, "b": b_in})

# %% [markdown]
# ### `ScaledSigmoid` across scales
#
# Your `ScaledSigmoid` and the gradient its backward returns, for a few scales. The scale
# stretches the curve and its slope by the same factor; at $s = 0$ both are flat.

# %%
xs = torch.linspace(-6, 6, 121, dtype=torch.float64)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.2))
for scale in (2.5, 1.0, 0.0, -1.0):
    y, grad = value_and_gradient(lambda x: ScaledSigmoid.apply(x, scale), xs)
    left.plot(xs, y, label=f"scale = {scale}")
    right.plot(xs, grad, label=f"scale = {scale}")
left.set_title("ScaledSigmoid.apply(x, scale)")
right.set_title("its gradient, from your backward")
for ax in (left, right):
    ax.set_xlabel("x")
    ax.axhline(0, color="grey", lw=0.5)
left.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **What `log1p` and `expm1` cost.** It depends on the CPU: PyTorch picks its CPU kernels
# for the vector instructions it finds (AVX-512, AVX2, ...), and `log1p` and `expm1` have
# kernels of their own. On the AMD EPYC this lesson was checked on (torch 2.13, AVX-512, one
# thread, a million float64 values from $10^{-4}$ to $10^{-3}$), `log1p` took about 0.7 times
# as long as `log` and `expm1` as long as `exp`; with the AVX2 kernels forced
# (`ATEN_CPU_CAPABILITY=avx2`), 1.4 and 2 times as long, and on other AVX2 machines `expm1`
# took 3 to 4.5 times as long as `exp`. Either way it is milliseconds per million values:
# nothing beside a matrix product, and cheap for the digits they keep. The code cell after this block times them on your machine.
#
# **Ties: whose convention?** Exact zeros are not rare: after a ReLU many entries are
# exactly $0$, so `torch.maximum(relu(p), relu(q))` ties wherever both are negative (a
# quarter of the entries for independent random normal `p` and `q`). Ops that
# compute the same function away from the kink need not agree on it. Three that agree
# everywhere else use three conventions at the kink: `torch.relu` gives $0$ at $x = 0$,
# `x.clamp(min=0)` gives $1$, and `torch.maximum` splits a tie, half to each input, so even
# `torch.maximum(x, torch.zeros_like(x))` gives $0.5$ at $0$. Each is a valid choice; a
# Function that replaces an op should copy that op's. Try it: one line each, with `x` a
# float64 tensor holding a $0$ that requires grad.
#
# `gradcheck` is no judge here. At an exact tie its central difference sees
# $(\max(a + h, b) - \max(a - h, b)) / 2h = 1/2$: in float64 at $x = [0, 1]$ it passes
# `torch.maximum(x, torch.zeros_like(x))` and fails `torch.relu` and `x.clamp(min=0)`. So
# run gradcheck away from ties, and test ties on their own: exact ties placed on purpose,
# compared with the op you replace. The grader does that for you, at $x = +0.0$ and $-0.0$
# alike.
#
# **Cancellation costs digits before it costs everything.** On a grid of step $0.01$,
# autograd's gradient of $e^x / (1 + e^x)$ is first exactly $0$ at $x = 36.36$ and last
# nonzero at $37.40$: the two terms it subtracts round to the same float more and more often,
# and from about $37.4$ on, $e^x / (1 + e^x)$ is exactly $1$. Below that the same
# cancellation costs digits: at $x = 30$ it gives $9.3592 \times 10^{-14}$ for
# $9.3576 \times 10^{-14}$.
#
# **Output or input: memory is not the whole cost.** `MyAsinh` saves its output, free when
# the next layer keeps it, but its backward computes $\cosh(y)$, two exponentials, where
# `AsinhSavesInput`'s $\sqrt{1 + x^2}$ costs one square root; and `torch.asinh`'s own node
# keeps its input. Weigh the bytes against the arithmetic.
#
# **When a mask wins.** A mask beats the output only when nothing else keeps $x$ or $y$:
# before a residual addition or a sum, or inside a fused Function whose pre-activation is
# never returned. Lesson 02 measures both cases: in a plain network of linear layers the mask
# loses.
#
# **Under autocast** (mixed precision), a Function runs without extra code, but it usually
# wants `torch.amp.custom_fwd` and `custom_bwd`, so that backward runs under the autocast
# state forward ran under (lesson 02 shows what goes wrong without them). There activations
# are often bfloat16 or float16, 2 bytes an element: against them a 1-byte boolean mask saves
# half, against float32 three quarters.
# </details>

# %% [markdown]
# The cell below belongs to **In practice** above (what `log1p` and `expm1` cost): open it
# first, or skip it: it is the lesson's last cell, and takes a second or two.

# %%
from torch.utils.benchmark import Timer

near_zero = torch.linspace(1e-4, 1e-3, 1_000_000, dtype=torch.float64)  # a million values
timers = {name: Timer(f"torch.{name}(x)", globals={"torch": torch, "x": near_zero})  # one thread
          for name in ("log", "log1p", "exp", "expm1")}
fastest = {name: float("inf") for name in timers}
for _ in range(30):  # the fastest of 30 interleaved runs: other work on the machine only adds
    for name, timer in timers.items():
        fastest[name] = min(fastest[name], timer.timeit(2).times[0])  # per call
print(f"PyTorch's CPU kernels here: {torch.backends.cpu.get_cpu_capability()}, one thread")
for careful, plain in [("log1p", "log"), ("expm1", "exp")]:
    print(f"{careful} {fastest[careful] * 1e3:.2f} ms, {plain} {fastest[plain] * 1e3:.2f} ms: "
          f"{fastest[careful] / fastest[plain]:.1f} times as long")
