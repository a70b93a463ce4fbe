# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 06 · Attention by hand: the softmax Jacobian, masks, and what to keep
#
# Scaled dot-product attention is the operation at the heart of every transformer, and its
# backward is the best exercise there is in everything this course has covered: batched matrix
# calculus, a Jacobian you must not build, inputs that are not differentiable, numerical
# stability, and a choice of what to save that decides how long a sequence fits in memory.
#
# By the end of this lesson you can:
# 1. derive the gradients of attention with respect to $Q$, $K$ and $V$;
# 2. write the softmax's vector-Jacobian product in one line, and say why it has a row sum;
# 3. apply a boolean mask with the right polarity, and say which PyTorch APIs use which;
# 4. match `torch.nn.functional.scaled_dot_product_attention`, outputs and gradients;
# 5. (stretch) keep one number per query instead of the $L_q \times L_k$ probabilities.

# %% nbgrader={"locked": true}
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.graph import saved_tensors_hooks

from autograder import self_check
from widgets import attention_explorer

_ = torch.manual_seed(0)

# %% [markdown]
# ## The forward
#
# Queries $Q$ of shape $(\dots, L_q, d)$ ask, keys $K$ of shape $(\dots, L_k, d)$ answer, and
# values $V$ of shape $(\dots, L_k, d_v)$ are what gets mixed. The leading dimensions $(\dots)$
# are usually batch and heads; `@` treats them as a batch of independent matrices.
#
# $$S = s\, Q K^\top \quad (L_q \times L_k), \qquad
#   P = \operatorname{softmax}_{\text{row}}(\tilde S), \qquad O = P V \quad (L_q \times d_v),$$
#
# where $s$ is the scale (usually $1/\sqrt d$) and $\tilde S$ is $S$ with $-\infty$ wherever the
# mask says a query may **not** look at a key; $e^{-\infty} = 0$, so those keys get no weight.
# Row $i$ of $P$ is a probability distribution over the keys for query $i$.

# %%
Q = torch.randn(2, 3, 4, 8)   # (batch, heads, Lq, d)
K = torch.randn(2, 3, 6, 8)   # (batch, heads, Lk, d)
V = torch.randn(2, 3, 6, 5)   # (batch, heads, Lk, dv)
S = (Q @ K.transpose(-2, -1)) / math.sqrt(8)
P = torch.softmax(S, dim=-1)
print("S, P:", tuple(S.shape), " O:", tuple((P @ V).shape), " rows of P sum to 1:",
      torch.allclose(P.sum(-1), torch.ones(2, 3, 4)))

# %% [markdown]
# ## The backward, one step at a time
#
# Backward receives $dO = \partial L/\partial O$ and walks the three steps in reverse.
#
# **$O = PV$** is a matrix product (lesson 02): $\;dV = P^\top dO$, $\;dP = dO\,V^\top$.
#
# **$P = \operatorname{softmax}(S)$ row by row.** In one row, $p_i = e^{s_i}/\sum_k e^{s_k}$,
# and every $p_i$ depends on **every** $s_j$ of its row:
#
# $$\frac{\partial p_i}{\partial s_j} = p_i(\delta_{ij} - p_j)
#   \qquad\text{so}\qquad J = \operatorname{diag}(p) - p\,p^\top .$$
#
# $J$ is symmetric, and its product with a vector needs no matrix at all:
#
# $$\frac{\partial L}{\partial s_j}
#   = \sum_i \frac{\partial L}{\partial p_i}\, p_i(\delta_{ij} - p_j)
#   = p_j \Big(\frac{\partial L}{\partial p_j} - \sum_i \frac{\partial L}{\partial p_i}\, p_i\Big),
#   \qquad\text{for every row:}\qquad
#   dS = P \odot \big(dP - \operatorname{rowsum}(dP \odot P)\big).$$
#
# The row sum is the $-p\,p^\top$ part of the Jacobian: raising one score lowers every other
# probability in its row. Masked entries need no care here: their $P$ is $0$, so their $dS$ is
# $0$ too.
#
# **$S = s\,QK^\top$** is a scaled matrix product: $\;dQ = s\, dS\, K$, $\;dK = s\, dS^\top Q$.
# The mask and the scale are not tensors to differentiate, so they get `None`.

# %% [markdown]
# ## Worked example: the softmax Jacobian, checked
#
# For one row of five scores, compare autograd's full Jacobian with $\operatorname{diag}(p) -
# pp^\top$, and the one-line product with $J^\top v$. Then drop the row-sum term, and drop it
# the other popular way, treating softmax like an element-wise sigmoid with derivative
# $p(1-p)$: both keep only (part of) the diagonal.

# %%
s = torch.randn(5, dtype=torch.float64)
p = torch.softmax(s, dim=0)
J = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, dim=0), s)
print("J = diag(p) - p p^T:", torch.allclose(J, torch.diag(p) - torch.outer(p, p)))

v = torch.randn(5, dtype=torch.float64)  # plays the role of dP for this row
right = p * (v - (v * p).sum())
print("p * (v - sum(v * p)) = J^T v:", torch.allclose(J.T @ v, right))
for name, wrong in [("p * v", p * v), ("p * (1 - p) * v", p * (1 - p) * v)]:
    print(f"{name:>16}: largest error {(wrong - J.T @ v).abs().max().item():.3f}")

fig, axes = plt.subplots(1, 3, figsize=(9, 2.8))
for ax, matrix, title in zip(axes, [J, torch.diag(p), -torch.outer(p, p)],
                             ["J", "diag(p)", "−p pᵀ (the row-sum term)"]):
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-0.3, vmax=0.3)
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()

# %% [markdown]
# ## Masks, and which way round they go
#
# A boolean mask broadcastable to $(\dots, L_q, L_k)$ says which keys each query may use.
# Two shapes cover most uses:
#
# - **causal**, $(L_q, L_k)$: query $i$ sees keys $0..i$,
#   `torch.ones(L, L, dtype=torch.bool).tril()`;
# - **padding**, $(B, 1, 1, L_k)$: in batch element $b$ only the first `length[b]` keys are real.
#
# Now the trap. PyTorch has **two conventions** for a boolean mask:
#
# | API | `True` means |
# |---|---|
# | `F.scaled_dot_product_attention(..., attn_mask=mask)` | this pair **takes part** in attention |
# | `nn.MultiheadAttention(...)(attn_mask=..., key_padding_mask=...)` | this pair is **not allowed** |
#
# This course uses the first: **`True` = attend, `False` = masked out**, so forward fills
# `scores.masked_fill(~mask, float("-inf"))`. A mask built for one API and passed to the other
# silently attends to exactly the wrong keys:

# %%
q = k = v = torch.randn(1, 4, 8)
causal = torch.ones(4, 4, dtype=torch.bool).tril()
print("mask:\n", causal.int())
right = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
wrong = F.scaled_dot_product_attention(q, k, v, attn_mask=~causal)
print("first query, right polarity:", right[0, 0, :3])
print("first query, reversed mask: ", wrong[0, 0, :3])
print("last query, reversed mask (no key left):", wrong[0, 3, :3])

# %% [markdown]
# With the mask reversed, the last query has no key left at all. A plain softmax of a row of
# $-\infty$ is $0/0$, `nan`; recent versions of `F.scaled_dot_product_attention` return zeros
# for such a row instead. In this lesson every query keeps at least one key, so the question
# does not arise, but a model that pads must make sure of it.

# %% [markdown]
# ## ✎ Exercise 1 · `ScaledDotProductAttention`
#
# Write `ScaledDotProductAttention`, with `ScaledDotProductAttention.apply(Q, K, V, scale,
# mask=None)` returning `softmax(Q @ K^T * scale, masked) @ V` for `Q (..., Lq, d)`,
# `K (..., Lk, d)`, `V (..., Lk, dv)`, a Python-float `scale`, and `mask` either `None` or a
# boolean tensor broadcastable to `(..., Lq, Lk)` with `False` = masked out.
#
# - Forward may use `torch.softmax` (or subtract the row maximum before `exp` yourself: never
#   exponentiate raw scores, which overflow at about 88 in float32). Save what backward needs.
# - Backward must follow the formulas above, **by hand**: no `torch.autograd.grad` inside it and
#   no built-in `*_backward` op. Return `None` for `scale` and `mask`.
# - Transpose with `.transpose(-2, -1)`, so that any number of leading dimensions works.

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
# Against PyTorch's own attention on a batch of 2 sequences with 4 heads, a causal mask and
# $L_q \ne L_k$, in float32:

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
# ## What the gradients look like
#
# One head, ten tokens, causal mask, and a loss $L = \sum O \odot T$ for a random target $T$
# (so $dO = T$). Left: the attention weights $P$. Middle: $dP$, the gradient with respect to the
# weights, which knows nothing about the mask. Right: $dS$, the gradient with respect to the
# scores. The mask zeroes it above the diagonal, and **each row of $dS$ sums to zero**: adding
# the same number to all the scores of a row does not change the softmax, so the loss cannot
# change in that direction. That makes a quick sanity check for any attention backward.

# %%
L, d = 10, 8
q, k, v, target = torch.randn(L, d), torch.randn(L, d), torch.randn(L, d), torch.randn(L, d)
causal = torch.ones(L, L, dtype=torch.bool).tril()
scores = ((q @ k.T) / math.sqrt(d)).masked_fill(~causal, float("-inf"))
weights = torch.softmax(scores, dim=-1)
grad_P = target @ v.T                                                   # dP = dO V^T
grad_S = weights * (grad_P - (grad_P * weights).sum(-1, keepdim=True))  # the softmax's VJP
print("rows of dS sum to zero:", torch.allclose(grad_S.sum(-1), torch.zeros(L), atol=1e-6))

fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
for ax, matrix, title, cmap in [(axes[0], weights, "attention weights P", "viridis"),
                                (axes[1], grad_P, "dL/dP", "RdBu_r"),
                                (axes[2], grad_S, "dL/dS (masked, rows sum to 0)", "RdBu_r")]:
    limit = matrix.abs().max().item()
    image = ax.imshow(matrix, cmap=cmap, vmin=0 if cmap == "viridis" else -limit, vmax=limit)
    ax.set(title=title, xlabel="key", ylabel="query")
    fig.colorbar(image, ax=ax, shrink=0.8)
plt.tight_layout()
plt.show()

# %% [markdown]
# And the gradients your Function hands back for the same problem. Query $i$'s gradient
# $dQ_i = s\sum_j dS_{ij} K_j$ mixes only the keys it could see; key $j$'s gradients
# $dK_j = s\sum_i dS_{ij} Q_i$ and $dV_j = \sum_i P_{ij}\, dO_i$ collect only from the queries
# that could see it. The last key is seen by the last query alone, so its $dV$ is just
# $P_{L-1,L-1}\, dO_{L-1}$. And the first query sees only the first key: its weight is 1
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
# ### Explore your Function: heads, queries, masks
#
# Your `ScaledDotProductAttention` on 4 heads of 8 tokens. Left, the weights $P$ its forward
# computes; middle, the $dS$ its backward produces; right, the selected query's row of each,
# with the reference values as black ticks. Tick **causal mask** or **padding mask**: masked
# keys (×) get weight 0 and $dS$ 0, and every row of $dS$ still sums to zero.

# %%
attention_explorer(ScaledDotProductAttention)

# %% [markdown]
# ## What is kept for backward, and how much
#
# Your forward saves $Q$, $K$, $V$ and $P$. The first three are inputs, which the caller keeps
# anyway; $P$ is $L_q \times L_k$ numbers **per head**. At $L = 4096$ that is 64 MiB per head
# in float32, per layer, which is why long sequences run out of memory. Autograd through the
# composed operations keeps the same $P$ (softmax saves its output, and `P @ V` needs it), plus
# the inverted mask `~mask` it computed on the way. A hand-written backward saves memory only if
# you decide to keep something smaller.

# %%
def saved_bytes(f, *args):
    """Bytes autograd keeps for backward while f(*args) runs, counting each piece of memory
    once and leaving out the tensor arguments, which the caller holds anyway."""
    own = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
    kept = {}

    def pack(tensor):
        key = tensor.untyped_storage().data_ptr()
        if key not in own:
            kept[key] = tensor.untyped_storage().nbytes()
        return tensor

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        f(*args)
    return sum(kept.values())


def composed_attention(Q, K, V, scale, mask):
    """The same attention, left to autograd."""
    scores = (Q @ K.transpose(-2, -1)) * scale
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ V


L, d = 256, 32
Q, K, V = (torch.randn(1, L, d, requires_grad=True) for _ in range(3))
causal = torch.ones(L, L, dtype=torch.bool).tril()
print(f"L = {L}, d = {d}, float32: P alone is {L * L * 4:,} bytes")
kept = saved_bytes(composed_attention, Q, K, V, 0.2, causal)
print(f"autograd through the composed ops keeps {kept:,} bytes besides the inputs")

# %%
kept = saved_bytes(ScaledDotProductAttention.apply, Q, K, V, 0.2, causal)
print(f"ScaledDotProductAttention keeps         {kept:,} bytes besides the inputs")

# %% [markdown]
# ## ✎ Stretch exercise · `MemoryEfficientAttention`
#
# Keep **one number per query** instead of $P$. For row $i$, with $m_i = \max_j S_{ij}$, the
# **log-sum-exp**
#
# $$\ell_i = m_i + \log \sum_j e^{S_{ij} - m_i}
#   \qquad\text{gives back every probability:}\qquad P_{ij} = e^{S_{ij} - \ell_i}.$$
#
# So forward saves $Q, K, V$, the output $O$ and $\ell$ (shape $(\dots, L_q)$), and backward
# recomputes $S$ and then $P$ from them. One more saving: the row-sum term does not need $P$
# either, because
#
# $$\operatorname{rowsum}(dP \odot P)_i = \sum_j P_{ij} \sum_c dO_{ic} V_{jc}
#   = \sum_c dO_{ic}\, O_{ic} = \operatorname{rowsum}(dO \odot O)_i .$$
#
# This is the bookkeeping FlashAttention is built on; FlashAttention also works through the
# keys in blocks so that even the temporary $S$ never exists in full (you may do that too, but
# you do not have to). Same signature and same rules as Exercise 1; pass the mask through
# `save_for_backward` (it accepts `None`).

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
# ## Saved bytes against sequence length
#
# One head, $d = 32$, float32, causal mask, lengths from 64 to 1024. On log-log axes a cost
# that grows like $L^2$ has slope 2 and one that grows like $L$ has slope 1. As before, the
# inputs ($Q$, $K$, $V$ and the mask) are the caller's and are left out.

# %%
lengths = [64, 128, 256, 512, 1024]
kept = {"autograd, composed ops": [], "ScaledDotProductAttention": [],
        "MemoryEfficientAttention": []}
for L in lengths:
    Q, K, V = (torch.randn(1, L, 32, requires_grad=True) for _ in range(3))
    causal = torch.ones(L, L, dtype=torch.bool).tril()
    for name, f in [("autograd, composed ops", composed_attention),
                    ("ScaledDotProductAttention", ScaledDotProductAttention.apply),
                    ("MemoryEfficientAttention", MemoryEfficientAttention.apply)]:
        kept[name].append(saved_bytes(f, Q, K, V, 0.2, causal))

print(f"{'L':>6}" + "".join(f"{name:>28}" for name in kept))
for i, L in enumerate(lengths):
    print(f"{L:>6}" + "".join(f"{values[i]:>28,}" for values in kept.values()))

fig, ax = plt.subplots(figsize=(6, 3.6))
for (name, values), marker in zip(kept.items(), ["o", "s", "^"]):
    ax.plot(lengths, values, marker=marker, label=name)
ax.set(xscale="log", yscale="log", xlabel="sequence length L",
       ylabel="bytes kept besides the inputs", title="What attention keeps for backward")
ax.set_xticks(lengths, [str(L) for L in lengths])
ax.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# The price is time: backward computes $QK^\top$ and the exponentials a second time.
# `tools/bench_attention.py` measures both at lengths up to 4096.

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `dS = P * dP` | wrong `dQ`, `dK` (`dV` is still right, which hides it) | `dS = P * (dP - (dP * P).sum(-1, keepdim=True))` |
# | `dS = P * (1 - P) * dP` (softmax treated like a sigmoid) | only the diagonal of the Jacobian | the same row-sum formula |
# | the row sum over `dim=-2` | sums over queries, not keys | `dim=-1, keepdim=True` |
# | a mask built for `nn.MultiheadAttention` (`True` = blocked) | attends to exactly the wrong keys | here `True` = attend: `masked_fill(~mask, -inf)` |
# | `exp(scores)` without subtracting the row maximum | `inf`, then `nan`, for large scores | `torch.softmax`, or `scores - scores.amax(-1, keepdim=True)` |
# | forgetting `scale` in `dQ` and `dK` | gradients off by a constant factor | `dQ = scale * dS @ K`, `dK = scale * dS^T @ Q` |
# | `K.T` on batched tensors | reverses every dimension, batch ones included (deprecated beyond 2-D) | `K.transpose(-2, -1)` |
# | `ctx.mask = mask` | no in-place check, breaks double backward | `ctx.save_for_backward(..., mask)` |
# | a "memory-efficient" version that saves `P` or the scores | no memory saved | save the log-sum-exp; recompute `P` |
#
# Where popular write-ups go wrong: the missing row sum is the classic one. A write-up that
# derives the softmax's derivative "element by element" as $p(1-p)$, or that writes
# $dS = P \odot dP$ "since the softmax is applied element-wise", keeps the diagonal of a
# Jacobian that is not diagonal. Your gradient for $V$ comes out right, so a test that only
# checks $dV$ passes; gradcheck on $Q$ and $K$ does not. And mask conventions get mixed up in
# code that moves from `nn.MultiheadAttention` to `F.scaled_dot_product_attention`: same
# boolean tensor, opposite meaning.
#
# ## Summary
#
# Attention's backward is three vector-Jacobian products in a row: two matrix products and a
# softmax whose Jacobian $\operatorname{diag}(p) - pp^\top$ turns into one line with a row sum.
# A boolean mask is not differentiated; it zeroes probabilities, and with them their
# gradients. What forward saves is your decision: $P$ costs $L_q L_k$ numbers per head, while
# one log-sum-exp per query row is enough to rebuild it, which is the idea that lets
# FlashAttention handle long sequences.
