# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 02 · A linear layer by hand: shapes, skipped work and fused memory
#
# **About 120 minutes** for the main path, to the Summary: about 40 of reading and running, the
# rest solving the three exercises. The optional sections after the Summary take about 40 more.
#
# `torch.nn.Linear` computes $y = x W^\top + b$. Writing its backward yourself teaches
# gradients of matrix expressions, and two reasons custom Functions exist: **skipping
# gradients nobody needs**, and **fusing** two operations so that backward keeps less memory.
# By the end you can derive those gradients, shapes written down, for any leading dimensions;
# skip and count backward's work; fuse a linear layer with a ReLU; and differentiate an
# `einsum`.
#
# Exercises: **✎ 1 `MyLinearFunction`**, **✎ 2 `FusedLinearReLU`**, and `Bilinear`, which you
# write alone. Every Function you write obeys the course's
# [Function contract](function_contract.md); each self-check runs every check the hidden tests
# run. **Predict, then run**: write your prediction into the variable first; the next cell
# shows the measurement.

# %% nbgrader={"locked": true}
import itertools
import warnings

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.graph import saved_tensors_hooks
from torch.utils.flop_counter import FlopCounterMode

from autograder import self_check
from autograder.predictions import compare_all, written
from autograder.memory import TensorAccounting
from widgets import backward_flow, inspect_saved

_ = torch.manual_seed(0)
torch.set_printoptions(precision=4)


# %% [markdown]
# ## The maths: shapes first
#
# Take a batch of $N$ rows. The shapes are
#
# | | shape | meaning |
# |---|---|---|
# | $x$ | $(N, \text{in})$ | one input row per example |
# | $W$ | $(\text{out}, \text{in})$ | one row of weights per output feature (as in `nn.Linear`) |
# | $b$ | $(\text{out},)$ | one bias per output feature |
# | $y = x W^\top + b$ | $(N, \text{out})$ | |
# | $G = \partial L / \partial y$ | $(N, \text{out})$ | `grad_output`: always the shape of $y$ |
#
# Element by element, $\;y_{ni} = \sum_j x_{nj} W_{ij} + b_i$.

# %% [markdown]
# ## Derive the three gradients
#
# Backward receives $G$ and returns `grad_x`, `grad_weight` and `grad_bias`, each of its input's
# shape. Work them out on paper, one index at a time.
#
# **Step 1, the local derivative.** Write $\partial y_{ni} / \partial x_{mj}$. Which entries are
# non-zero? (Row $n$ of $y$ is computed from row $n$ of $x$ alone.)
#
# **Step 2, `grad_x`.** The chain rule sums over every output the variable touches:
# $\dfrac{\partial L}{\partial x_{mj}} = \sum_{n,i} G_{ni}\,
# \dfrac{\partial y_{ni}}{\partial x_{mj}}$. Simplify it with step 1 until one sum is left: over
# which index, and which two tensors does it multiply? Write it without a loop, and check its
# indices against $x$'s.
#
# **Step 3, `grad_weight`.** Which outputs $y_{ni}$ does $W_{ij}$ touch? Write
# $\partial L / \partial W_{ij}$ as a sum over one index, then without a loop, its indices in
# $W$'s order.
#
# **Step 4, `grad_bias`.** $b_i$ is added to $y_{ni}$ for every row $n$. What is
# $\partial L / \partial b_i$?
#
# **Check step 1 live**: write $\partial y_{ni} / \partial x_{mj}$ into `dy_dx`, as a lambda
# that returns one number. The checker compares every entry with autograd's Jacobian.
# (`dy_dW` is for later, if `grad_weight` stalls.)

# %%
### BEGIN WORKED
dy_dx = lambda n, i, m, j, x, W: W[i, j] if m == n else 0.0  # row n of y reads row n of x alone
dy_dW = lambda n, i, k, j, x, W: x[n, j] if k == i else 0.0  # row k of W makes feature k alone
### LEARNER
dy_dx = None  # step 1: lambda n, i, m, j, x, W: ... (the entry dy[n, i]/dx[m, j])
dy_dW = None  # step 3: lambda n, i, k, j, x, W: ... (the entry dy[n, i]/dW[k, j])
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_linear_entries():
    """Your dy_dx and dy_dW against autograd's Jacobians of x @ W.T (N = 2, out = 4, in = 3)."""
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, dtype=torch.float64, generator=generator)
    W = torch.randn(4, 3, dtype=torch.float64, generator=generator)
    cases = [("dy_dx", dy_dx, "(n, i, m, j)", lambda x: x @ W.T, x),
             ("dy_dW", dy_dW, "(n, i, k, j)", lambda W: x @ W.T, W)]
    for name, entry, letters, linear, wrt in cases:
        if entry is None:
            print(f"{name} ✗ not written yet")
            continue
        jacobian = torch.autograd.functional.jacobian(linear, wrt)  # [n, i, then wrt's indices]
        indices = list(itertools.product(*map(range, jacobian.shape)))
        try:
            yours = {index: float(entry(*index, x, W)) for index in indices}
        except Exception as error:  # shown, not raised: Run All goes on
            print(f"{name} ✗ raises {type(error).__name__}: {str(error).splitlines()[0][:70]}")
            continue
        wrong = [index for index in indices if abs(yours[index] - jacobian[index].item()) > 1e-12]
        if not wrong:
            print(f"{name} ✓ all {len(indices)} entries match autograd's Jacobian")
        else:
            first = wrong[0]
            print(f"{name} ✗ {len(wrong)} of {len(indices)} entries differ. The first: at "
                  f"{letters} = {first} you give {yours[first]:.4g}, autograd "
                  f"{jacobian[first].item():.4g}")


check_linear_entries()

# %% [markdown]
# <details><summary><b>Numbers to hit</b> (on paper, once you have the formulas)</summary>
#
# Take $x = \begin{pmatrix}1 & 2\\ 0 & -1\end{pmatrix}$,
# $W = \begin{pmatrix}1 & 0\\ 2 & -1\\ 0 & 3\end{pmatrix}$,
# $G = \begin{pmatrix}1 & 0 & 2\\ 0 & 1 & -1\end{pmatrix}$. Your formulas must give
# `grad_x` $= \begin{pmatrix}1 & 6\\ 2 & -4\end{pmatrix}$,
# `grad_weight` $= \begin{pmatrix}1 & 2\\ 0 & -1\\ 2 & 5\end{pmatrix}$ and
# `grad_bias` $= (1, 1, 1)$. Which $G$ and $W$ entries make `grad_x[0, 1]` $= 6$?
#
# Each gradient has the shape of its input: when unsure of a transpose, write the shapes next
# to the formula.
# </details>

# %% [markdown]
# ### Worked example: a parameter used at every position, `FeatureScale`
#
# `nn.Linear` also takes inputs with more leading dimensions than one batch. Here is what that
# does to a gradient, on an element-wise op: $y = x \odot s$, with $x$ of shape $(*, d)$ and one
# scale per feature, $s$ of shape $(d,)$. Call each position in the leading dimensions $p$.
#
# - $y_{pj} = x_{pj}\, s_j$ reads $x_{pj}$ alone, so
#   $\partial L / \partial x_{pj} = G_{pj}\, s_j$, shape $(*, d)$.
# - $s_j$ is read at **every** position, so the chain rule sums over all of them:
#   $\partial L / \partial s_j = \sum_p G_{pj}\, x_{pj}$, shape $(d,)$, whatever the number of
#   leading dimensions.
#
# A parameter shared by every position collects a sum over the positions; an input used at one
# position gets a gradient of its own shape there.

# %% [markdown]
# ## Leading dimensions: your turn to derive
#
# `nn.Linear` accepts $x$ of shape $(*, \text{in})$: a single vector $(\text{in},)$, a batch
# $(N, \text{in})$, a batch of sequences $(B, T, \text{in})$; the output and $G$ have shape
# $(*, \text{out})$. Call each position in the leading dimensions $p$.
#
# 1. Does your formula for `grad_x` still work when $G$ has shape $(B, T, \text{out})$?
#    (`@` treats every dimension but the last two as a batch.)
# 2. $W_{ij}$ is used at every position. Write $\partial L / \partial W_{ij}$ as a sum over $p$.
#    Each term is now an $(\text{out}, \text{in})$ matrix: how will you compute the whole sum,
#    whatever the number of leading dimensions, without a Python loop?
# 3. The same question for `grad_bias`.
# 4. Does your answer to 2 work for a single vector, $x$ of shape $(\text{in},)$?
#
# <details><summary><b>Numbers to hit</b> (after your attempt)</summary>
#
# Lay the two rows above out as $x$ of shape $(1, 2, 2)$ and $G$ of shape $(1, 2, 3)$:
# `grad_x` is the same numbers in shape $(1, 2, 2)$, and `grad_weight` and `grad_bias` are
# exactly the results above. For a single vector, $x = (1, 2)$ with $G = (1, 0, 2)$:
# `grad_weight` $= \begin{pmatrix}1 & 2\\ 0 & 0\\ 2 & 4\end{pmatrix}$ and
# `grad_bias` $= (1, 0, 2)$.
# </details>

# %% [markdown]
# ## Which gradients does backward pay for?
#
# Often only some gradients are wanted: in a network's first layer $x$ is data; in
# fine-tuning with frozen weights $W$ and $b$ need none, but $x$ does. Backward reads
# `ctx.needs_input_grad`, one boolean per forward input, and can compute only the gradients it
# asks for. `FlopCounterMode` counts the floating-point operations (FLOPs) of the matrix
# products run inside it: here, one backward through `F.linear` for every choice of inputs
# that require grad.
#
# **Predict, then run.** With $x$ of shape $(10, 6)$ and $W$ of shape $(4, 6)$, a product of a
# $(10, 4)$ and a $(4, 6)$ matrix costs $2 \cdot 10 \cdot 4 \cdot 6 = 480$ FLOPs. How many
# FLOPs does backward count when only `b` requires grad? Only `x`? All three?

# %%
### BEGIN WORKED
predicted_flops = {"b": 0, "x": 480, "x, W, b": 960}
### LEARNER
predicted_flops = {"b": None, "x": None, "x, W, b": None}
### END WORKED

# %%
IN, OUT, ROWS = 6, 4, 10
MATMUL_FLOPS = 2 * ROWS * OUT * IN  # one (ROWS, OUT) x (OUT, IN) product
CHOICES = [("x",), ("W",), ("b",), ("x", "W"), ("x", "b"), ("W", "b"), ("x", "W", "b")]


def backward_flops(linear, wanted):
    """FLOPs of one backward through linear(x, weight, bias) when only `wanted` need grad."""
    x = torch.randn(ROWS, IN, requires_grad="x" in wanted)
    weight = torch.randn(OUT, IN, requires_grad="W" in wanted)
    bias = torch.randn(OUT, requires_grad="b" in wanted)
    y = linear(x, weight, bias)
    with FlopCounterMode(display=False) as counter:
        y.backward(torch.ones_like(y))
    return counter.get_total_flops()


builtin = [backward_flops(F.linear, wanted) for wanted in CHOICES]
if written(predicted_flops):  # every choice, once your three predictions are written
    for wanted, flops in zip(CHOICES, builtin):
        print(f"requires grad: {', '.join(wanted):<8} backward FLOPs: {flops:>4}")
compare_all(predicted_flops, {", ".join(wanted): flops for wanted, flops in zip(CHOICES, builtin)
                          if ", ".join(wanted) in predicted_flops})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# 0, 480 and 960. Which gradients cost as much as the forward's product, and which costs
# nothing the counter counts (what kind of operation is it, then)? `F.linear` pays only for
# the gradients it is asked for; a backward that computes everything always pays 960. Yours
# should match it on every line.
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `MyLinearFunction`
#
# Write `MyLinearFunction`, with `MyLinearFunction.apply(x, weight, bias=None)` returning
# `F.linear(x, weight, bias)`: `x` of shape $(*, \text{in})$, `weight`
# $(\text{out}, \text{in})$, `bias` $(\text{out},)$ or `None`, with in and out at least 1.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - backward runs a matrix product, or sums `grad_output` for the bias, only for a gradient
#   `ctx.needs_input_grad` asks for;
# - backward computes each gradient from the formulas you derived, not by calling `F.linear`.
#
# Two questions before you write it:
#
# - Called as `MyLinearFunction.apply(x, weight)`, how many entries does
#   `ctx.needs_input_grad` have? So what must backward know before it reads an entry for the
#   bias, and who can tell it? (Called as `apply(x, weight, None)`, backward must return three
#   values.)
# - Which of `x` and `weight` does each gradient read? So what must forward keep when only `x`
#   needs a gradient?
#
# <details><summary><b>Hint</b> (if `grad_weight` is wrong)</summary>
#
# Write $\partial y_{ni} / \partial W_{kj}$ into `dy_dW` and rerun its checker. For which $k$
# is it non-zero? Then sum it against $G_{ni}$ over $n$ and $i$, as step 2 did.
# </details>

# %% nbgrader={"grade_id": "answer_MyLinearFunction", "solution": true}
class MyLinearFunction(torch.autograd.Function):
    """y = x @ weight.T + bias, with x of shape (*, in), weight (out, in), bias (out,) or None."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ### BEGIN SOLUTION
        needs_x, needs_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        # grad_weight reads x, grad_x reads weight: keep each only if it will be read
        ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None)
        ctx.has_bias = bias is not None  # a bool: a plain attribute
        y = x @ weight.T  # (*, in) @ (in, out) -> (*, out)
        if bias is not None:
            y = y + bias  # (out,) broadcasts over the leading dimensions
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight = ctx.saved_tensors  # None where forward kept nothing
        g2 = grad_output.reshape(-1, grad_output.shape[-1])  # (M, out)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight  # (*, out) @ (out, in) -> (*, in)
        if ctx.needs_input_grad[1]:
            x2 = x.reshape(-1, x.shape[-1])  # (M, in)
            grad_weight = g2.T @ x2  # (out, M) @ (M, in) -> (out, in)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = g2.sum(dim=0)  # (M, out) -> (out,)
        return grad_x, grad_weight, grad_bias
        ### END SOLUTION


# %% nbgrader={"grade_id": "MyLinearFunction", "grade": true, "points": 3}
self_check("MyLinearFunction", MyLinearFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MyLinearFunction", MyLinearFunction)
### END HIDDEN TESTS

# %% [markdown]
# The work your backward does, next to PyTorch's:

# %%
mine = [backward_flops(MyLinearFunction.apply, wanted) for wanted in CHOICES]
for wanted, flops, reference in zip(CHOICES, mine, builtin):
    verdict = "same" if flops == reference else "MORE WORK: check ctx.needs_input_grad"
    print(f"requires grad: {', '.join(wanted):<8} yours: {flops:>4}  F.linear: {reference:>4}"
          f"  {verdict}")

# %% [markdown]
# ## Fusing a linear layer and a ReLU
#
# A linear layer is very often followed by a ReLU: $y = \mathrm{relu}(z)$ with
# $z = x W^\top + b$. Left to autograd, the two are separate nodes, and each keeps what its own
# backward needs. Here is what they keep, listed with lesson 01's saved-tensor hooks.

# %%
def saved_tensors_of(compute):
    """Run compute(); return [(shape, dtype, bytes)] of what autograd saved, each memory once."""
    saved = []

    def pack(tensor):
        saved.append(tensor)
        return tensor.detach()  # not the tensor itself: a saved output would hold its own graph

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        compute()
    distinct = {}
    for t in saved:
        distinct.setdefault(t.untyped_storage().data_ptr(),
                            (tuple(t.shape), t.dtype, t.untyped_storage().nbytes()))
    return list(distinct.values())


def show_saved(label, compute):
    saved = saved_tensors_of(compute)
    print(f"{label}: {sum(nbytes for *_, nbytes in saved)} bytes")
    for shape, dtype, nbytes in saved:
        print(f"    {str(shape):<9} {str(dtype):<14} {nbytes:>5} bytes")


# named block_*: later cells rebind x and weight; the cells after Exercise 2 rerun on these
block_x = torch.randn(64, 32, requires_grad=True)  # float32: 4 bytes per number
block_weight = torch.randn(16, 32, requires_grad=True)
block_bias = torch.randn(16, requires_grad=True)
show_saved("F.linear, then torch.relu",
           lambda: torch.relu(F.linear(block_x, block_weight, block_bias)))

# %% [markdown]
# Three tensors: $x$ and $W$ for the linear's backward ($W$ as the transposed view `F.linear`
# multiplied by), and the ReLU's float output, 4 bytes per element. Nothing saves $z$, so it is
# freed once the ReLU has run.
#
# One Function that does both may keep less. Three questions on paper:
#
# 1. Write $\partial L / \partial z$ in terms of $G$ and $z$. What does backward need to know
#    about $z$ at each element? What is the smallest tensor that holds it: which dtype, and how
#    many bytes per element, against the 4 of $z$ or the output?
# 2. Once you have $\partial L / \partial z$, what is left to compute, and what does each
#    remaining gradient read?
# 3. The bias is added **before** the ReLU. Does `grad_bias` sum $G$ or
#    $\partial L / \partial z$ over the rows, and why?
#
# <details><summary><b>Hint</b> (a question)</summary>
#
# Lesson 01's ReLU: which entries of its Jacobian are non-zero, and what do they hold? So what
# must backward know of $z$: its value, or less?
# </details>

# %% [markdown]
# <details><summary><b>Numbers to hit</b> (after your attempt)</summary>
#
# With the $x$ and $W$ above and a zero bias,
# $z = \begin{pmatrix}1 & 0 & 6\\ 0 & 1 & -3\end{pmatrix}$, two entries **exactly** $0$. Take
# $G = \begin{pmatrix}1 & 1 & 2\\ 1 & 1 & -1\end{pmatrix}$. Then
# $\partial L / \partial z = \begin{pmatrix}1 & 0 & 2\\ 0 & 1 & 0\end{pmatrix}$,
# `grad_x` $= \begin{pmatrix}1 & 6\\ 2 & -1\end{pmatrix}$,
# `grad_weight` $= \begin{pmatrix}1 & 2\\ 0 & -1\\ 2 & 4\end{pmatrix}$ and
# `grad_bias` $= (1, 1, 2)$. With `grad_bias` $= (2, 2, 2)$, your ReLU let the exact zeros
# through: which convention did lesson 01 settle on at $0$? With $(2, 2, 1)$, which tensor did
# you sum (question 3)?
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `FusedLinearReLU`
#
# Write `FusedLinearReLU`, with `FusedLinearReLU.apply(x, weight, bias=None)` returning
# `torch.relu(F.linear(x, weight, bias))`, for the inputs of Exercise 1.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - for the ReLU part of backward, forward keeps at most one byte per output element, counting
#   the whole memory behind each tensor it keeps;
# - at a pre-activation of exactly 0, and at a positive one however small, the gradients are
#   those of `torch.relu(F.linear(x, weight, bias))`;
# - backward runs a matrix product, or sums for the bias, only for a gradient
#   `ctx.needs_input_grad` asks for.

# %% nbgrader={"grade_id": "answer_FusedLinearReLU", "solution": true}
class FusedLinearReLU(torch.autograd.Function):
    """y = relu(x @ weight.T + bias), keeping less than the float pre-activation for backward."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ### BEGIN SOLUTION
        z = x @ weight.T  # (*, out)
        if bias is not None:
            z = z + bias
        positive = z > 0  # bool (*, out): all the ReLU's backward needs
        needs_x, needs_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        # as in exercise 1: grad_weight reads x, grad_x reads weight
        ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None, positive)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight, positive = ctx.saved_tensors  # None where forward kept nothing
        out_features = grad_output.shape[-1]
        # through the ReLU, (*, out): where, not a product, as in lesson 01's MyReLU
        grad_z = torch.where(positive, grad_output, 0)  # inf * 0 would be nan
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight  # (*, out) @ (out, in) -> (*, in)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_z.reshape(-1, out_features).T @ x.reshape(-1, x.shape[-1])
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)  # (out,)
        return grad_x, grad_weight, grad_bias
        ### END SOLUTION


# %% nbgrader={"grade_id": "FusedLinearReLU", "grade": true, "points": 2}
self_check("FusedLinearReLU", FusedLinearReLU)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("FusedLinearReLU", FusedLinearReLU)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours: Exercise 1</b>, once both self-checks are green</summary>
#
# $\partial y_{ni} / \partial x_{mj} = \delta_{nm} W_{ij}$: the Jacobian is almost all zeros,
# and backward never builds it. Each gradient is one product,
#
# $$\frac{\partial L}{\partial x_{nj}} = \sum_i G_{ni}\, W_{ij}
#   \;\Rightarrow\;
#   \underbrace{\texttt{grad\_x}}_{(N,\,\text{in})} =
#   \underbrace{G}_{(N,\,\text{out})}\,\underbrace{W}_{(\text{out},\,\text{in})},
#   \qquad
#   \frac{\partial L}{\partial W_{ij}} = \sum_n G_{ni}\, x_{nj}
#   \;\Rightarrow\;
#   \underbrace{\texttt{grad\_weight}}_{(\text{out},\,\text{in})} =
#   \underbrace{G^\top}_{(\text{out},\,N)}\,\underbrace{x}_{(N,\,\text{in})},$$
#
# and $\texttt{grad\_bias}_i = \sum_n G_{ni}$. With leading dimensions, $G W$ is one product per
# position, and the parameters' gradients sum over every position:
# $\texttt{grad\_weight} = G_2^\top x_2$, where $G_2$ $(M, \text{out})$ and $x_2$
# $(M, \text{in})$ have every leading dimension flattened into rows; `grad_bias` sums the rows of
# $G_2$. Flattening covers a single vector too ($M = 1$); a batched `G.mT @ x` is accepted as
# well ([rule 2](function_contract.md)).
# </details>

# %% [markdown]
# <details><summary><b>Compare with yours: Exercise 2</b>, after your self-check is green</summary>
#
# $\dfrac{\partial L}{\partial z} = G \odot \mathbb{1}[z > 0]$: backward needs only
# **where** $z > 0$, a yes or no per element: a boolean mask, 1 byte (a `uint8` of 0s and 1s
# too; real kernels pack 8 to a byte). $z$ and the output take 4 bytes in float32, 8 in
# float64. The mask applies once, to $G$, and the rest is Exercise 1's formulas with
# $\partial L / \partial z$ in place of $G$: the bias is added before the ReLU, so `grad_bias`
# sums the masked gradient too.
# </details>

# %% [markdown]
# ## Index notation as code: `einsum` and a weight with three indices
#
# Every formula here was a sum over indices of a product of tensors. `torch.einsum` writes
# exactly that: one letter per index, the operands' letters before the arrow, the result's
# after it, and **every letter missing from the result is summed over**.
# `...` stands for any leading dimensions. `torch.einsum("ni,oi->no", x, W)` is $x W^\top$.
#
# ### Worked example: `HeadwiseLinear`
#
# Multi-head layers apply one small linear map per head: $x$ of shape $(*, H, \text{in})$, a
# weight with **three** indices, $W$ of shape $(H, \text{out}, \text{in})$, and
#
# $$y_{p h o} = \sum_i x_{p h i}\, W_{h o i}, \qquad y \text{ of shape } (*, H, \text{out}).$$
#
# One index at a time ($p$ a position in the leading dimensions):
#
# 1. $\partial y_{pho} / \partial x_{qgi} = W_{hoi}$ if $q = p$ and $g = h$, else $0$. The sum
#    over outputs keeps $o$: $\;\partial L / \partial x_{phi} = \sum_o G_{pho}\, W_{hoi}$.
# 2. $\partial y_{pho} / \partial W_{gkj} = x_{phj}$ if $g = h$ and $k = o$, else $0$; the sum
#    keeps every position: $\;\partial L / \partial W_{hoi} = \sum_p G_{pho}\, x_{phi}$.
#
# Its code waits until after `Bilinear`.

# %% [markdown]
# ## ✎ Transfer exercise · `Bilinear`
#
# Now alone. A bilinear layer scores a pair of vectors with one matrix per output feature:
#
# $$y_{p o} = \sum_{i, j} x_{1, p i}\; W_{o i j}\; x_{2, p j} + b_o .$$
#
# Write `Bilinear`, with `Bilinear.apply(x1, x2, weight, bias=None)` returning
# `F.bilinear(x1, x2, weight, bias)`: `x1` of shape $(*, n_1)$, `x2` of shape $(*, n_2)$ with
# the same leading dimensions, `weight` $(\text{out}, n_1, n_2)$, `bias` $(\text{out},)$ or
# `None`, with out, $n_1$ and $n_2$ at least 1.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - backward computes each of the four gradients only when `ctx.needs_input_grad` asks for it;
# - besides a few tensors of the inputs' and output's sizes, backward holds at most
#   $2P \cdot \max(\text{out}\,n_1,\ \text{out}\,n_2,\ n_1 n_2)$ numbers at once, $P$ the number
#   of positions.
#
# The forward has **three** factors; `HeadwiseLinear` had two. Derive
# $\partial L / \partial x_{1, pi}$ index by index, then the weight's gradient, whose letters
# $o, i, j$ come from three different subscripts.
#
# <details><summary><b>Hint 1</b> (questions)</summary>
#
# What shape does each gradient have? Which letters does $\partial L / \partial x_{1, pi}$ keep,
# and which does it sum over? Which gradients sum over the positions $p$, and why those?
# </details>
#
# <details><summary><b>Hint 2</b> (the key step, as questions)</summary>
#
# Fix a position $p$ and an output $o$. Which terms of the double sum over $i, j$ contain
# $x_{1, pk}$, and what multiplies it in each? Does $y_{po}$ depend on $x_{1, qk}$ at another
# position $q \ne p$?
# </details>
#
# <details><summary><b>Hint 3</b> (numbers to hit)</summary>
#
# $\text{out} = 1$, $n_1 = n_2 = 2$, two positions:
# $x_1 = \begin{pmatrix}1 & 2\\ 0 & 1\end{pmatrix}$,
# $x_2 = \begin{pmatrix}3 & -1\\ 1 & 1\end{pmatrix}$,
# $W_0 = \begin{pmatrix}1 & 0\\ 2 & 1\end{pmatrix}$, a bias, and
# $G = \begin{pmatrix}2\\ -1\end{pmatrix}$. Your backward must return
# `grad_x1` $= \begin{pmatrix}6 & 10\\ -1 & -3\end{pmatrix}$,
# `grad_x2` $= \begin{pmatrix}10 & 4\\ -2 & -1\end{pmatrix}$,
# `grad_weight` $= \begin{pmatrix}6 & -2\\ 11 & -5\end{pmatrix}$ (shape $(1, 2, 2)$) and
# `grad_bias` $= (1)$. `grad_x1[0]` is $2$ times what vector?
# </details>
#
# **Check your step 1 live**: write $\partial y_{po} / \partial x_{1, qk}$ into `dy_dx1`, and
# $\partial y_{po} / \partial W_{kij}$ into `dy_dweight`, each a lambda that returns one
# number, checked against autograd's Jacobian. Which indices does the chain rule then sum over?

# %%
### BEGIN WORKED
dy_dx1 = lambda p, o, q, k, x1, x2, weight: weight[o, k] @ x2[p] if q == p else 0.0
dy_dweight = lambda p, o, k, i, j, x1, x2, weight: x1[p, i] * x2[p, j] if k == o else 0.0
### LEARNER
dy_dx1 = None  # step 1: lambda p, o, q, k, x1, x2, weight: ... (the entry dy[p, o]/dx1[q, k])
dy_dweight = None  # step 1: lambda p, o, k, i, j, x1, x2, weight: ... (dy[p, o]/dW[k, i, j])
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_entries():
    """Your dy_dx1 and dy_dweight against autograd's Jacobians of F.bilinear in x1 and weight:
    Hint 3's numbers, then random ones."""
    for name, entry, argnum in (("dy_dx1", dy_dx1, 0), ("dy_dweight", dy_dweight, 2)):
        print(name)
        if entry is None:
            print(f"  ✗ not written yet: write your entry into {name}, then run this cell again")
            continue
        check_entry(entry, argnum)


def check_entry(entry, argnum):
    """One entry function against autograd's Jacobian of F.bilinear in its argnum-th input."""
    generator = torch.Generator().manual_seed(4)
    numbers = lambda rows: torch.tensor(rows, dtype=torch.float64)
    randn = lambda *shape: torch.randn(shape, dtype=torch.float64, generator=generator)
    cases = [("Hint 3's numbers", numbers([[1, 2], [0, 1]]), numbers([[3, -1], [1, 1]]),
              numbers([[[1, 0], [2, 1]]])),  # x1, x2, weight
             ("random, out = 3", randn(3, 4), randn(3, 5), randn(3, 4, 5))]
    letters = "(p, o, q, k)" if argnum == 0 else "(p, o, k, i, j)"
    for label, *args in cases:
        def only(value, args=args):
            return F.bilinear(*(value if n == argnum else a for n, a in enumerate(args)))
        jacobian = torch.autograd.functional.jacobian(only, args[argnum])  # [p, o, <input>]
        indices = list(itertools.product(*map(range, jacobian.shape)))
        try:
            yours = {index: float(entry(*index, *args)) for index in indices}
        except Exception as error:  # shown, not raised: Run All goes on
            print(f"  {label:<17} ✗ raises {type(error).__name__}: "
                  f"{str(error).splitlines()[0][:70]}")
            continue
        wrong = [index for index in indices if abs(yours[index] - jacobian[index].item()) > 1e-12]
        if not wrong:
            print(f"  {label:<17} ✓ all {len(indices)} entries match autograd's Jacobian")
        else:
            first = wrong[0]
            print(f"  {label:<17} ✗ {len(wrong)} of {len(indices)} entries differ. The first: "
                  f"at {letters} = {first} you give {yours[first]:.4g}, autograd "
                  f"{jacobian[first].item():.4g}")


check_entries()

# %% nbgrader={"grade_id": "answer_Bilinear", "solution": true}
class Bilinear(torch.autograd.Function):
    """y[..., o] = sum_ij x1[..., i] * weight[o, i, j] * x2[..., j] + bias[o]."""

    @staticmethod
    def forward(ctx, x1, x2, weight, bias=None):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x1, x2, weight)
        ctx.has_bias = bias is not None
        y = torch.einsum("...i,oij,...j->...o", x1, weight, x2)
        return y + bias if bias is not None else y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x1, x2, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_x1 = grad_x2 = grad_weight = grad_bias = None
        if needs[0]:  # the swap rule: x1 <-> the output
            grad_x1 = torch.einsum("...o,oij,...j->...i", grad_output, weight, x2)
        if needs[1]:
            grad_x2 = torch.einsum("...i,oij,...o->...j", x1, weight, grad_output)
        if needs[2]:
            grad_weight = torch.einsum("...i,...o,...j->oij", x1, grad_output, x2)
        if ctx.has_bias and needs[3]:
            grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(dim=0)
        return grad_x1, grad_x2, grad_weight, grad_bias
        ### END SOLUTION


# %% nbgrader={"grade_id": "Bilinear", "grade": true, "points": 2}
self_check("Bilinear", Bilinear)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Bilinear", Bilinear)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\frac{\partial L}{\partial x_{1, pi}} = \sum_{o, j} G_{po} W_{oij}\, x_{2, pj},\quad
#   \frac{\partial L}{\partial x_{2, pj}} = \sum_{o, i} G_{po}\, x_{1, pi} W_{oij},$$
# $$\frac{\partial L}{\partial W_{oij}} = \sum_p G_{po}\, x_{1, pi}\, x_{2, pj},\quad
#   \frac{\partial L}{\partial b_o} = \sum_p G_{po}.$$
#
# Each gradient is the forward product with the factor you differentiate and the output
# **swapped** (the **swap rule**; `HeadwiseLinear`'s backward below too). An optional section
# says when it holds, and works out two einsums where it does not.
# </details>

# %% [markdown]
# The worked example's two gradients as `einsum`s, for comparison, and `gradcheck` with no
# leading dimension, one and two:

# %%
class HeadwiseLinear(torch.autograd.Function):
    """y[..., h, o] = sum_i x[..., h, i] * weight[h, o, i]: one linear map per head."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return torch.einsum("...hi,hoi->...ho", x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:  # dL/dx[p, h, i] = sum_o G[p, h, o] W[h, o, i]
            grad_x = torch.einsum("...ho,hoi->...hi", grad_output, weight)
        if ctx.needs_input_grad[1]:  # dL/dW[h, o, i] = sum_p G[p, h, o] x[p, h, i]
            grad_weight = torch.einsum("...ho,...hi->hoi", grad_output, x)
        return grad_x, grad_weight


heads_weight = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)  # (H, out, in)
for shape in [(3, 5), (2, 3, 5), (2, 2, 3, 5)]:
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    print(f"x of shape {str(shape):<13} gradcheck:",
          torch.autograd.gradcheck(HeadwiseLinear.apply, (x, heads_weight)))


# %% [markdown]
# ## Summary
#
# Write the shapes next to every formula: `grad_x` $= G W$, `grad_weight` $= G^\top x$ and
# `grad_bias` $= \sum G$, with every leading dimension flattened into the sum for the
# parameters. Check `ctx.needs_input_grad` before each expensive product, and count the
# work to prove it. Fusing lets one Function keep only what backward truly needs, such as a
# boolean mask, but measure memory in the whole graph, not just the block. And any product
# of tensors summed over indices is an `einsum`; when every letter is in at least two
# subscripts and none repeats within one, its backward is the same product with the operand
# and the output swapped (otherwise a sum in forward is a broadcast in backward, and a
# diagonal taken is one written into, as the optional section works out).

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above; nothing below is needed for an exercise. First
# `FeatureScale` in code and the mistakes the self-check's messages do not explain, then the
# backward FLOP counts as a chart, what fusing saved in one block, two views of what your
# Functions keep, fusing measured inside whole networks, what `F.linear` and your Functions keep
# with frozen weights, what the engine sums for you, and last notes from practice (`einsum`'s
# swap rule among them).

# %% [markdown]
# ### `FeatureScale` in code
#
# <details><summary><b>The worked example in code</b>, after your self-check is green</summary>
#
# `FeatureScale`'s two formulas as a Function, beside yours: its parameter's sum over the
# positions, written for every number of leading dimensions, and its gradients computed only
# where `ctx.needs_input_grad` asks.
#
# ```python
# class FeatureScale(torch.autograd.Function):
#     """y = x * s, with x of shape (*, d) and one scale per feature, s of shape (d,)."""
#
#     @staticmethod
#     def forward(ctx, x, s):
#         ctx.save_for_backward(x, s)
#         return x * s
#
#     @staticmethod
#     def backward(ctx, grad_output):
#         x, s = ctx.saved_tensors
#         grad_x = grad_s = None  # None: this input does not require grad
#         if ctx.needs_input_grad[0]:
#             grad_x = grad_output * s  # (*, d) * (d,) -> (*, d)
#         if ctx.needs_input_grad[1]:
#             d = s.shape[0]
#             grad_s = (grad_output * x).reshape(-1, d).sum(dim=0)  # (*, d) -> (M, d) -> (d,)
#         return grad_x, grad_s
# ```
# </details>

# %% [markdown]
# ### Common mistakes
#
# The self-check names most slips by itself (a transpose too many, a sum over the wrong
# dimensions, a mask `z >= 0`, an unneeded gradient computed). These are the ones its
# messages do not explain:
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `.view(-1, n)` on `grad_output` or on a saved `x` | `RuntimeError` when the tensor is not contiguous in a way `view` cannot merge (a 3-D `grad_output` or `x` whose dimensions were permuted or transposed; a 2-D one that already has shape `(rows, n)` passes, whatever its strides); a contiguous test tensor passes, so only the self-check's strided inputs catch it | `reshape`, which copies only when it must |
# | `ctx.mask = z > 0` | breaks the contract (the mask goes through `ctx.save_for_backward`); saved-tensor hooks (offloading to CPU, the inspector) never see it, and it outlives backward for as long as the output's graph does, where saved tensors are freed | `ctx.save_for_backward(x, weight, mask)` |

# %% [markdown]
# ### The FLOP counts as a chart
#
# *Which gradients does backward pay for?* as bars: `F.linear`'s backward for each choice of
# inputs that require grad, against the red line a backward that ignores
# `ctx.needs_input_grad` always pays.

# %%
def plot_flops():
    labels = [", ".join(wanted) for wanted in CHOICES]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    bars = ax.bar(labels, builtin, color="tab:blue", label="F.linear's backward")
    ax.bar_label(bars, fontsize=8)
    ax.axhline(2 * MATMUL_FLOPS, color="tab:red", ls="--",
               label="a backward that ignores needs_input_grad")
    ax.set_ylim(0, 1.4 * 2 * MATMUL_FLOPS)
    ax.set_xlabel("inputs that require grad")
    ax.set_ylabel("FLOPs in backward")
    ax.set_title(f"One backward, x: ({ROWS}, {IN}), W: ({OUT}, {IN})")
    ax.legend(loc="upper center", ncol=2, fontsize=8)
    plt.tight_layout()
    plt.show()


plot_flops()

# %% [markdown]
# ### What did fusing save?
#
# The block of the fusing section ($x$ of shape $(64, 32)$, a $(64, 16)$ output, float32), now
# through your Function:

# %%
show_saved("FusedLinearReLU",
           lambda: FusedLinearReLU.apply(block_x, block_weight, block_bias))

# %% [markdown]
# The $(64, 16)$ float32 output (4096 bytes) became a $(64, 16)$ mask (1024 bytes): a
# quarter, or an eighth in float64. Whether a whole network then keeps less depends on what
# the layers around the block keep; "Fusing inside a network" below predicts and measures it
# for four networks.
#
# **Predict, then run.** With the same block and the bias requiring grad, how many bytes of
# `x` and `weight` does your forward save when the weight is frozen, and how many when `x` is?

# %%
### BEGIN WORKED
predicted_input_bytes = {"weight frozen": 2048, "x frozen": 8192}
### LEARNER
predicted_input_bytes = {"weight frozen": None, "x frozen": None}
### END WORKED

# %%
def run_frozen(function, frozen):
    """function on the block's tensors, with `frozen` ("x" or "weight") not requiring grad."""
    x = block_x.detach().requires_grad_(frozen != "x")
    weight = block_weight.detach().requires_grad_(frozen != "weight")
    return lambda: function(x, weight, block_bias)


input_bytes = {}
for frozen in ("weight", "x"):
    saved = saved_tensors_of(run_frozen(FusedLinearReLU.apply, frozen))
    input_bytes[f"{frozen} frozen"] = sum(n for _, dtype, n in saved if dtype.is_floating_point)
    if written(predicted_input_bytes):
        show_saved(f"{frozen} frozen, yours", run_frozen(FusedLinearReLU.apply, frozen))
compare_all(predicted_input_bytes, input_bytes)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# With the weight frozen, backward computes `grad_x` and `grad_bias`; `grad_x` reads $W$
# alone: 2048 bytes, a parameter alive anyway. With $x$ frozen, `grad_weight` reads $x$: 8192
# bytes. A forward that always saves both keeps 10240 bytes either way, which the contract
# accepts; in a frozen-weight fine-tune it keeps every layer's input alive for nothing
# (*Frozen weights* below measures it).
# </details>

# %% [markdown]
# ### Inside your Function, and inside a network
#
# The saved-tensor inspector shows what your `FusedLinearReLU` keeps, from inside: `x` and
# `weight` are inputs the caller holds anyway; the boolean mask is the only new memory. Untick
# `weight.requires_grad` and watch `ctx.needs_input_grad` change, and with it what forward
# saves: a row reads `None` where your forward saved `None`.

# %%
inspect_saved(FusedLinearReLU, block_x, block_weight, block_bias)

# %% [markdown]
# And a two-layer network built from your Function,
# $\mathrm{relu}(x W_1^\top + b_1) W_2^\top + b_2$, and its backward one node at a time. The
# data `x` needs no gradient, so when the first layer's backward runs (the last
# `MyLinearFunction.backward`) its `grad_x` goes nowhere: with `ctx.needs_input_grad[0]`
# False, your backward returns `None` instead of paying for it.

# %%
data = torch.randn(2, 3)  # a batch of 2, 3 features; no gradient wanted
W1, b1 = torch.randn(4, 3, requires_grad=True), torch.randn(4, requires_grad=True)
W2, b2 = torch.randn(1, 4, requires_grad=True), torch.randn(1, requires_grad=True)
hidden = torch.relu(MyLinearFunction.apply(data, W1, b1))
prediction = MyLinearFunction.apply(hidden, W2, b2)
backward_flow(prediction.sum(), names=dict(W1=W1, b1=b1, W2=W2, b2=b2))

# %% [markdown]
# ### Fusing inside a network
#
# In one block the mask is a quarter of the float output it replaces. Measure in a whole
# network, though, and keep two numbers apart:
#
# - **bytes kept between the passes**: what the graph holds from the end of forward until
#   backward frees it. In a deep network every layer's share is alive at once when backward
#   starts, so this is what grows with depth.
# - **peak memory**: the most that is alive at any moment of the step. Inside this one block
#   fusing does not lower it: `FusedLinearReLU.forward` still materialises $z$, the output
#   and the mask at the same time, where the composed version has only $z$ and the output.
#
# What each node keeps: `F.linear` its input and weight, `torch.relu` its output, an addition
# nothing, your Function its input, its weight and a mask. Saving never copies, so memory
# that two nodes save is kept once. Two networks of eight blocks, width 64, a batch of 256,
# each built once from PyTorch's ops and once from your Function:
#
# - **plain**, $h \leftarrow \mathrm{relu}(h W_i^\top + b_i)$;
# - **residual**, $h \leftarrow h + \mathrm{relu}(h W_i^\top + b_i)$.
#
# `TensorAccounting` (from the grading library) watches every tensor created during one
# training step and reports the bytes alive after forward and the peak, beyond the inputs
# and weights that exist before the step. (Read the bytes alive with `live_bytes()`: it
# first drops the tensors freed since the last operation, such as the `h` deleted below.)
#
# **Predict, then run.** Each activation $h$ is $256 \times 64$ float32 numbers, 64 KiB; each
# mask is 16 KiB. Count what each of the four networks keeps after forward (weights and the
# input batch exist before the step and do not count), and write the four numbers of KiB first.
# In which network does fusing keep less?

# %%
### BEGIN WORKED
predicted_networks = {"plain, F.linear + torch.relu": 512, "plain, FusedLinearReLU": 576,
                      "residual, F.linear + torch.relu": 960, "residual, FusedLinearReLU": 576}
### LEARNER
predicted_networks = {"plain, F.linear + torch.relu": None, "plain, FusedLinearReLU": None,
                      "residual, F.linear + torch.relu": None, "residual, FusedLinearReLU": None}
### END WORKED

# %%
WIDTH, BATCH, DEPTH = 64, 256, 8
weights = [(torch.randn(WIDTH, WIDTH) / WIDTH ** 0.5).requires_grad_() for _ in range(DEPTH)]
biases = [torch.zeros(WIDTH, requires_grad=True) for _ in range(DEPTH)]
inputs = torch.randn(BATCH, WIDTH)

blocks = {
    "F.linear + torch.relu": lambda h, w, b: torch.relu(F.linear(h, w, b)),
    "FusedLinearReLU": lambda h, w, b: FusedLinearReLU.apply(h, w, b),
}
networks = {
    "plain": lambda block, h, w, b: block(h, w, b),
    "residual": lambda block, h, w, b: h + block(h, w, b),
}


def step_memory(network, block):
    """(KiB kept after forward, KiB at the peak of forward and backward) for one step."""
    with TensorAccounting() as books:
        h = inputs
        for w, b in zip(weights, biases):
            h = network(block, h, w, b)
        loss = h.sum()
        del h
        kept = books.live_bytes()
        loss.backward()
        del loss
    for p in weights + biases:
        p.grad = None
    return kept / 1024, books.phase.peak / 1024


def show_networks(measured):
    """The table of the four networks and its chart."""
    print(f"{'':<33} {'kept after forward':>19} {'peak of the step':>17}")
    for (net, name), (kept, peak) in measured.items():
        print(f"{net + ', ' + name:<33} {kept:>15.0f} KiB {peak:>13.0f} KiB")
    print()
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), sharey=True)
    for ax, column, title in zip(axes, (0, 1), ("kept after forward", "peak of the step")):
        for k, name in enumerate(blocks):
            values = [measured[net, name][column] for net in networks]
            bars = ax.bar([p + 0.38 * k for p in range(len(networks))], values, width=0.36,
                          label=name)
            ax.bar_label(bars, fmt="%.0f", fontsize=8)
        ax.set_xticks([p + 0.19 for p in range(len(networks))], list(networks))
        ax.set_title(title)
    axes[0].set_ylabel("KiB")
    axes[0].legend(loc="lower left", fontsize=8)
    fig.suptitle(f"{DEPTH} blocks, width {WIDTH}, batch {BATCH}, float32")
    plt.tight_layout()
    plt.show()


measured = {(net, name): step_memory(networks[net], block)
            for net in networks for name, block in blocks.items()}
if written(predicted_networks):  # the table and the chart, once your four numbers are written
    show_networks(measured)
compare_all(predicted_networks, {f"{net}, {name}": round(kept)
                             for (net, name), (kept, _) in measured.items()})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Count activations (64 KiB) and masks (16 KiB); the loss adds 4 bytes.
#
# - **plain, composed**: each ReLU saves its output $h_i$. The next linear saves the same
#   tensor, kept once: $8 \times 64 = 512$ KiB ($h_8$ by its own ReLU).
# - **plain, fused**: each block saves its input and a mask. $h_1, \dots, h_7$ are inputs of
#   the next block; nobody saves $h_8$: $7 \times 64 + 8 \times 16 = 576$ KiB. The masks are
#   new memory; the outputs they replace were kept anyway.
# - **residual, composed**: the linears keep $h_1, \dots, h_7$. The ReLUs also keep their own
#   outputs, which nothing else needs: $15 \times 64 = 960$ KiB.
# - **residual, fused**: $h_1, \dots, h_7$ and eight masks: $576$ KiB.
#
# The rule: fusing wins when nothing downstream keeps the activation. A residual addition
# keeps none, nor does a frozen-weight linear that saves `x` only when asked. When the next
# layer saves the ReLU's output anyway, the mask is the extra. Fusing in Python changes
# **what is kept**; it still materialises $z$.
# </details>

# %% [markdown]
# ### What `F.linear` keeps when the weight is frozen
#
# Skipping a product saves time (Exercise 1). In a frozen-weight fine-tune ($x$ needs a
# gradient, $W$ none) there is memory to save as well: whatever forward keeps stays alive
# until backward runs, for every layer of the network. Take $x$ of shape $(64, 128)$ and $W$
# of shape $(32, 128)$, both float32: $x$ is 32768 bytes and $W$ 16384.
#
# **Predict, then run.** How many bytes does PyTorch's `F.linear` keep for backward with the
# weight frozen, and how many in ordinary training, when both need a gradient? Write the two
# numbers first (the bytes of the memory behind each tensor it saves).

# %%
### BEGIN WORKED
predicted_saved = {"F.linear, frozen weight": 16384, "F.linear, training": 49152}
### LEARNER
predicted_saved = {"F.linear, frozen weight": None, "F.linear, training": None}
### END WORKED

# %%
def saved_bytes(linear, x_grad, weight_grad):
    """Bytes of the tensors autograd packs for backward during one forward."""
    packed = []

    def pack(tensor):
        packed.append(tensor.untyped_storage().nbytes())
        return tensor.detach()  # not the tensor itself: a saved output would hold its own graph

    x = torch.randn(64, 128, requires_grad=x_grad)
    weight = torch.randn(32, 128, requires_grad=weight_grad)
    with saved_tensors_hooks(pack, lambda tensor: tensor):
        linear(x, weight)
    return sum(packed)


kept = {}
for label, x_grad, weight_grad in [("frozen weight", True, False), ("training", True, True)]:
    kept[f"F.linear, {label}"] = reference = saved_bytes(F.linear, x_grad, weight_grad)
    mine = saved_bytes(MyLinearFunction.apply, x_grad, weight_grad)
    more = "more (not graded, yours to save: what does each gradient read?)"
    if written(predicted_saved):
        print(f"{label:<14} yours: {mine:>6} B  F.linear: {reference:>6} B  "
              f"{'same' if mine == reference else more}")
compare_all(predicted_saved, kept)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# 16384 and 49152. With the weight frozen only `grad_x` is computed, and of $x$ and $W$ it
# reads the weight alone, so `F.linear` keeps only the weight (as the transposed view it
# multiplied by), and never the activation: the weight is alive anyway, as a parameter, so
# the layer costs nothing extra. A layer that always saves `x` keeps every activation of the
# fine-tune for a gradient nobody asked for. Whether yours does is your answer to the second
# question before Exercise 1; the grader accepts both ways, and the memory is yours to save.
# </details>

# %% [markdown]
# ### Frozen weights: what `FusedLinearReLU` keeps
#
# Fine-tuning often freezes the weights; BitFit (Ben Zaken et al., 2021) trains the biases
# alone. Freeze the eight weights of the plain network and keep its biases training: every
# $h_i$ still needs a gradient, for the biases before it, but no `grad_weight` is computed,
# so backward reads no block's input.
#
# **Predict, then run.** What does each version keep after forward now, in KiB:
# `F.linear` + `torch.relu`, and your `FusedLinearReLU` as you wrote it?

# %%
### BEGIN WORKED
predicted_frozen = {"F.linear + torch.relu": 512, "FusedLinearReLU": 128}
### LEARNER
predicted_frozen = {"F.linear + torch.relu": None, "FusedLinearReLU": None}
### END WORKED

# %%
for w in weights:
    w.requires_grad_(False)  # frozen: only the biases train
frozen = {name: step_memory(networks["plain"], block) for name, block in blocks.items()}
for w in weights:
    w.requires_grad_(True)
for name, (kept, peak) in frozen.items():
    if written(predicted_frozen):
        print(f"plain, {name:<22} weights frozen: {kept:4.0f} KiB, peak {peak:4.0f} KiB")
compare_all(predicted_frozen, {name: round(kept) for name, (kept, _) in frozen.items()})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The composed network keeps the eight ReLU outputs, $8 \times 64 = 512$ KiB: `F.linear`
# with a frozen weight saves only that weight, which exists before the step. A
# `FusedLinearReLU` that saves `x` whatever is asked keeps $h_1, \dots, h_7$ and eight masks,
# 576 KiB (a peak of 704), for a `grad_weight` nobody computes: more than composed. One that
# saves `x` only when `ctx.needs_input_grad[1]` is True keeps the masks alone,
# $8 \times 16 = 128$ KiB (a peak of 320), a quarter of the composed network. The exercise
# accepts both; for fine-tuning, write the second. If yours kept `x`, save `None` in its
# place when the weight is frozen, run its self-check again and then this cell.
# </details>

# %% [markdown]
# ### What the engine sums for you, and what it cannot
#
# Your `grad_weight` sums over every position; there are other ways to write that sum, and
# some of them fail only for some shapes. Lesson 00 showed that the engine sums a gradient
# down to its input's shape when the input's shape broadcasts to it. **Predict, then run.**
# For $x$ of shape $(2, 5, 3)$ and $G$ of shape $(2, 5, 4)$, which of these three
# `grad_weight` candidates raise? And `G.T @ x` for a single vector, $x$ of shape $(3,)$?
# Write `True` (raises) or `False` for each. Then: returned from a backward as the gradient of
# a $(4, 3)$ weight, does the engine accept the result of `G.mT @ x`, summing it to $(4, 3)$?
# `True` or `False`.

# %%
### BEGIN WORKED
predicted_engine = {"G.mT @ x, 3-D": False, "G.T @ x, 3-D": True,
                    "G.reshape(-1, 4).T @ x.reshape(-1, 3), 3-D": False, "G.T @ x, 1-D": True,
                    "the engine sums G.mT @ x to (4, 3)": True}
### LEARNER
predicted_engine = {"G.mT @ x, 3-D": None, "G.T @ x, 3-D": None,
                    "G.reshape(-1, 4).T @ x.reshape(-1, 3), 3-D": None, "G.T @ x, 1-D": None,
                    "the engine sums G.mT @ x to (4, 3)": None}
### END WORKED

# %%
G3, x3 = torch.randn(2, 5, 4), torch.randn(2, 5, 3)
G1, x1 = torch.randn(4), torch.randn(3)
candidates = {
    "G.mT @ x, 3-D": lambda: G3.mT @ x3,
    "G.T @ x, 3-D": lambda: G3.T @ x3,
    "G.reshape(-1, 4).T @ x.reshape(-1, 3), 3-D": lambda: G3.reshape(-1, 4).T @ x3.reshape(-1, 3),
    "G.T @ x, 1-D": lambda: G1.T @ x1,
}
show = written(predicted_engine)  # the shapes and errors, once your answers are written
raised = {}
for label, candidate in candidates.items():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # .T on a 3-D tensor is deprecated
            shape = tuple(candidate().shape)
        if show:
            print(f"{label:<44} shape {shape}")
        raised[label] = False
    except RuntimeError as error:
        if show:
            print(f"{label:<44} RuntimeError: {str(error).splitlines()[0][:60]}...")
        raised[label] = True


class HandBack(torch.autograd.Function):
    """Identity on weight; backward returns the given tensor as weight's gradient."""

    @staticmethod
    def forward(ctx, weight, gradient):
        ctx.save_for_backward(gradient)
        return weight.clone()

    @staticmethod
    def backward(ctx, grad_output):
        gradient, = ctx.saved_tensors
        return gradient, None


weight = torch.zeros(4, 3, requires_grad=True)
try:
    HandBack.apply(weight, G3.mT @ x3).sum().backward()
    if show:
        print("weight.grad of shape", tuple(weight.grad.shape), "equal to the flattened product:",
              torch.allclose(weight.grad, G3.reshape(-1, 4).T @ x3.reshape(-1, 3), atol=1e-5))
    summed = True
except RuntimeError as error:
    if show:
        print("the engine refused it:", error)
    summed = False
compare_all(predicted_engine, {**raised, "the engine sums G.mT @ x to (4, 3)": summed})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `G.mT @ x` is a batched product: shape $(2, 4, 3)$, one $(4, 3)$ matrix per batch entry. The
# engine sums it to $(4, 3)$, the right values, and the Function contract accepts such a
# gradient ([rule 2](function_contract.md)): its input's shape broadcasts to it. For a single
# vector, though, `.mT` raises: a 1-D tensor has no matrix to transpose.
#
# `.T` on a 3-D tensor reverses **every** dimension (deprecated, with a warning). So
# `G.T @ x` multiplies $(4, 5, 2)$ by $(2, 5, 3)$ and fails. On 1-D tensors `@` is a dot
# product, which fails for sizes 4 and 3.
#
# Flattening the leading dimensions first works for every leading shape, none and size 0
# included. It says what you mean: one $(\text{out}, \text{in})$ gradient summed over every
# position.
# </details>

# %% [markdown]
# ### In practice
#
# Beyond the main line: four short topics, each folded; open one when you have time.
#
# <details><summary><b>Your layer under mixed precision</b></summary>
#
# Large models are often trained under
# `torch.autocast`, which runs matrix products in bfloat16 (or float16) while the weights stay
# float32: the forward pass runs inside `with torch.autocast(...)`, and `loss.backward()` is
# called after the block. Run your `MyLinearFunction` with float32 `x` $(10, 6)$ and `weight`
# $(4, 6)$, and no bias, inside `torch.autocast("cpu", dtype=torch.bfloat16)`: the output is
# `torch.bfloat16`, and `y.float().sum().backward()` raises "expected m1 and m2 to have the
# same dtype, but got: c10::BFloat16 != float" (measured on this course's torch, CPU).
# Inside forward, autocast casts `x` and `weight` to bfloat16 for the product, so the output,
# and the `grad_output` backward receives, are bfloat16; what your forward saved are the
# float32 originals. Backward runs after the `with` block, with autocast off, so a product of
# that `grad_output` with a saved float32 tensor mixes two dtypes, and `@` refuses. PyTorch's
# own `F.linear` saves the bfloat16 copies it multiplied, so its backward never mixes. (A
# backward that casts `grad_output` itself would run; most do not.) With a float32 bias added
# after the product (`y + bias`), autocast leaves that addition alone and type promotion
# makes the output float32: backward then runs, but your output is float32 where
# `F.linear`'s, which casts the bias too, is bfloat16.
#
# The fix is two decorators: `torch.amp.custom_fwd(device_type=...)` records the autocast
# state forward ran under, and `torch.amp.custom_bwd(device_type=...)` runs backward under
# the same state, so its products are autocast too. Applied to your Function without
# rewriting it:
#
# ```python
# class AutocastLinear(MyLinearFunction):
#     forward = staticmethod(torch.amp.custom_fwd(MyLinearFunction.forward, device_type="cpu"))
#     backward = staticmethod(torch.amp.custom_bwd(MyLinearFunction.backward, device_type="cpu"))
# ```
#
# Under the same autocast, with no bias, the output is still bfloat16, and the engine hands
# each input a gradient of its own dtype, float32 for both `x.grad` and `weight.grad`, as
# `F.linear` does.
# (`custom_fwd(..., cast_inputs=torch.float32)` instead runs forward in float32 with autocast
# off: for an op that must not run in low precision.)
# </details>
#
# <details><summary><b>Real fused kernels</b></summary>
#
# Fusing in Python changes what is kept. Fused kernels win twice
# more: they apply the ReLU to $z$ in fast on-chip memory instead of writing $z$ out and
# reading it back, and some pack the mask into one **bit** per element.
# </details>
#
# <details><summary><b><code>einsum</code>'s speed</b></summary>
#
# `einsum` is a clear way to write a backward, not always the fastest:
# it picks an order of contraction for you, and for two operands it becomes one batched
# matrix product, which is what you would write by hand. With three operands the order
# matters, and a FLOP count barely shows why. Take `Bilinear`'s forward with $P = 64$
# positions, $\text{out} = 16$, $n_1 = 256$ and $n_2 = 8$. Summing over $i$ first (`x1` with
# `weight`) makes an intermediate of shape $(P, \text{out}, n_2)$, 8192 numbers; summing over
# $j$ first makes one of shape $(P, \text{out}, n_1)$, 262144 numbers, each a sum of only 8
# products, written out and read back. `FlopCounterMode` counts 4.21 M FLOPs against 4.72 M,
# yet the second order takes several times as long, on this machine: the code cell after this
# block measures it. The ratio depends on the machine and on the threads, but the cause does
# not: the intermediate's size, not the arithmetic.
# (PyTorch chooses the order with `opt_einsum` when it is installed, and otherwise contracts
# left to right, in the order you list the operands.)
# </details>
#
# <details><summary><b>The swap rule, and einsums outside it</b></summary>
#
# In `Bilinear`'s gradients and in
# `HeadwiseLinear`'s backward, each gradient is the forward product with the factor you
# differentiate and the output swapped: `grad_output` takes the output's letters, the result
# takes the factor's letters, and the other factors stay as they were, since the derivative of
# a product with respect to one factor is the product of the others. The swap holds when every
# letter appears in at least two subscripts (operands and output) and no subscript repeats a
# letter; in `Bilinear`, $p$ is in $x_1$, $x_2$ and the output, so `grad_weight` sums over it.
# A letter that one operand alone has is summed in forward and must be broadcast back in
# backward, and a repeated one (`"ii->i"`, a diagonal) would have to repeat in the gradient's
# output (`"i->ii"`), which einsum refuses: the swap does neither. Two einsums the swap cannot
# differentiate; derive each gradient on paper by the same method, index by index with its
# shape, before reading on.
#
# 1. $y_{pk} = \sum_{i, j} x_{pij}\, W_{jk}$, `"pij,jk->pk"`: the letter $i$ is in $x$ alone.
# 2. $y_p = \sum_i x_{pii}$, `"pii->p"`, the trace of each matrix in a batch: $i$ repeats.
#
# In 1, $\partial y_{pk} / \partial x_{qab} = W_{bk}$ if $q = p$, **whatever** $a$ is, so
# $\partial L / \partial x_{pij} = \sum_k G_{pk} W_{jk}$, the same for every $i$. The swap
# would write `"pk,jk->pij"`, which einsum refuses ("output subscript i does not appear in the
# equation for any input operand"). Compute `"pk,jk->pj"`, shape $(P, J)$, then broadcast it
# back along $i$ to $x$'s shape $(P, I, J)$: `unsqueeze` at $i$'s place, then `expand`, a view
# that copies nothing. A sum in forward is a broadcast in backward.
#
# In 2, $\partial y_p / \partial x_{qab} = 1$ if $q = p$ and $a = b$, else $0$, so
# $\partial L / \partial x_{pij} = G_p\, \delta_{ij}$: $G_p$ on the diagonal of each matrix,
# 0 elsewhere. The swap's `"p->pii"` is refused with the same message, the fault einsum meets
# first ($i$ would also repeat in the output, the fault of `"i->ii"`: "output subscript i
# appears more than once in the output"). Multiply $G$, shaped $(P, 1, 1)$, by the identity
# matrix $(I, I)$. Taking a diagonal in forward is writing into one in backward. Both, against
# autograd (`torch.allclose` gives True for each):
#
# ```python
# x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)  # (P, I, J)
# W, G = torch.randn(4, 5, dtype=torch.float64), torch.randn(2, 5, dtype=torch.float64)
# by_autograd, = torch.autograd.grad(torch.einsum("pij,jk->pk", x, W), x, G)
# by_hand = torch.einsum("pk,jk->pj", G, W).unsqueeze(1).expand_as(x)
# squares = torch.randn(2, 4, 4, dtype=torch.float64, requires_grad=True)  # (P, I, I)
# g = torch.randn(2, dtype=torch.float64)  # (P,)
# by_autograd, = torch.autograd.grad(torch.einsum("pii->p", squares), squares, g)
# by_hand = g[:, None, None] * torch.eye(4, dtype=torch.float64)
# ```
# </details>

# %% [markdown]
# The cell below belongs to **In practice** above (`einsum`'s speed: what its order costs).
# It takes about a second.

# %%
from torch.utils.benchmark import Timer

operands = {"torch": torch, "x1": torch.randn(64, 256), "weight": torch.randn(16, 256, 8),
            "x2": torch.randn(64, 8)}  # P = 64, n1 = 256, out = 16, n2 = 8, as above
orders = {  # the same y[p, o], contracted in two orders
    "i": 'torch.einsum("poj,pj->po", torch.einsum("pi,oij->poj", x1, weight), x2)',
    "j": 'torch.einsum("poi,pi->po", torch.einsum("pj,oij->poi", x2, weight), x1)'}
timers = {sum_first: Timer(code, globals=operands) for sum_first, code in orders.items()}
fastest = {sum_first: float("inf") for sum_first in timers}  # seconds per call, one thread
for _ in range(30):  # the fastest of 30 interleaved runs: other work on the machine only adds
    for sum_first, timer in timers.items():
        fastest[sum_first] = min(fastest[sum_first], timer.timeit(5).times[0])
print(f"over i first, an intermediate (64, 16, 8):   {fastest['i'] * 1e3:.3f} ms")
print(f"over j first, an intermediate (64, 16, 256): {fastest['j'] * 1e3:.3f} ms, "
      f"{fastest['j'] / fastest['i']:.1f} times as long (one thread)")


