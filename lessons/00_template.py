# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 00 · The anatomy of a custom autograd Function
#
# **About 80 minutes** for the main path, up to the Summary: reading and running it, the three
# exercises and one `gradcheck` of your own. The optional part after it takes about 25 minutes
# more.
#
# This course is about writing the forward computation **and** its gradient yourself, in a
# `torch.autograd.Function`. By the end of this lesson you can:
# 1. say what `forward`, `backward`, `ctx` and `.apply` each do;
# 2. derive a backward from the chain rule, one index at a time, and decide what forward must
#    save for it;
# 3. handle several inputs, some of them plain Python numbers, and skip gradients nobody needs;
# 4. verify a backward with `torch.autograd.gradcheck`.
#
# Every Function you write obeys the six rules of the [Function contract](function_contract.md).
# This lesson shows each rule once; open the page when a check names one.
#
# Exercises are marked **✎ Exercise**. Each self-check runs every check the hidden tests run
# (they add a GPU run when there is one). **Predict, then run** cells take your prediction in a
# variable; the next cell compares it with PyTorch.

# %% nbgrader={"locked": true}
import warnings

import matplotlib.pyplot as plt
import torch
from torch.autograd.gradcheck import GradcheckError

from autograder import self_check
from autograder.predictions import compare_all, written
from widgets import backward_flow, inspect_saved, jacobian_view

_ = torch.manual_seed(0)


# %% [markdown]
# ## Why write your own backward?
#
# Autograd records the forward pass and replays its derivatives backwards. You write a
# `Function` when:
#
# - **the formula autograd would differentiate is unstable**, but you know a stable gradient
#   (lesson 01);
# - **you want a different gradient on purpose**, such as a straight-through estimator
#   (lesson 03);
# - **memory matters**: you can keep less than autograd does, and recompute (lessons 02, 05, 06);
# - **you call code autograd cannot see**: a CUDA kernel, a C library, NumPy.
#
# Otherwise, compose ordinary tensor operations and let autograd do the work.

# %% [markdown]
# ## The maths: backward is a vector-Jacobian product
#
# Say a loss $L$ depends on $y = f(x)$. Autograd hands your backward `grad_output`
# $= \partial L / \partial y$, of the shape of $y$. Your backward returns the gradient with respect
# to your input, of the shape of $x$, by the chain rule:
#
# $$\frac{\partial L}{\partial x_j} = \sum_i \frac{\partial L}{\partial y_i}\,
#   \frac{\partial y_i}{\partial x_j}
#   \qquad\text{that is}\qquad
#   \texttt{grad\_input} = \texttt{grad\_output}^\top J .$$
#
# Do not build the Jacobian $J$: it has an entry for every pair of an output entry and an input
# entry, $n^2$ numbers for $n$ inputs and $n$ outputs, where the gradient has $n$ (rule 3 of the
# contract keeps backward's memory linear in the sizes). The method,
# every time: write one entry $\partial y_i / \partial x_j$ with its indices, see which entries are
# zero, and do the sum over $i$ on paper. What is left is a formula in tensors, and its shapes
# check it.

# %% [markdown]
# ## The anatomy of a `Function`
#
# A `Function` is a class with two `@staticmethod`s, joined by a context object, `ctx`:
#
# - `forward(ctx, x)` receives the inputs and returns the output. The tensors backward will need
#   go through `ctx.save_for_backward(...)`, called once with all of them.
# - `backward(ctx, grad_output)` receives $\partial L / \partial y$ and returns **one gradient per
#   input of forward**, of that input's shape. `ctx.saved_tensors` gives back what forward saved,
#   as a tuple in the order saved, in backward only.
# - You call a Function with `MyFunction.apply(x)`, never `MyFunction()(x)` or
#   `MyFunction.forward(...)`: `apply` links the output into the autograd graph.

# %% [markdown]
# ## ✎ Exercise 1 · `Square`
#
# Write `Square`, with `Square.apply(x)` returning `x ** 2` element-wise.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - the value and the gradient autograd gives `x ** 2`, for every `x` at which that gradient is
#   finite, `x = 0` included.
#
# Rules 1 (every shape, layout and dtype) and 4 (state on `ctx`) of the
# [contract](function_contract.md) show here.
#
# No worked example comes first: this is your first `Function`. Answer on paper, with the method
# above:
#
# 1. Write $\partial y_i / \partial x_j$. Which entries of the Jacobian are non-zero?
# 2. Do the sum over $i$ of the chain rule. Where does `grad_output` appear, and what shape has
#    the result?
# 3. What must forward save for that? It has the input $x$ and the output $y$ at hand. Decide:
#    $x$, $y$ or both, and write down one line why. After the exercise, a predict-then-run cell
#    puts your reason to the test.
#
# <details><summary><b>Hint 1</b> (a question)</summary>
#
# Change $x_j$ alone, for one $j$: which outputs $y_i$ move? So how many terms of the sum
# $\sum_i \texttt{grad\_output}_i\, \partial y_i/\partial x_j$ can be non-zero?
# </details>
#
# <details><summary><b>Hint 2</b> (the key step: questions)</summary>
#
# Is this Jacobian full, a band, or a diagonal? For one $j$, which term of the sum is left, and
# which entry of `grad_output` does it hold?
# </details>
#
# <details><summary><b>Hint 3</b> (a number to hit)</summary>
#
# At `x = [1.5, -2.0]` with `grad_output = [1.0, 3.0]`, your backward returns
# `[3.0, -12.0]`.
# </details>

# %% nbgrader={"grade_id": "answer_Square", "solution": true}
class Square(torch.autograd.Function):
    """y = x ** 2."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        return x ** 2
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        return grad_output * 2 * x  # d/dx x**2 = 2x
        ### END SOLUTION


# %% nbgrader={"grade_id": "Square", "grade": true, "points": 1}
self_check("Square", Square)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Square", Square)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\texttt{grad\_input}_j = 2\, x_j\, \texttt{grad\_output}_j$, element by element, of $x$'s
# shape: `2x * grad_output`, written `grad_output * 2 * x` or `2 * x * grad_output`. It needs
# $x$, which costs no new memory while the caller keeps $x$ anyway (a model's input, a weight);
# for an intermediate the caller would free, saving it is what keeps it alive until backward.
# </details>

# %% [markdown]
# ## Worked example: `Norm`, a Jacobian that is not diagonal
#
# $y = \lVert x \rVert = \sqrt{\sum_j x_j^2}$, the Euclidean length of each row: $x$ has shape
# $(*, n)$ and $y$ has shape $(*)$. Take one row.
#
# 1. **One entry.** $\dfrac{\partial y}{\partial x_j} = \dfrac{1}{2\sqrt{\sum_k x_k^2}}\cdot 2x_j
#    = \dfrac{x_j}{y}$. No entry is zero by its indices: the Jacobian of a row is a full
#    $1 \times n$ row, not a diagonal.
# 2. **The sum over outputs.** A row has one output, so the sum has one term:
#    $\texttt{grad\_input}_j = \texttt{grad\_output} \cdot x_j / y$.
# 3. **Shapes.** `grad_output` has the shape of $y$, $(*)$; the result must have the shape of
#    $x$, $(*, n)$. So `grad_output` and `y` get back their last dimension, of size 1, and
#    broadcast along the row.
# 4. **What to save.** Backward reads $x$ and $y$: forward saves both.

# %%
class Norm(torch.autograd.Function):
    """y = ||x||, the Euclidean norm over the last dimension: (*, n) -> (*)."""

    @staticmethod
    def forward(ctx, x):
        y = x.square().sum(dim=-1).sqrt()
        ctx.save_for_backward(x, y)  # tensors for backward go through save_for_backward
        return y

    @staticmethod
    def backward(ctx, grad_output):
        x, y = ctx.saved_tensors
        # dy/dx_j = x_j / y, for every j of the row: (*, 1) * (*, n) / (*, 1) -> (*, n)
        return grad_output.unsqueeze(-1) * x / y.unsqueeze(-1)


# %% [markdown]
# At a row of zeros backward divides $0$ by $0$: the norm has no derivative there
# (`torch.linalg.vector_norm` gives $0$, a convention). A Function you ship decides, and says so.

# %%
x = torch.tensor([[3.0, 4.0], [1.0, -1.0]], requires_grad=True)
y = Norm.apply(x)
y.sum().backward()
print("y      =", y.detach())
print("x.grad =", x.grad, "\n x / y =", x.detach() / y.detach().unsqueeze(-1))
print("y.grad_fn is a", type(y.grad_fn).__name__)

# %% [markdown]
# `y.grad_fn` is **one** node for the whole Function, and its backward is yours: autograd never
# differentiates what forward computed, so it never corrects a wrong backward.

# %% [markdown]
# ## Check a backward with `gradcheck`
#
# `torch.autograd.gradcheck` compares your backward with **finite differences**,
# $\big(f(x+\varepsilon) - f(x-\varepsilon)\big) / 2\varepsilon$ with $\varepsilon = 10^{-6}$,
# for every input element, and returns `True` or raises.
#
# **Predict, then run.** `Norm`'s backward is exact. Does it pass `gradcheck` on a random
# $(3, 5)$ input in float64? In float32? Write `True` (passes) or `False` (fails) into the
# next cell before you run the one after it.

# %%
### BEGIN WORKED
predicted_gradcheck = {"gradcheck passes in float64": True, "gradcheck passes in float32": False}
### LEARNER
predicted_gradcheck = {"gradcheck passes in float64": None, "gradcheck passes in float32": None}
### END WORKED


# %%
def passes_gradcheck(function, *inputs):
    """gradcheck's verdict as a bool, its warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.autograd.gradcheck(function, inputs, raise_exception=False)


x64 = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
x32 = x64.detach().float().requires_grad_()
compare_all(predicted_gradcheck, {
    "gradcheck passes in float64": passes_gradcheck(Norm.apply, x64),
    "gradcheck passes in float32": passes_gradcheck(Norm.apply, x32)
})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# float64 passes; float32 fails, although the backward is exact: float32's rounding, divided by
# $2\varepsilon$, is far larger than `gradcheck`'s tolerance. A failing float32 `gradcheck` tells
# you nothing about your backward; run it in float64.
# </details>

# %% [markdown]
# ### Could forward have saved its output?
#
# `Norm` saved its output. `SquareFromOutput` saves $y = x^2$ instead of $x$, and recovers $x$ in
# backward as $\sqrt{y}$. **Predict, then run.** Does it pass `gradcheck`? Is its gradient right
# for negative $x$? For positive $x$? Write `True` or `False` into the next cell first.

# %%
### BEGIN WORKED
predicted_from_output = {"gradcheck passes": False, "right for negative x": False,
                         "right for positive x": True}
### LEARNER
predicted_from_output = {
    "gradcheck passes": None, "right for negative x": None, "right for positive x": None
}
### END WORKED


# %%
class SquareFromOutput(torch.autograd.Function):
    """y = x ** 2, saving the output and recovering x as sqrt(y)."""

    @staticmethod
    def forward(ctx, x):
        y = x ** 2
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * 2 * y.sqrt()


x_signed = torch.tensor([-1.5, -0.5, 0.5, 1.5], dtype=torch.float64, requires_grad=True)
SquareFromOutput.apply(x_signed).sum().backward()
right = torch.isclose(x_signed.grad, 2 * x_signed.detach())
if written(predicted_from_output):  # the gradients, once your three answers are written
    print("x_signed.grad =", x_signed.grad.tolist(), " (2x =", (2 * x_signed.detach()).tolist(),
          ")")
compare_all(predicted_from_output, {
    "gradcheck passes": passes_gradcheck(SquareFromOutput.apply, x_signed),
    "right for negative x": bool(right[x_signed < 0].all()),
    "right for positive x": bool(right[x_signed > 0].all())
})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The gradient is right for positive $x$ and has the wrong sign for every negative $x$, so
# `gradcheck` fails: $\sqrt{x^2} = |x|$. Saving the output pays off only when the derivative can
# be written from it, and here it cannot. Lesson 01 meets functions where it can.
# </details>
#
# A failing `gradcheck` prints the numerical Jacobian and your backward's, one row per input entry
# (the transpose of $J$): here the diagonals differ in sign where $x < 0$.

# %%
try:
    torch.autograd.gradcheck(SquareFromOutput.apply, (x_signed,))
except GradcheckError as error:
    print(error)

# %% [markdown]
# ### Two calls before one backward
#
# **Predict, then run.** `SquareOnClass` is `Square` keeping $x$ for backward on its class,
# `SquareOnClass.x = x`, where `Square` saved it. A model calls it twice before any backward, on
# ones and then on threes; then the first call's output is backpropagated. What is each entry of
# the first input's gradient?

# %%
### BEGIN WORKED
predicted_on_class = {"first input's gradient, each entry": 6.0}
### LEARNER
predicted_on_class = {"first input's gradient, each entry": None}  # a number
### END WORKED


# %%
class SquareOnClass(torch.autograd.Function):
    """y = x ** 2, keeping x on the class for backward."""

    @staticmethod
    def forward(ctx, x):
        SquareOnClass.x = x
        return x ** 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2 * SquareOnClass.x


x_first, x_second = torch.ones(2, requires_grad=True), torch.full((2,), 3.0, requires_grad=True)
y_first = SquareOnClass.apply(x_first)
y_second = SquareOnClass.apply(x_second)  # a second call, before the first one's backward
y_first.sum().backward()
compare_all(predicted_on_class, {"first input's gradient, each entry": x_first.grad[0].item()})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `6.0`, where $2x = 2$ was asked. The class is one object, shared by every call: the second
# call's `SquareOnClass.x` replaced the first call's $x$ before its backward ran, and nothing
# warned. A model calls one Function many times (once per layer) before any backward runs:
# rule 4 of the [contract](function_contract.md).
# </details>

# %% [markdown]
# ## Several inputs, and inputs that are not tensors
#
# Tensors go through `save_for_backward`, not `ctx.x = x`. Why: if a saved tensor is changed in
# place before backward, backward raises instead of returning a silently wrong gradient. What of
# an input that is not a tensor?
#
# **Predict, then run.** `Shift` computes $y = x + c$, with $c$ a Python float. Its backward
# returns `grad_output` for `x` and `None` for `c`. Two variants change one thing each:
#
# - `ShiftSavesC`: forward calls `ctx.save_for_backward(x, c)`;
# - `ShiftZerosForC`: backward returns a 0-d tensor of zeros for `c`, not `None`.
#
# Each runs forward and backward at `c = 2.0`. Which of the three raise? Write `True` (raises)
# or `False` for each.

# %%
### BEGIN WORKED
predicted_shift = {"ShiftSavesC raises": True, "ShiftZerosForC raises": True,
                   "Shift raises": False}
### LEARNER
predicted_shift = {"ShiftSavesC raises": None, "ShiftZerosForC raises": None,
                   "Shift raises": None}
### END WORKED


# %%
class Shift(torch.autograd.Function):
    """y = x + c, with c a Python float."""

    @staticmethod
    def forward(ctx, x, c):
        return x + c

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class ShiftSavesC(Shift):
    """Shift, whose forward saves x and c."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.save_for_backward(x, c)
        return x + c


class ShiftZerosForC(Shift):
    """Shift, whose backward returns zeros for c."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, torch.zeros(())


def first_error(function):
    """Run function forward and backward at c = 2.0: its error's first line, or None."""
    x = torch.ones(3, requires_grad=True)
    try:
        function.apply(x, 2.0).sum().backward()
    except (TypeError, RuntimeError) as error:
        return f"{type(error).__name__}: {str(error).splitlines()[0]}"
    return None


errors = {function.__name__: first_error(function)
          for function in (ShiftSavesC, ShiftZerosForC, Shift)}
if written(predicted_shift):  # what happened, once your three answers are written
    for name, error in errors.items():
        print(f"{name}: {error or 'no error'}")
    y = Shift.apply(torch.ones(3, requires_grad=True), 2.0)
    print("ctx.needs_input_grad of Shift.apply(x, 2.0):", y.grad_fn.needs_input_grad)
compare_all(predicted_shift, {f"{name} raises": error is not None
                              for name, error in errors.items()})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `save_for_backward` takes tensors (or `None`), never a float. A Python float never needs a
# gradient, and autograd cannot give it one. `ctx.needs_input_grad` says so: it has one entry
# per input of forward, `True` where that input needs a gradient, here `(True, False)`. So the
# float's place in backward's return takes `None`, nothing else.
# </details>

# %% [markdown]
# ## ✎ Exercise 2 · `WeightedSum`
#
# Write `WeightedSum`, with `WeightedSum.apply(x1, x2, w1, w2)` returning `w1 * x1 + w2 * x2`,
# for tensors `x1` and `x2` of one shape and dtype and Python floats `w1` and `w2`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - the value and the gradients autograd gives `w1 * x1 + w2 * x2`, for Python floats `w1` and
#   `w2`;
# - forward saves only what the gradients read: a saved tensor is held in memory until backward
#   runs.
#
# Two things are new since `Square`: four inputs, and two of them are Python floats, as `c` was
# in `Shift`. Derive both gradients on paper. Decide from them which inputs backward reads, and
# so what forward saves. Then write your answer and run it. Where an attempt breaks a rule,
# torch's error or the self-check's first line says which.
#
# <details><summary><b>Hint 1</b> (a question)</summary>
#
# If you nudge $x_{1,j}$ by a small $\varepsilon$, by how much does $y_j$ move? Does the answer
# depend on any tensor?
# </details>
#
# <details><summary><b>Hint 2</b> (the key step: questions)</summary>
#
# Both Jacobians are diagonal, as for `Square`. Which of the four inputs does each diagonal entry
# contain, and which of them must backward still have?
# </details>
#
# <details><summary><b>Hint 3</b> (numbers to hit)</summary>
#
# With `w1 = 2.0`, `w2 = -0.5` and `grad_output = [1.0, 4.0]`, your backward returns
# `[2.0, 8.0]` for `x1` and `[-0.5, -2.0]` for `x2`.
# </details>

# %% nbgrader={"grade_id": "answer_WeightedSum", "solution": true}
class WeightedSum(torch.autograd.Function):
    """y = w1 * x1 + w2 * x2, with w1 and w2 Python floats."""

    @staticmethod
    def forward(ctx, x1, x2, w1, w2):
        ### BEGIN SOLUTION
        ctx.w1, ctx.w2 = w1, w2
        return w1 * x1 + w2 * x2
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        grad_x1 = grad_output * ctx.w1 if ctx.needs_input_grad[0] else None
        grad_x2 = grad_output * ctx.w2 if ctx.needs_input_grad[1] else None
        return grad_x1, grad_x2, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "WeightedSum", "grade": true, "points": 1}
self_check("WeightedSum", WeightedSum)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("WeightedSum", WeightedSum)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $\partial y_i / \partial x_{1,j} = w_1 \delta_{ij}$, so with $G$ = `grad_output`,
# $\partial L / \partial x_{1,j} = w_1 G_j$, and $w_2 G_j$ for $x_2$. No tensor appears, so
# forward saves no tensor. The two floats go on `ctx` as plain attributes, since
# `save_for_backward` takes no floats. Every call gets its own `ctx`; the class is shared by
# every call, as `SquareOnClass` showed. The floats' places in backward's return take `None`.
# Each gradient is computed only where its entry of `ctx.needs_input_grad` is `True`.
# </details>

# %% [markdown]
# ## Try it: `gradcheck` on your own
#
# So far every `gradcheck` call was written for you.
# Write one for your `WeightedSum` at `w1 = 0.5`, `w2 = -2.0`: a function `my_gradcheck`
# that builds the inputs, calls `torch.autograd.gradcheck` and returns its result. What must
# the tensors be, and what does `gradcheck` do with the two floats? Then run the cell after
# it: it says ✓, or what `gradcheck` objected to.

# %%
### BEGIN WORKED
def my_gradcheck():
    x1 = torch.randn(4, dtype=torch.float64, requires_grad=True)
    x2 = torch.randn(4, dtype=torch.float64, requires_grad=True)
    return torch.autograd.gradcheck(WeightedSum.apply, (x1, x2, 0.5, -2.0))  # floats pass through
### LEARNER
my_gradcheck = None  # a def (or lambda) that runs gradcheck on WeightedSum and returns its result
### END WORKED

# %% jupyter={"source_hidden": true}
def check_my_gradcheck() -> None:
    """Run your my_gradcheck and say ✓, or what gradcheck objected to."""
    if my_gradcheck is None:
        print("Write your call into my_gradcheck first.")
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            verdict = my_gradcheck()
        except Exception as error:  # your call's error, shown in one line
            verdict = error
    single = [str(w.message).split(".")[0] for w in caught if "double precision" in str(w.message)]
    instantiated = any("should not be instantiated" in str(w.message) for w in caught)
    if instantiated:  # gradcheck(WeightedSum, ...) calls the class: an instance, not forward
        print("✗ gradcheck called the class itself, which makes an instance (PyTorch warned "
              "that a Function should not be instantiated): pass WeightedSum.apply")
    elif single:
        print(f"✗ gradcheck warned: {single[0]}. Its finite differences need float64 inputs "
              "(see 'Check a backward with gradcheck').")
    elif verdict is True:
        print("✓ gradcheck passed on float64 inputs")
    elif isinstance(verdict, NotImplementedError):  # the stub's forward or backward
        print("✗ my_gradcheck raised NotImplementedError: WeightedSum is still the stub; "
              "write WeightedSum first")
    elif isinstance(verdict, Exception):
        first_line = (str(verdict).strip().splitlines() or [""])[0]
        print(f"✗ my_gradcheck raised {type(verdict).__name__}: {first_line}")
    elif verdict is False:  # raise_exception=False: gradcheck's verdict, as a bool
        print("✗ gradcheck returned False: it found that WeightedSum's backward disagrees with "
              "finite differences (or failed another of its checks). Leave raise_exception at "
              "True to read what it found.")
    else:
        print(f"✗ my_gradcheck returned {verdict!r}: return what gradcheck returns")


check_my_gradcheck()

# %% [markdown]
# ## Worked example: `FirstDifference`, where each input reaches two outputs
#
# $y_i = u_i + \alpha\,(v_i - v_{i-1})$ for $u$ and $v$ of shape $(n,)$ and $\alpha$ a Python
# float, with $v_{-1} = 0$. Three inputs, so backward returns three values. With
# $G$ = `grad_output` of shape $(n,)$:
#
# 1. **One entry.** $\partial y_i / \partial u_k = 1$ if $i = k$, else $0$: a diagonal. And
#    $\partial y_i / \partial v_k = \alpha$ if $i = k$, $-\alpha$ if $i = k + 1$, else $0$: $v_k$
#    is in $y_k$ and $y_{k+1}$. That Jacobian is a band, neither a diagonal nor full.
# 2. **The sum over outputs.** $\partial L / \partial u_k = G_k$, and
#    $\partial L / \partial v_k = \sum_i G_i\, \partial y_i / \partial v_k
#    = \alpha\,(G_k - G_{k+1})$, with $G_n = 0$ past the end. Forward subtracts the entry before;
#    backward subtracts the entry after.
# 3. **Shapes.** Both results have shape $(n,)$. $G_{k+1}$ is $G$ moved one place up, a zero
#    appended: `torch.cat` of `G[1:]` and one zero.
# 4. **What to save.** No tensor: no entry depends on $u$ or $v$.
#
# Backward tests `ctx.needs_input_grad` before each gradient; `y.grad_fn` is the `ctx` it
# received.

# %%
class FirstDifference(torch.autograd.Function):
    """y[i] = u[i] + alpha * (v[i] - v[i - 1]), v[-1] taken as 0, for u and v of shape (n,),
    alpha a float."""

    @staticmethod
    def forward(ctx, u, v, alpha):
        ctx.alpha = alpha  # a float: a plain attribute is fine
        previous = torch.cat([v.new_zeros(1), v[:-1]])  # v[i - 1], a zero first
        return u + alpha * (v - previous)

    @staticmethod
    def backward(ctx, grad_output):
        grad_u = grad_v = None
        if ctx.needs_input_grad[0]:
            grad_u = grad_output  # the diagonal of ones passes G through
        if ctx.needs_input_grad[1]:  # alpha * (G[k] - G[k + 1]), with G[n] taken as 0
            following = torch.cat([grad_output[1:], grad_output.new_zeros(1)])
            grad_v = ctx.alpha * (grad_output - following)
        return grad_u, grad_v, None  # None for alpha, which is not a tensor


u = torch.randn(3, dtype=torch.float64, requires_grad=True)
v = torch.randn(3, dtype=torch.float64)  # no gradient wanted
y = FirstDifference.apply(u, v, 2.0)
y.sum().backward()
print("needs_input_grad =", y.grad_fn.needs_input_grad, " (y.grad_fn is the ctx backward saw)")
v.requires_grad_()
FirstDifference.apply(u, v, 2.0).sum().backward()
print("v.grad =", v.grad, " (2 * (G[k] - G[k + 1]), G all ones and G[3] = 0)")
print("gradcheck:", passes_gradcheck(lambda u, v: FirstDifference.apply(u, v, 2.0), u, v))

# %% [markdown]
# With $G$ all ones only $\alpha v_2$ is left of $v$ in the sum. Below, the Jacobian our backward
# implies, beside autograd's: the diagonal of ones for $u$, the band for $v$. Backward built
# neither.

# %%
jacobian_view(FirstDifference,
              lambda u, v, alpha: u + alpha * torch.diff(v, prepend=v.new_zeros(1)),
              u.detach(), v.detach(), 2.0)

# %% [markdown]
# ## ✎ Transfer exercise · `Outer`
#
# Now alone: no worked example for this one. Write `Outer`, with `Outer.apply(u, v)` returning
# `torch.outer(u, v)`, the $(m, n)$ table $y_{ij} = u_i v_j$ for `u` of shape $(m,)$ and `v` of
# shape $(n,)$.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this exercise's
# own contract:
#
# - the value and both gradients autograd gives `torch.outer(u, v)`, for any $m$ and $n$, $0$
#   included;
# - forward saves no memory it allocated;
# - backward does no work for a gradient nobody needs.
#
# Rules 2 (`None` where none is needed) and 3 (backward is yours) of the
# [contract](function_contract.md) show here.
#
# Use the method of `Norm` and `FirstDifference`; this time the output has two indices.
#
# <details><summary><b>Hint 1</b> (a question)</summary>
#
# $u_k$ appears in which entries $y_{ij}$? What is $\partial y_{ij} / \partial u_k$ there?
# </details>
#
# **Check your step 1 live.** Write the entry $\partial y_{ij} / \partial u_k$ as a
# `lambda i, j, k, u, v: ...` that returns a number: $0$ where $y_{ij}$ does not depend on
# $u_k$. Then run the cell after it. It compares your entries with autograd's Jacobian of
# `torch.outer`.

# %%
### BEGIN WORKED
dy_du = lambda i, j, k, u, v: v[j] if i == k else 0.0  # y[i, j] = u[i] v[j]: u[k] in row k
### LEARNER
dy_du = None  # your step 1: lambda i, j, k, u, v: ... (the entry dy[i, j]/du[k])
### END WORKED

# %% jupyter={"source_hidden": true}
def check_dy_du() -> None:
    """Your dy_du, entry by entry, against autograd's Jacobian of torch.outer."""
    if dy_du is None:
        print("Write your step 1 into dy_du first.")
        return
    u0 = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    v0 = torch.tensor([3.0, 1.0], dtype=torch.float64)
    jacobian = torch.autograd.functional.jacobian(lambda u: torch.outer(u, v0), u0)  # [i, j, k]
    entries = [(i, j, k) for i in range(3) for j in range(2) for k in range(3)]
    try:
        yours = {entry: float(dy_du(*entry, u0, v0)) for entry in entries}
    except Exception as error:  # an error in your lambda, shown in one line
        print(f"✗ dy_du raised {type(error).__name__}: {error}. Return one number, "
              "the entry at this (i, j, k).")
    else:
        wrong = [entry for entry in entries
                 if abs(yours[entry] - jacobian[entry].item()) > 1e-12]
        if not wrong:
            print(f"✓ all {len(entries)} entries (i, j, k) match autograd's Jacobian")
        else:
            print(f"✗ {len(wrong)} of {len(entries)} entries differ. The first at (i, j, k) = "
                  f"{wrong[0]}, where you give {yours[wrong[0]] + 0.0:g}: which u_k does "
                  "y[i, j] contain, and what multiplies it?")  # + 0.0: -0.0 printed as 0


check_dy_du()

# %% [markdown]
# <details><summary><b>Hint 2</b> (the sum: questions)</summary>
#
# In $\sum_{i,j} G_{ij}\, \partial y_{ij}/\partial u_k$, which $i$ survive, and over which index
# is there still a sum? Then the same questions for $v_k$: which index of $G$ is summed now?
# </details>
#
# <details><summary><b>Hint 3</b> (numbers to hit)</summary>
#
# At `u = [1.0, -2.0, 0.5]`, `v = [3.0, 1.0]` and
# `grad_output = [[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]`, your backward returns
# `[3.0, 2.0, 4.0]` for `u` and `[1.5, -3.5]` for `v`.
# </details>

# %% nbgrader={"grade_id": "answer_Outer", "solution": true}
class Outer(torch.autograd.Function):
    """y[i, j] = u[i] * v[j], for u of shape (m,) and v of shape (n,)."""

    @staticmethod
    def forward(ctx, u, v):
        ### BEGIN SOLUTION
        ctx.save_for_backward(u, v)
        return u[:, None] * v[None, :]  # (m, 1) * (1, n) -> (m, n)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        u, v = ctx.saved_tensors
        grad_u = grad_output @ v if ctx.needs_input_grad[0] else None  # (m, n) @ (n,) -> (m,)
        grad_v = u @ grad_output if ctx.needs_input_grad[1] else None  # (m,) @ (m, n) -> (n,)
        return grad_u, grad_v
        ### END SOLUTION


# %% nbgrader={"grade_id": "Outer", "grade": true, "points": 2}
self_check("Outer", Outer)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("Outer", Outer)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# $$\frac{\partial L}{\partial u_k} = \sum_j G_{kj}\, v_j, \qquad
#   \frac{\partial L}{\partial v_k} = \sum_i G_{ik}\, u_i :$$
#
# $v$ multiplies $G$ from the right and $u$ from the left, two matrix-vector products, each of
# the shape of its input. `u`'s gradient reads `v` and `v`'s reads `u`: forward saves those
# inputs, not the output.
# </details>
#
# Your `Outer`'s Jacobian, from your backward, beside autograd's of `torch.outer`: compare its
# pattern with `FirstDifference`'s band (the self-check above is the verdict).

# %%
jacobian_view(Outer, torch.outer, torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64),
              torch.tensor([3.0, 1.0], dtype=torch.float64))

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | a backward that leaves out `grad_output` | right only after `.sum()` | weight each derivative by its entry of `grad_output` |
# | a Jacobian built as a matrix (`torch.diag`) | memory quadratic in the size (rule 3) | the vector-Jacobian product |
# | saving `y = x ** 2` for `Square` | the sign of `x` is lost | save `x` |
# | `ctx.x = x` | a silently wrong gradient after an in-place change to `x`; saved-tensor hooks skip it (rule 4) | `ctx.save_for_backward(x)` |
# | `Square.x = x` or a global | a second call overwrites it before the first one's backward (rule 4) | `ctx.save_for_backward(x)` |
# | a gradient for a float, or too few values | `RuntimeError` (rule 2) | one value per input, `None` for a float |
# | `grad_output *= ...` in backward | another branch reads the changed `grad_output` (rule 5) | a new tensor: `grad_output * ...` |
# | `.view(-1)` or `.squeeze()` | fails on a transposed input or a dimension of size 1 (rule 1) | `.reshape`, element-wise operations |

# %% [markdown]
# ## Summary
#
# A `Function` is a pair of static methods joined by `ctx`. `backward` receives
# `grad_output` and returns one gradient (or `None`) per forward input: the vector-Jacobian
# product, derived one index at a time, never built as a matrix. `gradcheck` in float64 is
# your first test: `torch.autograd.gradcheck(MyFunction.apply, (x,))` with `x` a float64
# tensor that requires grad; non-tensor arguments go in the tuple as they are (or fix them
# with a `lambda`, as for `FirstDifference`). Next lesson: which tensors to save, and a
# sigmoid that stays finite at $x = \pm 800$.

# %% [markdown]
# ---
# ## Optional: beyond the main line (not graded)
#
# The main line ends with the summary above; nothing below is needed for an exercise.

# %% [markdown]
# ### Is autograd recording inside `forward`?
#
# **Predict, then run.** `NormReports` is `Norm` with a forward that first notes on `ctx` what
# `torch.is_grad_enabled()` returns there, and the `grad_fn` of `x.square()`. Inside `forward`,
# is grad mode on (`True` or `False`)? Does `x.square()` get a `grad_fn` (`True` if it does)?

# %%
### BEGIN WORKED
predicted_forward = {"grad mode on inside forward": False,
                     "x.square() recorded inside forward": False}
### LEARNER
predicted_forward = {
    "grad mode on inside forward": None, "x.square() recorded inside forward": None
}
### END WORKED


# %%
class NormReports(Norm):
    """Norm, noting on ctx what autograd does while its forward runs."""

    @staticmethod
    def forward(ctx, x):
        ctx.grad_enabled = torch.is_grad_enabled()
        ctx.square_grad_fn = x.square().grad_fn
        return Norm.forward(ctx, x)  # a plain call, same ctx: NormReports.apply links


x = torch.tensor([[3.0, 4.0]], requires_grad=True)
y = NormReports.apply(x)
compare_all(predicted_forward, {
    "grad mode on inside forward": y.grad_fn.grad_enabled,
    "x.square() recorded inside forward": y.grad_fn.square_grad_fn is not None
})  # y.grad_fn is the ctx

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `False`, `False`. `apply` turns grad mode off while `forward` runs, and back to what it was
# after it. So `x.square()`, `.sum()` and `.sqrt()` leave no node behind. `apply` records one
# node for the whole Function: `y.grad_fn` is a `NormReportsBackward`. (Rule 6 of the contract
# asks the same of your own code: leave the caller's grad mode as it was.)
# </details>

# %% [markdown]
# ### `needs_input_grad`: set when forward runs
#
# **Predict, then run.** `FirstDifference` again, with `u` and `v` both requiring grad, but
# we ask `torch.autograd.grad` for the gradient of `u` alone. What will
# `ctx.needs_input_grad` hold in that backward? Write the tuple you expect.

# %%
### BEGIN WORKED
predicted_first_difference = {"needs_input_grad": (True, True, False)}
### LEARNER
predicted_first_difference = {"needs_input_grad": None}  # e.g. (True, False, False)
### END WORKED

# %%
u_both = torch.randn(3, dtype=torch.float64, requires_grad=True)
v_both = torch.randn(3, dtype=torch.float64, requires_grad=True)
y = FirstDifference.apply(u_both, v_both, 2.0)
grad_u, = torch.autograd.grad(y.sum(), [u_both])
compare_all(predicted_first_difference, {
    "needs_input_grad": y.grad_fn.needs_input_grad
})  # y.grad_fn is ctx

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `(True, True, False)`. `needs_input_grad` records which inputs required grad **when forward
# ran**, not which gradients this backward call will deliver: backward computes `grad_v`,
# and autograd discards it. So `needs_input_grad` saves the work for inputs that need no
# gradient at all (data, frozen weights), which is where it counts.
# </details>

# %% [markdown]
# ### Look inside: what `Norm`'s forward saved
#
# `inspect_saved` runs `Norm.forward` once and lists what went through `save_for_backward`:
# two tensors, the input `x` and the output `y`. Neither is a copy: `x` is the caller's own
# tensor and `y` the result it receives; saving them keeps them alive until backward. Untick
# `x.requires_grad`: autograd then records nothing, and forward's `ctx` is thrown away.

# %%
inspect_saved(Norm, torch.tensor([[3.0, 4.0], [1.0, -1.0]]))

# %% [markdown]
# ### Watch the gradient flow back
#
# The graph autograd built for `(Norm.apply(x) * w).sum()`: your Function is one node among
# PyTorch's own. Press **next ▶** to run backward one node at a time. `MulBackward0` sends
# `grad_output * w` to `Norm`, whose backward spreads each row's number over the row, in
# proportion to $x_j / y$, on its way to `x.grad`.

# %%
x = torch.tensor([[3.0, 4.0], [1.0, -1.0]], requires_grad=True)
w = torch.tensor([2.0, -1.0], requires_grad=True)
backward_flow((Norm.apply(x) * w).sum(), names={"x": x, "w": w})

# %% [markdown]
# ### `Norm` along a line
#
# Along the line $x = (t, 1)$, the norm $\sqrt{t^2 + 1}$ and the first entry of the gradient
# `Norm`'s backward computes, against autograd's own derivative of the composed formula
# (computed without our Function). The two curves should coincide.

# %%
ts = torch.linspace(-3, 3, 101)
points = torch.stack([ts, torch.ones_like(ts)], dim=-1).requires_grad_()  # (101, 2)
Norm.apply(points).sum().backward()
ours = points.grad[:, 0].clone()

plain = points.detach().requires_grad_()
plain.square().sum(dim=-1).sqrt().sum().backward()

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(ts, Norm.apply(points).detach(), label=r"forward: $\sqrt{t^2 + 1}$")
ax.plot(ts, ours, lw=3, alpha=0.6, label=r"our backward: $\partial y / \partial x_0$")
ax.plot(ts, plain.grad[:, 0], "k--", lw=1, label="autograd's derivative")
ax.set_xlabel("t")
ax.legend()
ax.set_title("Norm along x = (t, 1): forward and gradient")
plt.show()

# %% [markdown]
# ### When a gradient's shape differs from its input's
#
# Backward should return a gradient of its input's shape. What does autograd do with one
# of another shape? **Predict, then run.** `GradientOfShape` returns ones of a chosen shape.
# For an input of shape $(3,)$ given a gradient of shape $(2, 3)$, and an input of shape
# $(2, 3)$ given a gradient of shape $(1, 3)$: does backward raise? Write `True` (raises) or
# `False` for each into the next cell.

# %%
### BEGIN WORKED
predicted_gradient_shapes = {"(3,) given a (2, 3) gradient raises": False,
                             "(2, 3) given a (1, 3) gradient raises": True}
### LEARNER
predicted_gradient_shapes = {
    "(3,) given a (2, 3) gradient raises": None,
    "(2, 3) given a (1, 3) gradient raises": None
}
### END WORKED


# %%
class GradientOfShape(torch.autograd.Function):
    """Identity forward; backward returns ones of a chosen shape."""

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = shape
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return torch.ones(ctx.shape), None


actual, seen = {}, []
for input_shape, grad_shape in [((3,), (2, 3)), ((2, 3), (1, 3))]:
    x = torch.ones(input_shape, requires_grad=True)
    try:
        GradientOfShape.apply(x, grad_shape).sum().backward()
        seen.append(f"input {input_shape}, gradient {grad_shape}: x.grad = {x.grad.tolist()}")
        raised = False
    except RuntimeError as error:
        seen.append(f"input {input_shape}, gradient {grad_shape}: error: "
                    + str(error).splitlines()[0])
        raised = True
    actual[f"{input_shape} given a {grad_shape} gradient raises"] = raised
if written(predicted_gradient_shapes):  # what happened, once your two answers are written
    print("\n".join(seen))
compare_all(predicted_gradient_shapes, actual)

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Only the second raises. The engine's rule: if the input's shape **broadcasts** to the gradient's
# shape, autograd sums the gradient down to the input's shape for you, so $(2, 3)$ becomes $(3,)$
# with every entry $2$. Any other shape is an error: $(2, 3)$ does not broadcast to $(1, 3)$.
# Rule 2 of the [Function contract](function_contract.md) accepts such a gradient, and the checks
# do too (lesson 03 relies on it; lesson 09 shows the sum). The input's own shape is still the
# clearer habit: the reader sees the sum.
# </details>

# %% [markdown]
# ### Calling `save_for_backward` twice
#
# **Predict, then run.** `SavesTwice` computes $y = a\,b$. Its forward calls
# `save_for_backward` once for each tensor; its backward expects to find `(a, b)` and returns
# $b \cdot$ `grad_output` for `a` and $a \cdot$ `grad_output` for `b`. Both note
# `ctx.saved_tensors`, printed after the run. How many tensors does each hold? Is `a.grad` right? Is `b.grad`
# right? Write numbers and `True` or `False` into the next cell first.

# %%
### BEGIN WORKED
predicted_saves = {"tensors held in forward": 0, "tensors held in backward": 1,
                   "a.grad is right": True, "b.grad is right": False}
### LEARNER
predicted_saves = {
    "tensors held in forward": None, "tensors held in backward": None,
    "a.grad is right": None, "b.grad is right": None
}
### END WORKED


# %%
class SavesTwice(torch.autograd.Function):
    """y = a * b, with save_for_backward called once per tensor."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a)
        ctx.save_for_backward(b)
        ctx.seen = [ctx.saved_tensors]  # read back after backward, below
        return a * b

    @staticmethod
    def backward(ctx, grad_output):
        saved = ctx.saved_tensors
        ctx.seen.append(saved)
        first, last = saved[0], saved[-1]  # meant to be a and b
        return grad_output * last, grad_output * first


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([10.0, 20.0], requires_grad=True)
y = SavesTwice.apply(a, b)
y.sum().backward()
in_forward, in_backward = y.grad_fn.seen
if written(predicted_saves):  # what each held, once your four answers are written
    print("ctx.saved_tensors inside forward: ", in_forward)
    print("ctx.saved_tensors inside backward:", in_backward)
    print("a.grad =", a.grad, " b.grad =", b.grad)
compare_all(predicted_saves, {
    "tensors held in forward": len(in_forward),
    "tensors held in backward": len(in_backward),
    "a.grad is right": torch.equal(a.grad, b.detach()),
    "b.grad is right": torch.equal(b.grad, a.detach())
})

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Inside forward `ctx.saved_tensors` is `()`, even after two calls: it is meant for backward.
# Inside backward it holds only `b`: the second call replaced `(a,)`. So `first` and `last`
# are both `b`: `a.grad` $= b$ is right by luck, `b.grad` $= b$ should be $a$, and nothing
# warns you. (A backward that unpacks `a, b = ctx.saved_tensors` would at least raise.) Call
# `save_for_backward` once, with every tensor.
# </details>

# %% [markdown]
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **When not to write a Function.** Everything in this lesson was differentiable by autograd
# already: `x ** 2` and `torch.outer` have exact built-in backwards. Write a Function for the
# reasons at the top of this lesson, a stability fix, a gradient on purpose, memory, or code
# autograd cannot see, and otherwise compose tensor operations.
#
# **What `save_for_backward` gives besides the in-place guard.** A saved tensor is visible to
# saved-tensor hooks, through which PyTorch moves saved tensors to the CPU
# (`torch.autograd.graph.save_on_cpu`) or recomputes them (checkpointing, lesson 05), and
# with which lessons 01 and 05 measure what a graph keeps. A tensor on a plain attribute,
# `ctx.x = x`, escapes them. Keeping the **output** that way, `ctx.y = y`, costs one more
# thing: `y.grad_fn` is `ctx` itself, so `ctx` and `y` refer to each other, a reference cycle
# that keeps the graph alive until Python's cycle collector runs. (An input kept on `ctx`
# makes no such cycle: the input does not refer to your node.)
#
# **Not `x.data` either.** `ctx.save_for_backward(x.data)` goes through the right call but
# escapes the guard all the same: `x.data` shares `x`'s memory but not its version counter,
# so an in-place change to `x` before backward goes unnoticed. Save `x` itself. Try it:
# `a = torch.randn(3, requires_grad=True)`, `d = a.data`, `d.add_(1)`, then compare
# `a._version` with `d._version`.
# </details>
