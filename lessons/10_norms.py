# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 10 · Normalisation layers, and a Function inside an `nn.Module`
#
# **About 150 minutes** for the main path: about an hour to read and run it, the rest for the
# four exercises. The optional part after the Summary takes about 45 minutes more.
#
# Every transformer block normalises its activations at least twice, with LayerNorm (GPT-2,
# BERT) or RMSNorm (LLaMA, Mistral, Gemma), and these are among the Functions most often
# written by hand (Apex, Liger-Kernel, Unsloth). A norm brings three ideas together: reductions
# with broadcasting, a backward that is a **projection**, and arithmetic that is exact on paper
# and wrong in float32. By the end of this lesson you can:
#
# 1. derive the LayerNorm and RMSNorm backwards, and say which directions their Jacobians remove;
# 2. decide what a norm keeps for backward, and compare it with what `F.layer_norm` keeps;
# 3. compute a row's variance that stays accurate in float32;
# 4. ship a Function as an `nn.Module` that loads PyTorch's `state_dict` and trains;
# 5. apply the method alone to group normalisation.
#
# Exercises: **✎ 1 `LayerNormFunction`**, **✎ 2 `RMSNormFunction`**, **✎ 3 `RMSNorm`**,
# **✎ 4 `GroupNormFunction`** (transfer). Open a collapsed hint only after your attempt.

# %% nbgrader={"locked": true}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

from autograder import self_check
from autograder.memory import kept_bytes  # bytes kept for backward, by saved-tensor hooks
from autograder.predictions import compare, written
from widgets import norm_terms_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # small tensors: one thread is fastest, and results do not vary with it
torch.set_printoptions(precision=4)


# %% [markdown]
# ## The forward, one row at a time
#
# Both norms work on the **last dimension** of `x`, of size $D$; every other dimension is a
# batch of independent rows. For one row $x \in \mathbb{R}^D$, LayerNorm computes
#
# $$\mu = \frac1D \sum_j x_j, \qquad \sigma^2 = \frac1D \sum_j (x_j - \mu)^2, \qquad
#   r = \frac{1}{\sqrt{\sigma^2 + \varepsilon}}, \qquad
#   \hat x_i = (x_i - \mu)\, r, \qquad y_i = w_i\, \hat x_i + b_i .$$
#
# $r$ is the **reciprocal standard deviation**, `rstd` in PyTorch's code; $w$ (`weight`) and
# $b$ (`bias`) have shape $(D,)$ and are shared by every row. RMSNorm drops the centring and
# the bias:
#
# $$r = \frac{1}{\sqrt{\frac1D\sum_j x_j^2 + \varepsilon}}, \qquad \hat x_i = x_i\, r, \qquad
#   y_i = w_i\, \hat x_i .$$
#
# Both by hand, against PyTorch:

# %%
x = torch.randn(2, 3, 8)  # two sequences of three tokens, 8 features each
weight, bias, eps = torch.randn(8), torch.randn(8), 1e-5

mean = x.mean(-1, keepdim=True)
rstd = 1 / torch.sqrt(((x - mean) ** 2).mean(-1, keepdim=True) + eps)
print("LayerNorm matches F.layer_norm:",
      torch.allclose((x - mean) * rstd * weight + bias, F.layer_norm(x, (8,), weight, bias, eps),
                     atol=1e-6))
rms_rstd = 1 / torch.sqrt((x ** 2).mean(-1, keepdim=True) + eps)
print("RMSNorm matches F.rms_norm:   ",
      torch.allclose(x * rms_rstd * weight, F.rms_norm(x, (8,), weight, eps), atol=1e-6))
print("per-row statistics:", tuple(mean.shape), "(keepdim=True, so they broadcast over the row)")

# %% [markdown]
# ### Quick question 1 · predict, then run
#
# Take one row $x$ and feed `F.layer_norm` (no weight, no bias) three rows: $x$, $x + 5$ and
# $3x$. Which outputs are equal to the output for $x$ (up to rounding and $\varepsilon$)? And
# for `F.rms_norm`? Write `True` or `False` for each, then run the next cell.

# %%
my_prediction = {"layer_norm: x + 5": None, "layer_norm: 3x": None,
                 "rms_norm: x + 5": None, "rms_norm: 3x": None}

# %%
row = torch.randn(8, dtype=torch.float64)
for name, norm in [("layer_norm", lambda t: F.layer_norm(t, (8,), eps=1e-5)),
                   ("rms_norm", lambda t: F.rms_norm(t, (8,), eps=1e-5))]:
    shifted = (norm(row + 5) - norm(row)).abs().max().item()
    scaled = (norm(3 * row) - norm(row)).abs().max().item()
    if not written(my_prediction):  # the gaps, once your four answers are written
        print(f"{name:>10}: write your four True/False answers above, then run this again")
        continue
    print(f"{name:>10}: x + 5 changes the output by up to {shifted:.1e}, "
          f"3x by up to {scaled:.1e}")
    for change, gap in (("x + 5", shifted), ("3x", scaled)):
        guess = my_prediction[f"{name}: {change}"]
        compare(f"{'':>12}{change} leaves the output equal", guess, gap < 1e-3,
                if_wrong="" if isinstance(guess, bool) else "(write True or False)")

# %% [markdown]
# <details><summary><b>Answer</b> (open after running)</summary>
#
# LayerNorm ignores both: a shift moves only the mean, and a scale scales $x - \mu$ and
# $\sigma$ alike; only $\varepsilon$ breaks the tie. RMSNorm has no mean to subtract, so a
# shift changes its output. Where moving the input along a direction leaves the output
# unchanged, the derivative along it is zero: LayerNorm has two such directions at every row,
# $(1, \dots, 1)$ and the row itself; RMSNorm has one.
# </details>

# %% [markdown]
# ## Derive the LayerNorm backward, one step at a time
#
# Backward receives $g_i = \partial L / \partial y_i$ (`grad_output`) and returns gradients for
# $x$, $w$ and $b$. Work on paper, one row, in index notation.
#
# **Step 0, the weight and bias.** What are $\partial L/\partial w_i$ and
# $\partial L/\partial b_i$ for one row? The same $w$ serves every row: what does that do to
# the gradient backward returns?
#
# **Step 1, through the affine part.** What is $\hat g_i = \partial L / \partial \hat x_i$?
#
# **Step 2, the statistics.** Find $\partial \mu / \partial x_j$ and
# $\partial \sigma^2 / \partial x_j$, then $\partial r / \partial x_j$ using only $r$, $D$ and
# $\hat x_j$.
#
# **Step 3, the normalised input.** $\hat x_i = (x_i - \mu) r$ depends on $x_j$ three ways:
# directly (only when $i = j$), through $\mu$, and through $r$. Write
# $\partial \hat x_i / \partial x_j$ as $r$ times a bracket of three terms.
#
# **Step 4, the vector-Jacobian product.** $\partial L / \partial x_j = \sum_i \hat g_i\,
# \partial \hat x_i / \partial x_j$. Carry out the sum term by term: which terms need a sum
# over the row, and of what?
#
# Look first: autograd's Jacobian $\partial \hat x / \partial x$ for one row of eight, and what
# it does to the constant row and to $\hat x$.

# %%
row = torch.randn(8, dtype=torch.float64) * 2 + 1
J = torch.autograd.functional.jacobian(lambda t: F.layer_norm(t, (8,), eps=1e-5), row)
row_hat = F.layer_norm(row, (8,), eps=1e-5)
print("J @ ones  =", (J @ torch.ones(8, dtype=torch.float64)).numpy().round(6))
print("J @ x_hat =", (J @ row_hat).numpy().round(6))
print("J symmetric:", torch.allclose(J, J.T))

fig, ax = plt.subplots(figsize=(3.6, 3.2))
limit = J.abs().max().item()
image = ax.imshow(J, cmap="RdBu_r", vmin=-limit, vmax=limit)
ax.set(title="∂x̂_i / ∂x_j for one row (autograd)", xlabel="j", ylabel="i")
fig.colorbar(image, ax=ax, shrink=0.8)
plt.show()

# %% [markdown]
# Why is the diagonal positive and everything else small and mostly negative? Why does $J$
# send the constant row and $\hat x$ to (almost) zero, and where does that show in Step 4?
#
# **Predict, then run.** A 1-D `x` is one row, with no leading dims. What do
# `torch.ones(2, 3).sum(dim=(0,))` and `torch.ones(3).sum(dim=())` return? Write your
# prediction into `predicted` first.

# %%
predicted = {"torch.ones(2, 3).sum(dim=(0,))": None, "torch.ones(3).sum(dim=())": None}

# %%
print("you predicted:", predicted)
print("torch.ones(2, 3).sum(dim=(0,)) =", torch.ones(2, 3).sum(dim=(0,)))
print("torch.ones(3).sum(dim=())      =", torch.ones(3).sum(dim=()))

# %% [markdown]
# <details><summary><b>What happened</b> (open after your prediction)</summary>
#
# An empty tuple of dims means **every** dim to `sum`: it turns a 1-D tensor into a 0-d one,
# not the $(D,)$ a weight's gradient needs. Backward may instead return a gradient of a shape
# the weight broadcasts to and let autograd sum it (rule 2 of the
# [Function contract](function_contract.md)); a 0-d tensor is no such shape.
# </details>
#
# Now test Steps 0 to 3: replace the body of `my_param_grads` (Step 0, one row), `my_g_hat`,
# `my_rstd_grad` and `my_layer_norm_jacobian` below until autograd gives each its ✓. The
# Jacobian starts as $r\,\delta_{ij}$, the statistics held constant. Step 4, without a
# $D \times D$ matrix, is ✎ 1.

# %%
rstd_row = 1 / torch.sqrt(row.var(unbiased=False) + 1e-5)


def my_param_grads(grad_output, x_hat):
    """Step 0, one row: (dL/dweight, dL/dbias), each of shape (D,), from grad_output and
    x_hat of shape (D,)."""
    ### BEGIN WORKED
    return grad_output * x_hat, grad_output
    ### LEARNER
    return torch.zeros(x_hat.shape[-1]), torch.zeros(x_hat.shape[-1])  # replace with yours
    ### END WORKED


def my_g_hat(grad_output, weight):
    """Step 1: dL/dx_hat for one row, from grad_output and weight, each of shape (D,)."""
    ### BEGIN WORKED
    return grad_output * weight
    ### LEARNER
    return grad_output  # replace with yours
    ### END WORKED


def my_rstd_grad(x_hat, rstd):
    """Step 2: the D numbers dr/dx_j for one row, from x_hat and rstd."""
    ### BEGIN WORKED
    return -rstd ** 2 / x_hat.shape[-1] * x_hat
    ### LEARNER
    return torch.zeros_like(x_hat)  # replace with yours
    ### END WORKED


def my_layer_norm_jacobian(x_hat, rstd):
    """Step 3: the (D, D) matrix of d x_hat_i / d x_j for one row, from x_hat and rstd."""
    ### BEGIN WORKED
    D = x_hat.shape[-1]
    return rstd * (torch.eye(D, dtype=x_hat.dtype) - 1 / D - torch.outer(x_hat, x_hat) / D)
    ### LEARNER
    return rstd * torch.eye(x_hat.shape[-1], dtype=x_hat.dtype)  # first guess: replace it
    ### END WORKED


def verdict(step, got, want):
    """One line per step: ✓ within 1e-10 of autograd's answer, ✗ with the largest error."""
    got = torch.as_tensor(got, dtype=torch.float64)
    if got.shape != want.shape:
        print(f"{step}: ✗ shape {tuple(got.shape)}, autograd's is {tuple(want.shape)}")
        return
    error = (got - want).abs().max().item()
    print(f"{step}: {'✓' if error < 1e-10 else '✗'} largest error {error:.2g}")


def try_step(step, function, *args):
    """function(*args), or None after one ✗ line: an error is shown, Run All goes on."""
    try:
        return function(*args)
    except Exception as error:  # shown, not raised: the check is a guide
        print(f"{step}: ✗ {type(error).__name__}: {str(error).splitlines()[0][:100]}")
        return None


def check_layer_norm_steps(param_grads, g_hat_of, rstd_grad, jacobian):
    """Steps 0 to 3 against autograd through F.layer_norm, on rows of 8 features."""
    generator = torch.Generator().manual_seed(1)
    x_, go_, w_, b_ = (torch.randn(8, dtype=torch.float64, generator=generator) for _ in "1234")
    w_.requires_grad_()
    b_.requires_grad_()
    wanted = torch.autograd.grad(F.layer_norm(x_, (8,), w_, b_, 1e-5), (w_, b_), go_)
    got = try_step("Step 0, one row", param_grads, go_, F.layer_norm(x_, (8,), eps=1e-5))
    if got is not None:
        for name, mine_, want_ in zip(("dL/dweight", "dL/dbias"), got, wanted):
            verdict(f"Step 0, one row, {name}", mine_, want_)
    go_, w_, hat_ = (torch.randn(8, dtype=torch.float64, generator=generator) for _ in "123")
    hat_.requires_grad_()
    got = try_step("Step 1, g_hat", g_hat_of, go_, w_)
    if got is not None:
        verdict("Step 1, g_hat", got, torch.autograd.grad(w_ * hat_ + 1, hat_, go_)[0])
    row_ = torch.randn(8, dtype=torch.float64, generator=generator) * 2 + 1
    hat_, rstd_ = F.layer_norm(row_, (8,), eps=1e-5), 1 / torch.sqrt(row_.var(False) + 1e-5)
    truths = {
        "Step 2, dr/dx": torch.autograd.functional.jacobian(
            lambda t: 1 / torch.sqrt(t.var(unbiased=False) + 1e-5), row_),
        "Step 3, the Jacobian": torch.autograd.functional.jacobian(
            lambda t: F.layer_norm(t, (8,), eps=1e-5), row_)}
    got = try_step("Step 2, dr/dx", rstd_grad, hat_, rstd_)
    if got is not None:
        verdict("Step 2, dr/dx", got, truths["Step 2, dr/dx"])
    got = try_step("Step 3, the Jacobian", jacobian, hat_, rstd_)
    if got is not None:  # one step short: two directions and the trace, not every entry
        got, want_ = torch.as_tensor(got, dtype=torch.float64), truths["Step 3, the Jacobian"]
        if got.shape != want_.shape:
            verdict("Step 3, the Jacobian", got, want_)
            return
        verdict("Step 3, J @ ones (a shift)", got @ torch.ones_like(hat_), want_.sum(-1))
        verdict("Step 3, J @ x_hat (a scaling)", got @ hat_, want_ @ hat_)
        verdict("Step 3, trace of J", got.trace(), want_.trace())


check_layer_norm_steps(my_param_grads, my_g_hat, my_rstd_grad, my_layer_norm_jacobian)

# %% [markdown]
# <details><summary><b>Hint</b> · a question for each step</summary>
#
# - Step 0: for which $k$ is $\partial y_k/\partial w_i$ not zero? When $w$ serves $R$ rows,
#   what does the chain rule do with the $R$ contributions?
# - Step 2: through $\mu$, the chain rule gives $\frac2D\sum_k (x_k-\mu)\,(\delta_{kj} -
#   \frac1D)$: what is left of the $\frac1D$ part, given $\sum_k (x_k - \mu) = 0$? Then
#   differentiate $r = (\sigma^2+\varepsilon)^{-1/2}$: what do $(\sigma^2 + \varepsilon)^{-3/2}$
#   and $(x_j - \mu)\,r$ become?
# - Step 3: the product rule; wherever $(x_i - \mu)$ meets an $r$, write $\hat x_i$.
# - Step 4: which terms of your bracket hold a $\delta_{ij}$, and which no $i$ at all?
# </details>
#
# <details><summary><b>Numbers to hit</b> (after your attempt)</summary>
#
# One row $x = (1, 2, 4)$, $\varepsilon = 0$: $r = 0.8018$,
# $\hat x = (-1.069, -0.2673, 1.336)$, $\partial r/\partial x = (0.2291, 0.0573, -0.2864)$,
# and the first row of $\partial \hat x/\partial x$ is $(0.2291, -0.3436, 0.1145)$. With
# $w = (1, 0.5, 2)$ and $g = (1, -1, 0.5)$: $\partial L/\partial x = (0.5154, -0.7731, 0.2577)$,
# $\partial L/\partial w = (-1.069, 0.2673, 0.6682)$ and $\partial L/\partial b = (1, -1, 0.5)$.
# The entries of $\partial L/\partial x$ add up to $0$: which term of yours makes them?
# </details>

# %% [markdown]
# ## What autograd keeps for backward
#
# Your backward reads $\hat x$, $r$ and $w$. Through composed ops, autograd keeps whatever each
# small op needs for its own backward.
#
# ### Quick question 2 · predict, then run
#
# `x` of shape $(512, 1024)$ in float32 (2 MiB). How many bytes does autograd keep for backward
# through the first cell's formula, `(x - mean) * rstd * weight + bias`, **beyond its
# arguments** (tensors the caller holds anyway)? Write a number of bytes.

# %%
predicted_bytes = None


# %%
x = torch.randn(512, 1024, requires_grad=True)
weight, bias = torch.randn(1024, requires_grad=True), torch.randn(1024, requires_grad=True)


def composed_layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    rstd = 1 / torch.sqrt(((x - mean) ** 2).mean(-1, keepdim=True) + eps)
    return (x - mean) * rstd * weight + bias


if written(predicted_bytes):  # the count, once your number is written
    compare("bytes the composed ops keep", predicted_bytes,
            kept_bytes(composed_layer_norm, x, weight, bias))
else:
    print("write your number of bytes above, then run this again")


# %% [markdown]
# <details><summary><b>Answer</b> (open after running)</summary>
#
# 6,297,600 bytes: three full-size tensors of 2 MiB and three per-row ones of 2 KiB. The
# full-size ones are $x - \mu$ twice (the formula computes it twice: the square keeps one copy,
# the product with rstd the other) and $\hat x$, which the product with the weight keeps. Does
# backward need all three? ✎ 1 asks you to decide.
# </details>

# %% [markdown]
# ## The variance in one pass: $E[x^2] - E[x]^2$
#
# The variance has a one-pass formula, $\sigma^2 = \frac1D\sum_j x_j^2 - \mu^2$, popular
# because it needs one sweep over the row. It is exact on paper.
#
# ### Quick question 3 · predict, then run
#
# Rows of 64 numbers $10^4 + \mathcal N(0, 1)$ in float32: the true variance is about 1. What
# does the one-pass formula give? Write a number (or `"nan"`).

# %%
predicted_variance = None

# %%
print("you said             :", predicted_variance)
rows = 1e4 + torch.randn(6, 64)
mean = rows.mean(-1, keepdim=True)
one_pass = (rows * rows).mean(-1) - mean.squeeze(-1) ** 2
two_pass = ((rows - mean) ** 2).mean(-1)
print("E[x^2] - E[x]^2    :", one_pass)
print("mean of (x - mean)^2:", two_pass)
print("the truth (float64) :", rows.double().var(-1, unbiased=False).float())

# %% [markdown]
# <details><summary><b>Answer</b> (open after running)</summary>
#
# Garbage: multiples of 8, zero, even negative variances (and `rsqrt` of a negative number is
# `nan`). Each $x_j^2 \approx 10^8$, and float32 numbers near $10^8$ are **8** apart (24
# significant bits, and $2^{26} < 10^8 < 2^{27}$). Their difference cannot resolve a variance
# of 1: the subtraction cancels every significant digit. Subtracting the mean **first** (two
# passes, or Welford's update, as in `torch.var_mean`) works with numbers of size 1.
# </details>

# %% [markdown]
# Such offsets are not exotic (a feature large in every token). A wider dtype only moves the
# trap: float64 rows like $10^8 + \mathcal N(0, 1)$ square to numbers float64 spaces 2 apart.

# %% [markdown]
# ## ✎ Exercise 1 · `LayerNormFunction`
#
# Write `LayerNormFunction`, with `LayerNormFunction.apply(x, weight, bias, eps)`: the value
# and gradients of `F.layer_norm(x, x.shape[-1:], weight, bias, eps)`, where `weight` and
# `bias` are each of shape `(D,)` or `None`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Forward computes each row's variance so that rows far from $0$ keep their accuracy:
#   float32 rows such as $10^4 + \mathcal N(0, 1)$ and float64 rows such as
#   $10^8 + \mathcal N(0, 1)$.
# - Forward saves one tensor of `x`'s size and at most two numbers per row, in `x`'s dtype,
#   besides the weight: nothing else.
# - Backward computes only the gradients `ctx.needs_input_grad` asks for: nothing that only an
#   unrequested gradient uses is computed.
#
# Three decisions are yours:
#
# - **What to save.** Backward reads $\hat x$, $r$ and $w$: which tensors rebuild them, and
#   which of those is alive anyway while the model runs?
# - **Step 4.** Which terms of your bracket survive the sum over $i$ as they are, and which
#   become a sum over the row?
# - **The parameter gradients** for any number of leading dims, none included.

# %% nbgrader={"grade_id": "answer_LayerNormFunction", "solution": true}
class LayerNormFunction(torch.autograd.Function):
    """F.layer_norm over the last dim, with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ### BEGIN SOLUTION
        mean = x.mean(-1, keepdim=True)
        y = x - mean  # forward's one new full-size tensor: every later step writes into it
        # two passes, never E[x^2] - E[x]^2; the norm reads y once and allocates nothing
        variance = torch.linalg.vector_norm(y, dim=-1, keepdim=True).square() / x.shape[-1]
        rstd = torch.rsqrt(variance + eps)
        y.mul_(rstd)  # x_hat; in place is safe: y is ours, and autograd saved none of it
        if weight is not None:
            y.mul_(weight)
        if bias is not None:
            y.add_(bias)
        ctx.save_for_backward(x, weight, mean, rstd)  # x_hat is recomputed in backward
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight, mean, rstd = ctx.saved_tensors
        need_x, need_weight, need_bias = ctx.needs_input_grad[:3]
        grad_x = grad_weight = grad_bias = None
        features = x.shape[-1]
        if need_bias:  # a sum over rows, as a vector-matrix product (.sum(0) is slower here)
            rows = grad_output.reshape(-1, features)
            grad_bias = rows.new_ones(rows.shape[0]) @ rows
        if not (need_x or need_weight):
            return grad_x, grad_weight, grad_bias, None
        # backward's one new full-size tensor: grad_output * (x - mean) first, grad_x at the end
        buffer = (x - mean).mul_(grad_output)
        if need_weight:  # sum over every row of grad_output * x_hat, as a vector-matrix product
            grad_weight = rstd.reshape(-1) @ buffer.reshape(-1, features)
        if need_x:
            # row means of g = grad_output * weight and of g * x_hat (matrix-vector products:
            # one read each, and g itself is never written out)
            if weight is None:
                mean_g = grad_output.mean(-1, keepdim=True)
                mean_g_x_hat = rstd * buffer.mean(-1, keepdim=True)
            else:
                mean_g = (grad_output @ weight)[..., None] / features
                mean_g_x_hat = rstd * (buffer @ weight)[..., None] / features
            # rstd * (g - mean_g - x_hat * mean_g_x_hat): the projection and mean terms, then
            # the direct term, then the scale, all in the buffer
            grad_x = torch.sub(x, mean, out=buffer).mul_(-rstd * mean_g_x_hat).sub_(mean_g)
            if weight is None:
                grad_x.add_(grad_output)
            else:
                grad_x.addcmul_(grad_output, weight)
            grad_x.mul_(rstd)
        return grad_x, grad_weight, grad_bias, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "LayerNormFunction", "grade": true, "points": 3}
self_check("LayerNormFunction", LayerNormFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("LayerNormFunction", LayerNormFunction)
### END HIDDEN TESTS

# %% [markdown]
# ## What `F.layer_norm` keeps, beside your choice
#
# A node's saved tensors are readable as `grad_fn._saved_*` attributes; `kept_bytes` counts
# what each keeps beyond its arguments, on the input of quick question 2:

# %%
x = torch.randn(512, 1024, requires_grad=True)
weight, bias = torch.randn(1024, requires_grad=True), torch.randn(1024, requires_grad=True)
node = F.layer_norm(x, (1024,), weight, bias, 1e-5).grad_fn
print(type(node).__name__)
for name in sorted(a for a in dir(node) if a.startswith("_saved_")):
    value = getattr(node, name)
    described = (f"tensor {tuple(value.shape)} {value.dtype}" if isinstance(value, torch.Tensor)
                 else repr(value))
    print(f"  {name:<26} {described}")
print("_saved_input is x:", node._saved_input is x, "  _saved_weight is weight:",
      node._saved_weight is weight, "  _saved_bias is bias:", node._saved_bias is bias)
for label, function, args in [("F.layer_norm", F.layer_norm, (x, (1024,), weight, bias)),
                              ("your LayerNormFunction", LayerNormFunction.apply,
                               (x, weight, bias, 1e-5))]:
    print(f"{label:<23} keeps {kept_bytes(function, *args):>7,} bytes beyond its arguments")


# %% [markdown]
# <details><summary><b>What PyTorch chose</b> (open after running)</summary>
#
# `F.layer_norm` keeps $2 \times 512 \times 4 = 4096$ bytes beyond its arguments: the mean and
# rstd of each row, **one number per row** each; backward recomputes $\hat x = (x - \mu) r$,
# one cheap pass over the row. Its arguments, alive anyway while the model holds them, it
# keeps too: the input itself (not a copy), the weight, and the bias, whose values its
# backward never reads ($\partial L/\partial b$ is a sum of $g$); yours reads nothing of the
# bias, so ✎ 1 saves it nowhere. Keeping $\hat x$ instead of $x$ needs no mean but allocates a
# new full-size tensor; keeping both is never right.
# </details>

# %% [markdown]
# ## RMSNorm: repeat the derivation
#
# Repeat Steps 1 to 4 for RMSNorm, $\hat x_i = x_i\, r$ with
# $r = (\frac1D \sum_j x_j^2 + \varepsilon)^{-1/2}$:
#
# 1. $\partial r / \partial x_j$, in terms of $r$, $D$ and $\hat x_j$. **Predict first:** does
#    your `my_rstd_grad`, fed RMSNorm's $\hat x$ and $r$, give it? The cell below tries.
# 2. $\partial \hat x_i / \partial x_j$: how many terms in the bracket now?
# 3. $\partial L / \partial x_j$. By quick question 1, which directions should this Jacobian
#    remove? The cell shows what autograd's $J$ does to $\hat x$ and to the constant row.

# %%
row_rms_hat = F.rms_norm(row, (8,), eps=1e-5)
rms_rstd_row = 1 / torch.sqrt((row ** 2).mean() + 1e-5)
got = try_step("RMSNorm, dr/dx from your Step 2", my_rstd_grad, row_rms_hat, rms_rstd_row)
if got is not None:
    verdict("RMSNorm, dr/dx from your Step 2", got, torch.autograd.functional.jacobian(
        lambda t: 1 / torch.sqrt((t ** 2).mean() + 1e-5), row))
J_rms = torch.autograd.functional.jacobian(lambda t: F.rms_norm(t, (8,), eps=1e-5), row)
print("J_rms @ x_hat =", (J_rms @ row_rms_hat).numpy().round(6))
print("J_rms @ ones  =", (J_rms @ torch.ones(8, dtype=torch.float64)).numpy().round(3))


# %% [markdown]
# <details><summary><b>Hint</b> · the key step</summary>
#
# The product rule on $x_i\, r$: which of the terms you had for $(x_i - \mu)\, r$ has nothing
# to come from?
# </details>
#
# <details><summary><b>Numbers to hit</b> (after your attempt)</summary>
#
# The same row, $w$, $g$ and $\varepsilon = 0$, through `F.rms_norm`: $r = 0.378$, the first
# row of $\partial \hat x/\partial x$ is $(0.36, -0.036, -0.072)$,
# $\partial L/\partial x = (0.306, -0.333, 0.09)$ and
# $\partial L/\partial w = (0.378, -0.7559, 0.7559)$. Why do these entries of
# $\partial L/\partial x$ not add up to $0$?
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `RMSNormFunction`
#
# Write `RMSNormFunction`, with `RMSNormFunction.apply(x, weight, eps)`: the value and
# gradients of `F.rms_norm(x, x.shape[-1:], weight, eps)`, `weight` of shape `(D,)` or `None`.
# Decide first what to save: backward reads $\hat x$, $r$ and $w$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Forward saves, beyond the tensors it was handed and saves as they are, at most one number
#   per row, in `x`'s dtype.
# - Backward computes only the gradients `ctx.needs_input_grad` asks for: nothing that only an
#   unrequested gradient uses is computed.
#
# <details><summary><b>Hint</b> · a question</summary>
#
# Your `x` may arrive as a view, say a transposed one: does each tensor you save still cost no
# new memory then?
# </details>

# %% nbgrader={"grade_id": "answer_RMSNormFunction", "solution": true}
class RMSNormFunction(torch.autograd.Function):
    """F.rms_norm over the last dim, with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        ### BEGIN SOLUTION
        rstd = torch.rsqrt(x.square().mean(-1, keepdim=True) + eps)
        y = x * rstd
        if weight is not None:
            y = y * weight
        ctx.save_for_backward(x, weight, rstd)
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight, rstd = ctx.saved_tensors
        grad_x = grad_weight = None
        x_hat = x * rstd
        if ctx.needs_input_grad[1]:
            grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight if weight is not None else grad_output
            grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))  # no mean term
        return grad_x, grad_weight, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "RMSNormFunction", "grade": true, "points": 2}
self_check("RMSNormFunction", RMSNormFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("RMSNormFunction", RMSNormFunction)
### END HIDDEN TESTS

# %% [markdown]
# ## A Function inside an `nn.Module`
#
# Nobody calls `RMSNormFunction.apply(x, weight, eps)` in a model: they write
# `nn.RMSNorm(dim)` and expect `parameters()` (what optimisers update), `state_dict()` (what
# checkpoints store) and `.to(device)` to work. The Function stays stateless; the module holds
# the state and passes it in.
#
# ### Quick question 4 · predict, then run
#
# A toy module adds three offsets to its input: `a` a plain tensor attribute, `b` an
# `nn.Parameter`, `c` a buffer (`register_buffer`). Which names appear in `parameters()`, and
# which in `state_dict()`? Write two lists of names.

# %%
predicted_names = {"parameters": None, "state_dict": None}

# %%
class ThreeOffsets(nn.Module):
    """x + a + b + c, with a, b and c held three different ways."""

    def __init__(self):
        super().__init__()
        self.a = torch.zeros(3)
        self.b = nn.Parameter(torch.zeros(3))
        self.register_buffer("c", torch.zeros(3))

    def forward(self, x):
        return x + self.a + self.b + self.c


offsets = ThreeOffsets()
if written(predicted_names):  # the names, once both lists are written
    compare("parameters()", predicted_names["parameters"],
            {name for name, _ in offsets.named_parameters()})
    compare("state_dict()", predicted_names["state_dict"], set(offsets.state_dict()))
    offsets(torch.ones(3)).sum().backward()
    print("gradients:", {name: getattr(offsets, name).grad for name in "abc"})
else:
    print("write both lists of names above, then run this again")

# %% [markdown]
# <details><summary><b>Answer</b> (open after running)</summary>
#
# Only `b` is a parameter: assigning an `nn.Parameter` to a module attribute **registers** it,
# so optimisers see it and autograd gives it a gradient. The `state_dict` holds `b` and the
# buffer `c` (saved, not trained: batch norm's running statistics, say); the plain tensor `a`
# is invisible to both, and `.to(device)` leaves it behind.
# </details>
#
# PyTorch's own module is the one to match. Look at it before you write: what does
# `reference.state_dict()` hold, and is `eps` in it?

# %%
reference = nn.RMSNorm(8, eps=1e-6)
# look inside reference here (its state_dict, named_parameters(), eps, help(nn.RMSNorm))

# %% [markdown]
# ### Quick question 5 · predict, then run
#
# Autocast hands a float32 `nn.RMSNorm(8)` a `Linear`'s bfloat16 output. Predict its output's
# dtype for a bfloat16 `x` (a name, such as `"float32"`), and its output's root mean square
# for float16 rows near 1000 (float16 ends at 65504).

# %%
predicted_half = {"dtype": None, "root mean square": None}

# %%
norm = nn.RMSNorm(8)
x_bf16, x_fp16 = torch.randn(2, 8).bfloat16(), (1000 + torch.randn(2, 8)).half()
if written(predicted_half):  # the answers, once both are written
    compare("output dtype, bfloat16 x", predicted_half["dtype"],
            str(norm(x_bf16).dtype).removeprefix("torch."))
    compare("root mean square, float16 rows near 1000", predicted_half["root mean square"],
            round(norm(x_fp16).float().square().mean().sqrt().item(), 2), abs_tol=0.02)
    print("x_fp16 ** 2 in float16:", (x_fp16 ** 2)[0, :3])
else:
    print("write both answers above, then run this again")

# %% [markdown]
# <details><summary><b>Answer</b> (open after running)</summary>
#
# `bfloat16`: the output takes `x`'s dtype, not the module's. And 1: squared in float16, the
# row is `inf`, its output zeros; torch computes a half row in float32 (`help(nn.RMSNorm)`,
# under `eps`).
# </details>

# %% [markdown]
# ## ✎ Exercise 3 · `RMSNorm`
#
# Write `RMSNorm(dim, eps=1e-6)`, an `nn.Module` that can stand in for
# `torch.nn.RMSNorm(dim, eps=1e-6)`.
#
# **Contract.** The `RMSNormFunction` it calls obeys the
# [Function contract](function_contract.md); this exercise's own contract:
#
# - Built as `torch.nn.RMSNorm` is, `RMSNorm(dim)`, `RMSNorm(dim, eps)` or
#   `RMSNorm(dim, eps=eps)`, each module keeping its own eps, `1e-6` by default here (torch's
#   default is `None`).
# - The `state_dict` of `torch.nn.RMSNorm(dim)`: one `nn.Parameter` named `weight`, ones at
#   start, each module its own, which an optimiser trains as `torch.nn.RMSNorm`'s.
# - `forward(x)` computes through your `RMSNormFunction` the outputs and gradients of
#   `torch.nn.RMSNorm` holding the same weight, whenever it is called, a float64 input to a
#   float32 module in float64.
# - A bfloat16 or float16 `x`, in a module of any dtype, computes as `torch.nn.RMSNorm` does and
#   rounds once: an output in `x`'s dtype, each entry `torch.nn.RMSNorm`'s or its neighbour at a
#   near-tie.
#
# <details><summary><b>Hint</b> · questions</summary>
#
# Which tensors do an optimiser step and `load_state_dict` change in place, and does your
# forward read them on every call? How many times may a half output be rounded?
# </details>

# %% nbgrader={"grade_id": "answer_RMSNorm", "solution": true}
class RMSNorm(nn.Module):
    """RMSNorm over the last dim, through RMSNormFunction; loads torch.nn.RMSNorm's state."""

    def __init__(self, dim, eps=1e-6):
        ### BEGIN SOLUTION
        super().__init__()
        self.eps = eps  # configuration: not in the state_dict
        self.weight = nn.Parameter(torch.ones(dim))  # registered: optimisers and state_dict
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        # torch computes in x's dtype but at least float32: a float16 square overflows past
        # 256 (65504 is float16's largest), so half inputs are computed in float32, then
        # rounded once into x's dtype, whatever the weight's (torch.nn.RMSNorm's output dtype)
        wide = torch.promote_types(x.dtype, torch.float32)
        y = RMSNormFunction.apply(x.to(wide), self.weight.to(wide), self.eps)
        return y.to(x.dtype)
        ### END SOLUTION


# %% nbgrader={"grade_id": "RMSNorm", "grade": true, "points": 2}
self_check("RMSNorm", RMSNorm)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("RMSNorm", RMSNorm)
### END HIDDEN TESTS

# %% [markdown]
# ## ✎ Exercise 4 · `GroupNormFunction` (transfer: nobody works this one through)
#
# Group normalisation (Wu and He, 2018), used by convolutional networks and diffusion U-Nets
# when batches are small, splits the $C$ channels of `x` of shape $(N, C, *)$ into
# `num_groups` groups of consecutive channels, and normalises each sample's group over its
# channels **and** every spatial position; the weight and bias are per **channel**.
#
# Write `GroupNormFunction`, with `GroupNormFunction.apply(x, num_groups, weight, bias, eps)`:
# the value and gradients of `F.group_norm(x, num_groups, weight, bias, eps)`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - Forward computes each group's variance so that groups far from $0$ keep their accuracy:
#   float32 groups such as $10^4 + \mathcal N(0, 1)$ and float64 groups such as
#   $10^8 + \mathcal N(0, 1)$.
# - Forward saves one tensor of `x`'s size and at most two numbers per group, in `x`'s dtype,
#   besides the weight: nothing else.
# - Backward computes only the gradients `ctx.needs_input_grad` asks for: nothing that only an
#   unrequested gradient uses is computed.
#
# <details><summary><b>Hint 1</b> · questions</summary>
#
# Which elements of `x` share one mean and one rstd, and how many are they? Laid out as one
# row, what is their forward before the weight and bias, and which steps of your ✎ 1
# derivation change? A row now holds several channels, each with its own $w_c$: does that
# weight enter before or after the group means?
# </details>
#
# <details><summary><b>Hint 2</b> · numbers to hit</summary>
#
# $x$ of shape $(1, 2, 2)$ with rows $(1, 2)$ and $(4, -1)$, one group, $w = (1, 2)$,
# $b = 0$, $\varepsilon = 0$, and $g$ with rows $(1, 0)$ and $(0, 1)$: $\partial L/\partial x$
# has rows $(0.0213, -0.2987)$ and $(0.1707, 0.1067)$, $\partial L/\partial w = (-0.2774,
# -1.3868)$ and $\partial L/\partial b = (1, 1)$.
# </details>

# %% nbgrader={"grade_id": "answer_GroupNormFunction", "solution": true}
class GroupNormFunction(torch.autograd.Function):
    """F.group_norm(x, num_groups, weight, bias, eps), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, num_groups, weight, bias, eps):
        ### BEGIN SOLUTION
        N, C = x.shape[:2]
        # one row per (sample, group); its length spelled out, since N may be 0 and a -1
        # cannot be inferred from a tensor of 0 elements
        group_size = C // num_groups * x.shape[2:].numel()
        rows = x.reshape(N, num_groups, group_size)
        mean = rows.mean(-1, keepdim=True)
        centred = rows - mean  # two passes, as in ✎ 1
        rstd = torch.rsqrt(centred.square().mean(-1, keepdim=True) + eps)
        y = (centred * rstd).reshape(x.shape)
        per_channel = (C,) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.reshape(per_channel)
        if bias is not None:
            y = y + bias.reshape(per_channel)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.num_groups = num_groups
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight, mean, rstd = ctx.saved_tensors
        N, C = x.shape[:2]
        per_channel = (C,) + (1,) * (x.dim() - 2)
        summed = [0, *range(2, x.dim())]  # every dim but the channels
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[3]:
            grad_bias = grad_output.sum(summed)
        if not (ctx.needs_input_grad[0] or ctx.needs_input_grad[2]):
            return grad_x, None, grad_weight, grad_bias, None  # x_hat only for those two
        group_size = C // ctx.num_groups * x.shape[2:].numel()
        x_hat = (x.reshape(N, ctx.num_groups, group_size) - mean) * rstd
        if ctx.needs_input_grad[2]:
            grad_weight = (grad_output * x_hat.reshape(x.shape)).sum(summed)
        if ctx.needs_input_grad[0]:
            g = grad_output * weight.reshape(per_channel) if weight is not None else grad_output
            g = g.reshape(x_hat.shape)
            grad_x = rstd * (g - g.mean(-1, keepdim=True)
                             - x_hat * (g * x_hat).mean(-1, keepdim=True))
            grad_x = grad_x.reshape(x.shape)
        return grad_x, None, grad_weight, grad_bias, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "GroupNormFunction", "grade": true, "points": 3}
self_check("GroupNormFunction", GroupNormFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("GroupNormFunction", GroupNormFunction)
### END HIDDEN TESTS

# %% [markdown]
# ## Common mistakes
#
# More slips, most a contract bullet broken, are in the optional part's last section.
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | mean and rstd treated as constants (`grad_x = rstd * g`) | wrong `grad_x`; gradcheck fails | differentiate them: the mean term and the projection term |
# | the mean term left out (LayerNorm), or added (RMSNorm) | wrong `grad_x` | LayerNorm centres, so it has a mean term; RMSNorm does not |
# | variance as `(x * x).mean() - mean ** 2` | float32 rows with a large offset lose every digit; negative variance, `nan` | two passes: the mean, then the mean of `(x - mean) ** 2` (or `torch.var_mean`) |
#
# ## Summary
#
# A normalisation's backward is a projection: it removes from $\hat g = g \odot w$ the
# directions along which the output does not change (the constant row and the row itself for
# LayerNorm, the row itself for RMSNorm) and scales by rstd. Forward keeps one full-size
# tensor and one or two numbers per row: the input, which the model holds anyway, or $\hat x$
# when nothing else keeps the input (never both); it computes the variance in two passes,
# never as $E[x^2] - E[x]^2$ in the input's own dtype; for low-precision input it computes the
# row in float32 and rounds only the output. Parameters shared by every row receive the sum
# over every leading dim. A Function becomes a layer inside an `nn.Module` that registers its
# `nn.Parameter`, matches PyTorch's `state_dict`, and passes the parameter itself.
# %% [markdown]
# <details><summary><b>Compare with yours</b> · ✎ 1, LayerNorm (after your self-check is green)</summary>
#
# With $\hat g = g \odot w$ (or $g$ with no weight),
#
# $$\frac{\partial L}{\partial x_j} = r\,\Big(\underbrace{\hat g_j}_{\text{direct}}
#   \;-\; \underbrace{\tfrac1D \textstyle\sum_i \hat g_i}_{\text{mean}}
#   \;-\; \underbrace{\hat x_j\, \tfrac1D \textstyle\sum_i \hat g_i \hat x_i}_{\text{projection}}
#   \Big), \qquad
#   \frac{\partial L}{\partial w_i} = \sum_{\text{rows}} g_i \hat x_i, \qquad
#   \frac{\partial L}{\partial b_i} = \sum_{\text{rows}} g_i .$$
#
# **Why "projection".** In matrix form $J = r\,(I - \frac1D \mathbf 1 \mathbf 1^\top -
# \frac1D \hat x \hat x^\top)$. $\mathbf 1$ and $\hat x$ are orthogonal
# ($\sum_i \hat x_i = 0$), $\|\mathbf 1\|^2 = D$ and $\|\hat x\|^2 \approx D$, so the bracket
# is (up to $\varepsilon$) the orthogonal projection that removes the components along
# $\mathbf 1$ and along $\hat x$: the two directions of quick question 1. Backward projects them
# out of $\hat g$ and scales by $r$.
# </details>

# %% [markdown]
# <details><summary><b>Compare with yours</b> · ✎ 2, RMSNorm (after your self-check is green)</summary>
#
# $$\frac{\partial L}{\partial x_j} = r\,\Big(\hat g_j - \hat x_j\,
#   \tfrac1D \textstyle\sum_i \hat g_i \hat x_i\Big),$$
#
# the direct term and the projection term; there is no mean term, because nothing was
# subtracted. The Jacobian removes the direction $\hat x$ (scaling a row does not change the
# output) and keeps the constant row, since a shift does change an RMSNorm. The weight
# gradient is LayerNorm's, $\sum g \odot \hat x$ over all leading dims; there is no bias.
# </details>

# %% [markdown]
# <details><summary><b>Compare with yours</b> · ✎ 4, GroupNorm (after your self-check is green)</summary>
#
# For a group $G$ of one sample, with $i, j \in G$, $|G| = M$, and
# $\hat g_j = g_j\, w_{c(j)}$, where $c(j)$ is the channel of element $j$ (dim 1 of `x`):
#
# $$\frac{\partial L}{\partial x_j} = r_G\Big(\hat g_j - \frac1M\sum_{i\in G}\hat g_i -
#   \hat x_j\,\frac1M\sum_{i\in G} \hat g_i \hat x_i\Big), \qquad
#   \frac{\partial L}{\partial w_c} = \sum_{n,\ \text{positions}}
#   g_{n c \cdot}\, \hat x_{n c \cdot},
#   \qquad \frac{\partial L}{\partial b_c} = \sum_{n,\ \text{positions}} g_{n c \cdot} .$$
# </details>

# %% [markdown]
# # The optional part
#
# Everything below is ungraded and off the main path: come back to it in a second sitting.
# Each section stands on its own and runs on your Functions from the exercises above. Batch norm
# is the same reductions over the batch, and the gradients of a convolution are convolutions:
# each has its section.
#
# **A checkpoint and its eps.** `eps` is configuration, not state: it is not in the
# `state_dict`, so loading a checkpoint never sets it. A model built with another `eps` than the
# one it was trained with loads without a word and computes something slightly different:
# write the `eps` down with the checkpoint.
#
# ## Optional · What other saving choices cost
#
# Measured as in quick question 2. `KeepOnly` computes LayerNorm's forward and saves the
# tensors it is told to; it has no backward, since only forward is measured:

# %%
x = torch.randn(512, 1024, requires_grad=True)
weight, bias = torch.randn(1024, requires_grad=True), torch.randn(1024, requires_grad=True)


class KeepOnly(torch.autograd.Function):
    """LayerNorm's forward (no weight or bias) that saves the tensors named in `choice`."""

    @staticmethod
    def forward(ctx, x, choice):
        # PyTorch's own forward op returns the output and the per-row mean and rstd
        x_hat, mean, rstd = torch.native_layer_norm(x, x.shape[-1:], None, None, 1e-5)
        named = {"x": x, "x_hat": x_hat, "mean": mean, "rstd": rstd}
        ctx.save_for_backward(*(named[n] for n in choice))
        return x_hat

    @staticmethod
    def backward(ctx, grad_output):
        raise NotImplementedError("only forward is measured here")


choices = {"x, mean, rstd (PyTorch)": ("x", "mean", "rstd"),
           "x_hat, rstd": ("x_hat", "rstd"),
           "x, x_hat, mean, rstd": ("x", "x_hat", "mean", "rstd")}
measured = {label: kept_bytes(KeepOnly.apply, x, choice) for label, choice in choices.items()}
measured["composed ops (autograd)"] = kept_bytes(composed_layer_norm, x, weight, bias)
fig, ax = plt.subplots(figsize=(7, 2.4))
ax.barh(list(measured), [b / 2 ** 20 for b in measured.values()],
        color=["#E69F00", "#56B4E9", "#56B4E9", "#999999"])
ax.set_xlabel("MiB kept for backward beyond the arguments (x: 512 x 1024 float32, 2 MiB)")
ax.invert_yaxis()
plt.show()
for label, count in measured.items():
    print(f"{label:<26} {count:>12,} bytes")

# %% [markdown]
# And `F.rms_norm` on this CPU: in torch 2.13 it is not one fused operator there but a
# composition (power, mean, add, rsqrt, two products), and autograd keeps what those small ops
# need, including a full-size normalised copy, where your `RMSNormFunction` keeps one number
# per row:

# %%
x = torch.randn(512, 1024, requires_grad=True)
weight = torch.randn(1024, requires_grad=True)
print("F.rms_norm's last node:", type(F.rms_norm(x, (1024,), weight, 1e-6).grad_fn).__name__)
print(f"F.rms_norm keeps {kept_bytes(F.rms_norm, x, (1024,), weight, 1e-6):,} bytes beyond its "
      f"arguments; one rstd per row is {512 * 4:,} bytes")

# %% [markdown]
# ## Optional · How the one-pass error grows with the offset
#
# The relative error of each variance in float32 against the float64 truth, for rows
# $c + \mathcal N(0, 1)$:

# %%
offsets = [1.0, 10.0, 100.0, 1e3, 3e3, 1e4, 3e4]
noise = torch.randn(64, 64, dtype=torch.float64)
errors = {"E[x^2] - E[x]^2": [], "mean of (x - mean)^2": [], "torch.var_mean": []}
for c in offsets:
    wide = c + noise
    narrow = wide.float()
    truth = narrow.double().var(-1, unbiased=False)
    m = narrow.mean(-1, keepdim=True)
    estimates = [(narrow * narrow).mean(-1) - m.squeeze(-1) ** 2,
                 ((narrow - m) ** 2).mean(-1),
                 torch.var_mean(narrow, -1, correction=0)[0]]
    for name, estimate in zip(errors, estimates):
        errors[name].append(((estimate.double() - truth).abs() / truth).max().item() + 1e-12)
fig, ax = plt.subplots(figsize=(6, 3))
for name, values in errors.items():
    ax.loglog(offsets, values, "o-", label=name)
ax.axhline(1.0, color="#D55E00", linestyle=":", linewidth=1)
ax.set(xlabel="offset c of the rows c + N(0, 1)", ylabel="largest relative error",
       title="variance in float32")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# At $c = 10^3$ the one-pass variance is already off by about a quarter (22-33% for the
# worst of these 64 rows, depending on the draw); by $c \approx 3 \cdot 10^3$ by more than
# 100%, and at $10^4$ by a factor of 30.

# %% [markdown]
# ## Optional · The terms view: a row's statistics and the terms of its gradient
#
# Your `LayerNormFunction` on four rows of eight features. The figure splits the reference
# $\partial L/\partial x$ of the chosen row into its three terms (bars) and their sum (dots),
# and puts your gradient (bars) beside the reference (ticks); the tables give the row's mean
# and rstd, what your forward kept per row, and how much of each term your gradient holds
# (×1 each when it is right). Choose **grad_output = along x_hat** with the weight fixed at
# ones: the projection term cancels the direct one, and the gradient vanishes.

# %%
norm_terms_explorer(LayerNormFunction, "layer_norm")

# %% [markdown]
# ## Optional · What `eps=None` means in `nn.RMSNorm`
#
# Not graded: ✎ 3's contract leaves `eps=None` out, but `torch.nn.RMSNorm` takes it (and so
# may your module, if you wish). Give `nn.RMSNorm(8, eps=None)` a
# float32 row and a float64 row whose mean square is about `1e-14`, and
# `nn.RMSNorm(8, eps=None).bfloat16()` a bfloat16 row whose mean square is about `1e-3`: which
# `torch.finfo(...).eps` explains each output, and when does the module decide which?

# %% [markdown]
# ## Optional · Your RMSNorm in the terms view
#
# The terms view of ✎ 1, on your `RMSNormFunction` from ✎ 2: the mean term is gone (its bars
# are zero), and **grad_output = ones** no longer gives a zero projection term.

# %% tags=["skip-when-grading"]
norm_terms_explorer(RMSNormFunction, "rms_norm")

# %% [markdown]
# ## Optional · A forgotten term in the terms view
#
# What a forgotten term looks like in ✎ 1's view: a backward that holds rstd constant,
# written with autograd so that no formula is on screen (detaching rstd is the mistake).
# A quick test with `grad_output = ones` and the weight at ones does not catch it, because the
# projection term is zero there ($\hat x$ sums to zero); try it. With a random `grad_output`
# the term's coefficient reads ×0.

# %%
class LayerNormWithoutProjection(torch.autograd.Function):
    """Wrong on purpose: backward is autograd through the composed forward with rstd detached,
    as if it did not move with x (the mean still does). It saves no bias, as ✎ 1 asks."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.save_for_backward(x, weight)
        ctx.has_bias, ctx.eps = bias is not None, eps
        return F.layer_norm(x, x.shape[-1:], weight, bias, eps)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        # the bias's gradient does not depend on its value: zeros stand in for it
        bias = x.new_zeros(x.shape[-1]) if ctx.has_bias else None
        inputs = [t.detach().requires_grad_() if t is not None else None
                  for t in (x, weight, bias)]
        x, weight, bias = inputs
        with torch.enable_grad():
            centred = x - x.mean(-1, keepdim=True)
            rstd = torch.rsqrt(centred.square().mean(-1, keepdim=True) + ctx.eps).detach()
            y = centred * rstd
            y = y * weight if weight is not None else y
            y = y + bias if bias is not None else y
            present = [t for t in inputs if t is not None]
            grads = iter(torch.autograd.grad(y, present, grad_output))
        return (*(next(grads) if t is not None else None for t in inputs), None)


norm_terms_explorer(LayerNormWithoutProjection, "layer_norm")

# %% [markdown]
# ## Optional · The projection as pictures
#
# Back to LayerNorm: the projection itself, as pictures,
# the three parts of
# $J = r\,(I - \frac1D \mathbf 1\mathbf 1^\top - \frac1D \hat x \hat x^\top)$ for the row of the
# derivation, and the eigenvalues of the bracket: a zero (the $\mathbf 1$ direction, removed),
# $\varepsilon/(\sigma^2+\varepsilon)$ (the $\hat x$ direction, removed up to ε: about 2e-6
# below) and $D - 2$ ones (everything else passes unchanged).

# %%
D = 8
ones = torch.ones(D, dtype=torch.float64)
parts = {"r·I": rstd_row * torch.eye(D, dtype=torch.float64),
         "−(r/D)·1 1ᵀ": -rstd_row / D * torch.outer(ones, ones),
         "−(r/D)·x̂ x̂ᵀ": -rstd_row / D * torch.outer(row_hat, row_hat)}
parts["sum = J"] = sum(parts.values())
fig, axes = plt.subplots(1, 4, figsize=(11, 2.8))
limit = parts["r·I"].abs().max().item()
for ax, (title, matrix) in zip(axes, parts.items()):
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit)
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()
print("J matches autograd:", torch.allclose(parts["sum = J"], J, atol=1e-6))
print("eigenvalues of J / r:", torch.linalg.eigvalsh(parts["sum = J"] / rstd_row).numpy().round(6))

# %% [markdown]
# ## Optional · Your RMSNorm in training
#
# Your module in a small network, trained with SGD beside a copy built on `torch.nn.RMSNorm`:
# same initial weights (your norm loads the other's `state_dict`), same data, same steps.
# Left, both losses; right, the largest difference between the two norms' weights after each
# step.

# %% tags=["skip-when-grading"]
def small_model(norm):
    torch.manual_seed(1)  # the same Linear weights for both models
    return nn.Sequential(nn.Linear(16, 32), norm, nn.ReLU(), nn.Linear(32, 1))


theirs = small_model(nn.RMSNorm(32, eps=1e-6))
ours = small_model(RMSNorm(32))
with torch.no_grad():
    theirs[1].weight.uniform_(0.5, 1.5)
ours[1].load_state_dict(theirs[1].state_dict())
start = ours[1].weight.detach().clone()
inputs = torch.randn(256, 16)
targets = inputs[:, :4].sum(1, keepdim=True).sin()
history = {"torch.nn.RMSNorm": [], "your RMSNorm": []}
gaps = []
optimisers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (theirs, ours)]
for step in range(60):
    for (name, losses), model, optimiser in zip(history.items(), (theirs, ours), optimisers):
        optimiser.zero_grad()
        loss = F.mse_loss(model(inputs), targets)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    gaps.append((ours[1].weight - theirs[1].weight).abs().max().item())

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 2.8))
for (name, losses), style in zip(history.items(), ["-", "--"]):
    left.plot(losses, style, label=name)
left.set(xlabel="SGD step", ylabel="MSE loss")
left.legend(fontsize=8)
right.semilogy([max(gap, 1e-12) for gap in gaps])
right.set(xlabel="SGD step", ylabel="max |weight difference|")
plt.tight_layout()
plt.show()
print(f"after {len(gaps)} steps the weights differ by at most {gaps[-1]:.2g}; "
      f"while training moved it by up to "
      f"{(ours[1].weight.detach() - start).abs().max().item():.2f}")

# %% [markdown]
# The differences are float32 rounding: your backward and PyTorch's composed one add the same
# numbers in a different order.

# %% [markdown]
# ## Optional · GroupNorm in the terms view, and a large offset
#
# The terms view of ✎ 1, on your `GroupNormFunction`. With `x` of shape $(\text{rows}, C)$
# (no spatial dims) and one group, each row is one sample's only group, and the weight
# varies along it, one value per channel: so a missing mean or projection term, or a weight
# applied after the group means, shows as it did for LayerNorm. (A weight broadcast along
# the wrong dim cannot show here, since the channels are the last dim: the self-check's
# spatial cases test that.)

# %% tags=["skip-when-grading"]
class OneGroupPerRow:
    """Your GroupNormFunction with one group, on x of shape (rows, C)."""

    @staticmethod
    def apply(x, weight, bias, eps):
        return GroupNormFunction.apply(x, 1, weight, bias, eps)


norm_terms_explorer(OneGroupPerRow, "layer_norm")

# %% [markdown]
# ### Your turn: a large offset
#
# ✎ 1's contract promises accuracy on float32 rows such as `1e4 + N(0, 1)`, and ✎ 4's the
# same for groups, and both graders test them: nothing stops the channels of a group from
# sharing a large common offset. Predict first: on float32 `x = 1e4 + N(0, 1)` of shape
# $(2, 4, 8)$ with two groups, what is the largest error of your output against the float64
# truth, and of `F.group_norm`'s? Write two numbers.

# %%
offset_error_prediction = {"your GroupNormFunction": None, "F.group_norm": None}

# %%
x_offset = 1e4 + torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(5))
truth = F.group_norm(x_offset.double(), 2, eps=1e-5)
for label, output in [("your GroupNormFunction", GroupNormFunction.apply(x_offset, 2, None,
                                                                          None, 1e-5)),
                      ("F.group_norm", F.group_norm(x_offset, 2, eps=1e-5))]:
    error = (output.double() - truth).abs().max().item()
    print(f"{label:<23} largest error {error:.2e} (you said {offset_error_prediction[label]})")

# %% [markdown]
# Two passes give an error near `F.group_norm`'s, a few 1e-4 here, since the group mean, a
# float32 number near 1e4, is known only to float32's step there (about 1e-3); the truth
# starts from the same float32 inputs, so their own rounding is no error. A one-pass variance
# cancels, as in ✎ 1: here it is negative in some group, and the output is `nan`. If yours is
# far off, apply ✎ 1's fix.

# %% [markdown]
# ## Optional · Batch normalisation: the same reductions, over the batch
#
# `nn.BatchNorm1d(C)` on `x` of shape $(N, C)$ normalises each **channel** (column) over the
# batch; `nn.BatchNorm2d` over the batch and both spatial dims. In training mode it is
# LayerNorm with the roles of the dims swapped: the statistics are per channel, the reduction
# runs over $N$ (and $H, W$), and the weight and bias are per channel. As in ✎ 4, lay each
# set that shares one mean out as a row: here a channel's set spans samples, so the rows
# need a transpose, not only a reshape. Your `LayerNormFunction` on those rows is batch
# normalisation, forward and backward:

# %%
x = torch.randn(6, 3, 5, 5, dtype=torch.float64, requires_grad=True)  # (N, C, H, W)
weight = torch.randn(3, dtype=torch.float64)
bias = torch.randn(3, dtype=torch.float64)
grad_output = torch.randn(6, 3, 5, 5, dtype=torch.float64)

theirs = F.batch_norm(x, None, None, weight, bias, training=True, eps=1e-5)
grad_theirs, = torch.autograd.grad(theirs, x, grad_output)

channels_as_rows = x.transpose(0, 1).reshape(3, -1)  # (C, N*H*W): one row per channel
normalised = LayerNormFunction.apply(channels_as_rows, None, None, 1e-5)
ours = (normalised.reshape(3, 6, 5, 5).transpose(0, 1) * weight[:, None, None]
        + bias[:, None, None])
grad_ours, = torch.autograd.grad(ours, x, grad_output)
print("output matches F.batch_norm:", torch.allclose(ours, theirs))
print("gradient matches:           ", torch.allclose(grad_ours, grad_theirs))

# %% [markdown]
# Two things set batch norm apart. It keeps **running** statistics for evaluation, updated in
# training with the *unbiased* variance ($\frac{n}{n-1}$ times the one it normalises with, $n$
# the number of values per channel: $N$ for `BatchNorm1d` on $(N, C)$ and $N L$ on
# $(N, C, L)$, $N H W$ for `BatchNorm2d`);
# in `eval()` mode it uses them, and the layer becomes a fixed per-channel affine map whose
# backward is element-wise. And in training mode every sample's output depends on the other
# samples of its batch, so its backward couples them: the mean term and the projection term
# now sum over the batch.

# %%
batch = torch.randn(16, 5)
norm = nn.BatchNorm1d(5, momentum=1.0)  # momentum 1: the running stats are this batch's
norm(batch)
print("running_var is the unbiased variance:",
      torch.allclose(norm.running_var, batch.var(0, unbiased=True)))

# %% [markdown]
# ### Quick question 5 · predict, then run
#
# A batch of **one** sample through `nn.BatchNorm1d` in training mode: what happens? Write
# `"error"`, `"zeros"`, `"the bias"` or your own words.

# %%
predicted_outcome = None

# %%
if written(predicted_outcome):  # what happens, once your answer is written
    try:
        print(nn.BatchNorm1d(3)(torch.randn(1, 3)))
        happened = "no error"
    except ValueError as error:
        print(f"ValueError: {error}")
        happened = "error"
    compare("one sample in training mode", predicted_outcome, happened,
            if_wrong="(your own words? the line above says what happened)")
else:
    print("write your answer above, then run this again")

# %% [markdown]
# <details><summary><b>Answer</b> (open after running)</summary>
#
# PyTorch refuses. With one value per channel the variance is 0, $\hat x = 0$ whatever the
# input, the output is the bias, and the gradient for the input is exactly zero: nothing
# would learn. (Your `LayerNormFunction` on a row of size 1 shows the same thing: every
# entry of its gradient for `x` is 0.)
# </details>

# %% [markdown]
# ## Optional · Convolution: the gradient of a convolution is a convolution
#
# In 1-D, with PyTorch's convention (a cross-correlation, no padding, stride 1):
# $y_o = \sum_k w_k\, x_{o+k}$. In index notation,
# $\partial y_o / \partial x_i = w_{i-o}$ (zero outside the kernel) and
# $\partial y_o / \partial w_k = x_{o+k}$. So
#
# $$\frac{\partial L}{\partial x_i} = \sum_o g_o\, w_{i-o}, \qquad
#   \frac{\partial L}{\partial w_k} = \sum_o g_o\, x_{o+k}:$$
#
# the input gradient is $g$ (padded by $K-1$ on each side, for a kernel of $K$ entries)
# convolved with the **flipped** kernel, a *transposed convolution*; the weight gradient is
# $x$ cross-correlated with $g$, which plays the kernel. The Jacobian shows why: each row of
# $\partial y/\partial x$ is the kernel shifted by one (a banded, Toeplitz matrix), and its
# transpose, the matrix backward applies, is again such a band, with the kernel reversed.

# %%
signal = torch.randn(10, dtype=torch.float64)
kernel = torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64)
J_conv = torch.autograd.functional.jacobian(
    lambda t: F.conv1d(t[None, None], kernel[None, None])[0, 0], signal)
fig, axes = plt.subplots(1, 2, figsize=(8, 2.8))
for ax, matrix, title in [(axes[0], J_conv, "∂y/∂x (forward: kernel 1, 2, −1)"),
                          (axes[1], J_conv.T, "its transpose (backward: −1, 2, 1)")]:
    ax.imshow(matrix, cmap="RdBu_r", vmin=-2, vmax=2)
    ax.set_title(title, fontsize=10)
    ax.set(xlabel="column", ylabel="row")
plt.tight_layout()
plt.show()

# %% [markdown]
# In 2-D, `torch.nn.grad.conv2d_input` and `torch.nn.grad.conv2d_weight` compute the two
# gradients, and they are convolutions you can write with `F.conv2d` and
# `F.conv_transpose2d` yourself:

# %%
x = torch.randn(2, 3, 7, 7, dtype=torch.float64, requires_grad=True)
w = torch.randn(4, 3, 3, 3, dtype=torch.float64, requires_grad=True)
y = F.conv2d(x, w)
g = torch.randn_like(y)
grad_x, grad_w = torch.autograd.grad(y, (x, w), g)

checks = {
    "conv2d_input  == autograd": torch.nn.grad.conv2d_input(x.shape, w, g),
    "conv_transpose2d(g, w)": F.conv_transpose2d(g, w),
    "conv2d(pad(g), flipped w with in/out swapped)":
        F.conv2d(F.pad(g, (2, 2, 2, 2)), w.flip(-1, -2).transpose(0, 1)),
}
for label, value in checks.items():
    print(f"grad_x: {label:<46} {torch.allclose(value, grad_x)}")
print(f"grad_w: {'conv2d_weight == autograd':<46} "
      f"{torch.allclose(torch.nn.grad.conv2d_weight(x, w.shape, g), grad_w)}")
print(f"grad_w: {'conv2d(x with N and C swapped, g as kernel)':<46} "
      f"{torch.allclose(F.conv2d(x.transpose(0, 1), g.transpose(0, 1)).transpose(0, 1), grad_w)}")

# %% [markdown]
# (The swaps put the batch where the channels were: the weight gradient sums over the batch
# exactly as a convolution sums over input channels.) With those two helpers a convolution
# Function is short. The helpers call the built-in `aten.convolution_backward` themselves, so
# this is a Function that *reuses* PyTorch's backward rather than one written by hand, which
# is what you would ship unless you fuse something around it:

# %%
class Conv2dFunction(torch.autograd.Function):
    """F.conv2d(x, weight) (no bias, stride 1, no padding) with its two gradient helpers."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return F.conv2d(x, weight)

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.nn.grad.conv2d_input(x.shape, weight, grad_output)
        if ctx.needs_input_grad[1]:
            grad_weight = torch.nn.grad.conv2d_weight(x, weight.shape, grad_output)
        return grad_x, grad_weight


print("gradcheck:", torch.autograd.gradcheck(
    Conv2dFunction.apply, (torch.randn(1, 2, 5, 5, dtype=torch.float64, requires_grad=True),
                           torch.randn(3, 2, 2, 2, dtype=torch.float64, requires_grad=True))))

# %% [markdown]
# ## Optional · In practice
#
# <details><summary><b>In practice</b> (open when you have time)</summary>
#
# **Accurate is not the same as fast.** `torch.var_mean` runs Welford's update: accurate, but
# on the CPU in torch 2.13 no reliable gain in speed over two plain passes (a mean, then the
# mean of the squared centred values), each of which PyTorch vectorises, although the two
# passes write a full-size temporary. On 256 rows of 1024 (1 MiB), one thread, Welford took
# from 0.7x to 1.2x as long as the two passes here, the ratio moving with the CPU's load from
# one run to the next: time your own machine:
#
# ```python
# big = torch.randn(256, 1024)
# %timeit torch.var_mean(big, -1, correction=0)
# %timeit (big - big.mean(-1, keepdim=True)).square().mean(-1)
# ```
#
# **What a LayerNorm of composed ops costs.** Your Function keeps what `F.layer_norm` keeps,
# but it is not as fast, and the reason is memory traffic. At $(4096, 1024)$ in float32 every
# full-size tensor is 16 MiB, far more than any cache, so each operation that reads or writes
# one costs a **pass over memory**, and the arithmetic is almost free. `F.layer_norm` on the
# CPU is one fused kernel that works row by row: about 10 passes for forward and backward,
# the second read of a row (4 KiB) mostly from cache. A version in composed ops pays one pass
# for every full-size read and write of every op. The course's solution, written to keep that
# count down, makes about 30 (forward 10, backward 20) and allocates one new full-size tensor
# in forward and one in backward, as `F.layer_norm` does; it takes **about 2x to 3x** the time
# of `F.layer_norm` at this size (one CPU thread, forward and backward: 1.9x, 2.2x, 2.4x and
# 2.8x in separate runs on the course's 2-core build machines, higher under load). A first
# version with `torch.var_mean`, a new tensor for every step and `g * x_hat` written out took
# 7.5x to 10x; a straightforward answer makes 35 passes or more. That is why production norms
# are kernels (Apex, Liger-Kernel, Triton's tutorial, lesson 13): a Function decides **what
# is saved and what is computed**, a kernel **how often memory is touched**. Writing the
# Function first is how those kernels are designed and tested.
#
# **The output instead of the input.** Apex's fused LayerNorm has a `memory_efficient` option
# that keeps the **output** for backward instead of `x`, since the next layer's matmul saves
# the output anyway.
#
# **Low precision: the whole row in float32.** bfloat16 keeps 8 significant bits, so every
# result rounded to it is off by up to 1 part in 256. A reduction is not the problem: on the
# CPU (and in CUDA's kernels) `x.mean(-1)` on bfloat16 adds up in float32 and rounds once.
# The problem is that your Function, fed bfloat16 tensors, rounds **every** intermediate: the
# mean, `x - mean`, rstd, $\hat x$, the products with the weight. `F.layer_norm` keeps the
# row in float32 inside its kernel and rounds only the output. On bfloat16 rows
# $3\,\mathcal N(0, 1) + 1$ of shape $(256, 1024)$, the mean error against float64 of the
# course's solution was 2.86e-3 in bfloat16, 1.13e-3 on float32 inputs cast back, and
# 1.13e-3 for `F.layer_norm`; float32 mean and rstd with the rest in bfloat16 still gave
# 2.50e-3, so keeping only the statistics in float32 is not enough. The fix in a Function is
# to compute in float32 and cast at the boundary (autograd casts the gradients back), at the
# price of a float32 copy of `x`; a fused kernel upcasts each row in registers for free.
#
# **Under autocast.** `torch.autocast(device, dtype=torch.bfloat16)` runs matrix products in
# bfloat16 but leaves the parameters in float32, so the norm after a `Linear` receives a
# bfloat16 `x` beside a float32 `weight`; autocast knows PyTorch's own ops, not your
# Function. A forward that reports what it receives sees `x` bfloat16, `weight` float32,
# autocast on; decorated with `torch.amp.custom_fwd(device_type="cpu",
# cast_inputs=torch.float32)` it sees both in float32 and autocast off (the decorator casts
# the floating-point tensor arguments only under autocast; `torch.amp.custom_bwd` on backward
# runs it under forward's autocast state). Undecorated, the course's solution ran forward
# under autocast and failed in backward, run (as PyTorch recommends) outside the autocast
# block: "addmv input tensors must have the same dtype".
#
# **Try it: your LayerNorm in float32.** Write `LayerNormFloat32`, a subclass of your
# `LayerNormFunction` that computes every row in float32 whatever it receives, returns
# bfloat16 for plain bfloat16 tensors, and works under autocast. Reuse your forward and
# backward; write only the boundary. A check (success: the error down to `F.layer_norm`'s,
# about 1.1e-3, and `x.grad` bfloat16):
#
# ```python
# x = (3 * torch.randn(256, 1024) + 1).bfloat16().requires_grad_()
# w, b = (1 + 0.1 * torch.randn(1024)).bfloat16(), (0.1 * torch.randn(1024)).bfloat16()
# truth = F.layer_norm(x.double(), (1024,), w.double(), b.double(), 1e-5)
# y = LayerNormFloat32.apply(x, w, b, 1e-5)
# y.float().square().sum().backward()
# print(f"{(y.double() - truth).abs().mean().item():.2e}", y.dtype, x.grad.dtype)
# with torch.autocast("cpu", dtype=torch.bfloat16):
#     hidden = nn.Linear(64, 1024)(torch.randn(256, 64))
#     print(LayerNormFloat32.apply(hidden, w.float(), b.float(), 1e-5).dtype)
# ```
#
# <details><summary><b>One answer</b> (open after trying)</summary>
#
# Forward, decorated with `custom_fwd(device_type="cpu",
# cast_inputs=torch.float32)`, casts `x`, the weight and the bias to float32 itself (outside
# autocast the decorator does not), calls `LayerNormFunction.forward` on them and returns the
# result cast to the dtype of the `x` it was given; backward, decorated with
# `custom_bwd(device_type="cpu")`, calls `LayerNormFunction.backward` with
# `grad_output.float()`, and the engine casts each gradient to its input's dtype. Run here
# on another draw, it gave a mean error of 1.14e-3 (`F.layer_norm`'s) against 2.93e-3 for
# the undecorated Function, `x.grad` in bfloat16, and float32 out under autocast. `F.layer_norm`
# returns bfloat16 there on the CPU: autocast's list of ops it runs in float32 differs by
# device (on CUDA `layer_norm` and `group_norm` are on it, and `F.layer_norm` returns
# float32, as yours does; the CPU's list leaves them out). Either output is safe to pass on:
# under autocast the ops that follow cast their inputs as they need.
# </details>
#
# The mistakes of practice, beside the graded ones of the common-mistakes table:
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | a norm Function computing in bfloat16 | about 2.5x the output error of `F.layer_norm` (every intermediate rounded, not only the statistics) | compute the whole row in float32 and cast the result |
# | a norm Function under `torch.autocast` with a plain forward | it receives a bfloat16 `x` beside a float32 weight, and computes in bfloat16 | `torch.amp.custom_fwd(device_type=..., cast_inputs=torch.float32)` on forward |
# | a new full-size tensor for every step of forward and backward | correct, and several times slower than `F.layer_norm`: every pass over memory costs | count the passes; write into tensors you created yourself |
# </details>

# %% [markdown]
# ## Optional · Rarer mistakes
#
# Beside the common-mistakes table of the main path: more slips of the gradient, and slips that
# break a contract bullet of their exercise; grading names each.
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | the projection term left out | wrong `grad_x`, invisible with `grad_output = ones` and the weight at ones or `None` (for LayerNorm) | the term $-\hat x_j\,\frac1D\sum_i \hat g_i \hat x_i$ inside the bracket |
# | `grad_output` used where `grad_output * weight` belongs, or the weight multiplied in after the row means | wrong `grad_x` for every weight but ones | $\hat g = g \odot w$ before the row means |
# | eps left out of backward: forward saves the variance (or mean square) and backward rebuilds `rsqrt(variance)` | `grad_x` right where the variance dwarfs eps, wrong on rows near or below it | the same `rsqrt(variance + eps)` in both, or save rstd itself |
# | every gradient computed whatever `needs_input_grad` says, or `x_hat`, `grad_output * weight` or `grad_output * x_hat` built first thing, or a weight or bias sum made beside the one the test guards | work, and memory, for gradients nobody asked for (`x_hat` serves no bias gradient, `grad_output * weight` only grad_x, `grad_output * x_hat` only grad_weight) | test `ctx.needs_input_grad[i]` before each gradient and before everything only it reads |
# | the module's output cast to `torch.promote_types(x.dtype, self.weight.dtype)` (✎ 3) | a bfloat16 `x` in a float32 module (a `Linear`'s output under autocast) comes out float32, where `nn.RMSNorm` returns bfloat16 | the output takes `x`'s dtype, whatever the module's |
# | eps as a floor, `rsqrt(variance.clamp_min(eps))` | rows of variance above eps normalised as if eps were 0, the others as if the variance were eps | eps added to the variance, on every row |
# | eps added after the square root, `1 / (sqrt(variance) + eps)` | at `eps = 1e-5` small, yet on float32 rows of unit variance some 40 times float32's own error (more where the variance is small); at `eps = 0.5` plainly wrong | eps inside the root, added to the variance |
# | ✎ 4's rows as `x.reshape(N, num_groups, -1)` | an empty batch ($N = 0$) raises: a -1 cannot be inferred from 0 elements | the row length spelled out |
# | `correction=1` (unbiased) variance | not what LayerNorm (or batch norm's normalisation) uses | `correction=0`, i.e. `unbiased=False` |
# | weight gradient summed over dim 0 only (`.sum(0)`) | right for 2-D `x`, where autograd sums what is left (rule 2); a 0-d gradient, and an error, for a 1-D `x` | `.reshape(-1, D).sum(0)`, or no sum at all |
# | `.sum(dim=())` for a 1-D `x` | sums every dim: a 0-d gradient, and an error | `.reshape(-1, D).sum(0)` |
# | saving `x` and `x_hat` (or the bias, or a copy of the weight) | a full-size tensor, or more, kept for nothing: over the budget | keep what backward cannot rebuild from the rest |
# | computing in float64 "for accuracy" and saving the float64 `x_hat` for a float32 `x` (✎ 1, ✎ 2, ✎ 4) | twice `x`'s bytes kept for backward: over the budget (✎ 3 states no budget) | compute as wide as you like; save in `x`'s dtype |
# | `ctx.mean = mean` | escapes the in-place version check and saved-tensor hooks | every tensor backward reads goes through `ctx.save_for_backward` |
# | the module's weight a plain tensor, or named `scale` | the optimiser never sees it, or `torch.nn.RMSNorm`'s `state_dict` does not load | an `nn.Parameter` named `weight`, as PyTorch's |
# | a float16 `x` squared in float16 (✎ 3) | squares overflow in float16 past 256 (65504 is its largest number): the mean square is inf and the output 0; near `1e-4` they underflow | compute a half `x` in float32 and cast the output back, as `nn.RMSNorm` does |
# | a half row normalised in float32, rounded, then multiplied by the half weight (✎ 3) | rounded twice: one unit off `nn.RMSNorm`'s output on about a quarter of the entries | round once, at the end: the weight joins the row in the dtype torch computes it in |
# | `eps` registered as a (persistent) buffer | an extra `state_dict` key: loading PyTorch's fails | a plain attribute |
# | `self.weight.data` or `.detach()` passed to the Function | the weight never gets a gradient | pass the parameter itself |
