# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 11 · Fused losses: the logits never materialised
#
# **About 120 minutes** for the main path: about 45 minutes to read and run it, the rest for
# the three exercises. The optional sections after the Summary take about 40 minutes more.
#
# A language model ends by multiplying its hidden states `x` $(N, d)$, one row per token, by a
# vocabulary matrix `weight` $(V, d)$, and scoring the $(N, V)$ logits with a cross-entropy. At
# $N = 8192$ tokens and $V = 128\text{k}$ the float32 logits alone take **4 GiB**. Fused losses
# (Liger-Kernel's fused linear cross-entropy, Apple's Cut Cross-Entropy) never create them:
# they work on a few rows at a time. Where the gradients then come from, when backward has no
# logits, is the design question of this lesson.
#
# By the end of this lesson you can:
# 1. derive the cross-entropy's backward, with what `ignore_index` changes in it;
# 2. write a stable `CrossEntropy` Function that keeps, beyond the logits, $O(N)$ memory for
#    backward;
# 3. compute a loss chunk by chunk, and decide where its gradients are computed;
# 4. say what `ctx.needs_input_grad` and `torch.is_grad_enabled()` can tell a Function's
#    forward, and skip the gradients nobody will use;
# 5. add label smoothing and z-loss to a cross-entropy, backward included, on your own.
#
# Exercises: **✎ 1 `CrossEntropy`**, **✎ 2 `linear_cross_entropy`** (with its Function
# `LinearCrossEntropy`), and the transfer exercise **✎ 3 `SmoothedCrossEntropy`**.

# %% nbgrader={"locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.graph import saved_tensors_hooks

from autograder import self_check
from autograder.memory import TensorAccounting
from autograder.predictions import compare_all, written
from autograder.probes import CountFlops
from widgets import fused_loss_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # small tensors: one thread is fastest, and results do not vary with it


def first_line(error: BaseException) -> str:
    """The first line of an error message, which is where PyTorch says what went wrong."""
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"


def saved_shapes(loss_fn, *inputs):
    """The shape of every tensor autograd keeps for backward when ``loss_fn(*inputs)`` runs."""
    shapes = []

    def pack(tensor):
        shapes.append(tuple(tensor.shape))
        return tensor.detach()  # not the tensor itself: a saved output would hold its own graph

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = loss_fn(*inputs)
    return loss, shapes


# %% [markdown]
# ## Where the memory goes
#
# A small model's last layer: $N = 1024$ tokens, $d = 64$, $V = 8192$. One float32 $(N, V)$
# tensor is 32 MiB, while `x` is 0.25 MiB and `weight` 2 MiB.
#
# **Predict, then run.** Which tensors does autograd keep for backward of
# `F.cross_entropy(F.linear(x, weight), target)`? In units of one $(N, V)$ tensor, how much
# new memory is that, what is the peak of the tensors the forward creates, and the peak of the
# whole step, forward then backward? Write your prediction into `predicted_memory` first.

# %%
### BEGIN WORKED
predicted_memory = {"kept for backward, in (N, V) tensors": 1,
                    "forward peak in (N, V) tensors": 2, "whole-step peak in (N, V) tensors": 3}
### LEARNER
predicted_memory = {"kept for backward, in (N, V) tensors": None,
                    "forward peak in (N, V) tensors": None,
                    "whole-step peak in (N, V) tensors": None}
### END WORKED

# %%
N, d, V = 1024, 64, 8192
x = torch.randn(N, d, requires_grad=True)
weight = (torch.randn(V, d) / d ** 0.5).requires_grad_()
target = torch.randint(0, V, (N,))

with TensorAccounting() as books:  # counts the tensors created inside, alive at each moment
    books.start("forward")
    loss, shapes = saved_shapes(lambda: F.cross_entropy(F.linear(x, weight), target))
    kept = books.live_bytes()  # alive when forward ends: what it keeps for backward, the loss
    books.start("backward")  # each phase's peak counts from what was alive when it began
    loss.backward()
one_logits = N * V * 4
forward, backward = books.phases["forward"], books.phases["backward"]
whole = max(forward.peak, kept + backward.peak)
if written(predicted_memory):  # the printout holds the answers
    print("kept for backward:", shapes)
    print(f" forward peak: {forward.peak / one_logits:.1f} x (N, V), largest tensor "
          f"{forward.largest.shape}; alive when it ends: {kept / one_logits:.1f} x (N, V)")
    print(f"backward peak: {backward.peak / one_logits:.1f} x (N, V) created, "
          f"largest tensor {backward.largest.shape}\n")
compare_all(predicted_memory, {
    "kept for backward, in (N, V) tensors": round(kept / one_logits, 1),
    "forward peak in (N, V) tensors": round(forward.peak / one_logits, 1),
    "whole-step peak in (N, V) tensors": round(whole / one_logits, 1)})

# %% [markdown]
# <details><summary><b>What happened</b> (open after your prediction)</summary>
#
# `F.linear` keeps `x` and `weight` (its inputs: no new memory; the weight appears as
# $(d, V)$, the transposed view it saves). `F.cross_entropy`, `log_softmax` then `nll_loss`,
# keeps the log-probabilities: one $(N, V)$ tensor, listed twice (the output of one op, the
# input of the next), beside the $(N,)$ targets and a 0-d weight total. Forward peaks at
# **two** $(N, V)$ tensors, the logits and the log-probabilities; backward creates two more
# while the log-probabilities are alive, so the step peaks at **three**, 96 MiB, for a loss
# that is one number.
# </details>
#
# ## The loss, and how to compute it stably
#
# Row $i$ has logits $z_i \in \mathbb{R}^V$ and a target class $y_i$. Its loss is minus the
# log of the softmax probability of the target:
#
# $$\ell_i = -\log \frac{e^{z_{i y_i}}}{\sum_k e^{z_{ik}}}
#    = \underbrace{\log \sum_k e^{z_{ik}}}_{\operatorname{lse}(z_i)} - z_{i y_i},
#  \qquad L = \frac{1}{M} \sum_{i \,:\, y_i \ne \text{ignore}} \ell_i ,$$
#
# where `ignore_index` marks rows that do not count (padding, a prompt) and $M$ is the number
# of rows that do.
#
# **Predict, then run.** Logits of magnitude $10^4$ happen (a diverged model, a small
# temperature). What does the first expression for $\ell_i$, taken literally, give in float64
# for the two rows below (a number, `inf` or `nan`), and what does `F.cross_entropy` give
# (work it out)? Write your prediction into `predicted_stability` first.

# %%
### BEGIN WORKED
predicted_stability = {"textbook": "nan", "F.cross_entropy": 4999}
### LEARNER
predicted_stability = {"textbook": None, "F.cross_entropy": None}
### END WORKED

# %%
huge = torch.tensor([[1e4, -1e4, 0.0], [3.0, 1e4, 2.0]], dtype=torch.float64)
huge_target = torch.tensor([0, 2])
textbook = (-(huge.exp() / huge.exp().sum(1, keepdim=True)).log()
            .gather(1, huge_target[:, None])).mean()
stable = F.cross_entropy(huge, huge_target)
if written(predicted_stability):  # the printout holds the answers
    print("textbook:", textbook.item(), "   F.cross_entropy:", stable.item())
compare_all(predicted_stability, {"textbook": textbook.item(), "F.cross_entropy": stable.item()})

# %% [markdown]
# <details><summary><b>What happened</b> (open after your prediction)</summary>
#
# $e^{10^4}$ is `inf` even in float64 (its limit is about $e^{709}$, float32's $e^{88}$), and
# `inf / inf` is `nan`. `F.cross_entropy` shifts by the row's maximum $m_i$:
# $\operatorname{lse}(z_i) = m_i + \log\sum_k e^{z_{ik} - m_i}$, every exponent then $\le 0$.
# Row 0's loss is 0, row 1's $10^4 - 2$, their mean 4999. The log of a probability is a
# further trap: $e^{-10^4}$ is exactly 0 in any float, and its log $-\infty$.
# </details>
#
# ## Derive the backward, one step at a time
#
# Backward receives `grad_output`, a scalar $g$, and returns $\partial/\partial z_{ij}$ for
# every logit.
#
# **Step 1, one row.** Differentiate $\operatorname{lse}(z_i)$ with respect to $z_{ij}$. Which
# familiar function of the row is it?
#
# **Step 2, the target term.** Differentiate $-z_{i y_i}$. For which $j$ is it not zero?
# Combine with step 1, and write it for the whole $(N, V)$ matrix with a one-hot matrix $Y$,
# $Y_{ij} = [j = y_i]$.
#
# **Step 3, the mean.** What is $\partial L / \partial z_{ij}$ for a counted row, and for an
# ignored one? Is $M$ the number of rows $N$? Then multiply by $g$.
#
# Autograd's answer on a small example, rows 1 and 3 ignored, is below: what are the ignored
# rows, each other row's sum, the entry at the target? Then try steps 1 and 2 in
# `my_grad_row`, the gradient of **one row's** loss with respect to its logits; the checker
# says which class is off. Step 3 is `CrossEntropy`'s backward.

# %%
generator = torch.Generator().manual_seed(0)  # the same logits on every rerun
logits = torch.randn(5, 4, dtype=torch.float64, generator=generator).requires_grad_()
labels = torch.tensor([2, -100, 0, -100, 3])
F.cross_entropy(logits, labels).backward()
print("autograd's grad_logits:\n", logits.grad.numpy().round(4) + 0.0)  # + 0.0: no -0.
print("row sums:", logits.grad.sum(1).numpy().round(12) + 0.0)


def my_grad_row(z, y):
    """d(lse(z) - z[y])/dz for one row z of C logits and its target class y: steps 1 and 2."""
    ### BEGIN WORKED
    return torch.softmax(z, dim=0) - F.one_hot(torch.tensor(y), len(z))
    ### LEARNER
    return torch.zeros_like(z)  # replace with yours
    ### END WORKED


from autograder.ungraded import check_grad_row

check_grad_row(my_grad_row)

# %% [markdown]
# <details><summary><b>Hint</b> · a question for each step</summary>
#
# - Step 1: the derivative of $\log u$ is $u'/u$; what is $\partial e^{z_{ik}}/\partial z_{ij}$
#   for $k = j$ and for $k \ne j$?
# - Step 2: which entries $j$ does $z_{iy_i}$ depend on?
# - Step 3: how many terms of $\frac1M\sum_i \ell_i$ contain row $i$'s logits, and what does
#   an ignored row contribute?
# </details>
#
# <details><summary><b>Numbers to hit</b> (after your attempt)</summary>
#
# Logits with rows $(1, 2, 0.5)$, $(0, 0, 0)$ and $(3, -1, 0)$, targets $(1, -100, 0)$,
# `ignore_index` $= -100$, $g = 1$: the gradient has rows $(0.1156, -0.1857, 0.0701)$,
# $(0, 0, 0)$ and $(-0.0319, 0.0086, 0.0233)$. Each row adds up to $0$: which of your terms
# sees to that?
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `CrossEntropy`
#
# Write `CrossEntropy`, with `CrossEntropy.apply(logits, target, ignore_index)`: the value and
# gradient of `F.cross_entropy(logits, target, ignore_index=ignore_index)` for `logits`
# $(N, C)$, `target` $(N,)$ int64 and `ignore_index` any int, a class or not, with at least
# one row counted.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Forward and backward are stable at logits of magnitude $10^4$, in float32 and float64.
# - Beyond the logits themselves, what forward keeps for backward is $O(N)$ elements.
#
# <details><summary><b>Hint</b> · a question</summary>
#
# What does `gather` do with a target of -100?
# </details>

# %% nbgrader={"grade_id": "answer_CrossEntropy", "solution": true}
class CrossEntropy(torch.autograd.Function):
    """F.cross_entropy(logits, target, ignore_index=ignore_index), mean over counted rows."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index=-100):
        ### BEGIN SOLUTION
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)  # a valid index for every row
        lse = torch.logsumexp(logits, dim=1)  # shifts by the row maximum inside
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)  # z_{i, y_i}
        losses = torch.where(counted, lse - picked, 0.0)
        ctx.save_for_backward(logits, lse, safe_target, counted)  # one (N, C) tensor: logits
        return losses.sum() / counted.sum()
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        logits, lse, target, counted = ctx.saved_tensors
        grad_logits = torch.exp(logits - lse[:, None])  # the softmax P, recomputed
        rows = torch.arange(len(target), device=target.device)
        grad_logits[rows, target] -= 1  # P - Y
        scale = grad_output * counted / counted.sum()  # g / M on counted rows, 0 on ignored
        return grad_logits * scale[:, None], None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "CrossEntropy", "grade": true, "points": 3}
self_check("CrossEntropy", CrossEntropy)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("CrossEntropy", CrossEntropy)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Step 1: $\partial \operatorname{lse}(z_i)/\partial z_{ij} = e^{z_{ij}}/\sum_k e^{z_{ik}} =
# p_{ij}$, the softmax. Step 2: $\partial \ell_i / \partial z_{ij} = p_{ij} - [j = y_i]$, for
# the whole matrix $P - Y$, **softmax minus one-hot**; each row sums to 0. Step 3:
#
# $$\frac{\partial L}{\partial z_{ij}} = \frac{g}{M}\,\big(p_{ij} - [j = y_i]\big)
#   \ \text{for a counted row}, \qquad 0 \ \text{for an ignored row}.$$
#
# Backward needs $P$, an $(N, V)$ tensor: keep the logits (which exist anyway) and the per-row
# $\operatorname{lse}$, and recompute $P = e^{z - \operatorname{lse}}$ in backward.
# </details>
#
# The picture of the derivation's example, scaled by $M$: the softmax, minus the one-hot,
# masked.

# %%
P = torch.softmax(logits.detach(), 1)
Y = torch.zeros_like(P)
Y[[0, 2, 4], [2, 0, 3]] = 1
fig, axes = plt.subplots(1, 3, figsize=(9, 2.6))
for ax, matrix, title in zip(axes, [P, -Y, 3 * logits.grad],
                             ["softmax P", "− one-hot Y", "M · grad (rows 1, 3 ignored)"]):
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("class j")
    ax.set_yticks(range(5))
axes[0].set_ylabel("row i")
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()

# %% [markdown]
# Your Function at logits of magnitude $10^4$, rows 1 and 3 ignored, against
# `F.cross_entropy`:

# %%
big = torch.tensor([[1e4, -1e4, 0.0], [3.0, 1e4, 2.0], [-1e4, 5.0, 1e4], [0.0, 0.0, 0.0]],
                   dtype=torch.float64, requires_grad=True)
big_target = torch.tensor([0, -100, 1, -100])
mine = CrossEntropy.apply(big, big_target, -100)
grad_mine, = torch.autograd.grad(mine, big)
theirs = F.cross_entropy(big, big_target)
grad_theirs, = torch.autograd.grad(theirs, big)
print(f"loss: yours {mine.item():.4f}, F.cross_entropy {theirs.item():.4f}")
print("gradients equal:", torch.allclose(grad_mine, grad_theirs))

# %% [markdown]
# ## From logits to hidden states
#
# Now put the matrix product inside: $z = x W^\top$, $W$ of shape $(V, d)$, and
# $G = \partial L/\partial z$, the $(N, V)$ matrix of ✎ 1 (every row counts here, so $M = N$).
#
# 1. Write $\text{grad}_x$ and $\text{grad}_W$ in terms of $G$, $x$ and $W$, with their
#    shapes.
# 2. Row $i$ of $G$ needs which rows of the logits? Which rows of $G$ does row $i$ of
#    $\text{grad}_x$ need, and which does $\text{grad}_W$ need?
#
# Try your answer to 1 in `my_linear_grads`, against autograd.

# %%
def my_linear_grads(G, x, weight):
    """grad_x and grad_W for z = x @ weight.T, given G = dL/dz: your answer to question 1."""
    ### BEGIN WORKED
    return G @ weight, G.T @ x
    ### LEARNER
    return torch.zeros_like(x), torch.zeros_like(weight)  # replace with yours
    ### END WORKED


from autograder.ungraded import check_linear_grads

check_linear_grads(my_linear_grads)

# %% [markdown]
# <details><summary><b>Hint</b> · for question 1</summary>
#
# Write one entry: $z_{ik} = \sum_m x_{im} W_{km}$. Which $z$ entries does $x_{im}$ appear
# in, and with which factor? And $W_{km}$? Each sum is one matrix product; the shapes tell you
# which factor is transposed.
# </details>
#
# Keep your answer to question 2: it decides what a chunked loop can do.
#
# ### Step 1: the loss chunk by chunk, and what autograd keeps of it (not graded)
#
# Write `chunked_cross_entropy(x, weight, target, chunk_size)` returning
# `F.cross_entropy(x @ weight.T, target)` by a loop over chunks of `chunk_size` rows: compute
# that chunk's logits, add up **each row's** loss, and divide by $N$ once at the end. No
# Function yet. The next cell checks the value and the largest tensor your loop creates.

# %% nbgrader={"grade_id": "answer_chunked_cross_entropy", "solution": true}
def chunked_cross_entropy(x, weight, target, chunk_size):
    """F.cross_entropy(x @ weight.T, target), chunk_size rows of logits at a time."""
    ### BEGIN SOLUTION
    total = x.new_zeros(())
    for start in range(0, x.shape[0], chunk_size):
        logits = x[start:start + chunk_size] @ weight.T  # (chunk_size, V)
        picked = logits.gather(1, target[start:start + chunk_size, None]).squeeze(1)
        total = total + (torch.logsumexp(logits, dim=1) - picked).sum()
    return total / x.shape[0]
    ### END SOLUTION


# %%
from autograder.ungraded import check_chunked

check_chunked(chunked_cross_entropy)

# %% [markdown]
# Now give your loop inputs that require grad. Before you run the next cell: how many $(N, V)$
# tensors' worth of chunk-sized tensors will autograd keep for backward, against the composed
# loss's one?

# %%
chunk_storages = set()  # each (128, V) tensor once, however many ops keep it


def remember(tensor):
    if tuple(tensor.shape) == (128, V):
        chunk_storages.add(tensor.untyped_storage().data_ptr())
    return tensor.detach()  # not the tensor itself: a saved output would hold its own graph


with saved_tensors_hooks(remember, lambda tensor: tensor):
    chunked_loss = chunked_cross_entropy(x, weight, target, 128)
print(f"(128, {V}) tensors kept for backward: {len(chunk_storages)}, "
      f"{len(chunk_storages) * 128 * V * 4 / one_logits:.2f} x (N, V)")

# %% [markdown]
# <details><summary><b>What happened</b> (open after your answer)</summary>
#
# Backward needs some $(c, V)$ tensor of every chunk: the course's loop keeps each chunk's
# logits (`logsumexp` and `gather` keep the same tensor, counted once), $N/c$ chunks of
# $(c, V)$, the whole $(N, V)$ again. Chunking the forward alone saves nothing for training.
# </details>
#
# ### Step 2: where the gradients come from
#
# Backward needs each chunk's logits, and keeping them all is the memory the chunks were to
# save. Name two ways out, and the cost of each in FLOPs and memory. A hint for each: what did
# lesson 05 do with activations it did not keep? And what does backward receive here, and how
# much of what it returns could exist before that arrives?

# %% [markdown]
# ### Step 3: what forward can see of grad mode
#
# If a design of yours did gradient work in forward, how would forward know to skip it when
# nobody will call backward, as under `torch.no_grad()`? It could ask `ctx.needs_input_grad` or
# `torch.is_grad_enabled()`.
#
# **Predict, then run.** What do they say inside forward, called normally, under
# `torch.no_grad()`, and with inputs that do not require grad? Write your prediction into
# `predicted_grad_mode` first.

# %%
predicted_grad_mode = {"normal call": None, "torch.no_grad()": None,
                       "inputs without grad": None}

# %%
print("you predicted:", predicted_grad_mode)
class Probe(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        print(f"   needs_input_grad={ctx.needs_input_grad}, "
              f"is_grad_enabled()={torch.is_grad_enabled()}")
        return (a * b).sum()

    @staticmethod
    def backward(ctx, grad_output):
        return None, None


a, b = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
print("normal call:")
out = Probe.apply(a, b)
print("   output requires grad:", out.requires_grad)
print("under torch.no_grad():")
with torch.no_grad():
    out = Probe.apply(a, b)
print("   output requires grad:", out.requires_grad)
print("inputs that do not require grad:")
out = Probe.apply(a.detach(), b.detach())

# %% [markdown]
# <details><summary><b>What happened</b> (open after your prediction)</summary>
#
# `ctx.needs_input_grad` says only whether each **input requires grad**: under
# `torch.no_grad()` it still says `(True, True)`, though backward will never run. Inside
# forward `torch.is_grad_enabled()` is **always** `False`: `Function.apply` switches grad mode
# off around forward. Neither tells forward the caller's grad mode: how ✎ 2 learns it is your
# design decision.
# </details>
#
# ### Step 4: low precision
#
# In float16 and bfloat16 a loss and $\text{grad}_W$ summed over many chunks lose accuracy at
# every addition: bfloat16 keeps 8 significant bits, so a small term added to a large running
# sum is rounded away. A running sum of 4096 numbers of about 1:

# %%
terms = torch.rand(4096, generator=torch.Generator().manual_seed(0)) + 0.5
running = torch.zeros((), dtype=torch.bfloat16)
for term in terms.to(torch.bfloat16):
    running = running + term
exact = terms.double().sum().item()
print(f"exact {exact:.1f}; bfloat16 running sum {running.item():.1f}")

# %% [markdown]
# So for bfloat16 inputs, in which dtype must the running loss and $\text{grad}_W$ be kept, and
# when do you cast to the input's dtype? (float16 has traps of its own: see "Common mistakes"
# after the Summary.)
#
# ## ✎ Exercise 2 · `linear_cross_entropy`
#
# Write the Function `LinearCrossEntropy` and the function `linear_cross_entropy(x, weight,
# target, chunk_size=1024)`, which calls `LinearCrossEntropy.apply(...)`: the value and
# gradients of `F.cross_entropy(x @ weight.T, target)`, the mean over all $N$ rows, for `x`
# $(N, d)$ with at least one row, `weight` $(V, d)$, `target` $(N,)$ and any `chunk_size`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Stable at logits of magnitude $10^4$ in float32 and float64; in float16 and bfloat16, the
#   loss and gradients in the input's dtype, within about one rounding of their largest entry.
# - No tensor larger than one chunk of logits, `x` or `weight`, in any grad mode, and at most
#   eight chunk-sized tensors alive at once in forward.
# - What forward keeps for backward is $O(Nd + Vd)$ elements, any tensor of `x`'s or `weight`'s
#   shape in its dtype, and backward returns new tensors.
# - Forward and backward together do at most one matrix product beyond the composed loss's
#   three (about $2NdV$ FLOPs each), and no matrix product for a gradient nobody needs, under
#   `torch.no_grad()` included.


# %% nbgrader={"grade_id": "answer_linear_cross_entropy", "solution": true}
class LinearCrossEntropy(torch.autograd.Function):
    """F.cross_entropy(x @ weight.T, target), chunk_size rows of logits at a time."""

    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        ### BEGIN SOLUTION
        # False under torch.no_grad() too: linear_cross_entropy then hands in detached inputs
        want_x, want_weight = ctx.needs_input_grad[:2]
        N = x.shape[0]
        wide = torch.promote_types(x.dtype, torch.float32)  # accumulate in float32 or wider
        weight_wide = weight.to(wide)
        loss = torch.zeros((), dtype=wide, device=x.device)
        grad_x = torch.empty(x.shape, dtype=wide, device=x.device) if want_x else None
        grad_weight = torch.zeros(weight.shape, dtype=wide, device=x.device) if want_weight else None
        for start in range(0, N, chunk_size):
            rows = slice(start, start + chunk_size)
            x_chunk, target_chunk = x[rows].to(wide), target[rows]
            logits = x_chunk @ weight_wide.T  # (c, V): the one chunk-sized buffer
            picked = logits.gather(1, target_chunk[:, None])  # z_{i, y_i}
            row_max = logits.amax(dim=1, keepdim=True)
            probs = logits.sub_(row_max).exp_()  # in place: e^{z - max}, still one buffer
            sums = probs.sum(dim=1, keepdim=True)
            loss += (row_max + sums.log() - picked).sum()  # lse - z_{i, y_i}, row by row
            if want_x or want_weight:
                probs /= sums  # the softmax P
                probs[torch.arange(len(target_chunk), device=x.device), target_chunk] -= 1
                probs /= N  # G = (P - Y) / N for these rows
                if want_x:
                    grad_x[rows] = probs @ weight_wide
                if want_weight:
                    grad_weight.addmm_(probs.T, x_chunk)  # += G^T x, summed over chunks
            del logits, probs  # let this chunk go before the next one exists
        ctx.save_for_backward(None if grad_x is None else grad_x.to(x.dtype),
                              None if grad_weight is None else grad_weight.to(weight.dtype))
        return (loss / N).to(x.dtype)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        grad_x, grad_weight = ctx.saved_tensors
        # new tensors: a second backward must find the saved gradients unchanged
        return (None if grad_x is None else grad_output * grad_x,
                None if grad_weight is None else grad_output * grad_weight,
                None, None)
        ### END SOLUTION


def linear_cross_entropy(x, weight, target, chunk_size=1024):
    """F.cross_entropy(x @ weight.T, target), never materialising the N x V logits."""
    ### BEGIN SOLUTION
    # inside forward grad mode is always off: only the caller can see torch.no_grad(), and
    # detached inputs make forward's ctx.needs_input_grad say False
    if not torch.is_grad_enabled():
        x, weight = x.detach(), weight.detach()
    return LinearCrossEntropy.apply(x, weight, target, chunk_size)
    ### END SOLUTION


# %% nbgrader={"grade_id": "linear_cross_entropy", "grade": true, "points": 5}
self_check("linear_cross_entropy", linear_cross_entropy)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("linear_cross_entropy", linear_cross_entropy)
### END HIDDEN TESTS

# %% [markdown]
# **After your self-check is green: four ways forward could learn of grad mode.** Which work,
# and where is grad mode asked in each?
#
# - (a) hand `torch.is_grad_enabled()` to `apply` as one more argument;
# - (b) ask `torch.is_grad_enabled()` inside forward, under `with torch.enable_grad():`;
# - (c) when grad mode is off, hand `apply` `x.detach()` and `weight.detach()`;
# - (d) ask `torch.is_grad_enabled()` in backward, and skip the work there.
#
# Write your answer into `grad_mode_design`; the next cell tries all four under
# `torch.no_grad()`.

# %%
grad_mode_design = {
    "where to ask": None,  # "forward", "backward" or "the wrapper, before apply"
    "ways that work": None,  # a set of letters, e.g. {"a"}
}

# %%
from autograder.ungraded import try_grad_mode_designs

try_grad_mode_designs(grad_mode_design)  # (a)-(d), each with grad mode on and under no_grad

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Step 2's two ways: backward recomputes each chunk's logits, one more $2NdV$-FLOP product,
# as checkpointing does in lesson 05 (Apple's Cut Cross-Entropy); or forward computes the
# gradients while each chunk's logits exist, and backward only multiplies them by $g$: no
# extra product, but both gradients are computed, and kept, before anyone knows they are
# wanted (Liger-Kernel's, and the course's solution). The contract allows either: the
# first does four products, the second three. Asking autograd for each chunk's gradients
# inside forward (`torch.autograd.grad` under `torch.enable_grad()`, as Liger-Kernel's chunked
# losses do with `torch.func.grad_and_value`) is the second way written another way, and meets
# the contract: its graph lives for one chunk, and it is asked only for the gradients wanted.
#
# $\text{grad}_x = G\, W$ $(N \times d)$ and $\text{grad}_W = G^\top x$ $(V \times d)$. Row $i$
# of $G$ needs only row $i$ of the logits; row $i$ of $\text{grad}_x$ only row $i$ of $G$,
# while $\text{grad}_W = \sum_i G_i^\top x_i$ is a **sum over rows**. So with
# $G_c = (P_c - Y_c)/N$ for a chunk, $\text{grad}_x[s:s+c] = G_c W$ is complete and
# $\text{grad}_W \mathrel{+}= G_c^\top x[s:s+c]$; $N$ is known before the first chunk, so each
# share is final. Forward saves the two gradients; backward returns `grad_output * grad_x`, a
# new tensor.
#
# Grad mode: (a) and (c) work; (b) asks a question whose answer it has just set, and (d) asks
# too late (under `torch.no_grad()` backward never runs). Ask in `linear_cross_entropy`, where
# the caller's grad mode is still in force, and pass it on, or pass detached inputs, which make
# `ctx.needs_input_grad` say `False`.
#
# Low precision: float32 for the loss, $\text{grad}_W$, each chunk's softmax and $G$; cast to
# the input's dtype once, at the end: the loss after the division by $N$, the gradients before
# they are saved.
# </details>

# %% [markdown]
# Your fused loss on the model of the first section, against the composed one: the loss, the
# gradients, the peak of the whole step, and the FLOPs forward does with grad mode on and off
# (`CountFlops` is the grader's counter).

# %%
def peak_and_grads(loss_fn):
    x_, weight_ = x.detach().clone().requires_grad_(), weight.detach().clone().requires_grad_()
    with TensorAccounting() as books_:  # one phase: the peak of forward and backward together
        loss_ = loss_fn(x_, weight_, target)
        loss_.backward()
    return loss_.item(), books_.phase.peak, x_.grad, weight_.grad


composed = peak_and_grads(lambda a_, b_, t_: F.cross_entropy(F.linear(a_, b_), t_))
fused = peak_and_grads(lambda a_, b_, t_: linear_cross_entropy(a_, b_, t_, 64))
print(f"loss: composed {composed[0]:.6f}, fused {fused[0]:.6f}")
print("gradients close:", torch.allclose(composed[2], fused[2], atol=1e-6),
      torch.allclose(composed[3], fused[3], atol=1e-6))
print(f"peak: composed {composed[1] / 2**20:.1f} MiB, fused {fused[1] / 2**20:.1f} MiB "
      f"({composed[1] / fused[1]:.1f}x lower)")
for grad_mode in (True, False):
    with torch.set_grad_enabled(grad_mode), CountFlops() as counter:
        linear_cross_entropy(x, weight, target, 64)
    print(f"grad mode {'on ' if grad_mode else 'off'}: forward did "
          f"{counter.total / (2 * N * d * V):.0f} x 2NdV FLOPs")

# %% [markdown]
# ## ✎ Exercise 3 · `SmoothedCrossEntropy` (transfer: nobody works this one through)
#
# Two changes to the loss are in almost every large training recipe. **Label smoothing**
# (Szegedy et al., 2016) trains against a softened target: weight $1 - \varepsilon$ on the
# true class and $\varepsilon / C$ spread over all $C$ classes. **z-loss** (PaLM, 2022) adds
# $\lambda \operatorname{lse}(z_i)^2$ per row, which keeps the log-sum-exp near 0; PaLM found
# it made training more stable.
#
# Write `SmoothedCrossEntropy`, with
# `SmoothedCrossEntropy.apply(logits, target, ignore_index, label_smoothing, z_loss)` returning
#
# ```python
# F.cross_entropy(logits, target, ignore_index=ignore_index, label_smoothing=label_smoothing)
#   + z_loss * (mean over the counted rows of torch.logsumexp(logits, -1) ** 2)
# ```
#
# and its gradient, for `logits` $(N, C)$, `target` $(N,)$ int64, `ignore_index` any int,
# `label_smoothing` in $[0, 1]$ and `z_loss` $\geq 0$, with at least one row counted.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Forward and backward are stable at logits of magnitude $10^4$, in float32 and float64.
# - Forward saves the logits themselves and, besides them, only tensors of at most $N$
#   elements.
#
# Start from the loss per row as a function of $\operatorname{lse}(z_i)$, $z_{iy_i}$ and the
# row's logits, and differentiate each piece as in ✎ 1.
#
# <details><summary><b>Hint 1</b> · a question</summary>
#
# With label smoothing, PyTorch's per-row loss is
# $(1 - \varepsilon)\,\ell_i + \varepsilon \cdot \frac1C\sum_j\big(-\log p_{ij}\big)$. What is
# the row mean of $-\log p_{ij}$ in terms of $\operatorname{lse}(z_i)$ and the row's logits?
# And what is $\partial\,\operatorname{lse}(z_i)^2 / \partial z_{ij}$?
# </details>
#
# <details><summary><b>Hint 2</b> · numbers to hit</summary>
#
# For the row $z = (1, 2, 0.5)$ alone: the gradient of the row mean of $-\log p_j$ is
# $(-0.1021, 0.2952, -0.1931)$, and that of $\operatorname{lse}(z)^2$ is
# $(1.1396, 3.0979, 0.6912)$. Logits with rows $(1, 2, 0.5)$ and $(0, 0, 0)$, targets
# $(1, 2)$, smoothing $0.1$, z-loss $0.01$, $g = 1$: the gradient has rows
# $(0.1046, -0.1369, 0.0569)$ and $(0.1537, 0.1537, -0.2963)$.
# </details>

# %% nbgrader={"grade_id": "answer_SmoothedCrossEntropy", "solution": true}
class SmoothedCrossEntropy(torch.autograd.Function):
    """F.cross_entropy with label smoothing, plus z_loss * mean(lse ** 2) over counted rows."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, z_loss):
        ### BEGIN SOLUTION
        counted = target != ignore_index
        safe_target = torch.where(counted, target, 0)
        lse = torch.logsumexp(logits, dim=1)
        picked = logits.gather(1, safe_target[:, None]).squeeze(1)
        smooth = lse - logits.mean(dim=1)  # the row mean of -log p
        per_row = ((1 - label_smoothing) * (lse - picked) + label_smoothing * smooth
                   + z_loss * lse ** 2)
        ctx.save_for_backward(logits, lse, safe_target, counted)
        ctx.label_smoothing, ctx.z_loss = label_smoothing, z_loss
        return torch.where(counted, per_row, 0.0).sum() / counted.sum()
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        logits, lse, target, counted = ctx.saved_tensors
        smoothing, z_loss = ctx.label_smoothing, ctx.z_loss
        probs = torch.exp(logits - lse[:, None])
        grad = probs * (1 + 2 * z_loss * lse)[:, None] - smoothing / logits.shape[1]
        rows = torch.arange(len(target), device=target.device)
        grad[rows, target] -= 1 - smoothing
        scale = grad_output * counted / counted.sum()
        return grad * scale[:, None], None, None, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "SmoothedCrossEntropy", "grade": true, "points": 3}
self_check("SmoothedCrossEntropy", SmoothedCrossEntropy)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SmoothedCrossEntropy", SmoothedCrossEntropy)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# The pieces: $\frac1C\sum_j -\log p_{ij} = \operatorname{lse}(z_i) - \frac1C\sum_j z_{ij}$,
# whose derivative is $p_{ij} - \frac1C$, and
# $\partial \operatorname{lse}(z_i)^2/\partial z_{ij} = 2\operatorname{lse}(z_i)\, p_{ij}$.
# For a counted row, with $g$ the `grad_output`,
#
# $$\frac{\partial L}{\partial z_{ij}} = \frac{g}{M}\Big(\big(1 + 2 \lambda\,
#   \operatorname{lse}(z_i)\big)\, p_{ij} - (1 - \varepsilon)[j = y_i]
#   - \frac{\varepsilon}{C}\Big),$$
#
# and 0 for an ignored row. Liger-Kernel's cross-entropy kernel computes exactly this, one
# row at a time (its `lse_square_scale` is $\lambda$).
# </details>

# %% [markdown]
# What each change does to the gradient of one row (target class 1), your Function beside
# autograd through the reference formula. Compare the panels: where does label smoothing move
# the target's bar and the others', and what does z-loss do to a row whose log-sum-exp is
# about 3.5?

# %%
row_logits = torch.tensor([[2.0, -1.0, 0.5, 3.0, -2.0, 1.0]], dtype=torch.float64,
                          requires_grad=True)
row_target = torch.tensor([1])
classes = torch.arange(row_logits.shape[1])
settings = {"neither": (0.0, 0.0), "label_smoothing=0.3": (0.3, 0.0),
            "z_loss=0.2": (0.0, 0.2), "both": (0.3, 0.2)}
fig, axes = plt.subplots(1, 4, figsize=(12, 2.6), sharey=True)
for ax, (title, (smoothing, z)) in zip(axes, settings.items()):
    reference = (F.cross_entropy(row_logits, row_target, label_smoothing=smoothing)
                 + z * torch.logsumexp(row_logits, -1).square().mean())
    want, = torch.autograd.grad(reference, row_logits)
    got, = torch.autograd.grad(SmoothedCrossEntropy.apply(row_logits, row_target, -100,
                                                          smoothing, z), row_logits)
    ax.bar(classes - 0.2, want[0], width=0.4, color="#999999", label="autograd (reference)")
    ax.bar(classes + 0.2, got[0].detach(), width=0.4, color="#0072B2", label="yours")
    ax.axhline(0, color="black", linewidth=0.5)
    ax.set(title=title, xlabel="class (target: 1)")
axes[0].set_ylabel("∂L/∂z")
axes[0].legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Summary
#
# The cross-entropy's gradient is $(\text{softmax} - \text{one-hot})/M$, with $M$ the rows
# that count. A loss is a scalar, so its gradients can be computed in forward, chunk by
# chunk, while each chunk of logits exists, and backward only scales them: the $(N, V)$
# logits never exist, and with each chunk's logits computed once the FLOPs are the composed
# loss's, about $6NdV$; recomputing them in backward instead costs one product more. The price is
# discipline: forward must learn from its caller whether grad mode is on
# (`ctx.needs_input_grad` does not say), must skip the gradients nobody needs, must accumulate
# low precision in float32, and backward must leave what it saved untouched. Its memory win is the $(N, V)$ term; what it adds is the size of
# the weight, so measure at your own proportions and dtype. Label smoothing and z-loss each
# add a term to the per-row loss, and each term's gradient comes out of the same derivation
# through the log-sum-exp.
#
# On a GPU you would not ship this Python loop: Liger-Kernel's
# `LigerFusedLinearCrossEntropyLoss` (your design: gradients in forward, with
# `label_smoothing` and z-loss, its `lse_square_scale`, as options) and Apple's Cut
# Cross-Entropy (the other one: logits recomputed block by block in backward) are tested
# kernels that never hold the $(N, V)$ logits.
# What you built is how such a kernel is designed and checked: the reference it must match,
# the peak it must stay under, and the rules for grad mode, dtypes and saved tensors. Next
# lesson: Functions that change gradients on purpose, and the tools for finding a gradient
# that is wrong.

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above. The sections below measure your
# `linear_cross_entropy`, look at what a production kernel does differently, and say
# what the exercises leave out; none is needed for an exercise. They use your
# `linear_cross_entropy` and `LinearCrossEntropy`.
#
# ### Common mistakes
#
# First, for float16 inputs: in which dtype do you keep each chunk's $G = (P - Y)/N$, whose
# entries are about $1/(NV)$ when float16's smallest normal number is $6 \cdot 10^{-5}$? And
# the sums over the rows before the division by $N$, at 8192 rows of loss 10, next to
# float16's largest number, 65504?
#
# Four mistakes a small test of your own does not show: the loss is right, and the cost,
# memory or accuracy, appears only at larger sizes. The self-check refuses each.
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | letting autograd differentiate a chunked forward | every chunk's logits kept: the whole $(N, V)$ again, and the loss still right | gradients in forward |
# | every chunk's softmax kept in a list, the gradients in a second pass | the same: all the chunks alive at once | each chunk's gradients before the next chunk exists |
# | each chunk's $G = (P - Y)/N$ rounded to float16 before the two products | its entries are about $1/(NV)$, below float16's normal range: they keep a few significant bits or round to 0, and the gradients with them | keep $G$ in float32 until both products are done |
# | the float32 loss or $\text{grad}_W$ cast to float16 before the division by $N$ | right at small $N$; `inf` once the sum over the rows passes 65504 (8192 rows of loss 10 do) | divide by $N$ in float32, then cast |

# %% [markdown]
# ### Backward must not scale what it saved in place
#
# Backward multiplies the saved gradients by `grad_output`. `grad_x.mul_(grad_output)` saves
# an allocation and is right once; but a graph can be walked twice (`retain_graph=True`). A toy
# Function with the same design, $\sum x^2$ with its gradient $2x$ computed in forward:

# %%
class SumOfSquares(torch.autograd.Function):
    """sum(x ** 2), its gradient 2x computed in forward; backward scales it IN PLACE."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(2 * x)
        return (x * x).sum()

    @staticmethod
    def backward(ctx, grad_output):
        grad_x, = ctx.saved_tensors
        return grad_x.mul_(grad_output)  # the mistake


class SumOfSquaresOnCtx(SumOfSquares):
    """The same, with the gradient kept on ctx, where no version counter watches it."""

    @staticmethod
    def forward(ctx, x):
        ctx.grad_x = 2 * x
        return (x * x).sum()

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.grad_x.mul_(grad_output)


for function in (SumOfSquares, SumOfSquaresOnCtx):
    x_small = torch.tensor([1.0, 2.0], requires_grad=True)
    y = function.apply(x_small)
    first, = torch.autograd.grad(3 * y, x_small, retain_graph=True)
    print(f"{function.__name__}: first {first.tolist()} (true: [6.0, 12.0])")
    try:
        second, = torch.autograd.grad(3 * y, x_small)
        print(f"  second {second.tolist()}, and first, printed again, {first.tolist()}")
    except RuntimeError as error:
        print(f"  second: {first_line(error)[:90]}")

# %% [markdown]
# Saved with `save_for_backward`, the in-place write bumps the tensor's version and the
# second backward refuses; kept on `ctx`, nothing watches it and the second backward is
# silently three times too large. The first gradient changed too: backward returned
# `ctx.grad_x` itself, so a gradient already handed back changes under you. What would
# backward return instead?

# %% [markdown]
# ### Why z-loss helps bfloat16 logits
#
# Not because bfloat16 overflows sooner: it has float32's exponent range. It has 8 significant
# bits, so logits far from 0 are coarse: near 100 they are 0.5 apart. Keeping the log-sum-exp
# near 0 keeps each row's largest logits near 0, where bfloat16 is fine.
#
# ### What ✎ 2 leaves out: padding
#
# A real language-model batch marks padding and prompt tokens with `ignore_index` (-100), and
# a fused loss you ship must take it, as Liger-Kernel's `LigerFusedLinearCrossEntropyLoss`
# does. What changes is exercise 1's $M$, and a chunked loop makes it easy to get wrong: $M$
# counts the rows that count in the **whole** batch, so count it once, before the loop, and
# divide every chunk's loss and gradients by that one $M$. Each chunk's own count is the wrong
# divisor, and a chunk made only of padding has a count of 0: dividing by it gives `nan`. The
# ignored rows' gradient rows stay 0, and their logits still cost their share of each matrix
# product unless you drop those rows before the loop.

# %% [markdown]
# ### Peak memory and time against chunk size
#
# Your `linear_cross_entropy`, measured live at every chunk size, beside the composed loss
# (dashed): peak memory (`TensorAccounting` on the CPU, `torch.cuda.max_memory_allocated` on a
# GPU) and the best time of forward + backward. The view's peak is the larger of forward's
# peak and backward's, each counted from what was alive when that pass began, so it leaves
# out what forward keeps for backward. Small chunks keep the peak near the size of the
# gradients, `x` and `weight`, but do many small matrix products; large chunks raise it by
# every chunk-sized tensor alive at once. At `chunk_size` 512 $= N$ one chunk is the whole
# $(N, V)$: the course's solution, one chunk-sized buffer turned into $G$ in place, peaks at
# 9 MiB there against the composed loss's 16 (two $(N, V)$ tensors), while a loop that keeps
# the logits, an int64 one-hot and $G$ alive together passes it (25 MiB at 256, 41 at 512).
# Count the chunk-sized tensors yours holds at once, move the slider, and press "measure
# again" to see how much the timings vary on a busy machine.

# %%
fused_loss_explorer(linear_cross_entropy)

# %% [markdown]
# At the size of a real model the difference is the point of the lesson. `make bench`
# measures the lesson's solution against `F.cross_entropy(F.linear(...))` at $N = 4096$,
# $d = 512$, $V = 32768$, float32, forward + backward, one CPU thread, `chunk_size` 128, on
# the course's shared 2-core build machine:
#
# | | composed | course's solution | ratio |
# |---|---|---|---|
# | the view's peak (the larger of forward's and backward's) | 1024 MiB | 88 MiB | 11.6× lower |
# | the whole step's peak, start of forward to end of backward | 1536 MiB | 144 MiB | 10.7× lower |
# | time, over several runs | 1× | 0.5× to 1.4× | neither wins reliably |
#
# Of forward's 88 MiB, 72 are the gradients of `weight` and `x`, 16 one chunk of logits; a loop
# that only rebinds its names (`logits = ...` each pass) keeps the previous chunk's logits
# alive while the next are computed (104 MiB), and `del logits, ...` at the end of each pass
# avoids that. The fused loss never writes and reads the 512 MiB of logits and
# log-probabilities, but does its products 128 rows at a time.
#
# **That ratio belongs to that set-up**: float32, and $d$ small against $N$, so the logits
# dwarf everything else. A language model trains in bfloat16, which halves the composed
# loss's logits, with $N \approx 2d$, $V \approx 32d$ (8192 tokens, $d = 4096$,
# $V = 128\text{k}$), where the weight is half the size of the logits; then the float32
# accumulation this lesson asks for costs real memory, a float32 copy of the weight and a
# float32 `grad_weight`, each twice the bfloat16 weight. The whole step's peak at those
# proportions scaled down to $N = 512$, $d = 256$, $V = 8192$ (the second cell below):
#
# | dtype | composed | course's solution |
# |---|---|---|
# | float32 | 48.0 MiB | 17.0 MiB (2.8× lower) |
# | bfloat16 | 24.0 MiB | 20.9 MiB (barely lower: its float32 weight copy and `grad_weight`, 8 MiB each) |
#
# Production kernels avoid both: Liger-Kernel multiplies in the inputs' dtype (a GPU's bfloat16
# matrix product accumulates in float32 inside) and keeps `grad_weight` in the weight's dtype
# unless asked for a float32 accumulator (its `accum_dtype` option), trading the accuracy this
# lesson grades for memory. Chunking always removes the $(N, V)$ term, which grows with the
# number of tokens, and adds the size of the weight, which does not: measure at your own
# proportions and dtype before you believe a ratio, this one included.

# %% tags=["skip-when-grading"]
def peak_mib(loss_fn, N_, d_, V_, dtype):
    """The whole step's peak: tensors created by forward and backward, alive at once."""
    generator = torch.Generator().manual_seed(0)
    x_ = torch.randn(N_, d_, generator=generator).to(dtype).requires_grad_()
    weight_ = (torch.randn(V_, d_, generator=generator) / d_ ** 0.5).to(dtype).requires_grad_()
    target_ = torch.randint(0, V_, (N_,), generator=generator)
    with TensorAccounting() as books_:
        loss_ = loss_fn(x_, weight_, target_)
        loss_.backward()
    return books_.phase.peak / 2 ** 20


for dtype in (torch.float32, torch.bfloat16):
    plain = peak_mib(lambda a_, b_, t_: F.cross_entropy(F.linear(a_, b_), t_), 512, 256, 8192,
                     dtype)
    chunked = peak_mib(lambda a_, b_, t_: linear_cross_entropy(a_, b_, t_, 128), 512, 256,
                       8192, dtype)
    print(f"{str(dtype)[6:]:>8}: composed {plain:5.1f} MiB, yours {chunked:5.1f} MiB")

# %% [markdown]
# ### Your turn, ungraded: the other side of the trade
#
# Build the production variant and measure it. Write `LowMemoryLinearCrossEntropy`, a copy of
# your `LinearCrossEntropy` that multiplies in the inputs' dtype (no float32 copy of the
# weight) and keeps `grad_weight` in the weight's dtype, adding each chunk's share to it, and
# `low_memory_linear_cross_entropy(x, weight, target, chunk_size)`, which calls it as your
# `linear_cross_entropy` calls yours (grad mode included); replace the placeholder below with
# them. The last cell below runs the composed loss, yours and your copy in bfloat16 at the
# proportions above, with chunks of 32 rows, and prints each one's whole-step peak and the
# relative error of its `grad_weight` against float64. Predict first: which of the three
# peaks lowest, and is your copy's `grad_weight` error above or below the composed loss's?

# %%
predicted_trade = {"lowest peak": None, "copy's grad_weight error, vs composed": None}


# %%
LowMemoryLinearCrossEntropy = LinearCrossEntropy  # placeholder: replace with your copy
low_memory_linear_cross_entropy = linear_cross_entropy  # and with the function that calls it


# %% tags=["skip-when-grading"]
def peak_and_weight_error(function):
    """The whole step's peak MiB in bfloat16, and grad_weight's relative error."""
    generator = torch.Generator().manual_seed(0)
    x_ = torch.randn(512, 256, generator=generator).bfloat16().requires_grad_()
    weight_ = (torch.randn(8192, 256, generator=generator) / 16).bfloat16().requires_grad_()
    target_ = torch.randint(0, 8192, (512,), generator=generator)
    try:
        with TensorAccounting() as books_:
            loss_ = function(x_, weight_, target_)
            loss_.backward()
    except Exception as error:
        return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:60]}"
    wide = weight_.detach().double().requires_grad_()
    F.cross_entropy(F.linear(x_.detach().double(), wide), target_).backward()
    error = ((weight_.grad.double() - wide.grad).norm() / wide.grad.norm()).item()
    peak = books_.phase.peak / 2 ** 20
    return f"peak {peak:5.1f} MiB, grad_weight relative error {error:.2e}"


print("you predicted:", predicted_trade)
for label, function in [
        ("composed", lambda a_, b_, t_: F.cross_entropy(F.linear(a_, b_), t_)),
        ("yours", lambda a_, b_, t_: linear_cross_entropy(a_, b_, t_, 32)),
        ("your copy", lambda a_, b_, t_: low_memory_linear_cross_entropy(a_, b_, t_, 32))]:
    print(f"{label:>9}: {peak_and_weight_error(function)}")

# %% [markdown]
# <details><summary><b>What the course's copy gave</b> (open after your attempt)</summary>
#
# The course's copy changes one line of its forward: its working dtype is the input's
# instead of float32 or wider. The weight is then used as it is, `grad_weight` is a bfloat16
# tensor that each chunk's product is added into, and so is the running loss (one number:
# keeping that one in float32 costs nothing). Composed 24.0 MiB, the float32 version
# 20.8 MiB, the copy **8.5 MiB**, the lowest by far: its saved bfloat16 gradients (4.25 MiB)
# and, in backward, as much again for `grad_output` times them. Its `grad_weight` error is
# 3.0e-3, against 1.7e-3 for the composed loss and 1.6e-3 for the float32 version. A bfloat16 matrix
# product accumulates in float32 inside (on this CPU as on a GPU), so what costs is the sum
# across the sixteen chunks, rounded to bfloat16 after each. That is the trade Liger-Kernel
# leaves to its `accum_dtype` option. More chunks, more roundings: decide with your own
# `chunk_size` and a measured error, as here.
# </details>

# %% [markdown]
# ### Accumulating in bfloat16 and float16: how much it costs
#
# The course's low-memory copy (the running loss and `grad_weight` summed in the input's
# dtype) and the course's solution (float32 accumulators) against float64, at $N = 512$, $d = 32$,
# $V = 512$, seeds 0 to 3; relative errors of the loss and of `grad_weight`:
#
# | accumulators (inputs) | 16 chunks | 128 chunks | 512 chunks (one row each) |
# |---|---|---|---|
# | bfloat16: loss | 0.1% to 0.5% | 4.7% to 6.4% | 27.6% to 28.6% |
# | bfloat16: `grad_weight` | 0.5% | 1.2% | 1.6% to 1.7% |
# | float16: loss | — | 0.01% to 0.45% | 0.01% to 0.26% |
# | float16: `grad_weight` | 0.06% | 0.17% | 0.33% |
# | float32 (bfloat16 inputs): both | — | — | within 0.17% |
# | float32 (float16 inputs): both | — | — | within 0.03% |
#
# bfloat16 keeps 8 significant bits, float16 11, so float16's running sums do better at this
# size, and only its `grad_weight` error grows with the number of chunks; its loss error goes
# up and down with the seed. A float16 running sum of ones stops at 2048. The numbers depend on
# the sizes (the grid decides where a running sum stalls).
#
# float16 has a second trap, its range, and it hits $G = (P - Y)/N$ rather than the sums: away
# from the target an entry is about $1/(NV)$, and float16's smallest number above 0 is
# $2^{-24} \approx 6 \cdot 10^{-8}$. Rounded to float16, 69% of $G$'s entries are 0 at
# $N = 4096$, $V = 8192$, and nearly all at a language model's sizes. A kernel that multiplies
# in the input's dtype keeps $G$ in float32 for float16 inputs (or scales the loss up first, as
# mixed-precision training's loss scaling does); bfloat16 has float32's range.
#
# Where to upcast, for bfloat16 inputs (seed 0, $N = 1024$, $d = 64$, $V = 2048$), as the
# relative error of `grad_weight` against float64: with logits of standard deviation 8,
# upcasting each chunk of `x` and the weight before the product (the course's solution) gives
# 1.6e-3, multiplying in bfloat16 and upcasting the logits (Liger-Kernel's way) 8.2e-3, the
# composed loss 8.3e-3; with logits of standard deviation 1 the three agree within 10%. Both
# answers meet the contract.

# %% [markdown]
# ### Not twice differentiable
#
# The gradients forward computes carry no graph, so a second derivative through this loss (a
# gradient penalty, a Hessian-vector product) is not there, and only one way of asking for it
# says so. `grad_x, = torch.autograd.grad(loss, x, create_graph=True)` on
# `loss = linear_cross_entropy(x, weight, target, 4)` returns a gradient with no `grad_fn`, and
# differentiating a penalty on it **alone** raises `element 0 of tensors does not require grad
# and does not have a grad_fn`. The usual training step raises nothing:
# `(loss + grad_x.square().sum()).backward()` runs, and `x.grad` and `weight.grad` get the
# loss's gradients without the penalty's, silently. Nor does a `grad_outputs` that requires grad
# (a loss scaled by a learnable factor before the gradient is taken): backward's
# `grad_output * grad_x` then has a graph, through `grad_output` alone, and the penalty's
# backward reaches that factor and never `x` or `weight`. `@once_differentiable` (lesson 04)
# turns that last case into an error ("trying to differentiate twice a function that was
# marked with @once_differentiable"), since it marks backward's outputs when `grad_output`
# requires grad; with `torch.autograd.grad(loss, x, create_graph=True)` and the default
# `grad_outputs`, a constant 1 that does not require grad, it marks nothing, and the penalty
# added to the loss is still dropped without a word. A term that needs second derivatives goes
# through the composed loss.
