# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 03 · Straight-through estimators
#
# Rounding a weight to 4 bits, binarising an activation to ±1, thresholding a spike, picking
# the argmax of a distribution: all of these are **piecewise constant**. Their derivative is
# zero almost everywhere, so backpropagation through them delivers nothing but zeros and every
# parameter before them stops learning.
#
# A **straight-through estimator** (STE) keeps the forward exactly as it is and, in backward,
# replaces the useless true derivative with a *surrogate*: most simply the identity, as if the
# quantiser were not there. That is a deliberate lie to autograd, and `torch.autograd.Function`
# is the place to tell it.
#
# By the end of this lesson you can:
# 1. say why the true gradient of a quantiser cannot train anything before it;
# 2. write straight-through estimators as Functions, plain and clipped;
# 3. explain why `gradcheck` rejects a correct STE, and test one properly instead;
# 4. train a binarised network that learns with an STE and does not learn without one.
#
# Exercises are marked **✎ Exercise**. Each has a self-check cell; the hidden tests check
# more (more shapes, float32 and float64, a GPU when there is one).

# %% nbgrader={"locked": true}
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch.autograd.gradcheck import GradcheckError

from autograder import self_check
from widgets import ste_explorer

_ = torch.manual_seed(0)
torch.set_num_threads(1)  # tiny tensors: one thread is fastest, and results do not vary with it

# %% [markdown]
# ## The problem: a gradient of zeros
#
# Ask autograd for the gradient of `sign` and `round` and you get exactly what the maths says:

# %%
x = torch.tensor([-1.7, -0.2, 0.0, 0.4, 2.5], requires_grad=True)
torch.sign(x).sum().backward()
print("d sign/dx  =", x.grad)

x.grad = None
torch.round(x).sum().backward()
print("d round/dx =", x.grad)

# %% [markdown]
# Zero everywhere, including at the jumps, where the true derivative does not even exist and
# PyTorch reports 0. Put either function in a network and every weight upstream of it receives
# a gradient of exactly zero: gradient descent cannot move it.

# %% [markdown]
# ## The maths: swap the derivative, keep the forward
#
# Let $q$ be a quantiser and $y = q(x)$. The chain rule gives
#
# $$\frac{\partial L}{\partial x} = \frac{\partial L}{\partial y}\; q'(x),
#   \qquad q'(x) = 0 \text{ wherever it exists.}$$
#
# A straight-through estimator keeps $y = q(x)$ in forward and uses a surrogate $g(x)$ in
# place of $q'(x)$ in backward:
#
# | estimator | forward | surrogate $g(x)$ | `backward` returns |
# |---|---|---|---|
# | identity STE | $\operatorname{sign}(x)$ or $\operatorname{round}(x)$ | $1$ | `grad_output` |
# | clipped STE | $\operatorname{sign}(x)$ | $\mathbb{1}[\lvert x\rvert \le 1]$ | `grad_output * (x.abs() <= 1)` |
#
# Away from $|x| = 1$, the clipped surrogate is the derivative of
# $\operatorname{hardtanh}(x) = \min(\max(x, -1), 1)$, a function that equals
# $\operatorname{sign}(x)$ wherever $|x| \ge 1$: backward pretends the forward was hardtanh.
# It also stops the gradient where $|x| > 1$, where nudging $x$ cannot change the sign any
# more. The name and the identity version go back to Hinton's 2012 lectures
# and Bengio, Léonard and Courville (2013); binarized neural networks (Hubara, Courbariaux et
# al., 2016) popularised the clipped one.
#
# The result is **not** the gradient of the loss. It is an estimate that points in a useful
# direction often enough for training to work, which is why you will test it differently
# below.

# %% [markdown]
# **The boundary is a convention.** At $|x| = 1$ hardtanh has a corner and no derivative, so
# any value there is a choice, and PyTorch's own ops choose differently: `F.hardtanh`
# returns 0 at $\pm 1$, while `torch.clamp(x, -1, 1)`, the same function, returns 1.

# %%
x = torch.tensor([-1.5, -1.0, 0.0, 1.0, 1.5], requires_grad=True)
F.hardtanh(x).sum().backward()
print("x                     :", x.detach())
print("d hardtanh(x)/dx      :", x.grad)
x.grad = None
torch.clamp(x, -1, 1).sum().backward()
print("d clamp(x, -1, 1)/dx  :", x.grad)

# %% [markdown]
# Lesson 01's `HardClip` used hardtanh's convention, $\mathbb{1}[\,|x| < 1\,]$. The clipped
# STE in this lesson uses clamp's, $\mathbb{1}[\,|x| \le 1\,]$, which lets the gradient pass
# at the boundary, and the exercise asks for exactly that. Neither is more correct; a
# boundary convention only has to be stated and tested.

# %%
xs = torch.linspace(-2.5, 2.5, 501)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.2), sharey=True)
for ax, (name, forward) in zip(axes, [("sign", torch.sign), ("round", torch.round)]):
    ax.plot(xs, forward(xs), lw=2, label=f"forward: {name}(x)")
    ax.plot(xs, torch.zeros_like(xs), "k--", lw=1, label="true derivative: 0")
    ax.plot(xs, torch.ones_like(xs), lw=3, alpha=0.5, label="identity surrogate: 1")
    if name == "sign":
        ax.plot(xs, (xs.abs() <= 1).float(), ":", lw=2, label="clipped surrogate: |x| ≤ 1")
    ax.set_title(f"{name}: forward and surrogate gradients")
    ax.set_xlabel("x")
    ax.legend(fontsize=8, loc="upper left")
plt.show()

# %% [markdown]
# ## Worked example: a spike with a smooth surrogate
#
# Spiking neural networks fire when a membrane potential crosses a threshold: a Heaviside step
# $H(x) = \mathbb{1}[x > 0]$. They are trained with a surrogate that looks like a bump around
# the threshold, here the derivative of a steep sigmoid, $k\,\sigma(kx)(1 - \sigma(kx))$.
# The surrogate depends on $x$, so forward saves `x`; the slope `k` is a number, so it is a plain
# attribute.

# %%
class SpikeSurrogate(torch.autograd.Function):
    """y = 1[x > 0]; backward uses the derivative of sigmoid(k * x)."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return (x > 0).to(x.dtype)  # exact step, same dtype as x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(ctx.k * x)
        return grad_output * ctx.k * s * (1 - s), None  # d/dx sigmoid(kx) = k s (1 - s)


x = torch.tensor([-1.0, -0.1, 0.0, 0.1, 1.0], requires_grad=True)
spikes = SpikeSurrogate.apply(x, 4.0)
spikes.sum().backward()
print("forward  :", spikes.detach())
print("surrogate:", x.grad)

# %% [markdown]
# Nothing here is new since lesson 00: `forward` computes the real thing, `backward` returns
# one gradient per input (`None` for `k`). The only difference is intent: this backward is not
# the derivative of this forward, on purpose.

# %% [markdown]
# ## ✎ Exercise 1 · `SignSTE`
#
# Write `SignSTE`, with `SignSTE.apply(x)` returning `torch.sign(x)` (so `sign(0) = 0`) and a
# backward that passes `grad_output` straight through. Does forward need to save anything?
#
# Binarised networks often send 0 to $+1$ instead (binarized neural networks define
# $\operatorname{sign}(0) = +1$), so that every output is $\pm 1$ and fits in one bit. That
# is a sound convention too; this exercise follows `torch.sign`.

# %% nbgrader={"grade_id": "answer_SignSTE", "solution": true}
class SignSTE(torch.autograd.Function):
    """y = sign(x); backward pretends dy/dx = 1."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        return torch.sign(x)  # nothing to save: the surrogate does not depend on x
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        return grad_output  # identity surrogate
        ### END SOLUTION


# %% nbgrader={"grade_id": "SignSTE", "grade": true, "points": 1}
self_check("SignSTE", SignSTE)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SignSTE", SignSTE)
### END HIDDEN TESTS

# %% [markdown]
# ## ✎ Exercise 2 · `SignClippedSTE`
#
# Same forward, clipped backward: `grad_output * (|x| <= 1)`. Here the boundary belongs to the
# clip (clamp's convention, above): at $|x| = 1$ the gradient passes. Build the mask from the
# **input**: the output $\operatorname{sign}(x)$ never has a magnitude above 1, so a mask built
# from it clips nothing.

# %% nbgrader={"grade_id": "answer_SignClippedSTE", "solution": true}
class SignClippedSTE(torch.autograd.Function):
    """y = sign(x); backward pretends dy/dx = 1 where |x| <= 1 and 0 elsewhere."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        ctx.save_for_backward(x)
        return torch.sign(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, = ctx.saved_tensors
        return grad_output * (x.abs() <= 1)  # clamp(x, -1, 1)'s derivative, boundary kept
        ### END SOLUTION


# %% nbgrader={"grade_id": "SignClippedSTE", "grade": true, "points": 1}
self_check("SignClippedSTE", SignClippedSTE)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("SignClippedSTE", SignClippedSTE)
### END HIDDEN TESTS

# %% [markdown]
# Your `SignClippedSTE`, explored: left, its forward; right, the true derivative (zero, with
# a spike where forward jumps) against the surrogate your backward returns. Drag `x` across
# the shaded clipping window: at $x = \pm 1$ the gradient still passes, just beyond it stops.

# %%
ste_explorer(SignClippedSTE)

# %% [markdown]
# ## ✎ Exercise 3 · `RoundSTE`
#
# `RoundSTE.apply(x)` returns `torch.round(x)` with an identity backward. One detail first:
# `torch.round` rounds halves **to even** (the IEEE 754 default, and NumPy's), not up.

# %%
print(torch.round(torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5])))

# %% nbgrader={"grade_id": "answer_RoundSTE", "solution": true}
class RoundSTE(torch.autograd.Function):
    """y = round(x), halves to even; backward pretends dy/dx = 1."""

    @staticmethod
    def forward(ctx, x):
        ### BEGIN SOLUTION
        return torch.round(x)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        return grad_output
        ### END SOLUTION


# %% nbgrader={"grade_id": "RoundSTE", "grade": true, "points": 1}
self_check("RoundSTE", RoundSTE)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("RoundSTE", RoundSTE)
### END HIDDEN TESTS

# %% [markdown]
# The same view for your `RoundSTE`: a staircase with a jump at every half, and an identity
# surrogate with no window. It opens on $x = 1.5$, a half, which rounds to the even 2.

# %%
ste_explorer(RoundSTE, x=1.5)

# %% [markdown]
# ## `gradcheck` says no, by design
#
# Lesson 00 taught `gradcheck` as the first test of any backward. Run it on your `SignSTE`:

# %%
x = torch.tensor([-1.5, -0.3, 0.2, 0.9], dtype=torch.float64, requires_grad=True)
try:
    torch.autograd.gradcheck(SignSTE.apply, (x,))
except GradcheckError as error:
    print("gradcheck:", str(error).splitlines()[0])

# %% [markdown]
# `gradcheck` asks *is backward the derivative of forward?* and measures the derivative with
# central differences, $\big(q(x+\varepsilon) - q(x-\varepsilon)\big)/2\varepsilon$. For a step
# function that is 0 away from a jump and $1/\varepsilon$ across one. An STE answers 1 on
# purpose, so the two can never agree. The plot shows what each one sees.

# %%
xs = torch.linspace(-1.5, 1.5, 601, dtype=torch.float64)
eps = 0.05  # a large step, so that the spike at the jump is visible
finite_difference = (torch.sign(xs + eps) - torch.sign(xs - eps)) / (2 * eps)
leaf = xs.clone().requires_grad_()
SignSTE.apply(leaf).sum().backward()

fig, ax = plt.subplots(figsize=(6, 3.2))
ax.plot(xs, finite_difference, label=f"central difference, ε = {eps}")
ax.plot(xs, leaf.grad, lw=3, alpha=0.6, label="SignSTE backward")
ax.set_xlabel("x")
ax.set_title("What gradcheck compares")
ax.legend()
plt.show()

# %% [markdown]
# So test the two halves separately, for exactly what they are meant to be:
#
# 1. **forward is the quantiser, bit for bit**: `torch.equal` with `torch.sign` or
#    `torch.round`, in float32 and float64, on the values where mistakes show: `0`, `±1`,
#    halves such as `2.5`;
# 2. **backward is the intended surrogate, exactly**, for a random `grad_output`;
# 3. the usual hygiene: `grad_output` left untouched, no tensors stored on `ctx`.
#
# For (2) there is a handy reference made of ordinary ops. Outside a Function, where autograd
# records everything, `q(x.detach()) + (x - x.detach())` has the **value** $q(x)$, exactly,
# because `x - x.detach()` is exactly 0, and the **derivative** 1, because the detached parts
# count as constants. That is the "detach trick", and the grader's reference.
#
# It is often written `x + (q(x) - x).detach()`: same derivative, but a value that is $q(x)$
# only up to rounding. In float64, $(\operatorname{sign}(x) - x) + x$ is $0$ at $x = 10^{17}$,
# since $1 - 10^{17}$ rounds to $-10^{17}$. The brackets matter too:
# `q(x).detach() + x - x.detach()` runs left to right, as $(q(x) + x) - x$, and rounds the
# same way.

# %%
x = torch.tensor([-1e17, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 1e17], dtype=torch.float64)
grad_output = torch.randn(x.shape, dtype=torch.float64)

references = {
    "sign(x.detach()) + (x - x.detach())": lambda x: torch.sign(x.detach()) + (x - x.detach()),
    "x + (sign(x) - x).detach()": lambda x: x + (torch.sign(x) - x).detach(),
    "sign(x).detach() + x - x.detach()": lambda x: torch.sign(x).detach() + x - x.detach(),
}
for name, reference in references.items():
    leaf = x.clone().requires_grad_()
    value = reference(leaf)
    value.backward(grad_output)
    print(f"{name:<36} forward exact: {str(torch.equal(value.detach(), torch.sign(x))):<5}",
          f" backward exact: {torch.equal(leaf.grad, grad_output)}")

for Function in (SignSTE, SignClippedSTE):
    mine = x.clone().requires_grad_()
    y = Function.apply(mine)
    y.backward(grad_output)
    expected_grad = grad_output if Function is SignSTE else grad_output * (x.abs() <= 1)
    forward_exact = torch.equal(y.detach(), torch.sign(x))
    print(f"{Function.__name__:<36} forward exact: {str(forward_exact):<5}",
          f" backward exact: {torch.equal(mine.grad, expected_grad)}")

# %% [markdown]
# ## Experiment: a binarised network
#
# The data: 512 points in the square $[-1, 1]^2$, labelled by the quadrant they fall in (XOR),
# which no linear model can separate. The model is binarised in the style of binarized neural
# networks: its hidden units output $\pm 1$ and its readout weights are $\pm 1$, both produced by a
# quantiser $q$ from real-valued "latent" parameters that the optimiser updates:
#
# $$h = q(W_1 x + b_1) \in \{-1, 0, 1\}^{64}, \qquad
#   \text{logit} = \frac{h \cdot q(w_2)}{\sqrt{64}} + b_2 .$$
#
# We train it three times, changing only $q$'s backward: `torch.sign` (the true gradient),
# your `SignSTE` and your `SignClippedSTE`. Same data, same initialisation, same optimiser.

# %%
def xor_data(n=512, seed=0):
    """Points in [-1, 1]^2, labelled 1 in the first and third quadrants."""
    generator = torch.Generator().manual_seed(seed)
    points = torch.rand(n, 2, generator=generator) * 2 - 1
    return points, (points[:, 0] * points[:, 1] > 0).float()


def train_binarised(quantise, points, labels, hidden=64, steps=200, lr=0.01, seed=0):
    """Train the binarised network with quantiser ``quantise``; return losses and the model."""
    generator = torch.Generator().manual_seed(seed)
    w1 = torch.randn(hidden, 2, generator=generator).requires_grad_()
    b1 = (0.5 * torch.randn(hidden, generator=generator)).requires_grad_()
    w2 = torch.randn(hidden, generator=generator).requires_grad_()
    b2 = torch.zeros((), requires_grad=True)
    optimiser = torch.optim.Adam([w1, b1, w2, b2], lr=lr)

    def model(inputs):
        h = quantise(inputs @ w1.T + b1)
        return h @ quantise(w2) / math.sqrt(hidden) + b2

    losses = []
    for _ in range(steps):
        loss = F.binary_cross_entropy_with_logits(model(points), labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses, model


points, labels = xor_data()
runs = {"true gradient (torch.sign)": torch.sign,
        "SignSTE": SignSTE.apply,
        "SignClippedSTE": SignClippedSTE.apply}
results = {name: train_binarised(quantise, points, labels) for name, quantise in runs.items()}

grid = torch.stack(torch.meshgrid(torch.linspace(-1, 1, 101), torch.linspace(-1, 1, 101),
                                  indexing="xy"), dim=-1).reshape(-1, 2)
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
for name, (losses, model) in results.items():
    with torch.no_grad():
        accuracy = ((model(points) > 0).float() == labels).float().mean().item()
    print(f"{name:27s} loss {losses[0]:.3f} -> {losses[-1]:.3f}   accuracy {accuracy:.1%}")
    axes[0].plot(losses, label=name)
axes[0].set_xlabel("step")
axes[0].set_ylabel("training loss")
axes[0].set_title("Binarised network on XOR")
axes[0].legend()
with torch.no_grad():
    decision = results["SignClippedSTE"][1](grid).reshape(101, 101) > 0
axes[1].imshow(decision, origin="lower", extent=(-1, 1, -1, 1), cmap="coolwarm", alpha=0.35)
axes[1].scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=6)
axes[1].set_title("Decision regions, SignClippedSTE")
plt.show()

# %% [markdown]
# With the true gradient the loss barely moves: $W_1$, $b_1$ and $w_2$ all sit upstream of a
# `sign` and receive exactly zero; only the output bias $b_2$ learns. Both estimators train the
# whole network. The clipped one reaches the lower loss here. The usual explanation: once a
# latent value is beyond $\pm 1$ its sign is settled, and the clip stops the optimiser from
# pushing it further out, where a later change of mind would take many steps to undo.
#
# The same holds for rounding. Below, a linear model keeps real-valued latent weights $w$ but
# predicts with weights rounded to a grid of step $\tfrac14$: $\hat y = X\, \tfrac14
# \operatorname{round}(4w)$, the core of quantisation-aware training.

# %%
def train_quantised_regression(quantise, steps=100, lr=0.1, seed=0):
    """Fit y = X w_true with weights quantised to multiples of 1/4; return the losses."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(256, 8, generator=generator)
    w_true = torch.randn(8, generator=generator)
    targets = inputs @ w_true + 0.05 * torch.randn(256, generator=generator)
    w = torch.zeros(8, requires_grad=True)
    losses = []
    for _ in range(steps):
        loss = ((inputs @ (quantise(4 * w) / 4) - targets) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        w.grad = None
        losses.append(loss.item())
    return losses


fig, ax = plt.subplots(figsize=(6, 3.2))
for name, quantise in [("true gradient (torch.round)", torch.round), ("RoundSTE", RoundSTE.apply)]:
    losses = train_quantised_regression(quantise)
    print(f"{name:27s} loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    ax.semilogy(losses, label=name)
ax.set_xlabel("step")
ax.set_ylabel("mean squared error")
ax.set_title("Regression with weights on a 1/4 grid")
ax.legend()
plt.show()

# %% [markdown]
# The rounded weights never see a gradient with the true derivative, so that loss is flat from
# the first step. With `RoundSTE` the loss falls to the level the grid allows and then jitters:
# latent weights near a rounding boundary hop across it, and each hop moves a quantised weight
# by a whole step of $\tfrac14$.

# %% [markdown]
# ## Common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | backward returns zeros (or you use `torch.sign` itself) | the true derivative: nothing upstream learns | return the surrogate |
# | backward returns `torch.ones_like(x)` | ignores the chain rule | `grad_output` times the surrogate |
# | `torch.where(x >= 0, 1., -1.)` as sign | `sign(0)` becomes 1: binarised networks' convention, not `torch.sign`'s, which the exercise asks for | `torch.sign(x)` |
# | clip with `x.abs() < 1` | hardtanh's convention, not the exercise's: the gradient at $\lvert x\rvert = 1$ is dropped | `x.abs() <= 1` |
# | clip mask from the saved output `sign(x)` | never clips: $\lvert\operatorname{sign}(x)\rvert \le 1$ always | save and mask with the input `x` |
# | `grad_output.clamp(-1, 1)` | clips the gradient's values, not the input's range | `grad_output * (x.abs() <= 1)` |
# | `grad_output[x.abs() > 1] = 0` | writes into a tensor backward does not own | build a new tensor |
# | `torch.floor(x + 0.5)` or `x.long()` as round | rounds halves up, or truncates | `torch.round(x)` |
# | `torch.tanh(k * x)` in forward | the forward is no longer binary | exact quantiser forward, surrogate in backward only |
# | `gradcheck` on an STE | fails for a correct STE | check forward and surrogate separately |
#
# ## Where popular write-ups get it wrong
#
# **The detach trick inside `Function.forward`.** Some write-ups define a Function whose
# forward returns `y_hard - y_soft.detach() + y_soft`, expecting the gradient of `y_soft` to
# flow. Inside `forward`, autograd is off: nothing is recorded, so `.detach()` has nothing to
# cut, and the expression is plain arithmetic whose value is `y_hard` (or not quite: in floating
# point, $(\operatorname{sign}(x) - x) + x$ rounds to 0 once $|x|$ is large). The gradient comes
# from your `backward`, and only from it. The trick belongs in ordinary code, *instead of* a
# Function, and in its exact form `y_hard + (y_soft - y_soft.detach())`, as in the reference
# above.

# %%
class DetachTrickInForward(torch.autograd.Function):
    """The trick in the wrong place: inside forward it is only arithmetic."""

    @staticmethod
    def forward(ctx, x):
        y_soft = x
        y_hard = torch.sign(x)
        y = y_hard - y_soft.detach() + y_soft
        print("  inside forward: grad enabled =", torch.is_grad_enabled(),
              "| y.grad_fn =", y.grad_fn)  # nothing was recorded
        return y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output  # the only gradient there is


x = torch.tensor([-2.0, 0.5, 1e17], dtype=torch.float64, requires_grad=True)
y = DetachTrickInForward.apply(x)
print("forward:", y.detach().tolist(), " but sign(x) =", torch.sign(x).detach().tolist())

# %% [markdown]
# **A straight-through Gumbel-softmax whose backward returns `grad_output`.** The
# straight-through Gumbel-softmax (Jang, Gu and Poole, 2017) samples a one-hot vector in
# forward, the argmax of $y_\text{soft} = \operatorname{softmax}\big((\ell + g)/\tau\big)$ for
# logits $\ell$ and Gumbel noise $g$, and in backward uses the gradient of $y_\text{soft}$.
# That gradient is a vector-Jacobian product through the softmax, not the identity:
#
# $$\frac{\partial L}{\partial \ell} = \frac{1}{\tau}\; y_\text{soft} \odot
#   \Big(\texttt{grad\_output} - \big\langle \texttt{grad\_output},\, y_\text{soft}\big\rangle\Big).$$
#
# A Function whose backward returns `grad_output` skips the Jacobian altogether. One visible
# symptom: softmax is unchanged by adding a constant to every logit, so each row of a true
# gradient sums to zero; an identity gradient does not.

# %%
class GumbelSoftmaxST(torch.autograd.Function):
    """One-hot sample in forward; the vector-Jacobian product of the softmax in backward."""

    @staticmethod
    def forward(ctx, logits, gumbels, tau):
        y_soft = torch.softmax((logits + gumbels) / tau, dim=-1)
        ctx.save_for_backward(y_soft)
        ctx.tau = tau
        return F.one_hot(y_soft.argmax(dim=-1), logits.shape[-1]).to(logits.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        y_soft, = ctx.saved_tensors
        inner = (grad_output * y_soft).sum(dim=-1, keepdim=True)
        return y_soft * (grad_output - inner) / ctx.tau, None, None


class GumbelSoftmaxIdentity(GumbelSoftmaxST):
    """The popular mistake: backward passes grad_output through."""

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None


generator = torch.Generator().manual_seed(1)
logits = torch.randn(2, 4, generator=generator, dtype=torch.float64)
gumbels = -torch.log(-torch.log(torch.rand(2, 4, generator=generator, dtype=torch.float64)))
grad_output = torch.randn(2, 4, generator=generator, dtype=torch.float64)
tau = 0.5

# Reference: the detach trick in ordinary code, where autograd records the softmax.
leaf = logits.clone().requires_grad_()
y_soft = torch.softmax((leaf + gumbels) / tau, dim=-1)
y_hard = F.one_hot(y_soft.argmax(dim=-1), 4).to(y_soft.dtype)
(y_hard + (y_soft - y_soft.detach())).backward(grad_output)  # the exact form, see above

for Function in (GumbelSoftmaxST, GumbelSoftmaxIdentity):
    mine = logits.clone().requires_grad_()
    Function.apply(mine, gumbels, tau).backward(grad_output)
    print(f"{Function.__name__:22s} matches the reference: {torch.allclose(mine.grad, leaf.grad)},",
          "row sums", [round(v, 3) + 0.0 for v in mine.grad.sum(dim=-1).tolist()])

# %% [markdown]
# ## Summary
#
# A straight-through estimator is a Function whose forward is the exact, piecewise-constant
# operation and whose backward returns a surrogate: `grad_output` (identity) or
# `grad_output * (x.abs() <= 1)` (clipped). `gradcheck` rejects it by design, so test forward
# and backward separately against what they are meant to be. With the true gradient a
# binarised network does not learn; with an STE it does. Next lesson: backward functions that
# can themselves be differentiated.
