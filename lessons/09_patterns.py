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
# Open the backward of almost any operator in PyTorch and you find the same few moves. This
# lesson finds them by asking, of five kinds of forward, what backward must do:
#
# - a bias is added to every row of a batch, a **broadcast**: how many outputs does one bias
#   entry reach, and what must its gradient do with them?
# - a loss **reduces** a tensor to a number: the gradient arrives with the reduced shape; how
#   does it get back to the tensor's?
# - a running total is a **scan**: which outputs does one input reach, and which way does its
#   gradient run?
# - an embedding lookup **selects** rows, some of them many times: where does a row's gradient
#   go, and what becomes of a row selected twice?
# - a normalisation divides by a norm: what becomes of the part of the gradient that would
#   change the norm?
#
# Each section answers one of these, and you find the answers before you read them.
#
# This lesson derives each pattern in index notation, writing $\partial y_o / \partial x_i$ for
# one output entry $o$ and one input entry $i$, as the Autodiff-Puzzles notebooks do, and then
# turns the derivation into a backward. You derive every backward yourself: each exercise
# states its contract (what the grader checks) and asks the questions whose answers are your
# design. Besides its contract, each of the six follows the rules every Function in this course
# follows, which a contract below repeats only now and then and the grader checks on every
# exercise:
#
# - backward computes the gradient with ops you choose: one that asks autograd for it
#   (`torch.autograd.grad`, `.backward()`) or calls a built-in `*_backward` op fails;
# - a tensor backward needs goes through `ctx.save_for_backward`, never onto `ctx` as an
#   attribute (sizes, a `dim`, an `eps` on `ctx` are fine);
# - each call keeps its state on its own `ctx`: nothing on the Function's class, nothing in a
#   global or anywhere else outside `ctx`, so two calls in one graph share nothing;
# - forward and backward write into nothing they are given: `grad_output` and the inputs stay
#   as they were;
# - backward may run twice on one graph (`retain_graph=True`, `gradcheck`) and leaves what
#   forward saved as it was;
# - the inputs and `grad_output` may have any layout (transposed, a slice, expanded), and any
#   of the inputs may be the only one that requires grad.
#
# Three collapsed hints wait for you after your attempt (a question, the index-notation step,
# numbers to hit); the formula itself waits after your self-check, to compare with yours, and
# turning it into code is always yours. A picture helps: the **Jacobian view** draws
# $\partial y_o / \partial x_i$ as your backward computes it beside autograd's, and outlines
# every entry where they differ.
#
# Each exercise has a self-check cell: it runs every check the hidden tests run (they add a
# GPU run when the grader has one and you had none). Work top to bottom: the cells after an
# exercise run your answer. Run All goes on past an exercise not yet written: its self-check
# and the cells that use it show the stub's `NotImplementedError`, the rest runs, and the last
# cell lists where you stand.
#
# Plan your time: the main line (the six exercises and the sections that lead to them, up to
# the Summary) holds six short derivations you check live, four predictions and six small
# Functions to write; plan on about two hours, in one sitting (if you need a break, take it
# after Exercise 3, `Cumsum`). Everything after the Summary is **optional** and never graded
# (no exercise needs its cells; skip them, or run them with their predictions left at
# `None`): the common mistakes as a table, the five patterns as pictures, three backwards
# that are wrong on purpose, what the engine does with a gradient of the wrong shape, ties
# in `torch.cummax`, the running product, and the **In practice** block.
#
# By the end of this lesson you can:
# 1. turn a forward written with indices into its backward by summing over the output index;
# 2. bring the gradient of a broadcast input to that input's exact shape (and, in an
#    optional section, say what the autograd engine does when you do not);
# 3. expand a reduced gradient without copying it (`expand`);
# 4. differentiate a product with zeros in it without dividing by zero;
# 5. find the backward of a scan (a running sum; in the optional section, a running product
#    with zeros in it) and of a selection whose index repeats;
# 6. find the backward of a normalisation by a norm;
# 7. meet an op nobody worked through (a running maximum) and find its backward alone.
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
# - with `keepdim=False`, $g$ has shape $(R,)$, one dimension fewer than $x$. Which of $x$'s
#   two dimensions does broadcasting line it up with? The quick question below asks, and its
#   answer block gives the fix.
#
# For the mean, $y_r = \frac1C \sum_c x_{r,c}$, so every entry gets $g_s / C$.
#
# **Quick question 1.** $x$ has shape $(3, 3)$, `dim=1`, `keepdim=False`, so $g$ has shape
# $(3,)$. Expand it as it is: in `g.expand(3, 3)`, is entry $(r, c)$ equal to $g_r$ (what the
# gradient needs) or to $g_c$? Write `"g_r"` or `"g_c"` into `prediction_1`, run that cell, then the next.

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
# $g_c$. Broadcasting aligns shapes **from the right**, so $(3,)$ is matched against the
# **last** dimension, the columns: row $r$ of the expanded tensor is $g$ itself and entry
# $(r, c)$ is $g_c$. The gradient goes to the wrong entries, silently, because $x$ happens to be
# square; with $x$ of shape $(3, 4)$ the same mistake is an error. The fix is to put the reduced
# dimension back first, `g.unsqueeze(dim)`: `g.unsqueeze(1)` has shape $(3, 1)$, and expanding
# it repeats $g_r$ along row $r$.
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
# ## Broadcasting in forward: what does backward do?
#
# Now the other direction: forward **repeats** an input. Let $a$ have shape $(R, 1)$ and $b$
# shape $(C,)$, and $y = a + b$, of shape $(R, C)$: $y_{r,k} = a_{r,0} + b_k$. Apply the three
# steps:
#
# 1. How many outputs does one entry $a_{s,0}$ reach? Write
#    $\partial y_{r,k} / \partial a_{s,0}$, and $\partial y_{r,k} / \partial b_j$.
# 2. Multiply by $g_{r,k}$ and sum over $r$ and $k$. Which sum do the deltas leave for $a$, and
#    which for $b$?
# 3. $a$ has a dimension of size 1 where $y$ has $C$ entries; $b$ lacks $y$'s first dimension
#    altogether. Which of your two sums keeps its dimension, and which removes it?
#
# **Check it live.** Write your two gradients as `add_grads(a, b, g)`: $a$ of shape $(R, 1)$,
# $b$ of shape $(C,)$ and $g$ of shape $(R, C)$ in, the pair `(grad_a, grad_b)` out, of shapes
# $(R, 1)$ and $(C,)$. The cell after it compares your pair with autograd's gradients of
# `a + b`.

# %%
### BEGIN WORKED
def add_grads(a, b, g):
    return g.sum(1, keepdim=True), g.sum(0)  # a keeps its dim of size 1; b never had dim 0
### LEARNER
add_grads = None  # your steps 1-3: def add_grads(a, b, g): ... return grad_a, grad_b
### END WORKED


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
# With $R = 2$, $C = 3$ and $g$ = `torch.arange(6.0).reshape(2, 3)`, $a$'s gradient is
# `[[3], [12]]`, of shape $(2, 1)$, and $b$'s is `[3, 5, 7]`, of shape $(3,)$.
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `BroadcastMul`
#
# Write `BroadcastMul`, with `BroadcastMul.apply(a, b)` returning `a * b`. The contract, which
# the self-check and the hidden tests check:
#
# - `a` and `b` of **any** two broadcastable shapes: either may be the one broadcast, along
#   dims of size 1 (against a dim of size 0 too), missing leading dims, or both, and either
#   may be 0-dim; the value and the gradients autograd gives `a * b`, inputs holding zeros
#   included, and factors so small or so large that `a * b` underflows to 0 or overflows to
#   inf; `a` and `b` of one dtype, float64 or float32 (mixed dtypes are not tried), backward
#   returning each gradient in that dtype;
# - backward returns gradients of **exactly** `a.shape` and `b.shape`: it reduces the
#   broadcast dims itself (the autograd engine sums some gradients of a broadcast shape for
#   you; that does not count);
# - `None`, and no work, for the gradient of an input that needs none.
#
# Derive it before you write it:
#
# 1. Take $a$ of shape $(B, 1, C)$ and $b$ of shape $(R, 1)$: **both** are broadcast, and $y$
#    has shape $(B, R, C)$, $y_{p,r,k} = a_{p,0,k}\, b_{r,0}$. Write
#    $\partial y_{p,r,k} / \partial a_{q,0,c}$ and $\partial y_{p,r,k} / \partial b_{s,0}$.
# 2. Multiply by $g_{p,r,k}$ and sum over $p$, $r$ and $k$. Which indices do the deltas
#    remove, and which sums are left? Write both gradients with tensors of shape $(B, R, C)$
#    and sums.
# 3. Which of your sums keep their dimension, and which remove it? Your `add_grads` named its
#    dims by hand; how does backward bring each result to its input's exact shape for any pair
#    of broadcastable shapes, 0-dim included, without knowing in advance which dims were
#    repeated?
# 4. What does backward need from forward? Can it tell which gradient nobody asked for, and
#    what does it return in that gradient's place? What may it skip when only $a$ needs one?
#
# **Check your step 2 live, for $b$.** Write your gradient of $b$ for the shapes of step 1 as
# `bm_grad_b(a, g)`: $a$ of shape $(B, 1, C)$ and $g$ of shape $(B, R, C)$ in, the gradient of
# $b$, of shape $(R, 1)$, out, written with the sums of your step 2. The cell after it compares
# it with autograd's gradient of `a * b` for $b$, for two sets of sizes. The gradient of $a$
# (which dims does it sum, and which size-1 dim must it keep?) is yours to check with Hint 3,
# and making both work for any pair of shapes (step 3) is the exercise.

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
# Output $y_{p,r,k}$ reads one entry of $a$, $a_{p,0,k}$, whatever $r$ is. How many outputs
# does one entry $a_{q,0,c}$ feed, so how many terms must its gradient add up? And one entry
# $b_{s,0}$?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step, as questions</summary>
#
# For which $(p, r, k)$ is $\partial y_{p,r,k} / \partial a_{q,0,c}$ non-zero, and what is it
# there: which factor of $y_{p,r,k}$ is left when you take $a_{q,0,c}$ away? Write it with
# deltas. Ask the same of $\partial y_{p,r,k} / \partial b_{s,0}$. Multiply each by
# $g_{p,r,k}$ and sum over $p$, $r$ and $k$: which sums do the deltas remove, and which are
# left for $a$ and for $b$? The check of `bm_grad_b` above and Hint 3's numbers tell you when
# they are right. For inputs of any two shapes, which dims of $g$ must backward sum, which of
# them keep a size of 1, and how can it find them from the shapes alone?
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# $a$ = `[[[1, 2]], [[0, -1]]]` of shape $(2, 1, 2)$, $b$ = `[[3], [-1]]` of shape $(2, 1)$ and
# $g$ = `torch.arange(8.0).reshape(2, 2, 2)`: your backward returns $\partial L/\partial a$ =
# `[[[-2, 0]], [[6, 8]]]`, of shape $(2, 1, 2)$, and $\partial L/\partial b$ = `[[-3], [1]]`,
# of shape $(2, 1)$.
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
# Each sum runs over the indices along which that input was repeated, and the result has the
# input's exact shape. For $y = a + b$ above it was $\partial L/\partial a_{s,0} = \sum_k g_{s,k}$
# and $\partial L/\partial b_j = \sum_r g_{r,j}$. Every broadcast works the same way: sum $g$
# (times the other factor, for a product) over the dimensions the input was repeated along,
# keep the ones where the input has size 1, drop the ones it does not have.
# `Tensor.sum_to_size(shape)` does that reduction for any shape that broadcasts **up** to the
# tensor's (the cell below prints a few). Backward reads $a$ and $b$ and nothing else; an
# input that needs no gradient costs nothing.
# </details>

# %%
grad = torch.arange(24.0).reshape(2, 3, 4)
for shape in [(3, 4), (4,), (3, 1), (1, 4), (2, 1, 4), ()]:
    print(f"sum_to_size{shape}:".ljust(24), tuple(grad.sum_to_size(shape).shape))
try:
    grad.sum_to_size(2, 1, 1, 4)
except RuntimeError as error:
    print(first_line(error))

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
# ## Reductions that are not sums: the product
#
# `torch.prod(x, dim)` multiplies the entries along `dim` and removes that dimension. For $x$
# of shape $(R, C)$ and `dim=1`, $y_r = \prod_c x_{r,c}$. For its gradient, ask: what is
# left of $y_r$ when you take out the factor $x_{r,c}$? Zeros make the answer interesting.
#
# **Quick question 2.** For the slices $[2, 0, 3]$ and $[0, 0, 3]$, what is the gradient of
# the product with respect to each entry? Write all six numbers into `prediction_2`; the next
# cell runs autograd on `torch.prod`.

# %%
prediction_2 = None  # [[., ., .], [., ., .]]

# %%
slices = torch.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 3.0]], requires_grad=True)
torch.prod(slices, dim=1).sum().backward()
compare("slices.grad", prediction_2, slices.grad.tolist())

# %% [markdown]
# <details><summary><b>Answer</b> (open after your prediction)</summary>
#
# $[0, 6, 0]$ and $[0, 0, 0]$. Changing the 2 or the 3 of $[2, 0, 3]$ leaves a product with a 0
# in it, so their gradients are 0; changing the 0 by $\epsilon$ changes the product by
# $2 \cdot 3 \cdot \epsilon$. In $[0, 0, 3]$ every product of "the others" still contains a
# zero.
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `ProdOverDim`
#
# Write `ProdOverDim`, with `ProdOverDim.apply(x, dim)` returning `torch.prod(x, dim)` (no
# `keepdim`); as for any argument that is not a tensor, backward returns `None` for `dim`. The
# contract, which the self-check and the hidden tests check:
#
# - `x` with at least one dim and `dim` a Python int, negative allowed, along which `x` has at
#   least one entry: the value of `torch.prod(x, dim)` and, as the gradient for each entry, $g$
#   times the product of the other entries of its slice, up to rounding (the fine print below
#   puts numbers on it: any order of the products passes), whichever dim `dim` is, and however
#   small a non-zero entry, subnormals included, backward returning the gradient in `x`'s
#   dtype (float64 and float32);
# - the gradient **finite** whether a slice along `dim` holds no zero, exactly one zero, or
#   several, and **exactly 0** (not a tiny number) wherever the product of the other entries
#   holds a zero.
#
# <details><summary>Precision fine print (open if the self-check names a tiny or subnormal
# entry)</summary>
#
# "Up to rounding", in numbers: an entry $e$ of your gradient whose exact value is $t$ passes
# when $|e - t| \le 10^{-10} + 10^{-9}|t|$ in float64 ($10^{-5} + 10^{-4}|t|$ in float32), and
# on the slices with a tiny or subnormal entry when $|e - t| \le 10^{-9}|t|$ ($10^{-4}|t|$ in
# float32), no absolute part. Any order of the products is far inside that; so is the product
# of the others taken as `exp` of a sum of logs with the zeros counted apart, though it is
# hundreds of ulps off in float64 where the products are a few.
#
# The grader tries $10^{-300}$ beside $10^{150}$, and subnormal entries in float64 and float32.
# Beside a subnormal entry the product of the others is not the gradient autograd gives
# `torch.prod`: its backward divides $y$ by $x$, and on $[5 \cdot 10^{-324}, 1.3]$ gives $1.0$
# where the product of the others is $1.3$. A 0-dim `x` and an empty slice are not graded, nor
# a slice where a product of some of its entries underflows to 0 or overflows: there the truth
# depends on the order of the products. On $[10^{-200}, 10^{-200}, 3]$ the product underflows, and `torch.prod`'s own
# gradient is $[0, 0, 0]$ where the product of the others is $[3 \cdot 10^{-200},
# 3 \cdot 10^{-200}, 10^{-400}]$.
# </details>
#
# Derive it:
#
# 1. Write $\partial y_r / \partial x_{s,c}$ for $y_r = \prod_c x_{r,c}$: for which $r$ is it
#    non-zero, and what is left of $y_r$ there once the factor $x_{s,c}$ is taken out?
# 2. Multiply by $g_r$ and sum over $r$. Which pattern of the worked example does $g$ follow,
#    and what does that mean for its shape when `keepdim` is not used?
# 3. Can "the product of the others" be computed from $y_s$ and $x_{s,c}$ alone? Try your
#    formula on the two slices of quick question 2: where does it fail, and why there?
# 4. The second clause is the exercise: the product of the others at every position of every
#    slice, along any `dim`, finite, and exactly 0 where it holds a zero. How will you compute
#    it, and why does your way meet that in all three cases? Nothing above this cell does it
#    for you.
#
# **Check your step 1 live.** For one slice, a vector $x$ and $y = \prod_c x_c$, write
# `prod_J_row(x)`: the vector of $\partial y / \partial x_c$, one entry per $c$, by any formula
# that is right on a slice with **no zero**. The cell after it compares it with autograd's at
# $x = (2, 1, 3, 4)$ and $(1.5, -2, 0.5, 3)$, then shows what it gives on the slices of quick
# question 2, for your step 3.

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
# Which outputs does $x_{s,c}$ feed? In that output, what is left of the product when you take
# the factor $x_{s,c}$ away, and is "divide it back out" allowed when that factor is 0?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step, as questions</summary>
#
# For which $r$ is $\partial y_r / \partial x_{s,c}$ non-zero? There $y_r$ is $x_{s,c}$ times
# the other factors of its slice: what is the derivative of $x_{s,c}$ times a number that does
# not contain it? Write it with a delta and a product. Multiply by $g_r$ and sum over $r$:
# which $r$ survives, and which index of the input does no factor on the right carry? With
# one zero at position $k$, what does $y_s / x_{s,k}$ give, and what should the gradient be
# there? With two zeros, what does every product of the others contain? Can you get the
# product of the others without dividing by the entry itself (is dividing safe beside a
# subnormal entry, where $y$ rounds?), and what must your way do in each of the three cases?
# Hint 3's numbers tell you when you are right.
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# One slice, $g = 1$: for $x = (2, 1, 3, 4)$ the gradient is $(12, 24, 8, 6)$; for
# $x = (2, 0, 3, 4)$ it is $(0, 24, 0, 0)$; for $x = (2, 0, 3, 0)$, $(0, 0, 0, 0)$, with no
# `nan` in any of them.
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
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\prod_{c' \ne c} x_{s,c'}
#   = \Big(\prod_{c' < c} x_{s,c'}\Big)\Big(\prod_{c' > c} x_{s,c'}\Big),$$
#
# an **exclusive** running product from the front times one from the back (an empty product is
# 1), both along `dim`, whichever dimension that is. Nothing is ever divided by. (Counting the
# zeros of each slice and treating the three cases apart is also correct, as long as the
# zero-free case does not divide: beside a subnormal entry $y / x$ is off, 1.0 for 1.3.)
# </details>

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

# %% [markdown]
# ## ✎ Exercise 3 · `Cumsum`
#
# Write `Cumsum`, with `Cumsum.apply(x, dim)` returning `torch.cumsum(x, dim)`; backward
# returns `None` for `dim`. The contract, which the self-check and the hidden tests check:
#
# - `x` with at least one dim and `dim` a Python int, negative allowed, along which `x` has at
#   least one entry: the value and the gradient autograd gives `torch.cumsum(x, dim)`,
#   backward returning the gradient in `x`'s dtype (float64 and float32);
# - each entry of the gradient within a few roundings of the entries of `grad_output` it adds
#   up, also where `grad_output` decays along `dim` (the self-check tries $10^8$ down to
#   $10^{-8}$ in float64, $10^3$ down to $10^{-3}$ in float32);
# - forward saves no tensor that a correct backward can do without: your answer to step 3 says
#   which those are.
#
# Derive it:
#
# 1. For a vector, write $\partial y_o / \partial x_i$ with an indicator $[\,\cdot\,]$. Draw
#    $J$ for five entries: which triangle is filled?
# 2. Multiply by $g_o$ and sum over $o$. For a given $i$, which outputs contribute?
# 3. Does your $\partial y_o / \partial x_i$ contain $x$? What, then, must forward keep for
#    backward?
# 4. How do you compute the sum of step 2 for every $i$ at once, with ops you know, and no
#    loop? There is more than one way: which of them meets the second clause, and why?
#
# **Check your step 1 live.** Write `cumsum_J(n)`: the $n \times n$ matrix whose entry
# $[o, i]$ is $\partial y_o / \partial x_i$ for the running sum of a vector of $n$ entries.
# The cell after it compares your matrix with autograd's Jacobian for $n = 1$, 4 and 5. Then
# read it by columns: column $i$ holds the outputs that step 2 sums for $x_i$.

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
# Which outputs contain $x_i$? Fill in $J$ for five entries: which triangle holds the ones, and
# which triangle does backward read when it sums over the outputs?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step, as questions</summary>
#
# For which $o$ is $\partial y_o / \partial x_i$ non-zero, and what is it there (with what
# weight does $x_i$ enter $y_o$)? Write it with an indicator; the check of `cumsum_J` above
# tells you when it is right. Multiply by $g_o$ and sum over $o$: for the first entry,
# $i = 0$, which $g_o$ are in the sum? For the last entry? For the ones in between?
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# A vector of four entries and $g = (1, 2, 3, 4)$: your backward returns
# $(10, 9, 7, 4)$.
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
# Along `dim`, in every slice,
#
# $$\frac{\partial L}{\partial x_i} = \sum_{o \ge i} g_o ,$$
#
# the entries of $g$ from $i$ **to the end** ($J$ is lower triangular, $J^\top$ upper). $J$
# does not depend on $x$ (the scan is linear). The total less the running sum before $i$,
# $\sum_o g_o - \sum_{o < i} g_o$, is equal only in exact arithmetic: where the early $g_o$
# are much larger than the late ones, the subtraction cancels the late entries' digits.
# </details>

# %%
jacobian_view(Cumsum, torch.cumsum, torch.randn(2, 4, dtype=torch.float64), 1)

# %% [markdown]
# ## Selections
#
# `torch.index_select(x, 0, index)` picks rows of $x$: output row $k$ is row `index[k]` of
# $x$. The index may repeat a row (an embedding lookup of a sentence with the same word twice)
# or be empty. Backward receives one row of $g$ per output row: where must each one go, and
# what if two go to the same place? First, the tool most people reach for, an indexed write:
# `t[index] = v` writes row $k$ of `v` to row `index[k]`, for every $k$. And `t[index] += v`?
#
# **Quick question 3.** `idx = [4, 0, 4]`, `v = [1, 2, 3]`. After `z = zeros(5); z[idx] = v`,
# does entry 4 hold the sum of the two values sent there, 4, or one of them? And after
# `z = zeros(5); z[idx] += v`? Write `"sum"` or `"one of them"` for each into `prediction_3`.

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
# One of them, both times: entry 4 holds 3, the last write, and the sum, 4, appears in
# neither. `z[idx] += v` is a write too: Python runs it as `t = z[idx]` (indexing with a
# tensor makes a copy, here $(0, 0, 0)$), `t += v`, then `z[idx] = t`, the same write as the
# first line. With a repeated index PyTorch's documentation calls the written value undefined:
# on another device or another size it may be the other one. Either way one of them is lost.
# </details>

# %% [markdown]
# ## ✎ Exercise 4 · `IndexSelect`
#
# Write `IndexSelect`, with `IndexSelect.apply(x, index)` returning
# `torch.index_select(x, 0, index)`. Backward returns `None` for `index`, an integer tensor,
# which has no gradient (PyTorch drops anything returned in its place, so that is not graded).
# The contract, which the self-check and the hidden tests check:
#
# - `x` with at least one dim and `index` a 1-D int64 tensor whose entries may **repeat**, or
#   that may be **empty**: the value and the gradient autograd gives
#   `torch.index_select(x, 0, index)`, backward returning that gradient in `x`'s dtype
#   (float32 too);
# - forward saves, with `ctx.save_for_backward`, nothing that a correct backward can do
#   without and **no byte of its own** (nothing made only to be saved), and keeps no tensor
#   as a `ctx` attribute: what backward needs, and where each part goes, is your answer to
#   step 4.
#
# Derive it:
#
# 1. Write $y_{k,c}$ with `index`, and $\partial y_{k,c} / \partial x_{s,d}$ with an indicator
#    and a delta.
# 2. Multiply by $g_{k,c}$ and sum over $k$ and $c$. Which rows $k$ of $g$ reach row $s$ of the
#    gradient? What does a row of $x$ that `index` never names get, and one that it names
#    three times?
# 3. What must happen at a row of the gradient that `index` names twice? The quick question
#    on `z[idx] = v` showed what a write leaves there. Which op adds rows at given positions
#    instead of writing them?
# 4. Which tensors' values does your step 2 read, and what else does backward need to build
#    a gradient of `x`'s shape and dtype? Which of those are tensors?
#
# **Check your step 1 live.** For a 1-D $x$ of `n_rows` entries, write
# `select_J(index, n_rows)`: the matrix whose entry $[k, s]$ is $\partial y_k / \partial x_s$,
# one row per entry of `index`. The cell after it compares your matrix with autograd's for
# two repeated indices and an empty one. Then read it by columns: what does step 2 do with a
# column that holds two ones?

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
# Output row $k$ is a copy of which row of $x$? Turn it around: which output rows read row $s$
# of $x$, and how many of them can there be?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step, as questions</summary>
#
# Write $y_{k,c}$ as one entry of $x$, using $\text{index}_k$. For which $(k, c)$ is
# $\partial y_{k,c} / \partial x_{s,d}$ non-zero, and what is it there? Write it with an
# indicator on $\text{index}_k$ and a delta; the check of `select_J` above tells you when it
# is right. Multiply by $g_{k,c}$ and sum over $k$ and $c$: which sum does the delta remove,
# and what does the indicator leave of the sum over $k$? Which op adds rows at given
# positions instead of writing them?
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# $x$ of three rows of two, `index` $= (2, 0, 2)$ and $g$ with rows $(1, 1)$, $(2, 2)$,
# $(3, 3)$: the gradient has rows $(2, 2)$, $(0, 0)$ and $(4, 4)$.
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
# row $s$ of the gradient is the **sum** of the rows of $g$ whose index is $s$: zero for a row
# never named, three rows of $g$ added for a row named three times, all zeros for an empty
# index. In code, `Tensor.index_add(dim, index, source)` adds row $k$ of `source` to row
# `index[k]`, for every $k$ (`t.index_put_((index,), v, accumulate=True)` does the same).
# </details>

# %% [markdown]
# Your `IndexSelect` with `index = [3, 0, 3, 3]`: the two columns of row 3 of $x$ each have
# three ones, one per output row that copied it.

# %%
rows = torch.randn(5, 2, dtype=torch.float64)
repeated = torch.tensor([3, 0, 3, 3])


def index_select_rows(x, index):
    return torch.index_select(x, 0, index)


jacobian_view(IndexSelect, index_select_rows, rows, repeated)


# %% [markdown]
# ## Normalisation: dividing by a norm
#
# `F.normalize(x, dim=-1, eps=eps)` scales each row (the last dimension) to length 1:
#
# $$y_j = \frac{x_j}{\max(\lVert x \rVert, \varepsilon)}, \qquad
#   \lVert x \rVert = \sqrt{\textstyle\sum_k x_k^2},$$
#
# where $\varepsilon$ keeps a row of zeros (or nearly) from dividing by zero: such a row is
# divided by $\varepsilon$ instead and stays short.
#
# **Quick question 4.** A row well above $\varepsilon$, and `grad_output` equal to $y$ itself
# (the loss grows when the output grows along its own direction). What is the gradient with
# respect to $x$? And for a row whose norm is below $\varepsilon$? Write `"zero"` or
# `"not zero"` for each row into `prediction_4`.

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
# Normalising removes one thing from $x$, its length, and the gradient reflects that. Zero for
# the first row, up to rounding: stretching $x$ along itself leaves its direction,
# and so $y$, unchanged, and $y$ cannot grow along itself, since it has length 1 whatever $x$
# is. The second row has norm $0.005 < \varepsilon$: not zero, since the divisor is a constant
# there.
# </details>

# %% [markdown]
# ## ✎ Exercise 5 · `Normalize`
#
# Write `Normalize`, with `Normalize.apply(x, eps)` returning
# `F.normalize(x, dim=-1, eps=eps)`; backward returns `None` for `eps`. The contract, which
# the self-check and the hidden tests check:
#
# - `x` with at least one dim, rows along the last, and `eps` a Python float from $10^{-12}$ to
#   $10$: the value and the gradient autograd gives `F.normalize(x, dim=-1, eps=eps)`, on rows
#   whose norm is above `eps` and on rows **below** it (zeros included), however close to
#   `eps` on either side, each row on the side of `eps` where `F.normalize` puts it (the note
#   below says what that means at `eps` itself), in float32 as in float64, backward returning
#   the gradient in `x`'s dtype;
# - backward in **closed form**: a few tensors of `x`'s size, never a $d \times d$ Jacobian per
#   row;
# - forward saves the output and one number per row in `x`'s dtype, nothing else: which
#   number is your answer to step 5.
#
# <details><summary>A note for rows within an ulp of <code>eps</code> (open if the self-check
# names one)</summary>
#
# Near `eps`, which side a row lands on depends on the last bit of its norm, so "the side
# where `F.normalize` puts it" means: measured as `F.normalize` measures it, in `x`'s dtype.
# A norm written another way, or taken in a wider dtype, can differ from it by an ulp. And
# `eps` is compared as `x`'s dtype holds it: float32 holds 0.1 as 0.10000000149, above the
# Python float, and 0.7 as 0.69999999 and $10^{-12}$ as $9.99999996 \cdot 10^{-13}$, below it.
# A float32 row `[0.7, 0]` with `eps=0.7` is at `eps`.
#
# For a float32 `x`, then, `eps` means `eps` as float32 holds it, whether float32 rounds it up
# or down, and a row whose float32 norm is exactly that is **at** `eps`: it must take the
# formula `F.normalize`'s own gradient takes there (step 5 asks which). Such rows are tried at
# several `eps`, both ends of the range included; a float64 row exactly at `eps` is never
# tried.
# </details>
#
# Derive it, for one row and $n = \lVert x \rVert$:
#
# 1. Below $\varepsilon$: $y_j = x_j / \varepsilon$. Write $\partial y_j / \partial x_i$ and
#    the gradient.
# 2. Above $\varepsilon$: $y_j = x_j / n$. Show that $\partial n / \partial x_i = x_i / n$,
#    then write $\partial y_j / \partial x_i$ with the quotient rule, and rewrite it using only
#    $y$ and $n$.
# 3. Multiply by $g_j$ and sum over $j$. Which of your two terms survives unchanged, and which
#    leaves a sum over $j$? How do you compute that sum per row, and what shape must it have
#    to broadcast against $g$?
# 4. Geometrically, what does subtracting the term with the sum do to $g$? Check it against
#    the quick question on `grad_output` equal to $y$.
# 5. Which tensors does your formula read? Besides $y$, what must backward know per row, to
#    compute it and to pick the formula of step 1 or of step 2, however close to `eps` the row
#    is? Can one number per row do both, and which candidates fail a row an ulp from `eps`?
#    Your formula could be written with $x$ instead of $y$: in a network, when does saving the
#    output cost less than saving $x$, and when do the two cost the same? (Compare a next layer
#    `y @ W` with a next layer `y + 1`: which of them saves $y$?) At a norm exactly equal to
#    `eps`, which formula does `F.normalize`'s own gradient take? (Try a float32 row `[0.7, 0]`
#    with `eps=0.7` against autograd.)
#
# **Check your step 2 live, for one column.** Write $\partial y_j / \partial x_0$ above
# $\varepsilon$ for one row, every $j$ at once, as a function of $y$ (a vector of length $d$)
# and $n$ (a number): `jacobian_column(y, n)` returns the vector whose entry $j$ is
# $\partial y_j / \partial x_0$, how every output moves with the first input. The cell after it
# compares it with column 0 of autograd's Jacobian of `F.normalize` on three rows. At
# $x = (3, 4)$ it is $(0.128, -0.096)$. Every other column, and what step 3 does with them, is
# yours.

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
# Below $\varepsilon$, does the divisor move when $x$ moves? Above it, $n$ moves with every
# $x_i$: how much, and what does that add to $\partial y_j / \partial x_i$ besides
# $\delta_{ij} / n$?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step</summary>
#
# Below $\varepsilon$ the divisor is a constant: differentiate $x_j / \varepsilon$ as you
# would $x_j / 2$, and check the result against Hint 3's second case. Above, differentiate
# $n^2 = \sum_k x_k^2$ by $x_i$ to get $\partial n / \partial x_i$. The quotient rule on
# $x_j / n$ then gives two terms, one with $\delta_{ij}$ and one with
# $\partial n / \partial x_i$; write each with $y$ and $n$ only. The checker above tells you
# when they are right.
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# $x = (3, 4)$, $\varepsilon = 10^{-12}$ and $g = (1, 1)$: $\partial L/\partial x =
# (0.032, -0.024)$. $x = (0.03, 0.04)$ with $\varepsilon = 0.1$, below it, and the same $g$:
# $(10, 10)$.
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
# In each row,
#
# $$\frac{\partial L}{\partial x_i} = \frac{1}{n}\Big(g_i - y_i \sum_j y_j\, g_j\Big)
#   \text{ above } \varepsilon, \qquad \frac{g_i}{\varepsilon} \text{ below}.$$
#
# Above $\varepsilon$ this is $g$ less its component along the unit vector $y$, divided by $n$
# (the projection behind the quick question on `grad_output` equal to $y$: for $g = y$ the
# gradient is 0). Forward saves $y$ and
# $n$, and $n$ alone tells the two cases apart.
# </details>

# %% [markdown]
# Your `Normalize` on three rows of four with `eps = 0.5`, the last row (norm 0.3) below it:
# one dense $4 \times 4$ block per row, since every output of a row depends on every input of
# that row, and a diagonal block, $1/\varepsilon = 2$, for the short row.

# %%
short_row = torch.tensor([[1.0, -2.0, 0.5, 2.0], [0.6, 0.2, -0.8, 0.4],
                          [0.1, -0.2, 0.0, 0.2]], dtype=torch.float64)


def normalize_rows(x, eps):
    return F.normalize(x, dim=-1, eps=eps)


jacobian_view(Normalize, normalize_rows, short_row, 0.5)


# %% [markdown]
# ## ✎ Exercise 6 (transfer) · `CumMax`
#
# An op this lesson never worked through: the **running maximum**, `torch.cummax(x, dim)`, which
# returns the maximum so far at every position (`values`) and where it was found (`indices`).
# Use the method; no derivation is on screen.
#
# Write `CumMax`, with `CumMax.apply(x, dim)` returning `torch.cummax(x, dim).values`;
# backward returns `None` for `dim`. The contract, which the self-check and the hidden tests
# check:
#
# - `x` with at least one dim and `dim` any of its dims, negative too: the value and the
#   gradient autograd gives through `torch.cummax(x, dim).values`, ties included (as
#   `torch.cummax` breaks them), and entries one ulp apart told apart, backward returning the
#   gradient in `x`'s dtype (float64 and float32);
# - forward saves, with `ctx.save_for_backward`, nothing that a correct backward can do
#   without and **no tensor made only to be saved** (no conversion, no copy): what backward
#   needs, and why it is enough, is yours to find.

# %% [markdown]
# <details><summary><b>Hint 1</b>: a question (open after your attempt)</summary>
#
# Call $m_o$ the position `torch.cummax` reports for output $o$. Which input entry is $y_o$ a
# copy of? Which outputs read a given entry $x_i$, and how many can there be?
# </details>
#
# <details><summary><b>Hint 2</b>: the index-notation step, as questions</summary>
#
# Write $y_o$ as one entry of $x$ along `dim`, using $m_o$. For which $i$ is
# $\partial y_o / \partial x_i$ not zero, and what is it there? Multiply by $g_o$ and sum
# over $o$: which earlier exercise had a gradient of this form? What is different about the
# index here: how many are there, and along which dimension do they point? What must the op
# you pick do with two outputs that copy the same entry? Hint 3's numbers check your answer.
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# $x = (1, 3, 3, 2, 3)$ and $g = (1, 2, 3, 4, 5)$:
# $\partial L/\partial x = (1, 2, 7, 0, 5)$.
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
# $$\frac{\partial L}{\partial x_i} = \sum_o [m_o = i]\, g_o:$$
#
# entry $i$ receives the **sum** of the $g_o$ of every output whose running maximum sits at $i$
# (zero if none does), slice by slice along `dim`. $m$ does not change with small moves of $x$
# (away from ties), so it is all backward needs: the indices forward already has. In code,
# `t.scatter_add(dim, index, src)` adds each entry of `src` at the position `index` names
# **along `dim`**, every other coordinate unchanged: an `index_add` with one index per entry.
# </details>

# %% [markdown]
# Your `CumMax` on three rows with ties and long runs under one maximum: each row of $J$ holds
# a single 1, in the column of the entry that output copies, and a column collects every output
# that copies its entry. Outlined entries, if any, are where your backward and autograd's
# differ.

# %%
jacobian_view(CumMax, lambda x, dim: torch.cummax(x, dim).values,
              torch.tensor([[1.0, 3.0, 3.0, 2.0], [4.0, 1.0, 2.0, 0.5], [0.0, 1.0, 2.0, 3.0]],
                           dtype=torch.float64), 1)

# %% [markdown]
# ## Summary
#
# Write one output entry with indices, differentiate by one input entry (deltas where indices
# must match), multiply by $g$ and sum over the output's indices. What survives is a pattern:
# a broadcast becomes a sum down to the input's exact shape (`sum_to_size`), a reduction an
# `expand` (a view with stride 0, no copy) after putting the reduced dim back, a scan the same
# scan reversed, a selection an `index_add` or `scatter_add` that accumulates repeats, a
# normalisation a projection that removes the component along the output. Whatever the
# engine does with a gradient left in a broadcast shape, backward returns exact shapes. Next
# lesson: these patterns assembled into
# LayerNorm and RMSNorm, and a Function shipped inside an `nn.Module`.
#
# The main line ends here. The rest is optional: the common mistakes as a table, the five
# patterns as pictures, three backwards that are wrong on purpose, what the engine does with a
# gradient of the wrong shape, ties in `torch.cummax`, a running product (a scan and a product
# with zeros at once), and the In practice block.

# %% [markdown]
# ## Common mistakes (optional reading)
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | forgot to sum the broadcast dims | backward returns a gradient of the broadcast shape; the engine sums it when it can, so values look right, but the contract is broken: anything that calls your backward directly gets the wrong shape | sum down to the input's exact shape (`sum_to_size`) |
# | a sum without `keepdim=True` where the input has a dim of size 1 | a gradient without the input's dim of size 1: the wrong shape, which the engine may refuse, or a later broadcast lines up with the wrong dim | `keepdim=True`, or `sum_to_size` |
# | ignoring `ctx.needs_input_grad` | work (and memory) for a gradient nobody asked for | compute each gradient under its flag, `None` otherwise |
# | `grad_output` of a reduction used without `unsqueeze(dim)` | broadcasting aligns from the right, which is right only when `dim` is the leading dim: otherwise an error, or silently wrong values (on a square tensor, or where `x` has a dim of size 1, which the engine then sums) | `grad_output.unsqueeze(dim)` (not needed with `keepdim=True`) |
# | `y / x` for "the product of the others" (even only where no zero) | divided by zero: `nan` in every slice with a zero; beside a subnormal entry $y$ rounds, and on $[5 \cdot 10^{-324}, 1.3]$ $y / x$ gives 1.0 for 1.3 | exclusive running products from both ends, which never divide |
# | one zero handled, several not | a slice with two zeros gets a non-zero gradient | the product of the others always contains the other zero: 0 |
# | `y / a` for the gradient of `a * b` | nan where `a` holds 0, and 0 or inf where `a * b` underflows or overflows | the other factor itself, no division |
# | a zero found with a tolerance (`x.abs() < 1e-12`, or below `torch.finfo(x.dtype).tiny`, which takes subnormals for zeros) | a tiny entry taken for a zero: the other entries get 0, where their gradient is a product that holds the tiny entry | only an exact 0 is a zero |
# | shifts and slices written for the last dim (`x[..., :-1]`) | right for `dim=-1`, wrong for `dim=0` | every slice, shift and flip along `dim` |
# | the scan run forward in backward | $J^\top$ is the other triangle | a running sum from the end |
# | saving `x` for a linear op (`Cumsum`) or a selection | memory for nothing: the Jacobian does not depend on $x$ | save `dim`, or `index` and the shape |
# | `grad[index] = grad_output`, or `grad[index] += grad_output`, or any write that does not add | repeated rows are lost: only one write survives | an op that accumulates, as `index_add` does |
# | a tensor kept as a `ctx` attribute (`ctx.index`, `ctx.x`) | autograd cannot track it (in-place changes, saved-tensor hooks) | `ctx.save_for_backward(...)`, or not kept at all where backward can do without it |
# | missing the projection term | the gradient of $x / n$ with $n$ held fixed: wrong wherever $g$ has a component along $y$ | subtract the component of $g$ along $y$ |
# | projection on rows below `eps` too | those rows are divided by a constant: no projection there | mask the term with `norm >= eps` |
# | a float32 row's norm taken another way (`(x * x).sum(-1).sqrt()`, in float64, squared against `eps ** 2`) or compared with `eps` in float64 (`norm.double() >= eps`) | a row within an ulp of `eps` lands on the other side from `F.normalize`'s, which compares its float32 norm with `eps` as float32 holds it | the norm `F.normalize` computes, `x.norm(dim=-1)`, compared in `x`'s dtype |
# | building each row's $d \times d$ Jacobian | $d$ times the memory and work of the closed form | the projection, with one dot product per row |
# | saving `x` for `Normalize` | a second tensor of $x$'s size | the output and one norm per row |

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
# ## Three backwards that are wrong on purpose (optional, not graded)
#
# Each backward's Jacobian is drawn beside autograd's (these backwards are the lesson's, not yours);
# outlined entries are where they differ.
#
# First, what a backward that forgets the sum looks like, on the sum $a + b$ (not your
# exercise), whose gradient for either input is $g$ summed to that input's shape: this
# backward returns `grad_output` itself, of shape $(3, 4)$, for $a$ of shape
# $(3, 1)$. The engine would sum it and `a.grad` would be right; the picture shows what backward
# actually returned, twelve columns where $a$ has three.

# %%
class AddWithoutSum(torch.autograd.Function):
    """Wrong on purpose: a + b whose backward returns the broadcast-sized gradient unsummed."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output


jacobian_view(AddWithoutSum, lambda a, b: a + b, a_example, b_example)

# %% [markdown]
# Second, a selection whose backward writes instead of adding, `grad[index] = grad_output`
# (`+=` does the same, as the quick question on `z[idx] = v` showed), with `index = [3, 0,
# 3, 3]`: each row of the gradient keeps one write, on CPU today the last. The outlined
# entries are the repeats it lost.

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
# ## What the engine does with a gradient of the wrong shape (optional, not graded)
#
# Backward must return, for each input, a gradient of that input's shape. The autograd engine
# checks what backward returned: does it refuse every other shape? Here is a Function that
# returns a gradient of ones of a chosen shape, to see what comes out in `x.grad`.
#
# **Quick question 5.** The input has shape $(3, 1)$ and backward returns a gradient of shape
# $(2, 3, 4)$. Does the engine accept it, and if so, what shape and values end up in `x.grad`?
# And for a gradient of shape $(3,)$, the same numbers without the dimension of size 1? Write
# each answer as `(shape, value of every entry)` or `"refused"` into `prediction_5`.

# %%
prediction_5 = {(2, 3, 4): None, (3,): None}  # e.g. ((3, 1), 1.0), or "refused"


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


observed_2, table_2 = {}, []
for input_shape, returned in [((4,), (3, 4)), ((3, 1), (3, 4)), ((3, 1), (2, 3, 4)),
                              ((), (3,)), ((4,), (1, 4)),
                              ((3, 1), (3,)), ((3, 4), (4,)), ((3, 4), (12,)), ((2, 4), (3, 4))]:
    ReturnsShape.returned = returned
    x = torch.zeros(input_shape, requires_grad=True)
    try:
        ReturnsShape.apply(x).sum().backward()
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
# So why should backward reduce at all? Because the engine's help is narrower than it looks:
#
# - it is part of the **engine's** call, not of your Function. Anything that calls your
#   backward itself (another Function reusing it in a fused backward, a test, a reader checking
#   the maths) gets a gradient of the wrong shape;
# - it covers only shapes the input broadcasts to: a sum that dropped a dimension of size 1 is
#   refused, as above, so "the engine fixes my shapes" is half a rule;
# - the contract of `backward` (and of every exercise here) is one gradient **of the input's
#   shape** per input. The grader records what your backward returns *before* the engine sees
#   it, and so does the Jacobian view: a forgotten sum shows as extra columns.

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
