# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 12 · Gradient surgery and debugging
#
# **About 120 minutes** for the main path, one sitting: about 45 to read and run it (measured:
# its prose and code at 200 words a minute, a minute a cell), and about 75 for the four
# exercises and the debugging tasks. The optional sections after the Summary (a
# domain-adversarial model trained with your reversal, per-row clipping against
# `clip_grad_norm_`, hooks, anomaly mode, what gradcheck cannot see) take about 45 more.
#
# Some custom Functions return a gradient that is **not** their forward's derivative, on
# purpose: **gradient reversal** (domain-adversarial training) and **clipping inside backward**
# (each sample's part of the gradient bounded before the samples are summed). And a wrong
# gradient does not say where it came from: you find two bugs in a broken Swish with
# gradcheck's report, hooks and anomaly mode, then derive a per-sample clipping nobody showed
# you.
#
# Exercises: **✎ 1 `GradientReversal`**, **✎ 2 `ClipGradientNorm`**, **✎ 3 `SoftThreshold`**,
# and the transfer exercise **✎ 4 `PerSampleClippedLinear`**.

# %% nbgrader={"locked": true}
import inspect
import math
import re
import warnings
from collections import OrderedDict

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd.gradcheck import GradcheckError

from autograder import self_check
from autograder.predictions import compare, written
from autograder.custom import FunctionExercise
from autograder.errors import GradingError
from autograder.probes import trace_backward
from autograder.exercises.lesson12_surgery.slopes import diagnosis_verdicts, slope_verdicts
from widgets import surgery_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it
torch.set_printoptions(precision=4)


def first_line(error: BaseException) -> str:
    """The first line of an error message, which is where PyTorch says what went wrong."""
    return f"{type(error).__name__}: {str(error).splitlines()[0]}"


# %% [markdown]
# ## Gradient reversal: training against a critic
#
# A classifier trained on a labelled **source** domain must work on an unlabelled **target**
# domain. Domain-adversarial training (Ganin and Lempitsky, 2015) adds a **domain critic** that
# tries to tell the domains apart from the features $h = f(x;\theta_f)$, which must make that
# impossible:
#
# $$\min_{\theta_f, \theta_y}\; \Big[ L_y(\theta_f, \theta_y)
#   - \alpha\, \min_{\theta_d} L_d(\theta_f, \theta_d) \Big].$$
#
# The critic **minimises** $L_d$; the features **maximise** it. Yet one ordinary
# `(L_y + L_d).backward()` trains it: put a layer $R$ between features and critic,
# $L_d = L_d(d(R(h)))$, the identity in forward, whose backward sends back something other than
# its derivative. The critic's parameters, after $R$, get their gradient unchanged; everything
# before $R$ gets what $R$ sends back.
#
# **Derive it.** Write $g = \partial L_d / \partial R(h)$ for what arrives at $R$ in backward.
#
# 1. What is $R$'s Jacobian $\partial R_o / \partial h_i$, and what would an honest backward
#    return?
# 2. A descent step moves $\theta_f$ along $-\partial(\text{loss})/\partial\theta_f$. Which
#    vector must $R$ send back so that, to first order, the step **increases** $L_d$ $\alpha$
#    times as fast as a plain descent step on $L_d$ would decrease it?
# 3. What does backward return for the Python float $\alpha$, and what does it need from forward?
# 4. Forward gives back $h$'s values: `x` itself, a view of it, or a copy. Each passes the
#    self-check. What does each cost, and which still works when the layer after $R$ writes its
#    input in place (`nn.ReLU(inplace=True)`)? Try it in a scratch cell, then choose, and say
#    why in a comment.
#
# <details><summary><b>Hint</b></summary>
#
# Try your vector $v$ at $\alpha = 0.5$, $g = (1, -2)$: does a step $h \leftarrow h - \eta\, v$ raise
# $L_d$ (by about $-\eta\, g \cdot v$), and by how many times what $h \leftarrow h - \eta\, g$
# lowers it?
# </details>

# %% [markdown]
# ## ✎ Exercise 1 · `GradientReversal`
#
# Write `GradientReversal`, with `GradientReversal.apply(x, alpha)`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward returns `x`'s values and saves no tensor;
# - backward returns your answer to question 2 for `x`, for `alpha` any Python float (0 and
#   negative included).

# %% nbgrader={"grade_id": "answer_GradientReversal", "solution": true}
class GradientReversal(torch.autograd.Function):
    """Identity forward; backward: your answer to question 2 (alpha a float)."""

    @staticmethod
    def forward(ctx, x, alpha):
        ### BEGIN SOLUTION
        ctx.alpha = alpha  # a number: a plain attribute, nothing saved
        return x.view_as(x)  # the same values, no copy; x itself is never written
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        return -ctx.alpha * grad_output, None  # ascent for everything before the layer
        ### END SOLUTION


# %% nbgrader={"grade_id": "GradientReversal", "grade": true, "points": 1}
self_check("GradientReversal", GradientReversal)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("GradientReversal", GradientReversal)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Descent on $-\alpha L_d$ is ascent on $L_d$: the features must receive $\partial(-\alpha
# L_d)/\partial h = -\alpha\, g$. $\alpha$ is a number, not a tensor: backward returns `None`
# for it and keeps it on `ctx` as a plain attribute; no tensor is saved.
#
# `x` itself and `x.view_as(x)` cost nothing (autograd turns an input returned as is into a view
# of it), but a view made inside a Function may not be written in place later:
# `torch.relu_(GradientReversal.apply(h, 1.0))` raises "Output 0 of GradientReversal is a view
# and is being modified inplace", as autograd's repair of an in-place view would replace your
# backward. `x.clone()` costs one tensor of $h$'s size and a pass over it, and the next layer may
# write into it. The solution returns a view, as the models here never write $h$ in place.
# </details>

# %% [markdown]
# **Quick question 1.** Your `GradientReversal` is correct. Does `gradcheck` pass it? The two
# Jacobians gradcheck compares for `alpha = 0.5`, the numerical and the analytical, are both
# diagonal: what number does each hold on its diagonal? Write your predictions in the first
# lines of the next cell, then run it.

# %%
### BEGIN WORKED
gradcheck_passes_reversal = False
numerical_diagonal = 1.0
analytical_diagonal = -0.5
### LEARNER
gradcheck_passes_reversal = None  # your prediction: True or False
numerical_diagonal = None  # your prediction: a number
analytical_diagonal = None  # your prediction: a number
### END WORKED

x = torch.randn(3, dtype=torch.float64, requires_grad=True)
reverse = lambda t: GradientReversal.apply(t, 0.5)
try:
    passed = torch.autograd.gradcheck(reverse, (x,))
except GradcheckError as error:
    passed = False
    if written(gradcheck_passes_reversal, numerical_diagonal, analytical_diagonal):
        print("\n".join(str(error).splitlines()[:7]))  # the report, once you have predicted
with torch.no_grad():  # central differences of forward, one column per input, as gradcheck
    numerical = torch.stack([(reverse(x + 1e-6 * e) - reverse(x - 1e-6 * e)) / 2e-6
                             for e in torch.eye(3, dtype=x.dtype)], dim=1)
analytical = torch.autograd.functional.jacobian(reverse, x)  # one backward per output
compare("gradcheck passes GradientReversal", gradcheck_passes_reversal, passed)
compare("numerical Jacobian's diagonal", numerical_diagonal, round(numerical[0, 0].item(), 6))
compare("analytical Jacobian's diagonal", analytical_diagonal, round(analytical[0, 0].item(), 6))

# %% [markdown]
# <details><summary><b>Explanation</b></summary>
#
# gradcheck compares backward with central differences of **forward**, the identity: the
# numerical Jacobian is $I$, the analytical one $-0.5\,I$. A Function that changes a gradient on
# purpose is not its forward's derivative, so gradcheck has nothing to agree with (at
# `alpha = -1` it passes, proving nothing). It is checked against the gradient it is meant to
# return, as the self-check did.
# </details>

# %% [markdown]
# ## Clipping inside backward, per row
#
# `torch.nn.utils.clip_grad_norm_` runs **after** backward: it scales **all** parameter
# gradients by one factor, once the samples' gradients are summed. A Function can act before
# that sum: on a tensor whose rows are samples, an identity forward and a backward that bounds
# the L2 norm of each row of `grad_output` by `max_norm`.
#
# **Derive it.** Let $g_r$ be row $r$ of `grad_output` (its last dimension), $n_r = \lVert g_r
# \rVert_2$ and $m$ = `max_norm`.
#
# 1. A row with $n_r > m$ must keep its direction and get norm $m$: by what factor is it
#    multiplied? Which factor do the other rows get, a row of zeros included?
# 2. Python's `if` asks one True or False of a whole tensor. How do you give each row its
#    factor in one computation, for any number of leading dimensions?
# 3. `max_norm` runs from $10^{-3}$ to $10^{3}$, and float16 holds numbers only up to 65504,
#    with all its digits only down to about $6 \cdot 10^{-5}$. In which order do your factor's
#    steps keep every intermediate inside the dtype's range, and its digits?
#
# <details><summary><b>Hint 1</b>: one row, then every row</summary>
#
# Work out the factor for rows of norm $m/2$ and $5m$: which must be 1? With
# $m / 0 = +\infty$ and $0 / 0 =$ `nan`, what does your factor give a row of zeros?
# </details>
#
# <details><summary><b>Hint 2</b>: the ends of the range</summary>
#
# Evaluate each intermediate of your order in float16 (largest 65504) at $m = 10^{3}$ for a row
# $(200, 0)$, and at $m = 10^{-3}$ for a row $(150, 200)$. Which leaves the range?
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `ClipGradientNorm`
#
# Write `ClipGradientNorm`, with `ClipGradientNorm.apply(x, max_norm)`, for `x` of at least one
# dimension.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward returns `x`'s values and saves no tensor;
# - backward brings every row (last dimension) of `grad_output` whose L2 norm is above
#   `max_norm` to norm `max_norm`, its direction kept, exactly (nothing added to the norm);
# - every other row comes back unchanged, a row of zeros included;
# - for float64, float32 and float16 rows whose squared norms are inside the dtype's range,
#   and `max_norm` from 1e-3 to 1e3, each row comes back right to the dtype's precision: no step the
#   result depends on overflows, or falls so far below the normal numbers that entries lose
#   their digits.

# %% nbgrader={"grade_id": "answer_ClipGradientNorm", "solution": true}
class ClipGradientNorm(torch.autograd.Function):
    """Identity forward; backward bounds the L2 norm of each row of grad_output by max_norm."""

    @staticmethod
    def forward(ctx, x, max_norm):
        ### BEGIN SOLUTION
        ctx.max_norm = max_norm
        return x.view_as(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        norms = torch.linalg.vector_norm(grad_output, dim=-1, keepdim=True)
        clipped = norms > ctx.max_norm  # never a row of zeros, whatever max_norm rounds to
        # divide first: |grad_output / norms| <= 1, and times max_norm stays in range
        return torch.where(clipped, (grad_output / norms) * ctx.max_norm, grad_output), None
        ### END SOLUTION


# %% nbgrader={"grade_id": "ClipGradientNorm", "grade": true, "points": 2}
self_check("ClipGradientNorm", ClipGradientNorm)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ClipGradientNorm", ClipGradientNorm)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# The factor is $s_r = \min(1,\ m / n_r)$, the gradient $s_r\, g_r$. Choosing by
# `norms > max_norm` (`torch.where`) never uses the quotient for a row of zeros. Dividing first,
# `(grad_output / norms) * max_norm`, keeps every step in range on the rows it is used for:
# the quotient is at most 1, the product at most `max_norm`, and it rounds least. The factor
# first, `max_norm / norms` (as `clip_grad_norm_` computes it), is `inf` on a row of zeros, used
# only under the `where`, and in float16 at a small `max_norm` it can fall below the normal
# numbers, where it keeps fewer digits: one rounding shared by the whole row (under a relative
# 1% at the contract's ends, up to some 15 ulps of an entry), so the direction is kept and the
# row stays within float16's tolerance. The product first, `grad_output * max_norm / norms`,
# never overflows under the `where` (every clipped float16 row of the contract has a norm below
# 256), but at a small `max_norm` a wide row's small entries times `max_norm` fall far below
# the normal numbers, where each keeps a bit or two or rounds to 0. A clamp of the norms at
# `max_norm` in float16 rounds `max_norm` itself (0.3 becomes 0.30005), so a row below it no
# longer comes back unchanged.
# </details>

# %% [markdown]
# ## A broken `SoftThreshold`, and a debugging workflow
#
# The soft threshold (the proximal operator of the L1 norm; `F.softshrink` with a learnable
# threshold) shrinks every entry towards 0 by $\lambda$ and zeroes those within $\lambda$ of it:
#
# $$y = \operatorname{sign}(x)\,\max(|x| - \lambda,\ 0), \qquad \lambda \ge 0
#   \text{ a 0-d tensor}.$$
#
# Sparse coding (learned ISTA) and wavelet denoising learn $\lambda$, so backward needs its
# gradient too.
#
# **Derive the backward first.**
#
# 1. On $x > \lambda$, on $x < -\lambda$ and on $|x| < \lambda$, write $y$ without `sign`,
#    `abs` or `max`, and differentiate each piece with respect to $x$ and to $\lambda$.
# 2. At $|x| = \lambda$ the pieces' slopes disagree. This course takes `torch.relu`'s
#    convention there, a slope of 0 at 0, as `F.softshrink` does for $x$ ($\lambda = 0$
#    included; for $\lambda > 0$, `torch.clamp` and `torch.maximum` would give 1 and 0.5 for
#    $x$, and at $\lambda = 0$ all three give 0). Predict both
#    derivatives there from it.
# 3. Every entry uses the same $\lambda$: with $\partial L/\partial y_i$ arriving for each entry,
#    what is $\partial L / \partial \lambda$?
# 4. Backward must know, per entry, whether it passes and with which sign: what is the least
#    forward can save for that, in bytes per entry?
#
# **Check step 1 live.** Write your two derivatives as expressions of a tensor `x` and a float
# `lam` in the next cell and run it: it plots them, and says whether your $\partial y/\partial x$
# agrees with autograd's off the kinks, never where. Step 2 and $\partial y/\partial\lambda$ are
# yours to settle.

# %%
def my_soft_threshold_slopes(x, lam):
    """Your steps 1 and 2: dy/dx and dy/dlam at each entry of x (two tensors of x's shape).
    The checker below judges dy/dx off the kinks only."""
    ### BEGIN WORKED
    passes = (x.abs() > lam).to(x.dtype)  # strictly: at the kink, relu's slope is 0
    return passes, -torch.sign(x) * passes
    ### LEARNER
    return None, None  # your expressions of x and lam
    ### END WORKED


grid = torch.arange(-40, 41, dtype=torch.float64) / 20  # -2 to 2: 0, ±0.5 and ±1 lie on it
fig, axes = plt.subplots(1, 3, figsize=(12, 2.6))
empty = False
for lam, color in [(0.5, "#E69F00"), (0.0, "#56B4E9")]:
    axes[0].plot(grid, torch.sign(grid) * torch.relu(grid.abs() - lam), color=color,
                 label=f"y, λ = {lam}")
    try:
        yours = my_soft_threshold_slopes(grid, lam)
        empty = yours[0] is None
        if not empty:
            yours = [torch.as_tensor(mine, dtype=torch.float64).expand_as(grid)
                     for mine in yours]
            dx, dlam = yours  # two tensors, or a ValueError shown below
    except Exception as error:  # shown, not raised: Run All goes on
        print(f"λ = {lam}: ✗ raises {type(error).__name__}: "
              + (str(error).splitlines() or [""])[0])
        continue
    if empty:
        continue
    # the checker compares your dy/dx with autograd's off the kinks: a verdict, never the values
    print("\n".join(slope_verdicts(grid, lam, dx, dlam)))
    for ax, mine, name in zip(axes[1:], yours, ("dy/dx", "dy/dλ")):
        ax.plot(grid, mine, ".", color=color, markersize=4, label=f"yours, λ = {lam}")
        ax.set_title(name, fontsize=10)
for ax in axes:
    if ax.get_legend_handles_labels()[0]:  # only where lines with labels were drawn
        ax.legend(fontsize=7)
if empty:
    print("write your two derivatives into my_soft_threshold_slopes first")
plt.show()

# %% [markdown]
# <details><summary><b>Hint 1</b>: the pieces</summary>
#
# On each piece, which of $|x| - \lambda$ and $0$ does the max pick, and what is $|x|$ there?
# Each piece is then linear in $x$ and in $\lambda$: read off its slopes, then write each
# derivative as one expression over the whole line, with $\operatorname{sign}(x)$ and an
# indicator $\mathbb 1[\cdot]$.
# </details>
#
# <details><summary><b>Hint 2</b>: the kink, and the sum</summary>
#
# At $|x| = \lambda$ the forward formula passes 0 to `torch.relu`: what does `torch.relu` send
# back at 0, and does your indicator's inequality include the kink? $\lambda$ feeds every
# $y_i$: apply the chain rule once per $y_i$ and add. (A gradient of $x$'s shape for $\lambda$
# is accepted too: autograd sums it, rule 2 of the [Function contract](function_contract.md).)
# </details>
#
# Now a broken Function from a model that went `nan`: Swish, $y = x\,\sigma(\beta x)$, with a
# learnable $\beta$ (started at 0) on ReLU features. To spare a second exponential, its
# backward reads $\sigma(\beta x)$ off the output. It has **two bugs**. Find them with the tools
# before you read its code closely.

# %%
class BrokenSwish(torch.autograd.Function):
    """x * sigmoid(beta * x), beta a 0-d tensor, with two bugs in backward, which reads
    sigmoid(beta * x) off the saved output."""

    @staticmethod
    def forward(ctx, x, beta):
        y = x * torch.sigmoid(beta * x)
        ctx.save_for_backward(x, y, beta)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y, beta = ctx.saved_tensors
        s = y / x  # sigmoid(beta * x), read off the output: no second exp
        slope = s * (1 - s)  # sigmoid's derivative at beta * x
        needs_x, needs_beta = ctx.needs_input_grad
        grad_x = grad_beta = None
        if needs_x:
            grad_x = grad_output * (s + beta * x * slope)
        if needs_beta:
            grad_beta = -(grad_output * x * x * slope)  # x's shape: rule 2 of the contract
        return grad_x, grad_beta


class Learnable(nn.Module):
    """An activation with one learnable 0-d parameter, starting at ``start``."""

    def __init__(self, function, start: float = 0.0):
        super().__init__()
        self.function = function
        self.parameter = nn.Parameter(torch.tensor(start))

    def forward(self, x):
        return self.function.apply(x, self.parameter)


def relu_model(function):
    """The model that went nan: a learnable activation on ReLU features, its parameter
    starting at 0."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 8), nn.ReLU(), Learnable(function), nn.Linear(8, 1))


xs = torch.randn(8, 2, generator=torch.Generator().manual_seed(2))  # the batch it went nan on


# %% [markdown]
# **Tool 1: gradcheck's report.** Five points, none on a kink, as a random test would pick. The
# report names the input whose Jacobian disagrees, then prints both Jacobians.

# %%
x = torch.tensor([-1.3, -0.2, 0.4, 0.9, 2.0], dtype=torch.float64, requires_grad=True)
beta = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
try:
    torch.autograd.gradcheck(BrokenSwish.apply, (x, beta))
except GradcheckError as error:
    print("\n".join(str(error).splitlines()[:5]))

# %% [markdown]
# Which input is wrong, and how do the two Jacobians compare? Write your diagnosis in the first
# lines of the next cell and run it: it says whether you read the report right.

# %%
### BEGIN WORKED
bug_1_input = 1
bug_1_factor = -1
### LEARNER
bug_1_input = None  # which input's gradient is wrong: 0 (x) or 1 (beta)
bug_1_factor = None  # the number c with analytical = c * numerical in that column
### END WORKED


def jacobian_columns(function, inputs, position):
    """(analytical, numerical) d output / d inputs[position], flattened."""
    analytical = torch.autograd.functional.jacobian(lambda *t: function.apply(*t), inputs)
    step = 1e-6
    plus, minus = [t.detach().clone() for t in inputs], [t.detach().clone() for t in inputs]
    numerical = []
    for j in range(inputs[position].numel()):
        plus[position].view(-1)[j] += step
        minus[position].view(-1)[j] -= step
        numerical.append((function.apply(*plus) - function.apply(*minus)).detach() / (2 * step))
        plus[position].view(-1)[j] -= step
        minus[position].view(-1)[j] += step
    return analytical[position].reshape(-1), torch.stack(numerical, -1).reshape(-1)


columns = [jacobian_columns(BrokenSwish, (x, beta), position) for position in (0, 1)]
wrong_input = next(p for p, (a, n) in enumerate(columns) if not torch.allclose(a, n))
analytical, numerical = columns[wrong_input]
wrong = ~torch.isclose(analytical, numerical)
if written(bug_1_input, bug_1_factor):  # the columns, once your diagnosis is written
    print(f"analytical column for input {wrong_input}:", analytical,
          f"\nnumerical column for input {wrong_input}: ", numerical)
compare("the input with the wrong gradient", bug_1_input, wrong_input)
compare("analytical = c * numerical, c", bug_1_factor,
        round((analytical[wrong] / numerical[wrong]).mean().item(), 6))

# %% [markdown]
# <details><summary><b>Hint</b> for bug 1</summary>
#
# gradcheck counts forward's inputs from 0. Raise $\beta$ a little: does $y = x\,\sigma(\beta x)$
# grow or shrink, for $x > 0$ and for $x < 0$? Which sign must each entry of $\beta$'s column
# have? (No fault found with input 0 at these points: does it have none?)
# </details>
#
# **Tool 2: hooks.** `t.register_hook(fn)` calls `fn(grad)` with the gradient of `t` when
# backward computes it; `module.register_full_backward_hook(fn)` calls
# `fn(module, grad_input, grad_output)` with the gradients arriving at the module's outputs and
# those it sends to its inputs. Each returns a handle whose `remove()` takes the hook off (the
# optional sections tour both). Does the `nan` arrive at the `Learnable` layer from above, or does
# the layer make it?
#
# Write `hooked_backward(model)`: one backward of `model(xs).sum()` with two hooks on
# the layer `model[2]`, each appending a line to `seen`: a full backward hook that says whether
# `grad_output[0]` and `grad_input[0]` hold a `nan`, and a tensor hook on the layer's output
# that says whether its gradient does. Remove both before returning. `model[:2]`, `model[2]`,
# `model[3]` in turn is the same forward as `model(...)`. When must each hook be registered?

# %%
def hooked_backward(model):
    """One backward of model(xs).sum() with a full backward hook on model[2] and a
    tensor hook on its output; returns the lines the hooks appended, both hooks removed."""
    seen = []  # each hook appends a line: where it sits, and whether its gradient holds a nan
    swish = model[2]
    ### BEGIN WORKED
    def on_module(module, grad_input, grad_output):
        seen.append(f"module hook: grad_output nan {grad_output[0].isnan().any().item()}, "
                    f"grad_input nan {grad_input[0].isnan().any().item()}")

    def on_output(grad):
        seen.append(f"tensor hook on the output: nan {grad.isnan().any().item()}")

    module_hook = swish.register_full_backward_hook(on_module)  # before the forward it watches
    output = swish(model[:2](xs))
    output_hook = output.register_hook(on_output)
    model[3](output).sum().backward()
    module_hook.remove()
    output_hook.remove()
    ### LEARNER
    # your hooks, the forward, the backward, and the removal here
    ### END WORKED
    return seen


broken = relu_model(BrokenSwish)
lines = hooked_backward(broken)
print("\n".join(lines) if lines else "hooked_backward returned no lines: write its hooks first")
if lines and len(lines) < 2:
    print("only one line: the other hook never fired. A module's full backward hook fires only "
          "if it was registered before the forward it should watch; a tensor hook only if the "
          "backward goes through the tensor it is on")
if broken[2]._backward_hooks:
    print("a module hook is still registered on the layer: remove it with its handle")

# %% [markdown]
# Read your hooks' lines, then write down what they tell you, and what you expect of the
# gradients the hooks did not look at, in the first lines of the next cell; run it to compare.

# %%
### BEGIN WORKED
nan_arrives_from_above = False
beta_grad_has_nan = True
first_layer_grad_has_nan = False
### LEARNER
nan_arrives_from_above = None  # True or False: does the gradient reaching the layer hold a nan?
beta_grad_has_nan = None  # True or False: the layer's beta gradient after this backward
first_layer_grad_has_nan = None  # True or False: model[0].weight.grad, below the ReLU
### END WORKED

broken = relu_model(BrokenSwish)
arriving = []
handle = broken[2].register_full_backward_hook(lambda m, sent, got: arriving.append(got[0]))
broken(xs).sum().backward()
handle.remove()
compare("the nan arrives from above", nan_arrives_from_above, arriving[0].isnan().any().item())
compare("beta's gradient has a nan", beta_grad_has_nan,
        broken[2].parameter.grad.isnan().any().item())
compare("the first layer's weight gradient has a nan", first_layer_grad_has_nan,
        broken[0].weight.grad.isnan().any().item())

# %% [markdown]
# <details><summary><b>Explanation</b></summary>
#
# The gradient arrives clean and leaves the layer with `nan`: the layer's backward makes it,
# and $\beta$'s gradient is `nan` too. The first layer is spared: ReLU's backward puts 0
# wherever its input was $\le 0$, whatever arrives. A module hook sees only forwards run after
# it was registered.
# </details>
#
# **Tool 3: anomaly mode.** Inside `torch.autograd.detect_anomaly()` autograd checks every
# backward node's output for `nan`: the first node that returns one raises, and a warning shows
# the line of forward that created it. The helper below prints both. In the empty cell after
# it, run one backward of a fresh `relu_model(BrokenSwish)` on `xs` in anomaly
# mode, then write what it names in the cell after that.

# %%
def backward_in_anomaly_mode(loss_of):
    """Run ``loss_of().backward()`` in anomaly mode; print the error and the forward line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            try:
                loss_of().backward()
            except RuntimeError as error:
                print(first_line(error))
    for warning in caught:
        lines = str(warning.message).splitlines()
        if lines[0].startswith("Error detected in"):  # then the forward's stack, frame by frame
            ours = [lines[i + 1].strip() for i, line in enumerate(lines[:-1])
                    if line.strip().startswith("File ") and "site-packages" not in line]
            print(lines[0].split(".")[0] + "; created in forward by:", ours[-1])


# %%
### BEGIN WORKED
backward_in_anomaly_mode(lambda: relu_model(BrokenSwish)(xs).sum())
### LEARNER
# your anomaly-mode run here
### END WORKED


# %%
### BEGIN WORKED
anomaly_node = "BrokenSwishBackward"
anomaly_gradient_of = "x"
### LEARNER
anomaly_node = None  # the name of the backward node that returned nan, as the error spells it
anomaly_gradient_of = None  # its nan output is the gradient of which input: "x" or "beta"
### END WORKED

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.detect_anomaly():
        try:
            relu_model(BrokenSwish)(xs).sum().backward()
        except RuntimeError as error:
            named = re.search(r"Function '(\w+)' returned nan values in its (\d+)", str(error))
node, position = named.group(1), int(named.group(2))
compare("the node anomaly mode names", anomaly_node, node)
compare("the input whose gradient it is", anomaly_gradient_of, ("x", "beta")[position])

# %% [markdown]
# Which values of `x` and `beta` make `BrokenSwish`'s backward produce `nan`, and why did
# gradcheck's random points never meet them? Write one such pair in the first line of the next
# cell and run it.

# %%
### BEGIN WORKED
nan_x, nan_beta = 0.0, 0.5  # x = 0: y / x is 0 / 0, whatever beta
### LEARNER
nan_x, nan_beta = None, None  # numbers for which BrokenSwish's gradient is nan
### END WORKED

if nan_x is None:
    print("write a value of x and of beta in the first line of this cell first")
else:
    t = torch.tensor([float(nan_x)], requires_grad=True)
    slope_beta = torch.tensor(float(nan_beta), requires_grad=True)
    BrokenSwish.apply(t, slope_beta).sum().backward()
    through_formula, = torch.autograd.grad((t * torch.sigmoid(float(nan_beta) * t)).sum(), t)
    print(f"x = {nan_x}, beta = {nan_beta}: grad x {t.grad.item()}, grad beta "
          f"{slope_beta.grad.item()}; autograd through the forward formula, for x: "
          f"{through_formula.item()}")

# %% [markdown]
# <details><summary><b>Hint</b> for bug 2</summary>
#
# The ReLU before the layer outputs exact zeros. Evaluate each line of the backward at such an
# entry: what is $0/0$ in floating point? How likely is a random float64 to be exactly 0, and a
# ReLU's output?
# </details>
#
# **Your diagnosis.** Copy into the next cell the two faulty lines of
# `BrokenSwish.backward`: the one that computes the wrong gradient for `beta`, and the
# one that makes the `nan`. The cell says whether your evidence found them.

# %%
### BEGIN WORKED
bug_1_line = "grad_beta = -(grad_output * x * x * slope)"
bug_2_line = "s = y / x"
### LEARNER
bug_1_line = None  # the line that computes the wrong gradient for beta, as a string
bug_2_line = None  # the line that makes the nan, as a string
### END WORKED


# the verdicts come from the lesson's library, which knows the faulty lines only as hashes
print("\n".join(diagnosis_verdicts(bug_1_line, bug_2_line,
                                   inspect.getsource(BrokenSwish.backward))))

# %% [markdown]
# ## ✎ Exercise 3 · `SoftThreshold`
#
# Write `SoftThreshold`, with `SoftThreshold.apply(x, lam)`, for `lam` a 0-d tensor
# $\lambda \ge 0$ that may require grad, from your steps 1 to 4.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward returns $\operatorname{sign}(x)\max(|x| - \lambda, 0)$, and backward its gradients
#   for `x` and `lam`, at $|x| = \lambda$ ($\lambda = 0$ included) the values of step 2's
#   convention;
# - forward saves at most as many bytes per entry as `x` takes (and `lam` if you like), never
#   `x` itself, and enough for backward to be exact (question 4 asks for the least).

# %% nbgrader={"grade_id": "answer_SoftThreshold", "solution": true}
class SoftThreshold(torch.autograd.Function):
    """sign(x) * max(|x| - lam, 0), lam a 0-d tensor."""

    @staticmethod
    def forward(ctx, x, lam):
        ### BEGIN SOLUTION
        shrunk = torch.sign(x) * torch.clamp(x.abs() - lam, min=0)
        ctx.save_for_backward(shrunk)  # y != 0 exactly where |x| > lam, with x's sign there
        return shrunk
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        shrunk, = ctx.saved_tensors
        passed = grad_output * (shrunk != 0)  # dy/dx: 1 outside the threshold, 0 on and inside
        # every entry uses lam: a sum, computed only when lam needs a gradient
        grad_lam = -(passed * torch.sign(shrunk)).sum() if ctx.needs_input_grad[1] else None
        return (passed if ctx.needs_input_grad[0] else None), grad_lam
        ### END SOLUTION


# %% nbgrader={"grade_id": "SoftThreshold", "grade": true, "points": 2}
self_check("SoftThreshold", SoftThreshold)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SoftThreshold", SoftThreshold)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\partial y/\partial x = \mathbb 1[|x| > \lambda]$ and $\partial y / \partial \lambda =
# -\operatorname{sign}(x)\, \mathbb 1[|x| > \lambda]$, the inequality strict because `torch.relu`
# sends back 0 at 0, so $\partial L/\partial\lambda = -\sum_i g_i
# \operatorname{sign}(x_i)\, \mathbb 1[|x_i| > \lambda]$. The output $y$ alone decides the
# indicator and the sign ($y \ne 0$ exactly where $|x| > \lambda$, with $x$'s sign there): saving
# it costs one entry of `x`'s dtype, and backward needs neither `x` nor `lam`. The least is one
# byte per entry, an int8 sign (`torch.sign(y).to(torch.int8)` holds all three states); `y` costs
# more but shares its storage with the output, which the next layer often keeps alive anyway.
# </details>
#
# Your `SoftThreshold` in the same model ($\lambda$ starting at 0, on the ReLU's exact zeros),
# and against `F.softshrink` (whose threshold is a float, so only the gradient for `x`
# compares):

# %%
fixed = relu_model(SoftThreshold)
print("\n".join(hooked_backward(fixed)) or "(your hooked_backward appended no lines)")
if fixed[2].parameter.grad is None:  # hooked_backward ran no backward
    fixed(xs).sum().backward()
print("lam's gradient:", fixed[2].parameter.grad)
t = torch.tensor([-1.0, -0.5, 0.0, 0.2, 0.5, 1.5], requires_grad=True)
ours, = torch.autograd.grad(SoftThreshold.apply(t, torch.tensor(0.5)).sum(), t)
builtin, = torch.autograd.grad(F.softshrink(t, 0.5).sum(), t)
print("gradient for x:", ours, " F.softshrink's:", builtin)

# %% [markdown]
# ## ✎ Exercise 4 (transfer) · `PerSampleClippedLinear`
#
# Differentially private training (DP-SGD: Abadi et al., 2016; Opacus) bounds what any **one**
# sample can do to a step: each sample's gradient of the weights is clipped to norm `max_norm`,
# then the clipped gradients are summed (and noise added, left out here). Done naively, that is
# an `(N, out, in)` tensor for a linear layer, `N` times the weight's memory.
#
# Write `PerSampleClippedLinear`, with `PerSampleClippedLinear.apply(x, weight, max_norm)`, for
# `x` of shape `(N, in)`, `weight` of shape `(out, in)` and `max_norm` a positive Python float.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward returns `x @ weight.T`, and backward `grad_output @ weight` for `x`, unclipped;
# - for `weight`, the sum over samples of each sample's gradient of `weight` times
#   $\min(1,\ m / \lVert\text{that gradient}\rVert_F)$, $m$ = `max_norm`, exactly (nothing added
#   to the norm; a zero gradient keeps factor 1);
# - no sample's gradient of `weight` built, whole or in part, no loop over samples (one or a
#   few at a time), and no work for `weight`, in forward or backward, when it needs no gradient.
#
# **Derive it.** Sample $n$ gives $y_n = W x_n$ and receives $g_n$, row $n$ of `grad_output`.
#
# 1. What is sample $n$'s gradient of $W$, as an `(out, in)` matrix built from $g_n$ and $x_n$?
# 2. What is its Frobenius norm, computed from $g_n$ and $x_n$ without forming that matrix?
# 3. With your factor $s_n$ for each sample, how do you get $\sum_n s_n \cdot$(sample $n$'s
#    gradient) without the per-sample matrices?

# %% [markdown]
# <details><summary><b>Hint 1</b>: one sample's gradient of weight</summary>
#
# With $\partial y_{n,o} / \partial W_{o'i} = \delta_{oo'}\, x_{n,i}$, what is
# $\partial L_n / \partial W_{oi}$ as a matrix?
# </details>
#
# <details><summary><b>Hint 2</b>: its norm, without building it</summary>
#
# Try numbers first: with $g_n = (1, 2)$ and $x_n = (3, 4)$, build sample $n$'s $2 \times 2$
# gradient, add up the squares of its entries, and compare with $\lVert g_n \rVert^2$ and
# $\lVert x_n \rVert^2$. Does what you see hold for any $g_n$ and $x_n$?
# </details>
#
# <details><summary><b>Hint 3</b>: the clipped sum</summary>
#
# With every $s_n = 1$ the sum is lesson 02's `grad_weight`. Which matrix product was it, and
# over which index does it sum? Written as one term per sample, where can a number that
# multiplies term $n$ go?
# </details>

# %% nbgrader={"grade_id": "answer_PerSampleClippedLinear", "solution": true}
class PerSampleClippedLinear(torch.autograd.Function):
    """x @ weight.T; backward clips each sample's gradient of weight to norm max_norm before
    summing them, without building them (x (N, in), weight (out, in), max_norm a float)."""

    @staticmethod
    def forward(ctx, x, weight, max_norm):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x, weight)
        ctx.max_norm = max_norm
        return x @ weight.T
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, weight = ctx.saved_tensors
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            # ||g_n x_n^T|| = ||g_n|| ||x_n||: one norm per sample, no outer product
            norms = torch.linalg.vector_norm(grad_output, dim=1) * torch.linalg.vector_norm(x, dim=1)
            # a norm of 0 is not above max_norm: factor 1 (its max_norm / 0 unused)
            factors = torch.where(norms > ctx.max_norm, ctx.max_norm / norms, 1.0)
            grad_weight = (grad_output * factors[:, None]).T @ x
        return grad_x, grad_weight, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "PerSampleClippedLinear", "grade": true, "points": 2}
self_check("PerSampleClippedLinear", PerSampleClippedLinear)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("PerSampleClippedLinear", PerSampleClippedLinear)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\lVert g_n x_n^\top \rVert_F = \lVert g_n \rVert\, \lVert x_n \rVert$, and with
# $s_n = \min(1, m / (\lVert g_n \rVert \lVert x_n \rVert))$ the result is $\sum_n s_n\,
# g_n x_n^\top$: one matrix product of two matrices with $N$ rows each, $s_n$ on either factor's
# row $n$. The `where` keeps a sample of norm 0 at factor 1.
# </details>

# %% [markdown]
# ## Summary
#
# A Function may return a gradient that is not its derivative, on purpose: gradient reversal
# makes a min-max game trainable by one backward pass; clipping each row of `grad_output`
# bounds each sample's row of the gradient flowing back, and `PerSampleClippedLinear` each
# sample's gradient of the weight (not of `x`), before the samples are summed, which clipping
# the summed gradient cannot. Such
# Functions are checked against the gradient they are meant to return, not by gradcheck. To
# find a wrong gradient: gradcheck's report names the input; tensor and module hooks show where
# a gradient changes (a module hook registered before the forward, both removed after); anomaly
# mode names the backward node that made a `nan` (not an `inf`) and the forward line behind it.
# The optional sections show what gradcheck cannot see (writes into `grad_output`, tensors kept
# on `ctx`, wasted work), and the two errors everyone meets.

# %% [markdown]
# ## Optional sections (not graded)
#
# The main line ends with the summary above; nothing below is needed for an exercise.
#
# ### A model where reversal is the point
#
# Two half-moons, one per class; the target domain is the source **rotated by 35°**, its labels
# used only to measure accuracy. We train with the critic's gradient stopped before the features
# (`h.detach()`), then with your reversal, `alpha` ramped from 0 to 1 as in the paper.

# %%
def two_moons(n: int, generator: torch.Generator, angle: float = 0.0):
    """n points on two interleaved half-moons (label 0 and 1), rotated by ``angle`` radians."""
    t = torch.rand(n, generator=generator) * math.pi
    label = torch.randint(0, 2, (n,), generator=generator)
    upper = torch.stack([torch.cos(t), torch.sin(t)], 1)
    lower = torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], 1)
    points = torch.where(label[:, None] == 1, lower, upper) - torch.tensor([0.5, 0.25])
    points = points + 0.1 * torch.randn(n, 2, generator=generator)
    c, s = math.cos(angle), math.sin(angle)
    return points @ torch.tensor([[c, s], [-s, c]]), label


class DomainAdversarialNet(nn.Module):
    """Features h = f(x); a label head on h; a domain critic on surgery(h)."""

    def __init__(self, width: int = 16):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, width), nn.ReLU(),
                                      nn.Linear(width, width), nn.ReLU())
        self.label_head = nn.Linear(width, 2)
        self.domain_head = nn.Sequential(nn.Linear(width, width), nn.ReLU(),
                                         nn.Linear(width, 1))

    def forward(self, x, surgery=lambda h: h):
        h = self.features(x)
        return self.label_head(h), self.domain_head(surgery(h)).squeeze(-1)


def domain_adversarial_losses(model, batch, surgery=lambda h: h):
    """Label loss on the source half, domain loss on both halves of ``batch``."""
    source, labels, target = batch
    label_logits, domain_logits = model(torch.cat([source, target]), surgery)
    domains = torch.cat([torch.zeros(len(source)), torch.ones(len(target))])
    label_loss = F.cross_entropy(label_logits[:len(source)], labels)
    return label_loss, F.binary_cross_entropy_with_logits(domain_logits, domains)


generator = torch.Generator().manual_seed(2)
source, source_labels = two_moons(100, generator)
target, target_labels = two_moons(100, generator, angle=math.radians(35))
batch = (source, source_labels, target)


def train(alpha: float, steps: int = 200, seed: int = 2):
    """Train a fresh model with reversal strength ramped up to ``alpha``; return it and a
    history of (target accuracy, critic accuracy)."""
    torch.manual_seed(seed)
    model = DomainAdversarialNet()
    optimiser = torch.optim.Adam(model.parameters(), lr=2e-2)
    history = []
    for step in range(steps):
        ramp = alpha * (2 / (1 + math.exp(-10 * step / steps)) - 1)
        surgery = ((lambda h: h.detach()) if alpha == 0 else
                   (lambda h: GradientReversal.apply(h, ramp)))
        label_loss, domain_loss = domain_adversarial_losses(model, batch, surgery)
        optimiser.zero_grad()
        (label_loss + domain_loss).backward()
        optimiser.step()
        if step % 10 == 9:
            history.append(accuracies(model))
    return model, history


@torch.no_grad()
def accuracies(model):
    """(label accuracy on the target domain, critic accuracy on both domains)."""
    label_logits, domain_logits = model(torch.cat([source, target]))
    on_target = (label_logits[len(source):].argmax(1) == target_labels).float().mean()
    domains = torch.cat([torch.zeros(len(source)), torch.ones(len(target))])
    critic = ((domain_logits > 0).float() == domains).float().mean()
    return on_target.item(), critic.item()


# %% tags=["skip-when-grading"]
plain_model, plain_history = train(alpha=0.0)
reversal_model, reversal_history = train(alpha=1.0)

fig, (data_ax, curve_ax) = plt.subplots(1, 2, figsize=(11, 3.4))
for points, labels, marker, name in [(source, source_labels, "o", "source"),
                                     (target, target_labels, "x", "target")]:
    data_ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", marker=marker,
                    s=14, label=f"{name} (colour: class)")
data_ax.set_title("source, and target rotated by 35°", fontsize=10)
data_ax.legend(fontsize=8)
steps = [10 * (i + 1) for i in range(len(plain_history))]
for history, style, name in [(plain_history, "--", "no reversal"),
                             (reversal_history, "-", "reversal")]:
    curve_ax.plot(steps, [a for a, _ in history], style, color="#E69F00",
                  label=f"target label accuracy, {name}")
    curve_ax.plot(steps, [c for _, c in history], style, color="#56B4E9",
                  label=f"critic accuracy, {name}")
curve_ax.axhline(0.5, color="#999999", linewidth=0.8)
curve_ax.set_xlabel("training step")
curve_ax.legend(fontsize=7, loc="lower right")
plt.show()
for name, history in [("no reversal", plain_history), ("reversal   ", reversal_history)]:
    print(f"{name}: target label accuracy {history[-1][0]:.2f}, "
          f"critic accuracy {history[-1][1]:.2f}")

# %% [markdown]
# Without reversal the critic separates the domains easily and the label head's rule
# transfers poorly to the target domain. With reversal the critic is pushed towards chance (0.5, grey line) and the target
# accuracy rises, with no target label used.

# %% [markdown]
# ### Per row against `clip_grad_norm_`
#
# A linear regression, 64 samples, one mislabelled (its target off by 50): its gradient
# dominates the sum. We compare the parameter gradient with the 63 clean samples' gradient, by
# their cosine: plain; then `clip_grad_norm_(1.0)`; then your `ClipGradientNorm` on the
# predictions, `max_norm = 0.05`.
#
# **Quick question 2.** The plain gradient's cosine with the clean one is 0.74. What will it be
# after `clip_grad_norm_`, and after your per-sample clipping? Write two numbers in the first
# lines of the next cell, then run it.

# %%
### BEGIN WORKED
cosine_after_clip_grad_norm = 0.74
cosine_after_per_sample_clipping = 0.99
### LEARNER
cosine_after_clip_grad_norm = None  # your prediction, a number between -1 and 1
cosine_after_per_sample_clipping = None  # your prediction, a number between -1 and 1
### END WORKED

torch.manual_seed(0)
regression = nn.Linear(4, 2)
inputs = torch.randn(64, 4)
targets = inputs @ torch.randn(4, 2) + 0.1 * torch.randn(64, 2)
targets[0] += 50.0  # the mislabelled sample


def parameter_gradient(rows=slice(None), surgery=lambda y: y, clip_parameters=None):
    """The gradient of the mean squared error over ``rows``, flattened."""
    regression.zero_grad()
    predictions = surgery(regression(inputs[rows]))
    F.mse_loss(predictions, targets[rows], reduction="sum").div(64).backward()
    if clip_parameters is not None:
        torch.nn.utils.clip_grad_norm_(regression.parameters(), clip_parameters)
    return torch.cat([p.grad.flatten() for p in regression.parameters()])


clean = parameter_gradient(rows=slice(1, None))
compared = {
    "plain": parameter_gradient(),
    "clip_grad_norm_(1.0)": parameter_gradient(clip_parameters=1.0),
    "ClipGradientNorm(0.05)": parameter_gradient(
        surgery=lambda y: ClipGradientNorm.apply(y, 0.05)),
}
cosines = {name: F.cosine_similarity(grad, clean, dim=0).item()
           for name, grad in compared.items()}
if written(cosine_after_clip_grad_norm, cosine_after_per_sample_clipping):  # once predicted
    for name, grad in compared.items():
        print(f"{name:>24}: norm {grad.norm():7.3f}, cosine with the clean gradient "
              f"{cosines[name]:.3f}")
compare("cosine after clip_grad_norm_", cosine_after_clip_grad_norm,
        round(cosines["clip_grad_norm_(1.0)"], 3), abs_tol=0.05)  # a cosine to two digits
compare("cosine after per-sample clipping", cosine_after_per_sample_clipping,
        round(cosines["ClipGradientNorm(0.05)"], 3), abs_tol=0.05)

# %% [markdown]
# <details><summary><b>Explanation</b></summary>
#
# `clip_grad_norm_` multiplies the whole gradient by one positive number: the norm drops, the
# **direction** does not move, and the mislabelled sample still sets it. Clipping each row
# bounds each sample's say before the sum, and the cosine rises close to 1.
# </details>

# %% [markdown]
# ### The view: gradient norms with surgery on and off
#
# The model trained above without reversal (`plain_model`), one batch, one
# backward, with **your** `GradientReversal` and `ClipGradientNorm` between the features and
# the critic (`domain_head(reversal(clip(h)))`). The bars are the weight-gradient norm of each layer,
# the dashed outline the same without surgery; the log lists, in the order backward ran them,
# what a module hook on each layer and a tensor hook on each side of the surgery saw (the
# main line's two sections on hooks set such hooks).
#
# Switch the reversal off and on: no bar moves much (the label loss is almost 0 after
# training, so the critic's gradient is nearly all the features receive, and reversing it
# keeps its norm); only the cosine in the log shows the flip. Norms alone cannot tell a
# reversed gradient from a correct one; hooks can. Then switch clipping on and slide
# `max_norm` down: the largest row the features receive stops at `max_norm`.

# %% tags=["skip-when-grading"]
surgery_explorer(plain_model, batch, domain_adversarial_losses, GradientReversal,
                 ClipGradientNorm)

# %% [markdown]
# ### Watching gradients: tensor hooks
#
# `t.register_hook(fn)` calls `fn(grad)` when the gradient with respect to `t` has been
# computed in backward, and returns a **handle**. `fn` may return `None` (it only looks) or a
# tensor (what autograd does with that tensor is the first part of the question below).
# `handle.remove()` takes the hook off.
#
# **Quick question 3.** Below, a hook on the hidden activation `h` records the gradient's
# norm in `seen`, and a second hook returns `2 * grad`. Does the second change `w1.grad`? Does
# the first hook see the gradient before or after the doubling? The cell runs backward three
# times, the third after both handles are removed: how many norms will `seen` hold at the
# end? Write your predictions in the first lines of the next cell, then run it.

# %%
### BEGIN WORKED
second_hook_doubles_w1_grad = True
first_hook_sees_the_doubled_gradient = False
norms_in_seen_at_the_end = 2
### LEARNER
second_hook_doubles_w1_grad = None  # your prediction: True or False
first_hook_sees_the_doubled_gradient = None  # your prediction: True or False
norms_in_seen_at_the_end = None  # your prediction: a whole number
### END WORKED

w1 = torch.randn(3, 4, requires_grad=True)
w2 = torch.randn(4, 1, requires_grad=True)
h = torch.tanh(torch.randn(5, 3) @ w1)
output = (h @ w2).sum()
seen = []  # the norms the first hook saw
look = h.register_hook(lambda grad: seen.append(round(grad.norm().item(), 4)))
output.backward(retain_graph=True)  # keep the graph: we backpropagate through it three times
reference = w1.grad.clone()
double = h.register_hook(lambda grad: 2 * grad)
w1.grad = None
output.backward(retain_graph=True)
compare("the second hook doubles w1.grad", second_hook_doubles_w1_grad,
        torch.allclose(w1.grad, 2 * reference))
compare("the first hook sees the doubled gradient", first_hook_sees_the_doubled_gradient,
        seen[1] != seen[0])
look.remove()
double.remove()
w1.grad = None
output.backward()
compare("norms in seen at the end", norms_in_seen_at_the_end, len(seen))
if written(second_hook_doubles_w1_grad, first_hook_sees_the_doubled_gradient,
           norms_in_seen_at_the_end):  # what the hooks saw, once you have predicted
    print("after remove(): w1.grad is the plain gradient again:",
          torch.allclose(w1.grad, reference), "; norms the first hook saw:", seen)

# %% [markdown]
# <details><summary><b>Explanation</b></summary>
#
# The first hook only reads; the second returns a tensor, and autograd uses it in place of
# the gradient for everything below `h`: `w1.grad` doubles. Hooks run in the order they were
# registered, so the first one saw the same norm both times, before the doubling. After
# `remove()` a hook never runs again: the third backward added no norm, so `seen` holds two.
# Until `remove()` a hook stays on its tensor: forget `remove()` and every later backward
# runs it, and a hook that stores the gradients it sees (not a float made from them, as this
# one does) keeps every one of them alive. A hook belongs to the **tensor** it was registered
# on: the next forward makes a new `h` with no hooks, so a hook that must see every step is
# registered in every forward (or on a module, next).
# </details>

# %% [markdown]
# ### Watching gradients: module backward hooks
#
# `module.register_full_backward_hook(fn)` calls `fn(module, grad_input, grad_output)` each
# time gradients with respect to the module's **inputs** have been computed: `grad_output`
# holds the gradients arriving at its outputs, `grad_input` those it sends back to its
# inputs (not its parameters' gradients, which go to `.grad`). It works for any module
# whose forward takes and returns tensors, and returning a tuple from `fn` replaces
# `grad_input`. Here one hook per layer of the domain-adversarial model, during one backward
# with reversal: the log comes out in the order backward runs, from the losses down.

# %%
model = DomainAdversarialNet()
log, handles = [], []
for name, layer in model.named_modules():
    if isinstance(layer, nn.Linear):
        def record(module, grad_input, grad_output, name=name):
            sent = grad_input[0]  # None for the first layer: its input needs no gradient
            log.append(f"{name:>14}: grad_output norm {grad_output[0].norm():.4f}, grad_input "
                       f"{'None' if sent is None else f'norm {sent.norm():.4f}'}")
        handles.append(layer.register_full_backward_hook(record))

label_loss, domain_loss = domain_adversarial_losses(
    model, batch, lambda h: GradientReversal.apply(h, 1.0))
(label_loss + domain_loss).backward()
for handle in handles:
    handle.remove()
print("\n".join(log))

# %% [markdown]
# The first layer reports `grad_input` as `None`: its input, the data, needs no gradient, and
# PyTorch warns that its hook fired with nothing to report for the inputs. The view above keeps such a
# log for you, with reversal and clipping switched on and off.
#
# One catch: a full backward hook is set up when the module runs forward, so it must be
# registered **before** the forward it should watch.
#
# ### Locating a NaN: `torch.autograd.detect_anomaly`
#
# A single `nan` in one gradient spreads to every parameter after the next optimiser step, and
# by then nothing says where it came from. The classic source is a branch that is not taken
# in forward but still differentiated in backward:

# %%
u = torch.tensor([-1.0, 4.0], requires_grad=True)
torch.where(u > 0, torch.sqrt(u), torch.zeros_like(u)).sum().backward()
print("forward is fine, yet u.grad =", u.grad)

# %% [markdown]
# `torch.where` sends a gradient of 0 to the branch it did not pick, and `sqrt`'s backward
# multiplies that 0 by $1 / (2\sqrt{x})$, which is `nan` at $x = -1$: $0 \cdot \text{nan} =
# \text{nan}$. Inside `torch.autograd.detect_anomaly()` autograd records a traceback of each
# forward op and checks every backward node's output for `nan`: the first node that produces
# one raises, and a warning shows **the line of forward that created that node**.
#
# The main line's helper `backward_in_anomaly_mode` shows both:

# %%
u = torch.tensor([-1.0, 4.0], requires_grad=True)
backward_in_anomaly_mode(lambda: torch.where(u > 0, torch.sqrt(u), torch.zeros_like(u)).sum())

# %% [markdown]
# Anomaly mode slows everything down (a traceback per op), so switch it on around the step
# that goes wrong, never for a whole training run. The fix is to keep the bad values out of
# the op, not to clean up the gradient afterwards: give `sqrt` an input that is safe wherever
# its result is not used (the In practice block below shows why `x.clamp(min=0)` is not
# enough).
#
# ### Three bugs, and what gradcheck says of them
#
# gradcheck compares the Jacobian your backward implies with central differences, one row at
# a time, through a `grad_output` it owns. Here are three Functions of `x²` and `a * b`, each
# with a real bug:
#
# - `WritesGradOutput` computes its gradient **in** `grad_output` (`mul_`);
# - `KeepsOnCtx` keeps its input as `ctx.x` instead of `save_for_backward`;
# - `IgnoresNeeds` computes both gradients even when only one input requires grad.
#
# **Quick question 4.** How many of the three does gradcheck pass? And the second cell below
# adds `WritesGradOutput.apply(p)` to `q * 1` and calls `backward(seed_gradient)` with
# `seed_gradient` all ones: does the caller's `seed_gradient` still hold ones afterwards?
# Write your predictions in the first lines of the next cell, then run it.

# %%
### BEGIN WORKED
passing_gradcheck = 3
seed_gradient_still_ones = False
### LEARNER
passing_gradcheck = None  # your prediction: 0, 1, 2 or 3
seed_gradient_still_ones = None  # your prediction: True or False
### END WORKED


class WritesGradOutput(torch.autograd.Function):
    """x², with a backward that reuses grad_output's memory."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output.mul_(2 * x)


class KeepsOnCtx(torch.autograd.Function):
    """x², with x kept as a ctx attribute."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2 * ctx.x


class IgnoresNeeds(torch.autograd.Function):
    """a * b, with both gradients computed whatever is asked."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return grad_output * b, grad_output * a


a, b = torch.randn(2, 5, 5, dtype=torch.float64, requires_grad=True)
passed = 0
for function, inputs in [(WritesGradOutput, (a,)), (KeepsOnCtx, (a,)), (IgnoresNeeds, (a, b))]:
    result = torch.autograd.gradcheck(function.apply, inputs)
    passed += result
    if written(passing_gradcheck):  # each verdict, once you have predicted
        print(f"{function.__name__:>16}: gradcheck {result}")
compare("how many pass gradcheck", passing_gradcheck, passed)

# %% [markdown]
# <details><summary><b>Explanation</b></summary>
#
# All three: gradcheck is blind to anything that does not change the Jacobian. Before each
# call of backward it zeroes its `grad_output` buffer and sets a single 1 (one row of the
# Jacobian), so a write into it is wiped before anything reads it again; where a tensor is
# kept does not change a number; and doing unneeded work gives the same numbers, only slower. Each bug shows up
# elsewhere, as the next cell measures.
# </details>

# %%
p = torch.randn(3, requires_grad=True)
q = torch.randn(3, requires_grad=True)
seed_gradient = torch.ones(3)
(q * 1 + WritesGradOutput.apply(p)).backward(seed_gradient)
compare("the caller's seed_gradient still holds ones", seed_gradient_still_ones,
        torch.equal(seed_gradient, torch.ones(3)))
if written(seed_gradient_still_ones):  # the tensors, once you have predicted
    print("1. the caller's gradient tensor after backward:", seed_gradient,
          "(was ones; q.grad =", q.grad, ")")

u = torch.randn(3, dtype=torch.float64, requires_grad=True)
hidden = u * 1
squared = KeepsOnCtx.apply(hidden)
with torch.no_grad():
    hidden.add_(1)  # changed after forward: backward should refuse
squared.sum().backward()
print("2. ctx.x changed in place, no error; gradient wrong by", (u.grad - 2 * u).abs().max().item())

only_a, constant_b = torch.randn(5, requires_grad=True), torch.randn(5)
product = IgnoresNeeds.apply(only_a, constant_b)
ops = trace_backward(product, [only_a, constant_b], torch.ones(5)).ops
print("3. backward ran", [op for op in ops if op == "mul"], "for one wanted gradient: one",
      "product was for b, which requires no grad")

# %% [markdown]
# 1. Autograd passed the caller's own tensor to both branches of the sum, **the same
#    tensor**: the write changed the caller's tensor, and `q`'s branch, which ran after `p`'s,
#    received the changed values, so `q.grad` is wrong (it should be ones). Which branch runs
#    first is the engine's choice, so a bug like this comes and goes with unrelated edits.
# 2. `save_for_backward` would have raised "modified by an inplace operation"; the attribute
#    let backward use the changed values, silently.
# 3. Wasted work: `ctx.needs_input_grad` says which gradients are wanted. Rule 2 asks you to
#    skip the rest; the work is counted only where an exercise bounds it (its `None` is
#    checked everywhere).
#
# The course's batteries test these directly: `grad_output` left untouched and no tensor kept
# on `ctx` wherever an exercise computes a gradient, `None` for every input that needs no
# gradient in every exercise (rule 2), and the work itself only where a contract says an
# exercise skips it (lesson 02's `MyLinearFunction`, and this lesson's last exercise): your
# `SoftThreshold` that sums `lam`'s gradient and then returns `None` for it passes.

# %% [markdown]
# ### Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | reversal without the sign, or without `alpha` | the features help the critic, or the balance of the two losses is fixed at 1 | which function of $L_d$ must the features descend on? |
# | a tensor returned for `alpha` or `max_norm` | `RuntimeError`: it is not a tensor | `None` |
# | `grad_output.mul_(...)`, `neg_()` in backward | another branch or the caller sees your write; gradcheck does not notice | compute a new tensor |
# | clipping by the norm of the whole gradient | that is `clip_grad_norm_`: the direction does not change | one norm per row |
# | `grad_output * max_norm / max(norm, max_norm)` (TF's `clip_by_norm` order), or `grad_output / max(norm / max_norm, 1)` | right in float64 and float32; in float16 at `max_norm = 1e3` the product `grad_output * max_norm` overflows to `inf`, at `1e-3` the quotient `norm / max_norm` overflows and the row comes back as zeros | divide first: `(grad_output / norm) * max_norm`, whose quotient is at most 1 |
# | every row scaled to `max_norm`, or `max_norm / norm` alone | small rows blown up; `nan` for a row of zeros | $\min(1, m / n_r)$, which is 1 at $n_r = 0$ |
# | a gradient of 1 for `x` at $\lvert x\rvert = \lambda$ (at $x = 0$ when $\lambda = 0$ too, where $y = x$) | it breaks the convention the contract fixes, 0 there as `F.softshrink`; random test points never land on the kink | test the kink itself, $\lambda = 0$ included, against `F.softshrink` |
# | a gradient that is `nan` at one exact value (a kink, or $0/0$ at $x = 0$) | gradcheck passes; a ReLU's exact zeros land on it, and one `nan` spoils every sum it enters | hooks show which backward makes it, anomaly mode names the node; evaluate each line at that value |
# | one input's gradient off by a constant factor | a learnable parameter moves the wrong way, or at the wrong rate | gradcheck's report names the input; the two Jacobians give the factor |
# | a tensor kept as `ctx.x` | in-place changes go unnoticed; gradcheck passes | `ctx.save_for_backward(x)` |
# | a full backward hook registered after the forward, or never removed | it never fires for that forward; or it runs on every later backward, keeping what it stores alive | register first, `handle.remove()` after |
# | backward returns `None` for an input that requires grad | `autograd.grad` says the input was not used | return its gradient |
# | `retain_graph=True` to silence "backward through the graph a second time" | memory kept for a graph you did not mean to reuse | recompute, or `.detach()` |

# %% [markdown]
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **A layer over a sequence (ghost clipping).** In a transformer a linear layer sees `x` of
# shape `(N, T, in)`: sample $n$'s gradient of `weight` is a sum of $T$ outer products,
# $G_n^\top X_n$ with $G_n$ `(T, out)` and $X_n$ `(T, in)`. Does your norm shortcut still
# hold? Expand $\lVert G_n^\top X_n \rVert_F^2$ in index notation before you read on:
# $\sum_{o,i} \big(\sum_t G_{n,to} X_{n,ti}\big)^2 = \sum_{t, t'} (G_n G_n^\top)_{tt'}\,
# (X_n X_n^\top)_{tt'}$. For $T = 1$ the double sum has one term and factors into the two
# norms; for $T > 1$ the cross terms $t \ne t'$ stay, and the product of the two norms is only
# an upper bound. Two `(T, T)` Gram matrices per sample replace the `(out, in)` gradient,
# cheaper whenever $2T^2 <$ `out * in`: the "ghost clipping" of Li et al. (2021), which Opacus
# implements. Checked here against the definition (both give the same norms, `allclose`):
#
# ```python
# sequence_x = torch.randn(3, 5, 4, dtype=torch.float64)  # N = 3 samples of T = 5 rows, in = 4
# sequence_g = torch.randn(3, 5, 6, dtype=torch.float64)  # out = 6
# definition = torch.einsum("nto,nti->noi", sequence_g, sequence_x).flatten(1).norm(dim=1)
# grams = ((sequence_g @ sequence_g.mT) * (sequence_x @ sequence_x.mT)).sum((1, 2)).sqrt()
# ```
#
# **What real DP-SGD clips.** DP-SGD as published, and Opacus by default (`clipping="flat"`),
# clip sample $n$'s gradient of **all** parameters together: the factor uses the norm over
# every layer at once. A Function inside one layer's backward cannot know the other layers'
# norms when it runs, so stacking `PerSampleClippedLinear` layers is per-layer clipping: a
# real variant (Opacus takes one bound per layer), where bounds $m_l$ give a whole-sample norm
# of at most $\sqrt{\sum_l m_l^2}$, not $m$. Flat clipping needs every norm before any
# reweighting: a first backward (or hooks) for the norms, then a second, reweighted backward,
# which is how ghost clipping runs. A layer with a bias adds it to the norm: its gradient for
# sample $n$ is $g_n$, so the norm is $\lVert g_n\rVert \sqrt{\lVert x_n\rVert^2 + 1}$. Checked
# here against `torch.func.vmap(torch.func.grad(...))` on 32 samples (`allclose`):
#
# ```python
# samples_x = torch.randn(32, 4, dtype=torch.float64)  # 32 samples, in = 4
# samples_g = torch.randn(32, 6, dtype=torch.float64)  # their output gradients, out = 6
# params = (torch.randn(6, 4, dtype=torch.float64), torch.randn(6, dtype=torch.float64))
# loss = lambda p, x, g: (g * (p[0] @ x + p[1])).sum()  # sample n's loss through the layer
# grads = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, samples_x,
#                                                                      samples_g)
# definition = torch.cat([grads[0].flatten(1), grads[1]], 1).norm(dim=1)
# shortcut = samples_g.norm(dim=1) * (samples_x.norm(dim=1) ** 2 + 1).sqrt()
# ```
#
# **When not to write a Function.** Gradient reversal needs no class: a tensor hook may
# return a tensor, which then replaces the gradient that passes through the tensor it is on.
# Take a view of `h`, `r = h.view_as(h)`, feed `r` to the critic, and register on `r` a hook
# that returns what your `GradientReversal.backward` returns for `x`: only the critic's path
# is turned around, since a hook on `h` itself would also change the gradient the label head
# sends to `h`. A hook is enough for a one-off; a Function is the better tool when the surgery
# needs tensors saved from forward (as `PerSampleClippedLinear` needs `x`: a hook sees only
# the gradient) or must be a reusable layer of the model.
#
# **Keeping a `nan` out of an unused branch.** `torch.sqrt(x.clamp(min=0))` inside the
# `where` is not enough: at exactly $x = 0$ clamp passes the gradient through, and `sqrt`'s
# backward there is $1/0 = \infty$, so the 0 that `where` sends to the branch it did not pick
# becomes $0 \cdot \infty$, `nan` again. A second `where` gives `sqrt` an input that is safe
# wherever its result is not used:
#
# ```python
# x = torch.tensor([0.0, 4.0], requires_grad=True)
# torch.where(x > 0, torch.sqrt(torch.where(x > 0, x, 1.0)), torch.zeros_like(x)).sum().backward()
# ```
#
# gives `x.grad = [0, 0.25]` on torch 2.13, where `x.clamp(min=0)` in the inner place gives
# `[nan, 0.25]`. The 1 is any value where `sqrt` and its derivative are finite.
#
# **Module hooks and in-place ops.** A full backward hook passes the module's outputs through
# a Function of its own, so an in-place op straight after the module (`nn.ReLU(inplace=True)`)
# fails in forward: "Output 0 of BackwardHookFunction is a view and is being modified inplace".
#
# **The course's batteries on the three bugs.** `FunctionExercise` is the grading library's
# way of describing an exercise; run on the three Functions of "Three bugs", its checks give
# the hints a learner would see:
#
# ```python
# squaring = FunctionExercise("Squaring", reference=lambda x: x * x)
# product = FunctionExercise("Product", reference=lambda a, b: a * b, arguments=("a", "b"),
#                            needs_input_grad=True)
# for check, function in [(squaring.self_check, WritesGradOutput),
#                         (squaring.self_check, KeepsOnCtx),
#                         (lambda f: product.check_needs_input_grad(f, "cpu"), IgnoresNeeds)]:
#     try:
#         check(function)
#     except GradingError as error:
#         print(f"{function.__name__:>16}: {error.hint}")
# ```
#
# On torch 2.13 they say "Squaring's backward modified grad_output in place: compute a new
# tensor instead", "Squaring stores a tensor as ctx.x: use ctx.save_for_backward" and
# "Product.backward returns a tensor for b when only a requires grad, computed as when every
# input does: what does ctx.needs_input_grad say about b, and what may backward return for an
# input that needs no gradient?".
# </details>

# %% [markdown]
# ### Two errors everyone meets
#
# Two error messages every autograd user meets sooner or later, and what each usually means.
#
# **A second backward through a freed graph.** Backward frees the tensors each node saved as
# soon as it has used them. Calling backward again through the same nodes finds them gone:

# %%
leaf = torch.randn(3, requires_grad=True)
loss = torch.exp(leaf).sum()  # exp saves its output for backward
loss.backward()
try:
    loss.backward()
except RuntimeError as error:
    print(first_line(error))

# %% [markdown]
# Usually this means a tensor computed once, outside the training loop (a running total, a
# cached embedding), is used in each step's loss: the second step backpropagates into the
# first step's freed graph. Recompute it per step, or `.detach()` it if no gradient should
# flow. `loss.backward(retain_graph=True)` is the right answer only when you do need two
# backward passes through one graph, and it keeps every saved tensor alive until the graph
# goes.
#
# **A differentiated tensor not used in the graph.** `torch.autograd.grad(outputs, inputs)`
# refuses an input the outputs do not depend on:

# %%
used, unused = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
try:
    torch.autograd.grad((used * 2).sum(), [used, unused])
except RuntimeError as error:
    print(first_line(error))
print("with allow_unused=True:", torch.autograd.grad((used * 2).sum(), [used, unused],
                                                      allow_unused=True)[1])

# %% [markdown]
# (Older versions said "One of the differentiated Tensors appears to not have been used in
# the graph".) In custom-Function code it most often means the graph was cut: an input
# was `.detach()`ed, went through `.data` or `.item()`, or reached the output only from
# inside a Function's `forward` without being one of `apply`'s arguments (a global, an
# attribute): autograd is off in `forward` and gives gradients to the arguments alone, so
# the output depends on that tensor and the graph still does not hold it. `allow_unused=True`
# returns `None` for it; use that when "no gradient" is the right answer, not to silence a
# cut graph.

# %% [markdown]
# ### Three failures on your own
#
# Three short scripts, each broken in a way this lesson's tools find. Each comes with the
# cell that shows the failure and a check that says whether you found it; no hints this time.
#
# **A model that goes `nan`.** A small model with a row-normalising Function in it,
# and one batch, pooled from recordings of different lengths. One backward, and a parameter's
# gradient is `nan`. Using anomaly mode and hooks (your own, in the empty cell), find **which
# module's backward first makes the `nan`** (its name, as `model.named_modules()` gives it)
# and **which sample of the batch** (a row index) it comes from; then say why. Leave the
# model and the data as they are.

# %%
class RowNormalize(torch.autograd.Function):
    """Each row divided by its L2 norm; a row of zeros stays zeros."""

    @staticmethod
    def forward(ctx, x):
        norms = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        ctx.save_for_backward(x, norms)
        return x / norms.clamp(min=1e-12)

    @staticmethod
    def backward(ctx, grad_output):
        x, norms = ctx.saved_tensors
        y = x / norms
        return (grad_output - y * (grad_output * y).sum(-1, keepdim=True)) / norms


class Normalise(nn.Module):
    def forward(self, x):
        return RowNormalize.apply(x)


def padded_model():
    torch.manual_seed(1)
    return nn.Sequential(OrderedDict(embed=nn.Linear(3, 6, bias=False), norm=Normalise(),
                                     mix=nn.Linear(6, 6), act=nn.Tanh(), out=nn.Linear(6, 1)))


def pooled(recordings):
    """One row per recording: the sum of its readings (3 numbers each)."""
    return torch.stack([recording.sum(0) for recording in recordings])


readings = torch.Generator().manual_seed(25)
recordings = [torch.randn(int(length), 3, generator=readings)
              for length in torch.randint(0, 5, (8,), generator=readings)]
padded_batch = pooled(recordings)
model = padded_model()
model(padded_batch).pow(2).mean().backward()
print("parameters whose gradient holds a nan:",
      [name for name, p in model.named_parameters() if p.grad.isnan().any()])

# %%
# your investigation here


# %%
### BEGIN WORKED
nan_module = "norm"
nan_sample = 3
### LEARNER
nan_module = None  # the name of the module whose backward first makes the nan, e.g. "mix"
nan_sample = None  # the row of padded_batch it comes from
### END WORKED
# your two answers above, then run this cell: it checks them without printing them

model = padded_model()
found = {}  # the first module whose grad_input holds a nan, in the order backward runs


def first_nan(module, grad_input, grad_output, name):
    sent = grad_input[0]
    if sent is not None and sent.isnan().any() and not found:
        found.update(module=name, rows=sent.isnan().any(1).nonzero().flatten().tolist())


for name, module in model.named_children():  # a model used once: its hooks go with it
    module.register_full_backward_hook(
        lambda module, grad_input, grad_output, name=name: first_nan(module, grad_input,
                                                                     grad_output, name))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # embed's input needs no gradient: a warning, not news
    model(padded_batch).pow(2).mean().backward()
compare("the module whose backward makes the nan", nan_module, found["module"])
compare("the sample it comes from", nan_sample, found["rows"][0])

# %% [markdown]
# <details><summary><b>Explanation</b>, after your check</summary>
#
# Anomaly mode names the node at once: `RowNormalizeBackward` returned `nan` in its 0th
# output. Hooks on the modules give the rest: `norm` is the first whose `grad_input` holds a
# `nan` (`mix`, `act` and `out` ran before it in backward and sent finite gradients), in one
# row only, the recording with no readings: its sum is a row of zeros, so its norm is 0.
# Forward survives that row, dividing by `norms.clamp(min=1e-12)`; backward recomputes
# $y = x / \lVert x\rVert$ with the norm **unclamped**, and $0/0$ is `nan`. The fix is in
# `RowNormalize`, not in the data: backward must use the norm forward used (save the clamped
# norms, or clamp them again). It then gives that row what autograd through forward's own
# formula gives, as `F.normalize` does: `grad_output` times $10^{12}$, large but finite. A
# backward and a forward that disagree on such a guard pass `gradcheck` on random inputs:
# only a zero row reaches it.
#
# Anomaly mode checks for `nan` only. Had backward returned `inf` (a division by an exact
# zero), it would have passed, and the node named would be further down, where an `inf` first
# became `nan` (`inf - inf`, `0 * inf`). When the named node looks innocent, hook the
# gradients above it and look for `inf` too (`torch.isfinite`).
# </details>

# %% [markdown]
# The next two are each broken by one of the two errors everyone meets.
#
# **A step that works once.** A training script runs its first step and fails on the
# second: the cell after `three_steps` runs it. Read the error, and fix `three_steps` in place
# so that three steps run and the encoder trains: each step's loss computed from the
# parameters as they are at that step.

# %%
tokens = torch.randn(32, 4, generator=torch.Generator().manual_seed(3))
answers = torch.randn(32, 1, generator=torch.Generator().manual_seed(4))


def three_steps():
    """Three SGD steps of an encoder and a head on (tokens, answers); the losses, the encoder."""
    torch.manual_seed(0)
    encoder, head = nn.Linear(4, 8), nn.Linear(8, 1)
    optimiser = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
    features = torch.tanh(encoder(tokens))  # the encoder's view of the data, worked out once
    losses = []
    for step in range(3):
        loss = F.mse_loss(head(features), answers)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses, encoder


# %%
try:
    losses, trained_encoder = three_steps()
except RuntimeError as error:
    print("three_steps fails:", first_line(error))
else:
    torch.manual_seed(0)
    initial = nn.Linear(4, 8).weight.detach()  # the encoder as three_steps creates it
    # the losses of three SGD steps, each computed from that step's parameters (torch 2.13)
    expected = [0.816389, 0.765489, 0.735588]
    if torch.allclose(torch.tensor(losses), torch.tensor(expected), rtol=1e-4):
        print("✓ three steps, and every loss is the one the current parameters give")
    elif torch.equal(trained_encoder.weight.detach(), initial):
        print("three steps ran, but the encoder never changed: its gradient no longer reaches "
              "it. Which step's graph should its gradient come from?")
    else:
        print("three steps ran and the encoder changed, but the losses are not the current "
              f"parameters' ({[round(loss, 6) for loss in losses]} against {expected}): what "
              "do steps 2 and 3 compute their loss from?")


# %% [markdown]
# **A gradient that goes missing.** `shift` is a learnable offset shared by every entry,
# added by a small Function. Asking for both gradients fails. Find out why, and fix the code
# above the `try` so that the cell prints both gradients.

# %%
weights = torch.randn(5, generator=torch.Generator().manual_seed(5)).requires_grad_()
shift = torch.tensor(0.25, requires_grad=True)


class AddOffset(torch.autograd.Function):
    """x + offset, for a 0-d offset."""

    @staticmethod
    def forward(ctx, x, offset):
        return x + offset

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


def loss_of(weights, shift):
    return torch.tanh(AddOffset.apply(2 * weights, shift)).sum()


try:
    grad_weights, grad_shift = torch.autograd.grad(loss_of(weights, shift), [weights, shift])
except RuntimeError as error:
    print("torch.autograd.grad fails:", first_line(error))
else:
    truth = torch.autograd.grad(torch.tanh(2 * weights + shift).sum(), [weights, shift])
    returned = []  # what AddOffset.backward itself returns for shift, before the engine sees it

    class Recorded(AddOffset):
        @staticmethod
        def backward(ctx, grad_output):
            grads = AddOffset.backward(ctx, grad_output)
            returned.append(grads[1])
            return grads

    torch.autograd.grad(Recorded.apply(2 * weights, shift).sum(), shift, allow_unused=True)
    if grad_shift is None:
        print("allow_unused=True silences the error, and shift still gets no gradient")
    elif not (torch.allclose(grad_weights, truth[0]) and torch.allclose(grad_shift, truth[1])):
        print(f"both gradients came back, but not the right ones: shift's is "
              f"{grad_shift.item():.4f}, the truth {truth[1].item():.4f}")
    else:
        summed = ("" if returned[0].shape == shift.shape else
                  f" (backward returned shape {tuple(returned[0].shape)} for shift; autograd summed "
                  "it to shape (), as rule 2 of the Function contract allows)")
        print("✓ both gradients, and right: a backward that returns None for an input that "
              "requires grad reads to autograd.grad as that input not being used" + summed)
