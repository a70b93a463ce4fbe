# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 04 · Double backward: gradients of gradients
#
# **About 90 minutes** to the Summary, the three exercises included; the optional sections
# after it take about 40 more.
#
# Newton-type optimisers need Hessian-vector products; WGAN-GP penalises the norm of a
# critic's gradient; MAML differentiates through an SGD step. Each runs backward **through a
# backward**, so every custom Function on the path needs a backward autograd can
# differentiate, or must say loudly that it cannot.
#
# By the end of this lesson you can:
# 1. compute second derivatives and Hessian-vector products with `create_graph=True`;
# 2. write a backward that supports double backward, and test it with `gradgradcheck`;
# 3. recognise what in a backward breaks second order, and why;
# 4. make a backward that cannot be differentiated refuse a second differentiation, and know
#    what that guard does not catch;
# 5. give second derivatives, all the same, to a backward that autograd cannot record.
#
# Three exercises are graded (**✎ Exercise**): `SwishFunction`, `CubeOnce`, and the transfer
# exercise `NumpyTanh`. Every Function you write obeys the course's
# [Function contract](function_contract.md); each exercise states only what it decides. Each
# self-check runs every check the hidden tests run. Each answer cell has a spare spot under its
# class for anything more you define: use it, or delete its `raise`. Run All goes on past an
# exercise not yet written, and the last cell lists where you stand.

# %% nbgrader={"locked": true}
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch.autograd.gradcheck import GradcheckError

from autograder import self_check
from autograder.predictions import compare, compare_all, written
from widgets import inspect_saved

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it


# %% [markdown]
# ## The maths: backward is a function too
#
# Your backward computes a vector-Jacobian product, $v \mapsto v^\top J(x)$, from the saved
# tensors and `grad_output` $= v$. With `torch.autograd.grad(..., create_graph=True)` autograd
# **records the ops your backward runs**, so the gradient it returns is a function of $x$ (and
# of $v$) with a graph, and can be differentiated again.
#
# For a scalar $f$, differentiating $\nabla f(x) \cdot v$ once more gives a Hessian-vector
# product without ever forming the Hessian:
#
# $$H v = \nabla_x \big(\nabla_x f(x) \cdot v\big).$$
#
# Under `create_graph=True`, autograd records every op your backward runs on a tensor that
# requires grad, unless the backward switches recording off itself. Forward is another matter:
# `apply` runs it with grad mode off (lesson 00), so none of the ops forward runs is recorded.
# Which of the tensors your backward uses carry a history back to the inputs, and which are
# constants to autograd, is what this lesson is about.

# %% [markdown]
# ## Worked example: `Exp`, twice
#
# $e^x$ is its own derivative, so `Exp` saves its output $y$ and computes `grad_output * y`
# with tensor ops; the cell differentiates it twice.

# %%
class Exp(torch.autograd.Function):
    """y = exp(x)."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y  # d/dx e^x = e^x = y


x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
first, = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
second, = torch.autograd.grad(first.sum(), x)
print("first  derivative:", first.detach(), " (e^x =", torch.exp(x.detach()), ")")
print("second derivative:", second, " (e^x again)")
print("first.grad_fn is a", type(first.grad_fn).__name__, "(recorded from Exp's backward)")

# %% [markdown]
# `torch.autograd.gradgradcheck` is `gradcheck` one level up: it checks the derivatives of your
# backward, with respect to the inputs **and** `grad_output`, against finite differences, in
# float64.

# %%
print("gradcheck:    ", torch.autograd.gradcheck(Exp.apply, (x,)))
print("gradgradcheck:", torch.autograd.gradgradcheck(Exp.apply, (x,)))

# %% [markdown]
# ## Hessian-vector products
#
# Take $f(x) = \sum_i \exp\big((A x)_i\big)$ with `Exp` doing the exponentials. Its Hessian
# is $A^\top \operatorname{diag}(e^{A x})\, A$: not diagonal, so the product $Hv$ mixes
# coordinates. Two calls to `torch.autograd.grad` give $Hv$ without forming $H$: the first,
# with `create_graph=True`, returns $\nabla f$ with a graph; the second differentiates
# $\nabla f \cdot v$. (Strictly that is $v^\top H$, equal to $Hv$ because a Hessian is
# symmetric.) The cell compares it with the full Hessian, which costs $n$ backward passes and
# $n^2$ memory: fine for $n = 5$, hopeless for a network.

# %%
generator = torch.Generator().manual_seed(0)
A = torch.randn(7, 5, generator=generator, dtype=torch.float64)
x0 = torch.randn(5, generator=generator, dtype=torch.float64)
v = torch.randn(5, generator=generator, dtype=torch.float64)


def f(x):
    return Exp.apply(A @ x).sum()


x = x0.clone().requires_grad_()
grad_f, = torch.autograd.grad(f(x), x, create_graph=True)
hvp, = torch.autograd.grad(grad_f @ v, x)
hessian = torch.autograd.functional.hessian(f, x0)
print("Hv, two grads:", hvp)
print("H @ v:        ", hessian @ v)
print("H equals A^T diag(exp Ax) A:",
      torch.allclose(hessian, A.T @ torch.diag(torch.exp(A @ x0)) @ A, rtol=1e-12, atol=0))

fig, ax = plt.subplots(figsize=(4.5, 3.4))
fig.colorbar(ax.imshow(hessian, cmap="RdBu_r", vmin=-hessian.abs().max(),
                       vmax=hessian.abs().max()), ax=ax)
ax.set_title("Hessian of f (through Exp's backward)")
plt.show()

# %% [markdown]
# ## ✎ Exercise 1 · `SwishFunction`
#
# Swish (SiLU when $\beta = 1$) is $y_i = x_i\,\sigma(\beta x_i)$ with a learnable $\beta$.
# `SwishFunction.apply(x, beta)` takes a tensor `x` and a 0-dim tensor `beta`, either or both
# requiring grad.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `beta` is any real number, 0 and negative included, `x` any value a model meets ($|x|$ up
#   to $10^{15}$), and $|\beta x|$ goes up to 800: the value and both gradients stay finite;
#   where $\beta x$ is far below 0 they stay accurate relative to their size for as long as
#   $\sigma(\beta x)$ is a normal float;
# - backward is differentiable: its derivatives with respect to `x`, `beta` and `grad_output`
#   are those of the composed ops, so `gradgradcheck` passes;
# - `beta` may be a wider float than `x` (a float64 `beta` with a float32 `x`), and forward
#   saves no copy of an input: a `beta` it saves is the caller's own.
#
# Derive its backward first; write $s_i = \sigma(\beta x_i)$ and $g_i$ for `grad_output[i]`.
#
# 1. What is $\sigma'(z)$ in terms of $\sigma(z)$? (Lesson 01.)
# 2. Find $\partial y_i/\partial x_i$, in terms of $s_i$, $\beta$ and $x_i$.
# 3. Every $y_i$ depends on the one $\beta$. Find $\partial L/\partial \beta$ from the $g_i$.
#    What shape is it?
# 4. Backward needs $s$. What will forward save so that backward has it? Decide, and write
#    down why, before you code.
#
# On question 3: a gradient of `x`'s shape for `beta` is accepted too (the engine sums it, and
# records the sum: [rule 2](function_contract.md)).
#
# Write step 2's first half, $\partial s_i/\partial x_i$, as `my_ds_dx` below the hints; the
# cell after it checks it.
#
# <details><summary><b>Hint 1</b>: a question</summary>
#
# Which factors of $y_i = x_i\,s_i$ change when $x_i$ moves, and which when $\beta$ moves? How
# many $y_i$ does $\beta$ reach?
# </details>
#
# <details><summary><b>Hint 2</b>: the key step</summary>
#
# Go through $z_i = \beta x_i$: what are $\partial z_i/\partial x_i$ and
# $\partial z_i/\partial \beta$? The chain rule multiplies each by $\sigma'(z_i)$. Where does
# the product rule add a second term, and where not?
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# With $\beta = 2$, $x = (1, -0.5)$ and every $g_i = 1$: $\partial L/\partial x = (1.0908,
# 0.0723)$ and $\partial L/\partial \beta = 0.1541$.
# </details>

# %%
### BEGIN WORKED
my_ds_dx = lambda x, beta: beta * torch.sigmoid(beta * x) * (1 - torch.sigmoid(beta * x))
### LEARNER
my_ds_dx = None  # step 2's first half: lambda x, beta: ..., the tensor of all ds_i/dx_i
### END WORKED

# %% tags=["skip-when-grading"]
SWISH_POINTS = [("Hint 3, beta = 2.0", 2.0, torch.tensor([1.0, -0.5], dtype=torch.float64))]
SWISH_POINTS += [(f"beta = {beta:4}", beta, torch.linspace(-3, 3, 7, dtype=torch.float64))
                 for beta in (2.0, 0.5, -1.5, 0.0)]


def compared(name, yours, want, x0, per_element=True):
    """'name ✓', or '✗' with what is off: an exception, a shape, or the point furthest off."""
    try:
        got = torch.as_tensor(yours(), dtype=torch.float64)
    except Exception as error:  # shown, not raised: Run All goes on
        return f"{name} ✗ raises {type(error).__name__}: " + (str(error).splitlines() or [""])[0]
    if got.shape != want.shape:
        return (f"{name} ✗ shape {tuple(got.shape)}, not {tuple(want.shape)}"
                + (": one derivative per element" if per_element else ""))
    if torch.allclose(got, want):
        return f"{name} ✓"
    if got.dim() == 0:
        return f"{name} ✗ yours {got.item():.4f}, autograd {want.item():.4f}"
    worst = int((got - want).abs().nan_to_num(float("inf")).argmax())
    return (f"{name} ✗ at x = {x0[worst].item():g}: yours {got[worst].item():.4f}, "
            f"autograd {want[worst].item():.4f}")


def check_swish_derivation():
    """Your my_ds_dx against autograd on the composed ops: at Hint 3's point, then at four beta
    on seven x. A ✗ shows the point where yours is furthest off."""
    if my_ds_dx is None:
        print("my_ds_dx: not written yet")
        return
    for label, beta_value, x0 in SWISH_POINTS:
        x = x0.clone().requires_grad_()
        s = torch.sigmoid(beta_value * x)  # composed: autograd knows its derivatives
        want, = torch.autograd.grad(s.sum(), x)  # s_i depends on x_i only
        beta = torch.tensor(beta_value, dtype=torch.float64)
        print(f"{label}: " + compared("ds/dx", lambda: my_ds_dx(x0, beta), want, x0))


check_swish_derivation()

# %% nbgrader={"grade_id": "answer_SwishFunction", "solution": true}
class SwishFunction(torch.autograd.Function):
    """y = x * sigmoid(beta * x), with beta a 0-dim tensor; differentiable twice."""

    @staticmethod
    def forward(ctx, x, beta):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x, beta)  # inputs only: they come back linked to the graph
        return x * torch.sigmoid(beta * x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)  # recomputed here, where autograd can record it
        ds = s * (1 - s)  # d sigmoid(z)/dz
        grad_x = grad_output * (s + beta * x * ds) if ctx.needs_input_grad[0] else None
        grad_beta = ((grad_output * x * ds) * x).sum() if ctx.needs_input_grad[1] else None
        return grad_x, grad_beta
        ### END SOLUTION


### BEGIN SOLUTION
# nothing more: the class is the whole answer
### END SOLUTION


# %% nbgrader={"grade_id": "SwishFunction", "grade": true, "points": 2}
self_check("SwishFunction", SwishFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SwishFunction", SwishFunction)
### END HIDDEN TESTS

# %% [markdown]
# For when something is off: your Function's gradients (every $g_i = 1$) against autograd's
# on the composed ops, at the points of the check above.


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def compare_swish_gradients():
    """Your SwishFunction's dL/dx and dL/dbeta (L the sum of y), against autograd's gradients
    on the composed ops, at each point."""
    for label, beta_value, x0 in SWISH_POINTS:
        x, beta = x0.clone().requires_grad_(), torch.tensor(beta_value, dtype=torch.float64,
                                                            requires_grad=True)
        want = torch.autograd.grad((x * torch.sigmoid(beta * x)).sum(), (x, beta))

        def yours(i):
            return lambda: torch.autograd.grad(SwishFunction.apply(x, beta).sum(), (x, beta))[i]

        print(f"{label}: " + ", ".join(compared(name, yours(i), want[i], x0, per_element=False)
                                        for i, name in enumerate(("dL/dx", "dL/dbeta"))))


compare_swish_gradients()

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# With $\sigma'(z) = \sigma(z)(1 - \sigma(z))$:
# $\partial y_i/\partial x_i = s_i + \beta x_i\, s_i(1 - s_i)$, and
# $\partial L/\partial \beta = \sum_i g_i\, x_i^2\, s_i(1 - s_i)$. Backward recomputes $s$
# from the saved inputs $x$ and $\beta$, so autograd can record every op that builds the
# gradient.
# </details>
#
# Your Swish and its first two derivatives in $x$, then what your forward saved, each tensor
# with its role: inputs and outputs come back from `ctx.saved_tensors` linked to the graph.

# %%
xs = torch.linspace(-5, 5, 201, dtype=torch.float64, requires_grad=True)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.2))
for beta_value in (0.5, 1.0, 3.0):
    beta = torch.tensor(beta_value, dtype=torch.float64)
    ys = SwishFunction.apply(xs, beta)
    dy, = torch.autograd.grad(ys.sum(), xs, create_graph=True)
    d2y, = torch.autograd.grad(dy.sum(), xs)
    for ax, values in zip(axes, (ys, dy, d2y)):
        ax.plot(xs.detach(), values.detach(), label=f"β = {beta_value}")
for ax, title in zip(axes, ("swish", "first derivative", "second derivative")):
    ax.set_title(title)
    ax.set_xlabel("x")
axes[0].legend()
plt.show()
inspect_saved(SwishFunction, torch.linspace(-3, 3, 8, dtype=torch.float64),
              torch.tensor(1.5, dtype=torch.float64))

# %% [markdown]
# ## The trap: saving an intermediate
#
# Softplus, $y = \log(1 + e^{x})$, has derivative $\sigma(x)$: it is tempting to compute
# $s = \sigma(x)$ in forward and save it. First derivatives are fine. What happens to the
# second: an error, or a wrong number? Run it.

# %%
class SoftplusSavesSigmoid(torch.autograd.Function):
    """Saves the intermediate sigmoid(x): right once, wrong twice."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)  # s is neither an input nor an output
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad_output):
        s, = ctx.saved_tensors
        return grad_output * s  # d/dx softplus(x) = sigmoid(x)


x = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("gradcheck:    ", torch.autograd.gradcheck(SoftplusSavesSigmoid.apply, (x,)))
try:
    torch.autograd.gradgradcheck(SoftplusSavesSigmoid.apply, (x,))
except GradcheckError as error:
    print("gradgradcheck:", str(error).splitlines()[0])

# %% [markdown]
# The inspector spots it before any check runs: the saved tensor is an **intermediate**, and
# it says so.

# %%
inspect_saved(SoftplusSavesSigmoid, torch.linspace(-3, 3, 8, dtype=torch.float64))

# %% [markdown]
# Why: forward runs with autograd off, so `s` has no history, and an intermediate comes back
# from `ctx.saved_tensors` as it was: a constant. Differentiating `grad_output * s` misses
# $\partial s/\partial x = s(1-s)$. Here `grad_output` is a constant too (the 1s of a
# `.sum()`), so the first derivative has no graph at all and a second `torch.autograd.grad`
# raises; when `grad_output` has a graph of its own, the same trap gives a wrong number and no
# error. The plotting helper below plots the zero the error stands for.

# %%
xs = torch.linspace(-5, 5, 201, dtype=torch.float64, requires_grad=True)
dy, = torch.autograd.grad(SoftplusSavesSigmoid.apply(xs).sum(), xs, create_graph=True)
print("first derivative requires grad:", dy.requires_grad)
try:
    torch.autograd.grad(dy.sum(), xs)
except RuntimeError as error:
    print("a second torch.autograd.grad raises:", error)


def second_derivative(f):
    dy, = torch.autograd.grad(f(xs).sum(), xs, create_graph=True)
    if not dy.requires_grad:  # backward's result is a constant: its derivative is 0
        return torch.zeros_like(xs)
    d2y, = torch.autograd.grad(dy.sum(), xs)
    return d2y


true_d2y = second_derivative(torch.nn.functional.softplus)  # composed ops
trap_d2y = second_derivative(SoftplusSavesSigmoid.apply)

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(xs.detach(), true_d2y, lw=3, alpha=0.6, label="true second derivative")
ax.plot(xs.detach(), trap_d2y, "--", label="through a saved sigmoid(x)")
ax.set_xlabel("x")
ax.set_title("softplus''")
ax.legend()
plt.show()

# %% [markdown]
# Two fixes:
#
# 1. **Save inputs (or outputs) and recompute** the intermediate in backward, as your
#    `SwishFunction` does, for one extra sigmoid.
# 2. **Return the intermediate as an extra output**, which comes back linked to the graph; in
#    exchange backward receives a gradient for `s` too and must add its contribution.

# %%
class SoftplusWithSigmoid(torch.autograd.Function):
    """Returns (y, s) with s = sigmoid(x), so that saving s saves an output."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return torch.nn.functional.softplus(x), s

    @staticmethod
    def backward(ctx, grad_y, grad_s):
        s, = ctx.saved_tensors
        return grad_y * s + grad_s * s * (1 - s)  # ds/dx = s (1 - s)


def softplus_via_output(x):
    return SoftplusWithSigmoid.apply(x)[0]


x = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("gradgradcheck:", torch.autograd.gradgradcheck(softplus_via_output, (x,)))

# %% [markdown]
# ## ✎ Exercise 2 · `CubeOnce`: a backward that refuses a second differentiation
#
# Some backwards cannot be recorded: they call NumPy or a hand-written kernel, and double
# backward runs through them anyway. PyTorch has a guard for such a backward, armed during the
# **first** backward, before anyone knows whether a second pass will come.
#
# `CubeOnce.apply(x)` computes $x^3$, and its backward stands in for a kernel autograd cannot
# trace: it computes the local derivative $3x^2$ in NumPy. What forward saves, where the trip
# into NumPy and back happens, and how the refusal is arranged are yours; the self-check names
# each miss.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - backward returns the first derivative at every `x`;
# - the local derivative $3x^2$ is computed in NumPy, as the kernel it stands in for would, with
#   no torch arithmetic in backward beyond at most one multiplication by `grad_output`, and the
#   gradient is on `x`'s device, whichever that is;
# - when the gradient backward received requires grad, a second `.backward()` through it raises
#   PyTorch's own error for a backward that cannot be differentiated twice;
# - forward saves no copy of `x` or of its output.
#
# **Decide before you write, and say why in a comment:** what forward saves, so that backward
# gets the derivative right at every `x` the dtype holds.
#
# **Predict before you write: why refuse at all?** Take $L = \sum_i \sin(x_i^3)$, whose true
# second derivative is $6x\cos(x^3) - 9x^4\sin(x^3)$, and your backward as you plan to write
# it, *without* any guard. What does a second `torch.autograd.grad` through it return? Write it
# as a function of `x` (a `lambda` on a tensor), or `"raises"`; a cell after your self-check
# runs your own backward with the guard taken off.

# %%
### BEGIN WORKED
predicted_unguarded = lambda x: -9 * x ** 4 * torch.sin(x ** 3)
### LEARNER
predicted_unguarded = None  # e.g. lambda x: ..., or "raises"
### END WORKED

# %% [markdown]
# <details><summary><b>Hint 1</b>: what to save</summary>
#
# List what forward could save for $3x^2$, and what each costs in memory (does something else
# hold it anyway?). Is what each leaves backward to compute defined, and exact, at every `x`
# the dtype holds?
# </details>
#
# <details><summary><b>Hint 2</b>: the refusal</summary>
#
# Look where `torch.autograd.Function` itself is defined (its module, or PyTorch's notes on
# extending autograd) for something meant for a backward that cannot be differentiated: what
# does it take, what does it return, and what in your class is the thing it takes?
# </details>

# %% nbgrader={"grade_id": "answer_CubeOnce", "solution": true}
class CubeOnce(torch.autograd.Function):
    """y = x ** 3, with a NumPy local derivative; a second differentiation refuses."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        return x ** 3
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        local = torch.as_tensor(3 * x.detach().cpu().numpy() ** 2).to(x.device)  # 3x², in NumPy
        return grad_output * local
        ### END SOLUTION


### BEGIN SOLUTION
from torch.autograd.function import once_differentiable

# What `@once_differentiable` written under `@staticmethod` does: wrap the plain function first.
CubeOnce.backward = staticmethod(once_differentiable(CubeOnce.backward))
### END SOLUTION

# %% nbgrader={"grade_id": "CubeOnce", "grade": true, "points": 1}
self_check("CubeOnce", CubeOnce)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("CubeOnce", CubeOnce)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# - **What forward saves.** `x`, which the caller holds anyway. Saving `local` is correct too,
#   at the cost of a new tensor: an intermediate, but the trap costs only second derivatives,
#   which CubeOnce does not give. **Saving the output** fails: `3 * y / x` is 0 / 0 at `x = 0`,
#   and a cube root recovers `x` only where `x ** 3` is a normal number (the optional "What to
#   save, at float32's ends" tries it).
# - **The border.** Out with `.detach().cpu().numpy()`, back with
#   `torch.as_tensor(...).to(x.device)`.
# - **The mark.** `@once_differentiable` under `@staticmethod`, nearest the `def` (PyTorch's
#   documented order).
# </details>

# %% [markdown]
# ### Your `CubeOnce`, unguarded, then guarded
#
# Your prediction, checked on your backward with the guard taken off (`once_differentiable`
# keeps the function it wrapped as `__wrapped__`).

# %%
unmarked = getattr(CubeOnce.backward, "__wrapped__", CubeOnce.backward)


class CubeUnmarked(CubeOnce):
    """Your CubeOnce with the mark taken off its backward."""

    backward = staticmethod(unmarked)


x = torch.tensor([0.5, 1.0, 1.5], dtype=torch.float64, requires_grad=True)
try:
    first, = torch.autograd.grad(torch.sin(CubeUnmarked.apply(x)).sum(), x, create_graph=True)
    unmarked_second, = torch.autograd.grad(first.sum(), x)
    if written(predicted_unguarded):  # the numbers, once your prediction is written
        print("unguarded, second derivative: ", unmarked_second)
except NotImplementedError:
    unmarked_second = None
    print("CubeOnce is not written yet")
except RuntimeError as error:
    if written(predicted_unguarded):
        print("unguarded, second backward:", str(error).splitlines()[0])
    unmarked_second = "raises"
x = x.detach()
print("true 6x cos(x³) - 9x⁴ sin(x³):", 6 * x * torch.cos(x ** 3) - 9 * x ** 4 * torch.sin(x ** 3))
if callable(predicted_unguarded) and isinstance(unmarked_second, torch.Tensor):
    yours = torch.as_tensor(predicted_unguarded(x), dtype=torch.float64)
    print("your prediction:              ", yours,
          "✓" if torch.allclose(yours, unmarked_second) else "✗")
elif unmarked_second is not None:
    compare("second backward, unguarded", predicted_unguarded,
            unmarked_second if isinstance(unmarked_second, str) else "a tensor, printed above")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Backward returns `grad_output` times $3x^2$, and the $3x^2$ made in NumPy is a constant to
# autograd. `grad_output` is $\cos(x^3)$ from `sin`'s backward, which autograd did record, so
# the second pass gives $-\sin(x^3)\cdot 3x^2 \cdot 3x^2 = -9x^4\sin(x^3)$ and drops
# $6x\cos(x^3)$, the term through $3x^2$: a plausible number and no error. That is what the
# guard is for.
#
# If yours raised *"does not require grad"*, your backward took `grad_output` through NumPy as
# well: the whole second derivative is gone, loudly here, silently inside a sum with other
# terms. *"Can't call numpy() on Tensor that requires grad"* means `.numpy()` without
# `.detach()`, which works only with grad mode off, as under the guard.
# </details>
#
# Guarded, the same pass raises, but the guard judges only by what the first backward
# receives: it attaches an error node to your backward's result **only when the incoming
# gradient requires grad** (here $\cos(x^3)$ does). Through your guarded `CubeOnce`,
# differentiate $x^3 + x^3$ twice at $x = 1$ (true: 12), where the incoming gradient is the
# constant 1 that `torch.autograd.grad` starts from. **Predict**: `"an error"`, or the number.

# %%
### BEGIN WORKED
predicted_cube_second = 6.0
### LEARNER
predicted_cube_second = None  # through your marked CubeOnce: "an error", or the number
### END WORKED


# %%
def second_through(function):
    """d²/dx² of function(x) + x³ at x = 1, or "an error"."""
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    first, = torch.autograd.grad(function(x) + x ** 3, x, create_graph=True)
    try:
        return round(torch.autograd.grad(first, x)[0].item(), 3)
    except RuntimeError:
        return "an error"


try:
    compare("second derivative through your marked CubeOnce", predicted_cube_second,
            second_through(CubeOnce.apply), abs_tol=1e-3)
except NotImplementedError:  # shown, not raised: Run All goes on
    print("CubeOnce is not written yet")

# %% [markdown]
# The cube's share, 6, was dropped in silence: no error node was attached (the optional "What
# the mark guards" has the other cases). The test to trust, guarded or not, is
# `gradgradcheck`, at points that include `x = 0`, saturating values and any threshold.

# %% [markdown]
# ## The third way: derivatives of a backward
#
# A backward can be built from differentiable ops (`SwishFunction`), or refuse a second pass
# (`CubeOnce`); when it cannot be recorded but second derivatives are still needed, a third
# way **supplies the backward's own derivatives by hand**. How to hand them to autograd is
# Exercise 3's to work out; first, the maths.
#
# Here the op is $Y = AC$, $A$ of shape $(m, k)$ and $C$ of shape $(k, n)$. Its first backward
# is lesson 02's rule, $b(G, A, C) = (G C^\top,\; A^\top G)$: two results from three
# matrices. Take $\bar B_A$ and $\bar B_C$ (`gbar_a`, `gbar_c`), gradients of a loss with
# respect to the two results: what gradient does each of $G$, $A$ and $C$ get (which input
# feeds both results?)? Write the three as functions of `(gbar_a, gbar_c, g, a, c)`; the cell
# after checks them against autograd.
#
# <details><summary><b>Hint</b> (open if you are stuck)</summary>
#
# The three gradients are those of the number
# $\langle \bar B_A, G C^\top\rangle + \langle \bar B_C, A^\top G\rangle$, where
# $\langle P, Q\rangle = \sum_{ij} P_{ij} Q_{ij}$. Each term is linear in each matrix: write it
# with indices, $\sum_{i,j,l} (\bar B_A)_{ij}\, G_{il}\, C_{jl}$, and read off the coefficient
# of one entry of $G$, of $C$, then do the same for the second term.
# </details>

# %%
### BEGIN WORKED
grad_g = lambda gbar_a, gbar_c, g, a, c: gbar_a @ c + a @ gbar_c  # G feeds both results
grad_a = lambda gbar_a, gbar_c, g, a, c: g @ gbar_c.T
grad_c = lambda gbar_a, gbar_c, g, a, c: gbar_a.T @ g
### LEARNER
grad_g = None  # e.g. lambda gbar_a, gbar_c, g, a, c: ...
grad_a = None
grad_c = None
### END WORKED

# %%
def b(g, a, c):
    return g @ c.T, a.T @ g


generator = torch.Generator().manual_seed(3)
g0, a0, c0, gbar_a0, gbar_c0 = (torch.randn(shape, generator=generator, dtype=torch.float64)
                                for shape in [(3, 4), (3, 2), (2, 4), (3, 2), (2, 4)])
leaves = [t.clone().requires_grad_() for t in (g0, a0, c0)]
truth = torch.autograd.grad(b(*leaves), leaves, (gbar_a0, gbar_c0))
for name, yours, true in zip(("grad_g", "grad_a", "grad_c"), (grad_g, grad_a, grad_c), truth):
    if yours is None:
        print(f"{name}: not written yet")
        continue
    try:
        got = yours(gbar_a0, gbar_c0, g0, a0, c0)
    except Exception as error:  # shown, not raised: Run All goes on
        print(f"{name} ✗ raises {type(error).__name__}: {(str(error).splitlines() or [''])[0]}")
        continue
    if got.shape != true.shape:
        print(f"{name} ✗ shape {tuple(got.shape)}, not {tuple(true.shape)}"
              + (": the transpose's shape" if got.shape == true.shape[::-1] else ""))
    elif torch.allclose(got, true):
        print(f"{name} ✓ shape {tuple(true.shape)}, every entry agrees with autograd")
    else:
        off = (got - true).abs()
        i, j = divmod(int(off.nan_to_num(float("inf")).argmax()), true.shape[1])
        print(f"{name} ✗ {int((off > 1e-8).sum())} of {true.numel()} entries differ; furthest "
              f"off at [{i}, {j}]: yours {got[i, j].item():.4f}, autograd {true[i, j].item():.4f}")

# %% [markdown]
# ## ✎ Exercise 3 (transfer) · `NumpyTanh`
#
# The third way, on an op the lesson has not worked through, with NumPy as the kernel you
# cannot trace: `NumpyTanh.apply(x)` computes $\tanh(x)$ in NumPy, for a CPU tensor `x` of any
# shape, 0-d included.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - all its arithmetic, in forward and in whatever computes its derivatives, is NumPy's: torch
#   only converts (`.numpy()`, `torch.from_numpy`, `.to`), with no torch arithmetic;
# - yet `NumpyTanh` is **twice differentiable**: its second derivatives are right, and its
#   backward is not marked `once_differentiable`;
# - values and both derivatives are right and finite where $\tanh$ rounds to $\pm 1$;
# - nothing it saves is a copy of a tensor the graph already keeps.
#
# How it is built is yours to decide; the self-check names each miss.
#
# <details><summary><b>Hint 1</b>: what to save</summary>
#
# Can $\tanh'(x)$ be written without $x$? Which tensors could forward save, and what would each
# choice cost your backward?
# </details>
#
# <details><summary><b>Hint 2</b>: a question</summary>
#
# Under `create_graph=True` autograd records the torch ops your backward runs, and NumPy's are
# invisible to it. Where, in the code you have written in this course, does computation that
# autograd cannot see still come with derivatives that autograd uses?
# </details>
#
# <details><summary><b>Hint 3</b>: a nudge</summary>
#
# Write what your backward computes as a formula $b$ of the tensors it uses. A second
# derivative needs $b$'s derivatives, as the section before derived for a matrix product.
# </details>
#
# <details><summary><b>Hint 4</b>: the idea</summary>
#
# The third way makes the backward's computation an op of its own: a Function, whose backward
# supplies $b$'s derivatives, in NumPy as well.
# </details>
#
# <details><summary><b>Hint 5</b>: numbers to hit</summary>
#
# At $x = 0.5$, with `grad_output` $= 1$: the first derivative is $0.7864$, and the second
# derivative is $-0.7269$.
# </details>

# %% nbgrader={"grade_id": "answer_NumpyTanh", "solution": true}
class NumpyTanh(torch.autograd.Function):
    """y = tanh(x) in NumPy; backward in NumPy too, and differentiable again."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        # np.asarray: on a 0-d array NumPy returns a scalar, which torch.from_numpy refuses
        y = torch.from_numpy(np.asarray(np.tanh(x.detach().numpy())))
        ctx.save_for_backward(y)  # an output: comes back linked to the graph
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, = ctx.saved_tensors
        return NumpyTanhBackward.apply(grad_output, y)
        ### END SOLUTION


### BEGIN SOLUTION
class NumpyTanhBackward(torch.autograd.Function):
    """b(g, y) = g * (1 - y**2) in NumPy, with a NumPy backward of its own."""

    @staticmethod
    def forward(ctx, grad_output, y):
        ctx.save_for_backward(grad_output, y)
        g, y = grad_output.detach().numpy(), y.detach().numpy()
        return torch.from_numpy(np.asarray(g * (1 - y * y)))

    @staticmethod
    def backward(ctx, grad_b):
        grad_output, y = ctx.saved_tensors
        gb, g, y = grad_b.detach().numpy(), grad_output.detach().numpy(), y.detach().numpy()
        grad_g = grad_y = None
        if ctx.needs_input_grad[0]:
            grad_g = torch.from_numpy(np.asarray(gb * (1 - y * y)))  # db/dg
        if ctx.needs_input_grad[1]:
            grad_y = torch.from_numpy(np.asarray(-2 * gb * g * y))  # db/dy
        return grad_g, grad_y
### END SOLUTION

# %% nbgrader={"grade_id": "NumpyTanh", "grade": true, "points": 2}
self_check("NumpyTanh", NumpyTanh)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("NumpyTanh", NumpyTanh)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# With $\tanh'(x) = 1 - y^2$, forward saves its output $y$, and the first backward is the
# function $b(g, y) = g\,(1 - y^2)$ of `grad_output` $g$ and $y$, computed in NumPy by an inner
# Function that `NumpyTanh.backward` calls. Its backward, handed $\bar b$, returns
# $\bar b\,(1 - y^2)$ for $g$ and $-2\bar b\, g y$ for $y$, in NumPy, each only where
# `ctx.needs_input_grad` asks. Autograd chains the gradient for $y$ on to $x$ through
# `NumpyTanh`'s own backward. Saving $x$ instead works too, with the extra factor $1 - y^2$ in
# $\partial b/\partial x$. The inner Function saves $g$ itself: recovering it as
# $b / (1 - y^2)$ divides 0 by 0 wherever $\tanh$ rounds to $\pm 1$ (past $|x| \approx 19$ in
# float64, $10$ in float32). On a 0-d array NumPy returns a scalar: `np.asarray` (or
# `torch.as_tensor`) turns it back into an array.
# </details>

# %% [markdown]
# ## Summary
#
# With `create_graph=True` autograd records your backward, so your backward must be built
# from differentiable ops on saved inputs, saved outputs and `grad_output`; recompute
# intermediates instead of saving them. `gradgradcheck` tests it. A backward that cannot be
# differentiated gets `@once_differentiable`, a guard rather than a guarantee; one that must be
# differentiated but cannot be recorded becomes a Function with a hand-written backward of its
# own. `torch.compile` and some fused kernels, such as CPU attention's, refuse a second
# differentiation: keep the path a penalty differentiates twice eager. Next lesson:
# recomputation on purpose, to save memory.

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above. The sections below put your Functions to work
# and look further at the traps of the main line; none is needed for an exercise, and you can
# skip any of them. They run after the main line: they use your `SwishFunction` and
# `NumpyTanh`.

# %% [markdown]
# ### Common mistakes (the ones this lesson's exercises meet)
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | saving an intermediate such as `sigmoid(beta * x)` | second derivatives wrong, or an error at the second grad when `grad_output` is a constant (the trap above) | save inputs or outputs and recompute, or return it as an output |
# | saving a copy of the output: a second `torch.from_numpy` of the same array, `y.clone()`, or returning `y.view_as(x)` | the saved tensor is an intermediate, so second derivatives lose the term through it | save the very tensor forward returns |
# | `.detach()`, `.data`, `torch.no_grad()` or NumPy inside backward | second derivatives wrong, zero, or an error at the second grad (*"element 0 of tensors does not require grad"*) | plain tensor ops on `ctx.saved_tensors` and `grad_output` |
# | recording backward only when `grad_output.requires_grad` | a loss such as `y.sum()` hands backward a `grad_output` that needs no grad, so its second derivative is lost | record whenever grad mode is on (`torch.is_grad_enabled()`) |
# | `ctx.beta = beta.item()` | no derivative with respect to `beta` the second time | `ctx.save_for_backward(x, beta)` |
# | `@once_differentiable` on a backward that is differentiable | second derivatives refused, or silently lost (`SwishFunction`'s self-check fails it) | leave it off |
# | a NumPy or kernel backward without `@once_differentiable` | second derivatives wrong, zero, or an error at the second grad | mark it, or make the backward a Function of its own (as `NumpyTanh`) |
# | a NumPy write through `.numpy()` (`out=`, `*=`) into an input, output or saved tensor | the caller's tensor changes and gradients are silently wrong: the version counter never sees it | write into a new array (`.copy()` first) |
#
# More rows are in "More common mistakes and misconceptions" at the end.

# %% [markdown]
# ### Grad mode inside backward
#
# **Quick question 1.** Autograd switches grad mode (recording) on or off
# around every backward it runs. What does `torch.is_grad_enabled()` return inside a
# Function's backward for a plain `.backward()`, and under
# `torch.autograd.grad(..., create_graph=True)`? Write your two predictions (`True` or `False`)
# into the cell below; the cell after it checks them.

# %%
### BEGIN WORKED
predicted_plain_backward = False
predicted_create_graph = True
### LEARNER
predicted_plain_backward = None  # True or False: grad mode inside backward, plain .backward()
predicted_create_graph = None    # True or False: the same under create_graph=True
### END WORKED

# %% [markdown]
# Now check quick question 1: `ExpReports` is the worked example's `Exp` with a backward that
# reports its grad mode.

# %%
class ExpReports(Exp):
    """Exp, recording the grad mode its backward runs under."""

    @staticmethod
    def backward(ctx, grad_output):
        grad_modes.append(torch.is_grad_enabled())  # shown below, once you have predicted
        return Exp.backward(ctx, grad_output)


grad_modes = []
x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
ExpReports.apply(x).sum().backward()  # a plain backward
_ = torch.autograd.grad(ExpReports.apply(x).sum(), x, create_graph=True)
compare("grad mode, plain backward", predicted_plain_backward, grad_modes[0])
compare("grad mode, create_graph=True", predicted_create_graph, grad_modes[1])

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Off for a plain backward, on under `create_graph=True`: the engine runs every backward with
# grad mode set to `create_graph`. That is the whole mechanism of double backward: with grad
# mode on, the ops your backward runs on `grad_output` and the saved tensors are recorded like
# any other ops. It also means a backward can assume neither: one that must record (lesson 05's
# recomputing backward) switches grad mode on itself.
# </details>

# %% [markdown]
# ### Compare: the third way on a matrix product
#
# After your `NumpyTanh` self-check is green: the same design on $Y = AC$, with the backward of the backward you derived before the
# exercise. The NumPy sits in forwards, which are never recorded, and the hand-written
# `MatmulBackward.backward` supplies the derivatives autograd cannot see. One difference from
# yours: it computes with torch ops, a shortcut your contract rules out and a matrix product
# allows (its derivatives are matrix products again, which autograd records), so even third
# derivatives come out right, as the last comparison shows; yours, with NumPy in the inner
# backward too, is right to the second only (the section "Your `NumpyTanh`, differentiated a
# third time" shows why). Its code is folded: it has your exercise's skeleton, so open it
# after your self-check is green.

# %% jupyter={"source_hidden": true}
def matmul_third_way():
    """MatmulBackward and NumpyMatmul: Y = A @ C in NumPy, its backward a Function with a
    hand-written backward of its own."""

    class MatmulBackward(torch.autograd.Function):
        """b(G, A, C) = (G C^T, A^T G) computed in NumPy; its own backward is hand-written."""

        @staticmethod
        def forward(ctx, grad_output, a, c):
            ctx.save_for_backward(grad_output, a, c)
            g, a, c = grad_output.detach().numpy(), a.detach().numpy(), c.detach().numpy()
            return torch.from_numpy(g @ c.T), torch.from_numpy(a.T @ g)  # NumPy: unseen by autograd

        @staticmethod
        def backward(ctx, gbar_a, gbar_c):
            grad_output, a, c = ctx.saved_tensors
            need_g, need_a, need_c = ctx.needs_input_grad  # None where none is needed (rule 2)
            return (gbar_a @ c + a @ gbar_c if need_g else None,
                    grad_output @ gbar_c.mT if need_a else None,
                    gbar_a.mT @ grad_output if need_c else None)


    class NumpyMatmul(torch.autograd.Function):
        """Y = A @ C for 2-D A and C, in NumPy, whose backward is the Function above."""

        @staticmethod
        def forward(ctx, a, c):
            ctx.save_for_backward(a, c)
            return torch.from_numpy(a.detach().numpy() @ c.detach().numpy())

        @staticmethod
        def backward(ctx, grad_output):
            a, c = ctx.saved_tensors
            return MatmulBackward.apply(grad_output, a, c)

    return MatmulBackward, NumpyMatmul


# %%
MatmulBackward, NumpyMatmul = matmul_third_way()

a = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
c = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
derivatives = {}
for name, matmul in [("NumpyMatmul", NumpyMatmul.apply), ("torch.matmul", torch.matmul)]:
    grad_of_a, = torch.autograd.grad((matmul(a, c) ** 2).sum(), a, create_graph=True)
    mixed, = torch.autograd.grad(grad_of_a.sum(), c, create_graph=True)  # second order
    third, = torch.autograd.grad((mixed ** 2).sum(), a)  # third order
    derivatives[name] = (mixed.detach(), third)
for order, ours, theirs in zip(("second", "third"), *derivatives.values()):
    print(f"{order} derivative, NumpyMatmul against torch.matmul:", torch.allclose(ours, theirs))
print("gradgradcheck:", torch.autograd.gradgradcheck(NumpyMatmul.apply, (a, c)))

# %% [markdown]
# ### Tensors on `ctx`, and what really breaks
#
# Lesson 00's rule is to pass tensors through `save_for_backward`, never `ctx.x = x`. Now that
# backward can itself be differentiated, what does breaking the rule cost?
#
# Lessons 00 and 01 settled what an **input** or **output** kept on `ctx` costs: an in-place
# change goes unnoticed, and an output makes a reference cycle. Whether double backward still
# works through one, the third cell below checks on `ExpOnCtx` (the worked example's `Exp`,
# keeping `ctx.y = y` instead of saving it). What neither lesson settled is an
# **intermediate** on `ctx`.
#
# **Quick question 2.** `SinhOnCtx` computes $y = \sinh x = (e - 1/e)/2$ with $e = e^x$, keeps
# the intermediate `e` as `ctx.e` instead of saving it, and returns `grad_output` times
# $(e + 1/e)/2 = \cosh x$, which is right to first order. Predict: does it pass
# `gradgradcheck`? And for $f(x) = y^2/2$, do two calls of `torch.autograd.grad` raise, give
# the true $f''(1) = \cosh^2 1 + \sinh^2 1 \approx 3.762$, or give a wrong number (which
# one)? Write your predictions below, then run the cell after.

# %%
### BEGIN WORKED
predicted_passes_gradgradcheck = False
predicted_second = "wrong number"
### LEARNER
predicted_passes_gradgradcheck = None  # True or False
predicted_second = None  # "raises", "true value" or "wrong number"
### END WORKED

# %%
class SinhOnCtx(torch.autograd.Function):
    """y = sinh(x), keeping the intermediate e = exp(x) as ctx.e instead of saving it."""

    @staticmethod
    def forward(ctx, x):
        e = torch.exp(x)
        ctx.e = e
        return (e - 1 / e) / 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (ctx.e + 1 / ctx.e) / 2  # cosh x


x = torch.randn(3, dtype=torch.float64, requires_grad=True)
passes = torch.autograd.gradgradcheck(SinhOnCtx.apply, (x,), raise_exception=False)
show = written(predicted_passes_gradgradcheck, predicted_second)  # the numbers, once predicted
one = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
try:
    first, = torch.autograd.grad(SinhOnCtx.apply(one) ** 2 / 2, one, create_graph=True)
    second, = torch.autograd.grad(first, one)
    true = torch.cosh(one) ** 2 + torch.sinh(one) ** 2
    if show:
        print(f"f''(1) through SinhOnCtx: {second.item():.4f}   true: {true.item():.4f}")
    got = "true value" if torch.isclose(second, true) else "wrong number"
except RuntimeError as error:
    if show:
        print("the second torch.autograd.grad raised:", error)
    got = "raises"
compare("SinhOnCtx passes gradgradcheck", predicted_passes_gradgradcheck, passes)
compare("f''(1)", predicted_second, got)

# %%
class ExpOnCtx(torch.autograd.Function):
    """y = exp(x), keeping its output as ctx.y instead of saving it."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.y


x = torch.randn(3, dtype=torch.float64, requires_grad=True)
print("ExpOnCtx passes gradgradcheck:", torch.autograd.gradgradcheck(ExpOnCtx.apply, (x,)))

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `SinhOnCtx` fails `gradgradcheck`, and $f''(1)$ comes out $\cosh^2 1 \approx 2.381$: no
# error, a term missing. Forward runs with autograd off, so `ctx.e` has no history: to double
# backward it is a constant, exactly like a saved intermediate. Unlike `SoftplusSavesSigmoid`
# under a plain `.sum()`, here the output feeds a further op, so `grad_output` ($= y$) has a
# graph of its own: the first derivative $y \cosh x$ still has a graph through it, nothing
# raises, and only the term through `e`, $\sinh^2 1$, goes missing. Kept on `ctx` or saved, an
# intermediate is wrong for double backward; the fixes are the two above.
#
# `ExpOnCtx` passes `gradgradcheck`: an output on `ctx` is the very tensor autograd knows. Its
# other costs are lessons 00 and 01's: an in-place change to `y` goes unseen (saved with
# `save_for_backward`, it would make backward raise), and the output lives on until the cycle
# collector runs (ctx → output → its `grad_fn`, which is ctx).
# </details>

# %% [markdown]
# ### Try it: a gradient penalty through your Swish
#
# WGAN-GP (Gulrajani et al., 2017) trains a critic $D$ with a penalty on the norm of its
# gradient with respect to its input, so each training step differentiates a gradient. Take a
# toy critic on your Function, one score per row of a batch $x$ of shape $(n, d)$:
# $D(x_i) = \sum_j \operatorname{swish}_\beta(x_{ij})$, computed with `SwishFunction.apply`.
# Write `gradient_penalty(x, beta)`, for an `x` that requires grad, returning the 0-d tensor
#
# $$P = \frac{1}{n}\sum_i \big(\lVert \nabla_{x_i} D(x_i)\rVert_2 - 1\big)^2,$$
#
# such that `torch.autograd.grad(P, (beta, x))` gives `beta` and `x` their gradients, as a
# training step needs. Two questions to answer first: each $D(x_i)$ depends on row $i$ alone,
# so what is the gradient of $\sum_i D(x_i)$ with respect to the whole of $x$? And what must
# the call that computes it be told, so that $P$ can be differentiated in turn? The cell after
# yours checks $P$ against central differences of the forward alone, then your gradients of
# $P$ against central differences of your own $P$.

# %%
### BEGIN WORKED
def gradient_penalty(x, beta):
    """The mean over rows of (||grad_x D(x_i)|| - 1)^2, differentiable again."""
    scores = SwishFunction.apply(x, beta).sum(dim=1)  # D(x_i): row i's score
    # rows do not mix, so the gradient of the sum holds every row's own gradient
    grad_x, = torch.autograd.grad(scores.sum(), x, create_graph=True)
    return ((grad_x.norm(dim=1) - 1) ** 2).mean()
### LEARNER
gradient_penalty = None  # def gradient_penalty(x, beta): ...
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_gradient_penalty():
    """Your gradient_penalty against central differences: its value, its gradient in beta and
    its derivative along one direction in x."""
    if gradient_penalty is None:
        print("gradient_penalty: not written yet")
        return
    generator = torch.Generator().manual_seed(4)
    x0, direction = (torch.randn(5, 3, generator=generator, dtype=torch.float64) for _ in "ab")
    beta0, h = torch.tensor(1.5, dtype=torch.float64), 1e-6

    def penalty(x, beta):  # yours, on a fresh leaf x
        return gradient_penalty(x.clone().requires_grad_(), beta).detach()

    def swish(x):
        return x * torch.sigmoid(beta0 * x)

    slopes = (swish(x0 + h) - swish(x0 - h)) / (2 * h)  # dD/dx_ij, by differences
    expected = ((slopes.norm(dim=1) - 1) ** 2).mean()
    x, beta = x0.clone().requires_grad_(), beta0.clone().requires_grad_()
    try:
        P = gradient_penalty(x, beta)
        if P.shape != ():
            print("✗ P should be a 0-d tensor; yours has shape", tuple(P.shape))
            return
        if not P.requires_grad:
            print("✗ your P has no graph: the gradient it is built from was not recorded")
            return
        grad_beta, grad_x = torch.autograd.grad(P, (beta, x))
        by_beta = (penalty(x0, beta0 + h) - penalty(x0, beta0 - h)) / (2 * h)
        along = (penalty(x0 + h * direction, beta0) - penalty(x0 - h * direction, beta0)) / (2 * h)
    except NotImplementedError:
        print("SwishFunction is not written yet")
        return
    except RuntimeError as error:  # shown, not raised: Run All goes on
        print("✗ gradient_penalty raised:", str(error).splitlines()[0])
        return
    for what, got, want in [("P", P.detach(), expected), ("dP/dbeta", grad_beta, by_beta),
                            ("dP/dx along a direction", (grad_x * direction).sum(), along)]:
        print(f"{what}: yours {got.item():.8f}, by differences {want.item():.8f}",
              "✓" if torch.isclose(got, want, rtol=1e-5, atol=1e-7) else "✗")


check_gradient_penalty()

# %% [markdown]
# ### A trap only second derivatives show
#
# Lesson 01 built a stable sigmoid with `torch.where`,
# which computes both branches everywhere and keeps one. With the textbook branches,
# `1 / (1 + exp(-z))` and `exp(z) / (1 + exp(z))`, the branch that is dropped overflows once
# $|z|$ passes about 89 in float32 (710 in float64), and the values stay right.
#
# **Predict, then run.** The cell after next builds that `where` sigmoid at
# $x = (-100, 1, 100)$ in float32 and differentiates it once. At which of the three points is
# its derivative `nan`, if any? The same cell then runs your Swish in float32 at $x = \pm 100$:
# read its second derivatives for a `nan`.

# %%
### BEGIN WORKED
predicted_nan_at = [-100.0, 100.0]
### LEARNER
predicted_nan_at = None  # a list of the points among -100, 1, 100 ([] if none)
### END WORKED

# %%
x = torch.tensor([-100.0, 1.0, 100.0], requires_grad=True)  # float32, as in training
s = torch.where(x >= 0, 1 / (1 + torch.exp(-x)), torch.exp(x) / (1 + torch.exp(x)))
where_derivative = torch.autograd.grad(s.sum(), x)[0]
if written(predicted_nan_at):  # the derivatives, once your prediction is written
    print("where-built sigmoid:       ", s.detach())
    print("its derivative:            ", where_derivative)
    print("torch.sigmoid's derivative:", torch.autograd.grad(torch.sigmoid(x).sum(), x)[0])
compare("nan at", predicted_nan_at,
        [point for point, d in zip(x.tolist(), where_derivative.tolist()) if math.isnan(d)])
beta = torch.tensor(1.0, requires_grad=True)
first, = torch.autograd.grad(SwishFunction.apply(x, beta).sum(), x, create_graph=True)
second_x, second_beta = torch.autograd.grad(first.sum(), (x, beta))
print("your Swish, second derivatives in x:", second_x, " in beta:", second_beta)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Autograd differentiates both branches: `where` sends a zero gradient into the dropped one,
# that zero meets its `inf`, and 0 × inf is `nan`. Put such a `where` in a backward and it
# becomes part of the first derivative's graph: the first derivative is right, and only the
# second comes out `nan`, which is what a gradient penalty or an HVP sees on a large activation.
# The contract's second bullet asks for the composed ops' second derivatives wherever its first
# allows ($|\beta x|$ up to 800), in both dtypes (the Function contract's rule 1), so the
# self-check tries them in float32 past 89 and in float64 past 710, and names a `nan` and the
# points where it appears. The
# same overflow hides in a backward without `where`: `1 / (1 + exp(-z))` with `z` clamped to
# ±700, float64's safe range, is right in value and first derivative, and its second derivative
# is `nan` in float32: 0 × inf again, in the derivative of `exp(-z)`, whose value overflows to
# inf there (`torch.autograd.detect_anomaly` names `ExpBackward0`).
#
# Two traps of this kind (an op in backward whose derivative goes wrong at some points):
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `torch.where` in backward with a branch that overflows where it is dropped (`exp(z) / (1 + exp(z))`) | values and first derivatives right, second derivatives `nan` (float32 from $\lvert\beta x\rvert \approx 89$, float64 from 710); the self-check tries both dtypes, and names the `nan` and where it appears | a smooth op such as `torch.sigmoid`, or clamp the argument inside each branch |
# | an op with a kink at 0 in backward (`abs`, as in a sigmoid built from `exp(-abs(z))`) | second derivative wrong exactly at `x = 0`, where autograd takes the kink's derivative as 0 | a smooth op such as `torch.sigmoid` |
# </details>

# %% [markdown]
# ### The NumPy border, run
#
# `CubeOnce`'s border crossings, run on a square root in NumPy: `.numpy()` refuses a tensor
# that requires grad while grad mode is on (a marked backward runs with it off; `.detach()`
# first works in both), and on a 0-d array NumPy returns a scalar, which `torch.from_numpy`
# refuses and `torch.as_tensor` accepts.

# %%
t = torch.tensor([0.25, 4.0], dtype=torch.float64, requires_grad=True)
try:
    t.numpy()
except RuntimeError as error:
    print(".numpy() on a tensor that requires grad:", str(error).split(".")[0])
roots = torch.from_numpy(np.sqrt(t.detach().cpu().numpy())).to(t.device)
print("sqrt in NumPy, back in torch:", roots, roots.dtype)
scalar = np.sqrt(torch.tensor(9.0, dtype=torch.float64).numpy())  # a 0-d input
print("NumPy on a 0-d array returns", type(scalar).__name__)
try:
    torch.from_numpy(scalar)
except TypeError as error:
    print("torch.from_numpy refuses it:", error)
print("torch.as_tensor accepts it:  ", torch.as_tensor(scalar))

# %% [markdown]
# ### What to save, at float32's ends
#
# `CubeOnce`'s "decide before you write", tried. **Predict**, for each of `x`, the output `y`
# and `local` (the derivative $3x^2$ computed in forward), whether backward can get the
# derivative right at every float32 `x` from it alone, at `x` = 1e-15, 1e-16 and 1e13. The
# cell after next tries all three (a cube root recovers `x` from `y`; `np.cbrt`, since
# `y ** (1 / 3)` is `nan` for negative `y`).

# %%
### BEGIN WORKED
predicted_right_from = {"x": True, "y": False, "local": True}
### LEARNER
predicted_right_from = {"x": None, "y": None, "local": None}  # True or False for each
### END WORKED

# %%
x_ends = torch.tensor([1e-15, 1e-16, 1e13], dtype=torch.float32)
y_ends = x_ends ** 3  # 1.4e-45 (subnormal), 0 (underflow), inf (overflow)
from_saved = {"x": 3 * x_ends ** 2,
              "y": 3 * torch.from_numpy(np.cbrt(y_ends.numpy())) ** 2,
              "local": (3 * x_ends ** 2).clone()}  # computed in forward, kept until backward
truth_ends = 3 * x_ends.double() ** 2
right_from = {saved: torch.allclose(d.double(), truth_ends, rtol=1e-4, atol=0)
              for saved, d in from_saved.items()}
if written(predicted_right_from):
    print("x ** 3 at x = 1e-15, 1e-16, 1e13:", y_ends.tolist())
    for saved, d in from_saved.items():
        print(f"from {saved:<5}: {d.tolist()}")
    compare_all(predicted_right_from, right_from)
else:
    print("write predicted_right_from first (True or False for each), then run this again")

# %% [markdown]
# ### What the mark guards, and what it does not
#
# **Quick question 3.** The main line's guarded `CubeOnce` raised only where the incoming
# gradient required grad and a `.backward()` ran the error node. The cell after next
# differentiates $\sin(x^3)$ twice through your marked `CubeOnce`, where the incoming gradient,
# $\cos(x^3)$, requires grad, and takes the second pass in two ways: `first.sum().backward()`,
# and `torch.autograd.grad(first.sum(), x)`, which runs only the nodes on a path to `x`. For
# each, predict: `"once_differentiable's error"`, `"another error"`, or `"a tensor"`.

# %%
### BEGIN WORKED
predicted_with_backward = "once_differentiable's error"
predicted_with_grad = "another error"
### LEARNER
predicted_with_backward = None  # "once_differentiable's error", "another error" or "a tensor"
predicted_with_grad = None  # the same three choices
### END WORKED


# %%
def second_pass(run):
    """Run a second pass through your CubeOnce; say what came out."""
    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    first, = torch.autograd.grad(torch.sin(CubeOnce.apply(x)).sum(), x, create_graph=True)
    try:
        run(first.sum(), x)
    except RuntimeError as error:
        if written(predicted_with_backward, predicted_with_grad):  # the message, once predicted
            print("   raises:", str(error).splitlines()[0])
        return ("once_differentiable's error" if "once_differentiable" in str(error)
                else "another error")
    return "a tensor"


print("first.sum().backward():")
compare("   with .backward()", predicted_with_backward,
        second_pass(lambda total, x: total.backward()))
print("torch.autograd.grad(first.sum(), x):")
compare("   with torch.autograd.grad", predicted_with_grad,
        second_pass(lambda total, x: torch.autograd.grad(total, x)))

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `.backward()` runs every node the graph holds, the error node included, so it raises the
# mark's message. The error node's inputs are detached aliases of your backward's results (the
# same memory, cut from the graph), made to require grad, so no path through it leads to `x`.
# `torch.autograd.grad(..., x)` never runs it, finds nothing in `first` that depends on `x`,
# and raises *"appears to not have been used in the graph"*. Where `first` also depends on `x`
# through other ops, it returns their share alone, silently, as the cell below shows on
# $\sin(x^3) + x^2$; and `torch.autograd.functional.hvp`, which allows unused inputs, reports
# zeros. `gradgradcheck` is the reliable test, but only at the points you give it: include
# `x = 0`, saturating values and any threshold.
# </details>

# %%
x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
first, = torch.autograd.grad((torch.sin(CubeOnce.apply(x)) + x ** 2).sum(), x, create_graph=True)
xd = x.detach()
print("sin(x³) + x², second derivative by grad():", torch.autograd.grad(first.sum(), x)[0],
      " true:", 6 * xd * torch.cos(xd ** 3) - 9 * xd ** 4 * torch.sin(xd ** 3) + 2)
try:
    first.sum().backward()
except RuntimeError as error:
    print("sin(x³) + x², .backward():", str(error).splitlines()[0])

_, hvp = torch.autograd.functional.hvp(lambda x: torch.sin(CubeOnce.apply(x)).sum(),
                                       x.detach(), torch.ones(2, dtype=torch.float64))
print("functional.hvp through CubeOnce:", hvp)
try:
    torch.autograd.gradgradcheck(CubeOnce.apply, (x,))
except GradcheckError as error:
    print("gradgradcheck:", str(error).splitlines()[0])

# %% [markdown]
# ### Your `NumpyTanh`, differentiated a third time
#
# The contract asks for two orders. The cell after next differentiates your `NumpyTanh` a third
# time and plots the curves beside `torch.tanh`'s (the third derivative's once you have
# predicted). The true third derivative at $x = 0$ is $-2$. Predict what yours gives there: a
# number, or `"an error"` if you expect the third `torch.autograd.grad` to raise. Which tensor
# does your inner Function take, `y` or `x`? Which factors of the second derivative did autograd
# record, and what is each worth at $y = 0$?

# %%
### BEGIN WORKED
predicted_third_at_0 = 0.0
### LEARNER
predicted_third_at_0 = None  # a number, or "an error"
### END WORKED


# %%
def derivatives(f, xs, orders=3):
    """f(xs) and its derivatives, each the derivative of the one before, as far as autograd
    takes them (at most `orders`), and the error that stopped it, or None: a derivative with
    no graph is not zero, it makes the next torch.autograd.grad raise."""
    values = [f(xs)]
    for order in range(1, orders + 1):
        try:
            d, = torch.autograd.grad(values[-1].sum(), xs, create_graph=order < orders)
        except RuntimeError as error:
            return [value.detach() for value in values], f"{order}: {str(error).splitlines()[0]}"
        values.append(d)
    return [value.detach() for value in values], None


xs = torch.linspace(-3, 3, 121, dtype=torch.float64, requires_grad=True)
(yours, raised), (reference, _) = derivatives(NumpyTanh.apply, xs), derivatives(torch.tanh, xs)
shown = 4 if written(predicted_third_at_0) else 3  # the third derivative, once predicted
fig, axes = plt.subplots(1, shown, figsize=(3.3 * shown, 3))
for order, (ax, title) in enumerate(zip(axes, ("tanh", "tanh′", "tanh″", "tanh‴"))):
    ax.plot(xs.detach(), reference[order], lw=3, alpha=0.5, label="torch.tanh")
    if order < len(yours):
        ax.plot(xs.detach(), yours[order], "--", label="your NumpyTanh")
    else:
        ax.text(0.5, 0.1, "yours raised", transform=ax.transAxes, ha="center")
    ax.set_title(title)
    ax.set_xlabel("x")
axes[0].legend()
plt.show()
if shown == 3:
    print("the third derivative's panel shows once your prediction is written")
elif raised:
    print("your NumpyTanh's derivative", raised)
if len(yours) >= 3:  # the second derivative exists: the third is a number or an error
    compare("third derivative at 0", predicted_third_at_0,
            round(yours[3][60].item(), 6) + 0.0 if len(yours) == 4 else "an error")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Take $f = \sum \tanh$, so that $g = 1$, a constant. The second derivative goes through the
# inner Function's backward, whose results are made in NumPy: to autograd, constants with no
# graph. What a third differentiation finds depends on the tensor your inner Function takes:
#
# - **`y`** (as the solution's does): the constant it returns for $y$ reaches $x$ through
#   `NumpyTanh`'s backward, which calls the inner Function again, and that call is recorded.
#   The third derivative keeps only the part through the recorded call, $0$ at $x = 0$ (where
#   $y = 0$), and loses the part through the constant: wrong, silently, and a mark on the
#   innermost backward would not change that here.
# - **`x`**: the constant it returns for $x$ goes straight to the leaf `x`, through no recorded
#   call, and the one for $g$ to the constant 1s: the second derivative has no graph at all,
#   and the third `torch.autograd.grad` raises *"element 0 of tensors does not require grad and
#   does not have a grad_fn"*. Loudly, here; where $g$ has a graph of its own (a loss other than
#   a plain sum), the part through $g$ survives and the result is wrong with no error.
#
# The true one is $\tanh'''(x) = (1 - y^2)(6y^2 - 2)$, which is $-2$ at $0$. With the
# innermost backward in NumPy, as the contract asks, a right third derivative needs it to be a
# Function of its own in turn, one level further down; if yours gave $-2$, it is one. (An
# innermost backward in torch ops, as `MatmulBackward`'s, would give $-2$ too, and break this
# exercise's contract.)
# </details>

# %% [markdown]
# ### In practice
#
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **Two everyday tools refuse double backward**, on the second differentiation (checked on
# torch 2.13, CPU), though not always in words that say so:
#
# - a function compiled with `torch.compile` (checked with `backend="aot_eager"`, built on
#   AOTAutograd as the default backend is): the first `torch.autograd.grad(...,
#   create_graph=True)` runs; a second `.backward()` raises *"torch.compile with aot_autograd
#   does not currently support double backward"*, but on `torch.tanh(x).sum()` a second
#   `torch.autograd.grad` says only that the differentiated tensor *"appears to not have been
#   used in the graph"*, and with `allow_unused=True` returns `None`, so take the second pass
#   with `.backward()` when you test;
# - `torch.nn.functional.scaled_dot_product_attention` on CPU runs a fused kernel whose
#   backward has no derivative of its own: *"derivative for
#   aten::_scaled_dot_product_flash_attention_for_cpu_backward is not implemented"*. Under
#   `torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH)` it runs composed ops,
#   and double backward works.
#
# So the part of a model that a gradient penalty or an HVP differentiates twice runs eagerly,
# on ops with a derivative for their backward; test each custom Function on that path with
# `gradgradcheck`, outside `torch.compile`.
#
# **NumPy writes that autograd never sees.** On a CPU, `t.detach().numpy()` is `t`'s own
# memory. A NumPy write through it (`a *= 2`, `np.tanh(a, out=a)`) changes the tensor, and
# autograd's version counter, which makes backward raise when a saved tensor was changed in
# place, never sees it. Here the write goes into the output of `torch.exp`, which `exp` saves
# for its backward (run on torch 2.13, CPU):
#
# ```python
# w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
# y = torch.exp(w)
# a = y.detach().numpy()
# a *= 10             # a NumPy write into y's memory: y._version stays 0
# y.sum().backward()  # no error; w.grad is [27.1828, 73.8906], the true e^w [2.7183, 7.3891]
# ```
#
# The same write through torch, `y.detach().mul_(10)`, makes backward raise *"one of the
# variables needed for gradient computation has been modified by an inplace operation"*. In a
# NumPy backward, write into a new array (`.copy()` first), never into a tensor's memory.
#
# **Forward-over-reverse.** `torch.func.jvp(torch.func.grad(f), (x,), (v,))` computes the same
# $Hv$ by pushing $v$ forward through the gradient computation, the usual way in JAX and
# `torch.func`, without keeping a recorded first backward alive. A custom Function takes part
# only with a forward without `ctx`, a `setup_context` (every `torch.func` transform needs it)
# and a `jvp` rule (forward mode needs it): lesson 08 writes both. Through this lesson's `Exp`
# it raises, on torch 2.13, *"In order to use an autograd.Function with functorch transforms
# (vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod."*
#
# PyTorch's own `tanh` is built like the third way, with one difference. Its backward calls
# `tanh_backward(grad, result)`, a kernel of its own, as your inner Function is, with an entry
# in `derivatives.yaml` (the file where ATen's ops declare their derivatives),
# `tanh_backward(Tensor grad_output, Tensor output)`, that says how to differentiate it in
# turn, `grad` there being the gradient that comes in: for `grad_output`,
# `tanh_backward(grad, output.conj())` again, and for `output`,
# `grad.conj() * (-2 * output.conj() * grad_output)` (`.conj()` leaves a real tensor as it
# is). That rule is written in ops autograd records, not in kernel code: on torch 2.13 the
# second derivative of `torch.tanh(x).sum()` has `grad_fn` `TanhBackwardBackward0`, fed by a
# `MulBackward0` and a `TanhBackward0`, so a third differentiation goes on through them, and
# `torch.tanh`'s third derivative, $(1 - y^2)(6y^2 - 2)$, comes out right, where your
# `NumpyTanh`'s is not.
# </details>

# %% [markdown]
# ### More common mistakes and misconceptions (optional)
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `grad_output.view(-1)` in backward | *"view size is not compatible with input tensor's size and stride"* when `grad_output` is not contiguous (the gradient of a later `.t()`) | elementwise ops on `grad_output` as it comes, or `.reshape` |
# | in-place ops in backward (`ds = s.mul_(1 - s)`, `s` from `torch.sigmoid`) | `mul_` overwrites `s` with $s(1-s)$. A later use of `s` reads the new value: the first derivative is silently wrong. If every other use of `s` comes first, the first derivative is right, but the second differentiation raises *"one of the variables needed for gradient computation has been modified by an inplace operation"* (the recorded `sigmoid` needs the old `s`) | out-of-place ops (`s * (1 - s)`) |
# | a flag or cache kept in a global (`_needs[0] = beta.requires_grad` in forward, $3x^2$ memoised under `x.data_ptr()`) | right for one call at a time; wrong when a second call runs its forward before the first one's backward, or after an optimizer step changes `x` in place | keep what backward needs on `ctx`, one per call; read `ctx.needs_input_grad` in backward |
# | `gradgradcheck` in float32 | spurious failures | float64 |
#
# - **"Anything passed to `save_for_backward` is safe for double backward."** Only inputs and
#   outputs come back linked to the graph. An intermediate such as `sigmoid(beta * x)` comes
#   back as a constant, so the first derivatives are right and the second ones wrong, as the
#   trap above shows; `gradcheck` alone never notices, only `gradgradcheck` does.
# - **"Tensors as `ctx` attributes break double backward."** Only for intermediates, which are
#   wrong however they are kept. The rule against `ctx.mask = mask` is right for other reasons:
#   the lost in-place check, the reference cycle for outputs, and invisibility to saved-tensor
#   hooks (lesson 05).
