# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 01 · Sigmoid and ReLU: what to save, and how to stay finite
#
# Every `Function` you write makes two decisions that autograd used to make for you:
# **which tensors to keep** for backward, and **how to compute** the forward so that
# nothing overflows. This lesson makes both decisions for two of the most common
# activations, the sigmoid and the ReLU.
#
# By the end of this lesson you can:
# 1. choose between saving a Function's input and its output, and measure what it keeps;
# 2. write a sigmoid whose values and gradients stay finite at $x = \pm 800$;
# 3. save a boolean mask, and never write into `grad_output`, the input or a saved tensor;
# 4. pass a Python number through `forward` and return `None` for it.
#
# Exercises: **✎ 1 `MySigmoid`**, **✎ 2 `MyReLU`**, **✎ 3 `ScaledSigmoid`**.

# %% nbgrader={"locked": true}
import warnings

import matplotlib.pyplot as plt
import torch
from torch.autograd.graph import saved_tensors_hooks

from autograder import self_check
from widgets import backward_flow, inspect_saved

_ = torch.manual_seed(0)
torch.set_printoptions(precision=4)

# %% [markdown]
# ## Why rewrite a sigmoid?
#
# The sigmoid $\sigma(x) = \dfrac{1}{1 + e^{-x}}$ squashes any number into $(0, 1)$. It turns
# scores into probabilities in logistic regression and opens and closes the gates of an LSTM.
# PyTorch already has `torch.sigmoid`, so why write it again? Because it is the smallest
# example of two questions every custom Function must answer:
#
# - **What does backward need, and what is the cheapest way to keep it?** Autograd keeps
#   every intermediate that any step might need. You can often keep much less.
# - **Can the formula overflow?** The textbook formula contains $e^{-x}$, which is larger
#   than the largest float64 as soon as $x < -709.8$.

# %% [markdown]
# ## The maths: the sigmoid's derivative is written in its output
#
# Differentiate $\sigma(x) = (1 + e^{-x})^{-1}$ with the chain rule:
#
# $$\sigma'(x) = \frac{e^{-x}}{(1 + e^{-x})^2}
#   = \underbrace{\frac{1}{1 + e^{-x}}}_{\sigma(x)} \cdot
#     \underbrace{\frac{e^{-x}}{1 + e^{-x}}}_{1 - \sigma(x)}
#   = \sigma(x)\,\big(1 - \sigma(x)\big).$$
#
# The sigmoid acts on each element separately, so its Jacobian is diagonal, with
# $\partial y_i / \partial x_i = y_i (1 - y_i)$ on the diagonal, where $y = \sigma(x)$.
# The vector-Jacobian product from lesson 00 is then element-wise:
#
# $$\texttt{grad\_input} = \texttt{grad\_output} \odot y \odot (1 - y).$$
#
# Backward needs **only the output $y$**. It does not need $x$ at all.

# %% [markdown]
# ## Saving the output or the input
#
# When a derivative can be written in terms of the output, you have a choice:
#
# - **save the input** $x$ and compute $f(x)$ again in backward, or
# - **save the output** $y$, which forward has computed anyway.
#
# Saving the output skips the recomputation. It can also cost no memory at all, as we are
# about to measure. Our worked example is $\tanh$, whose derivative is also written in its
# output: $\tanh'(x) = 1 - \tanh^2(x) = 1 - y^2$. Here it is both ways.

# %%
class MyTanh(torch.autograd.Function):
    """y = tanh(x), saving the output."""

    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (1 - y * y)  # d/dx tanh(x) = 1 - tanh(x)**2


class TanhSavesInput(torch.autograd.Function):
    """y = tanh(x), saving the input and computing tanh again in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.tanh(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        y = torch.tanh(x)  # a second tanh per element: the price of saving x
        return grad_output * (1 - y * y)


# %% [markdown]
# Both give the same gradient, and both pass `gradcheck`:

# %%
x = torch.randn(6, dtype=torch.float64, requires_grad=True)
print("MyTanh:        ", torch.autograd.gradcheck(MyTanh.apply, (x,)))
print("TanhSavesInput:", torch.autograd.gradcheck(TanhSavesInput.apply, (x,)))

# %% [markdown]
# They differ in what they keep. The inspector runs forward once and lists each saved
# tensor with its **role**: `MyTanh` keeps its output, `TanhSavesInput` its input.

# %%
inspect_saved(MyTanh, torch.linspace(-2, 2, 1000, dtype=torch.float64))

# %%
inspect_saved(TanhSavesInput, torch.linspace(-2, 2, 1000, dtype=torch.float64))

# %% [markdown]
# Neither is new memory on its own: the caller holds `x`, and `y` is the result. Which one
# costs more depends on what the rest of the graph keeps, so let's measure the whole graph.

# %% [markdown]
# ### Measuring what backward keeps
#
# `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` calls `pack` on **every tensor
# any node saves** for backward while the `with` block runs: yours, through
# `ctx.save_for_backward`, and those of PyTorch's built-in operations. We use it to list
# the saved tensors and add up their bytes. Saving never copies: two nodes that save the
# same tensor keep one piece of memory alive, so we count each piece of memory once.

# %%
def saved_for_backward(compute):
    """Run compute() and return (number of tensors saved, bytes of distinct memory saved)."""
    saved = []

    def pack(tensor):
        saved.append(tensor)
        return tensor

    with saved_tensors_hooks(pack, lambda tensor: tensor):
        compute()
    distinct = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved}
    return len(saved), sum(distinct.values())


def report(label, compute):
    count, nbytes = saved_for_backward(compute)
    tensors = "tensor " if count == 1 else "tensors"
    print(f"{label:<36} {count} {tensors} saved, {nbytes:>6} bytes")


# %% [markdown]
# A vector of 1000 float64 numbers takes 8000 bytes. First, $\tanh$ alone, three ways: written
# out as $\frac{e^x - e^{-x}}{e^x + e^{-x}}$ and left to autograd, then our two Functions.

# %%
x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
w = torch.randn(1000, dtype=torch.float64, requires_grad=True)

report("tanh written out, autograd", lambda: (torch.exp(x) - torch.exp(-x))
       / (torch.exp(x) + torch.exp(-x)))
report("MyTanh (saves y)", lambda: MyTanh.apply(x))
report("TanhSavesInput (saves x)", lambda: TanhSavesInput.apply(x))

# %% [markdown]
# Written out, autograd keeps six tensors, six times the memory: every exponential and the
# division's operands. Either Function keeps one.
#
# Alone, our two Functions cost the same. Now put each in front of a multiplication
# `y * w`, which must keep `y` for its own backward ($\partial (y w) / \partial w = y$):

# %%
report("MyTanh, then * w", lambda: MyTanh.apply(x) * w)
report("TanhSavesInput, then * w", lambda: TanhSavesInput.apply(x) * w)

# %% [markdown]
# Three tensors are saved both times. With `MyTanh`, two of them are the same `y`, stored
# once: 16000 bytes. With `TanhSavesInput`, `x` is extra: 24000 bytes.
#
# **Rule of thumb:** when the derivative can be written from the output, save the output.
# The next layer very often keeps it anyway, and backward does not recompute anything.

# %% [markdown]
# ## Staying finite: the overflow in $e^{-x}$
#
# The largest float64 is about $1.8 \times 10^{308} = e^{709.78}$. Beyond that, `torch.exp`
# returns `inf`. Both textbook formulas for the sigmoid meet it:
#
# - $\dfrac{1}{1 + e^{-x}}$: for $x < -709.8$, $e^{-x} = \infty$. The value $1/\infty = 0$ is
#   fine, but autograd's derivative of this composition is not. The reciprocal's backward
#   multiplies by $-1/d^2 = 0$, and `ExpBackward0` then multiplies that $0$ by the saved
#   result $e^{-x} = \infty$: $0 \cdot \infty$ is `nan`.
# - $\dfrac{e^{x}}{1 + e^{x}}$: for $x > 709.8$, the forward itself is $\infty/\infty$: `nan`.
#
# Let's look at both, with their gradients from autograd:

# %%
def value_and_gradient(formula, x):
    """formula(x) and its derivative by autograd, for an element-wise formula."""
    x = x.detach().clone().requires_grad_()
    y = formula(x)
    y.sum().backward()  # y_i depends on x_i only, so x.grad[i] = dy_i / dx_i
    return y.detach(), x.grad


naive = {
    "1 / (1 + exp(-x))": lambda x: 1 / (1 + torch.exp(-x)),
    "exp(x) / (1 + exp(x))": lambda x: torch.exp(x) / (1 + torch.exp(x)),
}
points = torch.tensor([-800.0, -710.0, 0.0, 710.0, 800.0], dtype=torch.float64)
print("x:", points)
for name, formula in naive.items():
    y, grad = value_and_gradient(formula, points)
    print(f"\n{name}\n  value:   ", y, "\n  gradient:", grad)

# %% [markdown]
# ## The fix: one formula per sign, both built from $e^{-|x|}$
#
# Let $z = e^{-|x|}$. Since $-|x| \le 0$, $z$ lies in $(0, 1]$: it **cannot** overflow.
# Use the first textbook formula where $x \ge 0$ and the second where $x < 0$: in each, the
# exponential that appears is exactly $z$.
#
# $$\sigma(x) = \begin{cases}
#   \dfrac{1}{1 + e^{-x}} = \dfrac{1}{1 + z} & x \ge 0,\\[2ex]
#   \dfrac{e^{x}}{1 + e^{x}} = \dfrac{z}{1 + z} & x < 0.
# \end{cases}$$
#
# Both denominators lie in $[1, 2]$, so nothing blows up. For very negative $x$, $z$ rounds
# to $0$ and so does $\sigma(x)$, which is the closest float64 to the true value.
#
# (Inside a Function whose backward uses $y(1 - y)$, the first textbook formula would in
# fact give finite answers, since $1/\infty = 0$. But it gets there through an $\infty$, and
# the next small edit, such as computing $1 - y$ as $e^{-x}/(1 + e^{-x})$, turns that
# $\infty$ into `nan`. Built from $z$, no intermediate is ever infinite.)
#
# Backward is safe for free: $y \in [0, 1]$, so $y(1 - y) \le \tfrac14$. One detail: for
# $x > 37$, $y$ rounds to exactly $1$ in float64 and $y(1 - y)$ gives $0$, where the true
# derivative is below $10^{-16}$. That is harmless, and `torch.sigmoid` does the same.
#
# `torch.where(condition, a, b)` picks from `a` where `condition` holds and from `b`
# elsewhere. It computes both `a` and `b` everywhere, which is fine here because both are
# finite everywhere: that is exactly what building them from $z$ buys.

# %% [markdown]
# Now the whole range $[-800, 800]$, on a log scale so that values like $10^{-300}$ are
# visible. A shaded band marks where a formula gives `nan`. A curve that simply stops has
# reached exactly $0$, which a log scale cannot draw. The dashed line is the exact
# derivative, written with $z$ as $\sigma'(x) = z / (1 + z)^2$.

# %%
xs = torch.linspace(-800, 800, 1601, dtype=torch.float64)
z = torch.exp(-xs.abs())
exact_gradient = z / (1 + z) ** 2

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
for (name, formula), colour, width in zip(naive.items(), ["tab:blue", "tab:orange"], [5, 1.5]):
    y, grad = value_and_gradient(formula, xs)
    for ax, values in [(left, y), (right, grad)]:
        ax.plot(xs, values, color=colour, lw=width, alpha=0.8, label=name)
        broken = torch.isnan(values)
        if broken.any():
            ax.axvspan(xs[broken].min(), xs[broken].max(), color=colour, alpha=0.2,
                       label=f"nan from {name}")
left.plot(xs, torch.sigmoid(xs), "k--", lw=1, label="torch.sigmoid (stable)")
right.plot(xs, exact_gradient, "k--", lw=1, label="exact derivative")
for ax, title in [(left, "value"), (right, "gradient from autograd")]:
    ax.set_yscale("log", nonpositive="mask")  # zeros are left out, not drawn
    ax.set_ylim(1e-320, 10)
    ax.set_xlabel("x")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
plt.tight_layout()
plt.show()

# %% [markdown]
# Two things to see:
#
# - Each textbook formula produces `nan` on one side, in the forward or in autograd's
#   gradient. A single `nan` in a gradient spreads: every weight it reaches becomes `nan`.
# - Before that, autograd's gradient of the first formula stops at $x \approx -372$: an
#   intermediate, $y^2$, has underflowed to $0$. (The second formula's gradient does the
#   same for $x > 37$, where two nearly equal numbers cancel; too close to $0$ to see here.)
#   A zero where the true value is $10^{-160}$ is harmless; a `nan` is not.

# %% [markdown]
# ## ✎ Exercise 1 · `MySigmoid`
#
# Write `MySigmoid`, with `MySigmoid.apply(x)` returning $\sigma(x)$.
#
# - **Forward:** compute it from $z = e^{-|x|}$ with `torch.exp` and `torch.where`, as above.
#   (`torch.sigmoid` would pass the grader, which checks values, not how you got them, but
#   then there is nothing to learn.) Values must stay finite for $|x|$ up to 800 in float64,
#   and accurate in the left tail: $\sigma(-40) \approx 4.2 \times 10^{-18}$, not $0$.
# - **Save only the output** $y$, with `ctx.save_for_backward`.
# - **Backward:** `grad_output * y * (1 - y)`.

# %% nbgrader={"grade_id": "answer_MySigmoid", "solution": true}
class MySigmoid(torch.autograd.Function):
    """y = 1 / (1 + exp(-x)), computed without overflow."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        z = torch.exp(-x.abs())  # in (0, 1]: never overflows
        y = torch.where(x >= 0, 1 / (1 + z), z / (1 + z))
        ctx.save_for_backward(y)
        return y
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        y, = ctx.saved_tensors
        return grad_output * y * (1 - y)  # d/dx sigmoid(x) = y (1 - y)
        ### END SOLUTION


# %% nbgrader={"grade_id": "MySigmoid", "grade": true, "points": 2}
self_check("MySigmoid", MySigmoid)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MySigmoid", MySigmoid)
### END HIDDEN TESTS

# %% [markdown]
# Your sigmoid at the points where the textbook formulas broke, and what it keeps for
# backward compared with the first textbook formula left to autograd:

# %%
y, grad = value_and_gradient(MySigmoid.apply, points)
print("x:       ", points)
print("value:   ", y)
print("gradient:", grad)
print("all finite:", bool(torch.isfinite(y).all() and torch.isfinite(grad).all()))

x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
report("1 / (1 + exp(-x)), autograd", lambda: 1 / (1 + torch.exp(-x)))
report("MySigmoid (saves y)", lambda: MySigmoid.apply(x))

# %% [markdown]
# The inspector on your `MySigmoid`: one saved tensor, with role `output`. If it says `input`
# or `intermediate`, or warns about a tensor on `ctx`, revisit what your forward saves.

# %%
inspect_saved(MySigmoid, torch.linspace(-800, 800, 1000, dtype=torch.float64))

# %% [markdown]
# ## Masks: the ReLU
#
# $\mathrm{relu}(x) = \max(x, 0)$ has derivative $1$ where $x > 0$ and $0$ where $x < 0$.
# At $x = 0$ it has no derivative; PyTorch uses $0$ there, and so will we. The Jacobian
# is diagonal with zeros and ones on the diagonal, so
#
# $$\texttt{grad\_input} = \texttt{grad\_output} \odot \mathbb{1}[x > 0].$$
#
# Backward does not need the values of $x$, only **which entries were positive**. A boolean
# tensor `x > 0` holds exactly that, in 1 byte per element instead of 4 (float32) or 8
# (float64). A boolean mask is a new tensor, neither input nor output, but that is fine: no
# gradient ever flows through a mask, so double backward (lesson 04) is not affected.

# %% [markdown]
# ### Worked example: `HardClip`
#
# $y = \mathrm{clamp}(x, -1, 1)$ passes $x$ through inside $(-1, 1)$ and is flat outside, so
# its derivative is $\mathbb{1}[\,|x| < 1\,]$. At $x = \pm 1$ there is no derivative, and
# the value used there is a convention: `HardClip` uses $0$ (lesson 03 shows that PyTorch's
# own ops disagree on it). Forward saves that mask.

# %%
class HardClip(torch.autograd.Function):
    """y = clamp(x, -1, 1)."""

    @staticmethod
    def forward(ctx, x):
        inside = x.abs() < 1  # bool: 1 byte per element
        ctx.save_for_backward(inside)
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad_output):
        inside, = ctx.saved_tensors
        return grad_output * inside  # a new tensor; grad_output is left alone


x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
HardClip.apply(x).sum().backward()
print("x.grad =", x.grad)

x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
report("HardClip (saves a bool mask)", lambda: HardClip.apply(x))

# %% [markdown]
# 1000 bytes for 1000 elements, where saving `x` would have cost 8000.

# %% [markdown]
# ## Never write into `grad_output`
#
# It is tempting to zero the masked entries of `grad_output` in place and return it. Don't:
# `grad_output` does not belong to you.
#
# - Autograd may pass **the same tensor** to other nodes, or it may be the caller's own
#   tensor (the one given to `y.backward(g)`).
# - It may be an **expanded view** in which every element is one memory location. The
#   backward of `.sum()` does exactly that: it expands a single `1`. Writing one element then
#   writes all of them.
#
# Here is `HardClip` done the wrong way:

# %%
class HardClipInPlace(torch.autograd.Function):
    """clamp(x, -1, 1) with a broken backward that writes into grad_output."""

    @staticmethod
    def forward(ctx, x):
        inside = x.abs() < 1
        ctx.save_for_backward(inside)
        return x.clamp(-1, 1)

    @staticmethod
    def backward(ctx, grad_output):
        inside, = ctx.saved_tensors
        grad_output[~inside] = 0  # WRONG: writes into a tensor autograd owns
        return grad_output


x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # PyTorch warns about writing into an expanded tensor
    HardClipInPlace.apply(x).sum().backward()
print("after .sum():    x.grad =", x.grad, " (should be [0, 1, 1, 0])")

x = torch.tensor([-2.0, -0.5, 0.5, 2.0], requires_grad=True)
g = torch.ones(4)
HardClipInPlace.apply(x).backward(g)
print("after .backward(g):   g =", g, " (the caller's tensor, changed)")

# %% [markdown]
# After `.sum()` the gradient is zero **everywhere**, with no error: writing a zero into one
# element wrote it into the single memory location all four share. The fix is the one
# `HardClip` uses: build a new tensor, `grad_output * mask`. (If you really want to write
# into something, write into `grad_output.clone()`.)

# %% [markdown]
# ## Saved tensors go through `save_for_backward`, even masks
#
# Autograd gives every tensor a **version counter** that goes up each time the tensor is
# changed in place. `save_for_backward` records the version, and backward refuses to run if
# a saved tensor has changed since, because the gradient would be silently wrong. A tensor
# kept as a plain attribute, `ctx.y = y`, skips that check. It also escapes saved-tensor hooks,
# the mechanism behind `report` above and behind lesson 05's memory tricks, and for an output
# it makes a reference cycle between the output and its own
# graph node, which keeps memory alive until Python's cycle collector runs. (Double backward
# still works for an input or an output kept this way; lesson 04 shows what does break it.)
#
# Let's change the output of `tanh` in place before backward, once with `MyTanh`, once with
# a copy that keeps `y` as an attribute:

# %%
class TanhOnCtx(torch.autograd.Function):
    """tanh with a broken forward that keeps its output as a ctx attribute."""

    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.y = y  # WRONG: tensors go through ctx.save_for_backward
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (1 - ctx.y * ctx.y)


for function in (MyTanh, TanhOnCtx):
    x = torch.tensor([0.0, 0.5, 1.0], requires_grad=True)
    y = function.apply(x)
    y.add_(1)  # someone changes y in place before backward
    try:
        y.sum().backward()
        print(f"{function.__name__:<10} x.grad = {x.grad}")
    except RuntimeError as error:
        print(f"{function.__name__:<10} RuntimeError: {str(error)[:70]}...")
print("true gradient     ", 1 - torch.tanh(x.detach()) ** 2)

x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
report("TanhOnCtx (y kept as ctx.y)", lambda: TanhOnCtx.apply(x))  # the hooks never see y

# %% [markdown]
# `MyTanh` refuses to run. `TanhOnCtx` returns a wrong gradient, even of the wrong sign,
# without a word. And `report`, which counts through saved-tensor hooks, finds nothing saved,
# although `TanhOnCtx` keeps 8000 bytes alive.
#
# The rule for `ctx` is short: **tensors through `ctx.save_for_backward`, everything else
# (numbers, shapes, flags) as attributes.** That holds for masks too: `ctx.mask = mask` is
# the same mistake as `ctx.y = y`.

# %% [markdown]
# ## ✎ Exercise 2 · `MyReLU`
#
# Write `MyReLU`, with `MyReLU.apply(x)` returning $\max(x, 0)$ and a gradient of $0$
# at $x \le 0$.
#
# - Save what backward needs (a boolean mask is enough) with `ctx.save_for_backward`.
# - Never modify `grad_output` or `x` in place: return a new tensor.

# %% nbgrader={"grade_id": "answer_MyReLU", "solution": true}
class MyReLU(torch.autograd.Function):
    """y = max(x, 0)."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        positive = x > 0  # bool mask: all backward needs
        ctx.save_for_backward(positive)
        return x.clamp(min=0)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        positive, = ctx.saved_tensors
        return grad_output * positive  # d/dx relu(x) = 1[x > 0]
        ### END SOLUTION


# %% nbgrader={"grade_id": "MyReLU", "grade": true, "points": 1}
self_check("MyReLU", MyReLU)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("MyReLU", MyReLU)
### END HIDDEN TESTS

# %% [markdown]
# Your two Functions in one small neuron, $\sigma(\mathrm{relu}(w \odot x) + b)$, and its
# backward one node at a time. Step to `MyReLU.backward`: where $w \odot x \le 0$ its mask
# sends a zero on, so the same entries of `x.grad` and `w.grad` end up zero.

# %%
x = torch.tensor([1.0, -2.0, 0.5, 3.0], requires_grad=True)
w = torch.tensor([0.5, 1.0, -1.0, 2.0], requires_grad=True)
b = torch.tensor([0.1, 0.1, 0.1, 0.1], requires_grad=True)
neuron = MySigmoid.apply(MyReLU.apply(w * x) + b).sum()
backward_flow(neuron, names={"x": x, "w": w, "b": b})

# %% [markdown]
# ## A Python number as a second input: the scaled sigmoid
#
# Now combine both ideas with an input that is not a tensor:
# $y = s\,\sigma(x)$, where the scale $s$ is a Python float. By the chain rule
#
# $$\frac{\partial y}{\partial x} = s\,\sigma(x)\,\big(1 - \sigma(x)\big),$$
#
# and $s$ gets no gradient, so backward returns `None` in its place.
#
# What should forward save this time? The output is $y = s\,\sigma(x)$, so
# $\sigma(x) = y / s$, which is $0/0$ when $s = 0$. Here the output does **not** carry what
# backward needs. Two choices remain:
#
# - **save the input $x$** and compute $\sigma(x)$ again in backward: one more exponential
#   per element, always correct;
# - **save $\sigma(x)$**, a new float tensor: enough for first derivatives, but lesson 04
#   shows that a saved intermediate gives wrong second derivatives.
#
# Prefer the first. The scale itself is a float, so it goes on `ctx` as a plain attribute.

# %% [markdown]
# ## ✎ Exercise 3 · `ScaledSigmoid`
#
# Write `ScaledSigmoid`, with `ScaledSigmoid.apply(x, scale)` returning `scale * sigmoid(x)`,
# where `scale` is a Python float that may be negative **or zero**. You may use
# `torch.sigmoid` here (it is stable too): this exercise is about the extra input. Return
# one gradient per input.

# %% nbgrader={"grade_id": "answer_ScaledSigmoid", "solution": true}
class ScaledSigmoid(torch.autograd.Function):
    """y = scale * sigmoid(x), with scale a Python float."""

    @staticmethod
    def forward(ctx, x, scale):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)  # y / scale would fail for scale = 0
        ctx.scale = scale  # a float: a plain attribute
        return scale * torch.sigmoid(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * ctx.scale * s * (1 - s), None  # None for scale
        ### END SOLUTION


# %% nbgrader={"grade_id": "ScaledSigmoid", "grade": true, "points": 2}
self_check("ScaledSigmoid", ScaledSigmoid)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ScaledSigmoid", ScaledSigmoid)
### END HIDDEN TESTS

# %% [markdown]
# A last look: your `ScaledSigmoid` and the gradient its backward returns, for a few scales.
# The scale stretches the curve and its slope by the same factor; at $s = 0$ both are flat.

# %%
xs = torch.linspace(-6, 6, 121, dtype=torch.float64)
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.2))
for scale in (2.5, 1.0, 0.0, -1.0):
    y, grad = value_and_gradient(lambda x: ScaledSigmoid.apply(x, scale), xs)
    left.plot(xs, y, label=f"scale = {scale}")
    right.plot(xs, grad, label=f"scale = {scale}")
left.set_title("ScaledSigmoid.apply(x, scale)")
right.set_title("its gradient, from your backward")
for ax in (left, right):
    ax.set_xlabel("x")
    ax.axhline(0, color="grey", lw=0.5)
left.legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `torch.exp(x) / (1 + torch.exp(x))` in forward | `nan` values for $x > 709.8$ in float64 ($x > 88.7$ in float32) | build both branches from `torch.exp(-x.abs())` |
# | `1 / (1 + torch.exp(-x))` left to autograd | `nan` gradients for $x < -709.8$ | a Function with a backward written from `y` |
# | saving `x` for the sigmoid | a second exponential in backward; more memory when the next layer keeps `y` | save `y`, use `y * (1 - y)` |
# | `grad_output[~mask] = 0; return grad_output` | other gradients change silently; after `.sum()` the whole gradient is zero | `return grad_output * mask` |
# | `x.clamp_(min=0)` in forward | the caller's tensor is changed | `x.clamp(min=0)` |
# | `ctx.mask = mask` or `ctx.y = y` | in-place changes go unnoticed; saved-tensor hooks miss it; for `y`, a reference cycle | `ctx.save_for_backward(mask)` |
# | recovering $\sigma(x)$ as `y / scale` | `nan` for `scale = 0` | save `x` and recompute |
# | returning one gradient from `ScaledSigmoid.backward` | `RuntimeError: returned an incorrect number of gradients` | `return grad_x, None` |
#
# **Where popular write-ups go wrong.**
#
# - One widely read guide states the `ctx` rule correctly (tensors only through
#   `save_for_backward`) and then, in two of its own examples, stores a mask as
#   `ctx.mask = mask`. The rule is right; the examples are not, for the reasons measured
#   above.
# - ReLU backwards that zero `grad_output[x < 0]` in place and return it are easy to find
#   online. They pass a quick test with `torch.ones` as the gradient and fail inside real
#   graphs, as `HardClipInPlace` showed. PyTorch's own tutorial clones `grad_output`
#   first, which is correct; multiplying by the mask does the same in one step.
#
# ## Summary
#
# Save the output when the derivative is written in it (sigmoid, tanh), save a boolean mask
# when backward only needs to know *where* (ReLU, clamp), and save the input when the output
# cannot give back what backward needs (a scale of zero). Always through
# `ctx.save_for_backward`; never write into `grad_output`, your inputs or saved tensors.
# Build forward formulas from pieces that cannot overflow, such as $e^{-|x|}$.
# Next lesson: a linear layer, where gradients become matrix products.
