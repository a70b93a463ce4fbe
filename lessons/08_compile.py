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
# Everything so far ran in PyTorch's ordinary eager mode: call the Function, run backward.
# Modern code also **transforms** functions. `torch.vmap` maps a function over a batch
# dimension (per-sample gradients, ensembles), `torch.func.jvp` and
# `torch.autograd.forward_ad` push tangents *forward* (Jacobian-vector products, cheap
# directional derivatives), and `torch.compile` traces the Python into a graph to optimise it.
# Which of these accept a custom Function written the lesson-00 way is this lesson's first
# experiment. The lesson then writes Functions and operators that work with all of them, and
# shows where each kind stops.
#
# By the end of this lesson you can:
# 1. write a Function in the **setup_context form** (`forward` without `ctx`, plus
#    `setup_context(ctx, inputs, output)`), and say which transforms need it;
# 2. make it work under `torch.vmap` with `generate_vmap_rule = True`, and say where that rule
#    cannot work;
# 3. give it forward-mode AD with a `jvp` staticmethod and `ctx.save_for_forward`;
# 4. turn a computation into a **custom operator** with `torch.library.custom_op`,
#    `register_fake`, `register_autograd` and `register_vmap`, know what `mutates_args=()`
#    promises, and check it with `torch.library.opcheck`;
# 5. give an operator that takes a `dim` a batching rule of its own, instead of PyTorch's
#    per-sample fallback;
# 6. read what `torch.compile` made of each (graphs and graph breaks) and choose between them.
#
# Exercises are marked **✎ Exercise**: ✎ 1 `LogSumExp`, ✎ 2 `softplus`, and the transfer
# exercise ✎ 3 `squared_norm`. Each has a self-check cell that runs every check grading runs.
# The main line ends with the summary; the optional sections after it (an ungraded derivation,
# experiments, a table of common mistakes, production notes) are not needed for any exercise.

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
# - **reverse mode** (backward, what every lesson so far wrote): given $v$ = `grad_output`,
#   compute $v^\top J$, one pass per output direction;
# - **forward mode** (`jvp`): given a tangent $t$ for the input, compute $J t$, the change of
#   the output along $t$, in the same pass as the forward.
#
# Both use the same local derivative, $\partial y / \partial x$: backward multiplies it by $g$
# from the left and sums over the outputs, jvp multiplies it by the tangent and sums over the
# inputs. Each of the lesson's first two exercises starts with a short derivation, set just
# before it, that you do on paper and check with a live checker.

# %% [markdown]
# ## Worked example: `Exp` in the setup_context form
#
# Two changes from lesson 00: `forward` takes **no `ctx`**, and a separate `setup_context(ctx,
# inputs, output)` saves what the derivatives need (`inputs` is the tuple given to `apply`).
# One new class member, `generate_vmap_rule = True`, lets `torch.vmap` batch the Function.
# `Exp` below has backward only, and its last line shows what it still lacks.
#
# Forward mode is one more staticmethod, `jvp(ctx, *tangents)`: it receives one tangent per
# input of `forward` (`None` for an input that is not a tensor) and returns one tangent per
# output. It reads its tensors from `ctx.saved_tensors` too, but inside `jvp` that list holds
# only what `setup_context` passed to **`ctx.save_for_forward(...)`**, a list of its own:
# `save_for_backward` fills backward's list and nothing else. Exercise 1 writes the course's
# first `jvp`, and decides what goes into each list.

# %%
class Exp(torch.autograd.Function):
    """y = exp(x), usable under torch.vmap, torch.func.jvp and forward_ad."""

    generate_vmap_rule = True  # let torch.vmap batch forward, backward and jvp for us

    @staticmethod
    def forward(x):  # no ctx
        return torch.exp(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)  # y: backward's slope, e^x = y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors  # what save_for_backward kept
        return grad_output * y  # d/dx exp(x) = exp(x)


x = torch.tensor([[0.0, 1.0, 2.0], [-1.0, 0.5, 3.0]], dtype=torch.float64)
print("vmap over rows:     ", torch.allclose(torch.vmap(Exp.apply)(x), x.exp()))
per_sample = torch.vmap(torch.func.grad(lambda row: Exp.apply(row).sum()))(x)
print("per-sample grads:   ", torch.allclose(per_sample, x.exp()))
print("gradcheck, batched: ", torch.autograd.gradcheck(
    Exp.apply, (x.clone().requires_grad_(),), check_batched_grad=True))
try:
    torch.func.jvp(Exp.apply, (x,), (torch.ones_like(x),))
except NotImplementedError as error:  # forward mode needs a jvp staticmethod
    print("torch.func.jvp:      NotImplementedError:", error)

# %% [markdown]
# **Predict.** `ExpOldForm` below is `Exp` written the lesson-00 way: `forward(ctx, x)` saves
# inside forward, and there is no `setup_context`. The cell after next tries four ways in:
# `torch.vmap` and per-sample gradients with `torch.func.grad`, which `Exp` passed above;
# `gradcheck` (ordinary reverse mode); and `torch.compile(fullgraph=True)` of a function
# calling `ExpOldForm`. (`torch.compile`'s front end, TorchDynamo, reads your Python and
# records the tensor operations it meets into a graph; `fullgraph=True` turns anything it
# cannot record into an error. A later section looks closer.) For each, write `"works"` or
# `"raises"` into `prediction_old_form` and run the cell.

# %%
prediction_old_form = {"gradcheck": None,  # "works" or "raises", for each
                       "compile fullgraph": None,
                       "vmap": None,
                       "func.grad": None}

# %% tags=["skip-when-grading"]
class ExpOldForm(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(ctx, x):
        y = torch.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * y


compiled_old = torch.compile(lambda t: ExpOldForm.apply(t).sin(), fullgraph=True,
                             backend="aot_eager")
attempts = {
    "gradcheck": lambda: torch.autograd.gradcheck(ExpOldForm.apply,
                                                  (x.clone().requires_grad_(),)),
    "compile fullgraph": lambda: torch.allclose(compiled_old(x.clone().requires_grad_()),
                                                x.exp().sin()),
    "vmap": lambda: torch.vmap(ExpOldForm.apply)(x),
    "func.grad": lambda: torch.vmap(torch.func.grad(lambda r: ExpOldForm.apply(r).sum()))(x),
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
# `gradcheck` and `torch.compile` work. `gradcheck` calls the Function the ordinary way, with
# a `ctx`; dynamo traces `forward` and `backward` into its graph itself, with a ctx of its own.
# The two `torch.func` transforms, `vmap` and `func.grad`, refuse it, with an error that names
# the fix: they must run `forward` on their own wrapped tensors and then decide what to save,
# so the saving has to live in a separate `setup_context`. Nothing fails in silence.
# </details>

# %% [markdown]
# ## Where the generated rule stops
#
# `generate_vmap_rule = True` asks `torch.vmap` to batch a Function by running your own
# `forward`, `setup_context`, `backward` and `jvp` under it, on **batched tensors**, which
# carry the batch dimension out of sight. That relies on every op inside having a batching
# rule of its own, as PyTorch's ops do, and stops where your code leaves them, or branches in
# Python on a tensor's values (`if x.max() > 0:`: under `vmap` one tensor holds the whole
# batch, so there is no one value to branch on). There you say how to batch yourself: a
# Function takes a `vmap` staticmethod, and a custom operator a batching rule registered with
# `register_vmap`, which this lesson's Exercise 3 writes. (An optional section after the
# summary runs a NumPy forward under `vmap`, after you predict what happens, and writes its
# `vmap` staticmethod.)

# %% [markdown]
# ## The maths of log-sum-exp
#
# Exercise 1 is **log-sum-exp** along a dimension, $y = \log \sum_j e^{x_j}$. You built this
# $y$ for the rows of a score matrix in lesson 06 (`my_lse`); here it runs along any `dim`, and
# it needs a jvp as well as a backward.
# Derive $\partial y / \partial x_j$ again (Hints 1 and 2 if lesson 06 is far), then the new
# question, on paper: backward gets one $g$ per slice (the dimension `dim` is gone from
# `grad_output`) and must return one number per $x_j$; jvp gets one tangent $\dot x_j$ per
# $x_j$ and must return one number per slice. Which of the two products sums over $j$, and
# which repeats a value along $j$? The hints are collapsed, and the checker after them tries
# one entry of your first step.
#
# <details><summary><b>Hint 1</b>: a question</summary>
#
# The derivative of $\log u$ is $u' / u$. With $u = \sum_k e^{x_k}$, what is
# $\partial u / \partial x_j$, and which function you know is $\partial y / \partial x_j$?
# </details>
#
# <details><summary><b>Hint 2</b>: a form that is safe to compute, a question</summary>
#
# Your $\partial y / \partial x_j$ has the sum $\sum_k e^{x_k}$ in it. Which quantity has
# forward already computed from that sum, and what does it give your derivative once you use
# it? How large can an exponent then be? Checkpoint: at $x = (0, 1, 2)$, $y = 2.40761$ and
# your $\partial y / \partial x = (0.09003, 0.24473, 0.66524)$; they add up to 1. Why must
# they?
# </details>
#
# <details><summary><b>Hint 3</b>: both products, numbers to hit</summary>
#
# Write each product with the weights of Hint 2: for backward, entry $j$ of the result; for
# jvp, the one number of the slice. Checkpoint, at $x = (0, 1, 2)$: with $g = 2$, your
# $\partial L/\partial x = (0.18006, 0.48946, 1.33048)$; with the tangent
# $\dot x = (1, 0, -1)$, your $\dot y = -0.57521$.
# </details>
#
# Forward needs care of its own: $e^{1000}$ overflows in float64. Which constant can you take
# out of the sum, so that no exponent left inside is positive?
#
# <details><summary><b>Hint 4</b>: an overflow-free forward, a question</summary>
#
# Write every term as $e^{c} \cdot e^{x_j - c}$ for a constant $c$ and take $e^{c}$ out of
# the sum: what does the log make of it? Which $c$ makes every exponent left $\le 0$, and
# what is then the largest term? Checkpoint: at $x = (1000, 999, 998)$ in float64,
# `x.exp().sum().log()` is `inf`, and your forward gives $1000.40761$ (the $(0, 1, 2)$ answer
# shifted by 998).
# </details>
#
#
# **Check your first step live, at one point.** Work out one entry of the Jacobian,
# $\partial y / \partial x_3$ at $x = (1000, 1000, 1001)$, as a number (evaluate your formula
# with Python or torch: does it give a number there?), write it into the next cell, then run
# the one after it: it compares your number with autograd's derivative of `torch.logsumexp`
# there. The rest is the exercise's: which tensors backward and jvp read, the two products
# along `dim` (Hint 3's numbers), and Hint 4's forward.

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
        print(f"✗ {mine}: an exponential overflowed. Hint 2 asks how to write the entry so"
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
# Write `LogSumExp.apply(x, dim)` equal to `torch.logsumexp(x, dim)` (no `keepdim`), with
# `dim` a Python int, possibly negative, naming a dimension of size 1 or more (a reduction over
# an empty dimension is outside the contract: `torch.logsumexp` gives `-inf` there), in the
# setup_context form. Decide before you write
# `setup_context`: which tensors does each derivative read, into which of the two lists does
# each go, and how does `dim`, an int, reach them? Say why in a comment beside it, and answer
# one more question there that no check grades: would a second derivative taken through your
# backward (lesson 04's double backward) still be right with what you kept? The contract,
# which the self-check and the hidden tests check:
#
# - `forward(x, dim)`: stable for $|x|$ up to 1000 in float64 (your overflow-free form from
#   Hint 4 above: how does a per-slice number meet the slice it came from?);
# - `setup_context(ctx, inputs, output)`: keep what backward and jvp need, tensors through
#   `ctx`'s save methods (never as `ctx` attributes), so that `LogSumExp` works under
#   `torch.vmap`, `torch.func.jvp` and `torch.func.grad`, each call with its own state (two
#   calls in one graph share none);
# - `backward(ctx, grad_output)`: your reverse-mode product from the section above, and `None`
#   for `dim` (mind which dimension `grad_output` lacks);
# - `jvp(ctx, x_tangent, dim_tangent)`: your forward-mode product (`dim_tangent` is `None`: an
#   int has no tangent), from what `setup_context` passed to `ctx.save_for_forward`; finite at
#   $|x| = 1000$ too;
# - keep `generate_vmap_rule = True`, already written for you.

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
# $\partial y / \partial x_j = e^{x_j} / \sum_k e^{x_k} = e^{x_j - y} = p_j$, the softmax
# along `dim`, with $x_j - y \le 0$. Backward: $\partial L/\partial x_j = g\,p_j$, $g$
# unsqueezed at `dim`; jvp: $\dot y = \sum_j p_j\,\dot x_j$. Forward:
# $y = m + \log \sum_j e^{x_j - m}$, $m = \max_j x_j$, so the sum lies between 1 and the
# number of terms. `setup_context` keeps `x` and the output (with `save_for_backward` for
# backward and again with `save_for_forward` for jvp: jvp sees only the second list), and each
# derivative forms $p$ from them. Saving $p$ itself instead, computed once in `setup_context`,
# gives the same first derivatives, which is all this contract asks; but that $p$ has no graph
# back to $x$, so a second derivative through this backward comes out as if $p$ were a
# constant (lesson 04), while $p$ formed in backward from the saved $x$ and output is
# recorded and differentiates. `dim`, an int, is no tensor: a plain attribute, `ctx.dim =
# dim`, one per call.
# </details>

# %% [markdown]
# The self-check runs every check grading runs: values and gradients on eleven (shape, dim)
# pairs (negative dims, the first dim, a 1-D input, an empty `(0, 4)` input), each input
# alone, forward, backward **and** jvp at $|x| = 1000$, `torch.func.jvp`, `torch.vmap` with
# per-sample gradients, and `gradcheck` with `check_forward_ad=True`.

# %% [markdown]
# ## A Function under `torch.compile`
#
# `torch.compile` runs TorchDynamo over your Python bytecode: it records tensor operations
# into an FX graph and hands the graph to a backend (`aot_eager` here: trace forward and
# backward ahead of time, run them eagerly, cheap to compile). Where it cannot follow the
# Python, it **breaks the graph**: the graph so far is compiled, the offending call runs in
# ordinary Python, and a new graph starts after it. `fullgraph=True` turns a graph break into
# an error, which is the easiest way to read its reason. Here is yours:

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
# In torch 2.13 dynamo does not trace a Function that defines `jvp`: *"Hint: Remove the
# custom `jvp` method if possible."* Only while autograd records, though: with an input that
# requires grad, as in training. Under `torch.no_grad()`, as the last line shows, or with
# inputs that do not require grad, dynamo traces `forward` alone and the same call compiles in
# one graph. Without `fullgraph=True` nothing is raised: the function runs, with a break around
# your Function. The same class without `jvp` is traced, forward **and** backward, into one
# graph:

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
# `torch.library.custom_op("namespace::name", mutates_args=())` turns a Python function with
# type annotations into an operator of PyTorch's dispatcher, `torch.ops.namespace.name`.
# `torch.compile` does not look inside it: the operator is one node of the graph. To build
# that graph without running your code, the compiler needs to know the output's shape, dtype
# and device from the inputs alone: that is the **fake implementation**
# (`@op.register_fake`), run on "fake" tensors that carry metadata but no data.
#
# Worked example, `autograd_course::matvec(A, v)`: $y = A v$ for $A$ of shape $(m, n)$ and
# $v$ of shape $(n,)$, standing in for a kernel of your own, with a fake implementation and
# nothing else. `torch.library.opcheck` runs the checks the compiler relies on: the schema
# matches what the function does (`test_schema`), the autograd registration is used
# (`test_autograd_registration`), the fake implementation agrees with the real one
# (`test_faketensor`), and the operator survives ahead-of-time tracing of forward and backward
# (`test_aot_dispatch_dynamic`).

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
# Every check passes on inputs that do not require grad, and the forward runs on one that
# does, but the operator has no derivative until you register one:
# `op.register_autograd(backward, setup_context=setup_context)`, two functions in the roles
# they play in a Function. `setup_context(ctx, inputs, output)` keeps what backward needs;
# `backward(ctx, grad_output)` returns one gradient per input of the operator, in the order of
# its signature, the inputs that are not tensors included. One difference from a Function:
# `register_autograd` calls `setup_context` with keyword arguments,
# `setup_context(ctx=..., inputs=..., output=...)`, so its parameters must be named exactly
# `ctx, inputs, output` (a Function's may be named as you like). (`matvec`'s own backward, two
# tensor inputs and `needs_input_grad`, is an optional section after the summary.)
#
# `mutates_args=()` is a promise in the operator's **schema**, which the compiler reorders,
# fuses and removes operators by: the operator writes into none of its inputs. An output is
# never an input nor a view of one either. An optional section after the summary breaks both
# promises and shows who notices.

# %% [markdown]
# ## Softplus with a scale: the questions before Exercise 2
#
# **Softplus** with a positive scale $\beta$, $s(x) = \frac{1}{\beta}\log(1 + e^{\beta x})$,
# is Exercise 2's operator. You wrote softplus with $\beta = 1$ in lesson 01 (its transfer
# exercise), so $\log(1 + e^{z})$, its derivative and its overflow-free form are yours
# already; here $z = \beta x$, and the log is divided by $\beta$. Answer on paper:
#
# 1. What is $ds/dx$? Count the factors of $\beta$: those the chain rule brings in, and the
#    one in front of the log.
# 2. Which tensors could `setup_context` keep for backward? It sees `inputs` and `output`,
#    not what forward computed on the way. List every candidate (an input, the output, a
#    tensor `setup_context` computes from them), and for each, how backward gets the slope of
#    question 1 from it.
# 3. The contract grades the gradient to a relative $10^{-5}$ in the left tail, down to
#    $\beta x = -40$, where $s$ is about $10^{-18}$. For each candidate of question 2, does
#    backward's formula keep those digits there, in float64 and in float32?
# 4. $\beta$ is a Python float. Where does backward find it, and what does backward return
#    for it?
#
# **Check question 1 live, at one point.** Work out $ds/dx$ at $x = 0.5$ with $\beta = 4$ as
# a number (evaluate your formula with Python or torch), write it into the next cell, then run
# the one after it: it compares your number with autograd's derivative of
# `F.softplus(4 * x) / 4` there. Questions 2 to 4 are the exercise's decisions: no cell tries
# a design before its self-check.

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
# <details><summary><b>Hint 1</b> (question 1: questions)</summary>
#
# Write $s = u(z) / \beta$ with $u(z) = \log(1 + e^{z})$, lesson 01's softplus, and
# $z = \beta x$. What is $du/dz$, what is $dz/dx$, and what is left of the $\beta$s once you
# multiply the three factors? Forward numbers to hit, in float64: at $x = 1$, $\beta = 2$,
# $s = 1.06346$; at $x = 400$, $\beta = 2$, $s = 400$, finite.
# </details>
#
# <details><summary><b>Hint 2</b> (question 2: the candidates)</summary>
#
# `setup_context` has $x$ and the output $s$; anything else, the slope itself say, it would
# compute again and keep as one more tensor. Which of them does the caller or the next layer
# keep anyway? Can the slope be written from $s$ alone: what is $e^{\beta s}$, in terms of
# $z$?
# </details>
#
# <details><summary><b>Hint 3</b> (question 3: questions, and numbers to hit)</summary>
#
# At $x = -20$, $\beta = 2$: $s = 2.1242 \times 10^{-18}$ (not 0), and the slope is $\beta$
# times that, $4.2484 \times 10^{-18}$ (why is the ratio $\beta$ so far left?). Evaluate each
# of your candidate formulas there, in float64, one operation at a time: what is each
# intermediate, and which step loses the $10^{-18}$? How many significant digits does a
# float64 number near 1 keep? Where a step loses them, can the formula be rearranged so that it
# never forms a number near 1?
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `softplus`, the custom operator `autograd_course::softplus`
#
# Turn `softplus(x, beta)` below into the custom operator `autograd_course::softplus` (`x` a
# tensor, `beta` a Python `float` > 0). The contract, which the self-check and the hidden
# tests check, is that the operator must:
#
# - compute $\log(1 + e^{\beta x}) / \beta$ **stably**: finite for $\beta x$ in the thousands,
#   and accurate where it is tiny (at $\beta x = -40$, $\log(1 + e^{\beta x})$ is about
#   $4.2 \times 10^{-18}$, and the output is that divided by $\beta$, not 0: the self-check
#   compares the left tail, every $\beta x$ from $-40$ to $-5$ in steps of $1/8$ and a few
#   points further out, to a relative $10^{-5}$), in float64 and in float32 (both are
#   graded; the output keeps `x`'s dtype). In the right tail, every $\beta x$ from 5 to 40 in
#   steps of $1/4$, float64 values are compared to a relative $10^{-9}$;
# - have a fake implementation whose output has the real output's shape, dtype and strides
#   (`opcheck` compares them; the self-check tries a transposed `x`, a permuted 3-D `x`, a
#   column slice and an expanded `x` too);
# - have a backward written by hand, registered for autograd, whose gradient is accurate in
#   the left tail too (the slope is tiny there, and the self-check compares it to a relative
#   $10^{-5}$ as well); its setup_context keeps tensors with `ctx.save_for_backward`, never
#   as `ctx` attributes (a float may be one);
# - pass `torch.library.opcheck`, and a `torch.compile(fullgraph=True, backend="aot_eager")`
#   of a function calling it must match eager values and gradients.
#
# Decide before you write it; `matvec` settled none of this. The fake: what must it return
# for an element-wise operator, so that `opcheck` finds the real output's metadata when `x` is
# not contiguous (a transposed `x`, say)? What `setup_context` keeps: your answers to
# questions 2 and 3 above. Say why in a comment beside it: which tensor backward starts from,
# what its formula gives at $\beta x = -40$, and what it costs in memory. What backward
# returns for each of the two inputs: questions 1 and 4. Nothing above has tried a design; if
# the self-check disagrees with yours, its first line names what broke.
#
# <details><summary>Fine print: the right tail's $10^{-9}$ and a switch to $x$ (open it only
# if your forward returns $x$ past some $\beta x$)</summary>
#
# Returning $x$ itself past a threshold drops a relative $e^{-\beta x}/(\beta x)$ or so:
# $8 \times 10^{-10}$ at $\beta x = 18$ and $2.4 \times 10^{-9}$ at 17. So a switch that
# returns $x$ only from $\beta x = 18$ on (`F.softplus`'s own, past $\beta x = 20$, included)
# passes the $10^{-9}$ comparison, and one from 17 on or earlier does not. A form with no
# switch at all passes too.
# </details>
#
# Keep every registration in this one cell. Re-running a cell that defines an operator is fine
# in torch 2.13 (`custom_op` with a name already defined replaces the earlier definition), but
# what was registered on the old definition goes with it; an optional section after the
# summary shows what that means for a handle from before the re-run.

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
# With $z = \beta x$: $s = \big(\max(z, 0) + \operatorname{log1p}(e^{-|z|})\big) / \beta$, and
# $s'(x) = \frac{1}{\beta}\,\sigma(z)\,\beta = \sigma(\beta x)$: the two $\beta$s cancel.
# The solution keeps $x$ (with `save_for_backward`) and computes $\sigma(\beta x)$ again, one
# exponential, with no subtraction to lose digits in. Keeping the output $s$ instead, one
# tensor of the same size, passes too, with $\sigma(\beta x) = 1 - e^{-\beta s}$ written as
# `-torch.expm1(-beta * s)`: as $1 -$ `torch.exp(...)` it is `0.0` at $\beta x = -40$, where
# $e^{-\beta s}$ rounds to 1. $\beta$ is a plain attribute (a float is not a tensor), and
# backward returns `None` for it. The fake is `torch.empty_like(x)`, which
# keeps `x`'s shape and dtype, and its strides where `x` is dense (a transposed `x`), giving
# contiguous strides where it is not (a column slice `x[:, :3]`, an expanded `x`), as the real
# element-wise output does; `x.new_empty(x.shape)` has the shape but is contiguous, which a
# transposed `x` is not, and `x.new_empty_strided(x.shape, x.stride())` copies a slice's gaps.
# (`matvec`'s `A.new_empty(A.shape[0])` was right: its 1-D output is contiguous whatever `A` is.)
# </details>

# %% [markdown]
# The self-check runs every check grading runs: your operator's values and hand-written
# gradient (with $\beta x$ up to $\pm 3200$, in the left tail to a relative $10^{-5}$, in the
# right tail to a relative $10^{-9}$),
# its fake implementation against the real output under `FakeTensorMode`,
# `torch.library.opcheck`, and a `torch.compile(fullgraph=True, backend="aot_eager")` of a
# function calling `softplus`.

# %% [markdown]
# ### A batching rule for an operator: `register_vmap`
#
# `torch.vmap` over an operator that has no batching rule still gives the right values: PyTorch
# falls back to calling the operator once per sample, in a loop in C++ (`BatchedFallback.cpp`),
# and warns at every such call, *"There is a performance drop because we have not yet
# implemented the batching rule for ..."*. A **batching rule** replaces that loop by one call
# on the whole batch. Its signature is `rule(info, in_dims, *inputs) -> (output, out_dims)`:
#
# - each tensor input arrives as a plain tensor **with** the batch dimension in it, at position
#   `in_dims[i]`; `in_dims[i]` is `None` for an input every sample shares (one not batched,
#   and always for an int or a float);
# - `info.batch_size` is the number of samples;
# - the rule returns the batched output and `out_dims`, where the output's batch dimension is.
#
# Register it with `torch.library.register_vmap("namespace::name", rule)` (or
# `op.register_vmap(rule)`).
#
# Worked example: `autograd_course::midpoint(x, y)`, $(x + y) / 2$ element by element, for `x`
# and `y` of one shape. One sample is a pair of tensors, and the two batches need not agree
# on where they keep their batch dimension. First, no rule: the values are right, through the
# fallback.

# %%
@torch.library.custom_op("autograd_course::midpoint", mutates_args=())
def midpoint(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """(x + y) / 2, element by element, for x and y of one shape."""
    return (x + y) / 2


@midpoint.register_fake
def _(x, y):
    return torch.empty_like(x)


xs = torch.arange(24.0).reshape(2, 3, 4)  # a batch of 2 samples of shape (3, 4), batch dim 0
ys = -torch.arange(24.0).reshape(3, 4, 2)  # 2 more samples of shape (3, 4), batch dim last
shared = torch.ones(3, 4)  # one sample's worth, the same for every sample
pairs = torch.stack([midpoint(x, y) for x, y in zip(xs.unbind(0), ys.unbind(2))])
print("vmap without a rule (the fallback):",
      torch.equal(torch.vmap(midpoint, in_dims=(0, 2))(xs, ys), pairs))

# %% [markdown]
# The rule must line the inputs up before the one call: with `in_dims=(0, 2)`, `x`'s samples
# run along its first dimension and `y`'s along its last, and adding them as they are pairs
# the wrong entries (or fails on the shapes). This rule puts each batch dimension last
# (`movedim`), and gives an input with `None`, which has none, a batch dimension by
# `expand`, which copies nothing. Element by element, the output's dimensions are the inputs'
# dimensions in the same order, so its batch dimension is last too, `-1`. Last is a choice:
# first works as well, as long as the inputs agree and `out_dims` says where it ended up. The
# loop below tries the rule with either input batched, or both, in every place.

# %%
def midpoint_vmap(info, in_dims, x, y):
    """One call on the whole batch: each input with its batch dim moved last."""
    def batch_last(t, bdim):
        if bdim is None:  # shared by every sample: a batch dim by expanding (no copy)
            return t.unsqueeze(-1).expand(*t.shape, info.batch_size)
        return t.movedim(bdim, -1)

    x_bdim, y_bdim = in_dims
    return midpoint(batch_last(x, x_bdim), batch_last(y, y_bdim)), -1  # element-wise: still last


torch.library.register_vmap("autograd_course::midpoint", midpoint_vmap)


def rule_matches_loop(x_at, y_at) -> bool:
    """vmap with x's batch dim at x_at and y's at y_at (None: shared), against a loop."""
    x = shared if x_at is None else xs.movedim(0, x_at)
    y = shared if y_at is None else ys.movedim(2, y_at)
    loop = torch.stack([midpoint(shared if x_at is None else a, shared if y_at is None else b)
                        for a, b in zip(xs.unbind(0), ys.unbind(2))])
    return torch.equal(torch.vmap(midpoint, in_dims=(x_at, y_at))(x, y), loop)


agree = all(rule_matches_loop(x_at, y_at) for x_at in (None, 0, 1, 2)
            for y_at in (None, 0, 1, 2) if (x_at, y_at) != (None, None))
print("the rule matches a loop for every place of either batch dim:", agree)

# %% [markdown]
# ## ✎ Exercise 3 (transfer) · `squared_norm`, an operator with a batching rule
#
# An operator nobody built above. Turn `squared_norm(x, dim)` below into the custom operator
# `autograd_course::squared_norm`, computing `(x * x).sum(dim)` (no `keepdim`), with `x` a
# tensor and `dim` a Python int, negative allowed. The contract, which the self-check and the
# hidden tests check, is that the operator must:
#
# - have a fake implementation (what shape does the output have? Its strides must match the
#   real output's too, which the self-check tries on a permuted `x`);
# - have a backward written by hand, registered for autograd, with `None` for `dim`; its
#   setup_context keeps tensors with `ctx.save_for_backward`, never as `ctx` attributes (an
#   int may be one);
# - have a batching rule registered with `register_vmap` that works on the whole batch at once
#   (not PyTorch's per-sample fallback, nor a loop of your own), so that
#   `torch.vmap(squared_norm, in_dims=(b, None))(batch, dim)` matches a loop over the samples
#   for **every** `dim` of a sample, negative ones included, wherever the batch dimension `b`
#   is in `batch` (first, between a sample's dimensions, last), leaving `batch` as it was;
# - pass `torch.library.opcheck`.
#
# Keep every registration in the answer cell, so that re-running it registers them all on the
# new definition; never call a `squared_norm` handle from before a re-run.

# %% [markdown]
# <details><summary><b>Hint 1</b>: the backward</summary>
#
# For $x$ of shape $(R, C)$ and `dim=1`, $y_r = \sum_c x_{r,c}^2$. Write
# $\partial y_r / \partial x_{s,c}$ with a delta, multiply by $g_r$ and sum over $r$: which
# dimension of $x$ does $g$ lack, and how does it get it back before it meets $x$?
# </details>
#
# <details><summary><b>Hint 2</b>: the fake implementation</summary>
#
# What shape does the output have for $x$ of shape $(2, 3, 4)$ with `dim = 1`, and with
# `dim = -1`: which dimension of $x$ does a negative `dim` name? The self-check permutes $x$:
# is the real output's layout then $x$'s, or contiguous? Print its `stride()` and see.
# </details>
#
# <details><summary><b>Hint 3</b>: the batching rule</summary>
#
# `midpoint`'s rule had no `dim` to think about; this one has. Which dimension of one sample
# does `dim` name (a negative `dim` counts from the end of the sample)? Which dimension of the
# batched $x$ is that, given where its batch dimension is? The output has lost `dim`: where is
# its batch dimension now, for each place the batch dimension can be?
# </details>
#
# <details><summary><b>Hint 4</b>: a numeric checkpoint</summary>
#
# Five samples of shape $(3, 4)$ stored along dimension 1, an $x$ of shape $(3, 5, 4)$: with
# `dim = 0` the loop over the samples gives shape $(5, 4)$, and with `dim = -1` shape $(5, 3)$.
# Which shape does the one call in your rule return in each case, and where in it is the batch
# dimension? That position is your `out_dims`.
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
# **Check Hint 4's checkpoint live, before the self-check.** The self-check tries the batch
# dimension first, between a sample's dimensions and last; the cell below tries one of those
# places. It stores five samples of shape $(3, 4)$ along dimension 1, runs your operator under
# `torch.vmap(squared_norm, in_dims=(1, None))` for `dim = 0` and `dim = -1`, and compares each
# result with a loop over the samples.

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
# Backward: $\partial L/\partial x_{s,c} = \sum_r g_r\,2x_{r,c}\,\delta_{rs} = 2\,g_s\,x_{s,c}$:
# $g$ is broadcast back along the reduced dimension. The fake: $x$'s shape without `dim`
# (made non-negative first). The rule: a sample's `dim` $d$ is $d$ or $d + 1$ of the batched
# $x$ (past the batch dimension), and the output's batch dimension is one less when the reduced
# dimension came before it; with the batch dimension moved to the front first, a sample's
# $d \ge 0$ is $d + 1$, a negative $d$ stays, and the output's batch dimension is 0.
#
# Why the check before the self-check tried `in_dims=(1, None)`: a sample's `dim` 0 comes
# before the batch dimension at 1, and after the reduction removes it, the output's batch
# dimension is at 0, not 1. An element-wise rule may return the place it left the batch
# dimension in, because the output keeps every dimension; a reduction does not. A rule that
# returns the input's batch dimension gives, for `dim = 0` there, shape $(4, 5)$ where the
# loop gives $(5, 4)$, though it is right with the batch dimension at 0, where nothing comes
# before it.
# </details>

# %% [markdown]
# ## Choosing: measured on this torch
#
# The table below is computed, not typed: each column is tried on your two answers.
#
# **Predict** its last row first. `softplus` has a backward registered with
# `register_autograd` and no `jvp` of any kind. Under `torch.func.jvp`, does it give the right
# tangent (`"yes"`), a wrong one with no error (`"WRONG"`), or raise (`"no"`)? And under
# `torch.func.grad`? Write your answers into `prediction_table` and run the cell; the table's
# cell compares.

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
# Read the `WRONG`: `torch.func.jvp` through a custom operator whose autograd is registered
# with `register_autograd` returns **zero tangents without an error** on torch 2.13 (and
# `forward_ad` returns no tangent at all). `torch.func.grad` refuses the operator outright (its
# generated Function is in the old form; the "In practice" block says more), so per-sample
# gradients, `vmap(grad(...))`, are out of reach too: the operator keeps only ordinary
# `backward`. `vmap` of its forward works,
# through PyTorch's per-sample fallback (or one call per batch, with a rule registered as for
# `midpoint`).
#
# | you need | pick |
# |---|---|
# | `torch.compile` in one graph and reverse mode (`.backward()`) | a Function in the setup_context form **without** `jvp` (dynamo traces it), or a custom operator |
# | `torch.func.grad`, `vmap(grad(...))` (per-sample gradients), `jacrev` | a Function in the setup_context form; not a custom operator |
# | forward-mode AD (`jvp`, `jacfwd`, `forward_ad`) | a Function with `jvp`; accept a graph break under `torch.compile` |
# | code the compiler must not look into (a C++/CUDA kernel, NumPy, a library call) | a custom operator with `register_fake`, `register_autograd` and `register_vmap`; its backward must be PyTorch ops too, or an operator of its own (a NumPy backward works in eager and fails `opcheck`'s `test_aot_dispatch_dynamic`; lesson 13) |
# | a Triton kernel the compiler should fuse with the code around it (GPU) | `torch.library.triton_op` with `wrap_triton`, lesson 13; a `custom_op` is opaque to it |
# | both an opaque kernel and `torch.func` | a custom operator called inside a Function in the setup_context form with `generate_vmap_rule = True` (vmap and `vmap(grad)` then batch the operator through its `register_vmap` rule, or the per-sample fallback without one; a `vmap` staticmethod is needed only where the Function itself leaves PyTorch outside the operator), and a `jvp` for forward mode (still a break), or wait for a later torch |


# %% [markdown]
# ## Summary
#
# The setup_context form (`forward` without `ctx`, `setup_context`, `generate_vmap_rule`,
# `jvp` with `save_for_forward`) is what `torch.func` needs. `torch.compile` traces such a
# Function in one graph unless it has a `jvp`, which on torch 2.13 costs a graph break while
# autograd records (under `torch.no_grad()` it still compiles in one graph). A custom
# operator (`custom_op`, `register_fake`, `register_autograd`, `register_vmap`, checked by
# `opcheck`) is one opaque node in the graph, at the price of the `torch.func` transforms that
# differentiate: `torch.func.grad` (and with it `vmap(grad(...))`) refuses it, and
# `torch.func.jvp` returns zero tangents. Measure before you choose, with `fullgraph=True` (the
# first optional section below shows every graph and break dynamo made).
#
# The common mistakes of this lesson, each with what happens and its fix, are in a table in
# the optional section *Common mistakes* below.

# %% [markdown]
# ---
# ## Optional sections (not graded)
#
# The main line ends with the summary above. The sections below look further at your answers,
# try one more derivation, and back the main line's claims with experiments; none is needed
# for an exercise, and you can skip any of them. They use your `LogSumExp` and `softplus`.

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
# `NumpyExp` below computes $e^x$ with NumPy, a stand-in for a kernel outside PyTorch, in the
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
# The same holds for a batching rule. `midpoint_vmap` calls `midpoint` by name, so it always
# calls the current definition, but re-running the cell that defines `midpoint` replaces the
# operator and drops the rule registered on the old one (vmap falls back to the loop again).
# Re-run the rule's cell too, or, better, keep an operator's registrations in the cell that
# defines it, as the exercises do.

# %% [markdown]
# ### Common mistakes
#
# The first table holds the mistakes the three exercises meet most often, each with what
# happens and its fix.
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | old form, no `setup_context` | vmap and `torch.func.jvp` raise *"it must override the setup_context staticmethod"* | move the saving into `setup_context` |
# | `jvp` reads `ctx.saved_tensors` kept only with `save_for_backward` | inside jvp `saved_tensors` is empty: *"not enough values to unpack"* | also `ctx.save_for_forward(...)` |
# | `log(sum(exp(x)))` | `inf` at $x = 1000$ | subtract the max |
# | softmax weights in backward or jvp as $e^{x} / \sum e^{x}$ | `nan` ($\infty / \infty$) at $\lvert x \rvert = 1000$, although forward is right | $e^{x - y}$ with the saved output |
# | a fake implementation with the wrong shape, dtype or strides | `opcheck`'s `test_faketensor` fails; compiled code breaks later | the real output's metadata: `torch.empty_like(x)` element-wise (`x.new_empty(x.shape)` is contiguous, and so is the output of a forward that copies `x` with `.contiguous()`), `x.new_empty(...)` with the reduced shape for a reduction |
# | softplus's slope from the saved output, $1 - e^{-\beta s}$ | exact on paper, but the subtraction cancels where $s$ is tiny: `0.0` at $\beta x = -40$, not $4.2 \times 10^{-18}$ | `-torch.expm1(-beta * s)`, or save `x` and use $\sigma(\beta x)$ |
# | `log1p(exp(beta * x))` | `inf` once $\beta x > 709$ (float64) | $\max(z,0) + \operatorname{log1p}(e^{-|z|})$ |
# | $\max(z,0) + \log(1+e^{-\lvert z \rvert})$, with `log` | `0.0` at $\beta x = -40$, not $4.2 \times 10^{-18}$: $1 + e^{-40}$ rounds to 1 | `torch.log1p` |
# | no batching rule for the operator | vmap loops per sample and warns *"performance drop"* | `register_vmap` |
# | a batching rule that passes `dim` on unchanged | the batched tensor has one more dim: with the batch dim first, right for negative dims and wrong for `dim >= 0`; with the batch dim last, the reverse (a negative `dim` wrong, or an error) | translate `dim` past the batch dim, wherever it is |
# | after a reduction, the input's batch dim returned as the output's | right with the batch dim at 0; with `in_dims=1`, the wrong shape (or, when sizes happen to agree, wrong values) once `dim` comes before the batch dim | find where the batch dim is in what the one call returned |
#
# The rows below are the rest: mistakes whose error names the problem, and a few that give no
# error (a `jvp` reading `ctx.x`, an undeclared write, a plain function).
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `forward(ctx, x, dim)` together with `setup_context` | `TypeError: missing a required argument: 'dim'` | `forward(x, dim)`: no ctx in this form |
# | `generate_vmap_rule` missing | vmap raises *"does not have vmap support"* | `generate_vmap_rule = True` |
# | jvp without `save_for_forward`: tensors kept as `ctx.x` | works today, skips the version checks | `ctx.save_for_forward` |
# | no `jvp` staticmethod | forward mode raises *"You must implement the jvp function"* | write it |
# | a gradient returned for `dim` or `beta` | *"returned a gradient different than None"* | `None` for non-tensors |
# | no `register_fake` | *"There was no fake impl registered"* under `torch.compile` | add it |
# | `register_autograd(backward)` without `setup_context` | `ctx` is empty in backward | pass `setup_context=` |
# | the operator's `setup_context(ctx, inp, out)` | *"unexpected keyword argument 'inputs'"*: `register_autograd` passes `ctx=`, `inputs=`, `output=` | name them exactly `ctx, inputs, output` |
# | tensors kept as `ctx.x` in the operator's `setup_context` | the saved-tensor checks and hooks are skipped | `ctx.save_for_backward(x)` |
# | backward returns only `grad_x` | *"expected 3, got 2"*-style count error: one gradient per input | `return grad_x, None` |
# | an operator that writes into an input with `mutates_args=()` | no error when called; wrong results under `torch.compile`; `opcheck` fails | `mutates_args=("x",)` |
# | a batching rule that computes in place on `x` (`x.mul_(x)`) | no error, and vmap's result is right, but the caller's batch comes back squared: `movedim` returns a view | compute a new tensor |
# | a plain Python `softplus` (no operator) | dynamo inlines it; nothing to register, nothing opaque | `@torch.library.custom_op` |

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
