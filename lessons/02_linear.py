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
# `torch.nn.Linear` computes $y = x W^\top + b$. It is in almost every network, and its
# backward is only three lines: two matrix products and a sum. Writing it yourself is the
# best way to learn gradients of matrix expressions, and it opens the door to two
# optimisations that real custom Functions exist for: **skipping gradients nobody needs**,
# and **fusing** two operations so that less memory is kept for backward.
#
# By the end of this lesson you can:
# 1. derive the gradients of $x W^\top + b$ with the shape of every term written down;
# 2. handle inputs with any number of leading dimensions, including none;
# 3. use `ctx.needs_input_grad` to skip work, and count that work with `FlopCounterMode`;
# 4. fuse a linear layer with a ReLU, and measure when that saves memory and when it does not.
#
# Exercises: **✎ 1 `MyLinearFunction`**, **✎ 2 `FusedLinearReLU`**.

# %% nbgrader={"locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.graph import saved_tensors_hooks
from torch.utils.flop_counter import FlopCounterMode

from autograder import self_check
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
# ## The three gradients
#
# The chain rule sums over every $y_{ni}$ that a variable touches. Use the element form, read
# off which indices survive, and write the result as a matrix product:
#
# $$\frac{\partial L}{\partial x_{nj}} = \sum_i G_{ni}\, W_{ij}
#   \quad\Longrightarrow\quad
#   \underbrace{\texttt{grad\_x}}_{(N,\,\text{in})} =
#   \underbrace{G}_{(N,\,\text{out})}\,\underbrace{W}_{(\text{out},\,\text{in})}$$
#
# $$\frac{\partial L}{\partial W_{ij}} = \sum_n G_{ni}\, x_{nj}
#   \quad\Longrightarrow\quad
#   \underbrace{\texttt{grad\_weight}}_{(\text{out},\,\text{in})} =
#   \underbrace{G^\top}_{(\text{out},\,N)}\,\underbrace{x}_{(N,\,\text{in})}$$
#
# $$\frac{\partial L}{\partial b_{i}} = \sum_n G_{ni}
#   \quad\Longrightarrow\quad
#   \underbrace{\texttt{grad\_bias}}_{(\text{out},)} = \sum_n G_{n,:}
#   \quad\text{(a sum over the rows of } G\text{)}$$
#
# The local Jacobian $\partial y_{ni} / \partial x_{mj} = \delta_{nm} W_{ij}$ has
# $N\cdot\text{out} \times N\cdot\text{in}$ entries, almost all zero. We never build it: each
# formula above is the vector-Jacobian product done in one matrix multiplication.
#
# **Shapes check the algebra.** There is only one way to multiply $G$ $(N, \text{out})$ with
# $W$ $(\text{out}, \text{in})$ and get $(N, \text{in})$. Whenever you are unsure of a
# transpose, write the shapes next to the formula.

# %% [markdown]
# ### A transpose too many, and where a popular text goes wrong
#
# Because the forward multiplies by $W^\top$, it is tempting to think backward must
# multiply by $W^\top$ too. One widely read text even "fixes" a correct
# `grad_output @ W` into `grad_output @ W.t()`. The shapes say otherwise:
# $(N, \text{out}) \cdot (\text{in}, \text{out})$ does not fit unless
# $\text{in} = \text{out}$. And when $W$ is square, the wrong formula runs and is silently
# wrong. Let autograd be the judge, with a square $W$:

# %%
x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
W = torch.randn(3, 3, dtype=torch.float64)  # square: both formulas run
G = torch.randn(5, 3, dtype=torch.float64)
(x @ W.T).backward(G)
print("autograd's grad_x == G @ W   :", torch.allclose(x.grad, G @ W))
print("autograd's grad_x == G @ W.T :", torch.allclose(x.grad, G @ W.T))

W_rect, G_rect = torch.randn(4, 3), torch.randn(5, 4)  # in = 3, out = 4
try:
    G_rect @ W_rect.T
except RuntimeError as error:
    print("with in != out, G @ W.T fails:", error)

# %% [markdown]
# ## Leading dimensions
#
# `nn.Linear` accepts $x$ of shape $(*, \text{in})$: a single vector $(\text{in},)$, a batch
# $(N, \text{in})$, a batch of sequences $(B, T, \text{in})$, and so on. The output has shape
# $(*, \text{out})$. Call each position in the leading dimensions $p$, with $x_p$ and
# $g_p$ the input row and `grad_output` row there (column vectors), and let $M$ be how many
# positions there are ($M = 1$ for a single vector, $M = BT$ for $(B, T, \text{in})$).
#
# - **`grad_x`** needs nothing new: $G W$ with $G$ of shape $(*, \text{out})$ gives
#   $(*, \text{in})$, because `@` treats the leading dimensions as a batch.
# - **`grad_weight` and `grad_bias`** get a contribution from *every* position, and the
#   contributions add up:
#
# $$\underbrace{\texttt{grad\_weight}}_{(\text{out},\,\text{in})}
#   = \sum_p \underbrace{g_p}_{(\text{out},\,1)} \underbrace{x_p^\top}_{(1,\,\text{in})}
#   = \underbrace{G_2^\top}_{(\text{out},\,M)} \underbrace{x_2}_{(M,\,\text{in})},
#   \qquad
#   \underbrace{\texttt{grad\_bias}}_{(\text{out},)} = \sum_p g_p ,$$
#
# where $G_2$ = `grad_output.reshape(-1, out)` $(M, \text{out})$ and
# $x_2$ = `x.reshape(-1, in)` $(M, \text{in})$ flatten all leading dimensions into one.
# `reshape(-1, n)` also turns a single vector into one row, so the same lines cover $M = 1$.

# %% [markdown]
# ### Worked example: `FeatureScale`
#
# The same pattern in a smaller Function: $y = x \odot s$, where $x$ has shape $(*, d)$ and
# each of the $d$ features has its own scale $s_j$, so $s$ has shape $(d,)$.
#
# - $\partial L / \partial x_{pj} = G_{pj}\, s_j$: `grad_x = grad_output * s`, shape $(*, d)$.
# - $\partial L / \partial s_j = \sum_p G_{pj}\, x_{pj}$: multiply, flatten to $(M, d)$, sum
#   over the rows: shape $(d,)$.
#
# Backward also checks `ctx.needs_input_grad`, a tuple with one boolean per forward input
# (whether that input required grad when forward ran), and computes only those gradients:
# autograd would throw the others away.

# %%
class FeatureScale(torch.autograd.Function):
    """y = x * s, with x of shape (*, d) and one scale per feature, s of shape (d,)."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        grad_x = grad_s = None  # None: this input does not require grad
        if ctx.needs_input_grad[0]:
            grad_x = grad_output * s  # (*, d) * (d,) -> (*, d)
        if ctx.needs_input_grad[1]:
            d = s.shape[0]
            grad_s = (grad_output * x).reshape(-1, d).sum(dim=0)  # (*, d) -> (M, d) -> (d,)
        return grad_x, grad_s


# %% [markdown]
# `gradcheck` with no leading dimension, one, and two:

# %%
s = torch.randn(4, dtype=torch.float64, requires_grad=True)
for shape in [(4,), (5, 4), (2, 3, 4)]:
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    print(f"x of shape {str(shape):<10} gradcheck:",
          torch.autograd.gradcheck(FeatureScale.apply, (x, s)))

# %% [markdown]
# Lesson 00 showed that autograd would sum a gradient of shape $(M, d)$ down to $(d,)$ by
# itself. Do the sum yourself anyway: the shapes of your gradients then say what you mean,
# and a matrix product such as `grad_weight` has no such safety net.

# %% [markdown]
# ## `needs_input_grad` saves real work
#
# Two of the three gradients of a linear layer cost a matrix product each, about
# $2 \cdot M \cdot \text{out} \cdot \text{in}$ floating-point operations (FLOPs): as much as
# the forward itself. `grad_bias` is only a sum. Often only some gradients are wanted:
#
# - the first layer of a network: $x$ is the data, with no gradient;
# - fine-tuning with frozen weights: $W$ and $b$ need none, but $x$ does, to reach
#   earlier layers.
#
# `torch.utils.flop_counter.FlopCounterMode` counts the FLOPs of the matrix products run
# inside it (not of sums or element-wise operations). Here is one backward through
# PyTorch's own `F.linear` for every choice of which inputs require a gradient:

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
for wanted, flops in zip(CHOICES, builtin):
    print(f"requires grad: {', '.join(wanted):<8} backward FLOPs: {flops:>4}")

# %%
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

# %% [markdown]
# PyTorch's linear pays one matrix product per gradient it is asked for, and nothing for a
# bias-only gradient. A backward that computes everything always pays the red line. Your
# Function should match the blue bars.

# %% [markdown]
# ## ✎ Exercise 1 · `MyLinearFunction`
#
# Write `MyLinearFunction`, with `MyLinearFunction.apply(x, weight, bias=None)` returning
# `x @ weight.T + bias`, where
#
# - `x` has shape $(*, \text{in})$: any number of leading dimensions, **including none**;
# - `weight` has shape $(\text{out}, \text{in})$;
# - `bias` has shape $(\text{out},)$ or is `None`.
#
# In backward, compute each gradient only if `ctx.needs_input_grad` asks for it (its input
# required grad when forward ran), and return `None` otherwise. Two details:
#
# - Called as `MyLinearFunction.apply(x, weight)`, forward receives **two** inputs, so
#   `ctx.needs_input_grad` has only two entries. Remember in forward whether there was a
#   bias (a plain boolean on `ctx` is fine). Backward may still return three values: a
#   trailing `None` is accepted.
# - Write the formulas yourself with `@`, `reshape` and `sum`: no `F.linear` or autograd
#   calls inside backward.

# %% nbgrader={"grade_id": "answer_MyLinearFunction", "solution": true}
class MyLinearFunction(torch.autograd.Function):
    """y = x @ weight.T + bias, with x of shape (*, in), weight (out, in), bias (out,) or None."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None  # a bool: a plain attribute
        y = x @ weight.T  # (*, in) @ (in, out) -> (*, out)
        if bias is not None:
            y = y + bias  # (out,) broadcasts over the leading dimensions
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight = ctx.saved_tensors
        out_features, in_features = weight.shape
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight  # (*, out) @ (out, in) -> (*, in)
        if ctx.needs_input_grad[1]:
            g2 = grad_output.reshape(-1, out_features)  # (M, out)
            x2 = x.reshape(-1, in_features)  # (M, in)
            grad_weight = g2.T @ x2  # (out, M) @ (M, in) -> (out, in)
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_bias = grad_output.reshape(-1, out_features).sum(dim=0)  # (M, out) -> (out,)
        return grad_x, grad_weight, grad_bias
        ### END SOLUTION


# %% nbgrader={"grade_id": "MyLinearFunction", "grade": true, "points": 3}
self_check("MyLinearFunction", MyLinearFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MyLinearFunction", MyLinearFunction)
### END HIDDEN TESTS

# %% [markdown]
# Try it on the shapes from the table: a single vector, a batch, a batch of sequences, with
# and without a bias. Every gradient has its input's shape:

# %%
weight = torch.randn(OUT, IN, requires_grad=True)
bias = torch.randn(OUT, requires_grad=True)
for shape in [(IN,), (ROWS, IN), (2, 3, IN)]:
    for b in (bias, None):
        x = torch.randn(shape, requires_grad=True)
        weight.grad = bias.grad = None
        MyLinearFunction.apply(x, weight, b).sum().backward()
        grad_b = "None" if bias.grad is None else tuple(bias.grad.shape)
        print(f"x {str(shape):<10} bias {'yes' if b is not None else 'no ':<4}"
              f"grad_x {str(tuple(x.grad.shape)):<10} grad_weight {tuple(weight.grad.shape)}"
              f"  grad_bias {grad_b}")

# %% [markdown]
# And the work it does, next to PyTorch's:

# %%
mine = [backward_flops(MyLinearFunction.apply, wanted) for wanted in CHOICES]
for wanted, flops, reference in zip(CHOICES, mine, builtin):
    verdict = "same" if flops == reference else "MORE WORK: check ctx.needs_input_grad"
    print(f"requires grad: {', '.join(wanted):<8} yours: {flops:>4}  F.linear: {reference:>4}"
          f"  {verdict}")

# %% [markdown]
# ### Your layer inside a network
#
# A two-layer network built from your Function, $\mathrm{relu}(x W_1^\top + b_1) W_2^\top + b_2$,
# and its backward one node at a time. The data `x` needs no gradient, so when the first
# layer's backward runs (the last `MyLinearFunction.backward`) its `grad_x` goes nowhere:
# with `ctx.needs_input_grad[0]` False, your backward returns `None` instead of paying for it.

# %%
data = torch.randn(2, 3)  # a batch of 2, 3 features; no gradient wanted
W1, b1 = torch.randn(4, 3, requires_grad=True), torch.randn(4, requires_grad=True)
W2, b2 = torch.randn(1, 4, requires_grad=True), torch.randn(1, requires_grad=True)
hidden = torch.relu(MyLinearFunction.apply(data, W1, b1))
prediction = MyLinearFunction.apply(hidden, W2, b2)
backward_flow(prediction.sum(), names=dict(W1=W1, b1=b1, W2=W2, b2=b2))

# %% [markdown]
# ## Fusing a linear layer and a ReLU
#
# A linear layer is very often followed by a ReLU: $y = \mathrm{relu}(z)$ with
# $z = x W^\top + b$. Left to autograd, the two are separate nodes, and each keeps what its
# own backward needs. Let's list what they keep, with the saved-tensor hooks from lesson 01:
# `saved_tensors_hooks(pack, unpack)` calls `pack` on every tensor saved for backward.

# %%
def saved_tensors_of(compute):
    """Run compute(); return [(shape, dtype, bytes)] of what autograd saved, each memory once."""
    saved = []

    def pack(tensor):
        saved.append(tensor)
        return tensor

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


x = torch.randn(64, 32, requires_grad=True)  # float32: 4 bytes per number
weight = torch.randn(16, 32, requires_grad=True)
bias = torch.randn(16, requires_grad=True)
show_saved("F.linear, then torch.relu", lambda: torch.relu(F.linear(x, weight, bias)))

# %% [markdown]
# Three tensors: $x$ and $W$ for the linear's backward ($W$ shows as $(32, 16)$ because
# `F.linear` saves the transposed view it multiplied by), and the ReLU's float output
# $(64, 16)$, 4 bytes per element.
#
# Autograd never keeps $z$ itself: nothing saves it, so it is freed as soon as the ReLU has
# run. What the ReLU keeps is its float output, and its backward reads from it only **where
# $z > 0$**:
#
# $$\frac{\partial L}{\partial z} = G \odot \mathbb{1}[z > 0], \qquad
#   \text{then the linear layer's three formulas with } \frac{\partial L}{\partial z}
#   \text{ in place of } G.$$
#
# One Function that does both can keep $x$, $W$ and a **boolean mask**, 1 byte per element
# where the float output took 4. It must keep no float tensor of shape $(*, \text{out})$,
# neither $z$ nor the output: that is the memory fusing is meant to drop.

# %% [markdown]
# ## ✎ Exercise 2 · `FusedLinearReLU`
#
# Write `FusedLinearReLU`, with `FusedLinearReLU.apply(x, weight, bias=None)` returning
# `relu(x @ weight.T + bias)`, shapes as in exercise 1.
#
# - Forward saves `x`, `weight` and the boolean mask `z > 0` through
#   `ctx.save_for_backward`: no float pre-activation $z$, no output.
# - Backward first multiplies `grad_output` by the mask (a new tensor), then applies the
#   three formulas of exercise 1, still skipping the gradients `ctx.needs_input_grad` rules out.

# %% nbgrader={"grade_id": "answer_FusedLinearReLU", "solution": true}
class FusedLinearReLU(torch.autograd.Function):
    """y = relu(x @ weight.T + bias), keeping a boolean mask instead of the pre-activation."""

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ### BEGIN SOLUTION
        z = x @ weight.T  # (*, out)
        if bias is not None:
            z = z + bias
        positive = z > 0  # bool (*, out): all the ReLU's backward needs
        ctx.save_for_backward(x, weight, positive)
        ctx.has_bias = bias is not None
        return z.clamp(min=0)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight, positive = ctx.saved_tensors
        out_features, in_features = weight.shape
        grad_z = grad_output * positive  # through the ReLU: (*, out)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_z @ weight  # (*, out) @ (out, in) -> (*, in)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_z.reshape(-1, out_features).T @ x.reshape(-1, in_features)
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
# ## What did fusing save?
#
# The same block as before, now through your Function:

# %%
show_saved("FusedLinearReLU", lambda: FusedLinearReLU.apply(x, weight, bias))

# %% [markdown]
# The inspector shows the same from inside your Function: `x` and `weight` are inputs the
# caller holds anyway; the boolean mask is the only new memory. Untick `weight.requires_grad`
# and watch `ctx.needs_input_grad` change.

# %%
inspect_saved(FusedLinearReLU, x, weight, bias)

# %% [markdown]
# The $(64, 16)$ float32 output (4096 bytes) became a $(64, 16)$ mask (1024 bytes): a
# quarter, or an eighth in float64.
#
# **Measure in context, though**, and keep two numbers apart:
#
# - **bytes kept between the passes**: what the graph holds from the end of forward until
#   backward frees it. In a deep network every layer's share is alive at once when backward
#   starts, so this is what grows with depth.
# - **peak memory**: the most that is alive at any moment of the step. Inside this one block
#   fusing does not lower it: `FusedLinearReLU.forward` still materialises $z$, the output
#   and the mask at the same time, where the composed version has only $z$ and the output.
#
# Saving never copies, so memory that two nodes save is kept once. If the next layer saves
# the ReLU's output anyway (a trainable linear layer does: it needs its input for
# `grad_weight`), the composed version's saved output costs nothing extra, and your mask
# becomes the extra. Fusing wins when nothing downstream keeps the activation: a residual
# addition, a sum, a linear layer with frozen weights. Two networks of eight blocks, width
# 64, a batch of 256, each built once from PyTorch's ops and once from your Function:
#
# - **plain**, $h \leftarrow \mathrm{relu}(h W_i^\top + b_i)$: the next block's linear keeps
#   each ReLU output anyway;
# - **residual**, $h \leftarrow h + \mathrm{relu}(h W_i^\top + b_i)$: the addition keeps
#   nothing, so the ReLU output is kept only for the ReLU's own backward.
#
# `TensorAccounting` (from the grading library) watches every tensor created during one
# training step and reports the bytes alive after forward and the peak, beyond the inputs
# and weights that exist before the step.

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
        kept = books.now
        loss.backward()
        del loss
    for p in weights + biases:
        p.grad = None
    return kept / 1024, books.phase.peak / 1024


measured = {(net, name): step_memory(networks[net], block)
            for net in networks for name, block in blocks.items()}
print(f"{'':<33} {'kept after forward':>19} {'peak of the step':>17}")
for (net, name), (kept, peak) in measured.items():
    print(f"{net + ', ' + name:<33} {kept:>15.0f} KiB {peak:>13.0f} KiB")

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

# %% [markdown]
# In the residual network fusing keeps less and lowers the peak; in the plain one it keeps
# more, and a version that saves its output instead of a mask (the ReLU's derivative can be
# read from $y > 0$) would only match the composed version's bytes kept. Fusing in Python
# changes **what is kept**; it cannot avoid materialising $z$. Real fused kernels win twice
# more: they apply the ReLU to $z$ in fast on-chip memory instead of writing $z$ out and
# reading it back, and some pack the mask into one **bit** per element.

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `grad_x = grad_output @ weight.T` | a shape error when in $\ne$ out; silently wrong when $W$ is square | `grad_output @ weight`: $(*, \text{out}) \cdot (\text{out}, \text{in})$ |
# | `grad_weight = grad_output.T @ x` without flattening | an error or a wrong result for 1-D or 3-D `x` | flatten first: `g2.T @ x2` with `reshape(-1, n)` |
# | `grad_bias = grad_output` | works only because the engine sums it for you; unclear | `grad_output.reshape(-1, out).sum(dim=0)` |
# | reading `ctx.needs_input_grad[2]` when called without a bias | `IndexError`: only two inputs were passed | remember `bias is not None` in forward |
# | computing every gradient always | twice the backward FLOPs when only one is needed | `if ctx.needs_input_grad[i]:` |
# | saving the float pre-activation `z` in the fused Function | the memory fusing was meant to save is still spent | save `z > 0` |
# | `ctx.mask = z > 0` | skips the in-place check; saved-tensor hooks miss it | `ctx.save_for_backward(x, weight, mask)` |
# | `grad_output[~mask] = 0` | corrupts gradients autograd shares | `grad_output * mask` |
#
# **Where a popular text is wrong.** For $y = x W^\top$, $\;\partial L/\partial x = G\,W$.
# One widely read text corrects `grad_output @ W` into `grad_output @ W.t()`. The shapes
# $(N, \text{out}) \cdot (\text{in}, \text{out})$ show the mistake: with in $\ne$ out the
# "fix" fails, and with a square $W$ it runs and gives wrong numbers, as autograd confirmed
# above. A transpose in the forward does not mean a transpose in every backward formula:
# $W^\top$ in the forward becomes $W$ in `grad_x` and stays out of `grad_weight`'s
# $G^\top x$ altogether.
#
# ## Summary
#
# Write the shapes next to every formula: `grad_x` $= G W$, `grad_weight` $= G^\top x$ and
# `grad_bias` $= \sum G$, with every leading dimension flattened into the sum for the
# parameters. Check `ctx.needs_input_grad` before each expensive product, and count the
# work to prove it. Fusing lets one Function keep only what backward truly needs, such as a
# boolean mask, but measure memory in the whole graph, not just the block.
