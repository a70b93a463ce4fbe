# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 06 · Attention by hand: the softmax Jacobian, masks, and FlashAttention
#
# Scaled dot-product attention is the operation at the heart of every transformer, and its
# backward is the best exercise there is in everything this course has covered: batched matrix
# calculus, a Jacobian you must not build, inputs that are not differentiable, numerical
# stability, and a choice of what to keep that decides how long a sequence fits in memory.
# The lesson ends where the FlashAttention papers begin: attention computed tile by tile, so
# that the $N_q \times N_k$ matrix of scores never exists, not even for a moment.
#
# You derive each step yourself. Every derivation comes with questions and a small function
# you fill in, checked against autograd or the exact result as you go. The closed forms are
# shown only after the live check or self-check that asks for them, in a collapsed **Compare
# with yours** block.
#
# Plan about 90 minutes for the main line, in one or two sittings: the backward derived step
# by step and Exercises 1 and 2 (about 40 minutes, with "Kept and peak", where you measure
# peak memory), then the online softmax, the two steps that build FlashAttention's pieces,
# and Exercise 3 (about 35 minutes), and the transfer exercise (about 15). Each predict-then-run
# question takes a minute; leave its guesses at `None` to skip it. Everything after the
# **Summary** is optional and never graded: pictures, `@once_differentiable`'s limits, more
# measurements, common mistakes and the **In practice** notes.
#
# By the end of this lesson you can:
# 1. derive the softmax's vector-Jacobian product, and say why it has a row sum;
# 2. apply a boolean mask with the right polarity, and match
#    `torch.nn.functional.scaled_dot_product_attention`, outputs and gradients;
# 3. keep one number per query instead of the $N_q \times N_k$ probabilities, then measure,
#    and explain, what that does to the *peak* memory of one call and of a stack of layers;
# 4. derive the online softmax and an identity that gives the softmax's row sum without $P$,
#    and write FlashAttention's tiled forward and backward;
# 5. measure peak memory, not only what is kept between the passes;
# 6. differentiate a variant nobody works through for you: attention with an additive bias
#    (relative positions, ALiBi, padding) that learns.

# %% nbgrader={"locked": true}
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable
from torch.nn.attention.bias import causal_lower_right

from autograder import self_check
from autograder.exercises.lesson06_attention.attention_steps import row_sum_is_right, tile_errors
from autograder.memory import TensorAccounting, kept_bytes
from autograder.predictions import written
from widgets import attention_explorer
from widgets.flash import measure_attention, online_softmax_stepper, peak_and_time_figure

_ = torch.manual_seed(0)


def withheld(*predictions) -> bool:
    """True, after saying so, while a prediction is not written: a predict-then-run cell
    shows what it measured only then (Run All would hand the answers over before you predict)."""
    if written(*predictions):
        return False
    print("no prediction written: write yours, then run this again")
    return True

# %% [markdown]
# ## The forward
#
# Queries $Q$ of shape $(\dots, N_q, d)$ ask, keys $K$ of shape $(\dots, N_k, d)$ answer, and
# values $V$ of shape $(\dots, N_k, d_v)$ are what gets mixed. The leading dimensions $(\dots)$
# are usually batch and heads; `@` treats them as a batch of independent matrices.
#
# $$S = \tau\, Q K^\top \quad (N_q \times N_k), \qquad
#   P = \operatorname{softmax}_{\text{row}}(\tilde S), \qquad O = P V \quad (N_q \times d_v),$$
#
# where $\tau$ is the scale (usually $1/\sqrt d$) and $\tilde S$ is $S$ with $-\infty$ wherever the
# mask says a query may **not** look at a key; $e^{-\infty} = 0$, so those keys get no weight.
# Row $i$ of $P$ is a probability distribution over the keys for query $i$.
#
# **Notation**, as in the FlashAttention-2 paper, one symbol per quantity: $\phi$ the loss, so
# that $dO = \partial\phi/\partial O$; $N_q$, $N_k$ the numbers of queries and keys (`Lq`,
# `Lk` in code and in the exercises' contracts); $\tau$ the scale; $S_{ij}$ a score; $m$ a
# row's maximum; $\ell$ a row's running sum of exponentials; $L$ a row's log-sum-exp.

# %%
Q = torch.randn(2, 3, 4, 8)   # (batch, heads, Lq, d)
K = torch.randn(2, 3, 6, 8)   # (batch, heads, Lk, d)
V = torch.randn(2, 3, 6, 5)   # (batch, heads, Lk, dv)
S = (Q @ K.transpose(-2, -1)) / math.sqrt(8)
P = torch.softmax(S, dim=-1)
print("S, P:", tuple(S.shape), " O:", tuple((P @ V).shape), " rows of P sum to 1:",
      torch.allclose(P.sum(-1), torch.ones(2, 3, 4)))

# %% [markdown]
# ## Derive the backward, one step at a time
#
# Backward receives $dO = \partial \phi/\partial O$ and walks the three steps in reverse.
#
# **Step 1, $O = PV$.** This is lesson 02's matrix product. Before reading on, write down
# $dV$ and $dP$ with their shapes, $(\dots, N_k, d_v)$ and $(\dots, N_q, N_k)$. Try yours
# on 3 queries against 4 keys with $d_v = 2$; the placeholder returns zeros.

# %%
def report(label, largest_error, tolerance):
    """✓ or ✗ for the largest error that largest_error() returns; an error raised in your
    code is shown in one line, so that Run All goes on."""
    try:
        error = largest_error()
    except Exception as raised:  # an error in your function, shown in one line
        first_line = str(raised).partition("\n")[0]
        print(f"✗ {label}: your code raised {type(raised).__name__}: {first_line}")
        return
    print("✓" if error < tolerance else "✗", f"{label}: largest error {error:.2g}")


generator = torch.Generator().manual_seed(1)  # its own numbers: later cells' stay the same
P1 = torch.softmax(torch.randn(3, 4, dtype=torch.float64, generator=generator), dim=-1)
V1, dO1 = (torch.randn(*shape, dtype=torch.float64, generator=generator)
           for shape in ((4, 2), (3, 2)))


def my_pv_vjp(dO, P, V):
    """(dP, dV) for O = P V, from dO: your derivation."""
    ### BEGIN WORKED
    return dO @ V.T, P.T @ dO
    ### LEARNER
    return torch.zeros_like(P), torch.zeros_like(V)  # replace with yours
    ### END WORKED


def error_of_pv_vjp():
    """The largest error of your dP and dV against autograd's."""
    leaves = [t.clone().requires_grad_() for t in (P1, V1)]
    (leaves[0] @ leaves[1]).backward(dO1)
    mine = my_pv_vjp(dO1, P1, V1)
    return max((grad - leaf.grad).abs().max().item() for grad, leaf in zip(mine, leaves))


report("dP and dV against autograd", error_of_pv_vjp, 1e-12)

# %% [markdown]
# **Step 2, $P = \operatorname{softmax}(S)$, row by row.** Rows do not interact, so look at
# one row and drop its index: $p_i = e^{S_i}/\sum_k e^{S_k}$. Unlike a sigmoid, every $p_i$
# depends on **every** score $S_j$ of its row, so its Jacobian $J_{ij} = \partial p_i /
# \partial S_j$ is a full matrix.
# Let autograd build it for five scores, and look before you derive:

# %%
s = torch.randn(5, dtype=torch.float64)
p = torch.softmax(s, dim=0)
J = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), s)
print("p =", p.numpy().round(4))
print("J =\n", J.numpy().round(4))
print("symmetric:", torch.allclose(J, J.T), "  row sums:", J.sum(1).numpy().round(12))

# %% [markdown]
# Questions to answer on paper:
#
# 1. Compare the diagonal of `J` with `p`. Which function of $p_i$ is $J_{ii}$?
#    And an off-diagonal $J_{ij}$: which product of two probabilities, with which sign?
# 2. Why must every row of $J$ sum to zero? (Hint: add the same number to every score.)
# 3. Backward never builds $J$: it needs $\partial \phi/\partial S_j = \sum_i
#    \frac{\partial \phi}{\partial p_i} J_{ij}$ for a given vector $v = \partial \phi/\partial p$.
#    Using your answer to 1, write this in $O(n)$ operations. Then state it for whole
#    matrices: $dS$ from $P$ and $dP$.
#
# Try your formula here. The first guess below, $p \odot v$, is what a popular mistake writes
# ("softmax is element-wise"); replace it with your derivation until the error is zero.

# %%
v = torch.randn(5, dtype=torch.float64)  # plays the role of dP for this row


def my_softmax_vjp(p, v):
    """J^T v for one row of the softmax, without building J: your derivation."""
    ### BEGIN WORKED
    return p * (v - (p * v).sum())
    ### LEARNER
    return p * v  # the first guess; replace it with yours
    ### END WORKED


report("against J^T v", lambda: (my_softmax_vjp(p, v) - J.T @ v).abs().max().item(), 1e-12)

# %% [markdown]
# **Step 3, $S = \tau\, Q K^\top$.** Lesson 02's matrix product again, with a constant in
# front and one factor transposed. Given $dS$, of shape $(\dots, N_q, N_k)$, write $dQ$, of
# shape $(\dots, N_q, d)$, and $dK$, of shape $(\dots, N_k, d)$. Where does $\tau$ go? $K$
# enters $S$ transposed: which of the two gradients needs $dS^\top$, and how do the shapes
# alone tell you? Try yours on 3 queries against 4 keys; the placeholder returns zeros.

# %%
Q3, K3 = torch.randn(3, 8, dtype=torch.float64), torch.randn(4, 8, dtype=torch.float64)
dS3 = torch.randn(3, 4, dtype=torch.float64)  # plays the role of dphi/dS


def my_scores_vjp(dS, Q, K, scale):
    """(dQ, dK) for S = scale * Q K^T, from dS: your derivation."""
    ### BEGIN WORKED
    return scale * dS @ K, scale * dS.T @ Q
    ### LEARNER
    return torch.zeros_like(Q), torch.zeros_like(K)  # replace with yours
    ### END WORKED


def error_of_scores_vjp():
    """The largest error of your dQ and dK against autograd's, for scale 0.35."""
    leaves = [t.clone().requires_grad_() for t in (Q3, K3)]
    ((leaves[0] @ leaves[1].T) * 0.35).backward(dS3)
    mine = my_scores_vjp(dS3, Q3, K3, 0.35)
    return max((grad - leaf.grad).abs().max().item() for grad, leaf in zip(mine, leaves))


report("dQ and dK against autograd", error_of_scores_vjp, 1e-12)

# %% [markdown]
# ## Masks, and which way round they go
#
# A boolean mask broadcastable to $(\dots, N_q, N_k)$ says which keys each query may use.
# Two shapes cover most uses:
#
# - **causal**, $(N_q, N_k)$: query $i$ sees keys $0..i$,
#   `torch.ones(N, N, dtype=torch.bool).tril()`;
# - **padding**, $(B, 1, 1, N_k)$: in batch element $b$ only the first `length[b]` keys are real.
#
# **Causal with $N_q \ne N_k$ has two alignments.** *Top-left*: query $i$ sees keys $0..i$,
# `tril()`. *Bottom-right*: the last query sees every key, so query $i$ sees keys $j \le i + N_k - N_q$,
# `tril(diagonal=N_k - N_q)`; this is what decoding with a cache of earlier keys needs, and
# what PyTorch builds with `torch.nn.attention.bias.causal_lower_right(N_q, N_k)`. For
# $N_q = N_k$ the two agree. This lesson's exercises and checks use bottom-right.
#
# Now the trap. PyTorch has **two conventions** for a boolean mask:
#
# | API | `True` means |
# |---|---|
# | `F.scaled_dot_product_attention(..., attn_mask=mask)` | this pair **takes part** in attention |
# | `nn.MultiheadAttention(...)(attn_mask=..., key_padding_mask=...)` | this pair is **not allowed** |
#
# This course uses the first: **`True` = attend, `False` = masked out**. Which scores must
# your forward set to $-\infty$, then, and how do you select them from `mask`? A mask built
# for one API and passed to the other silently attends to exactly the wrong keys:

# %%
q = k = v = torch.randn(1, 4, 8)
causal = torch.ones(4, 4, dtype=torch.bool).tril()
print("mask:\n", causal.int())
right = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
wrong = F.scaled_dot_product_attention(q, k, v, attn_mask=~causal)
print("first query, right polarity:", right[0, 0, :3])
print("first query, reversed mask: ", wrong[0, 0, :3])

# %% [markdown]
# With the mask reversed, the last query has no key left at all: its row of scores is all
# $-\infty$. **Predict, then run.** Write your three predictions into the cell below before
# running the one after it:
#
# 1. what `torch.softmax` gives for a row of scores that are all $-\infty$: `"nan"`, `"zeros"`
#    or `"uniform"`;
# 2. what `F.scaled_dot_product_attention` returned for that last query: the same three choices;
# 3. with `is_causal=True` and 2 queries against 4 keys, how many keys the first query sees.

# %%
### BEGIN WORKED
my_softmax_of_masked_row = "nan"
my_sdpa_for_masked_query = "zeros"
my_keys_seen_by_first_query = 1
### LEARNER
my_softmax_of_masked_row = None  # "nan", "zeros" or "uniform"
my_sdpa_for_masked_query = None  # "nan", "zeros" or "uniform"
my_keys_seen_by_first_query = None  # 1, 2, 3 or 4
### END WORKED

# %%
def kind(row):
    """Name a row of numbers: nan, zeros or uniform (or something else)."""
    if torch.isnan(row).any():
        return "nan"
    return "zeros" if torch.all(row == 0) else "uniform" if torch.allclose(row, row[0]) else "other"


if not withheld(my_softmax_of_masked_row, my_sdpa_for_masked_query,
                my_keys_seen_by_first_query):
    masked_row = torch.softmax(torch.full((3,), float("-inf")), dim=0)
    print("softmax of a fully masked row:", masked_row, "  you predicted",
          my_softmax_of_masked_row, "  it is", kind(masked_row))
    print("SDPA's output for that query: ", wrong[0, 3, :3], "  you predicted",
          my_sdpa_for_masked_query, "  it is", kind(wrong[0, 3]))
    q2, k4, v4 = torch.randn(1, 2, 8), torch.randn(1, 4, 8), torch.randn(1, 4, 8)
    for name, alignment in [("top-left", torch.ones(2, 4, dtype=torch.bool).tril()),
                            ("bottom-right", torch.ones(2, 4, dtype=torch.bool).tril(4 - 2))]:
        same = torch.allclose(F.scaled_dot_product_attention(q2, k4, v4, is_causal=True),
                              F.scaled_dot_product_attention(q2, k4, v4, attn_mask=alignment))
        print(f"is_causal=True is {name}:", same)
    bottom_right = torch.ones(2, 4, dtype=torch.bool).tril(4 - 2)
    print("causal_lower_right(2, 4) is bottom-right:", torch.allclose(
        F.scaled_dot_product_attention(q2, k4, v4, attn_mask=causal_lower_right(2, 4)),
        F.scaled_dot_product_attention(q2, k4, v4, attn_mask=bottom_right)))
    print("keys the first query sees under is_causal=True:",
          int(torch.ones(2, 4, dtype=torch.bool).tril()[0].sum()),
          "  you predicted", my_keys_seen_by_first_query)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# A plain softmax of a row of $-\infty$ is $0/0$, `nan`. `F.scaled_dot_product_attention`
# returns zeros instead: its reference path computes the weights with `torch._safe_softmax`,
# which defines the softmax of a fully masked row as all zeros, and its fused CPU kernel does
# the same. The output of a query that may look at nothing is then the empty weighted sum, 0,
# and no gradient flows through it. In this lesson every query keeps at least one key, so the
# question does not arise, but a model that pads must decide what such a row means.
#
# `is_causal=True` is top-left: with 2 queries and 4 keys, the first query sees key 0 only,
# and the last query never sees keys 2 and 3. Bottom-right lets the first query see keys
# 0..2 and the last query all four.
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `ScaledDotProductAttention`
#
# Write `ScaledDotProductAttention`, with `ScaledDotProductAttention.apply(Q, K, V, scale,
# mask=None)` returning `softmax(Q @ K^T * scale, masked) @ V` for `Q (..., Lq, d)`,
# `K (..., Lk, d)`, `V (..., Lk, dv)` and a Python-float `scale`. The contract, which the
# self-check and the hidden tests check:
#
# - The output, and the gradients of `Q`, `K` and `V`, that `F.scaled_dot_product_attention`
#   gives, for any Python-float `scale`, in float64 and float32, for any number of leading
#   dimensions, any $N_q$ and $N_k$, and inputs and `grad_output` in any layout (the table below
#   lists the cases the checks use); `None` for `scale` and for `mask`.
# - `mask` is `None` (the most common call) or a boolean tensor broadcastable to `(..., Lq,
#   Lk)`, `True` = attend and `False` = masked out: a masked key gets probability exactly 0,
#   whatever its score and the scores of its row.
# - Scores of any magnitude softmax handles (the table below).
# - Backward by hand, from your derivation: no `torch.autograd.grad` inside it, no built-in
#   `*_backward` op, and no tensor that forward saved changed in place.
# - Forward keeps what backward reads through `ctx.save_for_backward`, one call's state per
#   `ctx`: no tensor as a `ctx` attribute, on the class or in a module global, and no saved copy
#   of an input (its very values, transposed or not, in any dtype); a tensor computed from an
#   input, such as `Q * scale`, may be saved.
# - Keep the `@once_differentiable` that `backward` comes with (lesson 04; an optional block at
#   the end shows what it guards and what it lets through).
#
# The cases and magnitudes the checks use, for every exercise of this lesson:
#
# | | the checks use |
# |---|---|
# | `scale` | the usual $d^{-1/2}$, 0, and negative values |
# | shapes | 0 to 3 leading dimensions; $N_q < N_k$ and $N_q > N_k$, a single query, a single key |
# | layouts | the usual multi-head one (heads split off the features and moved before the sequence: not contiguous), for inputs and `grad_output` |
# | large scores | float64 scores in the thousands (`exp` overflows above about 709 in float64, 88 in float32); float32 rows reaching 100 to 150 |
# | low scores | float32 rows near $-160$, float64 rows near $-20000$ and near $-10^6$; float32 and float64 rows at or below `-torch.finfo(dtype).max / 2`, and rows whose visible score is `torch.finfo(dtype).min` itself |
# | masked scores | float64 rows whose masked scores lie tens of thousands above the visible ones |
# | float16, bfloat16 | scores up to about 85, where bfloat16 numbers are 0.5 apart (Exercise 3) |
# | `FlashAttention.BLOCK` | 2 to 16, so that small inputs span several tiles (Exercise 3) |
#
# Forward may call `torch.softmax`: it subtracts each row's maximum before `exp`. Which fill
# lies far enough below every score, in every dtype? Where your formulas transpose a matrix,
# which two dimensions does that swap, whatever comes before them? And stuck on a wrong gradient?
# Check first that every row of your $dS$ sums to 0: why must it, given that every row of $P$
# sums to 1?

# %% nbgrader={"grade_id": "answer_ScaledDotProductAttention", "solution": true}
class ScaledDotProductAttention(torch.autograd.Function):
    """softmax(Q K^T * scale, masked) V, with a hand-written backward."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        ### BEGIN SOLUTION
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # False = masked out
        P = torch.softmax(scores, dim=-1)  # subtracts each row's maximum: no overflow
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale = scale
        return P @ V
        ### END SOLUTION

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        Q, K, V, P = ctx.saved_tensors
        grad_V = P.transpose(-2, -1) @ grad_output  # O = P V
        grad_P = grad_output @ V.transpose(-2, -1)
        grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))  # softmax, row by row
        grad_Q = ctx.scale * grad_S @ K  # S = scale * Q K^T
        grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
        return grad_Q, grad_K, grad_V, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "ScaledDotProductAttention", "grade": true, "points": 3}
self_check("ScaledDotProductAttention", ScaledDotProductAttention)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ScaledDotProductAttention", ScaledDotProductAttention)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Step 1: $dV = P^\top dO$ and $dP = dO\,V^\top$.
#
# Step 2: $J_{ij} = p_i(\delta_{ij} - p_j)$, that is $J = \operatorname{diag}(p) - p\,p^\top$,
# symmetric. Its rows sum to zero because adding $c$ to every score leaves the softmax
# unchanged, so the derivative along $(1, \dots, 1)$ is zero. The product with a vector needs no
# matrix:
#
# $$\frac{\partial \phi}{\partial S_j} = \sum_i v_i\, p_i(\delta_{ij} - p_j)
#   = p_j \Big(v_j - \sum_i v_i\, p_i\Big),
#   \qquad\text{for every row:}\qquad
#   dS = P \odot \big(dP - \operatorname{rowsum}(dP \odot P)\big).$$
#
# Turning the matrix form into code, with `keepdim` where a per-row number meets a matrix, is
# the first half of Exercise 1. The row sum is the $-p\,p^\top$ part of the Jacobian: raising
# one score lowers every other probability in its row. Masked entries need no care: their $P$
# is $0$, so their $dS$ is $0$ too.
#
# Step 3: $S = \tau\,QK^\top$ is a scaled matrix product, so $dQ = \tau\, dS\, K$ and
# $dK = \tau\, dS^\top Q$. The mask and the scale are not tensors to differentiate: `None`.
# </details>

# %% [markdown]
# ## What is kept for backward, and how much
#
# The inputs $Q$, $K$, $V$ are kept by the caller anyway. What costs memory is what backward
# needs of size $N_q \times N_k$ **per head**: one such float32 matrix at $N = 4096$ is
# 64 MiB per head, per layer, which is why long sequences run out of memory.
#
# How many such matrices does your Exercise 1 keep, and how many does autograd keep when the
# same attention is written with ordinary ops? An optional predict-then-run at the end, "What
# is kept, counted", measures both.

# %% [markdown]
# ## Derive: one number per query row
#
# Backward needs $P$, but does it need forward to *keep* $P$? Recomputing $S = \tau QK^\top$
# is one matrix product; the softmax then needs each row's normaliser.
#
# 1. For row $i$ with maximum $m_i$, write $P_{ij}$ using $S_{ij}$ and **one** number
#    $L_i$ per row. (Start from $P_{ij} = e^{S_{ij} - m_i} / \sum_k e^{S_{ik} - m_i}$.)
# 2. Why compute $L_i$ with $m_i$ subtracted inside the sum, rather than as
#    $\log \sum_k e^{S_{ik}}$ directly?
#
# Write both answers below and run: the check uses float32 scores past exp's float32 limit of
# about 88 (row 0 reaches 100), as Exercise 2's float64 checks go past float64's 709 (their
# scores reach the thousands), and compares your $P$ with `torch.softmax`. The first guess for
# $L_i$ is question 2's direct formula; see what it gives.

# %%
scores = torch.randn(3, 6) * 40
scores[0, 0] = 100.0  # exp(100) is beyond float32's largest number, about 3.4e38


def my_lse(scores):
    """One number per row, from which P is rebuilt: your derivation."""
    ### BEGIN WORKED
    m = scores.amax(dim=-1, keepdim=True)
    return m + (scores - m).exp().sum(dim=-1, keepdim=True).log()
    ### LEARNER
    return scores.exp().sum(dim=-1, keepdim=True).log()  # the first guess: replace it with yours
    ### END WORKED


def my_P_from_lse(scores, lse):
    """P from the scores and your one number per row."""
    ### BEGIN WORKED
    return (scores - lse).exp()
    ### LEARNER
    return torch.zeros_like(scores)  # replace with yours
    ### END WORKED


def error_of_P():
    """Shows your L, then returns the largest error of the P rebuilt from it."""
    lse = my_lse(scores)
    print("your L, one per row:", lse.squeeze(-1))
    return (my_P_from_lse(scores, lse) - torch.softmax(scores, dim=-1)).abs().max().item()


report("your P against torch.softmax", error_of_P, 1e-6)

# %% [markdown]
# **The row sum, without $P$.** Your backward also computes
# $\operatorname{rowsum}(dP \odot P)$, one number per query. With $dP = dO\,V^\top$, write
# $\sum_j dP_{ij} P_{ij}$ as a double sum over keys $j$ and value columns $c$, and swap the
# two sums. What do you get, in terms of $dO$ and $O$ only?
# Why does that matter once $P$ is computed one block of keys at a time?
#
# Replace `my_row_sum` below with your expression (it must not use `P` or `dP`):

# %%
P = torch.softmax(torch.randn(3, 6, dtype=torch.float64) * 4, dim=-1)
V_ = torch.randn(6, 4, dtype=torch.float64)
O_ = P @ V_
dO = torch.randn(3, 4, dtype=torch.float64)
dP = dO @ V_.T
row_sum = (dP * P).sum(dim=-1)


def my_row_sum(dO, O):
    """rowsum(dP * P) from dO and O alone: your derivation."""
    ### BEGIN WORKED
    return (dO * O).sum(dim=-1)
    ### LEARNER
    return torch.zeros(dO.shape[:-1], dtype=dO.dtype)  # replace with yours
    ### END WORKED


report("against rowsum(dP * P)", lambda: (my_row_sum(dO, O_) - row_sum).abs().max().item(),
       1e-12)

# %% [markdown]
# ## ✎ Exercise 2 · `MemoryEfficientAttention`
#
# Write `MemoryEfficientAttention`, called as Exercise 1's Function is, which keeps one number
# per query row instead of $P$ and rebuilds $P$ in backward, as you derived. The contract,
# which the self-check and the hidden tests check:
#
# - Every bullet of Exercise 1's contract.
# - Forward keeps only $Q$, $K$, $V$, the mask as given (or `None`; a view of it, such as
#   `mask.expand`, is fine), the output $O$ and the log-sum-exp $L$ of shape $(\dots, N_q)$ or
#   $(\dots, N_q, 1)$ (or a row maximum and a row sum, shaped alike: at most two numbers per
#   query row), in the inputs' dtype or wider: **no $N_q \times N_k$ tensor kept between forward and backward**, in `ctx` or
#   anywhere else, no new mask tensor, no copy of an input or of $O$.
# - Backward recomputes $P$, masked as in forward, from the saved $L$: no second softmax, no
#   second pass for each row's maximum or sum.
# - $L$ right at any magnitude of score (the table under Exercise 1).
#
# How does the mask reach backward, and does that way still work when it is `None`? (Tensors
# on `ctx` as attributes escape the in-place version check and saved-tensor hooks, lessons 00
# and 01.)

# %% nbgrader={"grade_id": "answer_MemoryEfficientAttention", "solution": true}
class MemoryEfficientAttention(torch.autograd.Function):
    """Attention that keeps one log-sum-exp per query row instead of the probabilities."""

    @staticmethod
    def forward(ctx, Q, K, V, scale, mask=None):
        ### BEGIN SOLUTION
        scores = (Q @ K.transpose(-2, -1)) * scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        row_max = scores.amax(dim=-1, keepdim=True)
        lse = row_max + (scores - row_max).exp().sum(dim=-1, keepdim=True).log()
        output = (scores - lse).exp() @ V  # P = exp(S - lse), used and dropped
        ctx.save_for_backward(Q, K, V, output, lse.squeeze(-1), mask)
        ctx.scale = scale
        return output
        ### END SOLUTION

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        Q, K, V, output, lse, mask = ctx.saved_tensors
        scores = (Q @ K.transpose(-2, -1)) * ctx.scale
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        P = (scores - lse.unsqueeze(-1)).exp()  # the probabilities, recomputed
        grad_V = P.transpose(-2, -1) @ grad_output
        grad_P = grad_output @ V.transpose(-2, -1)
        row_sum = (grad_output * output).sum(dim=-1, keepdim=True)  # = rowsum(dP * P)
        grad_S = P * (grad_P - row_sum)
        grad_Q = ctx.scale * grad_S @ K
        grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
        return grad_Q, grad_K, grad_V, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "MemoryEfficientAttention", "grade": true, "points": 2}
self_check("MemoryEfficientAttention", MemoryEfficientAttention)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MemoryEfficientAttention", MemoryEfficientAttention)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $P_{ij} = e^{S_{ij} - L_i}$ with the **log-sum-exp**
# $L_i = m_i + \log \sum_j e^{S_{ij} - m_i}$. Subtracting $m_i$ keeps every exponent
# $\le 0$, so nothing overflows; $\log\sum_k e^{S_{ik}}$ taken literally overflows float32 once
# a score passes about 88.
#
# $$\operatorname{rowsum}(dP \odot P)_i = \sum_j P_{ij} \sum_c dO_{ic} V_{jc}
#   = \sum_c dO_{ic} \sum_j P_{ij} V_{jc} = \sum_c dO_{ic}\, O_{ic}
#   = \operatorname{rowsum}(dO \odot O)_i .$$
#
# It matters because $dO$ and $O$ are whole rows of size $d_v$,
# while the left side needs every key of the row at once: a tiled backward that sees one block
# of keys cannot compute it, and FlashAttention's backward calls it $D$ and computes it first.
# </details>

# %% [markdown]
# ## Kept and peak
#
# Exercise 2 keeps $O(N)$ numbers per head between the passes. What decides whether a
# sequence fits, though, is the **peak** of live bytes while each pass runs: what is kept, plus
# everything the pass creates and has not yet let go. `autograder.memory.TensorAccounting` is
# a dispatch mode that sees every tensor an op creates and adds up those still alive.
#
# **Predict, then run.** For one call at $N = 1024$, is the **peak of the step** (the larger
# of forward's peak and, during backward, what forward kept plus what backward creates) lower
# for `MemoryEfficientAttention` than for `ScaledDotProductAttention`, the same, or higher?
# List the $N_q \times N_k$ tensors each of your forwards and backwards creates, and which are
# alive at the same moment, before you answer.

# %%
### BEGIN WORKED
my_peak_prediction = "higher"
### LEARNER
my_peak_prediction = None  # "lower", "same" or "higher"
### END WORKED


# %%
def peak_bytes(attention, N, d=64):
    """Peak bytes of live tensors: forward's, backward's, what is kept, and the step's."""
    Q, K, V = (torch.randn(1, N, d, requires_grad=True) for _ in range(3))
    grad_output = torch.randn(1, N, d)
    with TensorAccounting() as books:
        books.start("forward")
        output = attention(Q, K, V, d ** -0.5)
        books.start("backward")
        kept = books.now  # what forward keeps for backward (and the output)
        output.backward(grad_output)
    forward, backward = books.phases["forward"].peak, books.phases["backward"].peak
    return forward, backward, kept, max(forward, kept + backward)


MiB = 2**20
if not withheld(my_peak_prediction):
    for name, f in [("ScaledDotProductAttention", ScaledDotProductAttention.apply),
                    ("MemoryEfficientAttention", MemoryEfficientAttention.apply)]:
        forward_peak, backward_peak, kept, step_peak = peak_bytes(f, 1024)
        print(f"{name:<26} N = 1024: forward {forward_peak / MiB:5.2f} MiB, kept "
              f"{kept / MiB:5.2f}, backward {backward_peak / MiB:5.2f} on top, "
              f"step {step_peak / MiB:5.2f}")
    print("you predicted:", my_peak_prediction)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# It depends on how backward rebuilds $P$; written the straightforward way, as in the
# solution, it is **higher** (on torch 2.13: a step peak of 21.0 MiB against 17.0).
# `ScaledDotProductAttention` keeps $P$ (4 MiB) alive through its whole backward, on top
# of the $dP$ and $dS$ it builds. `MemoryEfficientAttention` keeps almost nothing, but
# each out-of-place step of its recomputation (the scores, their scaling, $S - L$, the
# exponential, then $dP$, $dP - D$, $dS$) makes a new $N_q \times N_k$ tensor, and
# several are alive at once: more than the saved $P$ it replaced.
#
# So for one call, keeping $L$ lowers the peak only when your passes hold fewer
# $N_q \times N_k$ tensors at once than `ScaledDotProductAttention` does: its saved $P$ plus
# what its backward builds. Count them; don't assume. (A version written to hold fewer is
# described in the **In practice** block at the end of the lesson.)
# </details>
#
# A model is not one call: in a stack of layers every layer's saved tensors are alive at once
# when backward begins, and there the log-sum-exp pays however backward is written (the
# optional **More measurements** at the end counts 12 layers). What is left is one layer's
# $N_q \times N_k$ working memory in backward (and in forward). To remove that too, the
# $N_q \times N_k$ matrices must never exist. That is FlashAttention.

# %% [markdown]
# ## Derive: the online softmax
#
# Split the keys into blocks of $B$. For one query row, can you compute its output while
# seeing the scores **one block at a time**, keeping only a few numbers between blocks?
#
# Suppose you have processed the first blocks and kept, for this row, the maximum $m$ of the
# scores seen so far, the running sum $\ell = \sum_{j \text{ seen}} e^{S_j - m}$, and the
# unnormalised output $o = \sum_{j \text{ seen}} e^{S_j - m}\, v_j$. A new block of scores
# $S'$ with values $v'$ arrives.
#
# 1. What is the new maximum $m_{\text{new}}$?
# 2. $\ell$ was summed against the old $m$. By what factor must it be multiplied to be a sum
#    against $m_{\text{new}}$? Then what is the new $\ell$?
# 3. The same question for $o$. What happens if you forget to rescale $o$, and in which case
#    does that mistake go unnoticed?
# 4. After the last block, how do you get the output row, and the log-sum-exp $L$ that
#    backward needs?
# 5. Before the first block nothing has been seen. What must $m$, $\ell$ and $o$ be then, so
#    that your update of question 2 is right for the first block too, however low that row's
#    scores lie?
#
# Write your update in `combine`, your answer to question 4 in `finish` and your answer to
# question 5 in `start`, then run the check: it processes a row of 12 scores in blocks of 4,
# and the same row moved 1000 down (softmax does not change), and compares your output rows
# and $L$ with those of the whole row. The placeholder `combine` adds each block as if nothing
# had been seen before: against its own maximum, with nothing rescaled; the placeholder
# `finish` returns $o$ and $m$ as they are; the placeholder `start` starts everything at 0.

# %%
row = torch.randn(12, dtype=torch.float64) * 3
values = torch.randn(12, 2, dtype=torch.float64)


def combine(m, ell, o, s_new, v_new):
    """One step of the online softmax: your derivation. Returns the new (m, ell, o)."""
    ### BEGIN WORKED
    m_new = torch.maximum(m, s_new.max())
    alpha = torch.exp(m - m_new)  # rescales what was summed against the old m
    p = torch.exp(s_new - m_new)
    return m_new, alpha * ell + p.sum(), alpha * o + p @ v_new
    ### LEARNER
    m_new = s_new.max()  # the placeholder: this block's own maximum, nothing rescaled
    p = torch.exp(s_new - m_new)
    return m_new, ell + p.sum(), o + p @ v_new  # replace with yours
    ### END WORKED


def finish(m, ell, o):
    """After the last block: the output row and the log-sum-exp L (question 4)."""
    ### BEGIN WORKED
    return o / ell, m + torch.log(torch.as_tensor(ell))
    ### LEARNER
    return o, m  # the placeholder: replace with yours
    ### END WORKED


def start():
    """(m, ell, o) before the first block, for this check's float64 rows (question 5)."""
    ### BEGIN WORKED
    return (torch.tensor(float("-inf"), dtype=torch.float64), 0.0,
            torch.zeros(2, dtype=torch.float64))
    ### LEARNER
    return (torch.tensor(0.0, dtype=torch.float64), 0.0,
            torch.zeros(2, dtype=torch.float64))  # the placeholder: replace with yours
    ### END WORKED


def error_online():
    """Your start, combine over the row's three blocks and finish, against the whole row;
    and the same for the row moved 1000 down."""
    errors = []
    for scores in (row, row - 1000):
        m, ell, o = start()
        for first in range(0, 12, 4):
            m, ell, o = combine(m, ell, o, scores[first:first + 4], values[first:first + 4])
        output, lse = finish(m, ell, o)
        errors += [(output - torch.softmax(scores, dim=0) @ values).abs().max().item(),
                   (torch.as_tensor(lse) - torch.logsumexp(scores, 0)).abs().item()]
    return torch.tensor(errors).max().item()  # nan (a start that leaves 0 / 0) fails


report("output and L, block by block", error_online, 1e-12)

# %% [markdown]
# A mask can fill a whole block of some row with $-\infty$ (the optional **A block in which a
# row sees no key** at the end runs it through your `combine`).
#
# A question for Exercise 3, whose causal mask is bottom-right with $N_q \le N_k$: which keys
# does every query see, whatever its position? In which order must you visit the key blocks,
# then, for no row's first tile to be all $-\infty$, and which start of $m$ makes the order
# not matter? And a diagonal tile later on may hide every key of some row: is that harmful
# once $m$ is finite?

# %% [markdown]
# ## Step: the tiled forward, on its own
#
# Before the full Exercise 3, put the online softmax into a loop over tiles, forward only.
# Write `tiled_forward(Q, K, V, scale, block)` for inputs of shape $(\dots, N, d)$, no mask:
#
# - an outer loop over query blocks $Q_i$ of at most `block` rows; for each, a running
#   maximum $m$, sum $\ell$ and output $o$ per query row, started as your `start` starts
#   them (now one per row, in `Q`'s dtype);
# - an inner loop over key blocks $K_j, V_j$: the tile of scores $\tau Q_i K_j^\top$, then
#   your `combine` step, now for a whole block of rows at once (where a per-row number
#   meets a tile, which dimension must it gain?);
# - after the inner loop, what your `finish` does, for the whole block of rows at once: the
#   block's rows of $O$ and of the log-sum-exp $L$.
#
# The check below compares $O$ and $L$ with the whole-matrix computation and looks at every
# tensor your function created. The placeholder computes the whole score matrix at once:
# right values, but an $N \times N$ tensor. Yours should create nothing bigger than a
# `block x block` tile per batch element (or a `block x d` piece of $O$). A copy of a whole
# input, such as a contiguous $K^\top$, is no tile but is allowed too; a block of query rows
# against every key, `block x N`, is not.

# %%
def tiled_forward(Q, K, V, scale, block):
    """O and the log-sum-exp L, tile by tile: your online softmax inside two loops."""
    ### BEGIN WORKED
    O, L = Q.new_empty(*Q.shape[:-1], V.shape[-1]), Q.new_empty(Q.shape[:-1])
    for i in range(0, Q.shape[-2], block):
        q = Q[..., i:i + block, :]
        m = torch.full(q.shape[:-1], float("-inf"), dtype=Q.dtype)
        ell = torch.zeros_like(m)
        o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=Q.dtype)
        for j in range(0, K.shape[-2], block):
            s = (q @ K[..., j:j + block, :].transpose(-2, -1)) * scale
            m_new = torch.maximum(m, s.amax(dim=-1))
            alpha = torch.exp(m - m_new)  # one per row: unsqueeze(-1) where it meets a tile
            p = torch.exp(s - m_new.unsqueeze(-1))
            ell = alpha * ell + p.sum(dim=-1)
            o = alpha.unsqueeze(-1) * o + p @ V[..., j:j + block, :]
            m = m_new
        O[..., i:i + block, :] = o / ell.unsqueeze(-1)
        L[..., i:i + block] = m + ell.log()
    return O, L
    ### LEARNER
    scores = (Q @ K.transpose(-2, -1)) * scale  # the placeholder: the whole N x N matrix
    lse = torch.logsumexp(scores, dim=-1)
    return torch.exp(scores - lse.unsqueeze(-1)) @ V, lse
    ### END WORKED


def check_tiled_forward():
    """Your tiled_forward on 2 sequences of 40 queries and keys, d = 16, in blocks of 8."""
    Q, K, V = (torch.randn(2, 40, 16, dtype=torch.float64) for _ in range(3))
    scores = (Q @ K.transpose(-2, -1)) * 16 ** -0.5
    try:
        with TensorAccounting() as books:
            O, L = tiled_forward(Q, K, V, 16 ** -0.5, block=8)
        errors = [(O - torch.softmax(scores, -1) @ V).abs().max().item(),
                  (L - torch.logsumexp(scores, -1)).abs().max().item()]
    except Exception as error:  # an error in your function, shown in one line
        first_line = str(error).partition("\n")[0]
        print(f"✗ tiled_forward raised {type(error).__name__}: {first_line}")
        return
    print("✓" if max(errors) < 1e-12 else "✗", "O and L against the whole-matrix computation:",
          f"largest errors {errors[0]:.2g} and {errors[1]:.2g}")
    inputs = {tuple(sorted(Q.shape))}  # a copy of a whole input, in any order of dimensions
    too_big = [shape for shape in books.phase.shapes
               if shape not in {tuple(O.shape), tuple(L.shape)}
               and math.prod(shape) > 2 * 8 * 16 and tuple(sorted(shape)) not in inputs]
    if not too_big:
        print("✓ nothing created beyond a tile (2, 8, 8), a block of O's rows (2, 8, 16) "
              "and copies of whole inputs")
        return
    shape = max(too_big, key=math.prod)
    what = {(40, 40): "the whole score matrix", (8, 40): "a block of queries against every key",
            (40, 8): "every query against one block of keys"}.get(shape[-2:], "no tile")
    print(f"✗ created {shape}, {math.prod(shape)} elements: {what}; a tile for 2 batch "
          f"elements is (2, 8, 8), 128 elements")


check_tiled_forward()

# %% [markdown]
# ## Derive: the backward by tiles
#
# Forward saves $Q, K, V, O$ and $L$ (one number per query row, float32 or wider: float64 for
# float64 inputs). In backward, for a tile of query block $i$ and key block $j$:
#
# 1. How do you get the tile $P_{ij}$ back without any row statistic but $L_i$?
# 2. Your softmax VJP needs $\operatorname{rowsum}(dP \odot P)$ for each query row: a sum over
#    **all** keys. Which identity from Exercise 2 gives it before the loop starts, so that each
#    tile needs only its own $dP_{ij}$? What goes wrong if you use
#    $\operatorname{rowsum}(dP_{ij} \odot P_{ij})$ of the tile instead?
# 3. Tile $(i, j)$ adds something to each of $dQ$, $dK$ and $dV$: to which block of each, and
#    which other tiles add to that same block?
# 4. FlashAttention-2 puts the key blocks in the **outer** loop. What does that let you keep
#    in a small accumulator until the inner loop is done, and what must be added into a
#    full-size buffer instead?
#
# <details><summary>Hint: where questions 1 and 2 were answered already</summary>
#
# Question 1 is your `lse` check above, restricted to the rows of block $i$ and the keys of
# block $j$. Question 2 is your `my_row_sum`: which of its arguments does a tile need, and
# which does the whole backward already have before its first tile? A tile's own row sum
# leaves out the other key blocks' terms: with one key block it is right, with two it is not,
# and Exercise 3's self-check uses several.
# </details>
#
# Write one tile's share in `tile_backward` and run the check: it cuts a problem of 16 queries
# and 16 keys into 2 x 2 tiles of 8, adds each tile's contributions where they belong (your
# answer to question 3 decides what `tile_backward` returns), and compares with autograd. $L$
# comes from `torch.logsumexp` and $D$ from your `my_row_sum`. The placeholder contributes
# nothing.

# %%
def tile_backward(q, k, v, do, L, D, scale):
    """What tile (i, j) adds to the gradients of Q, K and V, in that order, from the query
    block's rows q, do, L, D and the key block's rows k, v: your derivation."""
    ### BEGIN WORKED
    p = torch.exp((q @ k.transpose(-2, -1)) * scale - L.unsqueeze(-1))
    ds = p * (do @ v.transpose(-2, -1) - D.unsqueeze(-1))
    return scale * ds @ k, scale * ds.transpose(-2, -1) @ q, p.transpose(-2, -1) @ do
    ### LEARNER
    return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)  # replace with yours
    ### END WORKED


def error_by_tiles():
    """Your tiles' contributions, each added where it belongs, against autograd."""
    errors = tile_errors(tile_backward, my_row_sum)
    print("largest errors of dQ, dK, dV:", ", ".join(f"{error:.2g}" for error in errors))
    return max(errors)


if row_sum_is_right(my_row_sum):  # D is built from it: a ✗ below is then tile_backward's
    report("dQ, dK and dV by tiles against autograd", error_by_tiles, 1e-12)
else:
    print("✗ your my_row_sum (Derive: one number per query row) is not right yet: D is built "
          "from it")

# %% [markdown]
# **Causal.** With `causal=True`, query $i$ sees keys $j \le i + (N_k - N_q)$: bottom-right
# alignment, as in `causal_lower_right`, not `is_causal`'s top-left. Before Exercise 3, answer
# on paper: for a tile of query rows $i_0..i_1$ and keys $j_0..j_1$, which query decides
# whether the tile holds a single visible key, and what inequality between $j_0$ and that
# query's last visible key makes the whole tile zero in $P$? Which tiles then need no work at
# all, in forward and in backward, and which still need a mask inside? For $N_q = N_k$, about
# what fraction of the work is that?
#
# **Low precision.** For float16 or bfloat16 inputs, compute the tile of scores and its
# exponentials in float32, accumulate $m$, $\ell$, $o$, $dQ$, $dK$, $dV$ in float32, and cast
# the results back to the input dtype (the kernels round $P$ to the input dtype for the
# product $P V$ on tensor cores; its sum, $o$, stays float32). Keep $L$ in float32 (or
# wider) too: every probability of a row is $e^{S - L}$, so an error in $L$ is the same
# relative error in all of them (the optional "More measurements" puts numbers on it). $Q$,
# $K$, $V$ and $O$ need no such care: backward widens their tiles as forward does, while a
# float32 copy of them, kept until backward, is new memory twice their size.

# %% [markdown]
# ## ✎ Exercise 3 · `FlashAttention`
#
# Write `FlashAttention.apply(Q, K, V, scale, causal=False)`: the same shapes as before, no
# mask argument; `causal` is a Python bool (bottom-right: query $i$ sees keys
# $j \le i + N_k - N_q$; causal calls always have $N_q \le N_k$, so every query sees at least
# key 0); `BLOCK` is a class attribute, 64 by default. The contract, which the self-check and
# the hidden tests check:
#
# - **Forward** loops over query and key blocks of at most `FlashAttention.BLOCK` rows with your
#   online softmax, creating no tensor of more than `BLOCK x BLOCK` elements per batch-head
#   besides the inputs, the outputs, the per-row statistics and pieces of them of at most
#   `BLOCK` rows (a `BLOCK x d` block of $Q$ or $O$; a `BLOCK x Lk` row block of scores is too
#   big).
# - Forward saves $Q$, $K$, $V$ and the $O$ it returns themselves, no copy of them in any dtype
#   (for float16/bfloat16 inputs, no float32 copy either), and $L$, one number per query row in
#   float32 or wider (float64 for float64 inputs): nothing else.
# - **Backward** recomputes each tile from $L$, with $D$ from your `my_row_sum`, by hand,
#   marked `@once_differentiable`; return `None` for `scale` and `causal`.
# - Under `causal`, skip the tiles entirely above the diagonal, in both passes (a backward in
#   two passes may compute a needed tile twice: that is fine).
# - Scores of any magnitude softmax handles (the table under Exercise 1).
# - float16/bfloat16 inputs: the tile of scores, its exponentials and every accumulator in
#   float32 ($P$ may be rounded to the input dtype for $P V$); return the input dtype.
# - Read the block size as `FlashAttention.BLOCK`: the checks set it from 2 to 16, and measure
#   the largest tensor you create and the peak of live tensors, forward and backward, with
#   `TensorAccounting`.
#
# Python loops over tiles are slow next to a fused kernel; that is fine here. What you build is
# the algorithm a Triton or CUDA kernel runs, with each tile in fast on-chip memory.

# %% nbgrader={"grade_id": "answer_FlashAttention", "solution": true}
class FlashAttention(torch.autograd.Function):
    """Attention by tiles: online softmax forward, FlashAttention-2 backward."""

    BLOCK = 64

    @staticmethod
    def forward(ctx, Q, K, V, scale, causal=False):
        ### BEGIN SOLUTION
        block, Lq, Lk = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2]
        wide = torch.promote_types(Q.dtype, torch.float32)  # accumulate in float32 or wider
        O = Q.new_empty(*Q.shape[:-1], V.shape[-1])
        L = torch.empty(Q.shape[:-1], dtype=wide, device=Q.device)
        for i in range(0, Lq, block):
            q = Q[..., i:i + block, :].to(wide)
            m = torch.full(q.shape[:-1], float("-inf"), dtype=wide, device=Q.device)
            ell = torch.zeros_like(m)
            o = torch.zeros(*q.shape[:-1], V.shape[-1], dtype=wide, device=Q.device)
            # keys this query block may see: all, or up to its last query's i + Lk - Lq
            end = min(Lk, i + q.shape[-2] + Lk - Lq) if causal else Lk
            for j in range(0, end, block):
                k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :].to(wide)
                s = (q @ k.transpose(-2, -1)) * scale
                if causal:
                    query = torch.arange(i, i + q.shape[-2], device=Q.device)
                    key = torch.arange(j, j + k.shape[-2], device=Q.device)
                    s = s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))
                m_new = torch.maximum(m, s.amax(dim=-1))
                alpha = torch.exp(m - m_new)  # rescales what was summed against m
                p = torch.exp(s - m_new.unsqueeze(-1))
                ell = alpha * ell + p.sum(dim=-1)
                o = alpha.unsqueeze(-1) * o + p @ v
                m = m_new
            O[..., i:i + block, :] = o / ell.unsqueeze(-1)
            L[..., i:i + block] = m + ell.log()
        ctx.save_for_backward(Q, K, V, O, L)
        ctx.scale, ctx.causal = scale, causal
        return O
        ### END SOLUTION

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        Q, K, V, O, L = ctx.saved_tensors
        block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype
        D = (grad_output.to(wide) * O.to(wide)).sum(dim=-1)  # = rowsum(dP * P), whole rows
        grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device)
        grad_K, grad_V = torch.empty_like(K), torch.empty_like(V)
        for j in range(0, Lk, block):
            k, v = K[..., j:j + block, :].to(wide), V[..., j:j + block, :].to(wide)
            dk, dv = torch.zeros_like(k), torch.zeros_like(v)
            # the first query block with a query that sees key j (i + Lk - Lq >= j)
            first = max(0, j - (Lk - Lq)) // block * block if ctx.causal else 0
            for i in range(first, Lq, block):
                q = Q[..., i:i + block, :].to(wide)
                do = grad_output[..., i:i + block, :].to(wide)
                s = (q @ k.transpose(-2, -1)) * ctx.scale
                if ctx.causal:
                    query = torch.arange(i, i + q.shape[-2], device=Q.device)
                    key = torch.arange(j, j + k.shape[-2], device=Q.device)
                    s = s.masked_fill(key > query[:, None] + (Lk - Lq), float("-inf"))
                p = torch.exp(s - L[..., i:i + block, None])  # P recomputed from L
                dv += p.transpose(-2, -1) @ do
                ds = p * (do @ v.transpose(-2, -1) - D[..., i:i + block, None])
                grad_Q[..., i:i + block, :] += ctx.scale * ds @ k
                dk += ctx.scale * ds.transpose(-2, -1) @ q
            grad_K[..., j:j + block, :] = dk
            grad_V[..., j:j + block, :] = dv
        return grad_Q.to(Q.dtype), grad_K, grad_V, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "FlashAttention", "grade": true, "points": 5}
self_check("FlashAttention", FlashAttention)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("FlashAttention", FlashAttention)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green: the running update</summary>
#
# $m_{\text{new}} = \max(m, \max_j S'_j)$. Everything summed against the old $m$ is multiplied
# by $\alpha = e^{m - m_{\text{new}}} \le 1$, because $e^{S_j - m}\,e^{m - m_{\text{new}}} =
# e^{S_j - m_{\text{new}}}$:
#
# $$\ell \leftarrow \alpha\,\ell + \sum_j e^{S'_j - m_{\text{new}}}, \qquad
#   o \leftarrow \alpha\, o + \sum_j e^{S'_j - m_{\text{new}}}\, v'_j, \qquad
#   m \leftarrow m_{\text{new}} .$$
#
# At the end, the output row is $o / \ell$ and $L = m + \log \ell$. Forgetting to rescale $o$
# goes unnoticed exactly when no later block raises the maximum ($\alpha = 1$ every time):
# a test whose rows have their maximum in the first block passes. Exponentiating a block
# against its own maximum $\tilde m = \max_j S'_j$ is not wrong in itself: the FlashAttention-1
# paper does exactly that, and then multiplies the block's sums by a second correction
# factor, $e^{\tilde m - m_{\text{new}}}$, before adding them. Leaving out that factor (or
# exponentiating against the old $m$) is the other classic mistake: the pieces of $\ell$ and
# $o$ are then measured against different maxima. The first step is safe with
# $m = -\infty$: $\alpha = e^{-\infty} = 0$ multiplies the zeros you started with. A finite
# start such as $0$ is not the row's maximum: a float32 row whose scores all lie near $-160$
# gets $e^{S_j - 0} = 0$ for every key, so $\ell = 0$ and the output is $0/0$, and so does any
# start the table's low rows lie far below. `torch.finfo(dtype).min` of the dtype you
# accumulate in works as $-\infty$ does.
# </details>
#
# <details><summary><b>Compare with yours</b>, after your self-check is green: forward by tiles</summary>
#
# For each query block $Q_i$ (rows $i_0..i_0{+}B{-}1$): start $m = -\infty$, $\ell = 0$,
# $o = 0$, one per row; for each key block $j$, the tile $S_{ij} = \tau\,Q_i K_j^\top$ of shape
# $(\dots, B, B)$, then the update of `combine` with a per-row maximum,
#
# $$m' = \max\big(m, \max_k (S_{ij})_{\cdot k}\big),\quad
#   \ell \leftarrow e^{m - m'}\ell + \textstyle\sum_k e^{(S_{ij})_{\cdot k} - m'},\quad
#   o \leftarrow e^{m - m'}\,o + e^{S_{ij} - m'}\,V_j,\quad m \leftarrow m' ;$$
#
# after the last key block, rows $i_0..i_0{+}B{-}1$ of $O$ are $o/\ell$ and those of $L$ are
# $m + \log\ell$. What the check counts: the outputs $O$, `(2, 40, 16)`, and $L$, `(2, 40)`,
# are the largest tensors, and they are allowed (Exercise 3's contract says "beyond the inputs,
# outputs and per-row statistics"); besides them, a tile of scores and its exponentials are
# `(2, 8, 8)`, 128 elements, and a block of the running output is `(2, 8, 16)`, 256, where the
# full scores would be 3,200. Exercise 3 adds a causal mask, low-precision inputs, and the
# backward.
# </details>
#
# <details><summary><b>Compare with yours</b>, after your self-check is green: backward by tiles</summary>
#
# Each tile gives
#
# $$dV_j \mathrel{+}= P_{ij}^\top dO_i,\quad dP_{ij} = dO_i V_j^\top,\quad
#   dS_{ij} = P_{ij} \odot (dP_{ij} - D_i),\quad
#   dQ_i \mathrel{+}= \tau\, dS_{ij} K_j,\quad dK_j \mathrel{+}= \tau\, dS_{ij}^\top Q_i .$$
#
# With key blocks outside, $dK_j$ and $dV_j$ stay in block-sized accumulators for the whole
# inner loop and are written once; $dQ_i$ gets a contribution from every key block, so it is
# added into a full-size $dQ$.
#
# Either order is correct here: what Exercise 3 checks is what the contract says (values,
# gradients, the largest tensor, the peak, no tile entirely above the causal diagonal), not
# which order you picked. Why FlashAttention-2 picks keys outside is in **In practice**.
# </details>

# %% [markdown]
# ## ✎ Exercise 4 · `AttentionWithBias` (transfer)
#
# Real attention layers rarely stop at a boolean mask: T5 and Swin add a learned
# relative-position bias to the scores, ALiBi adds $-$slope $\times$ distance per head, and
# padding is often a float bias of $0$ and $-\infty$. Write `AttentionWithBias`, with
# `AttentionWithBias.apply(Q, K, V, bias, scale)` returning
#
# $$O = \operatorname{softmax}_{\text{row}}\big(\tau\, Q K^\top + B\big)\, V$$
#
# for `Q (..., Lq, d)`, `K (..., Lk, d)`, `V (..., Lk, dv)`, a Python-float `scale` $\tau$, and
# `bias` $B$ a float tensor **broadcastable** to `(..., Lq, Lk)`: `(Lq, Lk)`, `(H, 1, Lk)`,
# `(B, H, Lq, Lk)`, `(Lk,)`, with $-\infty$ entries where a key is padding (every query keeps at
# least one finite key). `bias` may require grad. The contract, which the self-check and the
# hidden tests check:
#
# - Gradients for `Q`, `K`, `V` and `bias`, **each only when it is needed**: how does
#   backward know which ones were asked for? And `None` for `scale`. Ask the same of what you build on the
#   way: when only `V` needs a gradient, does backward need $dP$ at all? The checks accept the
#   extra product, but it is an $N_q \times N_k$ tensor built for nothing.
# - `backward` itself returns the bias gradient with exactly `bias.shape`. (Autograd's engine
#   would quietly accept one of the scores' shape; the checks look at what your backward
#   returns.)
# - No built-in softmax backward: no autograd inside `backward`, no `_softmax_backward_data`.
#
# Nothing in this lesson derives the bias gradient: that is the exercise. The hints are
# collapsed; open them one at a time, only if you are stuck.
#
# <details><summary>Hint 1: what is new?</summary>
#
# Call the biased scores $S' = \tau\,QK^\top + B$. Which part of your Exercise 1 backward
# does not care how $S'$ was made? Starting from there, which steps change for $Q$ and $K$,
# and which step is new?
# </details>
#
# <details><summary>Hint 2: nudge one entry</summary>
#
# Take first a bias of the scores' own shape, and add $\varepsilon$ to one entry: which
# scores move, and by how much? Now take a bias of shape $(H, 1, N_k)$ and nudge one entry
# again: which scores move this time? What does that make its gradient, and how do you get
# there from a tensor of the scores' shape?
# </details>
#
# <details><summary>Hint 3: padding with $-\infty$</summary>
#
# Where $B_{ij} = -\infty$, $P_{ij} = 0$. What does your formula for $dS$ give there, and so
# what gradient does a padding entry of the bias receive?
# </details>
#
# <details><summary>Hint 4: numbers to hit</summary>
#
# With `Q = [[1, 0], [0, 1]]`, `K = [[1, 0], [0, 1], [1, 1]]`, `V = [[1], [2], [3]]`, scale 1,
# a zero bias and `grad_output = [[1], [-1]]` (float64), your bias gradient should be, for a
# bias of shape $(2, 3)$, the rows $(-0.4223, 0, 0.4223)$ and $(0.1968, 0.1127, -0.3096)$;
# for a bias of shape $(3,)$, $(-0.2255, 0.1127, 0.1127)$; for a bias of shape $(2, 1)$, zeros
# (to rounding). If the last one is not zero, ask again what a number added to a whole row
# does to a softmax.
# </details>

# %% nbgrader={"grade_id": "answer_AttentionWithBias", "solution": true}
class AttentionWithBias(torch.autograd.Function):
    """softmax(Q K^T * scale + bias) V for a bias broadcastable to the scores, which may
    require grad; every gradient only when needed, the bias's of exactly bias.shape."""

    @staticmethod
    def forward(ctx, Q, K, V, bias, scale):
        ### BEGIN SOLUTION
        P = torch.softmax((Q @ K.transpose(-2, -1)) * scale + bias, dim=-1)
        ctx.save_for_backward(Q, K, V, P)
        ctx.scale, ctx.bias_shape = scale, bias.shape
        return P @ V
        ### END SOLUTION

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        Q, K, V, P = ctx.saved_tensors
        need_Q, need_K, need_V, need_bias, _ = ctx.needs_input_grad
        grad_Q = grad_K = grad_V = grad_bias = None
        if need_V:
            grad_V = P.transpose(-2, -1) @ grad_output
        if need_Q or need_K or need_bias:
            grad_P = grad_output @ V.transpose(-2, -1)
            grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))  # dphi/dS'
            if need_Q:
                grad_Q = ctx.scale * grad_S @ K
            if need_K:
                grad_K = ctx.scale * grad_S.transpose(-2, -1) @ Q
            if need_bias:  # S' = scale * Q K^T + bias: dS' summed where bias was broadcast
                grad_bias = grad_S.sum_to_size(ctx.bias_shape)
        return grad_Q, grad_K, grad_V, grad_bias, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "AttentionWithBias", "grade": true, "points": 3}
self_check("AttentionWithBias", AttentionWithBias)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("AttentionWithBias", AttentionWithBias)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Everything from $dO$ to $dS'$ is Exercise 1's backward: the softmax does not care how its
# scores were made. $dQ$ and $dK$ carry $\tau$ as before, and the bias enters $S'$ with
# coefficient 1, so a bias of the scores' own shape gets $dS'$ itself. A broadcast bias entry
# moves every score it was copied to, so its gradient is the sum of $dS'$ over those scores:
#
# $$\frac{\partial\phi}{\partial B} = \sum_{\text{broadcast dimensions}} dS' ,$$
#
# summed over the leading dimensions the bias lacks and kept (size 1) where it has size 1.
# Where $B_{ij} = -\infty$, $P_{ij} = 0$ and so $dS'_{ij} = 0$: padding receives no gradient.
# A bias of shape $(N_q, 1)$ gets row sums of $dS'$, which are 0.
# </details>

# %% [markdown]
# ## Summary
#
# Attention's backward is three vector-Jacobian products in a row: two matrix products and a
# softmax whose Jacobian $\operatorname{diag}(p) - pp^\top$ turns into one line with a row sum.
# A boolean mask is not differentiated; it zeroes probabilities, and with them their
# gradients. One log-sum-exp per query row rebuilds $P$, and
# $\operatorname{rowsum}(dP \odot P) = \operatorname{rowsum}(dO \odot O)$ removes the last
# reason to see a whole row at once. Keeping $L$ instead of $P$ cuts what a stack of layers
# holds for backward; with the online softmax, forward and backward then run tile by tile,
# and the peak memory of attention grows like $N$ instead of $N^2$.

# %% [markdown]
# ## Optional: more to try (never graded)
#
# Everything from here on is off the main line: open what interests you, in any order, or
# skip to the end. No exercise needs these cells, and Run All runs them (each predict-then-run
# cell shows its answer only once your guess is written).
#
# - **Pictures** of the softmax Jacobian and of your Exercise 1's gradients, and your Function
#   against PyTorch's own attention on a multi-head batch.
# - **What `@once_differentiable` guards**, a predict-then-run on a second derivative, and
#   **what is kept, counted**: your Exercise 1 against the same attention in ordinary ops.
# - **Your bias gradient, drawn**, the online softmax **stepped block by block**, and **a
#   block in which a row sees no key**.
# - **More measurements**: a stack of 12 layers, how many layers before keeping $L$ pays, and
#   what a log-sum-exp kept in bfloat16 costs.
# - **Common mistakes**, per exercise, and **In practice**: timings, PyTorch's own kernels,
#   production notes, a leaner Exercise 2 to write and measure, a learned ALiBi slope, an
#   explorer of your Exercise 1.

# %% [markdown]
# ### Pictures
#
# The two pieces of $J$, side by side, for five scores as in "Derive the backward". The
# first guess $p \odot v$ keeps only the diagonal's $p_i$; the other popular mistake,
# $p(1-p) \odot v$ (softmax differentiated like a sigmoid), keeps the whole diagonal and still
# misses every off-diagonal entry.

# %%
s5 = torch.randn(5, dtype=torch.float64)
p5, v5 = torch.softmax(s5, dim=0), torch.randn(5, dtype=torch.float64)
J5 = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), s5)
fig, axes = plt.subplots(1, 3, figsize=(9, 2.8))
for ax, matrix, title in zip(axes, [J5, torch.diag(p5), -torch.outer(p5, p5)],
                             ["J", "diag(p)", "−p pᵀ (the row-sum term)"]):
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-0.3, vmax=0.3)
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()
for name, wrong in [("p * v", p5 * v5), ("p * (1 - p) * v", p5 * (1 - p5) * v5)]:
    print(f"{name:>16}: largest error {(wrong - J5.T @ v5).abs().max().item():.3f}")

# %% [markdown]
# Against PyTorch's own attention on a batch of 2 sequences with 4 heads, a bottom-right
# causal mask and $N_q \ne N_k$, in float32:

# %%
Q, K, V = torch.randn(2, 4, 6, 16), torch.randn(2, 4, 9, 16), torch.randn(2, 4, 9, 8)
mask = torch.ones(6, 9, dtype=torch.bool).tril(diagonal=3)
grad_O = torch.randn(2, 4, 6, 8)
results = {}
for name, attention in [
        ("ours", lambda q, k, v: ScaledDotProductAttention.apply(q, k, v, 0.25, mask)),
        ("torch", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                                 scale=0.25))]:
    q, k, v = (t.clone().requires_grad_() for t in (Q, K, V))
    output = attention(q, k, v)
    output.backward(grad_O)
    results[name] = [output.detach(), q.grad, k.grad, v.grad]
for label, ours, theirs in zip(["O", "dQ", "dK", "dV"], results["ours"], results["torch"]):
    print(f"{label:>2} matches F.scaled_dot_product_attention:",
          torch.allclose(ours, theirs, rtol=1e-4, atol=1e-5))

# %% [markdown]
# ### What `@once_differentiable` guards
#
# **Predict, then run.** Take your Function with its backward *without*
# `@once_differentiable`, and ask for a second derivative: the gradient, in $Q$, $K$ and $V$,
# of the first gradients against fixed directions (a Hessian-vector product, as a gradient
# penalty needs). Does it raise, come out right, or come out wrong without a word? And with the
# decorator?

# %%
### BEGIN WORKED
my_without_decorator = "wrong"
my_with_decorator = "raises"
### LEARNER
my_without_decorator = None  # "raises", "right" or "wrong"
my_with_decorator = None  # "raises", "right" or "wrong"
### END WORKED


# %%
class Undecorated(ScaledDotProductAttention):
    """Your Function, its backward without @once_differentiable."""
    backward = staticmethod(getattr(ScaledDotProductAttention.backward, "__wrapped__",
                                    ScaledDotProductAttention.backward))


def composed(Q, K, V, scale, mask):
    """The same attention in ordinary ops, which autograd differentiates twice."""
    scores = ((Q @ K.transpose(-2, -1)) * scale).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V


inputs2 = [torch.randn(1, 5, 4, dtype=torch.float64) for _ in range(3)]  # Q, K, V
directions = [torch.randn(1, 5, 4, dtype=torch.float64) for _ in range(3)]
mask2 = torch.ones(5, 5, dtype=torch.bool).tril()
grad_O2 = torch.randn(1, 5, 4, dtype=torch.float64)


def second_derivative(attention):
    """The gradient, in Q, K and V, of <first gradients, directions>."""
    leaves = [t.clone().requires_grad_() for t in inputs2]
    first = torch.autograd.grad(attention(*leaves, 0.5, mask2), leaves, grad_O2,
                                create_graph=True)
    inner = sum((g * d).sum() for g, d in zip(first, directions))
    return torch.cat([g.flatten() for g in torch.autograd.grad(inner, leaves)])


reference = second_derivative(composed)
if not withheld(my_without_decorator, my_with_decorator):
    for name, attention, guess in [
            ("without the decorator", Undecorated.apply, my_without_decorator),
            ("with it", ScaledDotProductAttention.apply, my_with_decorator)]:
        try:
            error = (second_derivative(attention) - reference).abs().max().item()
            print(f"{name}: largest error {error:.3g}", "  you predicted", guess)
        except NotImplementedError:  # your Function is not written yet
            raise
        except RuntimeError as raised:
            print(f"{name}: RuntimeError: {str(raised).splitlines()[0]}", "  you predicted", guess)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# If your forward saved $P$ (as most do): without the decorator, backward runs under
# `create_graph=True` and records its own ops, so the first gradients do have a history, but
# $P$ in it is a saved intermediate of forward, with no history of its own: autograd
# differentiates everything around it and treats $P$ as a constant. The numbers come out, and
# they are wrong. (A backward that recomputes $P$ from the saved $Q$ and $K$ with ordinary ops
# is twice differentiable and comes out right: lesson 04's first fix, as `SwishFunction`
# recomputes its sigmoid.) With the decorator, backward runs without recording, so its
# results have no history at all, and the second `grad` raises: here nothing else in `inner`
# requires grad. Were that term one part of a larger loss, say `torch.autograd.grad(inner +
# (Q ** 2).sum(), Q)`, nothing would raise: the other term carries the graph, and this
# Function's share is dropped without a word (through `.backward()` too, unless the
# `grad_output` reaching your backward has a history). The decorator guards only a second
# derivative that has no other path; lesson 04 shows how to make such a Function twice
# differentiable.
# </details>

# %% [markdown]
# ### What the gradients look like
#
# One head, ten tokens, causal mask, and a loss $\phi = \sum O \odot T$ for a random target $T$
# (so $dO = T$), differentiated by autograd through PyTorch's own ops, so that you can compare
# with your Function below. Left: the attention weights $P$. Middle: $dP$, the gradient with respect to the
# weights, which knows nothing about the mask. Right: $dS$, the gradient with respect to the
# scores. The mask zeroes it above the diagonal, and **each row of $dS$ sums to zero**: adding
# the same number to all the scores of a row does not change the softmax, so the loss cannot
# change in that direction. That makes a quick sanity check for any attention backward.

# %%
N, d = 10, 8
q, k, v, target = torch.randn(N, d), torch.randn(N, d), torch.randn(N, d), torch.randn(N, d)
causal = torch.ones(N, N, dtype=torch.bool).tril()
raw = ((q @ k.T) / math.sqrt(d)).requires_grad_()  # the scores, as a leaf: autograd fills .grad
weights = torch.softmax(raw.masked_fill(~causal, float("-inf")), dim=-1)
weights.retain_grad()  # keep dphi/dP too
(weights @ v * target).sum().backward()  # phi = sum(O * T), so dO = T
weights, grad_P, grad_S = weights.detach(), weights.grad, raw.grad
print("rows of dS sum to zero:", torch.allclose(grad_S.sum(-1), torch.zeros(N), atol=1e-6))

fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
for ax, matrix, title, cmap in [(axes[0], weights, "attention weights P", "viridis"),
                                (axes[1], grad_P, "dφ/dP", "RdBu_r"),
                                (axes[2], grad_S, "dφ/dS (masked, rows sum to 0)", "RdBu_r")]:
    limit = matrix.abs().max().item()
    image = ax.imshow(matrix, cmap=cmap, vmin=0 if cmap == "viridis" else -limit, vmax=limit)
    ax.set(title=title, xlabel="key", ylabel="query")
    fig.colorbar(image, ax=ax, shrink=0.8)
plt.tight_layout()
plt.show()

# %% [markdown]
# And the gradients your Function hands back for the same problem. Query $i$'s gradient
# $dQ_i = \tau\sum_j dS_{ij} K_j$ mixes only the keys it could see; key $j$'s gradients
# $dK_j = \tau\sum_i dS_{ij} Q_i$ and $dV_j = \sum_i P_{ij}\, dO_i$ collect only from the queries
# that could see it. The last key is seen by the last query alone, so its $dV$ is just
# $P_{N-1,N-1}\, dO_{N-1}$. And the first query sees only the first key: its weight is 1
# whatever its score, so its $dQ$ row is exactly zero.

# %%
q_, k_, v_ = (t.clone().requires_grad_() for t in (q, k, v))
ScaledDotProductAttention.apply(q_, k_, v_, 1 / math.sqrt(d), causal).backward(target)
fig, axes = plt.subplots(1, 3, figsize=(11, 3.0))
for ax, grad, title in zip(axes, [q_.grad, k_.grad, v_.grad], ["dQ", "dK", "dV"]):
    limit = grad.abs().max().item()
    image = ax.imshow(grad, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    ax.set(title=title, xlabel="feature", ylabel="token")
    fig.colorbar(image, ax=ax, shrink=0.8)
plt.tight_layout()
plt.show()
print("dV of the last key = P[-1, -1] * dO[-1]:",
      torch.allclose(v_.grad[-1], weights[-1, -1] * target[-1], atol=1e-6))
print("dQ of the first query is zero:", torch.allclose(q_.grad[0], torch.zeros(d), atol=1e-6))

# %% [markdown]
# ### What is kept, counted
#
# **Predict, then run.** With $N = 256$, $d = 32$, float32 and a causal mask, how many bytes
# does autograd keep besides the inputs when the same attention is written with ordinary ops
# (`composed_attention` below: count what each op's backward must read), and how many does
# your Function keep? Write both guesses in bytes before running on. (`kept_bytes`, from
# `autograder.memory`, counts them with saved-tensor hooks, each piece of memory once.)

# %%
### BEGIN WORKED
my_composed_bytes = 327_680  # P, and the inverted mask masked_fill keeps
my_function_bytes = 262_144  # P alone
### LEARNER
my_composed_bytes = None  # bytes autograd keeps for the composed ops
my_function_bytes = None  # bytes your ScaledDotProductAttention keeps
### END WORKED


# %%
def composed_attention(Q, K, V, scale, mask):
    """The same attention, left to autograd."""
    scores = (Q @ K.transpose(-2, -1)) * scale
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ V


Q, K, V = (torch.randn(1, 256, 32, requires_grad=True) for _ in range(3))  # N = 256, d = 32
causal_256 = torch.ones(256, 256, dtype=torch.bool).tril()
print(f"N = 256, d = 32, float32: P alone is {256 * 256 * 4:,} bytes")
kept = kept_bytes(composed_attention, Q, K, V, 0.2, causal_256)
if not withheld(my_composed_bytes, my_function_bytes):
    print(f"autograd through the composed ops keeps {kept:,} bytes besides the inputs "
          f"(you predicted {my_composed_bytes})")

# %%
kept = kept_bytes(ScaledDotProductAttention.apply, Q, K, V, 0.2, causal_256)
if not withheld(my_composed_bytes, my_function_bytes):
    print(f"ScaledDotProductAttention keeps         {kept:,} bytes besides the inputs "
          f"(you predicted {my_function_bytes})")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Autograd through the composed operations keeps the same $P$ (softmax saves its output, and
# `P @ V` needs it), plus the inverted mask `~mask` it computed on the way (one byte per
# entry). Your Function keeps exactly $P$. A hand-written backward saves memory only if you
# decide to keep something smaller: that is the next step.
# </details>

# %% [markdown]
# ### Your bias gradient, drawn
#
# What your Exercise 4 backward hands a learned bias. Left, a relative-position bias of shape
# $(N_q, N_k)$ shared by 2 batch elements and 4 heads, its last two keys padding ($-\infty$);
# right, the reference gradient from `F.scaled_dot_product_attention`, which takes the same
# float bias as its `attn_mask` and differentiates it. Two checks you can read off: the padding
# columns get exactly 0, and every row sums to 0 (adding one number to a whole row of the bias
# changes no softmax).

# %%
Qb, Kb, Vb = torch.randn(2, 4, 6, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 5)
bias_table = torch.randn(6, 7)
bias_table[:, -2:] = float("-inf")  # the last two keys are padding
grad_Ob = torch.randn(2, 4, 6, 5)
bias_grads = []
for attention in (AttentionWithBias.apply,
                  lambda q, k, v, b, t: F.scaled_dot_product_attention(q, k, v, attn_mask=b,
                                                                       scale=t)):
    leaf = bias_table.clone().requires_grad_()
    attention(Qb, Kb, Vb, leaf, 8 ** -0.5).backward(grad_Ob)
    bias_grads.append(leaf.grad)
fig, axes = plt.subplots(1, 2, figsize=(8, 2.8))
limit = bias_grads[1].abs().max().item()
for ax, grad, title in zip(axes, bias_grads, ["your grad_bias", "F.scaled_dot_product_attention"]):
    image = ax.imshow(grad, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set(title=title, xlabel="key", ylabel="query")
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()
print("same gradient:", torch.allclose(bias_grads[0], bias_grads[1], atol=1e-5),
      "  padding columns:", bias_grads[0][:, -2:].abs().max().item(),
      "  largest row sum:", bias_grads[0].sum(-1).abs().max().item())

# %% [markdown]
# ### Watch it converge
#
# One query row, 24 keys in blocks of 4. Step through the blocks: the running maximum jumps
# when a block holds a larger score, every earlier contribution shrinks by your `combine`'s
# factor $\alpha$, and the partial output $o/\ell$ moves towards the exact row (black ticks),
# which it reaches after the last block.

# %%
online_softmax_stepper(length=24, block=4, seed=3)

# %% [markdown]
# ### A block in which a row sees no key
#
# Masks put $-\infty$ into scores, and a block can hold nothing but $-\infty$ for some row: a
# padded sequence whose first keys are padding, or a causal mask visited from its last key
# block. **Predict, then run:** with your `combine`, what are $m$, $\ell$ and $o$ after a
# *first* block whose scores are all $-\infty$, and does the row's output survive the
# blocks after it?

# %%
### BEGIN WORKED
my_masked_first_block = "nan"
### LEARNER
my_masked_first_block = None  # "fine", "nan" or "inf": the output after all blocks
### END WORKED

# %%
masked = torch.cat([torch.full((4,), float("-inf"), dtype=torch.float64), row[4:]])
m, ell, o = start()
m, ell, o = combine(m, ell, o, masked[:4], values[:4])
if not withheld(my_masked_first_block):
    print("after the masked first block: m =", m.item(), " ell =", float(ell), " o =", o)
    for first in range(4, 12, 4):
        m, ell, o = combine(m, ell, o, masked[first:first + 4], values[first:first + 4])
    print("output after every block:", finish(m, ell, o)[0], "  you predicted",
          my_masked_first_block)
    print("the softmax of the whole row:", torch.softmax(masked, dim=0) @ values)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# With $m$ started at $-\infty$, $m_{\text{new}} = \max(-\infty, -\infty) = -\infty$, so your
# `combine`'s rescaling factor $\alpha$ is then $e^{-\infty + \infty} = e^{\text{nan}}$ and each
# $e^{S'_j - m_{\text{new}}}$ is nan too: the update poisons $\ell$ and $o$, and no later block
# can repair a nan. The exact answer ignores the masked keys and is perfectly finite. (A
# `start` at `torch.finfo(torch.float64).min`, which passes the check of `start` too, keeps
# $m_{\text{new}}$ finite: the masked block then adds $e^{-\infty} = 0$, harmlessly.) Fused
# kernels guard the exponent: where $m_{\text{new}} = -\infty$ they subtract 0 instead, so the
# masked block adds $e^{-\infty} = 0$ and leaves the zeros as they were.
# </details>

# %% [markdown]
# ### More measurements
#
# **A stack of layers.** In a stack of layers, forward runs every layer before backward
# starts, so **every layer's saved tensors are alive at once** when backward begins (lesson 05
# builds on exactly this). The peak of the whole step is then what all layers saved, plus one
# layer's working memory in backward. Here are 12 attention layers at $N = 256$, each feeding
# the next:

# %%
def stack_peak(attention, layers=12, N=256, d=64):
    """Bytes alive when backward starts (all layers' saved tensors) and the step's peak."""
    x = torch.randn(1, N, d, requires_grad=True)
    with TensorAccounting() as books:
        books.start("forward")
        hidden = x
        for _ in range(layers):
            hidden = attention(hidden, hidden, hidden, d ** -0.5)
        forward_peak = books.phases["forward"].peak
        books.start("backward")
        alive = books.now  # everything the 12 layers keep for backward
        hidden.sum().backward()
    return alive, max(forward_peak, alive + books.phases["backward"].peak)


for name, f in [("ScaledDotProductAttention", ScaledDotProductAttention.apply),
                ("MemoryEfficientAttention", MemoryEfficientAttention.apply)]:
    alive, peak = stack_peak(f)
    print(f"{name:<26} 12 layers: {alive / 2**20:5.1f} MiB alive as backward starts, "
          f"peak {peak / 2**20:5.1f} MiB")

# %% [markdown]
# Here the log-sum-exp pays however backward is written: twelve saved $P$ matrices against
# twelve rows of numbers, and the peak of the step falls by more than half.
#
# **How many layers before $L$ pays.** With the straightforward backward, keeping $L$ starts
# to pay at three layers of the size stacked above ($N = 256$): at two, the two saved
# $P$ still weigh less than the extra $N_q \times N_k$ tensors the recomputation builds.
# Run `stack_peak(f, layers=2)` and `layers=3` to see it (step peaks on torch 2.13: 1.56 MiB
# for `ScaledDotProductAttention` against 1.63 at two layers, 1.88 against 1.69 at three).
#
# **A log-sum-exp in bfloat16.** bfloat16 has 8 significant bits, so near $L = 10$ its values
# are $0.0625$ apart, and an error of $0.03$ in $L$ is a 3% error in every probability of the
# row, $e^{0.03} \approx 1.03$: up to 1.6% in bfloat16 and 0.2% in float16 for $L$ between 4
# and 8, twice that between 8 and 16. That is why Exercise 3 keeps $L$ in float32.

# %%
print("bfloat16 numbers next to 10:", torch.tensor([10.0, 10.03, 10.07], dtype=torch.bfloat16))

# %% [markdown]
# <details><summary><b>Common mistakes</b>, per exercise (open after your self-checks)</summary>
#
# **Exercise 1 · `ScaledDotProductAttention`**
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `dS = P * dP` | wrong `dQ`, `dK` (`dV` is still right, which hides it) | the softmax's VJP has a row-sum term, $-p\,p^\top$ in its Jacobian |
# | `dS = P * (1 - P) * dP` (softmax treated like a sigmoid) | only the diagonal of the Jacobian | the same row-sum term |
# | the row sum over `dim=-2` | sums over queries, not keys | the row sum runs over the keys of each query |
# | the row sum without `keepdim=True` | a shape error, or, for one square head, a sum broadcast along the wrong axis | keep the summed dimension, `keepdim=True`, so that one number per row meets its row |
# | a mask built for `nn.MultiheadAttention` (`True` = blocked) | attends to exactly the wrong keys | here `True` = attend: `masked_fill(~mask, -inf)` |
# | masked scores filled with `-1e4`, or `-10000` added to them (as in BERT's code) | right only while the masked scores end up far below the row's largest visible one; the checks' rows go past that, and the output is wrong with no error | `-inf`: no finite fill lies below every score, since a visible score can be `torch.finfo(dtype).min` itself, which that fill only ties |
# | no `mask=None` path (`~mask` on `None`) | `TypeError: bad operand type for unary ~` on the most common call | `if mask is not None:` |
# | `exp(scores)` without subtracting the row maximum | `inf`, then `nan`, for large scores | `torch.softmax`, or `scores - scores.amax(-1, keepdim=True)` |
# | one global maximum, and the mask applied after `exp` | rows far below the global maximum underflow to `0/0 = nan` | fill `-inf` first, then subtract each row's own maximum |
# | forgetting `scale` in `dQ` and `dK` | gradients off by a constant factor | $S = \tau QK^\top$: both carry $\tau$ |
# | `K.T` on batched tensors | reverses every dimension, batch ones included (deprecated beyond 2-D) | `K.transpose(-2, -1)` |
# | `ctx.mask = mask` | escapes the in-place version check and saved-tensor hooks (and, for an output, makes a reference cycle); it does not by itself break double backward | `ctx.save_for_backward(..., mask)` |
#
# **Exercise 2 · `MemoryEfficientAttention`**
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | a "memory-efficient" version that saves `P` or the scores | no memory saved | save the log-sum-exp; recompute `P` |
# | the mask left out when backward recomputes the scores | `exp(S - L)` is not 0 at masked keys: wrong `dQ`, `dK`, `dV`, right output | fill `-inf` again before `exp`, from the saved mask |
# | log-sum-exp without the row maximum, `log(exp(S).sum(-1))` | `inf` for scores above about 88 in float32 | `m + log(exp(S - m).sum(-1))`, or `torch.logsumexp` |
#
# **Exercise 3 · `FlashAttention`**
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | no rescaling of the running output | right only while no later key block raises a row's maximum | rescale $o$ by $e^{m_{\text{old}} - m_{\text{new}}}$, as $\ell$ |
# | rescaling with the wrong maximum (a tile's own without FlashAttention-1's second correction factor, or $e^{m_{\text{new}} - m_{\text{old}}}$) | wrong weights, or `inf * 0 = nan` | exponentiate against $m_{\text{new}}$, rescale by $e^{m_{\text{old}} - m_{\text{new}}}$ |
# | no running maximum at all, $e^{S}$ | `inf`, then `nan`, once a float32 score passes about 88.7 | subtract the running maximum |
# | the running maximum started at 0 (or at another finite number, such as $-10^4$) | `0/0 = nan` for rows whose scores all lie more than about 104 (float32) or 745 (float64) below it | start it at $-\infty$ |
# | a first tile in which a row sees no key (key blocks visited from the last) | $e^{-\infty + \infty}$ = `nan` for that row | visit key blocks from key 0, or subtract 0 where $m_{\text{new}} = -\infty$ |
# | a causal mask `key >= query + (Lk - Lq)` | each query loses its last visible key; with $N_q = N_k$ the first query sees none: `nan` | `key > query + (Lk - Lq)` masks exactly the keys after it |
# | `is_causal`-style top-left causal mask where bottom-right is meant | with $N_q < N_k$ the last queries miss keys they should see | `tril(diagonal=N_k - N_q)`, `causal_lower_right` |
# | log-sum-exp kept in bfloat16 or float16 | every recomputed probability of a row off by the same factor $e^{L - \tilde L}$, for $\tilde L$ the rounded $L$: up to 1.6% in bfloat16 and 0.2% in float16 for $L$ between 4 and 8, twice that between 8 and 16; far outside float32's tolerance | keep `L` in float32 |
# | $D$ from a tile's $dP_{ij} \odot P_{ij}$ | part of the row sum: wrong `dQ`, `dK` with several key blocks | $D = \operatorname{rowsum}(dO \odot O)$, whole rows, before the loop |
# | a full `Lq x Lk` tensor in FlashAttention's forward or backward (a full causal mask counts) | the peak is back to $O(N^2)$ | one `BLOCK x BLOCK` tile at a time, each tile's mask from its query and key positions |
# | computing tiles entirely above the diagonal under `causal` | right numbers, up to twice the work | start or stop the inner loop at the diagonal |
# | a block size written as a number instead of `FlashAttention.BLOCK` | the grader's block sizes are ignored | read `FlashAttention.BLOCK` |
#
# **Exercise 4 · `AttentionWithBias`**
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `AttentionWithBias`'s backward returns a bias gradient of the scores' shape (or of any shape `bias.shape` broadcasts to) | autograd's engine sums it down to `bias.shape` without a word; the contract does not accept it. Any other shape raises `returned an invalid gradient` | Exercise 4, Hint 2: which scores does one bias entry move? |
#
# Where popular write-ups go wrong: the missing row sum is the classic one. A write-up that
# derives the softmax's derivative "element by element" as $p(1-p)$, or that writes
# $dS = P \odot dP$ "since the softmax is applied element-wise", keeps the diagonal of a
# Jacobian that is not diagonal. Your gradient for $V$ comes out right, so a test that only
# checks $dV$ passes; gradcheck on $Q$ and $K$ does not. Mask conventions get mixed up in code
# that moves from `nn.MultiheadAttention` to `F.scaled_dot_product_attention`: same boolean
# tensor, opposite meaning. And "memory-efficient attention" is often measured by what it
# keeps for backward, which says nothing about its peak for one call alone; in a stack of
# layers, where every layer's saved tensors wait for backward together, it is half the story.
# </details>

# %% [markdown]
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **Peak memory and time, measured.** The first cell below runs the three Functions and
# PyTorch's own `F.scaled_dot_product_attention` on inputs of shape $(1, 1, N, 64)$ (batch,
# heads, length, $d$), float32, forward and backward on this machine's CPU. Left, the step
# peak of live tensors created, the larger of forward's peak and what forward keeps plus
# backward's peak (by `TensorAccounting`, as `peak_bytes` counts it in "Kept and peak");
# right, the time, the fastest of 5 runs on one thread, each round running every function
# once in turn, so that a busy moment of the machine slows them all alike. On log-log axes a
# cost like $N^2$ has slope 2 and one like $N$ slope 1.
# The lengths stop at 256 so that the cell runs in about a second (counting every tile's
# tensors is slow in Python); `make bench` measures the same up to $N = 4096$.
#
# FlashAttention's peak grows like $N$: a few tiles, the per-row statistics, and the
# full-size $dQ$ accumulator (at these lengths the fixed tiles still weigh, and $N = 64$ is a
# single tile of the default `BLOCK = 64`, so its slope stays below 1 here, while the others'
# approaches 2). It costs time here, because a Python loop runs many small matrix products
# where the others run one big one; a fused kernel keeps the tiles in on-chip memory, which
# is where the papers' speed-ups come from. PyTorch's own
# function, given 4-D inputs, runs its fused CPU flash kernel
# (`_scaled_dot_product_flash_attention_for_cpu`), and its peak grows like $N$ as well, with
# none of the Python loop's cost. (Given 3-D inputs, it falls back to the composed reference
# path and creates $N \times N$ tensors: measure with the shapes your model uses.)
#
# **Try it: a leaner `MemoryEfficientAttention`** (the sixth and seventh cells; ungraded).
# "Kept and peak" showed Exercise 2 keeping far less than Exercise 1 yet peaking higher for one
# call. Write `LeanMemoryEfficientAttention`, called as `apply(Q, K, V, scale)` (no mask), so
# that no step makes an $N_q \times N_k$ tensor it can avoid. Which of your steps could write
# into an $N_q \times N_k$ buffer that is already alive (PyTorch's in-place ops end in `_`)?
# Where can $\tau$ be applied to a tensor smaller than the scores? How many such tensors are
# alive at once at your peak? The check measures its step peak at $N = 1024$ with `peak_bytes`
# and compares its gradients with your Exercise 2's. Target: about half of
# `ScaledDotProductAttention`'s 17.0 MiB (8.5 MiB for one version with at most two alive at
# once, on torch 2.13; the exact figure depends on how each step is written).
#
# **Why FlashAttention-2 puts the keys outside.** On a GPU each outer block of the backward is
# a separate program, and all of them run at once. Whatever several programs add into must be
# added atomically. With keys outside that is $dQ$ alone (FlashAttention-2's CUDA kernel adds
# into it with atomic adds); with queries outside it would be both $dK$ and $dV$. The other
# way out is a second pass: one loop with keys outside for $dK$ and $dV$, then one with
# queries outside for $dQ$, each tile of $P$ recomputed twice but no atomics at all (Triton's
# fused attention tutorial does this, and so does the CS336 assignment). In single-threaded
# Python either order, and either design, is correct.
#
# **What PyTorch's own kernel keeps** (the second cell). That fused kernel returns the output
# and one float32 log-sum-exp per query row, the $O$ and $L$ your Exercise 3 keeps, even for
# bfloat16 inputs. The CUDA kernel adds an `rng_state`: with dropout it keeps the random
# generator's state, not the mask, and regenerates each tile's mask in backward (lesson 05's
# recomputation again).
#
# **When not to write `AttentionWithBias`.** For a bias you can materialise,
# `F.scaled_dot_product_attention` with a float `attn_mask` already gives the bias its
# gradient, of the bias's own shape (Exercise 4's drawing uses it as the reference). Write
# your own when the bias should never exist as an $N_q \times N_k$ tensor: a learned
# full-size bias has a gradient as large as the scores, one number per (query, key) pair, and
# brings back the matrix that FlashAttention removed. Some biases never need it: ALiBi's (a
# fixed slope per head times the distance $|i - j|$, designed so that a model trained on short
# sequences runs on longer ones) and T5's (a small learned table indexed by a bucket of
# $j - i$) were both designed before FlashAttention, for other reasons, and happen to suit a
# tiled kernel: it can build each tile of the bias on the fly from the tile's query and key
# positions and, for T5, add each tile's $dS$ into the table's few entries. PyTorch's
# FlexAttention (`torch.nn.attention.flex_attention`) takes such a bias as a `score_mod`, a
# function of the score and its indices, for exactly this reason; in torch 2.13 its backward
# does not run on CPU (it raises "FlexAttention does not support backward on CPU"), where a
# Function of your own does.
#
# **Grouped-query attention.** Llama 2 70B and Mistral share each key and value head among a
# group of query heads (`enable_gqa=True` in `F.scaled_dot_product_attention`). What gradient
# does a shared key head get? The third cell compares it with 4 copies of each head, summed
# or averaged by group, and prints which one matches.
#
# **Try it: a learned ALiBi slope** (the fourth and fifth cells; ungraded). Make ALiBi's
# slope learnable: head $h$ adds $B_{h,i,j} = -m_h\,|i - j|$, with one parameter $m_h$ per
# head. Your Exercise 4 backward already has $dS'$, the gradient of the biased scores, of
# shape $(B, H, N_q, N_k)$. Derive $\partial\phi/\partial m_h$ from it (nudge $m_h$: which
# scores move, and by how much each?), write `slope_gradient`, and run the check: it compares
# with autograd through `F.scaled_dot_product_attention`. The result is one number per head,
# so a tiled kernel can add each tile's share into it and never keep an $N_q \times N_k$
# gradient.
#
# **Explore your Exercise 1** (the last cell). Your `ScaledDotProductAttention` on 4 heads of
# 8 tokens. Left, the weights $P$ its forward computes; middle, the $dS$ its backward
# produces; right, the selected query's row of each, with the reference values as black
# ticks. Tick **causal mask** or **padding mask**: masked keys (×) get weight 0 and $dS$ 0,
# and every row of $dS$ still sums to zero.
# </details>

# %% tags=["skip-when-grading"]
rows = measure_attention({"ScaledDotProductAttention": ScaledDotProductAttention.apply,
                          "MemoryEfficientAttention": MemoryEfficientAttention.apply,
                          "FlashAttention": FlashAttention.apply},
                         lengths=(64, 128, 256), d=64, repeats=5)
for run in rows:
    print(f"N = {run['L']:>4}  {run['name']:<31} peak {run['peak'] / 2**20:6.2f} MiB  "
          f"{run['ms']:7.1f} ms")
peak_and_time_figure(rows)
plt.show()

# %%
output, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
    *(torch.randn(1, 2, 8, 4, dtype=torch.bfloat16) for _ in range(3)))
print("CPU flash kernel:", tuple(output.shape), output.dtype, "and L", tuple(lse.shape), lse.dtype)
print("CUDA flash kernel returns:", ", ".join(
    r.name for r in torch.ops.aten._scaled_dot_product_flash_attention.default._schema.returns))

# %%
q_heads = torch.randn(2, 8, 5, 4, requires_grad=True)  # 8 query heads
k_heads, v_heads = torch.randn(2, 2, 5, 4, requires_grad=True), torch.randn(2, 2, 5, 3)
grad_out = torch.randn(2, 8, 5, 3)
F.scaled_dot_product_attention(q_heads, k_heads, v_heads, enable_gqa=True).backward(grad_out)
k_copied = k_heads.detach().repeat_interleave(4, dim=1).requires_grad_()  # each head 4 times
F.scaled_dot_product_attention(q_heads.detach(), k_copied,
                               v_heads.repeat_interleave(4, dim=1)).backward(grad_out)
by_group = k_copied.grad.unflatten(1, (2, 4))  # (batch, shared head, copy, key, d)
print("dK of the 2 shared heads:", tuple(k_heads.grad.shape),
      " copies' dK summed:", torch.allclose(k_heads.grad, by_group.sum(2), atol=1e-6),
      " averaged:", torch.allclose(k_heads.grad, by_group.mean(2), atol=1e-6))


# %%
def slope_gradient(grad_S, distance):
    """d(phi)/d(m) for B[h, i, j] = -m[h] * distance[i, j], from grad_S of shape (B, H, Nq, Nk)."""
    ### BEGIN WORKED
    return -(grad_S * distance).sum(dim=(0, 2, 3))
    ### LEARNER
    raise NotImplementedError  # yours: one number per head
    ### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_slope_gradient():
    """Your slope_gradient against autograd's gradient of 4 ALiBi slopes."""
    heads, n = 4, 6
    Q, K, V, grad_O = (torch.randn(2, heads, n, c) for c in (8, 8, 5, 5))
    distance = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs().float()  # |i - j|
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625], requires_grad=True)
    F.scaled_dot_product_attention(Q, K, V,
                                   attn_mask=-slopes[:, None, None] * distance).backward(grad_O)
    full_bias = (-slopes.detach()[:, None, None] * distance).expand(2, heads, n, n).clone()
    full_bias.requires_grad_()  # the same bias, materialised at the scores' full shape
    F.scaled_dot_product_attention(Q, K, V, attn_mask=full_bias).backward(grad_O)
    try:
        mine = slope_gradient(full_bias.grad, distance)
    except NotImplementedError:
        print("slope_gradient is not written yet")
        return
    except Exception as error:  # an error in your function, shown in one line
        first_line = str(error).partition("\n")[0]
        print(f"✗ slope_gradient raised {type(error).__name__}: {first_line}")
        return
    right = isinstance(mine, torch.Tensor) and mine.shape == slopes.shape \
        and torch.allclose(mine, slopes.grad, atol=1e-5)
    print("✓" if right else "✗", "yours:", mine, "\n  autograd's d/dm:", slopes.grad)


check_slope_gradient()

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your check is green</summary>
#
# Nudging $m_h$ moves every score of head $h$, in every batch element, by $-|i - j|$ times
# the nudge, so $\partial\phi/\partial m_h = -\sum_{b,i,j} dS'_{b,h,i,j}\,|i - j|$: a
# weighted sum, not a plain one: a plain sum over $b, i, j$ gives 0, since every row of
# $dS'$ sums to 0 and a number added to a whole row has no gradient. A T5 table is the
# indexed variant: each score adds the entry of its bucket of $j - i$, so an entry's
# gradient is the sum of $dS'$ over the scores in its bucket (`index_add_` over the bucket
# indices).
# </details>


# %%
class LeanMemoryEfficientAttention(torch.autograd.Function):
    """MemoryEfficientAttention without a mask, with as few Nq x Nk tensors alive as it can."""

    @staticmethod
    def forward(ctx, Q, K, V, scale):
        ### BEGIN WORKED
        scores = (Q @ K.transpose(-2, -1)).mul_(scale)  # the first Nq x Nk buffer
        row_max = scores.amax(dim=-1, keepdim=True)
        shifted = (scores - row_max).exp_()  # the second, gone after the next line
        lse = row_max + shifted.sum(dim=-1, keepdim=True).log()
        del shifted
        output = scores.sub_(lse).exp_() @ V  # P written over the scores
        ctx.save_for_backward(Q, K, V, output, lse)
        ctx.scale = scale
        return output
        ### LEARNER
        raise NotImplementedError  # yours: Exercise 2's forward, leaner
        ### END WORKED

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        ### BEGIN WORKED
        Q, K, V, output, lse = ctx.saved_tensors
        P = (Q @ K.transpose(-2, -1)).mul_(ctx.scale).sub_(lse).exp_()
        grad_V = P.transpose(-2, -1) @ grad_output
        D = (grad_output * output).sum(dim=-1, keepdim=True)
        dS = (grad_output @ V.transpose(-2, -1)).sub_(D).mul_(P)  # dS / scale, on dP's buffer
        del P
        return ((dS @ K).mul_(ctx.scale), (dS.transpose(-2, -1) @ Q).mul_(ctx.scale), grad_V,
                None)
        ### LEARNER
        raise NotImplementedError  # yours
        ### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_lean():
    """Your LeanMemoryEfficientAttention: gradients against autograd's, then its step peak."""
    Q, K, V = (torch.randn(2, 5, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
    try:
        mine = torch.autograd.grad(LeanMemoryEfficientAttention.apply(Q, K, V, 0.5).sum(),
                                   (Q, K, V))
    except NotImplementedError:
        print("LeanMemoryEfficientAttention is not written yet")
        return
    reference = torch.softmax(Q @ K.transpose(-2, -1) * 0.5, dim=-1) @ V
    if not all(torch.allclose(a, b) for a, b in
               zip(mine, torch.autograd.grad(reference.sum(), (Q, K, V)))):
        print("✗ its gradients differ from autograd's through the composed ops")
        return
    step = peak_bytes(LeanMemoryEfficientAttention.apply, 1024)[3]
    print(f"✓ gradients agree; step peak at N = 1024: {step / MiB:.2f} MiB (target: about 9, "
          "against ScaledDotProductAttention's 17.0)")


check_lean()

# %%
attention_explorer(ScaledDotProductAttention)
