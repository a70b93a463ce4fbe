# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 07 · Several outputs, in place, and `None` gradients
#
# **About 120 minutes** for the main path (four exercises); the optional part after the
# **Summary** takes about 45 more.
#
# `torch.sort` and `torch.max(x, dim)` return values **and** indices, `torch.split` returns
# pieces, and `nn.ReLU(inplace=True)` overwrites its input to save memory. A custom Function
# can do both, with the parts of `ctx` lessons 00-06 never needed:
# `ctx.mark_non_differentiable` for an output with no gradient,
# `ctx.set_materialize_grads(False)` for `None` instead of zeros for an unused output, and one
# more call for a forward that overwrites its input, which Exercise 3 has you find. By the
# end you can write a backward that receives one `grad_output` per output, skip the work for
# unused outputs, write an in-place Function that autograd tracks, and decide what such a
# Function must save **before** it writes.

# %% nbgrader={"locked": true}
import math

import matplotlib.pyplot as plt
import torch

from autograder import self_check
from autograder.predictions import compare, written
from autograder.probes import AllocationLog
from widgets import outputs_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it
torch.set_printoptions(precision=4)


def first_line(error: BaseException) -> str:
    """The first line of an error message, which is where PyTorch says what went wrong."""
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"


# %% [markdown]
# ## The maths: one `grad_output` per output
#
# Let a Function map $x$ to outputs $y_1, \dots, y_k$ that the loss $L$ depends on. The chain
# rule adds one term per output:
#
# $$\frac{\partial L}{\partial x} \;=\; \sum_{j=1}^{k} J_j^\top\,
#   \frac{\partial L}{\partial y_j}, \qquad J_j = \frac{\partial y_j}{\partial x}.$$
#
# So `backward(ctx, grad_y1, ..., grad_yk)` receives **one gradient per output** and returns
# the **sum** of the vector-Jacobian products, one gradient per input (your
# `ReversibleCoupling` of lesson 05 received two). A term vanishes when the loss does not use
# $y_j$: autograd then builds a tensor of zeros for it by default (it *materialises* the
# gradient), or passes `None` after `ctx.set_materialize_grads(False)`. And a term vanishes
# when $y_j$ has no derivative at all (integer indices, a boolean mask), which
# `ctx.mark_non_differentiable(y_j)` declares.

# %% [markdown]
# ## Worked example: `SinCos`, two outputs
#
# `SinCos.apply(x)` returns $(\sin x, \cos x)$, so backward is
# `grad_sin * cos(x) - grad_cos * sin(x)`. The list `received` keeps what autograd handed
# backward.

# %%
received = []  # (grad_sin, grad_cos) of each backward call


class SinCos(torch.autograd.Function):
    """(sin x, cos x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        received.append((grad_sin, grad_cos))
        x, = ctx.saved_tensors
        return grad_sin * torch.cos(x) - grad_cos * torch.sin(x)  # one term per output


x = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
s, c = SinCos.apply(x)
(2 * s + 3 * c).sum().backward()
print("both outputs used:  grad_sin =", received[-1][0], " grad_cos =", received[-1][1])
print("x.grad =", x.grad, " (2 cos x - 3 sin x =", (2 * x.cos() - 3 * x.sin()).detach(), ")")

x.grad = None
s, c = SinCos.apply(x)
s.sum().backward()
print("only sin used:      grad_sin =", received[-1][0], " grad_cos =", received[-1][1])
print("gradcheck on both outputs:", torch.autograd.gradcheck(SinCos.apply, (x,)))

# %% [markdown]
# Nobody used `cos`, yet backward got a `grad_cos`: zeros that autograd allocated and that
# backward then multiplied by `sin(x)` for nothing. Hold that thought.
#
# ## Outputs without a gradient: `mark_non_differentiable`
#
# There is no derivative of "where the maximum is". `ctx.mark_non_differentiable(t)`, called
# in forward, tells autograd that the output `t` has none: `t` does not require grad, and a
# loss built on it alone raises instead of quietly giving zeros. Mark integer outputs too: the
# mark states the contract where a reader sees it, and keeps the Function right if the output
# ever becomes a float.

# %% [markdown]
# ## Sorting is a permutation: derive its backward
#
# Sorting the last dimension of $x$ gives `values[j] = x[indices[j]]`: forward **gathers** $x$
# along a permutation $\pi$ with $\pi(j) =$ `indices[j]`. Its Jacobian is a permutation matrix
# $P$ with $P_{j,\pi(j)} = 1$. On paper:
#
# 1. Write $\partial L/\partial x_i = \sum_j \frac{\partial L}{\partial\,\text{values}_j}
#    P_{ji}$. For a given $i$, which $j$ has $P_{ji} \ne 0$?
# 2. So which position of `grad_x` receives `grad_values[j]`? Forward **reads** `x` at the
#    indices. Is backward a read as well? (A Python loop over `j` is a fine first answer.)
# 3. The first guess below reads `grad_values` at the indices, as forward read `x`. Which
#    permutation does that apply, and for which permutations is it right by luck?
#
# Replace the guess until it matches autograd's `torch.sort` on one row. A batch of rows, each
# with its own permutation, is Exercise 1's to decide.

# %%
def my_sort_backward(grad_values, indices):
    """grad_x from grad_values and the indices torch.sort returned: your derivation."""
    ### BEGIN WORKED
    grad_x = torch.zeros_like(grad_values)
    grad_x[indices] = grad_values  # grad_x[indices[j]] = grad_values[j], for one row
    return grad_x
    ### LEARNER
    return grad_values.gather(-1, indices)  # the first guess: replace it with yours
    ### END WORKED


def check_sort_backward(my_sort_backward):
    """✓ or ✗ against autograd's torch.sort, on one row."""
    row = torch.tensor([0.3, -1.2, 2.5, 0.9, -0.4])
    for name, x in (("one row, shape (5,)", row),):
        values, indices = torch.sort(x)
        grad_values = 10 * torch.arange(1.0, x.numel() + 1).reshape(x.shape)
        leaf = x.clone().requires_grad_()
        torch.sort(leaf).values.backward(grad_values)
        try:
            yours = my_sort_backward(grad_values, indices)
        except Exception as raised:  # an error in your function, shown in one line
            print(f"✗ {name}: your code raised {first_line(raised)}")
            continue
        ok = isinstance(yours, torch.Tensor) and torch.equal(yours, leaf.grad)
        print("✓" if ok else "✗", name)
        for label, shown in (("indices", indices), ("grad_values", grad_values),
                             ("autograd's grad_x", leaf.grad), ("yours", yours)):
            print(f"    {label:>17}:", shown.tolist() if isinstance(shown, torch.Tensor) else shown)


check_sort_backward(my_sort_backward)

# %% [markdown]
# **Ties.** Where entries of $x$ are equal, which tied position each value comes from is a
# choice; `torch.sort` promises none unless asked for `stable=True`. Backward must use the
# indices forward returned: finding positions by comparing values finds every tied position.
#
# ## ✎ Exercise 1 · `SortWithIndices`
#
# Write `SortWithIndices.apply(x)`, returning `(values, indices)` of `torch.sort(x, dim=-1)`.
# Backward receives `grad_values` and `grad_indices` (zeros, which it ignores).
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `indices` are int64, each row a permutation with `x.gather(-1, indices) == values` (ties in any order), marked with `ctx.mark_non_differentiable`; at ties, the gradient of `x` follows your own `indices`.
# - Forward saves what backward needs and nothing besides, at most 8 bytes per element of `x` in all.
# - Backward allocates at most 64 bytes per element of `x`, whatever the length of a row.
#
# Your `my_sort_backward` handled one row: which op routes each row of a batch with its own
# row of `indices`, along the last dimension? And what does backward need of forward to route
# the gradient, in how many bytes per element?

# %% nbgrader={"grade_id": "answer_SortWithIndices", "solution": true}
class SortWithIndices(torch.autograd.Function):
    """(values, indices) = torch.sort(x, dim=-1); only the values carry a gradient."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)  # the permutation is all backward needs
        return values, indices
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        ### BEGIN SOLUTION
        indices, = ctx.saved_tensors
        # values[j] = x[indices[j]], so grad_x[indices[j]] = grad_values[j]: scatter it back
        return torch.zeros_like(grad_values).scatter(-1, indices, grad_values)
        ### END SOLUTION


# %% nbgrader={"grade_id": "SortWithIndices", "grade": true, "points": 2}
self_check("SortWithIndices", SortWithIndices)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SortWithIndices", SortWithIndices)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Only $j = \pi^{-1}(i)$ has $P_{ji} = 1$, so
#
# $$\frac{\partial L}{\partial x} = P^\top \frac{\partial L}{\partial\,\text{values}},
#   \qquad \text{i.e.} \qquad \text{grad\_x}[\pi(j)] = \text{grad\_values}[j].$$
#
# $P^\top$ is the inverse permutation: backward **scatters** `grad_values` back to the
# positions the values came from (or gathers it with $\pi^{-1}$). Gathering with $\pi$ itself
# applies $P$ again, which is right only for permutations that are their own inverse, such as
# an already sorted `x`. Nothing in it reads `x` or the values, so one permutation is all
# forward keeps: the indices themselves (no new memory, since forward returns them), their
# inverse, or an `int32` copy. `int16` or `int8` hold short rows only.
# </details>

# %% [markdown]
# ## `None` gradients: `set_materialize_grads(False)`
#
# For a small tensor `SinCos`'s zeros cost nothing; for an output of a gigabyte they cost a
# gigabyte, plus the work done with them. `ctx.set_materialize_grads(False)`, called in
# forward, makes autograd pass `None` instead, and `None` is not a tensor: which of
# backward's arguments can then be `None`? Both can be at once, when the graph reaches your
# Function but no gradient arrives (the optional part builds such a graph): autograd still
# calls backward, with `(None, None)`.
#
# **Pieces of `x`.** `x[..., :h]` and `x[..., h:]` cost nothing: they are **views**, sharing
# `x`'s memory. The caller of Exercise 2 writes into what it gets back, and into `x`: which
# ways of making a half hold up under that is one of the exercise's decisions.
#
# ## ✎ Exercise 2 · `SplitHalves`
#
# Write `SplitHalves.apply(x)`, returning `(x[..., :h], x[..., h:])` for
# `h = x.shape[-1] // 2` (the last dimension is even).
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - The caller may write into either half in place, and a write into `x` afterwards leaves both halves as they were.
# - A half the loss does not use costs nothing: no tensor is made for its gradient, and when no gradient reaches either half, backward allocates nothing.
# - Between forward and backward the Function keeps no tensor alive, `x` included.
# - Backward allocates at most 1.25 times the bytes of `x` in all, whichever halves the loss used.
#
# Each bullet leaves you a decision: how to make a half, what backward can be handed for one
# and what it returns then, what backward needs of forward, and how the one gradient is built.
# Decide before you write, and put your reasons in a comment in forward.

# %% nbgrader={"grade_id": "answer_SplitHalves", "solution": true}
class SplitHalves(torch.autograd.Function):
    """(x[..., :h], x[..., h:]) with h = x.shape[-1] // 2."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        # copies: a slice is a view of x (the chunks of a clone are views of the clone), which
        # the caller could not write into; nothing saved: the gradients backward receives
        # carry the shape, dtype and device of its result
        ctx.set_materialize_grads(False)  # an unused half's gradient arrives as None
        h = x.shape[-1] // 2
        return x[..., :h].clone(), x[..., h:].clone()
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_first, grad_second):
        ### BEGIN SOLUTION
        if grad_first is None and grad_second is None:
            return None
        known = grad_first if grad_first is not None else grad_second
        h = known.shape[-1]
        grad_x = known.new_zeros(*known.shape[:-1], 2 * h)  # the one tensor backward allocates
        if grad_first is not None:
            grad_x[..., :h] = grad_first
        if grad_second is not None:
            grad_x[..., h:] = grad_second
        return grad_x
        ### END SOLUTION


# %% nbgrader={"grade_id": "SplitHalves", "grade": true, "points": 2}
self_check("SplitHalves", SplitHalves)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SplitHalves", SplitHalves)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Each half is a copy, `x[..., :h].clone()`. A slice is a view of `x`; the chunks of
# `x.clone()` are views of the clone, and PyTorch refuses an in-place write into a view a
# Function returns; `.contiguous()` copies a slice only where it is not contiguous already (a
# 1-d `x`'s halves are). Autograd would make zeros for an unused half's gradient:
# `ctx.set_materialize_grads(False)` makes it `None`, so backward checks each. Forward saves
# nothing: the gradients backward receives carry every shape, dtype and device it needs. With
# both halves `None`: `None`, no allocation. Otherwise one new tensor of `x`'s shape is the
# least, and the known half must land in it without a second one: `grad.new_zeros(...)` with
# each known half copied into its slice, or the known half padded to full width
# (`torch.nn.functional.pad`). Zeros for the missing half and a `torch.cat` allocate twice.
# </details>

# %% [markdown]
# ## `SinCosLazy`: what the zeros cost
#
# `SinCos` with `set_materialize_grads(False)`, and a backward that skips the term of an
# unused `cos` (that case alone):

# %%
class SinCosLazy(torch.autograd.Function):
    """(sin x, cos x), skipping the term of cos when it went unused (that case alone)."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return torch.sin(x), torch.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        received.append((grad_sin, grad_cos))
        x, = ctx.saved_tensors
        if grad_cos is None:  # cos unused: its term is zero, so skip it
            return grad_sin * torch.cos(x)
        return grad_sin * torch.cos(x) - grad_cos * torch.sin(x)


x = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
SinCosLazy.apply(x)[0].sum().backward()
print("only sin used: grad_sin =", received[-1][0], " grad_cos =", received[-1][1])
print("x.grad =", x.grad)

# %% [markdown]
# `SinCosLazy` checks `grad_cos` only, but **every** gradient may now be `None`: use `cos`
# alone, and it fails:

# %%
try:
    SinCosLazy.apply(x)[1].sum().backward()
except TypeError as error:
    print(first_line(error))

# %% [markdown]
# What materialising costs, measured with `AllocationLog`: the bytes the ops of backward
# allocate when only `sin` is used, for `x` of one million float32 numbers.
#
# **Predict, then run.** How many tensors of `x`'s size does each backward allocate, `SinCos`
# and `SinCosLazy`? Count the ops in their `backward` bodies.

# %%
my_tensors_allocated = {"SinCos": None, "SinCosLazy": None}  # how many tensors of x's size


# %%
def backward_bytes(function, n=1_000_000):
    x = torch.randn(n, requires_grad=True)
    sin_x = function.apply(x)[0]
    grad_sin = torch.ones(n)
    with AllocationLog() as log:
        torch.autograd.grad(sin_x, x, grad_sin)
    return log.bytes


received.clear()
measured = {name: backward_bytes(f) for name, f in [("SinCos", SinCos),
                                                     ("SinCosLazy", SinCosLazy)]}
received.clear()
if written(my_tensors_allocated):  # the chart and the bytes, once both predictions are written
    fig, ax = plt.subplots(figsize=(6, 2.2))
    ax.barh(["SinCos (materialised zeros)", "SinCosLazy (None)"],
            [b / 2 ** 20 for b in measured.values()], color=["#56B4E9", "#E69F00"])
    ax.set_xlabel("MiB allocated during backward (x: 10⁶ float32, only sin used)")
    ax.invert_yaxis()
    plt.show()
for name, b in measured.items():
    if written(my_tensors_allocated):
        print(f"{name}: {b / 2 ** 20:.1f} MiB")
    compare(f"{name}: tensors of x's size", my_tensors_allocated[name],
            round(b / (4 * 1_000_000)))

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Six against two: the zeros for `grad_cos`, $\cos x$, $\sin x$, two products and their
# difference, against $\cos x$ and one product. The zeros are one of the six; the rest is the
# work backward then does with them.
# </details>

# %% [markdown]
# ## In place: writing into the input
#
# `torch.relu_(x)` overwrites its input instead of allocating an output. Rule 5 of the
# [Function contract](function_contract.md) forbids a Function to write into an input unless
# its exercise says so: Exercises 3 and 4 say so, and this section shows what autograd needs
# to hear. It checks in-place writes with two tools: every tensor has a **version counter**
# that each in-place op increments, and every tensor that needs a gradient is either a
# **leaf** (`.grad` accumulates there) or the output of a node in the graph (its `grad_fn`).
# A leaf that requires grad cannot be overwritten: its gradient is defined at the values it
# holds, and there is no earlier node to pass one to.

# %%
w = torch.tensor([-1.0, 2.0], requires_grad=True)
try:
    torch.relu_(w)
except RuntimeError as error:
    print(first_line(error))
print("w untouched:", w)

# %% [markdown]
# Clone it first (`w.clone()` has a `grad_fn`), or write under `torch.no_grad()`, as
# optimisers update parameters.
#
# A Function that writes into its input has to tell autograd so. `TripleUnmarked` does not:
# forward runs `x.mul_(3)` and returns `x`, backward returns `3 * grad_output`. On
# `x = a.clone()`, torch 2.13 shows three symptoms: a loss built on `x` afterwards gives `a`
# the gradient of the clone alone, not $3\times$ it (`x.grad_fn` is still `CloneBackward0`);
# writing into the returned tensor raises "Output 0 of TripleUnmarked is a view and is being
# modified inplace"; and a leaf that requires grad is overwritten silently. What did autograd
# never learn about `x`? Finding the `ctx` call that tells it is your first decision in
# Exercise 3 (`help(torch.autograd.function.FunctionCtx)` lists them); the optional part runs
# `TripleUnmarked` beside its fix.
#
# ## What to save before the write
#
# An in-place Function overwrites its input, so: **can backward compute the derivative from
# the output $y$ alone?** For each op below, write $dy/dx$ as a function of $y$, or say that
# $y$ is not enough: softplus, $y = \log(1 + e^x)$; $y = \tanh x$; $y = \sin x$;
# $y = x^3$. The checker compares yours with autograd's derivative from $x = -3$ to $3$.

# %%
NOT_ENOUGH = "y is not enough"
# each entry: a function of the tensor y that returns dy/dx, or NOT_ENOUGH (None: not answered)
my_derivative_from_y = {"softplus": None, "tanh": None, "sin": None, "cube": None}


# %% jupyter={"source_hidden": true}
def check_derivatives_from_y(answers):
    """Each answer against autograd's dy/dx; where y is not enough, two x that show it."""
    x = torch.arange(-3000, 3001, dtype=torch.float64) / 1000  # step 0.001, exact 0
    ops = {"softplus": torch.nn.functional.softplus, "tanh": torch.tanh, "sin": torch.sin,
           "cube": lambda t: t ** 3}
    for name, f in ops.items():
        leaf = x.clone().requires_grad_()
        true, = torch.autograd.grad(f(leaf).sum(), leaf)
        y = f(x)
        order = torch.argsort(y)  # neighbours in y, far apart in x, derivatives far apart
        gap = true[order].diff().abs()
        gap[(order.diff().abs() <= 1) | (y[order].diff().abs() >= 1e-3)] = 0
        pair = order[int(gap.argmax()):int(gap.argmax()) + 2].tolist() if gap.max() > 0.5 else None
        witness = (f"x = {x[pair[0]]:.3f} and {x[pair[1]]:.3f} give y = {y[pair[0]]:.3f} and "
                   f"{y[pair[1]]:.3f}, dy/dx = {true[pair[0]]:.3f} and {true[pair[1]]:.3f}"
                   if pair else "")
        answer = answers[name]
        if answer is None:
            print(f"  {name:>10}: not answered yet")
        elif isinstance(answer, str):
            print(f"{'✓' if pair else '✗'} {name:>10}: " + (
                f"right, y is not enough: {witness}" if pair else "no two x here share a y "
                "with different derivatives: y is enough, find the function"))
        else:
            try:
                got = torch.as_tensor(answer(y.clone()), dtype=torch.float64).expand_as(y)
            except Exception as error:  # shown, not raised: Run All goes on
                print(f"✗ {name:>10}: your function raised {first_line(error)}")
                continue
            error = (got - true).abs().nan_to_num(nan=math.inf)
            worst = int(error.argmax())
            print(f"✓ {name:>10}: matches autograd at all 6001 points" if error.max() < 1e-6
                  else f"✗ {name:>10}: at x = {x[worst]:.3f} (y = {y[worst]:.4f}) yours gives "
                  f"{got[worst]:.4f}, autograd {true[worst]:.4f}" + (
                      f"; and {witness}" if pair else ""))


check_derivatives_from_y(my_derivative_from_y)

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your checker is green</summary>
#
# Softplus, $\tanh$ and the cube are strictly increasing, so $y$ gives back $x$, and with it
# the derivative: $1 - e^{-y}$ for softplus, $1 - y^2$ for $\tanh$, $3\,|y|^{2/3}$ for the
# cube. For $\sin$, $\cos x = \pm\sqrt{1 - y^2}$ and the sign is lost: $x = 0.5$ and
# $x = \pi - 0.5$ share $y$, not $\cos x$. Being invertible is enough for $y$ to be enough.
# Is it needed?
# </details>

# %% [markdown]
# ## ✎ Exercise 3 · `ReLUInPlace`
#
# Write `ReLUInPlace.apply(x)`, clamping `x` to `>= 0` **in place**.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `x` itself is returned, written in place, and autograd knows it: a loss built on `x` afterwards gets the gradient through the clamp, and a leaf that requires grad gets autograd's own leaf RuntimeError (raised once forward has written; `torch.relu_` refuses before writing).
# - Afterwards `x == torch.relu(x)` exactly, and the gradient at $x = 0$ is 0, as `torch.relu`'s.
# - Forward allocates no tensor as large as `x` in bytes, the memory that writing in place saves.
# - Forward makes no tensor to save beyond one byte per element of `x`.
#
# Decide before you write forward, and put your reasons in a comment there. Which `ctx` call
# keeps away all three of `TripleUnmarked`'s symptoms? What does backward need, and can it
# read that from the output? Then what will you keep, at what cost in new bytes, and would it
# survive a later in-place write into the output by the rest of the model?

# %% nbgrader={"grade_id": "answer_ReLUInPlace", "solution": true}
class ReLUInPlace(torch.autograd.Function):
    """x clamped to >= 0, written into x; returns x itself."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        x.clamp_(min=0)  # overwrite x: no new tensor
        ctx.mark_dirty(x)  # autograd rewrites x's history and bumps its version
        ctx.save_for_backward(x)  # x now holds the output y
        return x
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, = ctx.saved_tensors
        return grad_output * (y > 0)  # y > 0 exactly where x > 0; 0 at x == 0
        ### END SOLUTION


# %% nbgrader={"grade_id": "ReLUInPlace", "grade": true, "points": 2}
self_check("ReLUInPlace", ReLUInPlace)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ReLUInPlace", ReLUInPlace)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# The clamp is not invertible (every $x \le 0$ becomes $0$), yet $y$ is enough: $y > 0$
# exactly where $x > 0$, so
#
# $$\frac{\partial L}{\partial x} = G \odot \mathbb{1}[y > 0],$$
#
# 0 at $x = 0$, where $y = 0$. Saving `x` after the write keeps the output: no extra memory.
# `ctx.mark_dirty(x)` is the call: autograd rewrites `x`'s history so that `x.grad_fn` is your
# backward, bumps its version, and raises the leaf error for you (after forward ran: the
# optional part shows what that means). Where $y$ is not enough is Exercise 4's question.
# </details>

# %% [markdown]
# ## ✎ Exercise 4 · `AbsInPlace` (transfer)
#
# Write `AbsInPlace.apply(x)`, writing $|x|$ into `x` **in place**. Nothing in this lesson
# works it through.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - As for `ReLUInPlace`: `x` itself is returned, written in place and known to autograd, a leaf that requires grad gets PyTorch's own RuntimeError, and afterwards `x == torch.abs(x)` exactly.
# - The gradient is `torch.abs`'s at every value of `x`, 0 at $x = 0$ included.
# - Forward allocates nothing of `x`'s size, and saves at most one byte per element of `x` in all.
# - Backward still works after the rest of the model writes into the returned `x` in place again.
#
# Decide before you write forward, and put your reasons in a comment there: what does
# backward need that the output no longer holds, and what is the least you can keep of it?
# Hints, collapsed; open them one at a time, only if you are stuck.
#
# <details><summary>Hint 1: the output</summary>
#
# After the write, $y = |x|$. Take $x = 2$ and $x = -2$: same $y$, and their derivatives?
# </details>
#
# <details><summary>Hint 2: the point $x = 0$</summary>
#
# Put a few exact zeros into `x`: is your gradient there `torch.abs`'s? If not, which other
# elements of `x` does what you saved confuse them with?
# </details>
#
# <details><summary>Hint 3: what you keep</summary>
#
# The derivative of $|x|$ takes how many different values over all $x$? How many bits does a
# per-element code for that many values need?
# </details>
#
# <details><summary>Hint 4: the way there</summary>
#
# Can it be computed after the write? On the way from $x$ to what you keep, each
# intermediate has $x$'s number of elements: how many bytes per element may each one have?
# </details>

# %% nbgrader={"grade_id": "answer_AbsInPlace", "solution": true}
class AbsInPlace(torch.autograd.Function):
    """|x| written into x in place; returns x itself, marked dirty; the gradient is
    torch.abs's, 0 at x == 0 included."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        # backward needs sign(x), three values that |x| has lost: computed before the write,
        # from two comparisons (one byte each; torch.sign(x) would be a float tensor of x's size)
        sign = (x > 0).to(torch.int8) - (x < 0).to(torch.int8)
        x.abs_()
        ctx.mark_dirty(x)
        ctx.save_for_backward(sign)
        return x
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        sign, = ctx.saved_tensors
        return grad_output * sign  # d|x|/dx = sign(x), 0 at x == 0
        ### END SOLUTION


# %% nbgrader={"grade_id": "AbsInPlace", "grade": true, "points": 2}
self_check("AbsInPlace", AbsInPlace)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("AbsInPlace", AbsInPlace)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $y = |x|$ is the same for $x$ and $-x$, whose derivatives differ: the output is not enough.
# With $\frac{d|x|}{dx} = \operatorname{sign}(x)$, $0$ at $0$ as `torch.abs` has it,
#
# $$\frac{\partial L}{\partial x} = G \odot \operatorname{sign}(x_\text{before}),$$
#
# and the tensor saved **alone** has to tell $-1$, $0$ and $+1$ apart: a bool holds two,
# `int8` all three, in the same one byte per element. It must be made before the write, and
# the way there matters: `torch.sign(x)` is a float tensor as large as `x`, where two
# comparisons, a bool each, give the same int8 sign. (With the output saved beside it, a bool
# of $x < 0$ would do, but a later in-place write into the output then breaks backward.)
# </details>

# %% [markdown]
# ## Summary
#
# Backward gets one gradient per output and returns the sum of their contributions, one
# gradient per input. `mark_non_differentiable` declares outputs with no gradient (integer
# outputs are treated so regardless). `set_materialize_grads(False)` trades the engine's
# zeros for `None`, which backward must then check. An in-place Function writes into `x`,
# calls `mark_dirty(x)` and returns `x`; without the mark, gradients through `x` are silently
# wrong and leaves are overwritten; with it, PyTorch guards leaves (after forward ran) and
# tracks the write with the version counter. What backward cannot recover from the output
# must be saved before the write, in as few bytes as it needs. Save the output when backward
# can use it and nothing will write into it again (0 extra bytes); otherwise save, before the
# write, the smallest new tensor backward needs (the price of leaving the output free). Next
# lesson: Functions that `torch.func` and `torch.compile` can work with.

# %% [markdown]
# ## Optional (not graded): more to try
#
# Everything from here on is off the main path: open what interests you. Your sort drawn and
# in a ranking loss; the explorer of which outputs got a gradient; `TripleUnmarked` run beside
# its fix; the common mistakes; `(None, None)`, views, what in-place ops keep, saving early
# and a later write; `ClampInPlace`, a learned range; `RowFractionsInPlace`.
#
# ### Your sort, drawn
#
# The five numbers of the derivation: each value leaves its position in forward (grey), and
# its gradient travels the same arrow backwards (orange).

# %%
five = torch.tensor([0.3, -1.2, 2.5, 0.9, -0.4])
values, indices = torch.sort(five)
grad_values = torch.tensor([10.0, 20.0, 30.0, 40.0, 50.0])
leaf = five.clone().requires_grad_()
torch.sort(leaf).values.backward(grad_values)
grad_x = leaf.grad  # autograd's

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 2.8))
panels = [(left, "forward gathers: values[j] = x[indices[j]]", "#999999", "x", five,
           "values", values, True),
          (right, "backward: each gradient travels its arrow back", "#E69F00", "grad_x",
           grad_x, "grad_values", grad_values, False)]
for ax, title, color, top_name, top, bottom_name, bottom, downwards in panels:
    for j, i in enumerate(indices.tolist()):
        start, end = ((i, 1), (j, 0)) if downwards else ((j, 0), (i, 1))
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="-|>", color=color, shrinkA=12, shrinkB=12))
    ax.text(-0.7, 1.12, top_name, ha="right", fontsize=9, fontweight="bold")
    ax.text(-0.7, -0.18, bottom_name, ha="right", fontsize=9, fontweight="bold")
    for position, value in enumerate(top.tolist()):
        ax.text(position, 1.05, f"[{position}]\n{value:g}", ha="center", fontsize=9)
    for position, value in enumerate(bottom.tolist()):
        ax.text(position, -0.05, f"[{position}]\n{value:g}", ha="center", va="top", fontsize=9)
    ax.set_xlim(-2.2, 4.5)
    ax.set_ylim(-0.45, 1.4)
    ax.axis("off")
    ax.set_title(title, fontsize=10)
plt.show()

print("autograd's grad_x:        ", grad_x)
print("gather with the indices:  ", grad_values.gather(0, indices), "(applies P again: wrong)")

# %% [markdown]
# Your sort inside a loss that weights the sorted values by rank, the core of ranking losses
# and of "trimmed" means that drop the largest entries. Each entry of `x` gets the weight of
# the rank it landed at:

# %%
ranked = torch.tensor([[0.3, -1.2, 2.5, 0.9, -0.4]], requires_grad=True)
values, indices = SortWithIndices.apply(ranked)
rank_weights = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
(values * rank_weights).sum().backward()
print("indices     :", indices)
print("x.grad      :", ranked.grad)
print("indices.requires_grad:", indices.requires_grad)

# %% [markdown]
# ## The explorer: which outputs got a gradient
#
# Tick the outputs that feed the loss (each is multiplied by fixed random weights and
# summed). The table shows, per output, what autograd handed your backward: a tensor, `None`,
# or zeros it materialised; and that output's share of the input gradient. Untick both halves
# of `SplitHalves` and there is no loss at all, so backward is never called: the call with
# `(None, None)` needs a graph that reaches your Function (the first optional section after
# the summary builds one).

# %%
outputs_explorer(SplitHalves, torch.randn(2, 4, dtype=torch.float64))

# %% [markdown]
# ### `TripleUnmarked`, run
#
# The unmarked Function of the in-place section, and its three symptoms:

# %%
class TripleUnmarked(torch.autograd.Function):
    """Writes 3 * x into x but does not call mark_dirty."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(3)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return 3 * grad_output  # d(3x)/dx = 3: nothing saved


def through_x(function):
    """Apply ``function`` to x = a.clone(), then backpropagate a loss built on x itself."""
    a = torch.tensor([-1.0, 0.5, 2.0, -3.0], requires_grad=True)
    x = a.clone()
    version = x._version
    y = function.apply(x)
    print(f"{function.__name__}: y is x: {y is x}; x.grad_fn: {type(x.grad_fn).__name__}; "
          f"version {version} -> {x._version}")
    (x * weights).sum().backward()  # a loss that uses x, the tensor the write changed
    print(f"   a.grad through x = {a.grad}   (true: {3 * weights})")


weights = torch.tensor([1.0, 2.0, 3.0, 4.0])
through_x(TripleUnmarked)

# %%
y = TripleUnmarked.apply(torch.tensor([-1.0, 2.0], requires_grad=True).clone())
try:
    y.add_(1)
except RuntimeError as error:
    print(first_line(error))

leaf = torch.tensor([-1.0, 2.0], requires_grad=True)
TripleUnmarked.apply(leaf)
print("unmarked, the leaf was overwritten silently:", leaf)

# %% [markdown]
# Autograd saw an input returned as it was: it handed back a new tensor object, a view of
# `x`, and left `x`'s own history untouched. `TripleMarked` is the same Function with
# `ctx.mark_dirty(x)` added, as yours has it. With the mark, autograd rewrites `x`'s history so
# that `x.grad_fn` is your backward, bumps its version, and raises the leaf error for you. The
# same loss through `x` now gets the true gradient, and a leaf that requires grad raises:

# %%
class TripleMarked(TripleUnmarked):
    @staticmethod
    def forward(ctx, x):
        x.mul_(3)
        ctx.mark_dirty(x)
        return x


through_x(TripleMarked)
leaf = torch.tensor([-1.0, 2.0], requires_grad=True)
try:
    TripleMarked.apply(leaf)
except RuntimeError as error:
    print("marked:", first_line(error))
print("but forward had already run, so the leaf is changed anyway:", leaf)

# %% [markdown]
# The last line is worth remembering: the built-in `torch.relu_` refuses **before** writing,
# while PyTorch's guard for a custom Function, `mark_dirty`, acts **after** forward ran, when
# autograd wraps the outputs; inside forward autograd is off, so nothing stops the write
# itself. A forward could check `x.is_leaf and x.requires_grad` and refuse earlier, but it
# cannot see whether the call was made under `torch.no_grad()` (`ctx.needs_input_grad` says
# `True` there too), so it would also refuse the writes PyTorch allows under `no_grad`.

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | saving the values (or `x`) as well as, or instead of, the indices | memory for nothing: routing a gradient needs only the permutation | save one permutation |
# | gathering `grad_values` with the indices | the permutation is applied twice instead of undone: wrong gradient | scatter back, the transpose of a gather |
# | `grad_x[..., indices] = grad_values` (or a loop over `j` of such writes) | every row's indices index every row: right on one row, wrong on a batch | an op that routes each row with its own row of indices |
# | finding positions by comparing values | ties receive the same gradient twice | use the indices forward returned |
# | `set_materialize_grads(False)` not called | backward gets tensors of zeros for unused outputs, allocated for nothing | call it in forward |
# | adding or concatenating a `None` gradient | `TypeError` as soon as an output goes unused | `if grad is None` before using it |
# | `torch.zeros` for a missing half, then `torch.cat` | the zeros materialisation you switched off, by hand | one tensor of the full shape |
# | returning views (`x[..., :h]`, or `x.clone().chunk(2, -1)`) from forward | writing into them raises; views of `x` change when `x` does | clone each half |
# | in place without `ctx.mark_dirty(x)` | a view comes back, `x` keeps its old history: silently wrong gradients; leaves overwritten silently | `ctx.mark_dirty(x)` and return `x` |
# | `ctx.mark_dirty(x)`, then `return x.view_as(x)` (or any tensor but `x`) | PyTorch raises "Some elements marked as dirty during the forward method were not returned as output" | return `x` itself |
# | an in-place forward that computes out of place and copies in (`x.copy_(torch.relu(x))`), or makes a float temporary (`torch.sign(x)`) | a tensor as large as `x`: the memory writing in place saves | an in-place op for the write; comparisons (a byte each) for what you keep |
# | writing through a boolean mask (`x[x < 0] *= -1`, `x[neg] = -x[neg]`, `masked_select`) | `x[mask]` copies the selected entries, and the kernel makes their int64 positions (at least 8 bytes per selected entry; `masked_select` makes 8 bytes for every entry of its mask): as large as `x` or larger | an in-place op over all of `x` (`x[mask] = 0`, a single value, takes `masked_fill_`'s path and makes neither) |
# | `ctx.save_for_backward(x)` before the write, to keep the input | autograd packs saved tensors when forward returns: backward gets the output, no error, a wrong gradient | save a new tensor computed before the write |
# | reading, after the write, something the write destroyed | wrong gradients (the sign of $\sin$'s derivative, or of $x$ under $|x|$) | save it before writing, in as few bytes as it needs |
# | `grad_output.mul_(mask)` in backward | corrupts a gradient autograd may still use | a new tensor |

# %% [markdown]
# ## Optional (not graded): `(None, None)`, views, what in-place ops keep, saving early, a later write
#
# Five short looks at what the main path stated without showing.
#
# **Both gradients `None`.** The graph reaches your Function but no gradient arrives when the
# one output used feeds an operation that returns no gradient: here `ZeroGrad`, a Function
# whose backward returns `None`. `SinCosLazy`'s backward is still called, with
# `(None, None)`, and its one check does not cover that case; your `SplitHalves` returns `None`
# there, and `x.grad` stays `None`.

# %%
class ZeroGrad(torch.autograd.Function):
    """Identity forward; backward sends no gradient on."""

    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return None


angles = torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
try:
    ZeroGrad.apply(SinCosLazy.apply(angles)[0]).sum().backward()
except TypeError as error:
    print(first_line(error))
print("received:", received[-1])

# %% [markdown]
# **Views returned by a Function of several outputs.** A Function returning the even and the
# odd entries of `x` as views: writing into one raises, with the message for a Function of
# several differentiable outputs (views of a clone of `x` would get the same one):

# %%
class EvenAndOddAsViews(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x[..., ::2], x[..., 1::2]  # views of x, not fresh tensors

    @staticmethod
    def backward(ctx, grad_even, grad_odd):
        # interleave the two back into x's layout (this demo never gets as far as backward)
        return torch.stack([grad_even, grad_odd], dim=-1).flatten(-2)


even, odd = EvenAndOddAsViews.apply(torch.randn(2, 4, requires_grad=True).clone())  # not a leaf
try:
    even.mul_(2)
except RuntimeError as error:
    print(first_line(error))

# %% [markdown]
# **What PyTorch's in-place ops keep. Predict, then run.** PyTorch's own in-place ops face the
# question of "What to save before the write". For `torch.tanh_` ($y$ is enough) and
# `torch.sin_` ($y$ is not), what does each keep for its backward: **the output** (the tensor
# it returns) or **a copy of the input** made before the write? And how many bytes of new
# memory does that cost, for `x` of 1000 float32 numbers (4000 bytes)?

# %%
my_kept = {"tanh_": None, "sin_": None}  # "the output" or "a copy of the input"
my_new_bytes = {"tanh_": None, "sin_": None}  # new bytes for x of 1000 float32


# %%
for name, op in [("tanh_", torch.tanh_), ("sin_", torch.sin_)]:
    kept = []  # every tensor autograd packs for the op's backward, as in lesson 01
    a = torch.randn(1000, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: kept.append(t) or t.detach(),
                                                  lambda t: t):
        y = op(a.clone())
    what = ["the output" if t is y else "a copy of the input" for t in kept]
    compare(f"{name:>6} keeps", my_kept[name], what[0] if len(what) == 1 else what)
    compare(f"{name:>6} new bytes", my_new_bytes[name],
            sum(0 if t is y else t.nbytes for t in kept))

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `torch.tanh_` keeps its output: backward computes $1 - y^2$ from it, and the tensor exists
# anyway, so it costs no new memory. `torch.sin_` cannot: $\cos x$ needs the sign the output
# lost, so before writing it keeps a copy of `x`, 4000 bytes, the memory the in-place write was
# meant to save. The clamp is like `torch.tanh_`: its output is enough, so `ReLUInPlace` may
# keep it for 0 new bytes.
# </details>

# %% [markdown]
# **Saving the input before the write. Predict, then run.** Where the output is not enough, as
# for $\sin$, could an in-place Function keep the input for free, by calling
# `ctx.save_for_backward(x)` **before** the write, while `x` still holds it? `SinSavedEarly`
# below saves `x`, then writes $\sin x$ into it, and
# its backward multiplies by $\cos$ of what it saved. Does backward see the input $a$, the
# output $\sin a$, or does autograd raise an error?

# %%
my_saved_early = None  # "input", "output" or "error"


# %%
class SinSavedEarly(torch.autograd.Function):
    """Saves x, then writes sin(x) into it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)  # before the write: x still holds the input here
        x.sin_()
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        saved, = ctx.saved_tensors
        seen.append(saved.detach().clone())
        return grad_output * torch.cos(saved)  # right only if saved is the input


seen = []  # what SinSavedEarly's backward found saved
a = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
try:
    SinSavedEarly.apply(a.clone()).sum().backward()
    outcome = "output" if torch.equal(seen[-1], a.detach().sin()) else "input"
    shown = [f"input a: {a.detach()}   sin(a): {a.detach().sin()}",
             f"backward sees: {seen[-1]}",
             f"a.grad: {a.grad}   the true gradient cos(a): {a.detach().cos()}"]
except RuntimeError as error:
    outcome, shown = "error", [first_line(error)]
if written({"saved early": my_saved_early}):  # what backward saw, once you have predicted
    print(*shown, sep="\n")
compare("backward sees", my_saved_early, outcome)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The output, and no error. `save_for_backward` only notes *which* tensors to keep; autograd
# packs them when forward returns, after the write, and then `x`, dirty and returned, is the
# output with its new version. So the place of the call inside forward changes nothing, and
# the gradient comes out silently wrong: $\cos(\sin a)$ instead of $\cos a$. To keep
# something of the input, forward must compute a **new** tensor from `x` before the write
# (at worst `x.clone()`, which costs the memory the in-place write saved).
# </details>

# %% [markdown]
# **A write after yours. Predict, then run.** After `y = ReLUInPlace.apply(x)`, the model
# scales the output in place, `y.mul_(2)`, as a residual branch or another in-place activation
# might. Does `y.sum().backward()` work, or raise? And with PyTorch's own `torch.relu_` and
# `torch.sin_` in place of yours? For each, ask first which tensor its backward needs, given
# that the write has destroyed the input; then whether that tensor is still intact after
# `y.mul_(2)`. For the built-ins, which tensor would you save in their place?

# %%
my_after_write = {"ReLUInPlace": None, "relu_": None, "sin_": None}  # "works" or "error"

# %%
for name, op in [("ReLUInPlace", ReLUInPlace.apply), ("relu_", torch.relu_),
                 ("sin_", torch.sin_)]:
    a = torch.randn(2, 4, requires_grad=True)
    try:
        y = op(a.clone())
        y.mul_(2)  # a second in-place write, into the output
        y.sum().backward()
        outcome = "works"
    except NotImplementedError:
        print(f"{name:>11}: not written yet")
        continue
    except RuntimeError as error:
        outcome = "error"
        inplace = "modified by an inplace" in str(error)
        if written(my_after_write):  # the error, once your three predictions are written
            print(f"{name:>11}:", "... has been modified by an inplace operation" if inplace
                  else first_line(error))
    compare(f"{name:>11}", my_after_write[name], outcome)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# A saved output is checked by its version, like any saved tensor: `mul_` bumps it, and
# backward raises because the $y$ it needs is gone. `torch.relu_` saves its output, and fails
# the same way; so does your `ReLUInPlace` if it saved `x`, while one that saved a mask made
# before the write works. `torch.sin_` works: its backward needs $\cos x$, whose sign the
# output has lost (as your checker showed), so before writing it keeps a copy of $x$ as it was
# (a `saved_tensors_hooks` shows one float tensor of $x$'s shape), and the output stays free
# for further in-place writes. In its place you could save the output and a bool with the
# sign of $\cos x$, one byte per element instead of four, but then `y.mul_(2)` breaks
# backward, as it does `torch.relu_`'s. So save the output only when backward needs it; when
# it does not, save a new tensor, as small as backward allows, and leave the output to the
# rest of the model.
# </details>

# %% [markdown]
# <details><summary><b>Optional: in practice</b> (not graded; open when you have time)</summary>
#
# **What an in-place activation saves.** Your `ReLUInPlace` in a small network,
# $\sum (\mathrm{relu}(x W^\top + b))^2$ with `W` of $1000 \times 1000$ and a batch of 64,
# against `torch.relu`: the same weight gradient, and forward allocates one activation fewer.
# Measured with `AllocationLog`, run on 2.13: 750 KiB for `torch.relu`, 500 KiB for the
# in-place Function, the difference 250 KiB, one $64 \times 1000$ float32 tensor; the two
# weight gradients are equal bit for bit. Saving `x` costs nothing extra, since `x` is the
# output. Try it:
#
# ```python
# layer, inputs = torch.nn.Linear(1000, 1000), torch.randn(64, 1000)
# weight_grads = []
# for name, relu in [("torch.relu", torch.relu), ("ReLUInPlace", ReLUInPlace.apply)]:
#     layer.weight.grad = None
#     with AllocationLog() as log:
#         loss = relu(layer(inputs)).square().sum()
#     loss.backward()
#     weight_grads.append(layer.weight.grad)
#     print(name, f"{log.bytes / 2 ** 10:.0f} KiB")
# print("same weight gradient:", torch.equal(*weight_grads))
# ```
#
# **In-Place Activated BatchNorm** (InPlace-ABN, Rota Bulò et al., CVPR 2018) asks the question
# of "What to save before the write" at scale, as a way to fit bigger segmentation models:
# BatchNorm and a leaky ReLU write over their input, and since a leaky ReLU with a positive
# slope is invertible, backward rebuilds what it needs from the output and BatchNorm's few
# per-channel numbers.
# </details>

# %% [markdown]
# ## ✎ Optional (not graded): `ClampInPlace`, a learned range
#
# Quantisation-aware training often learns where to clip (PACT, Choi et al. 2018, learns the
# upper bound of a ReLU). Write `ClampInPlace.apply(x, lo, hi)`, writing
# `torch.clamp(x, lo, hi)` into `x` in place, with `lo < hi` two 0-d tensors that may require
# grad. The gradients of all three are `torch.clamp`'s, ties included: at $x = $ `lo`, which
# input gets the gradient? Run `torch.clamp` on such an $x$ and see. Save one tensor computed
# before the write, of at most one byte per element. The cell after yours compares your
# gradients with autograd's and counts the bytes you saved.

# %%
class ClampInPlace(torch.autograd.Function):
    """torch.clamp(x, lo, hi) written into x, for 0-d tensors lo < hi that may require grad."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ### BEGIN WORKED
        where = (x > hi).to(torch.int8) - (x < lo).to(torch.int8)  # -1 below, 0 in, 1 above
        x.clamp_(lo, hi)
        ctx.mark_dirty(x)
        ctx.save_for_backward(where)
        return x
        ### LEARNER
        raise NotImplementedError  # yours: clamp x in place, save at most one byte per element
        ### END WORKED

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN WORKED
        where, = ctx.saved_tensors
        zero = torch.zeros_like(grad_output)
        grad_lo = torch.where(where == -1, grad_output, zero).sum() if ctx.needs_input_grad[1] \
            else None
        grad_hi = torch.where(where == 1, grad_output, zero).sum() if ctx.needs_input_grad[2] \
            else None
        return torch.where(where == 0, grad_output, zero), grad_lo, grad_hi
        ### LEARNER
        raise NotImplementedError  # yours: the gradients of x, lo and hi
        ### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_clamp_in_place() -> None:
    """Your ClampInPlace against torch.clamp: gradients of x, lo and hi, ties included, and
    the bytes saved."""
    x = torch.tensor([[-2.0, -1.0, -0.5, 0.0], [0.5, 1.0, 3.0, -1.0]], dtype=torch.float64)
    upstream = torch.arange(1.0, 9.0, dtype=torch.float64).reshape(2, 4)
    leaves = [x.clone().requires_grad_(), torch.tensor(-1.0, dtype=torch.float64,
              requires_grad=True), torch.tensor(1.0, dtype=torch.float64, requires_grad=True)]
    want = torch.autograd.grad(torch.clamp(*leaves), leaves, upstream)
    saved = []

    def pack(tensor):
        saved.append(tensor.nbytes)
        return tensor.detach()  # not the tensor itself: a saved output would hold its own graph

    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            y = ClampInPlace.apply(leaves[0].clone(), leaves[1], leaves[2])
        got = torch.autograd.grad(y, leaves, upstream, allow_unused=True)
    except NotImplementedError:
        print("ClampInPlace is not written yet")
        return
    except Exception as error:  # shown, not raised: Run All goes on
        print(f"✗ ClampInPlace raised {type(error).__name__}: {first_line(error)}")
        return
    for name, g, w in zip(("x", "lo", "hi"), got, want):
        if g is None or g.shape != w.shape or not torch.allclose(g, w):
            print(f"✗ the gradient of {name}: got\n{g}\nexpected (torch.clamp's)\n{w}")
            return
    over = "" if sum(saved) <= x.numel() else ": more than one byte per element"
    print(f"{'✗' if over else '✓'} gradients of x, lo and hi match torch.clamp's; saved "
          f"{sum(saved)} bytes for {x.numel()} elements{over}")


check_clamp_in_place()

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your check is green</summary>
#
# Forward records, before it writes, where each element was:
# $s = \mathbb{1}[x > hi] - \mathbb{1}[x < lo]$, stored as int8, $-1$ below `lo`, $0$ inside,
# $1$ above.
# The written $x$ cannot tell you: a clamped element and one that sat exactly on the bound read
# the same. Backward sends each `grad_output` entry to one place: to $x$ where the element was
# inside, **ties included** (at $x =$ `lo` or $x =$ `hi` `torch.clamp` gives the gradient to
# $x$, not to the bound), to `lo` where it was below, to `hi` where it was above. A 0-d bound
# receives the sum over every element it clamped, as any broadcast input does. Each only when
# `ctx.needs_input_grad` asks for it.
# </details>

# %% [markdown]
# ## Optional (not graded): `RowFractionsInPlace`, a row's sum saved before the write
#
# The in-place ops above lose a sign, elementwise. Here is a different kind of information
# lost, across a row: not a sign, but a scale.
# `RowFractionsInPlace.apply(x)` divides each row of a positive `x` by its sum
# $s = \sum_k x_k$, in place, so that the row becomes fractions that add up to 1 (counts or
# weights turned into a distribution). With $y = x / s$,
# $\partial y_j / \partial x_k = (\delta_{jk} - y_j) / s$, so the vector-Jacobian product is
# $(g - (y \cdot g)\,\mathbf 1) / s$ for each row: every entry of $g$ less one number per row,
# divided by the sum. The fractions $y$ are the output; the sum is gone from them
# ($x = (1, 3)$ and $(2, 6)$ give the same $y$, and gradients that differ by a factor of 2). So
# forward saves $s$, **one number per row**, not a copy of `x`:

# %%
class RowFractionsInPlace(torch.autograd.Function):
    """Writes x / x.sum(-1) into x; saves the output and one sum per row."""

    @staticmethod
    def forward(ctx, x):
        total = x.sum(dim=-1, keepdim=True)  # a new tensor, shape (..., 1): the write forgets it
        x.div_(total)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, total)  # x is the output y now
        return x

    @staticmethod
    def backward(ctx, grad_output):
        y, total = ctx.saved_tensors
        along_y = (grad_output * y).sum(dim=-1, keepdim=True)  # y . g, one per row
        return (grad_output - along_y) / total


a = (torch.rand(3, 4, dtype=torch.float64) + 0.1).requires_grad_()
weights = torch.randn(3, 4, dtype=torch.float64)
(RowFractionsInPlace.apply(a.clone()) * weights).sum().backward()
b = a.detach().clone().requires_grad_()
(b / b.sum(dim=-1, keepdim=True) * weights).sum().backward()
print("same gradient as x / x.sum(-1, keepdim=True):", torch.allclose(a.grad, b.grad))
print("gradcheck:", torch.autograd.gradcheck(lambda t: RowFractionsInPlace.apply(t.clone()),
                                             ((torch.rand(3, 5, dtype=torch.float64) + 0.5)
                                              .requires_grad_(),)))
saved = []  # every tensor autograd packs for backward, as in lesson 01
with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t.detach(), lambda t: t):
    y = RowFractionsInPlace.apply(a.clone())
for t in saved:
    print("saved:", tuple(t.shape), t.nbytes, "bytes,", "the output" if t is y else "a new tensor")
print("a copy of x would take", a.nbytes, "bytes")

# %% [markdown]
# It saved its output, so a later in-place write into the output, as after `torch.relu_`,
# makes its backward raise:

# %%
y = RowFractionsInPlace.apply(a.clone())
y.mul_(2)
try:
    y.sum().backward()
except RuntimeError as error:
    print(first_line(error))

# %% [markdown]
# ## Optional (not graded): ties, integer and float outputs, the explorers, a stale saved tensor
#
# Five asides the main path pointed to.
#
# **How `torch.sort` orders ties. Predict, then run.** For a tensor of 32 numbers with many
# ties, do `torch.sort`'s default (`stable=False`) and `stable=True` return the same indices?

# %%
my_same_indices = None  # True or False


# %%
tied = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 2.0, 0.0] * 4)
agree = torch.equal(torch.sort(tied).indices, torch.sort(tied, stable=True).indices)
compare("default and stable=True agree", my_same_indices, agree)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Where this lesson was checked (torch 2.13, CPU) they did not; the line above says what they
# did on yours. `torch.sort` promises sorted values, not which of several equal entries
# comes first unless you ask for `stable=True`; the default may use a faster algorithm that
# orders ties differently, so on another machine or build they may agree: that is the point,
# nothing promises either answer. Both answers are valid permutations, so both lead to valid
# (different) gradients, as long as backward uses the indices forward returned.
# </details>

# %% [markdown]
# **An integer output left unmarked.** What if the output with no derivative is an integer
# tensor, and you forget to mark it? **Predict, then run.** `ArgMax` below returns the maximum
# and its `int64` index and marks nothing. Is `index.requires_grad` `True` or `False`? Its
# backward keeps the `grad_index` it receives: `None`, float zeros, integer zeros, or is
# backward called with one gradient only? Write both down first.

# %%
my_index_requires_grad = None  # True or False
my_grad_index = None  # "None", "float zeros", "integer zeros" or "not passed"


# %%
grad_index_received = []  # what ArgMax's backward was handed for index


class ArgMax(torch.autograd.Function):
    """(max, argmax) over the last dimension; the index is not marked."""

    @staticmethod
    def forward(ctx, x):
        values, index = x.max(dim=-1, keepdim=True)
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        return values, index

    @staticmethod
    def backward(ctx, grad_values, grad_index):
        grad_index_received.append(grad_index)
        index, = ctx.saved_tensors
        one_hot = torch.nn.functional.one_hot(index.squeeze(-1), ctx.shape[-1])
        return one_hot.to(grad_values.dtype) * grad_values  # the gradient goes to the argmax


values, index = ArgMax.apply(torch.tensor([[1.0, 5.0, 2.0]], requires_grad=True))
values.sum().backward()
if written({"requires_grad": my_index_requires_grad, "grad_index": my_grad_index}):
    print("unmarked integer output: index.requires_grad =", index.requires_grad, index.dtype)
    print("backward received grad_index =", grad_index_received[-1] if grad_index_received
          else "(not passed)")
handed = (["not passed"] + [
    "None" if g is None else "float zeros" if g.is_floating_point() else "integer zeros"
    for g in grad_index_received])[-1]
compare("index.requires_grad", my_index_requires_grad, index.requires_grad)
compare("grad_index", my_grad_index, handed)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `index.requires_grad` is `False` although nothing marked it: an `int64` tensor cannot
# require grad, so autograd treats it as non-differentiable by itself. Backward is still
# called with one gradient per output, and the one for `index` is a materialised tensor of
# integer zeros, `tensor([[0]])`, of the index's own shape and dtype.
# </details>
#
# Marked or not, it has no gradient; the mark says so where a reader can see it.

# %% [markdown]
# **A float output with no derivative.** A Function whose output is a float tensor with no
# meaningful derivative chooses what to tell autograd about it. Here `FracFloor.apply(x)`
# returns the fractional part $x - \lfloor x \rfloor$ and the integer part $\lfloor x \rfloor$
# as floats (the second as `torch.floor` gives it; `torch.frac` subtracts `trunc(x)` instead, so
# it gives -0.5 at -2.5 where this gives 0.5); the integer part is a step function, whose
# derivative is 0 wherever it exists. Once without and once with the mark:

# %%
class FracFloor(torch.autograd.Function):
    """(x - floor(x), floor(x)); floor has no derivative worth passing on."""

    @staticmethod
    def forward(ctx, x):
        whole = torch.floor(x)
        return x - whole, whole

    @staticmethod
    def backward(ctx, grad_frac, grad_whole):
        return grad_frac  # d(x - floor x)/dx = 1 between integers; grad_whole is ignored


class FracFloorMarked(FracFloor):
    @staticmethod
    def forward(ctx, x):
        whole = torch.floor(x)
        ctx.mark_non_differentiable(whole)
        return x - whole, whole


mixed = torch.tensor([-2.5, 0.5, 3.25], requires_grad=True)
print("unmarked: floor.requires_grad =", FracFloor.apply(mixed)[1].requires_grad)
print("marked:   floor.requires_grad =", FracFloorMarked.apply(mixed)[1].requires_grad)
try:
    FracFloorMarked.apply(mixed)[1].sum().backward()
except RuntimeError as error:
    print("backward from the marked floor:", first_line(error))

# %% [markdown]
# Unmarked, `floor` requires grad, and a loss built on it sends gradients into a backward that
# ignores them: a zero gradient, which is the derivative wherever it exists. PyTorch's own
# `torch.floor` makes that choice (its output requires grad, and `x.grad` comes back zeros).
# Marked, `floor` is a constant as far as autograd is concerned: later ops record no graph for
# it, and a loss built on it alone raises instead of quietly giving zeros. The mark is a
# contract you choose; without it, you promise a zero gradient.
#
# **The explorer on `SinCos`, your `SortWithIndices`, `ReLUInPlace` and `AbsInPlace`.**
# `SinCos` was written before `set_materialize_grads(False)`: untick an output and see what its
# backward is handed. The indices of your sort cannot feed a loss at all. The in-place ones have
# one output, a tensor `grad_output` when it feeds the loss; on `AbsInPlace`, watch the entry
# where $x = 0$, and compare the share of the input gradient with the signs of the input.

# %%
outputs_explorer(SinCos, torch.linspace(0, 3, 4, dtype=torch.float64))

# %%
outputs_explorer(SortWithIndices, torch.tensor([0.3, -1.2, 2.5, 0.9], dtype=torch.float64))

# %%
outputs_explorer(ReLUInPlace, torch.tensor([-1.0, 0.0, 0.5, 2.0], dtype=torch.float64))

# %%
outputs_explorer(AbsInPlace, torch.tensor([-1.5, 0.0, 0.5, -2.0], dtype=torch.float64))

# %% [markdown]
# **A stale saved tensor.** The saving of an in-place op is real only when nothing else needs
# the values it overwrites. Here `h` feeds both your in-place ReLU and a product with `w`,
# which saved `h` for its own backward (the gradient of `w` is `h`). After the write, that
# saved `h` is stale, and the version counter catches it in backward: this is when to use
# `torch.relu`, not the in-place op.

# %%
h = torch.randn(4, requires_grad=True) * 2
w = torch.randn(4, requires_grad=True)
product = h * w  # saves h (and w) for its backward
ReLUInPlace.apply(h)
try:
    (product.sum() + h.sum()).backward()
except RuntimeError as error:
    print(first_line(error))
