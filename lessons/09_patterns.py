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
# **About 120 minutes** for the main path, up to the Summary: about 55 to read and run it
# (measured: its prose and code at 200 words a minute, a minute a cell) and about 65 for six
# derivations checked live, four predictions and six small Functions, each derived before it is
# written (take a break after Exercise 3). The optional part after the Summary takes about 55
# minutes more, ungraded.
#
# Almost any backward is built from a few moves: a **broadcast** in forward (a bias added to
# every row), a **reduction** (a loss), a **scan** (a running total), a **selection** (an
# embedding lookup), a **normalisation** (a division by a norm). For each you derive what
# backward must do in index notation ($\partial y_o / \partial x_i$, as in Autodiff-Puzzles),
# then write it.
#
# Every Function obeys the [Function contract](function_contract.md). Its self-check runs every
# check grading runs; the **Jacobian view** draws a backward's $\partial y_o / \partial x_i$
# beside autograd's (yours, after the Summary).
#
# Exercises: **✎ 1 `BroadcastMul`**, **✎ 2 `ProdOverDim`**, **✎ 3 `Cumsum`**,
# **✎ 4 `IndexSelect`**, **✎ 5 `Normalize`**, and the transfer exercise **✎ 6 `CumMax`**.

# %% nbgrader={"locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from autograder import self_check
from autograder.predictions import compare, written
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
# Backward receives $g = \partial L / \partial y$ and returns
#
# $$\frac{\partial L}{\partial x_i} \;=\; \sum_o g_o\, \frac{\partial y_o}{\partial x_i}
#   \;=\; \sum_o g_o\, J_{o,i}.$$
#
# 1. **Write one output entry with indices**, e.g. $y_{r} = \sum_c x_{r,c}$.
# 2. **Differentiate it by one input entry**, with a delta $\delta_{rs}$ (1 if $r = s$, else 0)
#    where two indices must match: $\partial y_r / \partial x_{s,c} = \delta_{rs}$.
# 3. **Multiply by $g_o$ and sum over every output index.** The deltas collapse the sums; an
#    index left summed becomes a reduction, and an input index absent on the right a broadcast.
#
# Backward never builds $J$; the Jacobian view draws it, row $o$ being what backward returns for
# `grad_output` $= e_o$.
#
# ## Worked example: `sum` over a dim
#
# $x$ of shape $(R, C)$, $y = $ `x.sum(dim=1)`: $y_r = \sum_c x_{r,c}$,
# $\partial y_r / \partial x_{s,c} = \delta_{rs}$, so
#
# $$\frac{\partial L}{\partial x_{s,c}} = \sum_r g_r\, \delta_{rs} = g_s .$$
#
# No $c$ on the right: every entry of row $s$ gets $g_s$, an **expand** of $g$ along the reduced
# dim. With `keepdim=True`, $g$ has shape $(R, 1)$ and expands along the columns. Without it, $g$
# has shape $(R,)$.
#
# **Quick question 1.** $x$ of shape $(3, 3)$, `dim=1`, no `keepdim`. In `g.expand(3, 3)`, is
# entry $(r, c)$ equal to $g_r$ (what the gradient needs) or $g_c$? Write `"g_r"` or `"g_c"` into
# `prediction_1`.

# %%
prediction_1 = None  # "g_r" or "g_c"

# %%
g = torch.tensor([1.0, 2.0, 3.0])
compare("every row of the expansion is", prediction_1, "g_c" if torch.equal(g.expand(3, 3)[0], g) else "g_r")
if written(prediction_1):  # the expansions show the answer: printed once you have predicted
    print("g.expand(3, 3):\n", g.expand(3, 3))
    print("g.unsqueeze(1).expand(3, 3):\n", g.unsqueeze(1).expand(3, 3))
    try:
        g.expand(3, 4)  # the same mistake when x has shape (3, 4)
    except RuntimeError as error:
        print(first_line(error))

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# $g_c$: broadcasting aligns shapes **from the right**, so $(3,)$ meets the columns. On a square
# $x$ the gradient lands on the wrong entries silently; on a $(3, 4)$ one it is an error. Put the
# reduced dim back first: `g.unsqueeze(1)`, of shape $(3, 1)$.
# </details>

# %% [markdown]
# The worked example as a Function, and the mean ($g_s / C$ per entry) built on it.

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
# Its Jacobian: read by columns, input $x_{s,c}$ receives the gradient of one output, $y_s$.

# %%
jacobian_view(SumOverDim, lambda x, dim, keepdim: x.sum(dim, keepdim=keepdim),
              torch.randn(3, 4, dtype=torch.float64), 1, False)

# %% jupyter={"source_hidden": true}
def live_check(name, yours, cases):
    """Print ✓ or ✗ per case (label, arguments, autograd's tensor or tuple of tensors) for your
    function ``yours`` called on the arguments. Every check of a derivation step here uses it."""
    if yours is None:
        print(f"Write {name} first.")
        return
    for label, arguments, truth in cases:
        truth = truth if isinstance(truth, tuple) else (truth,)
        try:
            got = yours(*arguments)
            got = tuple(got) if isinstance(got, (tuple, list)) else (got,)
            got = tuple(torch.as_tensor(t, dtype=torch.float64) for t in got)
        except Exception as failure:  # shown, not raised: Run All goes on
            print(f"✗ {label}: {name} raised {type(failure).__name__}: {failure}".splitlines()[0])
            continue
        if len(got) != len(truth):
            problem = f"{len(got)} tensors returned, {len(truth)} expected"
        elif any(t.shape != want.shape for t, want in zip(got, truth)):
            problem = (f"shapes {[tuple(t.shape) for t in got]}, autograd's "
                       f"{[tuple(want.shape) for want in truth]}")
        elif not all(torch.isfinite(t).all() for t in got):
            problem = "nan or inf in what it returned"  # max() would skip a nan error
        else:
            error = max([(t - want).abs().max().item() for t, want in zip(got, truth)
                         if t.numel()] or [0.0])
            problem = None if error <= 1e-12 else f"largest error against autograd {error:.3g}"
            if problem and all(t.dim() == 2 and t.shape == t.mT.shape and t.allclose(want.mT)
                               for t, want in zip(got, truth)):
                problem = "yours is autograd's matrix transposed: which index is the output's?"
        print(f"✓ {label}" if problem is None else f"✗ {label}: {problem}")


# %% [markdown]
# ## Warm-up: broadcasting in `a + b`
#
# Forward **repeats** an input: $a$ of shape $(R, 1)$, $b$ of shape $(C,)$, $y = a + b$ of
# shape $(R, C)$, $y_{r,k} = a_{r,0} + b_k$.
#
# 1. Write $\partial y_{r,k} / \partial a_{s,0}$ and $\partial y_{r,k} / \partial b_j$: how many
#    outputs does each entry reach?
# 2. Multiply by $g_{r,k}$ and sum over $r$ and $k$: which sum is left for $a$, and for $b$?
# 3. Which of your sums keeps its dim, and which removes it?
#
# **Check it live:** write `add_grads(a, b, g)`, returning `(grad_a, grad_b)` of shapes $(R, 1)$
# and $(C,)$.

# %%
### BEGIN WORKED
def add_grads(a, b, g):
    return g.sum(1, keepdim=True), g.sum(0)  # a keeps its dim of size 1; b never had dim 0
### LEARNER
add_grads = None  # your steps 1-3: def add_grads(a, b, g): ... return grad_a, grad_b
### END WORKED


# %%
def check_add_grads():
    """Your add_grads against autograd's gradients of a + b, a (R, 1) and b (C,)."""
    rng = torch.Generator().manual_seed(2)  # leaves the notebook's own seed alone
    cases = []
    for R, C in [(2, 3), (4, 1)]:
        a, b, g = (torch.randn(shape, dtype=torch.float64, generator=rng)
                   for shape in [(R, 1), (C,), (R, C)])
        leaves = a.clone().requires_grad_(), b.clone().requires_grad_()
        truth = torch.autograd.grad(leaves[0] + leaves[1], leaves, g)
        cases.append((f"R, C = {R}, {C}", (a, b, g), truth))
    live_check("add_grads", add_grads, cases)


check_add_grads()

# %% [markdown]
# <details><summary><b>Hint</b>: numbers to hit (open after your attempt)</summary>
#
# With $R = 2$, $C = 3$ and $g$ = `torch.arange(6.0).reshape(2, 3)`: $a$'s gradient is
# `[[3], [12]]` and $b$'s is `[3, 5, 7]`.
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `BroadcastMul`
#
# `BroadcastMul.apply(a, b)` returns `a * b` for any two broadcastable shapes: forward repeats
# either input, or both, along dims of the output. Rule 2 of the Function contract lets a
# backward leave a broadcast sum to the engine; this exercise does not, because a caller of this
# backward (a fused backward reusing it) gets what it returns, not what the engine makes of it.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - backward returns each gradient in exactly its input's shape, never a shape the engine would
#   still have to sum down;
# - each gradient exact to rounding where an input holds 0 and where `a * b` underflows to 0 or
#   overflows to inf.
#
# Derive it:
#
# 1. $a$ of shape $(B, 1, C)$, $b$ of shape $(R, 1)$, $y_{p,r,k} = a_{p,0,k}\, b_{r,0}$: write
#    $\partial y_{p,r,k} / \partial a_{q,0,c}$ and $\partial y_{p,r,k} / \partial b_{s,0}$.
# 2. Multiply by $g_{p,r,k}$ and sum over $p$, $r$, $k$: which sums are left for each input?
# 3. For any two shapes, 0-d included, which dims of $g$ are summed, and which keep a size of 1?
# 4. What does backward need from forward, and what may it skip when only $a$ needs a gradient?
#
# **Check your step 2 live:** write `bm_grad_b(a, g)`, the gradient of $b$, of shape $(R, 1)$,
# for $a$ of shape $(B, 1, C)$ and $g$ of shape $(B, R, C)$.

# %%
### BEGIN WORKED
def bm_grad_b(a, g):
    return (g * a).sum((0, 2)).unsqueeze(1)  # sum over p and k; b keeps its dim of size 1
### LEARNER
bm_grad_b = None  # your step 2: def bm_grad_b(a, g): ... return the gradient of b
### END WORKED


# %%
def check_bm_grad_b():
    """Your bm_grad_b against autograd's gradient for b of a * b, a (B, 1, C) and b (R, 1)."""
    rng = torch.Generator().manual_seed(1)  # leaves the notebook's own seed alone
    cases = []
    for B, R, C in [(2, 2, 2), (2, 3, 4)]:
        a, b, g = (torch.randn(shape, dtype=torch.float64, generator=rng)
                   for shape in [(B, 1, C), (R, 1), (B, R, C)])
        leaves = a.clone().requires_grad_(), b.clone().requires_grad_()
        truth = torch.autograd.grad(leaves[0] * leaves[1], leaves[1], g)[0]
        cases.append((f"B, R, C = {B}, {R}, {C}", (a, g), truth))
    live_check("bm_grad_b", bm_grad_b, cases)


check_bm_grad_b()

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# How many outputs does one entry $a_{q,0,c}$ feed, so how many terms does its gradient add up,
# and what multiplies each? And $b_{s,0}$? For any shapes: along which dims of the output was an
# input repeated?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# $a$ = `[[[1, 2]], [[0, -1]]]`, $b$ = `[[3], [-1]]`, $g$ = `torch.arange(8.0).reshape(2, 2, 2)`:
# $\partial L/\partial a$ = `[[[-2, 0]], [[6, 8]]]`, $\partial L/\partial b$ = `[[-3], [1]]`.
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
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\frac{\partial L}{\partial a_{q,0,c}} = \sum_r g_{q,r,c}\, b_{r,0}, \qquad
#   \frac{\partial L}{\partial b_{s,0}} = \sum_{p,k} g_{p,s,k}\, a_{p,0,k}.$$
#
# Each sum runs over the dims along which that input was repeated, keeping those where it has
# size 1: `Tensor.sum_to_size(shape)` is that reduction. The other factor, not $y / a$, avoids
# `nan`.
# </details>

# %% [markdown]
# ## Reductions that are not sums: the product
#
# `torch.prod(x, dim)` multiplies the entries along `dim`: $y_r = \prod_c x_{r,c}$. What is left of
# $y_r$ once the factor $x_{r,c}$ is taken out? Zeros make it interesting.
#
# **Quick question 2.** For the slices $[2, 0, 3]$ and $[0, 0, 3]$, what is the gradient of the
# product for each entry? Write the six numbers into `prediction_2`.

# %%
prediction_2 = None  # [[., ., .], [., ., .]]

# %%
slices = torch.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 3.0]], requires_grad=True)
torch.prod(slices, dim=1).sum().backward()
compare("slices.grad", prediction_2, slices.grad.tolist())

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# $[0, 6, 0]$ and $[0, 0, 0]$: changing the 2 or the 3 of $[2, 0, 3]$ leaves a product holding a
# 0; changing the 0 by $\epsilon$ changes it by $6\epsilon$. In $[0, 0, 3]$ every product of "the
# others" holds a zero.
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `ProdOverDim`
#
# `ProdOverDim.apply(x, dim)` returns `torch.prod(x, dim)` (no `keepdim`), `dim` a Python int.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - the gradient correct to rounding along any `dim`;
# - the gradient is finite whether a slice holds no zero, one zero or several, and exactly 0
#   where a zero of the slice makes the product of the others 0 (slices whose partial products
#   underflow or overflow are exempt).
#
# Derive it:
#
# 1. Write $\partial y_r / \partial x_{s,c}$: where is it non-zero, and what is it there?
# 2. Multiply by $g_r$ and sum over $r$: which pattern does $g$ follow?
# 3. Can the product of the others be computed from $y_s$ and $x_{s,c}$ alone? Where does that
#    fail on quick question 2's slices?
# 4. How will you compute the product of the others at every position, along any `dim`, so the
#    second bullet holds in all three cases? What do a 0-d `x` and one empty along `dim` give?
#
# **Check your step 1 live:** write `prod_J_row(x)`, the vector of $\partial y / \partial x_c$ for
# one slice with **no zero**.

# %%
### BEGIN WORKED
prod_J_row = lambda x: x.prod() / x  # noqa: E731  (step 3: right only where no entry is 0)
### LEARNER
prod_J_row = None  # your step 1: lambda x: a vector of x's length, entry c = dy/dx_c
### END WORKED


# %%
def check_prod_J_row():
    """Your prod_J_row against autograd's gradient of the product of one slice: slices with no
    zero are checked, the slices of quick question 2 shown."""
    cases = []
    for row in ([2, 1, 3, 4], [1.5, -2, 0.5, 3]):
        x = torch.tensor(row, dtype=torch.float64)
        cases.append((f"x = {tuple(row)}", (x,), torch.func.jacrev(torch.prod)(x)))
    live_check("prod_J_row", prod_J_row, cases)
    if prod_J_row is None:
        return
    for row in ([2, 0, 3], [0, 0, 3]):
        x = torch.tensor(row, dtype=torch.float64)
        try:
            yours = prod_J_row(x).tolist()
        except Exception as failure:  # shown, not raised: Run All goes on
            yours = f"{type(failure).__name__}: {failure}".splitlines()[0]
        print(f"  step 3, x = {tuple(row)}: yours {yours}, "
              f"autograd's {torch.func.jacrev(torch.prod)(x).tolist()}")


check_prod_J_row()

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# May you divide a factor back out when it is 0? With two zeros in a slice, what does every
# product of the others contain? Which entries come before $x_{s,c}$ in its slice, and which
# after?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# One slice, $g = 1$: $x = (2, 1, 3, 4)$ gives $(12, 24, 8, 6)$; $(2, 0, 3, 4)$ gives
# $(0, 24, 0, 0)$; $(2, 0, 3, 0)$ gives zeros, and no `nan`.
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
        if x.dim() == 0:  # a 0-d x is its own product: dy/dx = 1
            return grad_output.clone(), None
        dim, size = ctx.dim, x.shape[ctx.dim]
        shape = list(x.shape)
        shape[dim] = 1
        ones = x.new_ones(shape)

        def exclusive_cumprod(t):  # position c: the product of the entries before c
            return torch.cat([ones, t], dim).cumprod(dim).narrow(dim, 0, size)

        after = exclusive_cumprod(x.flip(dim)).flip(dim)  # the entries after c
        others = exclusive_cumprod(x) * after  # the product of the others, no division
        return grad_output.unsqueeze(dim) * others, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "ProdOverDim", "grade": true, "points": 2}
self_check("ProdOverDim", ProdOverDim)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ProdOverDim", ProdOverDim)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\prod_{c' \ne c} x_{s,c'}
#   = \Big(\prod_{c' < c} x_{s,c'}\Big)\Big(\prod_{c' > c} x_{s,c'}\Big):$$
#
# an **exclusive** running product from each end (an empty product is 1), no division. Counting
# each slice's zeros and treating the cases apart is also correct, with $y / x$ where a slice has
# no zero. `torch.prod(x, dim)`'s own backward divides, $y / x$, only when no entry of `x` is 0;
# otherwise it takes these running products in every slice.
# </details>

# %% [markdown]
# ## Scans: the running sum
#
# `torch.cumsum(x, dim)` replaces each entry by the sum of everything up to it: for a vector,
# $y_o = \sum_{i \le o} x_i$. Scans run through sequence models (linear attention,
# state-space models).

# %% [markdown]
# ## ✎ Exercise 3 · `Cumsum`
#
# `Cumsum.apply(x, dim)` returns `torch.cumsum(x, dim)`, `dim` a Python int.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - each entry of the gradient within a few roundings of the entries of `grad_output` it adds up,
#   also where `grad_output` decays along `dim`;
# - forward saves no tensor that a correct backward can do without.
#
# Derive it:
#
# 1. For a vector, write $\partial y_o / \partial x_i$ with an indicator $[\,\cdot\,]$: which
#    triangle of $J$ is filled?
# 2. Multiply by $g_o$ and sum over $o$: for a given $i$, which outputs contribute?
# 3. Does $\partial y_o / \partial x_i$ contain $x$? What must forward keep?
# 4. How do you compute step 2 for every $i$ at once? Which way meets the first bullet?
#
# **Check your step 1 live:** write `cumsum_J(n)`, the $n \times n$ matrix of
# $\partial y_o / \partial x_i$.

# %%
### BEGIN WORKED
cumsum_J = lambda n: torch.tril(torch.ones(n, n, dtype=torch.float64))  # noqa: E731
### LEARNER
cumsum_J = None  # your step 1: lambda n: an (n, n) tensor, entry [o, i] = dy_o/dx_i
### END WORKED


# %%
def check_cumsum_J():
    """Your cumsum_J against autograd's Jacobian of the running sum of n entries."""
    running_sum = torch.func.jacrev(lambda x: torch.cumsum(x, 0))
    cases = [(f"n = {n}", (n,), running_sum(torch.zeros(n, dtype=torch.float64)))
             for n in (1, 4, 5)]
    live_check("cumsum_J", cumsum_J, cases)


check_cumsum_J()

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# Which outputs contain $x_i$: for the first entry, which $g_o$ are in its sum, and for the last?
# A total less a running sum: what is left of small late entries beside large early ones?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# A vector of four entries and $g = (1, 2, 3, 4)$: $(10, 9, 7, 4)$.
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

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Along `dim`, $\partial L / \partial x_i = \sum_{o \ge i} g_o$: a running sum from the end ($J$
# is lower triangular, $J^\top$ upper). $J$ does not hold $x$, so forward saves nothing. The total
# less the running sum before $i$ is equal only in exact arithmetic: it cancels the late entries'
# digits when the early ones are large.
# </details>

# %% [markdown]
# ## Selections
#
# `torch.index_select(x, 0, index)` picks rows: output row $k$ is row `index[k]` of $x$, and the
# index may repeat a row. First, an indexed write.
#
# **Quick question 3.** `idx = [4, 0, 4]`, `v = [1, 2, 3]`. After `z = zeros(5); z[idx] = v`,
# does entry 4 hold the sum, 4, or one of the values? And after `z[idx] += v`? Write `"sum"` or
# `"one of them"` for each into `prediction_3`.

# %%
prediction_3 = None  # ("sum" or "one of them" after z[idx] = v, the same after z[idx] += v)

# %%
idx, v = torch.tensor([4, 0, 4]), torch.tensor([1.0, 2.0, 3.0])
z_written = torch.zeros(5)
z_written[idx] = v
z_plus = torch.zeros(5)
z_plus[idx] += v
compare("z[4] written, z[4] +=", prediction_3,
        tuple("sum" if z[4].item() == 4.0 else "one of them" for z in (z_written, z_plus)))
if written(prediction_3):
    print("z[idx] = v: ", z_written)
    print("z[idx] += v:", z_plus)

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# One of them, both times: `z[idx] += v` runs as `t = z[idx]` (a copy), `t += v`, `z[idx] = t`,
# a write again.
# </details>

# %% [markdown]
# ## ✎ Exercise 4 · `IndexSelect`
#
# `IndexSelect.apply(x, index)` returns `torch.index_select(x, 0, index)`: `index` is a 1-D int64
# tensor whose entries may repeat, or that may be empty.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward saves nothing that a correct backward can do without, and no tensor made only to be
#   saved.
#
# Derive it:
#
# 1. Write $y_{k,c}$ with `index`, and $\partial y_{k,c} / \partial x_{s,d}$ with an indicator and
#    a delta.
# 2. Multiply by $g_{k,c}$ and sum over $k$ and $c$: which rows of $g$ reach row $s$? What does a
#    row never named get, and one named three times? And a 0-d `x`?
# 3. What did quick question 3 show an indexed write doing with a repeated index, and what must
#    backward do instead?
# 4. What does backward need, and which of it is a tensor?
#
# **Check your step 1 live:** write `select_J(index, n_rows)`, the matrix of
# $\partial y_k / \partial x_s$ for a 1-D $x$. What does step 2 do with a column holding two
# ones?

# %%
### BEGIN WORKED
select_J = lambda index, n_rows: (index[:, None] == torch.arange(n_rows)).double()  # noqa: E731
### LEARNER
select_J = None  # your step 1: lambda index, n_rows: a (len(index), n_rows) tensor
### END WORKED


# %%
def check_select_J():
    """Your select_J against autograd's Jacobian of x[index] for a 1-D x."""
    cases = []
    for rows, n_rows in (([2, 0, 2], 3), ([3, 0, 3, 3], 5), ([], 3)):
        index = torch.tensor(rows, dtype=torch.int64)
        truth = torch.func.jacrev(lambda x: x[index])(torch.zeros(n_rows, dtype=torch.float64))
        cases.append((f"index = {rows}, n_rows = {n_rows}", (index, n_rows), truth))
    live_check("select_J", select_J, cases)


check_select_J()

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# Which output rows read row $s$ of $x$, and how many can there be? What must their gradients do
# at row $s$?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# $x$ of three rows of two, `index` $= (2, 0, 2)$, $g$ with rows $(1, 1)$, $(2, 2)$, $(3, 3)$:
# the gradient's rows are $(2, 2)$, $(0, 0)$, $(4, 4)$.
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
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\frac{\partial L}{\partial x_{s,d}} = \sum_k [\text{index}_k = s]\, g_{k,d}:$$
#
# row $s$ is the **sum** of the rows of $g$ whose index is $s$. `index_add` adds row $k$ of its
# source to row `index[k]`; backward needs `index` and `x`'s shape (a `torch.Size` on `ctx`).
# </details>

# %% [markdown]
# ## Normalisation: dividing by a norm
#
# `F.normalize(x, dim=-1, eps=eps)` scales each row to length 1:
#
# $$y_j = \frac{x_j}{\max(\lVert x \rVert, \varepsilon)}, \qquad
#   \lVert x \rVert = \sqrt{\textstyle\sum_k x_k^2};$$
#
# a row shorter than $\varepsilon$ is divided by $\varepsilon$ and stays short.
#
# **Quick question 4.** `grad_output` equal to $y$: is the gradient zero or not, for a row well
# above $\varepsilon$, and for one below it? Write `"zero"` or `"not zero"` for each into
# `prediction_4`.

# %%
prediction_4 = None  # ("zero" or "not zero" for the long row, the same for the short row)

# %%
row = torch.tensor([[3.0, 4.0], [0.003, 0.004]], dtype=torch.float64, requires_grad=True)
y = F.normalize(row, dim=-1, eps=0.01)
grad_row, = torch.autograd.grad(y, row, y.detach())
if written(prediction_4):
    print("y:", y.detach(), "\ngradient for grad_output = y:", grad_row)
compare("each row's gradient", prediction_4, tuple("zero" if r.abs().max() < 1e-12 else "not zero" for r in grad_row))

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# Zero above $\varepsilon$, up to rounding: stretching $x$ along itself leaves $y$ unchanged, and
# $y$ cannot grow along itself. Below, not zero: the divisor is a constant.
# </details>

# %% [markdown]
# ## ✎ Exercise 5 · `Normalize`
#
# `Normalize.apply(x, eps)` returns `F.normalize(x, dim=-1, eps=eps)`, `eps` a Python float from
# $10^{-12}$ to $10$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - each row takes the gradient of its side of `eps`, placed by its norm as `F.normalize`
#   computes it; a row whose norm is within a relative $10^{-3}$ of `eps` may take either side;
# - the memory forward's saved tensors add, beyond what a next layer `y @ W` already keeps for
#   its own backward, is at most one number per row, in `x`'s dtype.
#
# Derive it, for one row and $n = \lVert x \rVert$:
#
# 1. Below $\varepsilon$, $y_j = x_j / \varepsilon$: write the gradient.
# 2. Above, $y_j = x_j / n$: show $\partial n / \partial x_i = x_i / n$, then write
#    $\partial y_j / \partial x_i$ with only $y$ and $n$.
# 3. Multiply by $g_j$ and sum over $j$: what does each row's gradient need besides $g$?
# 4. What does your gradient do with a $g$ along $y$, and with one orthogonal to $y$? Compare
#    quick question 4.
# 5. What must backward get from forward to compute the formula and to pick its case? What does
#    a next layer `y @ W` keep for its own backward, and what does `y + 1` keep?
#
# **Check your step 2 live:** write `jacobian_column(y, n)`, the vector of
# $\partial y_j / \partial x_0$ for a row above $\varepsilon$.

# %%
### BEGIN WORKED
jacobian_column = lambda y, n: (torch.eye(len(y), dtype=y.dtype)[:, 0] - y * y[0]) / n
### LEARNER
jacobian_column = None  # your step 2: lambda y, n: a (d,) tensor, entry j = dy_j/dx_0
### END WORKED

# %%
def check_jacobian_column():
    """Your jacobian_column against column 0 of autograd's Jacobian of F.normalize, 3 rows."""
    cases = []
    for probe in ([3.0, 4.0], [1.0, -2.0, 2.0], [0.5, -1.5, 2.0, 0.25, -3.0]):
        probe = torch.tensor(probe, dtype=torch.float64)
        truth = torch.autograd.functional.jacobian(lambda x: F.normalize(x, dim=-1), probe)
        n = probe.norm()
        cases.append((f"x = {probe.tolist()}", (probe / n, n), truth[:, 0]))
    live_check("jacobian_column", jacobian_column, cases)


check_jacobian_column()

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# Above $\varepsilon$, $n$ moves with every $x_i$: what does that add to
# $\partial y_j / \partial x_i$ besides $\delta_{ij} / n$?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# $x = (3, 4)$, $\varepsilon = 10^{-12}$, $g = (1, 1)$: $(0.032, -0.024)$. $x = (0.03, 0.04)$,
# $\varepsilon = 0.1$, the same $g$: $(10, 10)$.
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
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\frac{\partial L}{\partial x_i} = \frac{1}{n}\Big(g_i - y_i \sum_j y_j\, g_j\Big)
#   \text{ above } \varepsilon, \qquad \frac{g_i}{\varepsilon} \text{ below}:$$
#
# $g$ less its component along $y$, over $n$. Forward saves $y$ and $n$; $n$ compared with `eps`
# in `x`'s dtype picks the case.
# </details>

# %% [markdown]
# ## ✎ Exercise 6 (transfer) · `CumMax`
#
# An op this lesson never worked through: the **running maximum**. `CumMax.apply(x, dim)` returns
# `torch.cummax(x, dim).values`, the largest entry so far at every position along `dim`, `dim` a
# Python int. No derivation is on screen: use the method, and decide for yourself what backward
# needs from forward.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - where entries tie for the running maximum, the gradient goes where autograd sends the
#   gradient of `torch.cummax(x, dim).values`;
# - forward saves nothing that a correct backward can do without, and no tensor made only to be
#   saved.

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# Write one output $y_o$ as one entry of $x$: which one, and what is $\partial y_o / \partial x_i$?
# Which outputs are copies of a given $x_i$, and how many can there be? At a tie, which of the
# equal entries does autograd's gradient pick (try three equal values)?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# $x = (1, 3, 3, 2, 3)$, $g = (1, 2, 3, 4, 5)$: $(1, 2, 7, 0, 5)$.
# </details>

# %% nbgrader={"grade_id": "answer_CumMax", "solution": true}
class CumMax(torch.autograd.Function):
    """torch.cummax(x, dim).values: the running maximum along dim."""

    @staticmethod
    def forward(ctx, x, dim):
        ### BEGIN SOLUTION
        values, indices = torch.cummax(x, dim)
        ctx.save_for_backward(indices)  # int64 positions of the running maxima
        ctx.dim = dim
        return values
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        indices, = ctx.saved_tensors
        # each output's gradient to the entry it copies; entries copied many times add up
        return torch.zeros_like(grad_output).scatter_add(ctx.dim, indices, grad_output), None
        ### END SOLUTION


# %% nbgrader={"grade_id": "CumMax", "grade": true, "points": 2}
self_check("CumMax", CumMax)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("CumMax", CumMax)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# With $m_o$ the index `torch.cummax` reports,
# $\partial L / \partial x_i = \sum_o [m_o = i]\, g_o$: forward's indices are all backward needs,
# and `scatter_add` along `dim` adds the outputs that copy one entry.
# </details>

# %% [markdown]
# ## Summary
#
# Write one output entry with indices, differentiate by one input entry, multiply by $g$ and sum
# over the output's indices. A broadcast becomes a sum down to the input's shape (`sum_to_size`),
# a sum or mean over a dim an `expand` after putting the reduced dim back, a product the product
# of the other entries (no division, for the zeros), a scan the same scan reversed, a selection
# an `index_add` or `scatter_add` that accumulates repeats, a normalisation a projection that
# removes the component along the output. Next lesson: these patterns assembled into LayerNorm
# and RMSNorm, inside an `nn.Module`.
#
# The main path ends here. The rest is optional: your six Functions as Jacobians, the common
# mistakes as a table, the five patterns as pictures, three backwards drawn beside autograd's,
# `expand` and `sum_to_size` up close, what the engine does with a gradient of another shape,
# fine print for `ProdOverDim` and `Normalize`, ties in `torch.cummax`, a running product, and
# the In practice block.

# %% [markdown]
# ## Your six Functions as Jacobians (optional, not graded)
#
# Each of your Functions' $\partial y_o / \partial x_i$ drawn beside autograd's, on the
# cases the exercises met: broadcast inputs, slices with zeros, a scan, repeated rows, a row
# below `eps` and ties.

# %% [markdown]
# Your `BroadcastMul`'s Jacobian, $a$ of shape $(3, 1)$ and $b$ of shape $(4,)$ (pick the input
# above the picture).

# %%
a_example = torch.randn(3, 1, dtype=torch.float64)
b_example = torch.randn(4, dtype=torch.float64)
jacobian_view(BroadcastMul, lambda a, b: a * b, a_example, b_example)

# %% [markdown]
# Your `ProdOverDim` on slices with no zero, one and two.

# %%
jacobian_view(ProdOverDim, torch.prod,
              torch.tensor([[1.5, -2.0, 0.5], [2.0, 0.0, -1.5], [0.0, 3.0, 0.0]],
                           dtype=torch.float64), 1)

# %% [markdown]
# Your `Cumsum`: a triangle.

# %%
jacobian_view(Cumsum, torch.cumsum, torch.randn(2, 4, dtype=torch.float64), 1)

# %% [markdown]
# Your `IndexSelect` with `index = [3, 0, 3, 3]`: row 3's columns hold three ones each.

# %%
rows = torch.randn(5, 2, dtype=torch.float64)
repeated = torch.tensor([3, 0, 3, 3])


def index_select_rows(x, index):
    return torch.index_select(x, 0, index)


jacobian_view(IndexSelect, index_select_rows, rows, repeated)


# %% [markdown]
# Your `Normalize` on three rows, `eps = 0.5`, the last row below it.

# %%
short_row = torch.tensor([[1.0, -2.0, 0.5, 2.0], [0.6, 0.2, -0.8, 0.4],
                          [0.1, -0.2, 0.0, 0.2]], dtype=torch.float64)


def normalize_rows(x, eps):
    return F.normalize(x, dim=-1, eps=eps)


jacobian_view(Normalize, normalize_rows, short_row, 0.5)


# %% [markdown]
# Your `CumMax` on rows with ties.

# %%
jacobian_view(CumMax, lambda x, dim: torch.cummax(x, dim).values,
              torch.tensor([[1.0, 3.0, 3.0, 2.0], [4.0, 1.0, 2.0, 0.5], [0.0, 1.0, 2.0, 3.0]],
                           dtype=torch.float64), 1)

# %% [markdown]
# ## Common mistakes (optional reading)
#
# | Mistake | What happens | Ask yourself |
# |---|---|---|
# | `BroadcastMul`'s gradients returned in the output's shape, the sums left to the engine | rule 2 would accept it, Exercise 1's contract does not: a caller of the backward gets the wrong shape | which shape does each gradient owe its input? |
# | a sum without `keepdim=True` where the input has a dim of size 1 | a gradient without the input's dim of size 1, which the input does not broadcast to: the engine refuses it | does your gradient have every dim its input has? |
# | ignoring `ctx.needs_input_grad` | work (and memory) for a gradient nobody asked for | which gradients did the caller ask for? |
# | `grad_output` of a reduction used without `unsqueeze(dim)` | broadcasting aligns from the right, which is right only when `dim` is the leading dim: otherwise an error, or silently wrong values on a square tensor | which dim of $x$ does each dim of `grad_output` line up with? |
# | `y / x` for "the product of the others" in every slice | divides by zero: `nan` in every slice with a zero | what is the product of the others when one of them is 0? |
# | one zero handled, several not | a slice with two zeros gets a non-zero gradient | what does the product of the others hold in a slice with two zeros? |
# | `y / a` for the gradient of `a * b` | `nan` where `a` holds 0, and 0 or inf where `a * b` underflows or overflows | what is $\partial (ab) / \partial a$, before any simplification? |
# | a zero found with a tolerance (`x.abs() < 1e-12`) | a tiny entry taken for a zero: the other entries get 0, where their gradient is a product that holds the tiny entry | is a tiny product the same as a zero one? |
# | shifts and slices written for the last dim (`x[..., :-1]`) | right for `dim=-1`, wrong for `dim=0` | does every slice run along `dim`? |
# | the scan run forward in backward | $J^\top$ is the other triangle | which outputs does $x_i$ feed? |
# | `Cumsum`'s triangle of ones, or `IndexSelect`'s one-hot matrix, built and multiplied | memory in $n^2$ where $n$ suffices (rule 3) | which op applies $J^\top$ without writing it down? |
# | the total less the running prefix, for `Cumsum` | the late entries' digits cancel where `grad_output` decays | what is left of a small number subtracted from a large one? |
# | saving `x` for a linear op (`Cumsum`) or a selection | memory for nothing: the Jacobian does not depend on $x$ | what does backward read, besides `grad_output`? |
# | `grad[index] = grad_output`, or `grad[index] += grad_output` | repeated rows are lost: only one write survives | what happens to a row selected twice? |
# | missing the projection term | the gradient of $x / n$ with $n$ held fixed | does $n$ move when $x$ does? |
# | projection on rows below `eps` too | those rows are divided by a constant: no projection there | what is the divisor below `eps`? |
# | building each row's $d \times d$ Jacobian | $d$ times the memory and work of the closed form | what does $J^\top g$ reduce to, row by row? |
# | saving `x` for `Normalize` | a second tensor of $x$'s size | which tensor of $x$'s size is kept alive anyway? |

# %% [markdown]
# ## The five patterns as pictures (optional, not graded)
#
# Autograd's Jacobians of the five forwards, side by side: a broadcast is the reduction's
# picture transposed, each input feeding a block of outputs (its columns sum in backward), a
# reduction is a row of blocks (its gradient is an expand), a scan is a triangle (the reversed
# scan reads it by columns), a selection is one 1 per row (repeats stack in one column), and a
# normalisation is a dense block per row (identity minus $y y^\top$, over the norm).

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
# ## Three backwards drawn beside autograd's (optional, not graded)
#
# Each backward's Jacobian is drawn beside autograd's (these backwards are the lesson's, not
# yours); outlined entries are where they differ.
#
# First, `AddWithoutSum`: `a + b` whose backward returns `grad_output` itself, of shape
# $(3, 4)$, for $a$ of shape $(3, 1)$. Rule 2 accepts it (Exercise 1's contract does not), and
# the engine sums it, bit for bit as `sum_to_size` does, so `a.grad` is right; the picture shows
# what backward itself returned, twelve columns where $a$ has three.

# %%
class AddWithoutSum(torch.autograd.Function):
    """a + b whose backward leaves the broadcast sums to the engine (Function contract, rule 2)."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output  # the output's shape: the engine sums each down


a_leaf = torch.randn(3, 1, requires_grad=True)
b_leaf = torch.randn(2, 1, 4, requires_grad=True)
upstream = torch.randn(2, 3, 4)
AddWithoutSum.apply(a_leaf, b_leaf).backward(upstream)
print("the engine's sums equal sum_to_size's, bit for bit:",
      torch.equal(a_leaf.grad, upstream.sum_to_size(3, 1)),
      torch.equal(b_leaf.grad, upstream.sum_to_size(2, 1, 4)))
jacobian_view(AddWithoutSum, lambda a, b: a + b, a_example, b_example)


# %% [markdown]
# Second, a selection whose backward writes instead of adding, `grad[index] = grad_output`
# (`+=` does the same, as quick question 3 showed), with `index = [3, 0, 3, 3]`: each row of the
# gradient keeps one write. The outlined entries are the repeats it lost.

# %%
class SelectByAssignment(torch.autograd.Function):
    """Wrong on purpose: index_select whose backward writes rows instead of adding them."""

    @staticmethod
    def forward(ctx, x, index):
        ctx.save_for_backward(index)
        ctx.rows = x.shape
        return torch.index_select(x, 0, index)

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        grad = grad_output.new_zeros(ctx.rows)
        grad[index] = grad_output  # a write: one row of grad_output survives per row of x
        return grad, None


jacobian_view(SelectByAssignment, index_select_rows, rows, repeated)

# %% [markdown]
# Third, a `Normalize` backward without the projection term, on the three rows with
# `eps = 0.5`: it is wrong in every entry of the two long rows, and right only on the short
# one.

# %%
divisor = short_row.norm(dim=-1, keepdim=True).clamp(min=0.5)  # max(||x||, eps), one per row


class NormalizeWithoutProjection(Normalize):
    """Wrong on purpose: your forward, and a backward that holds each row's divisor fixed."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output / divisor, None


jacobian_view(NormalizeWithoutProjection, normalize_rows, short_row, 0.5)

# %% [markdown]
# ## `expand` and `sum_to_size` up close (optional, not graded)
#
# An expanded tensor is a **view** with a **stride of 0**: a $(3, 1000)$ gradient costs the memory
# of 3.

# %%
big = g.unsqueeze(1).expand(3, 1000)
print("shape:", tuple(big.shape), " stride:", big.stride(),
      " same memory as g:", big.data_ptr() == g.data_ptr(),
      " bytes behind it:", big.untyped_storage().nbytes())

# %% [markdown]
# `Tensor.sum_to_size(shape)`, the reduction of Exercise 1, on a gradient of shape $(2, 3, 4)$:
# each shape it reaches, and one it refuses.

# %%
grad = torch.arange(24.0).reshape(2, 3, 4)
for shape in [(3, 4), (4,), (3, 1), (1, 4), (2, 1, 4), ()]:
    print(f"sum_to_size{shape}:".ljust(24), tuple(grad.sum_to_size(shape).shape))
try:
    grad.sum_to_size(2, 1, 1, 4)
except RuntimeError as error:
    print(first_line(error))


# %% [markdown]
# ## What the engine does with a gradient of another shape (optional, not graded)
#
# Rule 2 accepts a gradient of a shape the input broadcasts to. Does the engine accept any other?
# Here is a Function whose backward returns ones of a shape passed to forward, to see what comes
# out in `x.grad`. It is a probe of the engine, not a Function to copy: ones are not the
# identity's gradient, so it breaks rule 1 on purpose, which lets one Function try every shape.
#
# **Quick question 5.** The input has shape $(3, 1)$ and backward returns a gradient of shape
# $(2, 3, 4)$. Does the engine accept it, and if so, what shape and values end up in `x.grad`?
# And for a gradient of shape $(3,)$, the same numbers without the dimension of size 1? Write
# each answer as `(shape, value of every entry)` or `"refused"` into `prediction_5`.

# %%
prediction_5 = {(2, 3, 4): None, (3,): None}  # e.g. ((3, 1), 1.0), or "refused"


# %%
class ReturnsShape(torch.autograd.Function):
    """Identity forward; backward returns ones of the shape ``returned`` (breaks rule 1)."""

    @staticmethod
    def forward(ctx, x, returned):
        ctx.returned = returned  # this call's shape, on its own ctx (rule 4)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.new_ones(ctx.returned), None  # ones, not grad_output: rule 1 broken


observed_2, table_2 = {}, []
for input_shape, returned in [((4,), (3, 4)), ((3, 1), (3, 4)), ((3, 1), (2, 3, 4)),
                              ((), (3,)), ((4,), (1, 4)),
                              ((3, 1), (3,)), ((3, 4), (4,)), ((3, 4), (12,)), ((2, 4), (3, 4))]:
    x = torch.zeros(input_shape, requires_grad=True)
    try:
        ReturnsShape.apply(x, returned).sum().backward()
        verdict = f"summed to {tuple(x.grad.shape)}, values {x.grad.unique().tolist()}"
        outcome = (tuple(x.grad.shape), x.grad.unique().item())
    except RuntimeError as error:
        verdict, outcome = "refused: " + str(error).split(" - ")[1], "refused"
    if input_shape == (3, 1) and returned in prediction_5:
        observed_2[returned] = outcome
    table_2.append(f"input {str(input_shape):8} returned {str(returned):10} -> {verdict}")
if written(prediction_5):  # the table holds the answers
    print("\n".join(table_2))
else:
    print("the table of every shape tried shows once both predictions are written")
for returned, observed in observed_2.items():
    compare(f"input (3, 1), returned {returned}", prediction_5[returned], observed)

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
# So backward may leave a broadcast sum to the engine, and every grader of this course but
# Exercise 1's accepts it. Summing in backward is still worth knowing: the engine's sum happens only in the engine's
# call, so code that calls a backward itself (another Function reusing it inside a fused backward,
# a test comparing shapes) gets the output's shape; and a sum that dropped a dim of size 1 is
# refused, so "the engine fixes my shapes" holds only for shapes the input broadcasts to.
#
# ## Fine print: `ProdOverDim` to rounding (optional, not graded)
#
# "To rounding", in numbers: an entry $e$ of your gradient whose exact value is $t$ passes when
# $|e - t| \le 10^{-10} + 10^{-9}|t|$ in float64 ($10^{-5} + 10^{-4}|t|$ in float32), and, on
# slices with a tiny entry beside large ones (such as $10^{-13}$ beside $10^{7}$), when
# $|e - t| \le 10^{-9}|t|$ ($10^{-4}|t|$ in float32), with no absolute part: a tiny entry is not
# a zero. Any order of the products is far inside that; where a partial product underflows or
# overflows, the truth depends on that order, hence the bullet's exemption.
#
# ## Fine print: `Normalize` at `eps` (optional, not graded)
#
# Near `eps`, which side a row lands on depends on the last bits of its norm: a norm written
# another way (`(x * x).sum(-1).sqrt()`), taken in float64 for a float32 row, or rebuilt as
# $\lvert y\rvert \cdot \max(n, \varepsilon)$ can differ from `F.normalize`'s by an ulp or
# two and put a row that close to `eps` on the other side. Float32 holds 0.1 as 0.10000000149,
# above the Python float, and 0.7 as 0.69999999, below it: a float32 row `[0.7, 0]` with
# `eps=0.7` is **at** `eps` in float32, where the derivative does not exist. None of this
# reaches a model, whose rows are nowhere near `eps`, so the contract lets a row within a
# relative $10^{-3}$ of `eps` take either side, and no check tries a row closer than that. A
# test with a wide margin is another matter: `|y| > 0.99` misplaces every row from 0.99 `eps`
# up to `eps`.

# %% [markdown]
# ## Ties in `torch.cummax` (optional, not graded)
#
# **Predict, then run** (your `CumMax` has already met ties). For
# `x = [1, 3, 3, 2, 3]`, which position does `torch.cummax` report for each output: the first
# of the equal 3s, or the latest? Write your answer into `predicted_indices` (five ints), run
# that cell, then the next.

# %%
predicted_indices = None  # five ints: the position reported for each output

# %%
values, indices = torch.cummax(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 0)
print("values: ", values.tolist())
compare("indices", predicted_indices, indices.tolist())

# %% [markdown]
# ## Both at once: the running product, with zeros (optional, not graded)
#
# `torch.cumprod(x, dim)` is a scan like `Cumsum` and a product like `ProdOverDim`: for a
# vector, $y_o = \prod_{k \le o} x_k$. Unlike the running sum, its Jacobian depends on $x$,
# and a zero cuts every later output off from the entries before it.
#
# **Quick question 6.** $x = [2, 0, 3, 0.5]$ and $g$ all ones (the loss is the sum of the four
# outputs). Work out the true gradient with respect to each of the four entries, by hand from
# $y_o$, and write the four numbers into `prediction_6`. The next cell also shows what the
# same product gives when its gradient goes through logs, a route that divides by $x$.

# %%
prediction_6 = None  # [dL/dx_0, dL/dx_1, dL/dx_2, dL/dx_3]

# %%
x4 = torch.tensor([2.0, 0.0, 3.0, 0.5], requires_grad=True)
torch.cumprod(x4, 0).sum().backward()
compare("x4.grad", prediction_6, x4.grad.tolist())
through_logs = torch.tensor([2.0, 0.0, 3.0, 0.5], requires_grad=True)
torch.cumsum(through_logs.log(), 0).exp().sum().backward()  # cumprod for x >= 0
if written(prediction_6):
    print("through logs (divides by x):", through_logs.grad.tolist())

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# $[1, 11, 0, 0]$. $y = [2,\ 2x_1,\ 2x_1 x_2,\ 2x_1x_2x_3]$: every output past the zero
# contains $x_1$, so moving $x_1$ moves all three, $2 + 2 \cdot 3 + 2 \cdot 3 \cdot 0.5 = 11$,
# while $x_2$ and $x_3$ only ever appear multiplied by $x_1 = 0$. The route through logs gets the
# zero's own entry as $0/0$ (`nan`) and the others right: the entry it cannot divide by is
# exactly the one that carries the gradient.
# </details>
#
# Write `cumprod_backward(x, grad_output, dim)` returning $\partial L / \partial x$ of
# `torch.cumprod(x, dim)`, exact and finite with any number of zeros per slice, along any
# `dim`, without dividing by $x$. Derive it first:
#
# 1. Write $\partial y_o / \partial x_i$ with an indicator and a product over $k \le o$,
#    $k \ne i$; then $\partial L / \partial x_i$ as a sum over $o$.
# 2. Split that product as `ProdOverDim` did: the part before $i$ and the part after it. Which
#    part depends on $o$?
# 3. Call what is left inside the sum $S_i$. Write $S_i$ in terms of $S_{i+1}$: which way does
#    this scan run, and what does it multiply by at each step?
#
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# Which outputs contain $x_i$? In each of them, which factors come before $x_i$ and which after,
# and which of those two groups is the same for every such output?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step, as questions</summary>
#
# For which $o$ is $\partial y_o / \partial x_i$ non-zero? There $y_o$ is $x_i$ times the
# other factors of the running product: which of them come before $x_i$, and which after it?
# Write the derivative with an indicator and those two products. Multiply by $g_o$ and sum
# over $o$: which of the two products is the same for every $o$, and so comes out of the sum?
# Which running product of `ProdOverDim` is it? What stays inside the sum is $S_i$. Hint 3's
# numbers and the check below tell you when you are right.
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# $x = (2, 1, 3, 0.5)$ and $g = (1, -1, 2, 1)$: $\partial L/\partial x =
# (7.5, 13, 5, 6)$. With the zero of the prediction above, $x = (2, 0, 3, 0.5)$ and $g = 1$:
# $(1, 11, 0, 0)$, finite.
# </details>

# %% nbgrader={"grade_id": "answer_cumprod_backward", "solution": true}
def cumprod_backward(x, grad_output, dim):
    """dL/dx of torch.cumprod(x, dim), exact with zeros, without dividing by x."""
    ### BEGIN SOLUTION
    x, g = x.movedim(dim, -1), grad_output.movedim(dim, -1)
    n = x.shape[-1]
    before = torch.cat([torch.ones_like(x[..., :1]), x[..., :-1]], -1).cumprod(-1)
    s = torch.empty_like(g)
    s[..., n - 1] = g[..., n - 1]
    for i in range(n - 2, -1, -1):  # S_i = g_i + x_{i+1} S_{i+1}: a scan from the end
        s[..., i] = g[..., i] + x[..., i + 1] * s[..., i + 1]
    return (before * s).movedim(-1, dim)
    ### END SOLUTION


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_cumprod_backward() -> None:
    """Your cumprod_backward against autograd's, slices with no, one and two zeros."""
    slices = torch.tensor([[1.5, -2.0, 0.5, 3.0, -1.0], [2.0, 0.0, 3.0, 0.5, -2.0],
                           [0.0, 1.5, 0.0, 2.0, 4.0]], dtype=torch.float64)
    rng = torch.Generator().manual_seed(6)  # leaves the notebook's own seed alone
    for along, source in [(1, slices), (0, slices.T.contiguous()), (-1, slices)]:
        leaf = source.clone().requires_grad_()
        upstream = torch.randn(leaf.shape, dtype=torch.float64, generator=rng)
        want, = torch.autograd.grad(torch.cumprod(leaf, along), leaf, upstream)
        try:
            got = cumprod_backward(leaf.detach(), upstream, along)
        except NotImplementedError:
            print("cumprod_backward is not written yet")
            return
        except Exception as error:  # shown, not raised: Run All goes on
            print(f"✗ cumprod_backward raised {type(error).__name__} for dim={along}: {error}")
            return
        if not (isinstance(got, torch.Tensor) and got.shape == want.shape
                and torch.allclose(got, want)):
            print(f"✗ wrong for dim={along}: got\n{got}\nexpected\n{want}")
            return
    print("✓ cumprod_backward matches autograd for dim 1, 0 and -1 (no, one and two zeros)")


check_cumprod_backward()

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after the check above shows ✓</summary>
#
# $S_{n-1} = g_{n-1}$ and $S_i = g_i + x_{i+1}\, S_{i+1}$: a scan from the end, like
# `Cumsum`'s backward, that multiplies by the next entry of $x$ before it adds. No division, so
# zeros cost nothing. (A loop over the positions of `dim` is fine here.)
# </details>

# %% [markdown]
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **Ties are a convention, and each op has its own.** Where several entries hold the same
# maximum the derivative does not exist, and every op picks a subgradient. `torch.cummax`
# sends the gradient to the latest of the equal values, as your `CumMax` does; the first cell
# below this block shows what five of its neighbours do with the same three numbers.
# `max(dim)` and `topk` pick one entry (here the first), `cummax` and `sort` one too (here the
# latest; `sort` promises an order for equal values only with `stable=True`), and `amax` and
# the full `max()` split the gradient evenly between the ties. A Function that reproduces one
# of them must follow that op's convention (the grader of `CumMax` checks it): at a tie each of
# these is a valid subgradient, and only the convention makes your gradient and PyTorch's
# agree.
#
# **An expanded gradient is copied at a leaf.** The stride-0 saving of `expand` holds while
# the gradient flows on through other nodes. At a **leaf** it ends: the engine stores `.grad`
# with the leaf's own layout, so it copies an expanded gradient into a dense tensor, and the
# leaf's `.grad` costs the full $(3, 1000)$ entries (the second cell below).
#
# **PyTorch's own `cumprod_backward`**, in ATen's `ReduceOps.cpp`, keeps the division before
# the first zero of a slice and treats that zero apart with masks; its comment derives every
# case. The scan from the end of the optional section avoids the division altogether.
#
# **Scatter-adds on a GPU are not deterministic.** The backwards of `IndexSelect` and `CumMax`
# add repeated rows, most often with `index_add` or `scatter_add`, whose documentation says
# they "may behave nondeterministically when given tensors on a CUDA device": repeated rows are
# added by concurrent atomic additions in no fixed order, and float addition is not
# associative, so an embedding's gradient can differ in its last bits from one run to the
# next. `torch.use_deterministic_algorithms(True)` switches both to deterministic versions (its
# documentation lists them), at some cost in speed. An assignment is never the fix: it loses
# the repeats, and which write survives is not defined either (the quick question on
# `z[idx] = v`), unless deterministic mode is on: `torch.use_deterministic_algorithms(True)`
# makes `index_put` with `accumulate=False` deterministic too, but the repeats are still lost.
#
# **When not to write these Functions.** Every forward of this lesson already has a backward in
# PyTorch that follows the same pattern (and `torch.prod`'s handles zeros). A custom Function
# for one of them alone buys nothing; write one to fuse several ops into one backward, or to
# save less than autograd would (lesson 10's LayerNorm: a mean, a variance, a broadcast and a
# division in one backward, saving per-row statistics). The patterns are what lets you read
# and write those larger backwards.
# </details>

# %% [markdown]
# The two cells below belong to **In practice** above: open it first, or skip them (the lesson
# ends here).

# %%
tied = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)
for name, forward in [("x.max(0).values", lambda x: x.max(0).values),
                      ("x.topk(1).values", lambda x: x.topk(1).values.sum()),
                      ("torch.cummax(x, 0).values[-1]", lambda x: torch.cummax(x, 0).values[-1]),
                      ("x.sort().values[-1]", lambda x: x.sort().values[-1]),
                      ("x.amax(0)", lambda x: x.amax(0)), ("x.max()", lambda x: x.max())]:
    grad, = torch.autograd.grad(forward(tied), tied)
    print(f"{name:31} gradient {grad.tolist()}")

# %%
leaf = torch.randn(3, 1000, requires_grad=True)
leaf.sum(1).sum().backward()  # sum's backward expands its gradient, a stride-0 view
print("leaf.grad stride:", leaf.grad.stride(),
      " bytes behind it:", leaf.grad.untyped_storage().nbytes())
