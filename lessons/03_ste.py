# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 03 · Straight-through estimators
#
# **About 120 minutes** for the main path, to the Summary: some 55 reading it and running its
# cells, the rest deriving and writing the five Functions. The optional sections after it take
# about 30 more to read and run.
#
# Rounding a weight to 4 bits, binarising an activation to ±1, picking an argmax: all are
# **piecewise constant**, with a derivative of zero almost everywhere, so every parameter before
# them stops learning. A **straight-through estimator** (STE) keeps the forward exactly and, in
# backward, replaces the true derivative with a *surrogate*: the slope of a continuous stand-in
# for the quantiser, which you will choose.
#
# You will write plain and clipped STEs, see why `gradcheck` rejects them, derive a quantiser
# with a learnable step (LSQ), and write a straight-through softmax on your own; a binarised
# network trained with your STEs waits after the Summary. Every Function obeys the course's
# [Function contract](function_contract.md); each self-check runs every check the hidden tests
# run.

# %% nbgrader={"locked": true}
import math
from typing import Callable, NamedTuple

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.gradcheck import GradcheckError

from autograder import self_check
from autograder.exercises.lesson03_straight_through.fake_quantize_derivation import check_derivation
from autograder.exercises.lesson03_straight_through.stand_ins import check_stand_ins
from autograder.predictions import compare, written
from widgets import ste_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it


# %% [markdown]
# ## The problem: a gradient of zeros
#
# Ask autograd for the gradient of `sign` and `round` and you get exactly what the maths says:

# %%
x = torch.tensor([-1.7, -0.2, 0.0, 0.4, 2.5], requires_grad=True)
torch.sign(x).sum().backward()
print("d sign/dx  =", x.grad)

x.grad = None
torch.round(x).sum().backward()
print("d round/dx =", x.grad)

# %% [markdown]
# Zero everywhere, even at the jumps, where the true derivative does not exist.

# %% [markdown]
# ## The maths: swap the derivative, keep the forward
#
# Let $q$ be a quantiser and $y = q(x)$. The chain rule gives
#
# $$\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y}\; q'(x),
#   \qquad q'(x) = 0 \text{ wherever it exists.}$$
#
# An STE keeps $y = q(x)$ in forward, and in backward differentiates a **stand-in** $f$ that
# stays close to $q$ and has a slope worth following: $f'(x)$, used in place of $q'(x)$, is the
# *surrogate*. The result is **not** the gradient of the loss, only a useful direction.

# %% [markdown]
# ## An example: a spike and its stand-in
#
# Spiking neurons fire when a potential crosses a threshold $\theta$: $y = \mathbb{1}[x > \theta]$.
# A common stand-in is a steep sigmoid, $\sigma\big(k(x - \theta)\big)$. Below, autograd
# differentiates the stand-in, never the step: its slope, a bump around $\theta$, is the
# surrogate.

# %%
x = torch.tensor([-1.0, -0.1, 0.0, 0.1, 1.0], requires_grad=True)
threshold, k = 0.0, 4.0
spikes = (x > threshold).to(x.dtype)           # forward: the exact step
stand_in = torch.sigmoid(k * (x - threshold))  # continuous, close to the step
stand_in.sum().backward()
print("forward, the step:", spikes)
print("stand-in        :", stand_in.detach())
print("stand-in's slope:", x.grad)

# %% [markdown]
# An STE packs the two into one Function: the step in forward, a surrogate in backward, which on
# purpose is not the derivative of that forward. How backward gets at the surrogate, and what
# forward keeps for it, is yours to decide in each exercise below.

# %% [markdown]
# ## Your stand-ins for round and sign
#
# The first two exercises' stand-ins are yours to find, on paper first.
#
# - **Stand-in A, for round.** A continuous function with one slope everywhere that never
#   strays more than half a step from $\operatorname{round}(x)$, however large $|x|$ is.
# - **Stand-in B, for sign.** How far is A from $\operatorname{sign}(x)$ at $x = 1000$? Find a
#   continuous stand-in that equals $\operatorname{sign}(x)$ wherever $|x| \ge 1$ and, among
#   all such, has the gentlest steepest slope.
#
# <details><summary><b>Hint</b> (stand-in A)</summary>
#
# One slope everywhere makes the stand-in a line. Picture $\operatorname{round}(x)$ from $-1000$
# to $1000$, far enough that its steps blur: which line does it follow? Then, close up: how far
# from that line do the steps stray?
# </details>
#
# <details><summary><b>Hint</b> (stand-in B)</summary>
#
# Climbing from $-1$ to $1$ between $x = -1$ and $1$ takes what average slope? What does a
# steeper piece force elsewhere?
# </details>
#
# **Check them live**: write each as a `lambda x: ...` of torch ops; the cell after checks
# that it has no jump and follows its forward from $-1000$ to $1000$.

# %%
### BEGIN WORKED
stand_in_round = lambda x: x
stand_in_sign = lambda x: torch.clamp(x, -1, 1)
### LEARNER
stand_in_round = None  # stand-in A: lambda x: ...
stand_in_sign = None   # stand-in B: lambda x: ...
### END WORKED

# %%
check_stand_ins(stand_in_round, stand_in_sign)

# %% [markdown]
# **Quick question 1.** Stand-in B has corners at $x = \pm 1$, where it has no derivative, yet
# autograd reports a number there, and the same function can be spelled several ways. Take
# the closed form $(|x + 1| - |x - 1|)/2$, built from `torch.abs`. What does autograd report
# at $x = -1$ and at $x = 1$: 0, 1 or $\tfrac12$? (What slope does autograd give $|u|$ at
# $u = 0$?)

# %%
### BEGIN WORKED
predicted_corners = (0.5, 0.5)
### LEARNER
predicted_corners = None  # (at x = -1, at x = 1), each 0, 1 or 0.5: autograd's slope
### END WORKED

# %%
corners = torch.tensor([-1.0, 1.0], dtype=torch.float64, requires_grad=True)
(((corners + 1).abs() - (corners - 1).abs()) / 2).sum().backward()
if written(predicted_corners):
    print("autograd's slope of (|x + 1| - |x - 1|) / 2 at x = -1 and 1:", corners.grad.tolist())
compare("the closed form's slope at x = -1 and 1", predicted_corners, corners.grad.tolist())

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# **The corner is a convention.** Autograd reports whatever the ops you wrote define there: a
# spelling that picks a piece by a comparison reports 1 or 0 (strict or not); the closed form
# reports $\tfrac12$ (the slope of $|u|$ at 0 is 0, halfway between $-1$ and $1$). No
# convention is more correct; it only has to be stated and tested, as Exercise 2's contract
# does.
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `SignSTE` and `RoundSTE`: one stand-in, two quantisers
#
# Two answer cells: `SignSTE.apply(x)` returns `torch.sign(x)` and `RoundSTE.apply(x)` returns
# `torch.round(x)`. Each backward is the **plain** STE: it follows a stand-in whose slope never
# stops the gradient. On paper first, for both classes:
#
# 1. Which stand-in, A or B, never stops the gradient? Why can round use it with no clip,
#    while Exercise 2 gives sign the other one?
# 2. Write the chain rule for one element with that stand-in's slope: what does backward
#    return?
# 3. What does that backward need from forward, and so what should forward keep for it?
# 4. Backward returns the same gradient at $x = 0.3$ and at $x = 30$. For which forward, sign
#    or round, is that defensible at $x = 30$ (their average slope over $[29, 31]$)?
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `SignSTE`'s forward returns exactly `torch.sign(x)`, so `sign(0) = 0` (binarised networks often
#   send 0 to $+1$; this exercise follows `torch.sign`);
# - backward returns what autograd would give had forward computed whichever of your stand-ins
#   never stops the gradient;
# - forward saves no copy of `x` or of the output.

# %% nbgrader={"grade_id": "answer_SignSTE", "solution": true}
class SignSTE(torch.autograd.Function):
    """y = sign(x); backward: the plain straight-through estimator."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        return torch.sign(x)  # nothing to save: the surrogate does not depend on x
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        return grad_output  # identity surrogate
        ### END SOLUTION


# %% nbgrader={"grade_id": "SignSTE", "grade": true, "points": 1}
self_check("SignSTE", SignSTE)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SignSTE", SignSTE)
### END HIDDEN TESTS

# %% [markdown]
# ### The second cell: `RoundSTE`
#
# Its backward follows the same stand-in; its forward has a trap of its own: the halves.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `RoundSTE`'s forward returns exactly `torch.round(x)`, halves included;
# - backward returns what autograd would give had forward computed your stand-in for round;
# - forward saves no copy of `x` or of the output.
#
# **Predict, then run.** What does `torch.round` return for
# $x = (-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)$?

# %%
### BEGIN WORKED
predicted_round_halves = [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0]
### LEARNER
predicted_round_halves = None  # six numbers: torch.round at -2.5, -1.5, -0.5, 0.5, 1.5, 2.5
### END WORKED

# %%
halves = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])
if written(predicted_round_halves):
    print("torch.round:", torch.round(halves))
compare("torch.round at the halves", predicted_round_halves, torch.round(halves).tolist())

# %% [markdown]
# `torch.round` rounds halves **to even** (the IEEE 754 default): $1.5$ and $2.5$ both go to 2,
# $-0.5$ to $-0$, so ties go down as often as up.

# %% nbgrader={"grade_id": "answer_RoundSTE", "solution": true}
class RoundSTE(torch.autograd.Function):
    """y = round(x), halves to even; backward: the plain straight-through estimator."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        return torch.round(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        return grad_output  # the identity surrogate
        ### END SOLUTION


# %% nbgrader={"grade_id": "RoundSTE", "grade": true, "points": 1}
self_check("RoundSTE", RoundSTE)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("RoundSTE", RoundSTE)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after both self-checks are green</summary>
#
# 1. Stand-in A, $x$ itself, slope 1 everywhere; B's is 0 wherever $|x| > 1$. The identity
#    stays within half a step of round, not of sign ($999$ off at $x = 1000$).
# 2. $\partial L/\partial x_i = g_i$: backward returns `grad_output` as it came.
# 3. Nothing: a slope of 1 does not depend on $x$.
# 4. Round's, which climbs by 2 from 29 to 31; sign stays flat there, and Exercise 2's clip
#    drops it.
# </details>
#
# Your `RoundSTE`, explored: its staircase with the stand-in your backward implies, and the
# true derivative against your surrogate.

# %%
ste_explorer(RoundSTE, x=1.5)

# %% [markdown]
# ## ✎ Exercise 2 · `SignClippedSTE`
#
# Same forward as `SignSTE`; backward follows your stand-in B. At B's corners the spelling
# decides the slope (quick question 1); this exercise's contract fixes it.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward returns exactly `torch.sign(x)`, as `SignSTE`'s does;
# - backward returns what autograd would give had forward computed stand-in B, with the gradient
#   passing at the corners $x = \pm 1$, as through B's middle piece;
# - forward saves no copy of `x` or of the output.
#
# Before you write the class:
#
# 1. Write the chain rule for one element with B's slope: what does backward return?
# 2. **A design decision, yours.** What does that backward need from forward, and what is the
#    cheapest thing forward can keep for it? Weigh two cases, and say in a comment what you
#    chose and why: `x` an activation nothing else keeps, and `x` a latent weight that lives
#    anyway. The cell after the self-check shows what yours keeps.
# 3. The graph keeps forward's output anyway: could backward get by with it alone?

# %% nbgrader={"grade_id": "answer_SignClippedSTE", "solution": true}
class SignClippedSTE(torch.autograd.Function):
    """y = sign(x); backward as if forward had computed your stand-in for sign."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        # x, not a mask: saving an input keeps a reference, no copy (a bool mask, one byte per
        # element, would let an activation x be freed; for a latent weight x costs nothing new)
        ctx.save_for_backward(x)
        return torch.sign(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        return grad_output * (x.abs() <= 1)  # clamp(x, -1, 1)'s derivative, boundary kept
        ### END SOLUTION


# %% nbgrader={"grade_id": "SignClippedSTE", "grade": true, "points": 1}
self_check("SignClippedSTE", SignClippedSTE)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SignClippedSTE", SignClippedSTE)
### END HIDDEN TESTS

# %%
# what your SignClippedSTE keeps between forward and backward, for an activation of 2^18 float32
activation = 2 * torch.randn(2**18, generator=torch.Generator().manual_seed(0))
# nothing else keeps `activation`: an intermediate of a network, freed once nothing holds it
kept = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
    SignClippedSTE.apply(activation.requires_grad_())
for t in kept:
    what = "x itself (a reference)" if t.data_ptr() == activation.data_ptr() else "a new tensor"
    print(f"saved: {what}, {t.dtype}, {t.element_size() * t.numel() / 2**20:.2f} MiB")

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Stand-in B is $\operatorname{clamp}(x, -1, 1)$.
#
# 1. $\partial L/\partial x_i = g_i \cdot \mathbb{1}[\,|x_i| \le 1\,]$: $\le$ keeps the corners.
# 2. Backward needs only where $|x_i| \le 1$: `x` itself or a boolean mask forward computes
#    from it, either for a reason. `x` is free for a latent weight, alive anyway; for an
#    activation it keeps four or eight bytes per element alive, a bool mask one.
# 3. No: $\operatorname{sign}(x)$ never exceeds 1 in magnitude, so it cannot tell where the
#    clip applies.
# </details>
# %% [markdown]
# ## `gradcheck` says no, by design
#
# `gradcheck` compares the numerical Jacobian, from central differences of forward, with the
# analytical one, from backward. **Predict, then run.** At $x = (-1.5, -0.3, 0.2, 0.9)$, none
# near a jump, what does each hold for your `SignSTE`: `"zeros"`, `"identity"` or
# `"something else"`?

# %%
### BEGIN WORKED
predicted_numerical_jacobian = "zeros"
predicted_analytical_jacobian = "identity"
### LEARNER
predicted_numerical_jacobian = None  # "zeros", "identity" or "something else"
predicted_analytical_jacobian = None
### END WORKED

# %%
def jacobian_kind(matrix):
    eye = torch.eye(len(matrix), dtype=matrix.dtype)
    return ("zeros" if not matrix.any() else "identity" if torch.equal(matrix, eye)
            else "something else")


x = torch.tensor([-1.5, -0.3, 0.2, 0.9], dtype=torch.float64, requires_grad=True)
try:
    torch.autograd.gradcheck(SignSTE.apply, (x,))
except GradcheckError as error:  # its message shows both Jacobians
    if written(predicted_numerical_jacobian, predicted_analytical_jacobian):
        print("gradcheck:", str(error).strip())
step = 1e-6  # gradcheck's own step
numerical = torch.stack([(torch.sign(x.detach() + step * e) - torch.sign(x.detach() - step * e))
                         / (2 * step) for e in torch.eye(4, dtype=torch.float64)], dim=1)
analytical = torch.autograd.functional.jacobian(SignSTE.apply, x.detach())
compare("numerical Jacobian", predicted_numerical_jacobian, jacobian_kind(numerical))
compare("analytical Jacobian", predicted_analytical_jacobian, jacobian_kind(analytical))

# %% [markdown]
# `gradcheck` asks *is backward the derivative of forward?* Across a step central differences
# give 0 or a spike; an STE answers 1 on purpose.

# %%
xs = torch.linspace(-1.5, 1.5, 601, dtype=torch.float64)
eps = 0.05  # a large step, so that the spike at the jump is visible
finite_difference = (torch.sign(xs + eps) - torch.sign(xs - eps)) / (2 * eps)
leaf = xs.clone().requires_grad_()
SignSTE.apply(leaf).sum().backward()

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(xs, finite_difference, label=f"central difference, ε = {eps}")
ax.plot(xs, leaf.grad, lw=3, alpha=0.6, label="SignSTE backward")
ax.set_xlabel("x")
ax.set_title("What gradcheck compares")
ax.legend()
plt.show()

# %% [markdown]
# So test the halves separately: **forward is the quantiser, exactly** (`torch.equal`), and
# **backward is the intended surrogate**, against a reference of ordinary ops:
# `q(x.detach()) + (x - x.detach())` has the **value** $q(x)$ and the **derivative** 1 (the
# "detach trick").
#
# **Your turn.** Write `SignClippedSTE`'s reference the same way: value `sign(x)`, derivative
# stand-in B's. Which part of the bracket carries the derivative? The cell after tests both
# your Functions against their references.

# %%
def clipped_reference(x):
    """sign(x) in value; in derivative, torch.clamp(x, -1, 1)'s."""
### BEGIN WORKED
    window = torch.clamp(x, -1, 1)
    return torch.sign(x.detach()) + (window - window.detach())
### LEARNER
    return None  # the detach trick, with clamp's derivative
### END WORKED

# %%
x = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0], dtype=torch.float64)
grad_output = torch.randn(x.shape, dtype=torch.float64)

plain = x.clone().requires_grad_()  # the plain reference
(torch.sign(plain.detach()) + (plain - plain.detach())).backward(grad_output)
clipped = x.clone().requires_grad_()  # yours
reference_output = clipped_reference(clipped)
if reference_output is None:
    print("clipped_reference returns None: write it first; only SignSTE is tested below")
else:
    print("clipped_reference's value is sign(x):",
          torch.equal(reference_output.detach(), torch.sign(x)))
    reference_output.backward(grad_output)

for Function, reference in ((SignSTE, plain), (SignClippedSTE, clipped)):  # yours
    if reference.grad is None:
        continue
    mine = x.clone().requires_grad_()
    y = Function.apply(mine)
    y.backward(grad_output)
    forward_exact = torch.equal(y.detach(), torch.sign(x))
    print(f"{Function.__name__:15s} forward exact: {str(forward_exact):5s}",
          f" backward exact: {torch.equal(mine.grad, reference.grad)}")

# %% [markdown]
# ## ✎ Exercise 3 · `FakeQuantize`: a quantiser that learns its step
#
# Quantisation-aware training rounds weights to a grid of integer codes $q_\text{min}$ to
# $q_\text{max}$ and a **step** $s$ (the *scale*) that maps them back to real values, keeping
# floats:
#
# $$v = x / s, \qquad y = \operatorname{clamp}\big(\operatorname{round}(v),\, q_\text{min},\,
#   q_\text{max}\big)\; s .$$
#
# Learned step-size quantisation (LSQ, Esser et al., 2020) trains $s$ with the weights. Write
# `FakeQuantize.apply(x, scale, qmin, qmax)`, returning $y$: `scale` a positive 0-d tensor that
# may require grad, `qmin < 0 < qmax` Python ints.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract, LSQ without its gradient-scale factor:
#
# - backward treats `round` with the straight-through estimator (its derivative taken as 1) and
#   `clamp` with its true derivative, $v = q_\text{min}$ and $v = q_\text{max}$ counted inside;
# - in the half-step band just outside each edge, where $v$ is outside but
#   $\operatorname{round}(v)$ is not ($v = 3.2$ with $q_\text{max} = 3$), "inside" may be judged on
#   $v$ or on $\operatorname{round}(v)$, one convention per edge, the same for both gradients;
# - $v$ is `x / scale` computed in `x`'s dtype, or `x * (1 / scale)` as PyTorch's kernels compute
#   it, the same $v$ in forward and backward;
# - forward saves no copy of an input or of the output.
#
# Derive the two gradients by hand first; $g_i$ is `grad_output[i]`.
#
# 1. Take one element with $q_\text{min} \le v_i \le q_\text{max}$. With round's surrogate, what
#    is $\partial y_i/\partial x_i$? And for $v_i < q_\text{min}$, or $v_i > q_\text{max}$?
# 2. Same three cases for $\partial y_i/\partial s$. Inside the clip $s$ appears twice, in $v_i$
#    and as the factor. Which of the two does round's surrogate touch?
# 3. Every $y_i$ depends on the one $s$. What is $\partial L/\partial s$ in terms of the $g_i$?
# 4. What must forward save, and what can be a plain `ctx` attribute?
# 5. On numbers: $s = 0.5$, $q_\text{min} = -4$, $q_\text{max} = 3$ and $x = (0.7, -3.0, 1.8)$.
#    Write $y$, $\partial y_i/\partial x_i$ and $\partial y_i/\partial s$ for each element into
#    the cell below; its checker says which element is off, never autograd's number.
#
# <details><summary><b>Hint 1</b>: the gradient for x</summary>
#
# Inside, $y_i = \operatorname{round}(x_i/s)\, s$: the chain rule through $v_i = x_i/s$ gives
# $1/s$; what does the outer factor $s$ do to it? Outside, does $x_i$ appear in $y_i$ at all?
# </details>
#
# <details><summary><b>Hint 2</b>: the gradient for s, the one step that needs care</summary>
#
# Inside, $y_i = \operatorname{round}(v_i)\, s$ is a product of two factors that both depend on
# $s$. What is $\partial v_i/\partial s$? The surrogate replaces only
# $\partial \operatorname{round}/\partial v$, never the value $\operatorname{round}(v_i)$.
# </details>

# %%
# question 5, before you write FakeQuantize: s = 0.5, qmin = -4, qmax = 3, x = (0.7, -3.0, 1.8)
### BEGIN WORKED
predicted_y = [0.5, -2.0, 1.5]
predicted_dy_dx = [1.0, 0.0, 0.0]
predicted_dy_ds = [-0.4, -4.0, 3.0]
### LEARNER
predicted_y = None      # three numbers
predicted_dy_dx = None  # three numbers
predicted_dy_ds = None  # three numbers
### END WORKED


# %% tags=["skip-when-grading"]
# question 5's numbers against autograd's, element by element
check_derivation(predicted_y, predicted_dy_dx, predicted_dy_ds)

# %% nbgrader={"grade_id": "answer_FakeQuantize", "solution": true}
class FakeQuantize(torch.autograd.Function):
    """y = clamp(round(x / scale), qmin, qmax) * scale; STE through round, LSQ's scale gradient."""

    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return torch.clamp(torch.round(x / scale), qmin, qmax) * scale
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, scale = ctx.saved_tensors
        v = x / scale
        inside = (v >= ctx.qmin) & (v <= ctx.qmax)  # judged on v
        grad_x = grad_output * inside if ctx.needs_input_grad[0] else None
        grad_scale = None
        if ctx.needs_input_grad[1]:
            clipped = torch.where(v < ctx.qmin, float(ctx.qmin), float(ctx.qmax))
            local = torch.where(inside, torch.round(v) - v, clipped)  # dy/dscale per element
            grad_scale = (grad_output * local).sum()  # one scale for every element
        return grad_x, grad_scale, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "FakeQuantize", "grade": true, "points": 2}
self_check("FakeQuantize", FakeQuantize)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("FakeQuantize", FakeQuantize)
### END HIDDEN TESTS

# %% [markdown]
# Your `FakeQuantize` on question 5's numbers, one element at a time, and beside its gradient
# for $s$ the derivative that central differences measure on the forward.

# %%
x5 = torch.tensor([0.7, -3.0, 1.8], dtype=torch.float64)
s5 = torch.tensor(0.5, dtype=torch.float64)
y5, dy_dx, dy_ds = [], [], []
for i in range(3):
    point, step = x5[i].clone().requires_grad_(), s5.clone().requires_grad_()
    output = FakeQuantize.apply(point, step, -4, 3)
    grad_point, grad_step = torch.autograd.grad(output, (point, step))
    y5.append(round(output.item(), 6))
    dy_dx.append(round(grad_point.item(), 6))
    dy_ds.append(round(grad_step.item(), 6))
print("your FakeQuantize: y", y5, " dy/dx", dy_dx, " dy/ds", dy_ds)
h = 1e-6
central = (FakeQuantize.apply(x5, s5 + h, -4, 3) - FakeQuantize.apply(x5, s5 - h, -4, 3)) / (2 * h)
print("dy/ds by central differences:", [round(value, 6) for value in central.tolist()])

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# 1. Inside, $\partial y_i/\partial x_i = s \cdot 1 \cdot \frac{1}{s} = 1$; outside, 0: a
#    clipped STE on $v$.
# 2. Inside, $\partial y_i/\partial s = \operatorname{round}(v_i) - v_i$, the rounding error in
#    units of $s$; below the clip $q_\text{min}$, above it $q_\text{max}$.
# 3. $\partial L/\partial s = \sum_i g_i\, \partial y_i/\partial s$, a 0-d tensor like
#    `scale` (the unsummed products pass too: autograd sums them, [rule 2](function_contract.md)).
# 4. Save `x` and `scale` (inputs: no copy); keep `qmin` and `qmax` as plain attributes.
# </details>
#
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Central differences agree on the clipped elements, not inside: they hold
# $\operatorname{round}(v)$ constant and measure 1, not $-0.4$. LSQ's step gradient is a
# surrogate too.
# </details>

# %% [markdown]
# ## Low temperature and overflow
#
# Training anneals $\tau$, often to 0.1 or below: $z = \ell/\tau$ reaches the hundreds, and
# $e^{z}$ is past the largest float32 (about $3.4 \times 10^{38}$) once $z > 88.7$.
#
# **Quick question 2.** Take logits `[12.0, 11.8, -2.0]` in float32 and the softmax written
# from its definition, `z.exp() / z.exp().sum()` with $z = \ell/\tau$, and lower $\tau$ from 0.2
# in steps of 0.001. What is the largest $\tau$ at which its first entry is not finite? And at
# that $\tau$, is its second entry `nan`, `0` or a positive number?

# %%
### BEGIN WORKED
predicted_tau_limit = 0.135
predicted_second_entry = "0"
### LEARNER
predicted_tau_limit = None     # a number with three decimals, such as 0.123
predicted_second_entry = None  # "nan", "0" or "positive"
### END WORKED

# %%
near_tie = torch.tensor([12.0, 11.8, -2.0])  # float32; the top two are close


def by_definition(tau):
    z = near_tie / tau
    return z.exp() / z.exp().sum()


taus = [k / 1000 for k in range(100, 201)]  # 0.100, 0.101, ..., 0.200
tau_limit = max(tau for tau in taus if not math.isfinite(by_definition(tau)[0].item()))
second = by_definition(tau_limit)[1].item()
if written(predicted_tau_limit, predicted_second_entry):
    print(f"τ = {tau_limit + 0.001:.3f}, by definition:",
          by_definition(tau_limit + 0.001).tolist())
    print(f"τ = {tau_limit:.3f}, by definition:", by_definition(tau_limit).tolist())
compare("largest τ with a non-finite first entry", predicted_tau_limit, tau_limit)
compare("the second entry there", predicted_second_entry,
        "nan" if math.isnan(second) else "0" if second == 0 else "positive")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# $e^{z}$ overflows once $z > 88.7$: at $\tau < 12/88.7 \approx 0.1353$, 0.135 on this grid.
# There $e^{z_1}$ is `inf` but $e^{z_2} = e^{87.4}$ is not: the first entry is `inf / inf`,
# `nan`, the second a finite number over `inf`, exactly 0 (the true one is 0.185), which no
# `isnan` check catches. Exercise 4's contract asks for $\tau$ down to 0.001.
# </details>

# %% [markdown]
# ## ✎ Exercise 4 (transfer) · `StraightThroughSoftmax`
#
# The straight-through (Gumbel-)softmax of discrete latents and mixture-of-experts routing.
# Write `StraightThroughSoftmax.apply(logits, tau)`: `logits` float64 or float32 with at least
# one dimension (the last holds the classes), `tau` a positive Python float. The caller adds
# any Gumbel noise.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward returns the **one-hot** of `argmax(logits, -1)`, the argmax of the logits themselves,
#   in `logits`' dtype, ties as `torch.argmax` (the first maximum);
# - backward returns the gradient of $\operatorname{softmax}(\text{logits}/\tau)$ over the last
#   dim, with no built-in softmax backward inside it;
# - backward is finite wherever the softmax and its gradient are, for $\tau$ down to 0.001;
# - forward saves no copy of an input or of the output, and nothing cast to a wider dtype.
#
# <details><summary><b>Hint 1</b>: which entries of the Jacobian are non-zero?</summary>
#
# With $s = \operatorname{softmax}(z)$, $z = \ell/\tau$, for one row, differentiate
# $s_j = e^{z_j} / \sum_k e^{z_k}$ with respect to $z_i$, for $i = j$ and for $i \ne j$.
# </details>
#
# <details><summary><b>Hint 2</b>: the Jacobian, as questions</summary>
#
# Write both cases with $s$ alone. In $\sum_j g_j\, \partial s_j/\partial z_i$, which part does
# not depend on $i$?
# </details>
#
# <details><summary><b>Hint 3</b>: the temperature</summary>
#
# What does the chain rule through $z = \ell/\tau$ add? Is it cheaper to keep $s$ or to
# recompute it? Either way backward needs $s$ finite down to $\tau = 0.001$, where quick
# question 2's definition is not: what happens to a softmax when one number is subtracted from
# every entry of its row, and which number keeps every exponent at most 0? Does the softmax you
# call already do that?
# </details>
#
# <details><summary><b>Hint 4</b>: numbers to hit</summary>
#
# One row, $\ell = (1, 2, 0.5)$, $\tau = 0.5$ and `grad_output` $= (1, 0, -1)$: forward gives
# $(0, 1, 0)$ and $s = (0.1142, 0.8438, 0.0420)$; $\partial s_1/\partial z_1 = 0.1012$,
# $\partial s_2/\partial z_1 = -0.0964$, and backward returns $(0.2119, -0.1218, -0.0901)$.
# The three entries add up to $0$: why must they, for any `grad_output`?
# </details>

# %% nbgrader={"grade_id": "answer_StraightThroughSoftmax", "solution": true}
class StraightThroughSoftmax(torch.autograd.Function):
    """One-hot of argmax(logits, -1) in forward; softmax(logits / tau)'s gradient in backward."""

    @staticmethod
    def forward(ctx, logits, tau):
        ### BEGIN SOLUTION
        soft = torch.softmax(logits / tau, dim=-1)
        # an intermediate is fine to save, but backward may run twice: never modify it
        ctx.save_for_backward(soft)
        ctx.tau = tau
        return F.one_hot(logits.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        soft, = ctx.saved_tensors
        row = (grad_output * soft).sum(dim=-1, keepdim=True)  # <g, s>, one per row
        return soft * (grad_output - row) / ctx.tau, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "StraightThroughSoftmax", "grade": true, "points": 2}
self_check("StraightThroughSoftmax", StraightThroughSoftmax)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("StraightThroughSoftmax", StraightThroughSoftmax)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\sum_j g_j\, s_j(\delta_{ij} - s_i) = s_i\big(g_i - \sum_j g_j s_j\big)$, and the
# temperature divides it: $\partial L/\partial \ell_i = s_i\big(g_i - \sum_j g_j s_j\big)/\tau$,
# one sum per row. Its entries add up to $0$ over a row, since a softmax's outputs always add up
# to $1$. A softmax is unchanged when one number is subtracted from a whole row; `torch.softmax`
# subtracts the row's maximum first, so every exponent is at most 0 and $s$ stays finite at any
# $\tau$ (a softmax written by hand needs the same shift).
# </details>

# %% [markdown]
# ## Summary
#
# A straight-through estimator's forward is the exact, piecewise-constant operation; its
# backward is the chain rule with a surrogate derivative (identity, or clipped). `gradcheck`
# rejects it by design, so test forward and backward separately. A learnable step combines the STE at the rounding with the true derivative
# of the clip and the product, summed for the one step; a straight-through softmax borrows the
# gradient of a smooth relative. Next lesson: backward functions that can themselves be
# differentiated.

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above. The sections below look further at your answers
# and back the main line's claims with experiments; none is needed for an exercise, and you
# can skip any of them. They run after the main line: they use your `FakeQuantize`,
# `StraightThroughSoftmax`, `SignSTE` and `SignClippedSTE`.

# %% [markdown]
# ### Two spellings of stand-in B
#
# PyTorch spells stand-in B twice, and at the corners the two disagree (quick question 1):

# %%
x = torch.tensor([-1.5, -1.0, 0.0, 1.0, 1.5], requires_grad=True)
print("x".ljust(22) + ":", x.detach())
for name, clip in [("hardtanh(x)", F.hardtanh),
                   ("clamp(x, -1, 1)", lambda t: torch.clamp(t, -1, 1))]:
    x.grad = None
    clip(x).sum().backward()
    print(f"d {name}/dx".ljust(22) + ":", x.grad)

# %% [markdown]
# `F.hardtanh` reports 0 at $\pm 1$, `torch.clamp` 1: the contract follows clamp. Drag `x`
# across your `SignClippedSTE`'s window.

# %%
ste_explorer(SignClippedSTE)

# %% [markdown]
# ### Experiment: a binarised network
#
# 512 points in $[-1, 1]^2$, labelled by quadrant (XOR). Hidden units and readout weights are
# $\pm 1$, made by a quantiser $q$ from real-valued "latent" parameters the optimiser updates:
#
# $$h = q(W_1 x + b_1) \in \{-1, 0, 1\}^{64}, \qquad
#   \text{logit} = \frac{h \cdot q(w_2)}{\sqrt{64}} + b_2 .$$
#
# Three runs change only $q$'s backward: `torch.sign`, your `SignSTE`, your `SignClippedSTE`.
#
# **Predict, then run.** With the true gradient, which of $W_1$, $b_1$, $w_2$, $b_2$ receive a
# non-zero gradient, and what does that predict for the loss curve?

# %%
### BEGIN WORKED
predicted_learning_parameters = {"b2"}
### LEARNER
predicted_learning_parameters = None  # a set of names, from {"W1", "b1", "w2", "b2"}
### END WORKED

# %% tags=["skip-when-grading"]
def xor_data(n=512, seed=0):
    """Points in [-1, 1]^2, labelled 1 in the first and third quadrants."""
    generator = torch.Generator().manual_seed(seed)
    points = torch.rand(n, 2, generator=generator) * 2 - 1
    return points, (points[:, 0] * points[:, 1] > 0).float()


class BinarisedRun(NamedTuple):
    losses: list                  # training loss at each step
    model: Callable               # the trained network: points -> logits
    nonzero_at_first_step: set    # names of the parameters whose first gradient is not all 0
    readout_never_moved: int      # readout weights (of 64) the optimiser never moved


def train_binarised(quantise, points, labels, hidden=64, steps=200, lr=0.01, seed=0,
                    quantise_readout=None):
    """Train the binarised network with quantiser ``quantise`` (``quantise_readout`` for w2,
    when given); return a BinarisedRun."""
    generator = torch.Generator().manual_seed(seed)
    w1 = torch.randn(hidden, 2, generator=generator).requires_grad_()
    b1 = (0.5 * torch.randn(hidden, generator=generator)).requires_grad_()
    w2 = torch.randn(hidden, generator=generator).requires_grad_()
    b2 = torch.zeros((), requires_grad=True)
    w2_start = w2.detach().clone()
    optimiser = torch.optim.Adam([w1, b1, w2, b2], lr=lr)

    def model(inputs):
        h = quantise(inputs @ w1.T + b1)
        return h @ (quantise_readout or quantise)(w2) / math.sqrt(hidden) + b2

    F.binary_cross_entropy_with_logits(model(points), labels).backward()  # the first step's
    nonzero = {name for name, p in zip(("W1", "b1", "w2", "b2"), (w1, b1, w2, b2))
               if p.grad.any()}
    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(model(points), labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return BinarisedRun(losses, model, nonzero, int((w2 == w2_start).sum()))


points, labels = xor_data()
runs = {"true gradient (torch.sign)": torch.sign,
        "SignSTE": SignSTE.apply,
        "SignClippedSTE": SignClippedSTE.apply}
results = {name: train_binarised(quantise, points, labels) for name, quantise in runs.items()}

plane = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 101), torch.linspace(-1, 1, 101),
                                   indexing="xy"), dim=-1).reshape(-1, 2)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
for name, run in results.items():
    with torch.no_grad():
        accuracy = ((run.model(points) > 0).float() == labels).float().mean().item()
    print(f"{name:27s} loss {run.losses[0]:.3f} -> {run.losses[-1]:.3f}   accuracy {accuracy:.1%}")
    axes[0].plot(run.losses, label=name)
axes[0].set_xlabel("step")
axes[0].set_ylabel("training loss")
axes[0].set_title("Binarised network on XOR")
axes[0].legend()
with torch.no_grad():
    decision = results["SignClippedSTE"].model(plane).reshape(101, 101) > 0
axes[1].imshow(decision, origin="lower", extent=(-1, 1, -1, 1), cmap="coolwarm", alpha=0.35)
axes[1].scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=6)
axes[1].set_title("Decision regions, SignClippedSTE")
plt.show()
for name, run in results.items():
    if written(predicted_learning_parameters):
        print(f"{name:27s} non-zero gradient at the first step: "
              f"{sorted(run.nonzero_at_first_step)}")
for name, run in results.items():
    print(f"{name:27s} readout weights never moved: {run.readout_never_moved} of 64")
compare("learn with the true gradient", predicted_learning_parameters,
        results["true gradient (torch.sign)"].nonzero_at_first_step)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# With the true gradient only $b_2$ learns ($W_1$, $b_1$ and $w_2$ sit upstream of a `sign`),
# and a bias alone matches only the label frequency. Both estimators train all four; the
# clipped one reaches the lower loss, yet never moves 18 of the 64 readout weights.
# </details>

# %% [markdown]
# ### A straight-through Gumbel-softmax is not the identity
#
# **"A straight-through Gumbel-softmax Function can return `grad_output`."** It cannot. Its
# forward is the one-hot argmax of $y_\text{soft} = \operatorname{softmax}\big((\ell + g)/\tau\big)$
# (Jang, Gu and Poole, 2017), and its backward the gradient of $y_\text{soft}$, each entry of
# which depends on its whole row: the true gradient's rows sum to zero, the identity's do not.

# %%
generator = torch.Generator().manual_seed(1)
logits = torch.randn(2, 4, generator=generator, dtype=torch.float64)
gumbels = -torch.log(-torch.log(torch.rand(2, 4, generator=generator, dtype=torch.float64)))
grad_output = torch.randn(2, 4, generator=generator, dtype=torch.float64)
tau = 0.5

leaf = logits.clone().requires_grad_()
y_soft = torch.softmax((leaf + gumbels) / tau, dim=-1)
# the detach trick's y_hard is a constant to autograd and adds no gradient, so it is left out
(y_soft - y_soft.detach()).backward(grad_output)

identity = grad_output  # what the misconception's backward hands the logits, untouched
for name, grad in [("reference (detach trick)", leaf.grad), ("identity", identity)]:
    print(f"{name:25s} row sums", [round(v, 3) + 0.0 for v in grad.sum(dim=-1).tolist()])
print("identity matches the reference:", torch.allclose(identity, leaf.grad))

# %% [markdown]
# ### Common mistakes
#
# <details><summary>The usual slips, exercise by exercise (open when a self-check's hint is not
# enough)</summary>
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | backward returns zeros (or you use `torch.sign` itself) | the true derivative: nothing upstream learns | return the surrogate |
# | backward returns `torch.ones_like(x)` | ignores the chain rule | the incoming gradient times the surrogate |
# | `torch.where(x >= 0, 1., -1.)` as sign | `sign(0)` becomes 1: binarised networks' convention, not `torch.sign`'s, which the exercise asks for | `torch.sign(x)` |
# | clip with `x.abs() < 1` | hardtanh's convention, not the exercise's: the gradient at $\lvert x\rvert = 1$ is dropped | keep the boundary, $\lvert x\rvert \le 1$ |
# | clip mask from the saved output `sign(x)` | never clips: $\lvert\operatorname{sign}(x)\rvert \le 1$ always | save and mask with the input `x` |
# | `grad_output.clamp(-1, 1)` | clips the gradient's values, not the input's range | mask by the input's range |
# | `grad_output[x.abs() > 1] = 0` | writes into a tensor backward does not own | build a new tensor |
# | `torch.floor(x + 0.5)` or `x.long()` as round, in `RoundSTE` or `FakeQuantize` | rounds halves up (0.5 to 1, 2.5 to 3), or truncates | `torch.round`, halves to even |
# | `torch.tanh(k * x)` in forward | the forward is no longer binary | exact quantiser forward, surrogate in backward only |
# | `gradcheck` on an STE | fails for a correct STE | check forward and surrogate separately |
# | `FakeQuantize` returns `round(x / scale)` clamped | integer codes, not values on x's grid | multiply by `scale` |
# | gradient for `scale` of $\operatorname{round}(v)$, or of $-v$, inside the clip; or gradient for `x` of `grad_output / scale` | half of the product rule: round held constant (its derivative taken as 0) loses the $-v$ term; a lost factor $s$ loses the $\operatorname{round}(v)$ term, or leaves $1/s$ in the gradient for $x$ | differentiate $\operatorname{round}(x/s) \cdot s$ at both places $s$ appears, with round's derivative taken as 1 |
# | gradient for `scale` of 0 where the clip is active, or its `.mean()`; "inside" judged on $v$ for `x`'s gradient, on $\operatorname{round}(v)$ for `scale`'s | clipped values never grow the step to cover outliers; the step learns more slowly the larger the tensor; in the half-step band the pair of gradients belongs to no surrogate ($\partial y/\partial x = 0$ beside $\partial y/\partial s = \operatorname{round}(v) - v$) | differentiate a clipped output for $s$ too (it is constant in $x$, not in $s$); combine every element's contribution as the chain rule does for one input that every output uses; one mask for both gradients |
# | `StraightThroughSoftmax`'s backward returns `grad_output` | the identity, not the softmax's Jacobian: the rows of the gradient do not sum to 0 | the vector-Jacobian product through the softmax |
# | only the diagonal of the softmax's Jacobian | drops how each $s_j$ depends on the other logits of its row | the terms with $i \ne j$ too |
# | no $1/\tau$ | every gradient $\tau$ times its true size | the chain rule through $z = \ell/\tau$ |
# | $s$ rebuilt in backward as `z.exp() / z.exp().sum(-1, keepdim=True)` | `nan`, or a silent 0, at low temperature (quick question 2) | subtract each row's maximum first, or save $s$ from forward |
#
# </details>

# %% [markdown]
# ### The detach trick inside `Function.forward`
#
# A common misconception: "the detach trick works inside `Function.forward`." Take a Function
# whose forward returns `y_hard - y_soft.detach() + y_soft` with `y_soft = x` and
# `y_hard = torch.sign(x)`, expecting the gradient of `y_soft` to flow. **Predict, then run.** Inside that forward, what
# does `torch.is_grad_enabled()` return? Is `y.grad_fn` `None` there? Its backward returns
# `2 * grad_output`, a value no other source of gradient gives. After `y.sum().backward()` at
# $x = (-2, 0.5, 3)$, is every entry of `x.grad` 0 (sign's true derivative), 1 (the trick's
# slope), 2 (the backward's) or 3 (the trick's and the backward's added)?

# %%
### BEGIN WORKED
predicted_grad_enabled = False
predicted_grad_fn_none = True
predicted_x_grad = 2
### LEARNER
predicted_grad_enabled = None   # True or False
predicted_grad_fn_none = None   # True or False
predicted_x_grad = None         # 0, 1, 2 or 3
### END WORKED

# %%
class DetachTrickInForward(torch.autograd.Function):
    """The trick in the wrong place: inside forward it is only arithmetic."""

    @staticmethod
    def forward(ctx, x):
        y_soft = x
        y_hard = torch.sign(x)
        y = y_hard - y_soft.detach() + y_soft
        seen_inside.update(grad_enabled=torch.is_grad_enabled(), grad_fn_none=y.grad_fn is None)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return 2 * grad_output  # a marker: no other source of gradient gives 2


seen_inside = {}
x = torch.tensor([-2.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
y = DetachTrickInForward.apply(x)
y.sum().backward()
if written(predicted_grad_enabled, predicted_grad_fn_none, predicted_x_grad):
    print("forward:", y.detach().tolist(), "  x.grad:", x.grad.tolist())
compare("grad enabled inside forward", predicted_grad_enabled, seen_inside["grad_enabled"])
compare("y.grad_fn is None inside forward", predicted_grad_fn_none, seen_inside["grad_fn_none"])
compare("every entry of x.grad", predicted_x_grad, set(x.grad.tolist()))

# %% [markdown]
# So the trick does not work there. Forward runs with autograd off: nothing is recorded, so
# `.detach()` has nothing to cut, and the expression is plain arithmetic whose value is
# `y_hard` (exactly, but for huge $|x|$: see *In practice* below). The gradient comes from
# your `backward`, and only from it: `x.grad` is all 2s, not the trick's 1s, nor 3s with the
# trick's slope added to the backward's. The trick belongs in ordinary code, *instead of* a
# Function, as in the reference above. (Lesson 04 meets the same switch from the other side:
# backward, too, runs with autograd off unless asked otherwise.)

# %% [markdown]
# ### Rounding without and with `RoundSTE`
#
# Rounding has the same problem as sign. Below, a linear model keeps real-valued latent
# weights $w$ but predicts with weights rounded to a grid of step $\tfrac14$:
# $\hat y = X\, \tfrac14 \operatorname{round}(4w)$, the core of quantisation-aware training.

# %%
def train_quantised_regression(quantise, steps=100, lr=0.1, seed=0):
    """Fit y = X w_true with weights quantised to multiples of 1/4; return the losses."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(256, 8, generator=generator)
    w_true = torch.randn(8, generator=generator)
    targets = inputs @ w_true + 0.05 * torch.randn(256, generator=generator)
    w = torch.zeros(8, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = ((inputs @ (quantise(4 * w) / 4) - targets) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


fig, ax = plt.subplots(figsize=(6, 3.2))
for name, quantise in [("true gradient (torch.round)", torch.round), ("RoundSTE", RoundSTE.apply)]:
    losses = train_quantised_regression(quantise)
    print(f"{name:27s} loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    ax.semilogy(losses, label=name)
ax.set_xlabel("step")
ax.set_ylabel("mean squared error")
ax.set_title("Regression with weights on a 1/4 grid")
ax.legend()
plt.show()

# %% [markdown]
# The rounded weights never see a gradient with the true derivative, so that loss is flat from
# the first step. With `RoundSTE` the loss falls to the level the grid allows and then jitters:
# latent weights near a rounding boundary hop across it, and each hop moves a quantised weight
# by a whole step of $\tfrac14$.

# %% [markdown]
# ### Your `FakeQuantize` on a line of inputs
#
# Your `FakeQuantize` on a line of inputs, with $s = 0.5$ and 3-bit codes: the staircase, the
# gradient for $x$ your backward returns, and each element's contribution to the gradient for
# $s$ (one backward per point, so that the sum has a single term).

# %%
xs = torch.linspace(-3, 2.5, 221, dtype=torch.float64)
scale = torch.tensor(0.5, dtype=torch.float64)
leaf = xs.clone().requires_grad_()
FakeQuantize.apply(leaf, scale, -4, 3).sum().backward()
per_element = []
for value in xs:
    point, step = value.clone().requires_grad_(), scale.clone().requires_grad_()
    FakeQuantize.apply(point, step, -4, 3).backward()
    per_element.append(step.grad.item())

fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
axes[0].plot(xs, FakeQuantize.apply(xs, scale, -4, 3))
axes[1].plot(xs, leaf.grad)
axes[2].plot(xs, per_element)
for ax, title in zip(axes, ["forward y", "gradient for x", "contribution to the gradient for s"]):
    ax.axvspan(-4 * 0.5, 3 * 0.5, color="grey", alpha=0.12)
    ax.set(title=title, xlabel="x")
plt.show()

# %% [markdown]
# ### The step learns its size
#
# A linear model with 16 weights stored as 3-bit codes, $\hat y = X\, \operatorname{FakeQuantize}
# (w, s, -4, 3)$, trained twice from the same start: once with the step fixed at its first
# value $s = 0.05$, far too small for weights of size about 1, and once with $s$ learnt by your
# backward.

# %% tags=["skip-when-grading"]
def train_learned_step(learn_scale, steps=150, lr=0.02, seed=0):
    """Fit y = X w_true with 3-bit fake-quantised weights; return losses, the step's values
    and its gradients, how many weights get a non-zero gradient at each step, and how many
    never moved."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(256, 16, generator=generator)
    targets = inputs @ torch.randn(16, generator=generator)
    w = (0.5 * torch.randn(16, generator=generator)).requires_grad_()
    w_start = w.detach().clone()
    scale = torch.tensor(0.05, requires_grad=learn_scale)
    optimiser = torch.optim.Adam([w, scale] if learn_scale else [w], lr=lr)
    losses, scales, scale_grads, passing = [], [], [], []
    for _ in range(steps):
        loss = ((inputs @ FakeQuantize.apply(w, scale, -4, 3) - targets) ** 2).mean()
        optimiser.zero_grad()
        loss.backward()
        passing.append(int((w.grad != 0).sum()))  # weights your gradient for x reaches
        scale_grads.append(scale.grad.item() if learn_scale else 0.0)
        optimiser.step()
        losses.append(loss.item())
        scales.append(scale.item())
    return losses, scales, scale_grads, passing, int((w == w_start).sum())


fig, (ax_loss, ax_scale) = plt.subplots(1, 2, figsize=(11, 3.4))
for name, learn_scale in [("step fixed at 0.05", False), ("step learnt (LSQ)", True)]:
    losses, scales, scale_grads, passing, unmoved = train_learned_step(learn_scale)
    print(f"{name:19s} loss {losses[0]:.3f} -> {losses[-1]:.3f}   final step {scales[-1]:.3f}"
          f"   weights never moved: {unmoved} of 16")
    print("    weights with a non-zero gradient, steps 1-20:", *passing[:20])
    if learn_scale:
        print("    gradient for s at steps 1-5:", *(f"{value:.2f}" for value in scale_grads[:5]))
        print("    s after steps 1-5:", *(f"{value:.3f}" for value in scales[:5]))
    ax_loss.semilogy(losses, label=name)
    ax_scale.plot(scales, label=name)
ax_loss.set(xlabel="step", ylabel="mean squared error", title="3-bit weights")
ax_scale.set(xlabel="step", ylabel="s", title="The quantisation step")
ax_loss.legend()
plt.show()

# %% [markdown]
# With the step fixed, the grid reaches only from $-4 \times 0.05 = -0.2$ to
# $3 \times 0.05 = 0.15$: most weights start beyond it, where your gradient for $x$ is 0, and
# never move, and the few inside move out past the clip until none has a gradient and the loss
# stays where it is. With the step learnt, $s$ first shrinks (to 0.017 at step 2), then grows as
# the clipped weights pull it, widening the grid until weights come back inside, and settles
# near 0.5 (rerun with `steps=300` or `600`).
#
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Read the counts step by step. With the step fixed, the weights beyond the grid stay frozen
# like `SignClippedSTE`'s frozen readout weights, and the few inside move out past the clip one
# after another. (Judged on $\operatorname{round}(v)$, one more weight starts inside: it lies in
# the half-step band.)
#
# With the step learnt, $s$ dips for two steps, from 0.05 to 0.017. Its gradient is positive at
# step 1, where the clipped weights' share outweighs the rest, and already negative at step 2,
# where the rounding errors of the two weights still inside outweigh the clipped ones; but
# Adam's running average of the gradient is still positive and carries $s$ down once more. At
# steps 3 and 4 the gradient is about -15, nearly all of it from the clipped weights, and $s$
# grows again (0.021, then 0.031; 0.020 and 0.028 judged on $\operatorname{round}(v)$). Yet
# at step 4 no weight has a gradient for $x$ (one, judged
# on $\operatorname{round}(v)$): the last weight inside moved out past the top edge faster than
# the grid widened. The clipped weights alone then give $s$ its gradient and keep growing it:
# the grid widens, and weights come back inside it (3 at step 5). By step 150 one weight rides
# the top edge of the grid and pushes $s$ up, while the rounding errors of the others push it
# down; with `steps=300` or `600`, $s$ settles near 0.5.
# </details>

# %% [markdown]
# ### How close? Logits that a softmax or a division ties
#
# Exercise 4's contract takes the argmax of the logits themselves, not of the softmax nor of
# `logits / tau`, because rounding ties close logits in both. How close must they be?
#
# In float64, logits one ulp apart (1 and 1.0000000000000002) get equal probabilities at
# $\tau = 10$, though not at $\tau = 1$; 0 and $10^{-20}$ get equal probabilities at any
# $\tau$ above about $2 \times 10^{-4}$, since $e^{-10^{-20}/\tau}$ rounds to 1. Dividing
# alone rounds too: 0.704 and the next float up, 0.7040000000000001, are equal once divided
# by $\tau = 0.7$, as about one pair in six or seven one ulp apart is at $\tau = 0.7$ or 10
# (never at a power of two such as 0.5). The grader tries all three.

# %% [markdown]
# ### Your `StraightThroughSoftmax` as a Jacobian
#
# Your `StraightThroughSoftmax` as a Jacobian, for one row of six logits at $\tau = 0.5$: entry
# $(j, i)$ is the gradient for logit $i$ when `grad_output` is 1 at output $j$ (one backward per
# row), beside the softmax's own (autograd through `torch.softmax`) and the identity's, which a
# `grad_output`-returning backward uses.

# %%
logits6 = torch.tensor([1.2, -0.3, 0.4, 2.0, -1.1, 0.0], dtype=torch.float64)


def jacobian_by_rows(function):
    """Row j: the gradient for the logits when grad_output is the j-th unit vector."""
    leaf = logits6.clone().requires_grad_()
    output = function(leaf)
    return torch.stack([torch.autograd.grad(output, leaf, unit, retain_graph=True)[0]
                        for unit in torch.eye(6, dtype=torch.float64)])


panels = {"yours": jacobian_by_rows(lambda z: StraightThroughSoftmax.apply(z, 0.5)),
          "softmax(logits / τ)": jacobian_by_rows(lambda z: torch.softmax(z / 0.5, dim=-1)),
          "identity": torch.eye(6, dtype=torch.float64)}
limit = max(panel.abs().max().item() for panel in panels.values())
fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for ax, (name, panel) in zip(axes, panels.items()):
    image = ax.imshow(panel, cmap="coolwarm", vmin=-limit, vmax=limit)
    ax.set(title=name, xlabel="logit i", ylabel="output j")
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()
print("yours matches the softmax's:", torch.allclose(panels["yours"], panels["softmax(logits / τ)"]),
      "| its rows sum to", [round(v, 6) + 0.0 for v in panels["yours"].sum(dim=1).tolist()])

# %% [markdown]
# ### Your `StraightThroughSoftmax` at low temperature
#
# A backward that rebuilds $s$ from its definition,
# `z.exp() / z.exp().sum(...)`, meets quick question 2's overflow, and gives `nan` gradients at exactly the temperatures where annealing ends;
# the grader tries such logits, and its hint names the overflow. This cell runs your
# `StraightThroughSoftmax` at quick question 2's logits in float32, $\tau = 0.1$, and compares
# with autograd through `torch.softmax`.

# %%
leaf = near_tie.clone().requires_grad_()
StraightThroughSoftmax.apply(leaf, 0.1).backward(torch.tensor([1.0, 0.0, 0.0]))
truth = near_tie.clone().requires_grad_()
torch.softmax(truth / 0.1, dim=-1).backward(torch.tensor([1.0, 0.0, 0.0]))
print("yours             :", leaf.grad.tolist())
print("softmax(logits/τ) :", truth.grad.tolist())
print("finite and equal  :", bool(torch.isfinite(leaf.grad).all())
      and torch.allclose(leaf.grad, truth.grad, atol=1e-5))

# %% [markdown]
# ### In practice
#
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **Where the names come from.** The name and the plain estimator go back to Hinton's 2012
# lectures and Bengio, Léonard and Courville (2013); binarized neural networks (Hubara,
# Courbariaux et al., 2016) popularised the clipped one.
#
# **The detach trick, written other ways.** It is often written `x + (q(x) - x).detach()`
# (`F.gumbel_softmax(hard=True)` writes it `y_hard - y_soft.detach() + y_soft`). Its value is
# computed as $(q(x) - x) + x$, and that is $q(x)$ exactly for `round` at every finite $x$, and
# for `sign` whenever $|x| \le 2^{24}$ in float32 ($2^{53}$ in float64), as a sweep over every
# float32 in that range confirms; for `gumbel_softmax`, whose `y_soft` lies in $[0, 1]$, it is
# always exact. Beyond those magnitudes the spacing between floats exceeds 1 and $1 - x$
# rounds: in float64, $(\operatorname{sign}(x) - x) + x$ is $0$ at $x = 10^{17}$, and so is
# `sign(x).detach() + x - x.detach()`, which runs left to right as $(q(x) + x) - x$. The
# grader's form, with the bracket around `x - x.detach()`, is exact at every finite $x$, but
# for the sign of a zero ($-0 + 0$ is $+0$). (At
# $x = \pm\infty$ all three give NaN, because each adds $+\infty$ and $-\infty$; a
# Function's forward returns $\operatorname{sign}(\pm\infty) = \pm 1$ there.)
#
# Try it in float32, where the spacing between floats reaches 2 at
# $2^{24} \approx 1.7 \times 10^{7}$ and a result exactly halfway between two floats rounds to
# the one whose last significand bit is 0 (there, the one divisible by 4): predict
# `x + (torch.sign(x) - x)` for `x = torch.tensor(3e7)` and for `torch.tensor(30_000_002.0)`,
# then run one line each. Run on 2.13 they give 0 and 2. At $3 \times 10^7$,
# $1 - x = -29\,999\,999$ lies halfway between $-29\,999\,998$ and $-30\,000\,000$, and the
# tie goes to $-30\,000\,000$; at $30\,000\,002$, $1 - x = -30\,000\,001$ lies halfway between
# $-30\,000\,000$ and $-30\,000\,002$, and the tie goes to $-30\,000\,000$ again, now the one
# nearer zero. A latent weight or activation that large is rare, which is why the composed
# forms work in practice.
#
# **The trick or a Function?** The trick needs no backward at all, and much code uses it
# (`F.gumbel_softmax` does). A Function earns its place when the surrogate is not the
# derivative of a short expression, or for memory: for $2^{18}$ float32 elements (1 MiB), the
# clipped trick keeps all of `x` for clamp's backward, 1 MiB as counted with
# `torch.autograd.graph.saved_tensors_hooks`, while a Function can keep a boolean mask,
# 0.25 MiB. If `x` is a latent weight that lives anyway, keeping it costs nothing new.
#
# **PyTorch's own learnable fake quantiser**,
# `torch._fake_quantize_learnable_per_tensor_affine` (with a zero point and a gradient factor:
# 0 and 1 give Exercise 3's quantiser), judges "inside" on $\operatorname{round}(v)$, the other
# convention Exercise 3 accepts. At $s = 1$, $q_\text{min} = -4$, $q_\text{max} = 3$ and
# $x = (-4.4, -4.0, 0.3, 3.2, 3.6)$, run on 2.13, its gradient for $x$ is $(1, 1, 1, 1, 0)$
# where a backward that judges on $v$ gives $(0, 1, 1, 0, 0)$, and its gradient for $s$ is
# 2.9 against 1.7: $-4.4$ and $3.2$ round to the edge codes, so they contribute
# $\operatorname{round}(v) - v = 0.4$ and $-0.2$ instead of $q_\text{min}$ and $q_\text{max}$.
# The two differ only within half a step outside each edge.
#
# **LSQ's gradient scale.** LSQ also multiplies the gradient for $s$ by
# $1/\sqrt{N q_\text{max}}$ ($N$ the number of quantised values) to keep its updates in scale
# with the weights'; Adam's per-parameter normalisation does a similar job in the experiment
# above, and Exercise 3 leaves the factor out. PyTorch's own LSQ module,
# `torch.ao.quantization._learnable_fake_quantize._LearnableFakeQuantize`, applies it when
# built with `use_grad_scaling=True` (as `1 / sqrt(X.numel() * quant_max)`), and otherwise
# passes 1.
#
# **A step per channel.** LSQ learns one step per layer; weights are often quantised with one
# step per output channel instead, a `scale` of shape `(C, 1)` for a weight of shape `(C, K)`.
# The derivation holds element by element; only the sum for $s$ changes, running over every
# axis but the channel's. A backward that returns the products shaped like `x` gets that sum
# from the engine, as it gets the full sum for a 0-d `scale`; one that sums them all into a
# 0-d tensor fails, run on 2.13: *"returned an invalid gradient at index 1 - got [] but
# expected shape compatible with [3, 1]"* for three channels.
#
# **Loss against accuracy.** In the binarised network's experiment, the clipped estimator
# reaches the lower loss here (0.235 against 0.348), yet classifies three fewer of the 512
# points correctly (92.4% against 93.0%). The loss is the mean cross-entropy: it keeps rewarding
# a correct answer as it grows more confident and punishes a confident wrong one, while accuracy
# counts only the sign of each logit, so a few points near the boundaries can change side at
# little cost in loss.
#
# **Where the clip helps.** The binarised network's experiment printed a cost: `SignClippedSTE`
# never moved 18 of the 64 readout weights. They started beyond $|w| = 1$, where its backward
# returns 0: their gradient is 0 from the first step, Adam has nothing to average, and they keep
# their first value, and their first sign, for good. The hidden pre-activations are different:
# they are recomputed at every step from $W_1$ and $b_1$, which keep learning. **Predict, then
# run** (the cells after this block). Put the clipped estimator on one of the two alone, the
# plain one on the other: which reaches the lower loss, the clip on the hidden units or the clip
# on the readout weights?
# </details>

# %% [markdown]
# The cells below belong to **In practice** above (where the clip helps): open it first. They
# train the network twice more, so the second runs only once you have written a prediction
# in the first.

# %%
### BEGIN WORKED
predicted_clip_helps_at = "hidden units"
### LEARNER
predicted_clip_helps_at = None  # "hidden units" or "readout weights"
### END WORKED

# %% tags=["skip-when-grading"]
if predicted_clip_helps_at is None:  # Run All trains nothing here
    print("Optional: write your prediction in the cell above, then run this one.")
else:
    placements = {"hidden units": (SignClippedSTE.apply, SignSTE.apply),
                  "readout weights": (SignSTE.apply, SignClippedSTE.apply)}
    final_loss = {}
    for place, (hidden_q, readout_q) in placements.items():
        run = train_binarised(hidden_q, points, labels, quantise_readout=readout_q)
        final_loss[place] = run.losses[-1]
        print(f"clip on the {place:15s} loss {run.losses[-1]:.3f}   "
              f"readout weights never moved: {run.readout_never_moved} of 64")
    compare("the clip helps at", predicted_clip_helps_at, min(final_loss, key=final_loss.get),
            who="this run")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The clip on the hidden units alone gives 0.232 (0.235 with the clip on both); on the readout
# weights alone it gives 0.388, worse than the plain estimator's 0.348. So in this run the whole
# gain comes from the activations, and on latent weights the clip costs. That is the split binarized
# neural networks make: they cancel the gradient for activations, and keep their latent weights
# inside $[-1, 1]$ by clipping the weights themselves after every update (`w2.clamp_(-1, 1)` after
# `optimiser.step()` here), so that no weight leaves the window where its gradient passes. Run on
# 2.13 with that line, `SignClippedSTE` moves all 64 readout weights and ends at a loss of 0.232.
# Both are empirical choices, observed on this run, not theorems.
# </details>

# %% [markdown]
# ---
# ## Appendix: notes to the main line
#
# <details><summary><b>Notes to the main line</b> (<code>gradcheck</code> on a step; the sign
# of a zero)</summary>
#
# - **What `gradcheck` measures on a step.** Across a jump the central difference is (height
#   of the jump)$/2\varepsilon$: $1/\varepsilon$ for sign, which jumps by 2 at 0, and
#   $1/(2\varepsilon)$ for round, which jumps by 1 at every half. It disagrees with an STE at
#   every $x$ for `SignSTE`, but for `SignClippedSTE` only inside the window: beyond it both
#   say 0, and `gradcheck` passes `SignClippedSTE` on inputs that all lie there.
# - **The sign of a zero.** `torch.equal` counts `-0` and `0` as equal, so the grader also
#   compares `torch.signbit`: `torch.round(-0.4)` is `-0` and `torch.sign(-0.0)` is `0`. The
#   detach trick is exact at every finite $x$ but for that sign: `x - x.detach()` is exactly
#   $+0$, and $-0 + 0 = +0$, so where `torch.round` gives $-0$ the trick gives $0$.
# </details>
