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
# **About 120 minutes** for the main path: reading and running it takes about 30, your
# derivations and the four exercises the rest. In two sittings if you like: the backward and
# Exercises 1 and 2 (about 50 minutes), then the online softmax, FlashAttention and the
# transfer exercise (about 70). The optional part after the **Summary** takes about 50 more.
#
# Attention's backward uses everything so far: batched matrix calculus, a Jacobian you must
# not build, a mask, numerical stability, and a choice of what to keep. It ends where
# FlashAttention begins: attention tile by tile, the $N_q \times N_k$ scores never whole. You
# derive each step on paper; the exercises turn the derivations into code. By the end you can
# derive the softmax's vector-Jacobian product, mask with the right polarity, decide what
# attention must keep for its backward, write FlashAttention's tiled forward and backward,
# and differentiate a learned additive bias.

# %% nbgrader={"locked": true}
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable
from torch.nn.attention.bias import causal_lower_right

from autograder import self_check
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
# values $V$ of shape $(\dots, N_k, d_v)$ are mixed. The leading dimensions are usually batch
# and heads; `@` treats them as a batch of matrices.
#
# $$S = \tau\, Q K^\top \quad (N_q \times N_k), \qquad
#   P = \operatorname{softmax}_{\text{row}}(\tilde S), \qquad O = P V \quad (N_q \times d_v),$$
#
# where $\tau$ is the scale (usually $1/\sqrt d$) and $\tilde S$ is $S$ with $-\infty$ where
# the mask says a query may **not** look at a key. $\phi$ is the loss, $dO = \partial\phi/
# \partial O$, and $N_q$, $N_k$ (`Lq`, `Lk` in code) are the numbers of queries and keys.

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
# Backward walks the three steps in reverse, from $dO$. Work on paper; Exercise 1 checks.
#
# **Step 1, $O = PV$.** Lesson 02's matrix product: write $dV$, $(\dots, N_k, d_v)$, and
# $dP$, $(\dots, N_q, N_k)$.
#
# **Step 2, $P = \operatorname{softmax}(S)$, row by row.** In one row,
# $p_i = e^{S_i}/\sum_k e^{S_k}$ depends on **every** score, so the Jacobian
# $J_{ij} = \partial p_i / \partial S_j$ is a full matrix. Look at it for five scores:

# %%
s = torch.randn(5, dtype=torch.float64)
p = torch.softmax(s, dim=0)
J = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), s)
print("p =", p.numpy().round(4))
print("J =\n", J.numpy().round(4))
print("symmetric:", torch.allclose(J, J.T), "  row sums:", J.sum(1).numpy().round(12))

# %% [markdown]
# 1. Compare the diagonal of `J` with `p`: which function of $p_i$ is $J_{ii}$? Which product
#    of two probabilities, with which sign, is an off-diagonal $J_{ij}$?
# 2. Why must every row of $J$ sum to zero? (Add the same number to every score.)
# 3. Backward never builds $J$: it needs $\partial\phi/\partial S_j = \sum_i v_i J_{ij}$ for
#    $v = \partial\phi/\partial p$. Using question 1, write it in $O(n)$ operations, then for
#    whole matrices: $dS$ from $P$ and $dP$. A popular write-up says "softmax is element-wise,
#    so $dS = P \odot dP$": what does that keep of $J$?
#
# **Step 3, $S = \tau\, Q K^\top$.** Write $dQ$ and $dK$ from $dS$. Where does $\tau$ go,
# and which gradient needs $dS^\top$?

# %% [markdown]
# ## Masks, and which way round they go
#
# A boolean mask broadcastable to $(\dots, N_q, N_k)$ says which keys each query may use: a
# **causal** mask $(N_q, N_k)$, or a **padding** mask $(B, 1, 1, N_k)$. Causal with
# $N_q \ne N_k$ has two alignments: *top-left*, query $i$ sees keys $0..i$, and
# *bottom-right*, keys $j \le i + N_k - N_q$ (`causal_lower_right`), which decoding with a
# cache needs. This lesson uses bottom-right.
#
# PyTorch has **two conventions** for a boolean mask: in `F.scaled_dot_product_attention`'s
# `attn_mask`, **`True` = attend**, as in this course; in `nn.MultiheadAttention`'s `attn_mask`
# and `key_padding_mask`, `True` = masked out. A mask built for one and passed to the other
# silently attends to exactly the wrong keys:

# %%
q = k = v = torch.randn(1, 4, 8)
causal = torch.ones(4, 4, dtype=torch.bool).tril()
print("mask:\n", causal.int())
right = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
wrong = F.scaled_dot_product_attention(q, k, v, attn_mask=~causal)
print("first query, right polarity:", right[0, 0, :3])
print("first query, reversed mask: ", wrong[0, 0, :3])

# %% [markdown]
# Reversed, the last query has no key left. A query whose keys are all masked is outside
# every exercise's contract here (the optional part, after the **Summary**, shows what
# `torch.softmax` and SDPA give there, and which alignment `is_causal=True` uses).

# %% [markdown]
# ## ✎ Exercise 1 · `ScaledDotProductAttention`
#
# Write `ScaledDotProductAttention.apply(Q, K, V, scale, mask=None)`, returning
# `softmax(Q @ K^T * scale, masked) @ V` for `Q (..., Lq, d)`, `K (..., Lk, d)`,
# `V (..., Lk, dv)` and a Python-float `scale`, with your three steps as its backward. Here
# the $N_q \times N_k$ scores count among the "sizes" of the Function contract's rule 3: your
# backward may hold several $N_q \times N_k$ tensors at once, and only rule 2 bounds its work
# (no work for a gradient nobody needs).
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `mask` is `None` or a boolean tensor broadcastable to `(..., Lq, Lk)`, `True` = attend: a masked key gets probability exactly 0, even where its score lies far above every visible one.
# - Any Python-float `scale` of the size models use, 0 and negative ones included, and scores of any size a model meets, far beyond where $e^s$ overflows.
# - Between the passes forward keeps nothing but `Q`, `K`, `V`, the mask and the output as they are (the caller holds them already) and at most 8 bytes of floats per query-key pair besides: no copy of an input, scaled or not.
# - A second derivative whose only path runs through your Function raises (the `@once_differentiable` on `backward` makes it) or comes out right: never silently wrong.
#
# Which fill lies below every score, in every dtype? Which two dimensions does your
# transpose swap, whatever comes before them? Stuck? Every row of $dS$ must sum to 0: why?

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
        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        grad_Q = grad_K = grad_V = None  # None for every input that needs no gradient
        if need_V:
            grad_V = P.transpose(-2, -1) @ grad_output  # O = P V
        if need_Q or need_K:
            grad_P = grad_output @ V.transpose(-2, -1)
            grad_S = P * (grad_P - (grad_P * P).sum(dim=-1, keepdim=True))  # softmax, by row
            if need_Q:
                grad_Q = ctx.scale * grad_S @ K  # S = scale * Q K^T
            if need_K:
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
# Step 2: $J = \operatorname{diag}(p) - p\,p^\top$, symmetric, with rows summing to zero
# (adding $c$ to every score changes no probability). Its product with a vector:
#
# $$\frac{\partial \phi}{\partial S_j} = \sum_i v_i\, p_i(\delta_{ij} - p_j)
#   = p_j \Big(v_j - \sum_i v_i\, p_i\Big),
#   \qquad\text{for every row:}\qquad
#   dS = P \odot \big(dP - \operatorname{rowsum}(dP \odot P)\big).$$
#
# The row sum is the $-p\,p^\top$ part. $P \odot dP$ keeps only the diagonal's $p_i$: $dV$
# right, $dQ$ and $dK$ wrong. Masked entries have $P = 0$, so $dS = 0$ there.
#
# Step 3: $dQ = \tau\, dS\, K$ and $dK = \tau\, dS^\top Q$. The mask and the scale are not
# tensors to differentiate: `None`. Fill the masked scores with $-\infty$ after scaling: a
# scale of 0 or below would turn a $-\infty$ filled before it into `nan` or $+\infty$.
# </details>

# %% [markdown]
# ## Derive: what must forward keep?
#
# Your Exercise 1 keeps $P$ (or $S$): at $N = 4096$ in float32, 64 MiB per head and per layer. Must
# forward *keep* it? Recomputing $S$ in backward is one matrix product.
#
# 1. What else does backward need to turn the recomputed $S$ into $P$, and what is the least
#    forward can keep for that? Write $P_{ij}$ from $S_{ij}$ and what you keep.
# 2. How do you compute what you keep so that no exponential overflows, whatever the scores?
#    Try `torch.tensor(100.0).exp()`.
# 3. Backward also needs $\operatorname{rowsum}(dP \odot P)$, and $P$ is gone: what is it in
#    $dO$ and $O$ alone? Why will that matter once $P$ comes one block of keys at a time?
#
# Try your answer to 3 in `row_sum_from_output`; the check computes
# $\operatorname{rowsum}(dP \odot P)$ the long way, from $P$ and $V$, and compares.

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


def row_sum_from_output(grad_output, output):
    """rowsum(dP * P) for each query row, from dO and O alone: your answer to question 3."""
    ### BEGIN WORKED
    return (grad_output * output).sum(dim=-1)
    ### LEARNER
    return torch.zeros(grad_output.shape[:-1], dtype=grad_output.dtype)  # replace with yours
    ### END WORKED


def error_row_sum():
    """Yours against rowsum(dP * P), dP = dO V^T, on 3 query rows and 5 keys."""
    generator = torch.Generator().manual_seed(6)
    P_rows = torch.softmax(torch.randn(3, 5, dtype=torch.float64, generator=generator), dim=-1)
    V_rows = torch.randn(5, 2, dtype=torch.float64, generator=generator)
    dO_rows = torch.randn(3, 2, dtype=torch.float64, generator=generator)
    want = ((dO_rows @ V_rows.T) * P_rows).sum(dim=-1)
    got = torch.as_tensor(row_sum_from_output(dO_rows, P_rows @ V_rows)).reshape(want.shape)
    return (got - want).abs().max().item()


report("rowsum(dP * P) from dO and O", error_row_sum, 1e-12)

# %% [markdown]
# ## ✎ Exercise 2 · `MemoryEfficientAttention`
#
# Write `MemoryEfficientAttention`, called as Exercise 1's Function, whose forward keeps no
# $N_q \times N_k$ tensor for its backward.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Between the passes forward keeps only $Q$, $K$, $V$, the mask and the output as given, and at most two numbers per query row, of shape `(..., Lq)` or `(..., Lq, 1)`, in the inputs' dtype or wider.
# - Backward rebuilds $P$ from what forward kept, taking no new row maximum and no new normalising sum ($\operatorname{rowsum}(dP \odot P)$ from that $P$ is fine).
# - Right at scores of any size a model meets, far beyond where $e^s$ overflows.
# - The mask, the scale and `@once_differentiable` as in Exercise 1.
#
# How does the mask reach backward, and does that way still work when it is `None`?

# %% nbgrader={"grade_id": "answer_MemoryEfficientAttention", "solution": true}
class MemoryEfficientAttention(torch.autograd.Function):
    """Attention that keeps no Nq x Nk tensor between its forward and its backward."""

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
        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        grad_Q = grad_K = grad_V = None
        if need_V:
            grad_V = P.transpose(-2, -1) @ grad_output
        if need_Q or need_K:
            grad_P = grad_output @ V.transpose(-2, -1)
            row_sum = (grad_output * output).sum(dim=-1, keepdim=True)  # = rowsum(dP * P)
            grad_S = P * (grad_P - row_sum)
            if need_Q:
                grad_Q = ctx.scale * grad_S @ K
            if need_K:
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
# $L_i = m_i + \log \sum_j e^{S_{ij} - m_i}$: every exponent is then $\le 0$, while
# $\log\sum_k e^{S_{ik}}$ taken literally overflows float32 once a score passes about 88.
#
# $$\operatorname{rowsum}(dP \odot P)_i = \sum_j P_{ij} \sum_c dO_{ic} V_{jc}
#   = \sum_c dO_{ic} \sum_j P_{ij} V_{jc} = \sum_c dO_{ic}\, O_{ic}
#   = \operatorname{rowsum}(dO \odot O)_i .$$
#
# $dO$ and $O$ are whole rows of size $d_v$, while the left side needs every key of the row.
# </details>

# %% [markdown]
# ## Derive: the online softmax
#
# Keeping $L$ shrinks what waits for backward, but each pass of Exercise 2 still creates whole
# $N_q \times N_k$ tensors (how many are alive at its peak? "Kept and peak", after the
# **Summary**, measures it). Can one query row's output be computed seeing its scores **one
# block of keys at a time**? Keep, for the blocks seen so far, the maximum $m$ of the scores,
# the sum $\ell = \sum_{j \text{ seen}} e^{S_j - m}$ and the unnormalised output
# $o = \sum_{j \text{ seen}} e^{S_j - m}\, v_j$. A new block of scores $S'$ with values $v'$
# arrives.
#
# 1. What is the new maximum $m_{\text{new}}$?
# 2. $\ell$ was summed against the old $m$: by what factor must it be multiplied to be a sum
#    against $m_{\text{new}}$? Then what is the new $\ell$? And the new $o$?
# 3. If you forget to rescale $o$, in which case does nobody notice?
# 4. After the last block, how do you get the output row and the log-sum-exp $L$?
# 5. Before the first block nothing has been seen. What must $m$, $\ell$ and $o$ be, so that
#    your update is right for the first block too, however low that row's scores lie?
#
# Write them in `combine`, `finish` and `start`; the check runs a row of 12 scores in blocks
# of 4, each block's maximum above the last one's, and the same row moved 100,000 down,
# against the whole row. It fails until all three are yours.

# %%
row = torch.tensor([0.5, -1.2, 1.0, 0.3, 2.1, 3.5, -0.4, 1.7, 6.0, 2.2, 4.4, -2.0],
                   dtype=torch.float64)  # block maxima 1.0, 3.5, 6.0: each block raises m
values = torch.randn(12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))


def combine(m, ell, o, s_new, v_new):
    """One step of the online softmax: your derivation. Returns the new (m, ell, o)."""
    ### BEGIN WORKED
    m_new = torch.maximum(m, s_new.max())
    alpha = torch.exp(m - m_new)  # rescales what was summed against the old m
    p = torch.exp(s_new - m_new)
    return m_new, alpha * ell + p.sum(), alpha * o + p @ v_new
    ### LEARNER
    raise NotImplementedError  # yours
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
    and the same for the row moved 100,000 down."""
    errors = []
    for scores in (row, row - 1e5):
        m, ell, o = start()
        for first in range(0, 12, 4):
            m, ell, o = combine(m, ell, o, scores[first:first + 4], values[first:first + 4])
        output, lse = finish(m, ell, o)
        errors += [(output - torch.softmax(scores, dim=0) @ values).abs().max().item(),
                   (torch.as_tensor(lse) - torch.logsumexp(scores, 0)).abs().item()]
    return torch.tensor(errors).max().item()  # nan (a start that leaves 0 / 0) fails


report("output and L, block by block", error_online, 1e-9)

# %% [markdown]
# ## Derive: attention by tiles
#
# FlashAttention cuts $Q$ into blocks $Q_i$ of $B$ rows and $K$, $V$ into blocks $K_j$, $V_j$
# of $B$ keys, and holds one $B \times B$ tile of scores at a time.
#
# **Forward.** A tile $S_{ij} = \tau\, Q_i K_j^\top$ holds $B$ rows of your `combine`. What do
# you keep per query row between tiles, and which dimension must a per-row number gain where
# it meets a tile? What does forward save for backward?
#
# **Backward**, for tile $(i, j)$:
#
# 1. How do you get $P_{ij}$ back from what forward kept, without the rest of the row?
# 2. $\operatorname{rowsum}(dP \odot P)$ sums over **all** keys of the row, and a tile sees
#    only some of them: how, and when, do you get it?
# 3. Tile $(i, j)$ adds to which block of $dQ$, of $dK$ and of $dV$, and which other tiles add
#    to the same blocks?
# 4. Which blocks go in the **outer** loop, queries or keys? For your choice, what stays in a
#    small accumulator through the inner loop, and what goes into a full-size buffer?
#
# **Causal** (query $i$ sees keys $j \le i + N_k - N_q$). For a tile of query rows
# $i_0..i_1$ and keys $j_0..j_1$, which query decides whether it holds a visible key? Which
# tiles need no work, and which need a mask inside? In which order must you visit the key
# blocks so that no row's first tile is all $-\infty$? ("A block in which a row sees no key",
# after the **Summary**, shows why it matters.)
#
# **Low precision** (the cell below shows how coarse). If a row's $L$ is off by $\varepsilon$,
# by what factor is every rebuilt probability off? What becomes of small terms added to a
# float16 sum near 1? Which of your numbers may stay in the inputs' dtype, in either pass?

# %%
print("bfloat16 numbers next to 10:", torch.tensor([10.0, 10.03, 10.07], dtype=torch.bfloat16))
print("1 + 0.0004 in float16:", torch.tensor(1.0, dtype=torch.float16) + 4e-4)

# %% [markdown]
# ## ✎ Exercise 3 · `FlashAttention`
#
# Write `FlashAttention.apply(Q, K, V, scale, causal=False)`: the same shapes, no mask;
# `causal` is a Python bool, bottom-right (causal calls have $N_q \le N_k$, so every query
# sees key 0); the block size is the class attribute `BLOCK`, 64 by default, read at each call. Python loops are
# slow next to a fused kernel: you build the algorithm a Triton or CUDA kernel runs.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Per batch-head, neither pass creates a tensor larger than a `BLOCK x BLOCK` tile unless it is shaped `N x d` or `N` (inputs, outputs, gradients, per-row numbers), and only a few are alive at once.
# - Between the passes forward keeps nothing but $Q$, $K$, $V$ and the output as they are, and one number per query row.
# - Backward makes no pass of its own to rebuild a row's statistics, and under `causal` neither pass computes a tile entirely above the diagonal.
# - float16 and bfloat16 inputs: results in the input dtype, as accurate as a kernel whose sums are float32.

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
        need_Q, need_K, need_V = ctx.needs_input_grad[:3]
        block, Lq, Lk, wide = FlashAttention.BLOCK, Q.shape[-2], K.shape[-2], L.dtype
        need_dS = need_Q or need_K  # dV = P^T dO takes no dP, dS or D
        D = (grad_output.to(wide) * O.to(wide)).sum(dim=-1) if need_dS else None
        grad_Q = torch.zeros(Q.shape, dtype=wide, device=Q.device) if need_Q else None
        grad_K = torch.empty_like(K) if need_K else None
        grad_V = torch.empty_like(V) if need_V else None
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
                if need_V:
                    dv += p.transpose(-2, -1) @ do
                if need_dS:
                    ds = p * (do @ v.transpose(-2, -1) - D[..., i:i + block, None])
                    if need_Q:
                        grad_Q[..., i:i + block, :] += ctx.scale * ds @ k
                    if need_K:
                        dk += ctx.scale * ds.transpose(-2, -1) @ q
            if need_K:
                grad_K[..., j:j + block, :] = dk
            if need_V:
                grad_V[..., j:j + block, :] = dv
        return grad_Q.to(Q.dtype) if need_Q else None, grad_K, grad_V, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "FlashAttention", "grade": true, "points": 5}
self_check("FlashAttention", FlashAttention)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("FlashAttention", FlashAttention)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# **Forward.** $m_{\text{new}} = \max(m, \max_j S'_j)$; everything summed against the old
# $m$ is multiplied by $\alpha = e^{m - m_{\text{new}}} \le 1$, because
# $e^{S_j - m}\,e^{m - m_{\text{new}}} = e^{S_j - m_{\text{new}}}$:
#
# $$\ell \leftarrow \alpha\,\ell + \sum_j e^{S'_j - m_{\text{new}}}, \qquad
#   o \leftarrow \alpha\, o + \sum_j e^{S'_j - m_{\text{new}}}\, v'_j, \qquad
#   m \leftarrow m_{\text{new}} ,$$
#
# and at the end the output row is $o / \ell$ and $L = m + \log \ell$. A forgotten rescale of
# $o$ goes unnoticed when no later block raises the maximum. A start at $m = -\infty$ is
# right when a row's first block holds one of its keys ($\alpha = 0$ multiplies zeros); a
# start at 0 gives $0/0$ for a row far below it.
#
# **Backward.** No tile sees a whole row of $P$, so $D = \operatorname{rowsum}(dO \odot O)$
# comes first, from whole rows of $dO$ and $O$; then each tile gives
#
# $$dV_j \mathrel{+}= P_{ij}^\top dO_i,\quad dP_{ij} = dO_i V_j^\top,\quad
#   dS_{ij} = P_{ij} \odot (dP_{ij} - D_i),\quad
#   dQ_i \mathrel{+}= \tau\, dS_{ij} K_j,\quad dK_j \mathrel{+}= \tau\, dS_{ij}^\top Q_i ,$$
#
# with $P_{ij} = e^{S_{ij} - L_i}$. With key blocks outside, $dK_j$ and $dV_j$ stay in
# block-sized accumulators; $dQ_i$ gets a share from every key block, added into a full-size
# $dQ$. Either order is correct here. Under `causal` a tile is hidden when
# $j_0 > i_1 + N_k - N_q$: for $N_q = N_k$, almost half the tiles.
# </details>

# %% [markdown]
# ## ✎ Exercise 4 · `AttentionWithBias` (transfer)
#
# T5 and Swin add a learned relative-position bias to the scores, ALiBi adds $-$slope
# $\times$ distance per head, and padding is often a bias of $0$ and $-\infty$. Write
# `AttentionWithBias.apply(Q, K, V, bias, scale)`, returning
#
# $$O = \operatorname{softmax}_{\text{row}}\big(\tau\, Q K^\top + B\big)\, V$$
#
# for `Q`, `K`, `V` as before, a Python-float `scale` $\tau$, and `bias` $B$ a float tensor
# that may require grad. Nothing in this lesson derives its gradient: derive
# $\partial\phi/\partial B$ on paper first, for a bias of the scores' own shape, then for
# each shape below: an $(N_q, N_k)$ table shared by every batch element and head, one row of
# $N_k$ numbers per head, an ALiBi bias $(H, N_q, N_k)$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `bias` is a float tensor of the inputs' dtype that broadcasts to `(..., Lq, Lk)`, such as `(Lq, Lk)`, `(H, 1, Lk)` or `(Lk,)`, with `-inf` entries for padding keys (every query keeps one finite key).
# - `backward` returns the bias's gradient with exactly `bias.shape`, whichever of these shapes it has.
# - Each gradient, the bias's included, is computed only when `ctx.needs_input_grad` asks for it: no product is made for an input that needs none.
#
# <details><summary>Hint 1: nudge one entry</summary>
#
# Add $\varepsilon$ to one entry of a bias of the scores' own shape: which score moves, and
# by how much? By how much does $\phi$ move then, to first order, and which entry of which
# tensor of your backward says so?
# </details>
#
# <details><summary>Hint 2: an entry that is shared</summary>
#
# A bias of shape $(H, 1, N_k)$: which scores does its entry $B_{h,0,j}$ feed? If each of
# them moves by $\varepsilon$, by how much does $\phi$ move?
# </details>
#
# <details><summary>Hint 3: padding with $-\infty$</summary>
#
# Where $B_{ij} = -\infty$, what is $P_{ij}$? What does that make each entry your backward
# computes as a product with $P$ there, and what gradient does a padding entry of the bias
# receive?
# </details>

# %% nbgrader={"grade_id": "answer_AttentionWithBias", "solution": true}
class AttentionWithBias(torch.autograd.Function):
    """softmax(Q K^T * scale + bias) V for a bias broadcastable to the scores, which may
    require grad; every gradient only when needed."""

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
# Everything from $dO$ to $dS'$ is Exercise 1's backward. The bias enters $S'$ with
# coefficient 1, and a broadcast entry moves every score it was copied to, so its gradient is
# the sum of $dS'$ over those scores:
#
# $$\frac{\partial\phi}{\partial B} = \sum_{\text{broadcast dimensions}} dS' ,$$
#
# over the leading dimensions the bias lacks and, keeping them, over those where it has size 1
# (`sum_to_size(bias.shape)` does both; lesson 09 comes back to it). The engine would sum a
# gradient of the scores' shape down for you ([Function contract, rule
# 2](function_contract.md)); the contract asks for the reduction because it is the part of this
# gradient that is new, and the part a tiled kernel must do itself, adding each tile's $dS'$
# into the bias's few entries. Padding gets $dS'_{ij} = 0$, since $P_{ij} = 0$; a bias of
# shape $(N_q, 1)$ gets row sums of $dS'$, 0. When only `V` needs a gradient, neither $dP$ nor
# $dS'$ is needed.
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
# - **A query with no key left**: what `torch.softmax` and SDPA give for it, and which
#   causal alignment `is_causal=True` uses.
# - **Pictures** of the softmax Jacobian and of your Exercise 1's gradients, and your Function
#   against PyTorch's own attention on a multi-head batch.
# - **What `@once_differentiable` guards**, a predict-then-run on a second derivative, and
#   **what is kept, counted**: your Exercise 1 against the same attention in ordinary ops.
# - **Your bias gradient, drawn**, the online softmax **stepped block by block**, and **a
#   block in which a row sees no key**.
# - **Kept and peak**: what Exercises 1 and 2 keep against their peak for one call; **more
#   measurements**: a stack of 12 layers, how many layers before keeping $L$ pays, and,
#   for low precision, why $L$ stays in float32 and the inputs do not.
# - **Common mistakes**, per exercise, and **In practice**: timings, PyTorch's own kernels,
#   production notes, a leaner Exercise 2 to write and measure, a learned ALiBi slope, an
#   explorer of your Exercise 1.

# %% [markdown]
# ### A query with no key left
#
# In "Masks, and which way round they go", the reversed mask left the last query no key.
# **Predict, then run**:
#
# 1. what `torch.softmax` gives for a row of scores that are all $-\infty$;
# 2. what `F.scaled_dot_product_attention` returned for that last query;
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
# A softmax of a row of $-\infty$ is $0/0$, `nan`; `F.scaled_dot_product_attention` defines
# it as zeros (`torch._safe_softmax`): a query with no key to attend, such as a padding
# position, then gets a row of zeros, where a `nan` would spread through every later layer, the
# loss and the gradients. In this lesson's exercises every query keeps at least one key. `is_causal=True` is top-left: the first of 2 queries sees key 0 only;
# bottom-right, keys 0..2.
# </details>

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
for name, guess in [("p * v", p5 * v5), ("p * (1 - p) * v", p5 * (1 - p5) * v5)]:
    print(f"{name:>16}: largest error {(guess - J5.T @ v5).abs().max().item():.3f}")

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
def masked_first_block():
    """Your start, combine over a row whose first block is all -inf, and finish."""
    m, ell, o = start()
    m, ell, o = combine(m, ell, o, masked[:4], values[:4])
    print("after the masked first block: m =", float(m), " ell =", float(ell), " o =", o)
    for first in range(4, 12, 4):
        m, ell, o = combine(m, ell, o, masked[first:first + 4], values[first:first + 4])
    print("output after every block:", finish(m, ell, o)[0], "  you predicted",
          my_masked_first_block)
    print("the softmax of the whole row:", torch.softmax(masked, dim=0) @ values)


masked = torch.cat([torch.full((4,), float("-inf"), dtype=torch.float64), row[4:]])
if not withheld(my_masked_first_block):
    try:
        masked_first_block()
    except NotImplementedError:
        print("combine is not written yet: write it in \"Derive: the online softmax\"")

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
# ### Kept and peak
#
# Whether a sequence fits is decided by the **peak** of live bytes while each pass runs:
# what is kept, plus what the pass creates and still holds. `TensorAccounting` adds up every
# live tensor the ops create.
#
# **Predict, then run.** For one call at $N = 1024$, is the **peak of the step** (the larger
# of forward's peak and what forward kept plus backward's peak) lower for
# `MemoryEfficientAttention` than for `ScaledDotProductAttention`, the same, or higher? List
# the $N_q \times N_k$ tensors each of your passes creates, and which are alive together.

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
# Written straightforwardly, as in the solution, **higher** (torch 2.13: 21.0 MiB against
# 17.0): each out-of-place step of the recomputation makes a new $N_q \times N_k$ tensor, and
# several are alive at once, more than the saved $P$. In a stack of layers, whose saved
# tensors all wait for backward, keeping $L$ pays (the next section counts 12 layers); one
# layer's working memory remains, which FlashAttention removes.
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
# **Low precision**, the questions before Exercise 3. Why keep $L$ in float32 too, when every
# probability of a row is $e^{S - L}$? And why not keep a float32 copy of $Q$, $K$, $V$?
#
# **A log-sum-exp in bfloat16.** Near $L = 10$ bfloat16's values are $0.0625$ apart, and an
# error of $0.03$ in $L$ is a 3% error in every probability of the row,
# $e^{0.03} \approx 1.03$: up to 1.6% in bfloat16 and 0.2% in float16 for $L$ between 4
# and 8, twice that between 8 and 16. That is why Exercise 3 keeps $L$ in float32. A float32
# copy of $Q$, $K$ and $V$, on the other hand, would keep twice their bytes again beside the
# inputs the caller holds anyway; each tile widens its own blocks as it loads them, as a fused
# kernel does in registers. A float16 sum at 1 drops a term of $4 \cdot 10^{-4}$ whole: a
# running $\ell$, $o$, $D$ or gradient block added in the inputs' dtype loses every small
# share, which is why the sums stay in float32.

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
# | masked scores filled with `-1e4`, or `-10000` added to them (as in BERT's code) | right only while the masked scores end up far below the row's largest visible one: a row whose visible scores lie below $-10^4$ attends to its masked keys, with no error | `-inf`, which lies below every score |
# | the mask filled with `-inf` before the scale multiplies the scores | at scale 0, `0 * -inf` is `nan`; at a negative scale, `+inf` takes all the weight | scale first, then fill |
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
# | the running maximum started at 0 (or at another finite number, such as $-10^4$) | `0/0 = nan` for rows whose scores all lie more than about 104 (float32) or 745 (float64) below it | start it at $-\infty$, or at `torch.finfo(dtype).min`, below every finite score |
# | a first tile in which a row sees no key (key blocks visited from the last) | $e^{-\infty + \infty}$ = `nan` for that row | visit key blocks from key 0, or subtract 0 where $m_{\text{new}} = -\infty$ |
# | a causal mask `key >= query + (Lk - Lq)` | each query loses its last visible key; with $N_q = N_k$ the first query sees none: `nan` | `key > query + (Lk - Lq)` masks exactly the keys after it |
# | `is_causal`-style top-left causal mask where bottom-right is meant | with $N_q < N_k$ the last queries miss keys they should see | `tril(diagonal=N_k - N_q)`, `causal_lower_right` |
# | log-sum-exp kept in bfloat16 or float16 | every recomputed probability of a row off by the same factor $e^{L - \tilde L}$, for $\tilde L$ the rounded $L$: up to 1.6% in bfloat16 and 0.2% in float16 for $L$ between 4 and 8, twice that between 8 and 16; far outside float32's tolerance | keep `L` in float32 |
# | the row sum $\ell$ added from $P$ rounded to float16 or bfloat16 | every row's $L$ off by the rounding: in float16 up to $5 \times 10^{-4}$ when every probability rounds the same way, $10^{-5}$ to $10^{-4}$ on random rows, where float32 is off by $10^{-7}$ | round $P$ only as a matrix product's operand; add the float32 probabilities into $\ell$ |
# | $D$ from a tile's $dP_{ij} \odot P_{ij}$ | part of the row sum: wrong `dQ`, `dK` with several key blocks | $D = \operatorname{rowsum}(dO \odot O)$, whole rows, before the loop |
# | a full `Lq x Lk` tensor in FlashAttention's forward or backward (a full causal mask counts) | the peak is back to $O(N^2)$ | one `BLOCK x BLOCK` tile at a time, each tile's mask from its query and key positions |
# | computing tiles entirely above the diagonal under `causal` | right numbers, up to twice the work | start or stop the inner loop at the diagonal |
# | a block size written as a number instead of `FlashAttention.BLOCK` | a caller who sets `FlashAttention.BLOCK` gets another block size | read `FlashAttention.BLOCK` |
#
# **Exercise 4 · `AttentionWithBias`**
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | the bias gradient computed only when `Q` or `K` needs one (the condition that guards $dS'$) | `None` for a bias that alone requires grad, as when only a relative-position table is trained | $dS'$ is needed for the bias too: guard it with the bias's entry of `ctx.needs_input_grad` as well |
# | the bias gradient multiplied by $\tau$ | wrong by the factor $\tau$ | the bias is added after the scores are scaled: coefficient 1 |
# | the mean of $dS'$ over the broadcast dimensions | too small by the number of scores sharing each entry | each score an entry feeds adds its whole $dS'$: a sum |
# | $dS'$ returned at the scores' shape, or summed over the leading dimensions only | the engine sums it down, but not `bias.shape` as the contract asks | sum over the size-1 dimensions too, keeping them |
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
# alive at once at your peak? The check compares its gradients with autograd's through the
# same attention in ordinary ops, then measures its step peak at $N = 1024$ with `peak_bytes`.
# Target: about half of `ScaledDotProductAttention`'s 17.0 MiB (8.5 MiB for one version with
# at most two alive at once, on torch 2.13; the exact figure depends on how each step is
# written).
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
    print(f"✓ gradients agree; step peak at N = 1024: {step / MiB:.2f} MiB (target: about 8.5, "
          "against ScaledDotProductAttention's 17.0)")


check_lean()

# %%
attention_explorer(ScaledDotProductAttention)
