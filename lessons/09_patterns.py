# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 09 · Gradient patterns: broadcasting, reductions, scans and selections
#
# Open the backward of almost any operator in PyTorch and you find the same few moves. A
# bias added to a batch is **broadcast** in forward, so its gradient is a **sum** over the
# batch. A loss **reduces** a tensor to a number, so its gradient is **expanded** back to the
# tensor's shape. A running total is a **scan**, and its gradient is the same scan run
# backwards. An embedding lookup **selects** rows, some of them many times, so its gradient
# **scatters** back and **adds up** the repeats. A normalisation divides by a norm, so its
# gradient **projects out** the direction the division removed.
#
# This lesson derives each pattern in index notation, writing $\partial y_o / \partial x_i$ for
# one output entry $o$ and one input entry $i$, as the Autodiff-Puzzles notebooks do, and then
# turns the derivation into a backward. You derive every backward yourself: each exercise
# states the forward and asks questions; the answer is in a collapsed **check your
# derivation** block to open after your attempt. A picture helps: the **Jacobian view** draws
# $\partial y_o / \partial x_i$ as your backward computes it beside autograd's, and outlines
# every entry where they differ.
#
# By the end of this lesson you can:
# 1. turn a forward written with indices into its backward by summing over the output index;
# 2. reduce a broadcast gradient to its input's exact shape (`sum_to_size`, `keepdim`), and
#    say what the autograd engine does when you do not;
# 3. expand a reduced gradient without copying it (`expand`);
# 4. differentiate a product with zeros in it without dividing by zero;
# 5. run a scan backwards, and scatter a selection back with `index_add`;
# 6. derive the gradient of a normalisation as a projection.
#
# Exercises: **✎ 1 `BroadcastMul`**, **✎ 2 `ProdOverDim`**, **✎ 3 `Cumsum`**,
# **✎ 4 `IndexSelect`**, **✎ 5 `Normalize`**.

# %% nbgrader={"locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from autograder import self_check
from widgets import jacobian_view
from widgets.jacobian import reference_jacobian

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it
torch.set_printoptions(precision=4)


def first_line(error: BaseException) -> str:
    """The first line of an error message, which is where PyTorch says what went wrong."""
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"


# %% [markdown]
# ## The method: write the forward with indices, then sum over the output
#
# Backward receives $g = \partial L / \partial y$, one number per output entry, and must return
# $\partial L / \partial x$, one number per input entry. The chain rule says
#
# $$\frac{\partial L}{\partial x_i} \;=\; \sum_o \frac{\partial L}{\partial y_o}\,
#   \frac{\partial y_o}{\partial x_i} \;=\; \sum_o g_o\, J_{o,i}.$$
#
# Three steps turn any forward into its backward:
#
# 1. **Write one output entry with indices**, e.g. $y_{r} = \sum_c x_{r,c}$.
# 2. **Differentiate it by one input entry**, with a Kronecker delta $\delta_{rs}$ (1 if
#    $r = s$, else 0) wherever the answer depends on two indices being equal:
#    $\partial y_r / \partial x_{s,c} = \delta_{rs}$.
# 3. **Multiply by $g_o$ and sum over every output index.** The deltas collapse the sums:
#    $\sum_r g_r \delta_{rs} = g_s$. An index left *summed* on the right becomes a reduction
#    in code; an index of the input (on the left) that no tensor on the right carries, like
#    $c$ here, becomes a broadcast: the same value for every $c$.
#
# Backward never builds $J$ (it has one row per output entry and one column per input entry);
# it computes the sum in step 3 directly. But $J$ is a good picture: in the view below, row $o$
# of the left panel is what *your* backward returns when `grad_output` is the basis vector
# $e_o$ (1 at entry $o$, 0 elsewhere), and the right panel is autograd's.
#
# ## Worked example: `sum` and `mean` over a dim, with and without `keepdim`
#
# Take $x$ of shape $(R, C)$ and $y = $ `x.sum(dim=1)`. Step 1: $y_r = \sum_c x_{r,c}$. Step 2:
# $\partial y_r / \partial x_{s,c} = \delta_{rs}$, for every $c$. Step 3:
#
# $$\frac{\partial L}{\partial x_{s,c}} = \sum_r g_r\, \delta_{rs} = g_s .$$
#
# The right-hand side has no $c$: every entry of row $s$ gets the same $g_s$. In code that is
# an **expand** of $g$ along the dimension forward reduced. The shape needs care:
#
# - with `keepdim=True`, $y$ (and so $g$) has shape $(R, 1)$, and `g.expand(R, C)` repeats it
#   along the columns;
# - with `keepdim=False`, $g$ has shape $(R,)$. Broadcasting aligns shapes **from the right**,
#   so a shape $(R,)$ would be matched against the **columns**. Put the reduced dimension back
#   first: `g.unsqueeze(dim)`.
#
# For the mean, $y_r = \frac1C \sum_c x_{r,c}$, so every entry gets $g_s / C$.
#
# **Quick question 1.** $x$ has shape $(3, 3)$, `dim=1`, `keepdim=False`, so $g$ has shape
# $(3,)$. Forget the unsqueeze: in `g.expand(3, 3)`, is entry $(r, c)$ equal to $g_r$ (right)
# or to $g_c$? Predict, then run the cell.

# %%
g = torch.tensor([1.0, 2.0, 3.0])
print("g.expand(3, 3):\n", g.expand(3, 3))
print("g.unsqueeze(1).expand(3, 3):\n", g.unsqueeze(1).expand(3, 3))
try:
    g.expand(3, 4)  # the same mistake when x has shape (3, 4)
except RuntimeError as error:
    print(first_line(error))

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# Without the unsqueeze, $(3,)$ is aligned with the **last** dimension, so row $r$ of the
# expanded tensor is $g$ itself and entry $(r, c)$ is $g_c$: the gradient goes to the wrong
# entries, silently, because $x$ happens to be square. With $x$ of shape $(3, 4)$ the same
# mistake is an error. `g.unsqueeze(1)` has shape $(3, 1)$, and expanding it repeats $g_r$
# along row $r$.
# </details>
#
# ### `expand` does not copy
#
# An expanded tensor is a **view**: it shares the memory of the tensor it came from and walks
# over it with a **stride of 0** along the expanded dimension, so every column reads the same
# number. A gradient of $(3, 1000)$ entries built this way costs the memory of 3.

# %%
big = g.unsqueeze(1).expand(3, 1000)
print("shape:", tuple(big.shape), " stride:", big.stride(),
      " same memory as g:", big.data_ptr() == g.data_ptr(),
      " bytes behind it:", big.untyped_storage().nbytes())

# %% [markdown]
# Here is the worked example as a Function, `SumOverDim.apply(x, dim, keepdim)`, and the mean
# built on it. `dim` and `keepdim` are Python values, so backward returns `None` for them.

# %%
class SumOverDim(torch.autograd.Function):
    """x.sum(dim, keepdim=keepdim): y[r] = sum_c x[r, c] for dim=1."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim  # sizes only: no tensor saved
        return x.sum(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        if not ctx.keepdim:
            grad_output = grad_output.unsqueeze(ctx.dim)  # put back the dim forward removed
        return grad_output.expand(ctx.shape), None, None  # dL/dx[s, c] = g[s], for every c


class MeanOverDim(SumOverDim):
    """x.mean(dim, keepdim=keepdim): the sum's gradient divided by the count."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        ctx.shape, ctx.dim, ctx.keepdim = x.shape, dim, keepdim
        return x.mean(dim, keepdim=keepdim)

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, _, _ = SumOverDim.backward(ctx, grad_output)
        return grad_x / ctx.shape[ctx.dim], None, None


x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
for function in (SumOverDim, MeanOverDim):
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            assert torch.autograd.gradcheck(function.apply, (x, dim, keepdim))
print("gradcheck passes for sum and mean, every dim, with and without keepdim")

# %% [markdown]
# The Jacobian of the sum over `dim=1`, read from `SumOverDim`'s backward one basis vector at a
# time: output $y_r$ depends on the four entries of row $r$ and on nothing else, so each row of
# $J$ holds a block of four ones. Reading the picture by columns is reading the backward: input
# $x_{s,c}$ receives the gradient of exactly one output, $y_s$.

# %%
jacobian_view(SumOverDim, lambda x, dim, keepdim: x.sum(dim, keepdim=keepdim),
              torch.randn(3, 4, dtype=torch.float64), 1, False)

# %% [markdown]
# ## Broadcasting in forward is a sum in backward
#
# Now the other direction: forward **repeats** an input. Let $a$ have shape $(R, 1)$ and $b$
# shape $(C,)$, and $y = a + b$, of shape $(R, C)$: $y_{r,k} = a_{r,0} + b_k$. For $a$:
#
# $$\frac{\partial y_{r,k}}{\partial a_{s,0}} = \delta_{rs}, \qquad
#   \frac{\partial L}{\partial a_{s,0}} = \sum_{r,k} g_{r,k}\, \delta_{rs}
#   = \sum_k g_{s,k}.$$
#
# The index $k$ was broadcast in forward, and it is **summed** in backward; $a$'s dimension of
# size 1 stays, so the sum keeps it (`keepdim=True`). For $b$, the index $r$ does not exist at
# all (a **missing leading dimension**), and the sum over it removes the dimension. Every
# broadcast works the same way: sum $g$ over the dimensions the input was repeated along, keep
# the ones where the input has size 1, drop the ones it does not have.
#
# `Tensor.sum_to_size(shape)` does exactly this: it sums a tensor down to `shape`, which must
# be a shape that broadcasts **up** to the tensor's.

# %%
grad = torch.arange(24.0).reshape(2, 3, 4)
for shape in [(3, 4), (4,), (3, 1), (1, 4), (2, 1, 4), ()]:
    print(f"sum_to_size{shape}:".ljust(24), tuple(grad.sum_to_size(shape).shape))
try:
    grad.sum_to_size(2, 1, 1, 4)
except RuntimeError as error:
    print(first_line(error))

# %% [markdown]
# ### What the engine does with a gradient of the wrong shape
#
# Backward must return, for each input, a gradient of that input's shape. But the autograd
# engine checks what backward returned, and when a gradient has a shape the input **could be
# broadcast to**, it sums it down to the input's shape itself. Here is a Function that returns
# a gradient of ones of a chosen shape, to see what comes out in `x.grad`.
#
# **Quick question 2.** The input has shape $(3, 1)$ and backward returns a gradient of shape
# $(2, 3, 4)$. Does the engine accept it, and if so, what shape and values end up in `x.grad`?
# And for a gradient of shape $(3,)$, the same numbers without the dimension of size 1?

# %%
class ReturnsShape(torch.autograd.Function):
    """Identity forward; backward returns ones of the shape ``ReturnsShape.returned``."""

    returned = ()

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones(ReturnsShape.returned, dtype=grad_output.dtype)


for input_shape, returned in [((4,), (3, 4)), ((3, 1), (3, 4)), ((3, 1), (2, 3, 4)),
                              ((), (3,)), ((4,), (1, 4)),
                              ((3, 1), (3,)), ((3, 4), (4,)), ((3, 4), (12,)), ((2, 4), (3, 4))]:
    ReturnsShape.returned = returned
    x = torch.zeros(input_shape, requires_grad=True)
    try:
        ReturnsShape.apply(x).sum().backward()
        verdict = f"summed to {tuple(x.grad.shape)}, values {x.grad.unique().tolist()}"
    except RuntimeError as error:
        verdict = "refused: " + str(error).split(" - ")[1]
    print(f"input {str(input_shape):8} returned {str(returned):10} -> {verdict}")

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# $(3, 1)$ broadcasts to $(2, 3, 4)$, so the engine accepts that gradient and sums it over the
# leading dimension and the last one, keeping the size-1 dimension: `x.grad` has shape
# $(3, 1)$ and every entry is $2 \times 4 = 8$. A gradient of shape $(3,)$ is refused: $(3, 1)$
# does not broadcast to $(3,)$, even though the numbers would fit. The engine sums; it never
# adds or reshapes a dimension.
# </details>
#
# So why should backward reduce at all? Because the engine's help is narrower than it looks:
#
# - it is part of the **engine's** call, not of your Function. Anything that calls your
#   backward itself (another Function reusing it in a fused backward, a test, a reader checking
#   the maths) gets a gradient of the wrong shape;
# - it covers only shapes the input broadcasts to: a sum that dropped a dimension of size 1 is
#   refused, as above, so "the engine fixes my shapes" is half a rule;
# - the broadcast-sized gradient exists in memory, in full, before the engine sums it;
# - the contract of `backward` (and of every exercise here) is one gradient **of the input's
#   shape** per input. The grader records what your backward returns *before* the engine sees
#   it, and so does the Jacobian view: a forgotten sum shows as extra columns.
#
# ## ✎ Exercise 1 · `BroadcastMul`
#
# Write `BroadcastMul`, with `BroadcastMul.apply(a, b)` returning `a * b` for **any** two
# broadcastable shapes: either input may be the one that is broadcast, along dimensions of
# size 1, missing leading dimensions, or both; either may be 0-dim.
#
# - Backward returns gradients of **exactly** `a.shape` and `b.shape`.
# - It computes only the gradients that are needed: `ctx.needs_input_grad[0]` and `[1]` say
#   whether $a$ and $b$ need one; return `None` for an input that does not.
#
# Derive it before you write it:
#
# 1. Take $a$ of shape $(R, 1)$ and $b$ of shape $(C,)$, so $y_{r,k} = a_{r,0}\, b_k$. Write
#    $\partial y_{r,k} / \partial a_{s,0}$ and $\partial y_{r,k} / \partial b_j$.
# 2. Multiply by $g_{r,k}$ and sum over $r$ and $k$. Which index does each delta remove, and
#    which sum is left? Write both gradients with tensors of shape $(R, C)$ and a sum.
# 3. Which of your sums keep their dimension, and which remove it? Check that one call of
#    `sum_to_size` does the right thing for both, and for any pair of shapes.
# 4. What does backward need from forward? What may it skip when only $a$ needs a gradient?

# %% [markdown]
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# Step 1: $\partial y_{r,k} / \partial a_{s,0} = \delta_{rs}\, b_k$ and
# $\partial y_{r,k} / \partial b_j = a_{r,0}\, \delta_{kj}$.
#
# Step 2: $\partial L / \partial a_{s,0} = \sum_{r,k} g_{r,k}\, \delta_{rs}\, b_k
# = \sum_k g_{s,k}\, b_k$, the product $g \odot b$ (broadcast to $(R, C)$) summed over $k$;
# $\partial L / \partial b_j = \sum_r g_{r,j}\, a_{r,0}$, the product $g \odot a$ summed over
# $r$.
#
# Step 3: $a$ keeps its dimension of size 1 (`.sum(1, keepdim=True)`), $b$ never had the
# dimension $r$ (`.sum(0)`). `(grad_output * b).sum_to_size(a.shape)` and
# `(grad_output * a).sum_to_size(b.shape)` do both, for any shapes, 0-dim included.
#
# Step 4: backward needs $a$ and $b$: save both inputs (no intermediate). With only $a$
# needing a gradient, skip the product and the sum for $b$ and return `None` for it.
# </details>

# %% nbgrader={"grade_id": "answer_BroadcastMul", "solution": true}
class BroadcastMul(torch.autograd.Function):
    """a * b for any two broadcastable shapes."""

    @staticmethod
    def forward(ctx, a, b):
        ### BEGIN SOLUTION
        ctx.save_for_backward(a, b)
        return a * b
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        a, b = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_a = (grad_output * b).sum_to_size(a.shape)  # sum where a was broadcast
        if ctx.needs_input_grad[1]:
            grad_b = (grad_output * a).sum_to_size(b.shape)
        return grad_a, grad_b
        ### END SOLUTION


# %% nbgrader={"grade_id": "BroadcastMul", "grade": true, "points": 2}
self_check("BroadcastMul", BroadcastMul)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("BroadcastMul", BroadcastMul)
### END HIDDEN TESTS

# %% [markdown]
# Your `BroadcastMul`'s Jacobian with respect to $a$ of shape $(3, 1)$ and $b$ of shape $(4,)$
# (pick the input above the picture). Each output $y_{r,k}$ depends on one entry of $a$,
# $a_{r,0}$, so the columns of $a$ are blocks of four; its column for $b_j$ has one entry per
# row of $a$.

# %%
a_example = torch.randn(3, 1, dtype=torch.float64)
b_example = torch.randn(4, dtype=torch.float64)
jacobian_view(BroadcastMul, lambda a, b: a * b, a_example, b_example)

# %% [markdown]
# And this is what a backward that forgets the sum looks like: it returns
# `grad_output * b`, of shape $(3, 4)$, for $a$ of shape $(3, 1)$. The engine would sum it and
# `x.grad` would be right; the picture shows what backward actually returned, twelve columns
# where $a$ has three.

# %%
class MulWithoutSum(torch.autograd.Function):
    """Wrong on purpose: returns the broadcast-sized gradients unsummed."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b, grad_output * a


jacobian_view(MulWithoutSum, lambda a, b: a * b, a_example, b_example)

# %% [markdown]
# ## Reductions that are not sums: the product
#
# `torch.prod(x, dim)` multiplies the entries along `dim` and removes that dimension. For $x$
# of shape $(R, C)$ and `dim=1`, $y_r = \prod_c x_{r,c}$. Its gradient is "the product of the
# others", and zeros make that interesting.
#
# **Quick question 3.** For the slices $[2, 0, 3]$ and $[0, 0, 3]$, what is the gradient of
# the product with respect to each entry? Predict all six numbers, then run autograd on
# `torch.prod`.

# %%
slices = torch.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 3.0]], requires_grad=True)
torch.prod(slices, dim=1).sum().backward()
print(slices.grad)

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# $[0, 6, 0]$ and $[0, 0, 0]$. Changing the 2 or the 3 of $[2, 0, 3]$ leaves a product with a 0
# in it, so their gradients are 0; changing the 0 by $\epsilon$ changes the product by
# $2 \cdot 3 \cdot \epsilon$. In $[0, 0, 3]$ every product of "the others" still contains a
# zero.
# </details>
#
# ## ✎ Exercise 2 · `ProdOverDim`
#
# Write `ProdOverDim`, with `ProdOverDim.apply(x, dim)` returning `torch.prod(x, dim)` (no
# `keepdim`), `dim` a Python int (negative allowed; for a 0-dim `x`, `torch.prod(x, 0)` is `x`
# itself).
#
# - The gradient must be **exact and finite** whether a slice along `dim` holds no zero,
#   exactly one zero, or several.
# - Backward returns `None` for `dim`.
#
# Derive it:
#
# 1. Write $\partial y_r / \partial x_{s,c}$ for $y_r = \prod_c x_{r,c}$, using a delta and a
#    product over $c' \ne c$.
# 2. Multiply by $g_r$ and sum over $r$. Which pattern of the worked example does $g$ follow,
#    and what does that mean for its shape when `keepdim` is not used?
# 3. "The product of the others" equals $y_r / x_{s,c}$ when nothing is zero. Go through the
#    three zero cases of quick question 3 and see where the division fails.
# 4. Compute the product of the others **without dividing**: it is (the product of everything
#    before $c$) times (the product of everything after $c$). Which PyTorch op computes running
#    products, and how do you make them *exclusive* (not including $c$ itself) and run them
#    from the other end?

# %% [markdown]
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# Step 1: $\partial y_r / \partial x_{s,c} = \delta_{rs} \prod_{c' \ne c} x_{s,c'}$.
#
# Step 2: $\partial L / \partial x_{s,c} = g_s \prod_{c' \ne c} x_{s,c'}$: $g$ is expanded
# along the reduced dimension, so `grad_output.unsqueeze(dim)` before multiplying.
#
# Step 3: with one zero at position $k$, $y = 0$, so $y / x$ gives $0/0 = $ `nan` at $k$ (the
# true value is the product of the others, usually not 0) and $0$ elsewhere (right). With
# several zeros every entry's gradient is 0, and $y / x$ still gives `nan` at the zeros.
#
# Step 4: with `torch.cumprod`, shift by one to make it exclusive:
# `before = cat([ones, x[..., :-1]]).cumprod(dim)`, and the same on `x.flip(dim)`, flipped back,
# for `after`; the gradient is `grad_output.unsqueeze(dim) * before * after`. No division, so
# every zero case is exact. (Counting the zeros per slice and treating the cases separately,
# dividing only where no zero is involved, is also correct.) A 0-dim $x$ has
# $y = x$, so its gradient is `grad_output`.
# </details>

# %% nbgrader={"grade_id": "answer_ProdOverDim", "solution": true}
class ProdOverDim(torch.autograd.Function):
    """torch.prod(x, dim): the product along dim, which is removed."""

    @staticmethod
    def forward(ctx, x, dim):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        ctx.dim = dim
        return torch.prod(x, dim)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        if x.dim() == 0:
            return grad_output.clone(), None  # prod of a 0-dim x is x itself
        dim, size = ctx.dim, x.shape[ctx.dim]
        ones = torch.ones_like(x.narrow(dim, 0, 1))
        # products of everything strictly before, and strictly after, each position
        before = torch.cat([ones, x.narrow(dim, 0, size - 1)], dim).cumprod(dim)
        after = torch.cat([x.narrow(dim, 1, size - 1), ones], dim).flip(dim).cumprod(dim)
        others = before * after.flip(dim)  # the product of the others, no division
        return grad_output.unsqueeze(dim) * others, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "ProdOverDim", "grade": true, "points": 2}
self_check("ProdOverDim", ProdOverDim)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ProdOverDim", ProdOverDim)
### END HIDDEN TESTS

# %% [markdown]
# Your `ProdOverDim` over `dim=1` of slices with no zero, one zero and two zeros. Each output
# $y_r$ depends only on row $r$; in the row of a slice with one zero only the zero's column is
# non-zero, and the slice with two zeros has an empty row.

# %%
jacobian_view(ProdOverDim, torch.prod,
              torch.tensor([[1.5, -2.0, 0.5], [2.0, 0.0, -1.5], [0.0, 3.0, 0.0]],
                           dtype=torch.float64), 1)

# %% [markdown]
# ## Scans: the running sum
#
# `torch.cumsum(x, dim)` replaces each entry by the sum of everything up to it along `dim`:
# for a vector, $y_o = \sum_{i \le o} x_i$. Such **scans** (running sums, running products,
# running maxima) are everywhere in sequence models: cumulative rewards, linear attention,
# state-space models.
#
# ## ✎ Exercise 3 · `Cumsum`
#
# Write `Cumsum`, with `Cumsum.apply(x, dim)` returning `torch.cumsum(x, dim)` for any shape
# (0-dim included) and any `dim`, negative too.
#
# - Backward saves **no tensor**: keep `dim` as a plain ctx attribute.
# - Backward returns `None` for `dim`.
#
# Derive it:
#
# 1. For a vector, write $\partial y_o / \partial x_i$ with an indicator $[\,\cdot\,]$. Draw
#    $J$ for five entries: which triangle is filled?
# 2. Multiply by $g_o$ and sum over $o$. For a given $i$, which outputs contribute?
# 3. Write that sum with `cumsum` and one more op, used twice. Why does backward need nothing
#    from forward?

# %% [markdown]
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# Step 1: $\partial y_o / \partial x_i = [i \le o]$: $J$ is lower triangular, ones on and below
# the diagonal.
#
# Step 2: $\partial L / \partial x_i = \sum_o g_o [i \le o] = \sum_{o \ge i} g_o$: the sum of
# everything **from** $i$ **to the end**, a cumulative sum run backwards ($J^\top$ is upper
# triangular).
#
# Step 3: `grad_output.flip(dim).cumsum(dim).flip(dim)`. $J$ does not depend on $x$ at all
# (the scan is linear), so backward needs only `dim`. (Equivalently: the total minus the
# running sum plus the entry itself.)
# </details>

# %% nbgrader={"grade_id": "answer_Cumsum", "solution": true}
class Cumsum(torch.autograd.Function):
    """torch.cumsum(x, dim): running sums along dim."""

    @staticmethod
    def forward(ctx, x, dim):
        ### BEGIN SOLUTION
        ctx.dim = dim  # a linear map: backward needs no tensor
        return torch.cumsum(x, dim)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        dim = ctx.dim
        # x_i reaches every y_o with o >= i: a running sum from the end
        return grad_output.flip(dim).cumsum(dim).flip(dim), None
        ### END SOLUTION


# %% nbgrader={"grade_id": "Cumsum", "grade": true, "points": 2}
self_check("Cumsum", Cumsum)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Cumsum", Cumsum)
### END HIDDEN TESTS

# %%
jacobian_view(Cumsum, torch.cumsum, torch.randn(2, 4, dtype=torch.float64), 1)

# %% [markdown]
# ## Selections: gather forward, scatter and add backward
#
# `torch.index_select(x, 0, index)` picks rows of $x$: output row $k$ is row `index[k]` of
# $x$. The index may repeat a row (an embedding lookup of a sentence with the same word twice)
# or be empty. Two tools for the way back:
#
# - `Tensor.index_add(dim, index, source)` returns a copy of the tensor with row $k$ of
#   `source` **added** to row `index[k]`, for every $k$; a row named twice receives both;
# - `t[index] = v` (which is `t.index_put_((index,), v)`) **writes** row $k$ of `v` to row
#   `index[k]`. With a repeated index, PyTorch's documentation says the result is undefined:
#   one write survives, and which one is not promised.
#
# **Quick question 4.** `idx = [4, 0, 4]`, `v = [1, 2, 3]`. What is entry 4 of
# `zeros(5).index_add(0, idx, v)`, and what of `z = zeros(5); z[idx] = v`?

# %%
idx, v = torch.tensor([4, 0, 4]), torch.tensor([1.0, 2.0, 3.0])
print("index_add:  ", torch.zeros(5).index_add(0, idx, v))
z = torch.zeros(5)
z[idx] = v
print("assignment: ", z)

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# `index_add` gives $1 + 3 = 4$ at entry 4. The assignment gives one of the two values, here
# 3, the last write; on another device or another size it may be the other, and the
# documentation promises neither. Either way one of them is lost.
# </details>
#
# ## ✎ Exercise 4 · `IndexSelect`
#
# Write `IndexSelect`, with `IndexSelect.apply(x, index)` returning
# `torch.index_select(x, 0, index)`, for `x` with at least one dimension and `index` a 1-D
# int64 tensor whose entries may **repeat**, or that may be **empty**.
#
# - Save **only** `index` (with `save_for_backward`) and the shape backward needs (a
#   `torch.Size`, as a plain ctx attribute). Backward never needs the values of $x$.
# - Backward returns `None` for `index`.
#
# Derive it:
#
# 1. Write $y_{k,c}$ with `index`, and $\partial y_{k,c} / \partial x_{s,d}$ with an indicator
#    and a delta.
# 2. Multiply by $g_{k,c}$ and sum over $k$ and $c$. Which rows $k$ of $g$ reach row $s$ of the
#    gradient? What does a row of $x$ that `index` never names get, and one that it names
#    three times?
# 3. Which of the two tools above computes your sum, and why is the other one wrong here?

# %% [markdown]
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# Step 1: $y_{k,c} = x_{\text{index}_k,\,c}$, so
# $\partial y_{k,c} / \partial x_{s,d} = [\text{index}_k = s]\, \delta_{cd}$.
#
# Step 2: $\partial L / \partial x_{s,d} = \sum_k [\text{index}_k = s]\, g_{k,d}$: the sum of
# the rows of $g$ whose index is $s$. A row never named gets 0; a row named three times gets
# three rows of $g$ added.
#
# Step 3: `grad_output.new_zeros(ctx.shape).index_add(0, index, grad_output)`. Assignment keeps
# one of the repeated rows and loses the rest. An empty index adds nothing: the gradient is
# all zeros, and `index_add` handles that without a special case.
# </details>

# %% nbgrader={"grade_id": "answer_IndexSelect", "solution": true}
class IndexSelect(torch.autograd.Function):
    """torch.index_select(x, 0, index): rows of x, repeats and an empty index allowed."""

    @staticmethod
    def forward(ctx, x, index):
        ### BEGIN SOLUTION
        ctx.save_for_backward(index)
        ctx.shape = x.shape  # a torch.Size, not a tensor
        return torch.index_select(x, 0, index)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        index, = ctx.saved_tensors
        # row k of grad_output belongs to row index[k] of x; repeated rows add up
        return grad_output.new_zeros(ctx.shape).index_add(0, index, grad_output), None
        ### END SOLUTION


# %% nbgrader={"grade_id": "IndexSelect", "grade": true, "points": 2}
self_check("IndexSelect", IndexSelect)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("IndexSelect", IndexSelect)
### END HIDDEN TESTS

# %% [markdown]
# Your `IndexSelect` with `index = [3, 0, 3, 3]`: the two columns of row 3 of $x$ each have
# three ones, one per output row that copied it. Below it, the backward that assigns instead
# of adding: the outlined entries are the repeats it lost.

# %%
rows = torch.randn(5, 2, dtype=torch.float64)
repeated = torch.tensor([3, 0, 3, 3])


def index_select_rows(x, index):
    return torch.index_select(x, 0, index)


jacobian_view(IndexSelect, index_select_rows, rows, repeated)


# %%
class SelectByAssignment(torch.autograd.Function):
    """Wrong on purpose: grad[index] = grad_output keeps one of the repeated rows."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.shape = x.shape
        return torch.index_select(x, 0, index)

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        grad_x = grad_output.new_zeros(ctx.shape)
        grad_x[index] = grad_output
        return grad_x, None


jacobian_view(SelectByAssignment, index_select_rows, rows, repeated)

# %% [markdown]
# ## Normalisation: dividing by a norm
#
# `F.normalize(x, dim=-1, eps=eps)` scales each row (the last dimension) to length 1:
#
# $$y_j = \frac{x_j}{\max(\lVert x \rVert, \varepsilon)}, \qquad
#   \lVert x \rVert = \sqrt{\textstyle\sum_k x_k^2},$$
#
# where $\varepsilon$ keeps a row of zeros (or nearly) from dividing by zero: such a row is
# divided by $\varepsilon$ instead and stays short. Normalising removes one thing from $x$, its
# length; the gradient reflects that.
#
# **Quick question 5.** A row well above $\varepsilon$, and `grad_output` equal to $y$ itself
# (the loss grows when the output grows along its own direction). What is the gradient with
# respect to $x$? And for a row whose norm is below $\varepsilon$?

# %%
row = torch.tensor([[3.0, 4.0], [0.003, 0.004]], dtype=torch.float64, requires_grad=True)
y = F.normalize(row, dim=-1, eps=0.01)
grad_row, = torch.autograd.grad(y, row, y.detach())
print("y:", y.detach(), "\ngradient for grad_output = y:", grad_row)

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# Zero for the first row, up to rounding: stretching $x$ along itself leaves its direction,
# and so $y$, unchanged, and $y$ cannot grow along itself, since it has length 1 whatever $x$
# is. The second row has norm $0.005 < \varepsilon$: it is divided by the constant $\varepsilon$,
# $y = x / \varepsilon$ is linear in $x$, and the gradient is $y / \varepsilon$, not zero.
# </details>
#
# ## ✎ Exercise 5 · `Normalize`
#
# Write `Normalize`, with `Normalize.apply(x, eps)` returning
# `F.normalize(x, dim=-1, eps=eps)`, `eps` a Python float, for any shape (rows are the last
# dimension).
#
# - Backward must be a **closed form**: no $d \times d$ Jacobian per row, only a few tensors of
#   $x$'s size.
# - Save the **output** and **one norm per row**, nothing else.
# - It must be right on rows whose norm is **below** `eps` (and on rows of zeros).
# - Backward returns `None` for `eps`.
#
# Derive it, for one row and $n = \lVert x \rVert$:
#
# 1. Below $\varepsilon$: $y_j = x_j / \varepsilon$. Write $\partial y_j / \partial x_i$ and
#    the gradient.
# 2. Above $\varepsilon$: $y_j = x_j / n$. Show that $\partial n / \partial x_i = x_i / n$,
#    then write $\partial y_j / \partial x_i$ with the quotient rule, and rewrite it using only
#    $y$ and $n$.
# 3. Multiply by $g_j$ and sum over $j$. You get $g$ minus one term; write that term with a dot
#    product $y \cdot g$ per row (which `keepdim` keeps broadcastable?).
# 4. Geometrically, what does subtracting that term do to $g$? Check it against quick
#    question 5.
# 5. Which tensors does your formula read? Can backward tell the two cases apart from what you
#    saved? (At a norm exactly equal to `eps`, `F.normalize`'s own gradient takes the
#    "above" formula; the grader never puts a row exactly there.)

# %% [markdown]
# <details><summary><b>Check your derivation</b> (open after your attempt)</summary>
#
# Step 1: $\partial y_j / \partial x_i = \delta_{ij} / \varepsilon$, so the gradient is
# $g / \varepsilon$.
#
# Step 2: $\partial n / \partial x_i = \frac{1}{2n} \cdot 2 x_i = x_i / n$, and
#
# $$\frac{\partial y_j}{\partial x_i} = \frac{\delta_{ij}}{n} - \frac{x_j\, x_i}{n^3}
#   = \frac{\delta_{ij} - y_i\, y_j}{n}.$$
#
# Step 3: $\sum_j g_j\, \partial y_j / \partial x_i = \big(g_i - y_i\, (y \cdot g)\big) / n$,
# with `(y * grad_output).sum(-1, keepdim=True)` for $y \cdot g$.
#
# Step 4: $g - y\,(y \cdot g)$ removes from $g$ its component along $y$ (a unit vector): the
# projection onto the plane orthogonal to $y$. Normalising forgets the length, so a gradient
# that asks for more length has nowhere to go: for $g = y$ the result is 0.
#
# Step 5: it reads $y$ and $n$. Save $y$ and the norm per row ($n$, or
# $\max(n, \varepsilon)$ with the case read from a comparison with $\varepsilon$):
# `(grad_output - y * radial * (norm >= eps)) / norm.clamp_min(eps)`.
# </details>

# %% nbgrader={"grade_id": "answer_Normalize", "solution": true}
class Normalize(torch.autograd.Function):
    """F.normalize(x, dim=-1, eps=eps): each row divided by max(its norm, eps)."""

    @staticmethod
    def forward(ctx, x, eps):
        ### BEGIN SOLUTION
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)  # one number per row
        y = x / norm.clamp_min(eps)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, norm = ctx.saved_tensors
        radial = (y * grad_output).sum(-1, keepdim=True)  # y . g, per row
        above = norm >= ctx.eps  # below eps the divisor is a constant: no projection
        return (grad_output - y * radial * above) / norm.clamp_min(ctx.eps), None
        ### END SOLUTION


# %% nbgrader={"grade_id": "Normalize", "grade": true, "points": 2}
self_check("Normalize", Normalize)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Normalize", Normalize)
### END HIDDEN TESTS

# %% [markdown]
# Your `Normalize` on three rows of four with `eps = 0.5`, the last row (norm 0.3) below it:
# one dense $4 \times 4$ block per row, since every output of a row depends on every input of
# that row, and a diagonal block, $1/\varepsilon = 2$, for the short row. Below it, a
# backward without the projection term: it is wrong in every entry of the two long rows, and
# right only on the short one.

# %%
short_row = torch.tensor([[1.0, -2.0, 0.5, 2.0], [0.6, 0.2, -0.8, 0.4],
                          [0.1, -0.2, 0.0, 0.2]], dtype=torch.float64)


def normalize_rows(x, eps):
    return F.normalize(x, dim=-1, eps=eps)


jacobian_view(Normalize, normalize_rows, short_row, 0.5)


# %%
class NormalizeWithoutProjection(torch.autograd.Function):
    """Wrong on purpose: differentiates x / norm as if the norm were a constant."""

    @staticmethod
    def forward(ctx, x, eps):
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        ctx.save_for_backward(norm)
        ctx.eps = eps
        return x / norm.clamp_min(eps)

    @staticmethod
    def backward(ctx, grad_output):
        norm, = ctx.saved_tensors
        return grad_output / norm.clamp_min(ctx.eps), None


jacobian_view(NormalizeWithoutProjection, normalize_rows, short_row, 0.5)

# %% [markdown]
# ## The five patterns as pictures
#
# Autograd's Jacobians of the five forwards, side by side: a broadcast repeats an identity
# (its columns sum in backward), a reduction is a row of blocks (its gradient is an expand), a
# scan is a triangle (the reversed scan reads it by columns), a selection is one 1 per row
# (repeats stack in one column), and a normalisation is a dense block per row (identity minus
# $y y^\top$, over the norm).

# %%
patterns = [
    ("broadcast: a (3, 1) to (3, 4)", lambda a: a.expand(3, 4),
     (torch.randn(3, 1, dtype=torch.float64),)),
    ("reduction: sum of (3, 4) over dim 1", lambda x: x.sum(1),
     (torch.randn(3, 4, dtype=torch.float64),)),
    ("scan: cumsum of 6", lambda x: torch.cumsum(x, 0), (torch.randn(6, dtype=torch.float64),)),
    ("selection: entries [3, 0, 3, 1] of 4", lambda x: x[torch.tensor([3, 0, 3, 1])],
     (torch.randn(4, dtype=torch.float64),)),
    ("normalisation: 2 rows of 3", lambda x: F.normalize(x, dim=-1),
     (torch.randn(2, 3, dtype=torch.float64),)),
]
fig, axes = plt.subplots(1, len(patterns), figsize=(14, 3.2))
for ax, (title, forward, inputs) in zip(axes, patterns):
    J = reference_jacobian(forward, inputs, 0)
    limit = J.abs().max().item()
    ax.imshow(J.numpy(), cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest",
              aspect="auto")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("input entry i", fontsize=8)
    ax.set_ylabel("output entry o", fontsize=8)
    ax.set_xticks(range(J.shape[1]))
    ax.set_yticks(range(J.shape[0]))
    ax.tick_params(labelsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | forgot to sum the broadcast dims | backward returns a gradient of the broadcast shape; the engine sums it when it can, so values look right, but the contract is broken and the memory spent | `.sum_to_size(input.shape)` |
# | a sum without `keepdim=True` where the input has a dim of size 1 | the engine refuses the shape (`invalid gradient`), or a later broadcast lines up with the wrong dim | `keepdim=True`, or `sum_to_size` |
# | ignoring `ctx.needs_input_grad` | work (and memory) for a gradient nobody asked for | compute each gradient under its flag, `None` otherwise |
# | `grad_output` of a reduction used without `unsqueeze(dim)` | broadcasting aligns from the right: an error, or, on a square tensor, the gradient silently goes along the wrong dim | `grad_output.unsqueeze(dim)` (not needed with `keepdim=True`) |
# | `y / x` for "the product of the others" | divided by zero: `nan` in every slice with a zero | exclusive running products from both ends, or count the zeros |
# | one zero handled, several not | a slice with two zeros gets a non-zero gradient | the product of the others always contains the other zero: 0 |
# | the scan run forward in backward | $J^\top$ is the other triangle | flip, cumsum, flip |
# | saving `x` for a linear op (`Cumsum`) or a selection | memory for nothing: the Jacobian does not depend on $x$ | save `dim`, or `index` and the shape |
# | `grad[index] = grad_output` | repeated rows are lost: only one write survives | `new_zeros(shape).index_add(0, index, grad_output)` |
# | `index` kept as `ctx.index` | autograd cannot track it (in-place changes, saved-tensor hooks) | `ctx.save_for_backward(index)` |
# | missing the projection term | the gradient of $x / n$ with $n$ held fixed: wrong wherever $g$ has a component along $y$ | subtract `y * (y * g).sum(-1, keepdim=True)` |
# | projection on rows below `eps` too | those rows are divided by a constant: no projection there | mask the term with `norm >= eps` |
# | building each row's $d \times d$ Jacobian | $d$ times the memory and work of the closed form | the projection, with one dot product per row |
# | saving `x` for `Normalize` | a second tensor of $x$'s size | the output and one norm per row |
#
# ## Summary
#
# Write one output entry with indices, differentiate by one input entry (deltas where indices
# must match), multiply by $g$ and sum over the output's indices. What survives is a pattern:
# a broadcast becomes a sum down to the input's exact shape (`sum_to_size`), a reduction an
# `expand` (a view with stride 0, no copy) after putting the reduced dim back, a scan the same
# scan reversed, a selection an `index_add` that accumulates repeats, a normalisation a
# projection that removes the component along the output. The engine sums a gradient that
# backward left in a broadcast shape, but only for shapes the input broadcasts to, and only on
# its own path: return exact shapes. Next lesson: these patterns assembled into LayerNorm and
# RMSNorm, and a Function shipped inside an `nn.Module`.
