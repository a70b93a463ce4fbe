# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 00 · The anatomy of a custom autograd Function
#
# PyTorch differentiates almost everything you write. This course is about the cases where
# you take over: you write the forward computation **and** its gradient yourself, in a
# `torch.autograd.Function`.
#
# By the end of this lesson you can:
# 1. say what `forward`, `backward`, `ctx` and `.apply` each do;
# 2. derive a backward from the chain rule, and decide what forward must save for it;
# 3. handle several inputs, some of them plain Python numbers;
# 4. verify a backward with `torch.autograd.gradcheck`.
#
# Exercises are marked **✎ Exercise**. Each has a self-check cell you can run as often as you
# like; when you submit, hidden tests check more (more shapes, float32 and float64, and a GPU
# when there is one).

# %% nbgrader={"locked": true}
import warnings

import matplotlib.pyplot as plt
import torch

from autograder import self_check
from widgets import backward_flow, inspect_saved

_ = torch.manual_seed(0)

# %% [markdown]
# ## Why write your own backward?
#
# Autograd records every operation of the forward pass and replays their derivatives
# backwards. That is exactly right most of the time. You write a `Function` when:
#
# - **the formula autograd would differentiate is unstable**, but you know a stable gradient
#   (lesson 01);
# - **you want a different gradient on purpose**, such as a straight-through estimator for
#   an operation whose true derivative is zero almost everywhere (lesson 03);
# - **memory matters**: autograd keeps every intermediate it might need, while you can keep
#   less and recompute (lessons 02, 05, 06);
# - **you call code autograd cannot see**: a CUDA kernel, a C library, a NumPy routine.
#
# If none of these applies, compose ordinary tensor operations and let autograd do the work.

# %% [markdown]
# ## The maths: backward is a vector-Jacobian product
#
# Say a loss $L$ depends on $y = f(x)$. Autograd hands your backward the gradient of the loss
# with respect to your **output**, called `grad_output` $= \partial L / \partial y$.
# Your backward returns the gradient with respect to your **input**, by the chain rule:
#
# $$\frac{\partial L}{\partial x_j} = \sum_i \frac{\partial L}{\partial y_i}\,
#   \frac{\partial y_i}{\partial x_j}
#   \qquad\text{that is}\qquad
#   \texttt{grad\_input} = \texttt{grad\_output}^\top J .$$
#
# You never build the Jacobian $J$. For an element-wise function, $J$ is diagonal and the
# product is just `grad_output * f'(x)`.

# %% [markdown]
# ## Worked example: `Cube`
#
# $y = x^3$, so $\partial y/\partial x = 3x^2$ and `grad_input = grad_output * 3 * x**2`.
# Backward needs `x`, so forward saves it.

# %%
class Cube(torch.autograd.Function):
    """y = x ** 3."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)  # tensors for backward go through save_for_backward
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * 3 * x ** 2  # d/dx x**3 = 3x**2


# %% [markdown]
# Four things to notice:
#
# - `forward` and `backward` are `@staticmethod`s. Their first argument, `ctx`, is a context
#   object that carries information from forward to backward.
# - Inside `forward`, autograd is switched off: the operations you run there are **not**
#   recorded. Your `backward` is the only gradient autograd will use.
# - `backward` returns **one gradient per input of forward**.
# - You call a Function with `Cube.apply(x)`, never `Cube()(x)` or `Cube.forward(...)`:
#   `apply` is what links the output into the autograd graph.

# %%
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
y = Cube.apply(x)
y.sum().backward()
print("y      =", y.detach())
print("x.grad =", x.grad, " (3x² =", 3 * x.detach() ** 2, ")")
print("y.grad_fn is a", type(y.grad_fn).__name__)

# %% [markdown]
# ### Look inside: what forward saved
#
# `inspect_saved` runs `Cube.forward` once and lists what went through `save_for_backward`:
# one tensor, the input `x` itself, so saving it cost no new memory. Untick
# `x.requires_grad`: autograd then records nothing, and forward's `ctx` is thrown away.

# %%
inspect_saved(Cube, torch.tensor([-1.0, 0.5, 2.0]))

# %% [markdown]
# ### Watch the gradient flow back
#
# The graph autograd built for `(Cube.apply(x) * w).sum()`: your Function is one node among
# PyTorch's own. Press **next ▶** to run backward one node at a time. `MulBackward0` sends
# `grad_output * w` to `Cube`, whose backward multiplies it by $3x^2$ on its way to `x.grad`.

# %%
x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
w = torch.tensor([2.0, 1.0, -1.0], requires_grad=True)
backward_flow((Cube.apply(x) * w).sum(), names={"x": x, "w": w})

# %% [markdown]
# ## Check a backward with `gradcheck`
#
# `torch.autograd.gradcheck` compares your backward with **finite differences**,
# $\big(f(x+\varepsilon) - f(x-\varepsilon)\big) / 2\varepsilon$, for every input element.
# Use **float64**. **Predict, then run:** `Cube`'s backward is exact. Does it pass `gradcheck`
# on five random inputs in float64? And in float32?

# %%
x64 = torch.randn(5, dtype=torch.float64, requires_grad=True)
print("float64:", torch.autograd.gradcheck(Cube.apply, (x64,)))

x32 = x64.detach().float().requires_grad_()
try:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gradcheck also warns that float32 is not double
        torch.autograd.gradcheck(Cube.apply, (x32,))
except RuntimeError as error:  # gradcheck raises GradcheckError, a RuntimeError
    print("float32:", str(error).splitlines()[0])

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# float64 passes; float32 fails, although the backward is exact. With
# $\varepsilon = 10^{-6}$, float32's seven significant digits leave the difference quotient
# mostly rounding noise. It is not bad luck: in float32, `Cube` fails `gradcheck` for every
# one of 20 random inputs we tried (seeds 0 to 19). A failing float32 `gradcheck` tells you
# nothing about your backward; run it in float64.
# </details>

# %% [markdown]
# And the picture: the derivative our backward computes, against autograd's own derivative of
# `x ** 3` (computed without our Function). The two curves should coincide.

# %%
xs = torch.linspace(-2, 2, 101, requires_grad=True)
Cube.apply(xs).sum().backward()
ours = xs.grad.clone()

xs_plain = xs.detach().requires_grad_()
(xs_plain ** 3).sum().backward()

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(xs.detach(), (xs ** 3).detach(), label="forward: $x^3$")
ax.plot(xs.detach(), ours, lw=3, alpha=0.6, label="our backward: $3x^2$")
ax.plot(xs.detach(), xs_plain.grad, "k--", lw=1, label="autograd's derivative")
ax.set_xlabel("x")
ax.legend()
ax.set_title("Cube: forward and gradient")
plt.show()

# %% [markdown]
# ## ✎ Exercise 1 · `Square`
#
# Write `Square`, with `Square.apply(x)` returning `x ** 2` element-wise. Answer on paper
# first:
#
# 1. Write $\partial y_i / \partial x_j$. Which entries of the Jacobian are non-zero?
# 2. Backward receives `grad_output` $= \partial L / \partial y$. Write what it returns, with
#    the chain rule from the top of this lesson. Where does `grad_output` appear?
# 3. What must forward save so that backward can compute that? Forward has two tensors at
#    hand, the input $x$ and the output $y$: would either do? Would the output?
#
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# 1. $\partial y_i / \partial x_j = 2x_i$ if $i = j$, else $0$: a diagonal Jacobian.
# 2. $\texttt{grad\_input}_j = \sum_i \texttt{grad\_output}_i\, \partial y_i/\partial x_j
#    = \texttt{grad\_output}_j \cdot 2x_j$, so `grad_output * 2 * x`. Without `grad_output`
#    the result is right only when `grad_output` is all ones, as after `.sum()`.
# 3. Backward needs $x$: save it with `ctx.save_for_backward(x)`. It costs no new memory,
#    since the caller holds $x$. The output will not do: $y = x^2$ has lost the sign of $x$
#    (the experiment after the self-check shows what that costs).
# </details>

# %% nbgrader={"grade_id": "answer_Square", "solution": true}
class Square(torch.autograd.Function):
    """y = x ** 2."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        return x ** 2
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        return grad_output * 2 * x  # d/dx x**2 = 2x
        ### END SOLUTION


# %% nbgrader={"grade_id": "Square", "grade": true, "points": 1}
self_check("Square", Square)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Square", Square)
### END HIDDEN TESTS

# %% [markdown]
# ### Could forward have saved its output?
#
# **Predict, then run.** `SquareFromOutput` saves $y = x^2$ and recovers $x$ as $\sqrt{y}$.
# Does it pass `gradcheck`? For which inputs is its gradient wrong?

# %%
class SquareFromOutput(torch.autograd.Function):
    """y = x ** 2, saving the output and recovering x as sqrt(y)."""

    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * 2 * y.sqrt()  # sqrt(x ** 2) is |x|, not x


x = torch.tensor([-1.5, -0.5, 0.5, 1.5], dtype=torch.float64, requires_grad=True)
SquareFromOutput.apply(x).sum().backward()
print("x.grad =", x.grad.tolist(), " (2x =", (2 * x.detach()).tolist(), ")")
try:
    torch.autograd.gradcheck(SquareFromOutput.apply, (x,))
except RuntimeError as error:
    print("gradcheck:", str(error).splitlines()[0])

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The gradient is right for positive $x$ and has the wrong sign for every negative $x$, so
# `gradcheck` fails: $\sqrt{x^2} = |x|$. Saving the output pays off only when the derivative
# can be written from it, and here it cannot. Lesson 01 meets functions where it can (the
# sigmoid, $\tanh$) and weighs the choice in memory.
# </details>

# %% [markdown]
# ## Several inputs, and inputs that are not tensors
#
# `forward` can take any arguments: tensors, numbers, flags. Two rules follow:
#
# 1. **`backward` returns exactly one value per forward input**, in the same order.
#    For an input that has no gradient (a Python number, a boolean mask) return `None`.
# 2. **Tensors go through `ctx.save_for_backward`**, read back with `ctx.saved_tensors`.
#    Anything else (floats, ints, shapes) can be stored as a plain attribute: `ctx.alpha = alpha`.
#
# Why the difference? A tensor that goes through `save_for_backward` is guarded: if it is
# modified in place before backward runs, backward raises an error instead of computing a
# silently wrong gradient. It is also visible to saved-tensor hooks, through which PyTorch
# moves saved tensors to the CPU (`torch.autograd.graph.save_on_cpu`) or recomputes them
# (checkpointing, lesson 05), and with which lessons 01 and 05 measure what a graph keeps.
# And saving an output this way makes no reference cycle, where `ctx.y = y` does: `y.grad_fn`
# is `ctx` itself, so the graph stays alive until Python's cycle collector runs. A tensor on a
# plain attribute, `ctx.x = x`, loses all three.
# Double backward is another matter (lesson 04): an input or output on `ctx` still works, and
# an intermediate gives wrong second derivatives however it is kept.
#
# Two more details of `ctx`: `save_for_backward` is meant to be called once, with every tensor,
# and `ctx.saved_tensors` is meant for backward. **Predict, then run:** `SavesTwice` calls
# `save_for_backward` twice and prints `ctx.saved_tensors` in forward and in backward. What
# do the two prints show, and which of `a` and `b` gets a gradient?

# %%
class SavesTwice(torch.autograd.Function):
    """y = a * b, saved in two calls: the second call replaces the first."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a)
        ctx.save_for_backward(b)  # replaces (a,): write ctx.save_for_backward(a, b)
        print("ctx.saved_tensors inside forward: ", ctx.saved_tensors)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        print("ctx.saved_tensors inside backward:", ctx.saved_tensors)
        b, = ctx.saved_tensors  # a is gone, so there is no gradient for b
        return grad_output * b, None


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([10.0, 20.0], requires_grad=True)
SavesTwice.apply(a, b).sum().backward()
print("a.grad =", a.grad, " b.grad =", b.grad)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Inside forward `ctx.saved_tensors` is `()`, even after two calls. Inside backward it holds
# only `b`: the second call replaced `(a,)`. So `a` gets its gradient, `b` gets `None`, and
# nothing warns you. The correct forward saves both in one call.
# </details>

# %% [markdown]
# `ctx.needs_input_grad` is a tuple of booleans, one per forward input: entry $i$ is whether
# input $i$ required grad when forward ran. Use it to skip work: a gradient for an input that
# does not require grad is thrown away anyway, so return `None` for it.

# %%
class Affine(torch.autograd.Function):
    """y = alpha * x + b, with alpha a Python float."""

    @staticmethod
    def forward(ctx, x, b, alpha):
        ctx.alpha = alpha  # a float: a plain attribute is fine
        return alpha * x + b

    @staticmethod
    def backward(ctx, grad_output):
        print("needs_input_grad =", ctx.needs_input_grad)
        grad_x = grad_output * ctx.alpha if ctx.needs_input_grad[0] else None
        grad_b = grad_output if ctx.needs_input_grad[1] else None
        return grad_x, grad_b, None  # None for alpha, which is not a tensor


x = torch.randn(3, requires_grad=True)
b = torch.zeros(3)  # no gradient wanted
Affine.apply(x, b, 2.0).sum().backward()
print("x.grad =", x.grad)

# %% [markdown]
# **Predict, then run.** Now `b` requires grad, but we ask `torch.autograd.grad` for the
# gradient of `x` alone. What does backward print for `ctx.needs_input_grad`?

# %%
b = torch.zeros(3, requires_grad=True)
grad_x, = torch.autograd.grad(Affine.apply(x, b, 2.0).sum(), [x])

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `(True, True, False)`. `needs_input_grad` records `requires_grad` at forward time, not which
# gradients this backward call will deliver: backward computes `grad_b`, and autograd
# discards it.
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `WeightedSum`
#
# Write `WeightedSum`, with `WeightedSum.apply(x1, x2, w1, w2)` returning `w1 * x1 + w2 * x2`,
# where `x1` and `x2` are tensors of the same shape and `w1`, `w2` are Python floats.
# Answer on paper first:
#
# 1. Backward returns four values. Which inputs get a gradient, and what goes in the other
#    places?
# 2. Write $\partial y_i / \partial x_{1,j}$ and $\partial y_i / \partial x_{2,j}$. Which of
#    the four inputs do they depend on?
# 3. So what must forward keep for backward, and where: `save_for_backward`, plain attributes,
#    or nothing?
#
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# 1. `x1` and `x2` (when they require grad, by `ctx.needs_input_grad`); `None` for the floats
#    `w1` and `w2`.
# 2. $w_1 \delta_{ij}$ and $w_2 \delta_{ij}$: they depend on the weights only, not on any
#    tensor. So `grad_x1 = grad_output * w1` and `grad_x2 = grad_output * w2`.
# 3. No tensor at all: keep `w1` and `w2` as plain attributes, `ctx.w1 = w1`. A Function that
#    saves nothing keeps no memory alive between the passes.
# </details>

# %% nbgrader={"grade_id": "answer_WeightedSum", "solution": true}
class WeightedSum(torch.autograd.Function):
    """y = w1 * x1 + w2 * x2, with w1 and w2 Python floats."""

    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ### BEGIN SOLUTION
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        grad_x1 = grad_output * ctx.w1 if ctx.needs_input_grad[0] else None
        grad_x2 = grad_output * ctx.w2 if ctx.needs_input_grad[1] else None
        return grad_x1, grad_x2, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "WeightedSum", "grade": true, "points": 1}
self_check("WeightedSum", WeightedSum)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("WeightedSum", WeightedSum)
### END HIDDEN TESTS

# %% [markdown]
# ## When a gradient's shape differs from its input's
#
# A common belief: a gradient *must* have exactly its input's shape, "or it errors".
# **Predict, then run.** `GradientOfShape` returns ones of a chosen shape. For an input of
# shape $(3,)$ with a gradient of shape $(2, 3)$, and an input of shape $(2, 3)$ with a
# gradient of shape $(1, 3)$: which raises, and what does the other give?

# %%
class GradientOfShape(torch.autograd.Function):
    """Identity forward; backward returns ones of a chosen shape."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = shape
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones(ctx.shape), None


for input_shape, grad_shape in [((3,), (2, 3)), ((2, 3), (1, 3))]:
    x = torch.ones(input_shape, requires_grad=True)
    try:
        GradientOfShape.apply(x, grad_shape).sum().backward()
        print(f"input {input_shape}, gradient {grad_shape}: summed to {x.grad.tolist()}")
    except RuntimeError as error:
        print(f"input {input_shape}, gradient {grad_shape}: error:", str(error).splitlines()[0])

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The belief is too strict. The engine's rule: if the input's shape **broadcasts** to the
# gradient's shape, autograd sums the gradient down to the input's shape for you, so $(2, 3)$
# becomes $(3,)$ with every entry $2$. Any other shape is an error: $(2, 3)$ does not
# broadcast to $(1, 3)$. Return gradients of the input's shape anyway: it is clearer.
# </details>

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `Square()(x)` or `Square.forward(ctx, x)` | no graph link or an error | `Square.apply(x)` |
# | `return 2 * x` in `Square.backward` | right only when `grad_output` is all ones (after `.sum()`), wrong in any larger graph | `grad_output * 2 * x`: the chain rule |
# | saving the output `y = x ** 2` for `Square` | the sign of `x` is lost: wrong gradients for negative `x` | save `x` |
# | `ctx.x = x` for a tensor | in-place changes go unnoticed, saved-tensor hooks miss it, an output makes a reference cycle | `ctx.save_for_backward(x)` |
# | too few gradients, e.g. 2 for `WeightedSum` | `RuntimeError: returned an incorrect number of gradients` | one value per input, `None` for `w1` and `w2` |
# | a gradient for a float input | `RuntimeError: ... not a Variable` | return `None` for it |
# | `gradcheck` on float32 | spurious failures | `dtype=torch.float64` |
# | reading `ctx.saved_tensors` in forward | it is `()` there | use the tensors forward already has |
# | two calls to `save_for_backward` | only the second call's tensors are kept | one call with every tensor |
#
# ## Summary
#
# A `Function` is a pair of static methods joined by `ctx`. `backward` receives
# `grad_output` and returns one gradient (or `None`) per forward input: the vector-Jacobian
# product. `gradcheck` in float64 is your first test. Next lesson: which tensors to save,
# and a sigmoid that stays finite at $x = \pm 800$.
