# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 08 · Functions for `torch.func` and `torch.compile`
#
# **About 110 minutes** for the main path, up to the Summary: derivations you check live as you
# go, a prediction and three exercises. The optional sections after the Summary take about 55
# minutes more, and are never graded.
#
# Everything so far ran in eager mode. Modern code also **transforms** functions: `torch.vmap`
# maps a function over a batch dimension (per-sample gradients), `torch.func.jvp` and
# `torch.autograd.forward_ad` push tangents *forward*, and `torch.compile` traces Python into a
# graph to optimise it. This lesson writes a Function (the **setup_context form**, with a `jvp`)
# and **custom operators** (`torch.library.custom_op`) that work with them, and measures where
# each kind stops.
#
# Every Function and operator obeys the [Function contract](function_contract.md); an exercise
# states only what it decides. Exercises: **✎ 1 `LogSumExp`**, **✎ 2 `softplus`**, and the
# transfer exercise **✎ 3 `squared_norm`**, each with a self-check that runs every check grading
# runs.

# %% nbgrader={"locked": true}
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

from autograder import self_check
from autograder.predictions import compare, written
from widgets import compile_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it


# %% [markdown]
# ## The maths: two directions of one derivative
#
# For $y = f(x)$ with Jacobian $J = \partial y / \partial x$, autograd offers two products:
#
# - **reverse mode** (backward): given $v$ = `grad_output`, compute $v^\top J$;
# - **forward mode** (`jvp`): given a tangent $t$ for the input, compute $J t$, the change of
#   the output along $t$, in the same pass as the forward.
#
# Both are made of the same local derivatives $\partial y_i / \partial x_j$. Written out entry
# by entry, which index does $v^\top J$ sum over, and which does $J t$? Exercise 1 asks it of
# log-sum-exp.

# %% [markdown]
# ## Worked example: `Scale` in the setup_context form
#
# What changes from lesson 00: `forward` takes **no `ctx`**, and a separate `setup_context(ctx,
# inputs, output)` keeps what the derivatives need (`inputs` is the tuple given to `apply`).
# `generate_vmap_rule = True` lets `torch.vmap` batch the Function.
#
# Forward mode is one more staticmethod, `jvp(ctx, *tangents)`: one tangent per input of
# `forward` (`None` for an input that is not a tensor), one tangent per output returned, in
# that output's dtype as a gradient is in its input's (nothing casts a tangent back).
# `Scale.apply(x, c)` is $y = c\,x$ for a Python float $c$. Both of its derivatives read $c$
# alone, a number: it goes on `ctx`, and no tensor is saved.

# %%
class Scale(torch.autograd.Function):
    """y = c * x for a Python float c, usable under torch.vmap, torch.func.jvp and forward_ad."""

    generate_vmap_rule = True  # let torch.vmap batch forward, backward and jvp for us

    @staticmethod
    def forward(x, c):  # no ctx
        return c * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, c = inputs
        ctx.c = c  # a number: a plain attribute; no derivative here reads a tensor

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.c * grad_output, None  # one per input: None for the float c

    @staticmethod
    def jvp(ctx, x_tangent, c_tangent):  # c_tangent is None: c is not a tensor
        return ctx.c * x_tangent  # how y moves when x moves along x_tangent


x = torch.tensor([[0.0, 1.0, 2.0], [-1.0, 0.5, 3.0]], dtype=torch.float64)
print("vmap over rows:     ",
      torch.allclose(torch.vmap(Scale.apply, in_dims=(0, None))(x, 3.0), 3 * x))
per_sample = torch.vmap(torch.func.grad(lambda row: (Scale.apply(row, 3.0) ** 2).sum()))(x)
print("per-sample grads:   ", torch.allclose(per_sample, 18 * x))
_, tangent_out = torch.func.jvp(lambda x: Scale.apply(x, 3.0), (x,), (torch.ones_like(x),))
print("torch.func.jvp:     ", torch.allclose(tangent_out, torch.full_like(x, 3.0)))
print("gradcheck, batched and forward mode: ", torch.autograd.gradcheck(
    lambda x: Scale.apply(x, 3.0), (x.clone().requires_grad_(),), check_batched_grad=True,
    check_forward_ad=True))

# %% [markdown]
# **Tensors for `jvp`.** The two directions keep two separate lists: `backward` reads what
# `ctx.save_for_backward(...)` kept, and `jvp` what **`ctx.save_for_forward(...)`** kept; inside
# `jvp`, `ctx.saved_tensors` holds that second list only. A `Sin` Function, whose jvp reads `x`:
#
# ```python
# ctx.save_for_forward(x)  # in setup_context
# x, = ctx.saved_tensors   # in jvp: what save_for_forward kept
# ```

# %% [markdown]
# **Predict.** `ScaleOldForm` below is `Scale` written the lesson-00 way, with backward only:
# `forward(ctx, x, c)` keeps `c` on `ctx` inside forward, with no `setup_context`. The cell
# after next tries `gradcheck`, `torch.compile(fullgraph=True)` (TorchDynamo records the tensor
# operations it meets into a graph; `fullgraph=True` turns anything it cannot record into an
# error), `torch.vmap`, and per-sample gradients with `torch.func.grad`. For each, write
# `"works"` or `"raises"` into `prediction_old_form`.

# %%
prediction_old_form = {"gradcheck": None,  # "works" or "raises", for each
                       "compile fullgraph": None,
                       "vmap": None,
                       "func.grad": None}

# %% tags=["skip-when-grading"]
class ScaleOldForm(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        return c * x

    @staticmethod
    def backward(ctx, grad_output):
        return ctx.c * grad_output, None


compiled_old = torch.compile(lambda t: ScaleOldForm.apply(t, 3.0).sin(), fullgraph=True,
                             backend="aot_eager")
attempts = {
    "gradcheck": lambda: torch.autograd.gradcheck(lambda t: ScaleOldForm.apply(t, 3.0),
                                                  (x.clone().requires_grad_(),)),
    "compile fullgraph": lambda: torch.allclose(compiled_old(x.clone().requires_grad_()),
                                                (3 * x).sin()),
    "vmap": lambda: torch.vmap(ScaleOldForm.apply, in_dims=(0, None))(x, 3.0),
    "func.grad": lambda: torch.vmap(torch.func.grad(
        lambda r: ScaleOldForm.apply(r, 3.0).sum()))(x),
}
for name, attempt in attempts.items():
    try:
        attempt()
        observed = "works"
    except RuntimeError as error:
        observed = "raises"
        if written(prediction_old_form):  # the errors, once your four predictions are written
            print(f"{name}: {str(error)[:128]}...")
    compare(name, prediction_old_form[name], observed, if_wrong="read the explanation below")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `gradcheck` and `torch.compile` work: `gradcheck` calls the Function the ordinary way, and
# dynamo traces `forward` and `backward` itself. The `torch.func` transforms refuse it, with an
# error that names the fix: they run `forward` on their own wrapped tensors and then decide what
# to save, so the saving must live in a separate `setup_context`.
# </details>

# %% [markdown]
# ## The maths of log-sum-exp
#
# Exercise 1 is **log-sum-exp** along a dimension, $y = \log \sum_j e^{x_j}$. Lesson 06 kept it
# per row of scores, $L = m + \log \ell$: how did it form the weights from it? Derive
# $\partial y / \partial x_j$ and its overflow-free form from there (the live check below
# asks for it where $e^{x}$ overflows). What is new is
# who consumes that derivative: backward and jvp. For each, what shape does it receive, what
# shape must it return, and which index, if any, does it sum over? And a second derivative
# (lesson 04) differentiates your backward itself:
#
# 1. What is $\partial^2 y / \partial x_j \partial x_k$? Write it from the entries of
#    $\partial y / \partial x$.
# 2. Name two different sets of tensors that `setup_context` could keep for backward. For
#    each, what does autograd get when it differentiates your backward: your answer to 1, or
#    something else?
#
# <details><summary><b>Hint 1</b>: a question</summary>
#
# The derivative of $\log u$ is $u' / u$. With $u = \sum_k e^{x_k}$, which function you know is
# $\partial y / \partial x_j$? The entries add up to 1: why must they? Written as a ratio of
# exponentials, an entry overflows at $x = 1000$: by what could you divide its top and its
# bottom so that no exponent left in it is positive? More than one quantity does it: which
# would your backward and your jvp keep, and which recompute?
# </details>
#
# <details><summary><b>Hint 2</b>: an overflow-free forward</summary>
#
# Write every term as $e^{c} \cdot e^{x_j - c}$ and take $e^{c}$ out of the sum: what does the
# log make of it? Which $c$ makes every exponent left $\le 0$?
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# At $x = (0, 1, 2)$: $y = 2.40761$, $\partial y / \partial x = (0.09003, 0.24473, 0.66524)$;
# with $g = 2$, $\partial L/\partial x = (0.18006, 0.48946, 1.33048)$; with the tangent
# $\dot x = (1, 0, -1)$, $\dot y = -0.57521$; $\partial^2 y / \partial x_3^2 = 0.22270$ and
# $\partial^2 y / \partial x_1 \partial x_3 = -0.05989$. At $x = (1000, 999, 998)$ in float64,
# `x.exp().sum().log()` is `inf`, and your forward gives $1000.40761$.
# </details>
#
# **Check your first step live.** Work out $\partial y / \partial x_3$ at
# $x = (1000, 1000, 1001)$ as a number (does your formula give a number there?) and write it
# into `lse_entry`; the next cell compares it with autograd's.

# %%
### BEGIN WORKED
lse_entry = 1 / (2 * math.exp(-1) + 1)  # e^1001 / (2 e^1000 + e^1001), e^1001 divided out
### LEARNER
lse_entry = None  # your number: dy/dx_3 at x = (1000, 1000, 1001)
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_lse_entry() -> None:
    """Your number for dy/dx_3 at x = (1000, 1000, 1001) against autograd's, with a question
    for each usual slip."""
    if lse_entry is None:
        print("Write your number for dy/dx_3 into lse_entry first.")
        return
    at = torch.tensor([1000.0, 1000.0, 1001.0], dtype=torch.float64)
    jacobian_row = torch.func.grad(lambda t: torch.logsumexp(t, 0))(at).tolist()
    truth = jacobian_row[2]
    try:
        mine = float(lse_entry)
    except (TypeError, ValueError, RuntimeError):  # a lambda, or a tensor of several numbers
        print(f"✗ lse_entry is a {type(lse_entry).__name__}: write one number")
        return
    near = lambda a, b: abs(a - b) <= 1e-3 * abs(b)  # noqa: E731 - four digits will do
    if near(mine, truth):
        print(f"✓ {mine:.4g}: autograd's dy/dx_3 at x = (1000, 1000, 1001) is {truth:.6g}")
    elif not math.isfinite(mine):
        print(f"✗ {mine}: an exponential overflowed. Hint 1 asks how to write the entry so"
              " that no exponent in it is positive")
    elif near(mine, jacobian_row[0]):
        print("✗ that is the entry of x_1 (and of x_2): which entry belongs to x_3?")
    elif near(mine, math.log(truth)):
        print("✗ that is the logarithm of the entry: is your answer dy/dx_3, or its log?")
    elif near(mine, 1.0):
        print("✗ 1 is the slope of max(x) alone: y depends on x_1 and x_2 too. The three"
              " entries add up to 1: why must they?")
    else:
        print(f"✗ {mine:.4g} is not dy/dx_3 there: redo the derivative at this point by hand")


check_lse_entry()

# %% [markdown]
# ## ✎ Exercise 1 · `LogSumExp`
#
# `LogSumExp.apply(x, dim)` returns `torch.logsumexp(x, dim)` (no `keepdim`) for an `x` with at
# least one dimension, `dim` a Python int naming one of size 1 or more. Decide before you write
# `setup_context`: which tensors does each derivative read, into which of the two lists does
# each go, how does `dim` reach them, and which of your sets from question 2 keeps a second
# derivative right? Say why in a comment.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward, backward and jvp finite and accurate for $|x|$ up to 1000 in float64;
# - the setup_context form with `generate_vmap_rule = True`, so that `torch.vmap`,
#   `torch.func.grad` and `torch.func.jvp` accept it;
# - a `jvp` staticmethod, so that forward-mode AD (`torch.func.jvp`, `forward_ad`) accepts it;
# - a backward that autograd can differentiate once more: a second derivative through it (lesson
#   04) is right.

# %% nbgrader={"grade_id": "answer_LogSumExp", "solution": true}
class LogSumExp(torch.autograd.Function):
    """y = log(sum(exp(x), dim)), stable; works under vmap, jvp and forward_ad."""

    generate_vmap_rule = True  # torch.vmap batches forward, backward and jvp for us

    @staticmethod
    def forward(x, dim):
        ### BEGIN SOLUTION
        m = x.amax(dim, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # a row of -inf stays -inf
        return (x - m).exp().sum(dim).log() + m.squeeze(dim)
        ### END SOLUTION

    @staticmethod
    def setup_context(ctx, inputs, output):
        ### BEGIN SOLUTION
        x, dim = inputs
        ctx.dim = dim
        ctx.save_for_backward(x, output)
        ctx.save_for_forward(x, output)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, output = ctx.saved_tensors
        p = (x - output.unsqueeze(ctx.dim)).exp()  # softmax along dim
        return grad_output.unsqueeze(ctx.dim) * p, None
        ### END SOLUTION

    @staticmethod
    def jvp(ctx, x_tangent, dim_tangent):
        ### BEGIN SOLUTION
        x, output = ctx.saved_tensors
        p = (x - output.unsqueeze(ctx.dim)).exp()
        return (p * x_tangent).sum(ctx.dim)
        ### END SOLUTION


# %% nbgrader={"grade_id": "LogSumExp", "grade": true, "points": 2}
self_check("LogSumExp", LogSumExp)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("LogSumExp", LogSumExp)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours, after your self-check is green</b></summary>
#
# $\partial y / \partial x_j = e^{x_j} / \sum_k e^{x_k} = e^{x_j - y} = p_j$, the softmax along
# `dim`, with $x_j - y \le 0$. Backward: $\partial L/\partial x_j = g\,p_j$, $g$ unsqueezed at
# `dim`; jvp: $\dot y = \sum_j p_j\,\dot x_j$. Forward: $y = m + \log \sum_j e^{x_j - m}$,
# $m = \max_j x_j$. Second derivative: $\partial p_j / \partial x_k = p_j(\delta_{jk} - p_k)$.
# `setup_context` keeps `x` and the output in both lists, and backward computes $p$ from them,
# so autograd differentiates backward through $p$ (and through the output, by your own
# backward). Saving $p$ itself gives the same first derivatives, but $p$ was computed where no
# graph is recorded: a constant to autograd. Differentiating the first gradient again then raises
# *"element 0 of tensors does not require grad"*, `gradgradcheck` reports a Jacobian mismatch,
# and where `grad_output` itself requires grad, differentiating with respect to `x` raises *"The
# differentiated Tensor at index 0 appears to not have been used in the graph"* (`None` with
# `allow_unused=True`).
# </details>

# %% [markdown]
# ## A Function under `torch.compile`
#
# `torch.compile` runs TorchDynamo over your bytecode: it records tensor operations into an FX
# graph and hands it to a backend (`aot_eager` here: trace forward and backward ahead of time, run
# them eagerly). Where it cannot follow the Python it **breaks the graph**: the call runs in
# ordinary Python between two graphs. `fullgraph=True` turns a break into an error with its
# reason. Predict before you run the next cells: with an input that requires grad, does
# `fullgraph=True` accept your `LogSumExp`, which defines `jvp`? And the same class without `jvp`?
# Here is yours:

# %%
def through_logsumexp(x):
    return LogSumExp.apply(x, -1).exp() * 2


x_training = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
through_logsumexp(x_training)  # eager first: a stub raises its NotImplementedError here
try:
    torch.compile(through_logsumexp, fullgraph=True, backend="aot_eager")(x_training)
except Exception as error:
    print(type(error).__name__)
    print("\n".join(str(error).splitlines()[:3]))
with torch.no_grad():  # autograd records nothing: dynamo traces forward alone
    torch.compile(through_logsumexp, fullgraph=True, backend="aot_eager")(x_training)
print("under torch.no_grad(): one graph, no error")

# %% [markdown]
# In torch 2.13 dynamo does not trace a Function that defines `jvp` while autograd records (an
# input that requires grad, as in training); under `torch.no_grad()` it traces `forward` alone in
# one graph. Without `fullgraph=True` nothing is raised: the graph breaks at the Function, dynamo
# compiles your `forward` on its own as a first graph and the code after the Function as a
# second. The same class without `jvp` is traced, forward **and** backward, into one graph:

# %%
class LogSumExpNoJvp(LogSumExp):
    jvp = torch.autograd.Function.jvp  # back to the default: "not implemented"


LogSumExpNoJvp.apply(x_training, -1)  # eager first
start = time.perf_counter()
compiled = torch.compile(lambda x: LogSumExpNoJvp.apply(x, -1).exp() * 2, fullgraph=True,
                         backend="aot_eager")
# not .backward(): a re-run would add up
grad, = torch.autograd.grad(compiled(x_training).sum(), x_training)
expected = 2 * torch.softmax(x_training, -1) * x_training.logsumexp(-1, keepdim=True).exp()
print(f"full graph without jvp; gradient right: {torch.allclose(grad, expected)}"
      f" ({time.perf_counter() - start:.1f} s to compile)")

# %% [markdown]
# So with a Function you choose: forward-mode AD (a `jvp`) or one graph under `torch.compile`,
# not both, on this version. A **custom operator** is the other way in.
#
# ## Custom operators: opaque to the compiler on purpose
#
# `torch.library.custom_op("namespace::name", mutates_args=())` turns a Python function with type
# annotations into an operator of PyTorch's dispatcher, one node of the compiler's graph. To
# build the graph without running your code, the compiler needs the output's shape, dtype and
# strides from the inputs alone: the **fake implementation** (`@op.register_fake`), run on
# tensors that carry metadata but no data.
#
# Worked example, `autograd_course::matvec(A, v)`, $y = A v$, with a fake implementation and
# nothing else. `torch.library.opcheck` runs the checks the compiler relies on: the schema, the
# autograd registration, the fake against the real output, and ahead-of-time tracing.

# %%
@torch.library.custom_op("autograd_course::matvec", mutates_args=())
def matvec(A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return A @ v


@matvec.register_fake
def _(A, v):
    return A.new_empty(A.shape[0])  # shape (m,), A's dtype and device: from the inputs alone


A = torch.randn(3, 4, dtype=torch.float64)
v = torch.randn(4, dtype=torch.float64)
print("an operator:", torch.ops.autograd_course.matvec.default)
print("opcheck:", torch.library.opcheck(matvec, (A, v)))
A.requires_grad_()
y = matvec(A, v)
print("with A requiring grad, the output requires grad:", y.requires_grad)
try:
    y.sum().backward()
except RuntimeError as error:
    print("backward:", error)

# %% [markdown]
# The operator has no derivative until you register one:
# `op.register_autograd(backward, setup_context=setup_context)`, two functions in the roles they
# play in a Function. `backward(ctx, grad_output)` returns one gradient per input of the
# operator, in the order of its signature, non-tensors included. `register_autograd` calls
# `setup_context(ctx=..., inputs=..., output=...)` with keywords, so its parameters must have
# exactly those names.

# %% [markdown]
# ## Softplus with a scale: before Exercise 2
#
# Exercise 2's operator is **softplus** with a positive scale $\beta$,
# $s(x) = \frac{1}{\beta}\log(1 + e^{\beta x})$: lesson 01's `Softplus` at $z = \beta x$, divided
# by $\beta$. Its derivative (count the factors of $\beta$), its overflow-free form, and which
# tensor backward computes the slope from so that the left tail keeps its digits are lesson 01's
# questions with $\beta$ added; an optional section after the Summary checks your answers live.
#
# The new question is the fake's. `matvec`'s fake makes a fresh contiguous vector, as `A @ v`
# does. An element-wise op need not: it may give its output `x`'s strides, or not, op by op.
# Before you write the fake, print `.stride()` of what your forward's ops return for a
# transposed `x`, a column slice and an expanded one. Which keep `x`'s strides, and which
# constructor makes an empty tensor with the same?

# %% [markdown]
# ## ✎ Exercise 2 · `softplus`, the custom operator `autograd_course::softplus`
#
# Turn `softplus(x, beta)` below into the custom operator `autograd_course::softplus`, $\log(1 +
# e^{\beta x}) / \beta$ for a tensor `x` and a Python float `beta` > 0. Decide before you write it:
# which strides does your fake give, for the ops *your* forward uses? What does `setup_context`
# keep (say why in a comment, with what it costs in memory)? What does backward return for each
# input?
#
# **Contract.** Your operator obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - finite for $\beta x$ in the thousands, and accurate in both tails, in float64 and float32:
#   to the dtype's precision on the right, and to about five significant digits far on the
#   left, where $s \approx e^{\beta x} / \beta$ is tiny but not 0;
# - a fake implementation whose output has the real output's shape, dtype and strides;
# - a backward written by hand and registered for autograd, its gradient as accurate in the left
#   tail as the value;
# - passes `torch.library.opcheck`, and a `torch.compile(fullgraph=True)` of a function calling it
#   matches eager values and gradients.
#
# Keep every registration in the answer cell: re-running a cell that defines an operator replaces
# the earlier definition and what was registered on it.

# %% nbgrader={"grade_id": "answer_softplus", "solution": true}
def softplus(x: torch.Tensor, beta: float) -> torch.Tensor:
    """The custom operator autograd_course::softplus: log(1 + exp(beta * x)) / beta, finite for
    large |beta * x|, with a fake implementation and a hand-written backward."""
    ### BEGIN SOLUTION
    z = beta * x
    return (z.clamp(min=0) + torch.log1p(torch.exp(-z.abs()))) / beta  # max(z,0)+log1p(e^-|z|)


# the function form of the decorator: the annotations above give the schema
softplus = torch.library.custom_op("autograd_course::softplus", softplus, mutates_args=())


@softplus.register_fake
def _(x, beta):
    return torch.empty_like(x)  # the output's shape, dtype and device, from the inputs alone


def softplus_setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def softplus_backward(ctx, grad_output):
    x, = ctx.saved_tensors
    return grad_output * torch.sigmoid(ctx.beta * x), None  # d/dx softplus = sigmoid(beta x)


softplus.register_autograd(softplus_backward, setup_context=softplus_setup_context)
### END SOLUTION


# %% nbgrader={"grade_id": "softplus", "grade": true, "points": 2}
self_check("softplus", softplus)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("softplus", softplus)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours, after your self-check is green</b></summary>
#
# With $z = \beta x$: $s = \big(\max(z, 0) + \operatorname{log1p}(e^{-|z|})\big) / \beta$ and
# $s'(x) = \frac{1}{\beta}\,\sigma(z)\,\beta = \sigma(\beta x)$: the two $\beta$s cancel. The
# solution keeps $x$ and computes $\sigma(\beta x)$, smooth at $z = 0$ and with no subtraction
# to lose digits in. Keeping $s$ passes too, with `-torch.expm1(-beta * s)`, not
# $1 - e^{-\beta s}$. The fake is `torch.empty_like(x)` because this forward's ops keep `x`'s
# layout: `x`'s strides where `x` is dense, no gaps where it is not. The fake describes what
# your forward returns, not `x`: a forward through `F.logsigmoid`, whose output is contiguous
# whatever `x` is, needs a contiguous fake, `x.new_empty(x.shape)`.
# </details>

# %% [markdown]
# ### A batching rule for an operator: `register_vmap`
#
# `torch.vmap` over an operator with no batching rule still gives the right values: PyTorch calls
# it once per sample, in a loop, and warns *"There is a performance drop..."*. A **batching
# rule** replaces that loop by one call on the whole batch, `rule(info, in_dims, *inputs) ->
# (output, out_dims)`: each tensor input arrives **with** its batch dimension, at `in_dims[i]`
# (`None` for an input every sample shares, always for an int or a float); `info.batch_size` is
# the number of samples; `out_dims` says where the output's batch dimension is. Register it with
# `op.register_vmap(rule)`. (A Function's `generate_vmap_rule` cannot batch code that leaves
# PyTorch's ops: an optional section shows it.)

# %% [markdown]
# ## ✎ Exercise 3 (transfer) · `squared_norm`, an operator with a batching rule
#
# Turn `squared_norm(x, dim)` below into the custom operator `autograd_course::squared_norm`,
# `(x * x).sum(dim)` (no `keepdim`) for an `x` with at least one dimension, `dim` a Python int,
# negative allowed.
#
# **Contract.** Your operator obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - a fake implementation whose output has the real output's shape, dtype and strides;
# - a backward written by hand, registered for autograd;
# - a batching rule registered with `register_vmap` that works on the whole batch at once (not the
#   per-sample fallback, nor a loop), for every `dim` of a sample and every place of the batch
#   dimension;
# - passes `torch.library.opcheck`.

# %% [markdown]
# <details><summary><b>Hint 1</b>: the backward and the fake</summary>
#
# For $x$ of shape $(R, C)$ and `dim=1`, $y_r = \sum_c x_{r,c}^2$: what is $\partial L /
# \partial x_{r,c}$, and can a $g$ of shape $(R,)$ meet $x$ as it is, for every `dim`? What
# shape has the output for $x$ of shape $(2, 3, 4)$ with `dim = -1`? Print a permuted input's
# output `stride()`.
# </details>
#
# <details><summary><b>Hint 2</b>: the batching rule</summary>
#
# Which dimension of the batched $x$ is a sample's `dim`, given where the batch dimension is (a
# negative `dim` counts from the end)? The output has lost `dim`: where is its batch dimension
# now? Five samples of shape $(3, 4)$ along dimension 1: with `dim = 0` the loop gives shape
# $(5, 4)$, with `dim = -1` shape $(5, 3)$.
# </details>

# %% nbgrader={"grade_id": "answer_squared_norm", "solution": true}
def squared_norm(x: torch.Tensor, dim: int) -> torch.Tensor:
    """The custom operator autograd_course::squared_norm: (x * x).sum(dim), no keepdim, with a
    fake implementation, a hand-written backward and a batching rule (register_vmap)."""
    ### BEGIN SOLUTION
    return (x * x).sum(dim)


squared_norm = torch.library.custom_op("autograd_course::squared_norm", squared_norm,
                                       mutates_args=())


@squared_norm.register_fake
def _(x, dim):
    reduced = dim % x.dim()
    return x.new_empty(x.shape[:reduced] + x.shape[reduced + 1:])


def squared_norm_setup_context(ctx, inputs, output):
    x, dim = inputs
    ctx.save_for_backward(x)
    ctx.dim = dim


def squared_norm_backward(ctx, grad_output):
    x, = ctx.saved_tensors
    return 2 * x * grad_output.unsqueeze(ctx.dim), None  # d/dx_c sum_c x_c^2 = 2 x_c


squared_norm.register_autograd(squared_norm_backward, setup_context=squared_norm_setup_context)


def squared_norm_vmap(info, in_dims, x, dim):
    x_bdim, _ = in_dims
    x = x.movedim(x_bdim, 0)  # the batch dim first: a sample's dim d >= 0 is d + 1 here
    return squared_norm(x, dim + 1 if dim >= 0 else dim), 0


squared_norm.register_vmap(squared_norm_vmap)
### END SOLUTION


# %% [markdown]
# **Check Hint 2's numbers live:** the cell below stores five samples along dimension 1 and
# compares `torch.vmap(squared_norm, in_dims=(1, None))` with a loop for `dim = 0` and `-1`.

# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_batch_dim_at_1() -> None:
    """Your operator under vmap with the batch dim at 1, against a loop over the samples."""
    batch = torch.randn(3, 5, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    for dim in (0, -1):
        loop = torch.stack([(sample * sample).sum(dim) for sample in batch.unbind(1)])
        try:
            got = torch.vmap(squared_norm, in_dims=(1, None))(batch, dim)
        except Exception as error:  # shown, not raised: Run All goes on
            if isinstance(error, NotImplementedError):
                print("squared_norm is not written yet")
                return
            print(f"✗ dim={dim:>2}: {type(error).__name__}: "
                  f"{(str(error).splitlines() or [''])[0][:90]}")
            continue
        if got.shape != loop.shape:
            print(f"✗ dim={dim:>2}: shape {tuple(got.shape)}, the loop's {tuple(loop.shape)}")
        else:
            mark = "✓" if torch.allclose(got, loop) else "✗ (the values differ)"
            print(f"{mark} dim={dim:>2}: shape {tuple(got.shape)}, as the loop's")


check_batch_dim_at_1()


# %% nbgrader={"grade_id": "squared_norm", "grade": true, "points": 2}
self_check("squared_norm", squared_norm)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("squared_norm", squared_norm)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours, after your self-check is green</b></summary>
#
# Backward: $\partial L/\partial x_{s,c} = 2\,g_s\,x_{s,c}$, $g$ unsqueezed at `dim`. The fake:
# $x$'s shape without `dim`. The rule: with the batch dimension moved to the front, a sample's
# $d \ge 0$ is $d + 1$, a negative $d$ stays, and the output's batch dimension is 0. Returning the
# input's batch dimension as `out_dims` works for an element-wise rule, which keeps every
# dimension, not for a reduction: with the batch at 1 and `dim = 0`, it gives $(4, 5)$ where the
# loop gives $(5, 4)$.
# </details>

# %% [markdown]
# ## Summary
#
# The setup_context form (`forward` without `ctx`, `setup_context`, `generate_vmap_rule`, `jvp`
# with `save_for_forward`) is what `torch.func` needs. `torch.compile` traces such a Function in
# one graph unless it has a `jvp`, which on torch 2.13 costs a graph break while autograd
# records. A custom operator (`custom_op`, `register_fake`, `register_autograd`, `register_vmap`,
# checked by `opcheck`) is one opaque node in the graph, at the price of the `torch.func`
# transforms that differentiate. Measure before you choose, with `fullgraph=True`.
#
# The optional sections below: choosing between a Function and an operator, measured on your
# answers; what `torch.compile` captured, a NumPy Function under `vmap`, your
# `LogSumExp` against the naive formula, the cross product, `matvec`'s backward, your `softplus`
# under `opcheck`, what an operator promises, `affine`'s batching rule, re-running an
# operator's cell, `softplus`'s slope (lesson 01 with $\beta$), the fine print of its tails,
# the common mistakes, and In practice.

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above. The sections below look further at your answers,
# try one more derivation, and back the main line's claims with experiments; none is needed
# for an exercise, and you can skip any of them. They use your `LogSumExp` and `softplus`.

# %% [markdown]
# ### Choosing: measured on this torch
#
# The table below is computed on your answers. **Predict** its last row: `softplus` has a
# backward registered with `register_autograd` and no `jvp`. Under `torch.func.jvp`, does it give
# the right tangent (`"yes"`), a wrong one with no error (`"WRONG"`), or raise (`"no"`)? And under
# `torch.func.grad`? Write your answers into `prediction_table`.

# %%
prediction_table = {"torch.func.jvp": None, "func.grad": None}  # "yes", "WRONG" or "no"

# %%
def works(attempt) -> str:
    try:
        return "yes" if attempt() else "WRONG"
    except Exception as error:
        return f"no ({type(error).__name__})"


def compiles_fully(function):
    torch.compiler.reset()
    leaf = x.clone().requires_grad_()  # training: autograd records
    return lambda: torch.compile(function, fullgraph=True, backend="aot_eager")(leaf) is not None


x = torch.randn(3, 4, dtype=torch.float64)
t = torch.randn(3, 4, dtype=torch.float64)
candidates = {
    "Function with jvp": lambda x: LogSumExp.apply(x, -1),
    "Function without jvp": lambda x: LogSumExpNoJvp.apply(x, -1),
    "custom operator": lambda x: softplus(x, 1.0),
}
truths = {"Function with jvp": lambda x: torch.logsumexp(x, -1),
          "Function without jvp": lambda x: torch.logsumexp(x, -1),
          "custom operator": lambda x: F.softplus(x)}
widths = (22, 26, 26, 12, 20)
headers = ("", "compile fullgraph", "torch.func.jvp", "vmap", "func.grad")
show = written(prediction_table)  # the table, once your two predictions are written
print("".join(f"{h:{w}}" for h, w in zip(headers, widths)) if show else
      "the table shows once your two predictions are written")
for name, function in candidates.items():
    truth = truths[name]
    row = [works(compiles_fully(function)),
           works(lambda: torch.allclose(torch.func.jvp(function, (x,), (t,))[1],
                                        torch.func.jvp(truth, (x,), (t,))[1])),
           works(lambda: torch.allclose(torch.vmap(function)(x), truth(x))),
           works(lambda: torch.allclose(torch.func.grad(lambda x: function(x).sum())(x),
                                        torch.func.grad(lambda x: truth(x).sum())(x)))]
    if show:
        print("".join(f"{cell:{w}}" for cell, w in zip([name, *row], widths)))
    measured = dict(zip(headers[1:], row))  # the last row, the operator's, stays

for column, predicted in prediction_table.items():
    compare(f"custom operator under {column}", predicted, measured[column].split(" ")[0],
            if_wrong="read the explanation below")

# %% [markdown]
# `torch.func.jvp` through a custom operator whose autograd is registered with
# `register_autograd` returns **zero tangents without an error** on torch 2.13, and
# `torch.func.grad` refuses it, so per-sample gradients are out of reach: the operator keeps only
# ordinary `backward`, and `vmap` of its forward.
#
# | you need | pick |
# |---|---|
# | `torch.compile` in one graph and reverse mode | a Function in the setup_context form **without** `jvp`, or a custom operator |
# | `torch.func.grad`, `vmap(grad(...))`, `jacrev` | a Function in the setup_context form |
# | forward-mode AD (`jvp`, `jacfwd`, `forward_ad`) | a Function with `jvp`; accept a graph break under `torch.compile` |
# | code the compiler must not look into (a C++/CUDA kernel, a library call) | a custom operator with `register_fake`, `register_autograd` and `register_vmap` |
# | both an opaque kernel and `torch.func` | a custom operator called inside a Function in the setup_context form |

# %% [markdown]
# ### What `torch.compile` captured, side by side
#
# Toggle between three functions around what you wrote. For each, the view compiles the
# function afresh (without `fullgraph`), runs forward and backward, and shows every graph
# dynamo captured and every graph break with its reason. Around `LogSumExp`, the break splits
# the work in two: dynamo still compiles your `forward` on its own when Python calls it (the
# first graph), then the code after the Function (the second). Without `jvp`, one graph holds
# it all; around `softplus`, one graph holds your operator as a single node,
# `torch.ops.autograd_course.softplus.default`.

# %%
x_view = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
compile_explorer({
    "LogSumExp (with jvp)": lambda x: LogSumExp.apply(x, -1).exp() * 2,
    "LogSumExp without jvp": lambda x: LogSumExpNoJvp.apply(x, -1).exp() * 2,
    "softplus operator": lambda x: torch.sin(softplus(x * 2, 1.5)) * x,
}, x_view)

# %% [markdown]
# ### A Function that leaves PyTorch, under `vmap`
#
# `generate_vmap_rule = True` batches a Function by running your own `forward`, `setup_context`,
# `backward` and `jvp` on **batched tensors**, which hide the batch dimension. That needs every
# op inside to have a batching rule, as PyTorch's ops do. `NumpyExp` below computes $e^x$ with NumPy, a stand-in for a kernel outside PyTorch, in the
# setup_context form and with `generate_vmap_rule = True`.

# %%
import numpy as np


class NumpyExp(torch.autograd.Function):
    """exp(x) by NumPy: a stand-in for any kernel outside PyTorch."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.as_tensor(np.exp(x.detach().cpu().numpy()), device=x.device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y

# %% [markdown]
# **Predict.** `torch.vmap(NumpyExp.apply)` over the rows of a `(4, 3)` tensor: the right
# values, wrong values, or an error? Write `"right"`, `"wrong"` or `"error"` into
# `prediction_numpy` and run the cell; the cell after it checks.

# %%
prediction_numpy = None  # "right", "wrong" or "error"

# %%
rows = torch.randn(4, 3, dtype=torch.float64)
try:
    observed = "right" if torch.allclose(torch.vmap(NumpyExp.apply)(rows), rows.exp()) else "wrong"
except RuntimeError as error:
    observed = "error"
    if written(prediction_numpy):  # the error, once your prediction is written
        print("vmap:", str(error).splitlines()[0])
compare("vmap of NumpyExp", prediction_numpy, observed, if_wrong="read the explanation below")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# An error. Under `vmap`, the generated rule runs your `forward` on **batched tensors**, which
# carry the batch dimension out of sight; a batched tensor has no storage of its own for NumPy
# to read (*"Cannot access data pointer of Tensor that doesn't have storage"*). The generated
# rule relies on every op inside to handle a batched tensor: PyTorch's ops have batching
# rules, NumPy has none. NumPy cannot be batched for you; you must say how. The generated rule
# stops wherever your code leaves PyTorch's ops:
#
# - data taken out of a tensor: `.numpy()`, a C or CUDA extension that reads the pointer,
#   `.item()`, `.tolist()`;
# - Python control flow that depends on values (`if x.max() > 0:`).
# </details>

# %% [markdown]
# ### A `vmap` staticmethod for `NumpyExp`
#
# `torch.vmap(NumpyExp.apply)` raised: the generated rule cannot batch NumPy. That is what a
# **`vmap` staticmethod** is for (and `generate_vmap_rule` must then be left out; setting both
# is an error of its own, *"it has both generate_vmap_rule=True and an overridden vmap
# staticmethod"*). It has the signature of an operator's batching rule, `(info, in_dims,
# *inputs) -> (output, out_dims)`, with one entry of `in_dims` per input of `apply`. Because
# $e^x$ acts element by element, running the whole batch through `apply` at once is already
# right:

# %%
class NumpyExpBatched(NumpyExp):
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, x):
        x_bdim, = in_dims  # here x is a plain tensor that includes the batch dimension
        return NumpyExpBatched.apply(x), x_bdim  # elementwise: the batch dim stays where it is


rows_numpy = torch.randn(4, 3, dtype=torch.float64)
print("vmap:", torch.allclose(torch.vmap(NumpyExpBatched.apply)(rows_numpy), rows_numpy.exp()))
print("vmap, in_dims=1:", torch.allclose(
    torch.vmap(NumpyExpBatched.apply, in_dims=1)(rows_numpy), rows_numpy.T.exp()))
print("per-sample grads:", torch.allclose(
    torch.vmap(torch.func.grad(lambda r: NumpyExpBatched.apply(r).sum()))(rows_numpy),
    rows_numpy.exp()))

# %% [markdown]
# The per-sample gradients work too: `backward` uses only PyTorch ops, so `vmap` batches it by
# itself. An operation that is not element by element, one that takes a `dim` say, needs more
# thought in its rule, as Exercise 3's did.

# %% [markdown]
# ### Your `LogSumExp` against the naive formula
#
# Why the max matters: shift three values by $c$. Mathematically $y(c) = c + y(0)$. The naive
# formula gives up in both directions: above $c \approx 709$, $e^{c}$ overflows float64 to
# `inf`; below $c \approx -745$, every $e^{x_j}$ underflows to $0$ and $\log 0 = -\infty$.

# %%
shifts = torch.linspace(-800, 800, 161, dtype=torch.float64)
rows = shifts[:, None] + torch.tensor([0.0, -1.0, -2.0], dtype=torch.float64)
naive = rows.exp().sum(1).log()
yours = LogSumExp.apply(rows, 1)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
axes[0].plot(shifts, yours - shifts, lw=3, alpha=0.6, label="your LogSumExp")
axes[0].plot(shifts, naive - shifts, "--", label="log(sum(exp(x)))")
axes[0].set_xlabel("shift c")
axes[0].set_title("y(c) - c (should be constant)")
axes[0].legend()
x = torch.linspace(-3, 3, 7, dtype=torch.float64)
_, directional = torch.func.jvp(lambda x: LogSumExp.apply(x, 0), (x,), (torch.ones_like(x),))
axes[1].bar(range(7), torch.softmax(x, 0), label="softmax(x): jvp's weights")
axes[1].set_title(f"jvp along (1, ..., 1) = {directional.item():.3f}")
axes[1].legend()
plt.show()
print(f"naive formula: inf at {int((naive == float('inf')).sum())} shifts (overflow), "
      f"-inf at {int((naive == float('-inf')).sum())} (underflow), of 161")

# %% [markdown]
# ### Try it: the cross product, a Function with nothing to mirror
#
# `LogSumExp` had one tensor input, so its jvp had one tangent. The cross product
# $y = a \times b$ of two 3-vectors (along the last dimension, `torch.linalg.cross(a, b)`) has
# two, and no worked example above computes either of its derivatives. Write `Cross` in the
# setup_context form, with `generate_vmap_rule = True`, a backward and a jvp, computing with
# `torch.linalg.cross` only. Derive both first:
#
# 1. **jvp.** $a$ moves by $\dot a$ and $b$ by $\dot b$. The cross product is linear in each
#    factor: what is $\dot y$, to first order? (Autograd hands your jvp a tangent for both
#    inputs, zeros for an input that has none.)
# 2. **backward.** $L$ changes by $g \cdot \dot y$ for $g$ = `grad_output`. Write the part
#    that comes from $\dot a$ as $\dot a \cdot (\text{something})$: which identity of the
#    triple product $u \cdot (v \times w)$ moves $\dot a$ to the front? Then the same for
#    $\dot b$. Which order of the factors gives the sign?
#
# <details><summary><b>Hint 1</b>: a question</summary>
#
# The triple product is unchanged when its three vectors move round cyclically:
# $u \cdot (v \times w) = v \cdot (w \times u) = w \cdot (u \times v)$. Swapping two of them
# flips its sign. Which cyclic move puts $\dot a$ first in $g \cdot (\dot a \times b)$, and
# $\dot b$ first in $g \cdot (a \times \dot b)$?
# </details>
#
# <details><summary><b>Hint 2</b>: numbers to hit</summary>
#
# With $a = (1, 2, 3)$, $b = (0, 1, -1)$ and $g = (1, 0, 2)$: $\partial L/\partial a =
# (2, -1, -1)$ and $\partial L/\partial b = (-4, -1, 2)$. With tangents $\dot a = (1, 0, 0)$
# and $\dot b = (0, 0, 1)$ at the same point, $\dot y = (2, 0, 1)$.
# </details>

# %%
### BEGIN WORKED
class Cross(torch.autograd.Function):
    """y = a x b along the last dimension."""

    generate_vmap_rule = True

    @staticmethod
    def forward(a, b):
        return torch.linalg.cross(a, b)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)
        ctx.save_for_forward(*inputs)

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        return torch.linalg.cross(b, grad_output), torch.linalg.cross(grad_output, a)

    @staticmethod
    def jvp(ctx, a_tangent, b_tangent):
        a, b = ctx.saved_tensors
        return torch.linalg.cross(a_tangent, b) + torch.linalg.cross(a, b_tangent)
### LEARNER
Cross = None  # class Cross(torch.autograd.Function): ... (forward, setup_context, backward, jvp)
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_cross():
    """Your Cross against torch.linalg.cross: gradcheck in both modes, jvp, and vmap."""
    if Cross is None:
        print("Cross: not written yet")
        return
    a, b = (torch.randn(4, 3, dtype=torch.float64, requires_grad=True) for _ in range(2))
    checks = {
        "backward (gradcheck)": lambda: torch.autograd.gradcheck(Cross.apply, (a, b)),
        "forward mode (gradcheck, check_forward_ad)": lambda: torch.autograd.gradcheck(
            Cross.apply, (a, b), check_forward_ad=True, check_backward_ad=False),
        "torch.func.jvp, a's tangent only": lambda: torch.allclose(
            torch.func.jvp(lambda a: Cross.apply(a, b.detach()), (a.detach(),), (b.detach(),))[1],
            torch.func.jvp(lambda a: torch.linalg.cross(a, b.detach()), (a.detach(),),
                           (b.detach(),))[1]),
        "torch.vmap over the rows": lambda: torch.allclose(
            torch.vmap(Cross.apply)(a, b), torch.linalg.cross(a, b)),
    }
    for what, check in checks.items():
        try:
            print(what, "✓" if check() else "✗ differs from torch.linalg.cross")
        except Exception as error:  # noqa: BLE001 - shown, not raised: the check is a guide
            print(what, f"✗ {type(error).__name__}: {str(error).splitlines()[0][:150]}")


check_cross()

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after every line above is ✓</summary>
#
# jvp: $\dot y = \dot a \times b + a \times \dot b$, the product rule with the order of each
# product kept. Backward: $g \cdot (\dot a \times b) = \dot a \cdot (b \times g)$ and
# $g \cdot (a \times \dot b) = \dot b \cdot (g \times a)$, so $\partial L/\partial a = b \times g$
# and $\partial L/\partial b = g \times a$. Both need $a$ and $b$: `save_for_backward` keeps
# them for one, `save_for_forward` for the other.
# </details>

# %% [markdown]
# ### `matvec`'s backward: two tensor inputs
#
# From $y_i = \sum_j A_{ij} v_j$: $\partial L / \partial A_{ij} = g_i v_j$ and
# $\partial L / \partial v_j = \sum_i g_i A_{ij}$, so each gradient needs the other input and
# `setup_context` keeps both. A call may need one gradient only (a frozen `A`, say):
# `ctx.needs_input_grad` says which, and backward skips the other product.

# %%
def matvec_setup_context(ctx, inputs, output):
    A, v = inputs
    ctx.save_for_backward(A, v)  # each gradient reads the other input


def matvec_backward(ctx, grad_output):
    A, v = ctx.saved_tensors
    grad_A = torch.outer(grad_output, v) if ctx.needs_input_grad[0] else None  # g_i v_j
    grad_v = grad_output @ A if ctx.needs_input_grad[1] else None  # sum_i g_i A_ij
    return grad_A, grad_v  # one per input, in the order of the signature


matvec.register_autograd(matvec_backward, setup_context=matvec_setup_context)

A = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
v = torch.randn(4, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(matvec, (A, v)))
print("opcheck, inputs that require grad:", torch.library.opcheck(matvec, (A, v)))

# %% [markdown]
# ### Your `softplus` under `opcheck` and `torch.compile`, on their own
#
# The self-check ran both; here they are alone, to read what they report.

# %%
x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
softplus(x, 1.5)  # eager first: a stub raises its NotImplementedError here
print(torch.library.opcheck(softplus, (x, 1.5)))


def through_softplus(x):
    return torch.sin(softplus(x * 2, 1.5)) * x


eager_x, compiled_x = x.detach().clone().requires_grad_(), x.detach().clone().requires_grad_()
through_softplus(eager_x).sum().backward()
compiled = torch.compile(through_softplus, fullgraph=True, backend="aot_eager")
compiled(compiled_x).sum().backward()
print("fullgraph=True compiled; same values and gradients:",
      torch.allclose(compiled(x), through_softplus(x)),
      torch.allclose(compiled_x.grad, eager_x.grad))

# %% [markdown]
# ### What an operator promises: `mutates_args`, and no aliasing
#
# The compiler reorders, fuses and removes operators using only their **schema**, which
# `custom_op` writes from your annotations and `mutates_args`. Two promises are in it:
#
# - `mutates_args=()` says the operator writes into none of its inputs. An operator that does
#   (an in-place kernel, an optimiser step) must name those arguments,
#   `mutates_args=("x",)`, and then returns `None` or fresh tensors;
# - an output is never an input, nor a view of one: the compiler may free or reuse an input's
#   memory once the operator has run. (An in-place *Function* returns `x` with `mark_dirty`,
#   lesson 07; an operator has no such escape.)
#
# **Predict.** Three small operators break these promises: `clamp_in_place` writes
# into `x` while declaring `mutates_args=()`, `same` returns its input, `flat` returns
# `x.view(-1)`. For each, write `"raises when called"`, `"only opcheck"` (no error when
# called, an error from `opcheck`) or `"neither"` into `prediction_promises`, then run the
# cell; the cell after the operators checks.

# %%
prediction_promises = {"clamp_in_place": None, "same": None, "flat": None}

# %%
@torch.library.custom_op("autograd_course::clamp_in_place", mutates_args=())
def clamp_in_place(x: torch.Tensor) -> None:
    x.clamp_(min=0)  # a write the schema does not declare


@torch.library.custom_op("autograd_course::same", mutates_args=())
def same(x: torch.Tensor) -> torch.Tensor:
    return x


@torch.library.custom_op("autograd_course::flat", mutates_args=())
def flat(x: torch.Tensor) -> torch.Tensor:
    return x.view(-1)


def reason(error: Exception) -> str:
    """The sentence that says what is wrong, without the operator's module path."""
    return str(error).rsplit("'>): ", 1)[-1].split(" (scroll up")[0][:140]


for name, op in [("clamp_in_place", clamp_in_place), ("same", same), ("flat", flat)]:
    raised = {}
    fresh = lambda: torch.tensor([-1.0, 2.0])  # a new input for each attempt
    for how, attempt in [("called", lambda: op(fresh())),
                         ("opcheck", lambda: torch.library.opcheck(op, (fresh(),)))]:
        try:
            attempt()
            raised[how] = False
            if written(prediction_promises):  # what happened, once your predictions are written
                print(f"{name:>14} {how:>7}: no error")
        except Exception as error:
            raised[how] = True
            if written(prediction_promises):
                print(f"{name:>14} {how:>7}: {type(error).__name__}: {reason(error)}")
    observed = ("raises when called" if raised["called"] else
                "only opcheck" if raised["opcheck"] else "neither")
    compare(f"{name:>14}", prediction_promises[name], observed,
            if_wrong="read the explanation below")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Returning an input, or a view of one, raises on the first call: `custom_op` checks every
# output (*"must not also be an input to this custom operator and ... may not alias any
# inputs"*); return `x.clone()` instead. The undeclared write is **not** caught when called:
# the values simply change. Only `opcheck`'s `test_schema` finds it (*"Argument x is not
# defined as mutable but was mutated"*); the fix is `mutates_args=("x",)`. Under
# `torch.compile` such an operator can silently give wrong results, which is why `opcheck`
# belongs in every operator's tests.
# </details>

# %% [markdown]
# ### `affine`'s batching rule: one call, nothing moves
#
# `autograd_course::affine(x, a, b)`, $a x + b$ element by element for two Python floats (eager
# mode only, so no fake), has no rule: the values are right, through the fallback.

# %%
@torch.library.custom_op("autograd_course::affine", mutates_args=())
def affine(x: torch.Tensor, a: float, b: float) -> torch.Tensor:
    """a * x + b, element by element."""
    return a * x + b


xs = torch.arange(24.0).reshape(2, 3, 4)  # a batch of 2 samples of shape (3, 4), batch dim 0
loop = torch.stack([affine(sample, 2.0, 1.0) for sample in xs.unbind(0)])
print("vmap without a rule (the fallback):",
      torch.equal(torch.vmap(affine, in_dims=(0, None, None))(xs, 2.0, 1.0), loop))


# %% [markdown]
# Now with a rule. Each sample's `x` arrives
# stacked along `in_dims[0]`, wherever the caller put it; `a` and `b` are shared (`None`). An
# element-wise operator does to each entry what it does to every other, so the whole batch can
# go through one call as it is: no dimension moves, and the output's batch dimension is where
# `x`'s was. Compare it with your `squared_norm` rule: what does a reduction change?

# %%
def affine_vmap(info, in_dims, x, a, b):
    """One call on the whole batch, its batch dim left where it arrived."""
    x_bdim, _, _ = in_dims  # None for the floats a and b
    return affine(x, a, b), x_bdim  # element by element: every dim keeps its place


torch.library.register_vmap("autograd_course::affine", affine_vmap)
agree = all(torch.equal(torch.vmap(affine, in_dims=(at, None, None))(xs.movedim(0, at), 2.0, 1.0),
                        loop) for at in (0, 1, 2, -1))
print("the rule matches a loop for every place of the batch dim:", agree)

# %% [markdown]
# ### Re-running the cell that defines an operator
#
# Notebooks get re-run. The low-level `torch.library.define` refuses a second definition of
# the same name; `torch.library.custom_op` in torch 2.13 destroys the earlier registration of
# that name and registers the new one. The operator lives in the dispatcher, not in your
# variable: looked up by name, `torch.ops.autograd_course.double` is the newest definition.
# A handle from before the re-run is left pointing at the destroyed registration. **Never call
# it**: what it does is undefined. It may seem to work (calling the new definition, as it did
# when this lesson was last checked), raise, or take the kernel down. The cell below compares
# handles without calling the old one.

# %%
# private (the leading underscore): used only to compare handles here, never in your code
from torch._library.custom_ops import _maybe_get_opdef


def define_double(scale):
    @torch.library.custom_op("autograd_course::double", mutates_args=())
    def double(x: torch.Tensor) -> torch.Tensor:
        return scale * x
    return double


first = define_double(2.0)
second = define_double(3.0)  # as if the cell was edited and run again
print("by name:", torch.ops.autograd_course.double(torch.ones(1)).item(), "(the newest definition)")
print("the registered definition is the new handle:",
      _maybe_get_opdef("autograd_course::double") is second, "| the old one:",
      _maybe_get_opdef("autograd_course::double") is first)
try:
    torch.library.define("autograd_course::defined_once", "(Tensor x) -> Tensor")
    torch.library.define("autograd_course::defined_once", "(Tensor x) -> Tensor")
except RuntimeError as error:
    print("torch.library.define twice:", str(error)[:100], "...")

# %% [markdown]
# So when you edit the operator, re-run its cell and then the cells that use it. The grader
# checks that the `softplus` you hand in is the current definition of
# `autograd_course::softplus`, and says so if it is not.
#
# The same holds for a batching rule. `affine_vmap` calls `affine` by name, so it always
# calls the current definition, but re-running the cell that defines `affine` replaces the
# operator and drops the rule registered on the old one (vmap falls back to the loop again).
# Re-run the rule's cell too, or, better, keep an operator's registrations in the cell that
# defines it, as the exercises do.

# %% [markdown]
# ### Softplus's slope: lesson 01 with $\beta$
#
# Exercise 2's derivative, live. Answer on paper first:
#
# 1. What is $ds/dx$? Count the factors of $\beta$.
# 2. Which tensors could `setup_context` keep for backward (it sees `inputs` and `output`)? For
#    each candidate, how does backward get the slope from it?
# 3. At $\beta x = -40$, $s$ is about $4 \times 10^{-18}$. For each candidate, does backward's
#    formula keep those digits there, in float64 and float32?
#
# **Check question 1:** work out $ds/dx$ at $x = 0.5$, $\beta = 4$, and write it into
# `softplus_slope`.

# %%
### BEGIN WORKED
softplus_slope = torch.sigmoid(torch.tensor(4 * 0.5, dtype=torch.float64)).item()
### LEARNER
softplus_slope = None  # your number: ds/dx at x = 0.5, beta = 4
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_softplus_slope() -> None:
    """Your number for ds/dx at x = 0.5, beta = 4 against autograd's, with a question for each
    usual slip."""
    if softplus_slope is None:
        print("Write your number for question 1 into softplus_slope first.")
        return
    def slope(f, at: float) -> float:
        return torch.func.grad(f)(torch.tensor(at, dtype=torch.float64)).item()

    truth = slope(lambda x: F.softplus(4 * x) / 4, 0.5)  # autograd's, through F.softplus
    try:
        mine = float(softplus_slope)
    except (TypeError, ValueError, RuntimeError):  # a lambda, or a tensor of several numbers
        print(f"✗ softplus_slope is a {type(softplus_slope).__name__}: write one number")
        return
    slips = [  # each computed by autograd from the slip itself
        (slope(lambda z: F.softplus(z) / 4, 2.0),
         "that is ds/dz at z = 2, the chain rule's first step: what is dz/dx?"),
        (4 * truth, "one factor of β too many: what does the 1/β in front of the log do?"),
        (slope(F.softplus, 0.5),
         "that is the slope with β = 1: where does β sit inside the log?"),
        (slope(lambda x: F.softplus(x) / 4, 0.5),
         "at which z is the derivative of log(1 + e^z) taken here?"),
        (F.softplus(torch.tensor(2.0, dtype=torch.float64)).item() / 4,
         "that is s itself at x = 0.5: the value, not the slope"),
        (slope(lambda x: F.softplus(4 * x) / 4, -0.5),
         "that is the slope at x = -0.5: check the sign of z in d/dz log(1 + e^z)"),
        (slope(torch.func.grad(F.softplus), 2.0),
         "one derivative too many: what is d/dz log(1 + e^z) itself?"),
    ]
    near = lambda a, b: abs(a - b) <= 1e-3 * abs(b)  # noqa: E731 - four digits will do
    if near(mine, truth):
        print(f"✓ {mine:.4g}: autograd's ds/dx at x = 0.5, β = 4 is {truth:.6g}")
        return
    said = [question for value, question in slips if near(mine, value)]
    print(f"✗ {said[0]}" if said else
          f"✗ {mine:.4g} is not ds/dx at x = 0.5, β = 4: redo question 1 there by hand")


check_softplus_slope()

# %% [markdown]
# **Check question 3 live:** write backward's slope two ways, from the input `x` and from the
# output `s`, as you would compute it in backward. The cell after runs both in float64 and
# float32 at a few $\beta x$, $-40$ among them, and prints what each gives (its relative error
# in brackets) beside the true slope.
# Which one backward uses is then yours to decide.

# %%
### BEGIN WORKED
def slope_from_x(x, beta):  # sigma(beta x), no cancellation at any beta x
    return torch.sigmoid(beta * x)


def slope_from_s(s, beta):  # 1 - e^(-beta s), through expm1
    return -torch.expm1(-beta * s)
### LEARNER
def slope_from_x(x, beta):
    return None  # ds/dx from the input x (and beta) alone


def slope_from_s(s, beta):
    return None  # ds/dx from the output s (and beta) alone
### END WORKED


# %% tags=["skip-when-grading"] jupyter={"source_hidden": true}
def check_slope_candidates() -> None:
    """Each slope formula at beta * x = -40, -5, 0, 5 and 1000 (beta = 2), in float64 and
    float32, against the true slope computed in float64: what each gives at each beta * x,
    with its relative error in brackets; no verdict on which to keep."""
    beta = 2.0
    z = torch.tensor([-40.0, -5.0, 0.0, 5.0, 1000.0], dtype=torch.float64)
    truth = torch.sigmoid(z)
    for name, slope, needs in [("slope_from_x", slope_from_x, "x"),
                               ("slope_from_s", slope_from_s, "s")]:
        for dtype in (torch.float64, torch.float32):
            x = (z / beta).to(dtype)
            s = F.softplus(beta * x) / beta  # the output, as forward returns it in this dtype
            try:
                got = slope(x if needs == "x" else s, beta)
            except Exception as error:  # noqa: BLE001 - shown, not raised: the lesson goes on
                print(f"✗ {name} raised {type(error).__name__}: {error}")
                break
            if got is None:
                print(f"{name}: write it first (it returns None)")
                break
            got = torch.as_tensor(got).to(torch.float64)
            if got.shape != z.shape:
                print(f"✗ {name} gives shape {tuple(got.shape)} for {needs} of shape "
                      f"{tuple(z.shape)}: one slope per element")
                break
            error = ((got - truth).abs() / truth).tolist()
            at = ", ".join(f"{zi:g}: {gi:.4g} ({ei:.1g})"
                           for zi, gi, ei in zip(z.tolist(), got.tolist(), error))
            print(f"{name:<12} {str(dtype).removeprefix('torch.'):<7}  {at}")
    print(f"{'true slope':<20}  " + ", ".join(f"{zi:g}: {ti:.4g}"
                                             for zi, ti in zip(z.tolist(), truth.tolist())))


check_slope_candidates()

# %% [markdown]
# <details><summary><b>Hint 1</b> (questions 1 and 2)</summary>
#
# Write $s = u(z) / \beta$ with $u(z) = \log(1 + e^{z})$: what is $du/dz$, and $dz/dx$? Can the
# slope be written from $s$ alone: what is $e^{\beta s}$ in terms of $z$? If you differentiate
# the stable form term by term: what is the slope at $z = 0$ exactly? At $x = 1$, $\beta = 2$,
# $s = 1.06346$; at $x = 400$, $s = 400$, finite.
# </details>
#
# <details><summary><b>Hint 2</b> (question 3)</summary>
#
# At $x = -25$, $\beta = 2$: $s = 9.6437 \times 10^{-23}$, and the slope is $1.9287 \times
# 10^{-22}$. Evaluate each candidate formula there one operation at a time: which step forms a
# number near 1, and how many digits of $10^{-22}$ survive it?
# </details>


# %% [markdown]
# ### Fine print: `softplus`'s tails
#
# The self-check compares both tails point by point, values and gradient, float64 and float32,
# with no absolute floor (a tiny number must keep its digits); a failure names the point and the
# tolerance it missed. Returning $x$ itself past a threshold drops a relative
# $e^{-\beta x}/(\beta x)$ or so, a slope of exactly 1 past a threshold drops $e^{-\beta x}$, and
# replacing $\log(1 + e^{z})$ by $e^{z}$ in the left tail drops a relative $e^{z}/2$: how far
# out must each switch sit before the dtype's precision on the right, or five digits on the
# left, cannot see the term it drops? (`F.softplus` switches to $x$ past $\beta x = 20$, its
# `threshold`, a relative $10^{-10}$ off, and its backward switches the slope to 1 there,
# $2 \times 10^{-9}$ off: float64 sees both, so `F.softplus` is no answer here.) A form with no
# switch never asks. The fake is tried on several layouts of `x`,
# dense and not.

# %% [markdown]
# ### Common mistakes
#
# <details><summary><b>Two tables of mistakes</b> (open after your self-checks are green)</summary>
#
# The first table holds the mistakes the three exercises meet most often, each with what
# happens and the question that leads to the fix.
#
# | Mistake | What happens | Ask |
# |---|---|---|
# | old form, no `setup_context` | vmap and `torch.func.jvp` raise *"it must override the setup_context staticmethod"* | where must the saving live, so that a transform can decide what to save? |
# | `jvp` reads `ctx.saved_tensors` kept only with `save_for_backward` | inside jvp `saved_tensors` is empty: *"not enough values to unpack"* | which list does `jvp`'s `ctx.saved_tensors` read, and what fills it? |
# | `log(sum(exp(x)))` | `inf` at $x = 1000$ | which constant can leave the sum so that no exponent inside is positive? |
# | softmax weights in backward or jvp as $e^{x} / \sum e^{x}$ | `nan` ($\infty / \infty$) at $\lvert x \rvert = 1000$, although forward is right | which saved quantity gives the weights with no exponent above 0? |
# | a fake implementation with the wrong shape, dtype or strides | `opcheck`'s `test_faketensor` fails; compiled code breaks later | what shape, dtype and strides does the real output have, for a transposed `x`, a slice, an expanded `x`? Compare them with the fake's |
# | softplus's slope from the saved output, $1 - e^{-\beta s}$ | exact on paper, but the subtraction cancels where $s$ is tiny: `0.0` at $\beta x = -40$, not $4.2 \times 10^{-18}$ | which function computes $1 - e^{-u}$ without subtracting, or which other tensor could backward keep? |
# | softplus's stable form differentiated term by term | the slope at $\beta x = 0$ exactly is 1 (or 0), right on either side | what is the slope at $z = 0$, and what does each term's derivative give there? |
# | `log1p(exp(beta * x))` | `inf` once $\beta x > 709$ (float64) | which part of $\log(1 + e^{z})$ can come out of the log so that no exponent left is positive? |
# | $\max(z,0) + \log(1+e^{-\lvert z \rvert})$, with `log` | `0.0` at $\beta x = -40$, not $4.2 \times 10^{-18}$: $1 + e^{-40}$ rounds to 1 | which function computes $\log(1 + u)$ without forming $1 + u$? |
# | no batching rule for the operator | vmap loops per sample and warns *"performance drop"* | which registration gives vmap one call for the whole batch? |
# | a batching rule that passes `dim` on unchanged | the batched tensor has one more dim than a sample, so for some dims and some places of the batch dim the rule reduces the wrong one (or raises) | for which `dim`s does a sample's dim keep its number in the batched tensor, and for which does it move? |
# | after a reduction, the input's batch dim returned as the output's | right for some places of the batch dim and `dim`s; for others the wrong shape (or, when sizes happen to agree, wrong values) | the output has lost a dim: where is the batch dim in what the one call returned? |
#
# The rows below are the rest: mistakes whose error names the problem, and a few that give no
# error in a plain call (a `jvp` reading `ctx.x`, an undeclared write, a plain function).
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `forward(ctx, x, dim)` together with `setup_context` | `TypeError: missing a required argument: 'dim'` | `forward(x, dim)`: no ctx in this form |
# | `generate_vmap_rule` missing | vmap raises *"does not have vmap support"* | `generate_vmap_rule = True` |
# | jvp without `save_for_forward`: tensors kept as `ctx.x` | on torch 2.13, `torch.func.jvp`, `jacfwd` and `forward_ad` called directly give the right tangent; `torch.func.jvp` of a `torch.vmap` of the Function raises (*"flat_bdims must not be None"*) when nothing is kept with `save_for_forward`; grading fails it (rule 4 of the Function contract) | which list does `jvp` read its saved tensors from? |
# | no `jvp` staticmethod | forward mode raises *"You must implement the jvp function"* | write it |
# | a gradient returned for `dim` or `beta` | *"returned a gradient different than None"* | `None` for non-tensors |
# | no `register_fake` | *"There was no fake impl registered"* under `torch.compile` | add it |
# | `register_autograd(backward)` without `setup_context` | `ctx` is empty in backward | pass `setup_context=` |
# | the operator's `setup_context(ctx, inp, out)` | *"unexpected keyword argument 'inputs'"*: `register_autograd` passes `ctx=`, `inputs=`, `output=` | name them exactly `ctx, inputs, output` |
# | tensors kept as `ctx.x` in the operator's `setup_context` | the saved-tensor checks and hooks are skipped | `ctx.save_for_backward(x)` |
# | backward returns only `grad_x` | *"expected 3, got 2"*-style count error: one gradient per input | `return grad_x, None` |
# | an operator that writes into an input with `mutates_args=()` | no error when called; wrong results under `torch.compile`; `opcheck` fails | `mutates_args=("x",)` |
# | `grad_output.unsqueeze_(dim)` in backward | no error and the right gradient, but the caller's `grad_output` comes back with another shape (rule 5 of the Function contract) | `grad_output.unsqueeze(dim)`, a new view |
# | a batching rule that computes in place on `x` (`x.mul_(x)`) | no error, and vmap's result is right, but the caller's batch comes back squared: `movedim` returns a view | compute a new tensor |
# | a plain Python `softplus` (no operator) | dynamo inlines it; nothing to register, nothing opaque | `@torch.library.custom_op` |
# | `torch.zeros(shape)` without `device=` inside an operator's body | right on the CPU; on a GPU the buffer is on the CPU and meets a CUDA input (rule 1 of the Function contract) | `x.new_zeros(shape)` or `torch.zeros_like(x)` |
# | `custom_op(..., device_types="cpu")`, copied from a NumPy example | no kernel for a CUDA tensor | leave `device_types` out: one body for every device |
#
# </details>

# %% [markdown]
# ### In practice
#
# <details><summary><b>Production notes</b> (open when you have time)</summary>
#
# **The fake implementation owns the dtype.** A fake implementation states the output's dtype
# as well as its shape, and it must be the dtype the real computation returns, which type
# promotion decides. Here the contract is
# floating point, where `(x * x).sum(dim)` keeps `x`'s dtype and `x.new_empty(...)` is right.
# For an integer `x` it is not: `torch.sum` of an `int32` tensor returns `int64`, so that fake
# says `int32` while the operator returns `int64`, and `opcheck` on an `int32` input fails with
# *"Dtypes torch.int64 and torch.int32 are not equal!"*. Run `opcheck` on every dtype your
# operator accepts (or reject the others explicitly in the operator), and keep in mind that
# what the compiler plans around is the fake, not your kernel.
#
# **Where the fallback's warning goes.** Where `vmap` calls an operator without a batching
# rule directly, the *"performance drop"* warning is printed from C++ on the process's stderr,
# and a Python `warnings` filter does not see it; where the operator is called inside an
# `autograd.Function` (as the choice table suggests), it arrives as a Python `UserWarning`,
# which `warnings.catch_warnings` records and `warnings.simplefilter("error")` turns into an
# exception.
#
# **The cost of a call.** A Python `custom_op` goes through the dispatcher and
# back into Python on every call. Timed on 16 elements, one thread, the softplus maths as an
# operator with autograd registered took about 1.5 to 2.5 times as long per call as the same
# maths as a plain function (roughly 5 to 50 µs more, on a shared CPU, more when the input
# requires grad). The cost is per call,
# not per element: it counts for small tensors called often, not for a large kernel.
#
# **Under `torch.autocast`.** An operator with no autocast rule gets its inputs
# as they arrive. On torch 2.13 (CPU, bfloat16), `matvec` called on float32 tensors receives
# float32; the `A @ v` in its Python body is still autocast and returns bfloat16, but a kernel
# of your own would compute in float32.
# `torch.library.register_autocast("autograd_course::matvec", "cpu", torch.bfloat16)` casts its
# float32 inputs to bfloat16 before the call (float64 ones are left alone, as autocast leaves
# them).
#
# **Why `torch.func.grad` refuses an operator.** Its message, *"it must override the
# setup_context staticmethod"*, is not about your code: `register_autograd` wraps your
# `setup_context` and `backward` in an `autograd.Function` it generates in the old form,
# `forward(ctx, *args)`, which calls your `setup_context` inside it
# (`torch/_library/autograd.py`), and `torch.func` refuses that generated class. Passing
# `setup_context=` again changes nothing.
#
# **`torch._dynamo.explain` and the `jvp` break.** `explain` counts the break around
# `LogSumExp` (two graphs, one break) but, on this version, leaves its `break_reasons` list
# empty; the view of what `torch.compile` captured reads dynamo's own counters instead.
#
# **A row that is all $-\infty$.** Attention masks a position by setting its score to
# $-\infty$, and a row can be masked entirely (when a padding mask and a causal mask together
# leave a query no key). Mathematically $\log \sum_j e^{-\infty} = \log 0 = -\infty$, and
# `torch.logsumexp` returns `-inf`. The contract asks for $|x|$ up to 1000, so the grader never
# tries this row. Before you run the cell below this block, decide what *your* `LogSumExp`
# returns for a row of three `-inf`: `-inf`, `nan`, or an error?
#
# With the maximum subtracted, a row of $-\infty$ has $m = -\infty$, and $x_j - m$ is
# $-\infty - (-\infty)$, which is `nan` in IEEE arithmetic; every later step keeps the `nan`.
# A row with one finite entry is fine: its maximum is finite. In a model, a single `nan` row
# spreads to every parameter that the loss reaches through it. If yours gave `nan`: the value of
# $m$ does not change the answer while it is finite. Which finite value could stand in for $m$
# where the maximum is not finite, so that $e^{x_j - m}$ is $0$ for the row and $\log 0 + m$ is
# $-\infty$? (`torch.isfinite` and `torch.where` do it without a Python `if`, so `vmap` and
# `torch.compile` still see one graph.)
#
# The value is not the whole story: `torch.logsumexp`'s own gradient on such a row is `nan` on
# torch 2.13, as $e^{x_j - y}$ is again $e^{-\infty - (-\infty)}$. Attention code that masks
# whole rows therefore either keeps them out of the reduction or zeroes their output and
# gradient after it.
# </details>

# %%
# the -inf row of the In practice block above
masked = torch.full((2, 3), float("-inf"), dtype=torch.float64)
masked[1, 0] = 0.0  # the second row keeps one position
try:
    print("your LogSumExp:  ", LogSumExp.apply(masked, 1))
except Exception as error:  # noqa: BLE001 - shown, not raised
    print(f"your LogSumExp: {type(error).__name__}: {error}")
print("torch.logsumexp: ", torch.logsumexp(masked, 1))
