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
# Some methods differentiate a gradient. Newton-type optimisers and curvature estimates need
# Hessian-vector products; WGAN-GP penalises the norm of a critic's gradient with respect to
# its input; MAML differentiates through an SGD step; physics-informed networks put
# derivatives of the network with respect to its inputs into the loss. Each of these runs
# backward **through a backward**, so every custom Function on the path must have a backward
# that autograd can differentiate, or must say loudly that it cannot.
#
# By the end of this lesson you can:
# 1. compute second derivatives and Hessian-vector products with `create_graph=True`;
# 2. write a backward that supports double backward, and test it with `gradgradcheck`;
# 3. recognise what in a backward breaks second order (saved intermediates, detaching, numbers);
# 4. mark a backward that cannot be differentiated with `@once_differentiable`, and know what
#    that guard does and does not catch.
#
# Exercises are marked **✎ Exercise**. Each has a self-check cell; the hidden tests check more.

# %% nbgrader={"locked": true}
import gc
import weakref

import matplotlib.pyplot as plt
import torch
from torch.autograd.function import once_differentiable
from torch.autograd.gradcheck import GradcheckError

from autograder import self_check
from widgets import explore_gradients, inspect_saved

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it

# %% [markdown]
# ## The maths: backward is a function too
#
# Your backward computes a vector-Jacobian product, $v \mapsto v^\top J(x)$, from the saved
# tensors and `grad_output` $= v$. Normally autograd runs it and throws the recipe away. With
# `torch.autograd.grad(..., create_graph=True)` autograd **records the ops your backward runs**,
# so the gradient it returns is itself part of a graph, a function of $x$ (and of $v$), and can
# be differentiated again.
#
# For a scalar $f$, differentiating $\nabla f(x) \cdot v$ once more gives a Hessian-vector
# product without ever forming the Hessian:
#
# $$H v = \nabla_x \big(\nabla_x f(x) \cdot v\big).$$
#
# Autograd can only record what your backward does with tensors it can see: the tensors from
# `ctx.saved_tensors` (inputs and outputs come back linked to the graph) and `grad_output`.

# %% [markdown]
# ## Worked example: `Cube`, twice
#
# The `Cube` of lesson 00 saves its input and computes `grad_output * 3 * x ** 2`: ordinary,
# differentiable tensor ops on a saved input. That is all double backward needs.

# %%
class Cube(torch.autograd.Function):
    """y = x ** 3."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2  # d/dx x**3 = 3x**2, itself differentiable


x = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
first, = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
second, = torch.autograd.grad(first.sum(), x)
print("first  derivative:", first.detach(), " (3x² =", 3 * x.detach() ** 2, ")")
print("second derivative:", second, " (6x =", 6 * x.detach(), ")")
print("first.grad_fn is a", type(first.grad_fn).__name__, "(recorded from Cube's backward)")

# %% [markdown]
# `torch.autograd.gradgradcheck` is `gradcheck` one level up: it checks the derivatives of your
# backward, with respect to the inputs **and** to `grad_output`, against finite differences of
# backward itself. As before, float64 only.

# %%
print("gradcheck:    ", torch.autograd.gradcheck(Cube.apply, (x,)))
print("gradgradcheck:", torch.autograd.gradgradcheck(Cube.apply, (x,)))

# %% [markdown]
# ## Hessian-vector products
#
# Take $f(x) = \sum_i \big((A x)_i\big)^3$ with `Cube` doing the cubing. Its Hessian is
# $A^\top \operatorname{diag}(6 A x)\, A$: not diagonal, so the product $Hv$ mixes coordinates.
# Three ways to compute $Hv$, which must agree:
#
# 1. by hand, with two calls to `torch.autograd.grad` (the first with `create_graph=True`);
# 2. with `torch.autograd.functional.hvp`, which does the same internally;
# 3. by forming the full Hessian with `torch.autograd.functional.hessian` and multiplying,
#    which costs $n$ backward passes and $n^2$ memory: fine for $n = 5$, hopeless for a network.

# %%
generator = torch.Generator().manual_seed(0)
A = torch.randn(7, 5, generator=generator, dtype=torch.float64)
x0 = torch.randn(5, generator=generator, dtype=torch.float64)
v = torch.randn(5, generator=generator, dtype=torch.float64)


def f(x):
    return Cube.apply(A @ x).sum()


x = x0.clone().requires_grad_()
grad_f, = torch.autograd.grad(f(x), x, create_graph=True)
hvp_by_hand, = torch.autograd.grad(grad_f @ v, x)

_, hvp_functional = torch.autograd.functional.hvp(f, x0, v)
hessian = torch.autograd.functional.hessian(f, x0)
hvp_from_hessian = hessian @ v
hessian_by_formula = A.T @ torch.diag(6 * (A @ x0)) @ A

for label, a, b in [("by hand vs functional.hvp:  ", hvp_by_hand, hvp_functional),
                    ("by hand vs full Hessian @ v:", hvp_by_hand, hvp_from_hessian),
                    ("Hessian vs formula:         ", hessian, hessian_by_formula)]:
    print(label, "agree to 1e-12:", torch.allclose(a, b, rtol=0, atol=1e-12))
print("Hv =", hvp_by_hand)

fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
image = axes[0].imshow(hessian, cmap="RdBu_r", vmin=-hessian.abs().max(), vmax=hessian.abs().max())
fig.colorbar(image, ax=axes[0])
axes[0].set_title("Hessian of f (through Cube's backward)")
positions = torch.arange(5)
for offset, (label, values) in zip((-0.25, 0.0, 0.25), [("by hand", hvp_by_hand),
                                                       ("functional.hvp", hvp_functional),
                                                       ("Hessian @ v", hvp_from_hessian)]):
    axes[1].bar(positions + offset, values, width=0.25, label=label)
axes[1].set_xlabel("coordinate")
axes[1].set_title("Hv three ways")
axes[1].legend()
plt.show()

# %% [markdown]
# ## ✎ Exercise 1 · `SwishFunction`
#
# Swish (also called SiLU when $\beta = 1$) is $y = x\,\sigma(\beta x)$ with a learnable
# $\beta$. Write $s = \sigma(\beta x)$ and use $\sigma'(z) = \sigma(z)(1 - \sigma(z))$:
#
# $$\frac{\partial y}{\partial x} = s + \beta x\, s(1 - s), \qquad
#   \frac{\partial y}{\partial \beta} = x^2\, s(1 - s).$$
#
# `SwishFunction.apply(x, beta)` takes a tensor `x` and a **0-dim tensor** `beta` that may
# require grad. `beta` is used by every element, so its gradient is a sum over all of them:
# `grad_beta = (grad_output * x**2 * s * (1 - s)).sum()`.
#
# It must pass `gradgradcheck` for both `x` and `beta`. The rule that makes it work: **save the
# inputs `x` and `beta`, and recompute `s` in backward** with ordinary tensor ops. Use
# `ctx.needs_input_grad` to skip a gradient nobody wants.

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
        grad_beta = (grad_output * x * x * ds).sum() if ctx.needs_input_grad[1] else None
        return grad_x, grad_beta
        ### END SOLUTION


# %% nbgrader={"grade_id": "SwishFunction", "grade": true, "points": 2}
self_check("SwishFunction", SwishFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SwishFunction", SwishFunction)
### END HIDDEN TESTS

# %% [markdown]
# Your Swish and its first two derivatives in $x$, for three values of $\beta$; both
# derivatives come from your backward, the second one through double backward.

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

# %% [markdown]
# What your forward saved: `x` and `beta`, both inputs. Inputs come back from
# `ctx.saved_tensors` linked to the graph, which is what lets double backward differentiate
# your backward. Keep an eye on the role column in the next section.

# %%
inspect_saved(SwishFunction, torch.linspace(-3, 3, 8, dtype=torch.float64),
              torch.tensor(1.5, dtype=torch.float64))

# %% [markdown]
# ## The trap: saving an intermediate
#
# It is tempting to save $s = \sigma(\beta x)$ in forward, since backward needs it. For first
# derivatives that is fine. For second derivatives it is wrong, and silently so:

# %%
class SwishSavesSigmoid(torch.autograd.Function):
    """Saves the intermediate sigmoid(beta * x): right once, wrong twice."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)  # s is neither an input nor an output
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, beta, s = ctx.saved_tensors
        ds = s * (1 - s)
        return grad_output * (s + beta * x * ds), (grad_output * x * x * ds).sum()


x = torch.randn(4, dtype=torch.float64, requires_grad=True)
beta = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
print("gradcheck:    ", torch.autograd.gradcheck(SwishSavesSigmoid.apply, (x, beta)))
try:
    torch.autograd.gradgradcheck(SwishSavesSigmoid.apply, (x, beta))
except GradcheckError as error:
    print("gradgradcheck:", str(error).splitlines()[0])

# %% [markdown]
# The inspector spots it before any check runs: the third saved tensor is an
# **intermediate**, and it says so.

# %%
inspect_saved(SwishSavesSigmoid, torch.linspace(-3, 3, 8, dtype=torch.float64),
              torch.tensor(1.5, dtype=torch.float64))

# %% [markdown]
# Why: forward runs with autograd off, so `s` has no history. `save_for_backward` gives inputs
# and outputs back linked to the graph, but an intermediate comes back exactly as it was: a
# constant. Differentiating `grad_output * (s + beta * x * s * (1 - s))` then treats `s` as
# fixed and misses every term of $\partial s/\partial x = \beta s(1-s)$ and
# $\partial s/\partial \beta = x s(1-s)$. The second derivative it produces is simply wrong:

# %%
xs = torch.linspace(-5, 5, 201, dtype=torch.float64, requires_grad=True)
beta = torch.tensor(1.0, dtype=torch.float64)


def second_derivative(swish):
    dy, = torch.autograd.grad(swish(xs, beta).sum(), xs, create_graph=True)
    d2y, = torch.autograd.grad(dy.sum(), xs)
    return d2y


true_d2y = second_derivative(lambda x, b: x * torch.sigmoid(b * x))  # composed ops
trap_d2y = second_derivative(SwishSavesSigmoid.apply)

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(xs.detach(), true_d2y, lw=3, alpha=0.6, label="true second derivative")
ax.plot(xs.detach(), trap_d2y, "--", label="through a saved sigmoid(βx)")
ax.set_xlabel("x")
ax.set_title("Swish'' with β = 1")
ax.set_ylim(top=0.7)
ax.legend()
plt.show()

# %% [markdown]
# The gradient-check explorer shows the same entry by entry. Treat the first derivative,
# computed through `SwishSavesSigmoid.backward`, as a function of `x` and `beta`: its Jacobian
# from double backward ("analytic") should match central differences, and does not.

# %%
def swish_derivative(x, beta):
    """dy/dx through SwishSavesSigmoid's backward, kept differentiable."""
    with torch.enable_grad():
        x = x if x.requires_grad else x.detach().requires_grad_()
        dy, = torch.autograd.grad(SwishSavesSigmoid.apply(x, beta).sum(), x, create_graph=True)
    return dy


explore_gradients(swish_derivative, torch.linspace(-2, 2, 6, dtype=torch.float64),
                  torch.tensor(1.0, dtype=torch.float64))

# %% [markdown]
# Two fixes:
#
# 1. **Save inputs (or outputs) and recompute** the intermediate in backward, as your
#    `SwishFunction` does. It costs one extra sigmoid.
# 2. **Return the intermediate as an extra output.** Saved outputs come back linked to the
#    graph, so autograd can differentiate through `s`; in exchange backward receives a
#    gradient for `s` too and must add its contribution.

# %%
class SwishWithSigmoid(torch.autograd.Function):
    """Returns (y, s) with s = sigmoid(beta * x), so that saving s saves an output."""

    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)
        return x * s, s

    @staticmethod
    def backward(ctx, grad_y, grad_s):
        x, beta, s = ctx.saved_tensors
        ds = s * (1 - s)
        grad_x = grad_y * (s + beta * x * ds) + grad_s * beta * ds  # ds/dx = beta s (1 - s)
        grad_beta = (grad_y * x * x * ds + grad_s * x * ds).sum()  # ds/dbeta = x s (1 - s)
        return grad_x, grad_beta


def swish_via_output(x, beta):
    return SwishWithSigmoid.apply(x, beta)[0]


x = torch.randn(4, dtype=torch.float64, requires_grad=True)
beta = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
print("gradgradcheck:", torch.autograd.gradgradcheck(swish_via_output, (x, beta)))

# %% [markdown]
# ## Tensors on `ctx`, and what really breaks
#
# Lesson 00's rule is to pass tensors through `save_for_backward`, never `ctx.x = x`. One
# popular text breaks that rule in its own examples, and the reason often given for the rule is
# that `ctx` attributes break double backward. What actually happens in current PyTorch is
# subtler:
#
# - an **intermediate** on `ctx` is a constant to double backward, exactly like a saved one:
#   second derivatives are wrong;
# - an **input** or **output** on `ctx` is the very tensor autograd knows, so double backward
#   still works; but autograd's version counter no longer guards it, so an in-place change
#   before backward gives a silently wrong gradient, and an output kept on `ctx` forms a
#   reference cycle (ctx → output → its `grad_fn`, which is ctx) that keeps the whole graph
#   alive until Python's cycle collector happens to run.

# %%
class ExpOnCtx(torch.autograd.Function):
    """y = exp(x), keeping the output as ctx.y (the habit to avoid)."""

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.y = y
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.y


x = torch.randn(3, dtype=torch.float64, requires_grad=True)
print("gradgradcheck passes:", torch.autograd.gradgradcheck(ExpOnCtx.apply, (x,)))

y = ExpOnCtx.apply(x)
with torch.no_grad():
    y.mul_(2)  # with save_for_backward, backward would now raise an error
y.sum().backward()
print("gradient after an in-place change:", x.grad, " true:", torch.exp(x).detach())

gc.disable()  # so that the cycle collector cannot run in the middle of the demonstration
y = ExpOnCtx.apply(x)
y.sum().backward()
still_there = weakref.ref(y)
del y
print("output freed when its last name goes:", still_there() is None)
gc.collect()
print("output freed after gc.collect():    ", still_there() is None)
gc.enable()

# %% [markdown]
# ## ✎ Exercise 2 · `CubeOnce`, with `@once_differentiable`
#
# Some backwards cannot be recorded: they call NumPy or a hand-written kernel, or detach on
# purpose. Nothing stops double backward from running through them anyway, and then a
# second derivative can be silently wrong. Here a NumPy backward makes the second derivative
# of $x^3 + x^2$ come out as $2$ instead of $6x + 2$:

# %%
class CubeNumPy(torch.autograd.Function):
    """y = x ** 3 with the gradient computed in NumPy."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        # autograd cannot see NumPy. as_tensor, not from_numpy: for a 0-d x, NumPy's
        # arithmetic returns a numpy.float64 scalar, which from_numpy refuses
        local = torch.as_tensor(3 * x.detach().numpy() ** 2)
        return grad_output * local


x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
first, = torch.autograd.grad((CubeNumPy.apply(x) + x ** 2).sum(), x, create_graph=True)
second, = torch.autograd.grad(first.sum(), x)
print("second derivative:", second, " true 6x + 2:", 6 * x.detach() + 2)

# %% [markdown]
# The decorator `@once_differentiable`, written under `@staticmethod`, runs backward with
# autograd off and, when the incoming gradient requires grad, attaches an error node to the
# result: a second backward that reaches it raises *"trying to differentiate twice a function
# that was marked with @once_differentiable"* instead of returning wrong numbers.
#
# Write `CubeOnce`, with `CubeOnce.apply(x)` returning `x ** 3`. Its backward is already
# marked `@once_differentiable` (imported in the setup cell); note where the decorator goes:
# under `@staticmethod`, directly above the `def`. Write forward and backward as usual; the
# cells after the self-check show what the decorator changes.

# %% nbgrader={"grade_id": "answer_CubeOnce", "solution": true}
class CubeOnce(torch.autograd.Function):
    """y = x ** 3, with a backward that refuses to be differentiated."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        return x ** 3
        ### END SOLUTION

    @staticmethod
    @once_differentiable  # under @staticmethod, directly above the def
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2
        ### END SOLUTION


# %% nbgrader={"grade_id": "CubeOnce", "grade": true, "points": 1}
self_check("CubeOnce", CubeOnce)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("CubeOnce", CubeOnce)
### END HIDDEN TESTS

# %% [markdown]
# A second backward through your `CubeOnce` now fails loudly. Here `sin` sits after it, so the
# gradient flowing into `CubeOnce`'s backward, $\cos(x^3)$, requires grad:

# %%
x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
first, = torch.autograd.grad(torch.sin(CubeOnce.apply(x)).sum(), x, create_graph=True)
try:
    first.sum().backward()
except RuntimeError as error:
    print("second backward:", str(error).splitlines()[0])

# %% [markdown]
# It is a guard, not a guarantee. The error node fires only when the gradient coming in
# requires grad **and** the second pass actually runs through the node:
#
# - with `CubeOnce.apply(x).sum()` directly, the incoming gradient is a constant 1, no error
#   node is attached, and the cube's share of the second derivative silently disappears;
# - `torch.autograd.grad(..., inputs=x)` runs only the nodes that lead to `x`, and the error
#   node does not (it ends in a detached copy of the result). Instead of the clear message you
#   get *"appears to not have been used in the graph"*, and `torch.autograd.functional.hvp`,
#   which allows unused inputs, silently reports zeros.
#
# `gradgradcheck` is the reliable test: it fails for a backward that is not truly
# differentiable, marked or not.

# %%
x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
first, = torch.autograd.grad((CubeOnce.apply(x) + x ** 2).sum(), x, create_graph=True)
second, = torch.autograd.grad(first.sum(), x)
print("plain sum, second derivative:", second, " true:", 6 * x.detach() + 2)

_, hvp = torch.autograd.functional.hvp(lambda x: torch.sin(CubeOnce.apply(x)).sum(),
                                       x.detach(), torch.ones(2, dtype=torch.float64))
print("functional.hvp through CubeOnce:", hvp)
try:
    torch.autograd.gradgradcheck(CubeOnce.apply, (x,))
except GradcheckError as error:
    print("gradgradcheck:", str(error).splitlines()[0])

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | saving an intermediate such as `sigmoid(beta * x)` | second derivatives silently wrong | save inputs or outputs and recompute, or return it as an output |
# | `.detach()`, `.data`, `torch.no_grad()` or NumPy inside backward | second derivatives silently wrong or zero | plain tensor ops on `ctx.saved_tensors` and `grad_output` |
# | `ctx.beta = beta.item()` | no derivative with respect to `beta` the second time | `ctx.save_for_backward(x, beta)` |
# | in-place ops in backward (`s.mul_(1 - s)`) | with `create_graph=True`: "modified by an inplace operation" | out-of-place ops |
# | `@once_differentiable` on a backward that is differentiable | double backward refused for nothing | leave it off |
# | a NumPy or kernel backward without `@once_differentiable` | silently wrong second derivatives | mark it |
# | trusting `@once_differentiable` to catch everything | `hvp` returns zeros, plain sums lose terms | test with `gradgradcheck` |
# | `gradgradcheck` in float32 | spurious failures | float64 |
#
# ## Where popular write-ups get it wrong
#
# - **Saving an intermediate in a double-backward example.** A popular guide saves
#   `sigmoid(beta * x)` with `save_for_backward` to spare a recomputation. `save_for_backward`
#   keeps the graph links of inputs and outputs only, so that code gets first derivatives right
#   and second derivatives wrong, as the trap above shows; `gradcheck` alone never notices,
#   only `gradgradcheck` does.
# - **Tensors as `ctx` attributes.** One text forbids `ctx.mask = mask` in its rules and then
#   does exactly that in two of its examples. The rule is right, though the reason usually
#   given, that it breaks double backward, holds only for intermediates. As shown above, the
#   costs are the lost in-place check, the reference cycle for outputs, wrong second
#   derivatives for intermediates, and invisibility to saved-tensor hooks (lesson 05).
#
# ## Summary
#
# With `create_graph=True` autograd records your backward, so your backward must be built
# from differentiable ops on saved inputs, saved outputs and `grad_output`; recompute
# intermediates instead of saving them. `gradgradcheck` tests it. A backward that cannot be
# differentiated gets `@once_differentiable`, a guard worth having and worth not trusting
# blindly. Next lesson: recomputation on purpose, to save memory.
