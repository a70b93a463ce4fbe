# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 05 · Gradient checkpointing: paying compute to save memory
#
# **About 115 minutes** to the Summary, the three exercises included; the optional appendix
# after it takes about an hour more.
#
# Training a deep network usually runs out of memory before it runs out of time, and most of
# that memory is not the weights: it is the **activations** autograd keeps so that backward
# can use them. This lesson writes a `Function` that keeps almost none of them and recomputes
# them when backward needs them.
#
# By the end of this lesson you can:
# 1. measure what a forward pass keeps for backward, with saved-tensor hooks;
# 2. write a backward that re-runs its forward under autograd and differentiates it;
# 3. make dropout draw the same mask twice by replaying the random state;
# 4. make the parameters used inside a recomputed block receive their gradients;
# 5. choose a number of segments, knowing what each choice costs in memory and in time;
# 6. write a reversible block, which rebuilds its inputs from its outputs and keeps only those.
#
# Three exercises are graded (**✎ Exercise**). Every Function you write obeys the course's
# [Function contract](function_contract.md); each exercise states only what it decides. Each
# self-check runs every check the hidden tests run.

# %% nbgrader={"locked": true}
import math
import time

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.autograd.graph import saved_tensors_hooks

from autograder import self_check
from autograder.predictions import compare, written
from autograder.probes import CountFlops
from widgets import checkpointing_explorer

_ = torch.manual_seed(0)

# %% [markdown]
# ## Where the memory goes
#
# Every operation autograd records keeps what its own backward will need: a `Linear` its input
# (for $\partial L/\partial W = $ `grad_output.T @ input`), a `GELU` its input. For $n$ such
# blocks on a batch of $B$ rows of width $w$, that is about $2nBw$ numbers, growing with depth
# and batch size, on top of the weights.
#
# `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` calls `pack(tensor)` for every
# tensor autograd saves while it is active, and `unpack` when backward reads it back. The
# meter in the next (collapsed) cell uses them to count **activation bytes** (parameters
# skipped, shared memory counted once), now and at their **peak**. The cell after it measures
# a `deep_mlp` (blocks of `Linear` then `GELU`).

# %% jupyter={"source_hidden": true}
def deep_mlp(depth=16, width=128, seed=0):
    """``depth`` blocks of Linear followed by GELU, as an nn.Sequential of blocks."""
    torch.manual_seed(seed)
    return nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU())
                           for _ in range(depth)])


def kib(nbytes):
    return f"{nbytes / 1024:,.0f} KiB"


class _Held:
    """What the meter gives autograd to keep instead of a tensor: a detached alias of it (the
    same memory, no history, so no loop back to the tensor), plus a note to the meter when
    autograd drops it."""

    def __init__(self, tensor, meter, key):
        self.tensor, self.meter, self.key = tensor, meter, key

    def __del__(self):
        self.meter.release(self.key)


class ActivationMeter:
    """``with ActivationMeter(model.parameters()) as meter:`` counts the bytes autograd keeps
    for backward: ``meter.now`` at any moment and ``meter.peak`` over the block."""

    def __init__(self, parameters=()):
        self.skip = {p.untyped_storage().data_ptr() for p in parameters}
        self.count, self.size = {}, {}
        self.now = self.peak = 0
        self.hooks = saved_tensors_hooks(self.pack, self.unpack)

    def pack(self, tensor):
        key = tensor.untyped_storage().data_ptr()
        if key in self.skip:  # a parameter: not an activation
            return tensor.detach()
        if self.count.get(key, 0) == 0:  # first time this memory is kept
            self.size[key] = tensor.untyped_storage().nbytes()
            self.now += self.size[key]
            self.peak = max(self.peak, self.now)
        self.count[key] = self.count.get(key, 0) + 1
        return _Held(tensor.detach(), self, key)  # never the tensor itself (the rule above)

    def unpack(self, held):
        return held.tensor if isinstance(held, _Held) else held

    def release(self, key):
        self.count[key] -= 1
        if self.count[key] == 0:
            self.now -= self.size.pop(key)

    def __enter__(self):
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self.hooks.__exit__(*exc)


# %%
model = deep_mlp()
x = torch.randn(64, 128, requires_grad=True)
with ActivationMeter(model.parameters()) as meter:
    loss = model(x).square().mean()
    print("kept for backward after forward:", kib(meter.now))
    loss.backward()
    print("still kept after backward:      ", kib(meter.now))
print("one (64, 128) float32 activation: ", kib(64 * 128 * 4))
print("the weights, for comparison:      ", kib(sum(p.numel() * 4 for p in model.parameters())))

# %% [markdown]
# 33 activations of 32 KiB each: the input of every `Linear` and every `GELU`, and the output
# the loss squares; backward lets each go once it has used it. At batch size 64 they already
# weigh as much as the weights.

# %% [markdown]
# ## The idea: keep a few inputs, recompute the rest
#
# Cut the $n$ blocks into $k$ consecutive **segments**. In forward, run each segment without
# recording anything, and keep only its **input**. In backward, when the gradient reaches a
# segment, run that segment's forward again, recording, and backpropagate through the rebuilt
# graph: the same vector-Jacobian products, from the same values.
#
# **Memory: derive it.** Measure in units of one segment input, and call $a$ what one block
# keeps in those units (for a `Linear` then `GELU` block, its two inputs: $a = 2$). Take $n$
# blocks in $k$ segments of $n/k$ blocks each.
#
# 1. What is still kept when forward ends?
# 2. While backward works on one segment, what else is alive? Count the rebuilt segment's
#    activations in full, its input included, though it is also one of the held ones.
# 3. So what is the peak $M(k)$? Write it as `my_peak(n, a, k)` below; the cell after it
#    counts what is alive, segment by segment, and compares.
# 4. Which $k$ makes $M(k)$ smallest (treat $k$ as a real number), and how does that smallest
#    peak grow with $n$: like $n$, or slower? Write `my_best_k(n, a)`.
#
# <details><summary><b>Numbers to hit</b> (after your attempt)</summary>
#
# $n = 16$, $a = 2$: $M(1) = 33$, $M(4) = 12$, $M(16) = 18$; the smallest $M$ over real $k$ is
# $11.3$. For $n = 64$ the smallest is $22.6$.
# </details>

# %%
### BEGIN WORKED
my_peak = lambda n, a, k: k + n / k * a
my_best_k = lambda n, a: math.sqrt(n * a)
### LEARNER
my_peak = None     # your step 3: lambda n, a, k: ...
my_best_k = None   # your step 4: lambda n, a: ...
### END WORKED


# %%
# check_peak counts the units alive, segment by segment, and compares yours. It lives in the
# library: its counting is your derivation, kept out of sight until yours is ✓.
from autograder.exercises.lesson05_checkpointing.checkpoint_memory import check_peak

peak_right = check_peak(my_peak, my_best_k)

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after every line above is ✓</summary>
#
# Forward keeps the $k$ segment inputs; backward rebuilds one segment's $n/k$ blocks at a
# time, so the peak is
#
# $$ M(k) \approx k + \frac{n}{k}\,a , $$
#
# (one less if you count the segment's input once, as the meter does), smallest where
# $1 - na/k^2 = 0$, at $k = \sqrt{n a}$, where $M = 2\sqrt{n a}$: it grows like $\sqrt{n}$
# instead of $n a$.
# </details>
#
# **Time.** Every segment runs its forward twice: with a backward costing about two forwards,
# a step goes from 3 to 4 forward-equivalents, about 33% more, whatever $k$ is.

# %% [markdown]
# ## Worked example: keep the input, recompute the intermediates
#
# Start with a block that has no parameters and no randomness:
# $\text{fancy}(x) = \tanh(x)\,\sigma(2x) + x^3$, element-wise, whose intermediates autograd
# would normally keep. Its derivative needs $t = \tanh x$ and $s = \sigma(2x)$ again:
#
# $$\text{fancy}'(x) = (1 - t^2)\,s + 2\,t\,s\,(1 - s) + 3x^2 .$$
#
# So forward passes `x` to `save_for_backward` and nothing else, and backward computes $t$ and
# $s$ a second time from `x`, then applies the chain rule by hand. Its
# `forward` calls `fancy(x)` with no precautions, and the meter below still sees only `x`
# kept: `Function.apply` runs forward with autograd off, so `fancy`'s ops record nothing and
# save nothing.

# %%
def fancy(x):
    return torch.tanh(x) * torch.sigmoid(2 * x) + x ** 3


class RecomputedFancy(torch.autograd.Function):
    """fancy(x), recomputed in backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)  # the input only
        return fancy(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        t, s = torch.tanh(x), torch.sigmoid(2 * x)  # recomputed: forward kept neither
        return grad_output * ((1 - t * t) * s + 2 * t * s * (1 - s) + 3 * x * x)


x = torch.randn(1000, dtype=torch.float64, requires_grad=True)
kept = {}
for name, f in [("plain autograd", fancy), ("RecomputedFancy", RecomputedFancy.apply)]:
    with ActivationMeter() as meter:
        y = f(x)
        kept[name] = meter.now
    print(f"{name:>16}: keeps {meter.now:>6} bytes for backward")
x5 = torch.randn(5, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(RecomputedFancy.apply, (x5,)))

# %% [markdown]
# One input of 8000 bytes kept instead of three tensors, and the same gradient.
#
# **When you cannot write the derivative.** A checkpoint wraps a block it knows nothing about,
# a function `run_fn` handed to it. Its backward cannot apply a formula: it runs `run_fn` again
# so that autograd records the block's graph, and differentiates that. Three predictions
# decide the rest; write them now, in one cell.
#
# **A: where a recorded graph ends.** `h = x * 3` is part of a caller's graph, whose leaf is
# `x`. Record `(h * 2) ** 2` from `h` and call `.backward()` on its sum: is `x.grad` written?
#
# **B: parameters inside the block.** With `layer = nn.Linear(3, 2)` and `x` requiring grad,
# differentiate `layer(x)` with `torch.autograd.grad`, asking for `x`'s gradient only, and
# with `Tensor.backward`. After each, is `layer.weight.grad` written?
#
# **C: randomness inside the block.** Dropout draws a new mask from the global CPU generator
# on every call. The cell after the predictions saves the generator's state, draws
# `a = torch.rand(3)`, writes the saved state back, and draws `b = torch.rand(3)`: does `b`
# repeat `a`? C is settled at once, A and B after the exercise.

# %%
predicted_x_grad_from_h = None     # A: True or False
predicted_weight_grad_from_grad = None      # B: True or False, after torch.autograd.grad
predicted_weight_grad_from_backward = None  # B: True or False, after Tensor.backward
predicted_b_repeats_a = None       # C: True or False, a draw after the state was written back

# %%
torch.manual_seed(0)
dropout = nn.Dropout(0.5)
ones = torch.ones(8)
first_mask, second_mask = dropout(ones) != 0, dropout(ones) != 0
state = torch.get_rng_state()
a = torch.rand(3)
torch.set_rng_state(state)
b = torch.rand(3)
print("first call keeps: ", first_mask.int().tolist())
print("second call keeps:", second_mask.int().tolist())
if written(predicted_b_repeats_a):
    print("a:", [round(v, 2) for v in a.tolist()], " b:", [round(v, 2) for v in b.tolist()])
compare("b repeats a", predicted_b_repeats_a, torch.equal(a, b))

# %% [markdown]
# So a recomputation with no precaution draws another mask than forward did, and gives the
# gradients of another network, with no error. Writing a state back replays a draw, but it
# rewinds the generator for whoever draws next (`b` repeated `a`).

# %% [markdown]
# ## ✎ Exercise 1 · `CheckpointFunction`
#
# `CheckpointFunction.apply(run_fn, *args)` returns `run_fn(*args)`, one tensor, while keeping
# only what it needs to recompute it. `args` may mix tensors with anything else (floats, flags,
# `None`).
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward keeps only the tensor arguments and the random states, recording no graph of
#   `run_fn`, and backward keeps nothing of what it rebuilds once it returns;
# - backward re-runs `run_fn` on the arguments as forward saw them and returns, for each
#   argument, the gradient a plain run of `run_fn(*args)` gives it;
# - the parameters used inside `run_fn` receive their gradients in `.grad`, added to what it
#   holds, whenever a tensor argument requires grad; frozen ones get none;
# - the recomputation draws the random numbers forward drew (dropout's masks), on the CPU and
#   on the device of each CUDA argument (the CUDA part is graded only where a GPU is present).
#
# Design it before you write it:
#
# 1. Which arguments go to `ctx.save_for_backward`, and where do `run_fn` and the others go?
# 2. Backward recomputes `run_fn` on what, exactly? Recomputing on the saved tensors
#    themselves would extend which graph? And should every tensor you recompute on require
#    grad? (Think of a boolean mask among the arguments.)
# 3. The recomputation must draw the masks forward drew. What must forward keep for that?
#    Writing it back rewinds the generator for everyone (`b` repeated `a`), and rule 6 of the
#    Function contract asks for the caller's stream where it was: what must backward do before
#    and after the recomputation?
# 4. Which way of running backward through the rebuilt output gives the parameters their
#    `.grad`, and where do you then read the gradients you return?
# 5. How many gradients does backward return, and in what order?
#
# <details><summary><b>Hint 1</b> (a question)</summary>
#
# Prediction A recorded from the caller's tensor itself. Should the graph your backward
# records run on into the caller's graph, or end at the block? Try a candidate in a scratch
# cell on A's `x` and `h` before you build on it: after `.backward()`, which tensors hold a
# `.grad`?
# </details>
#
# <details><summary><b>Hint 2</b> (what backward owes)</summary>
#
# Call the arguments $a_1, \dots, a_m$ and write $\bar y$ for `grad_output`. For each
# tensor $a_i$ that requires grad, backward returns
#
# $$\bar a_i = \Big(\frac{\partial y}{\partial a_i}\Big)^{\!\top} \bar y ,$$
#
# and every parameter $\theta$ that `run_fn` uses ends with `θ.grad` increased by
# $(\partial y/\partial \theta)^\top \bar y$. Both hold only for a $y$ recomputed from the very
# values forward saw, random draws included.
# </details>
#
# <details><summary><b>Hint 3</b> (numbers to hit)</summary>
#
# For `run_fn = lambda a, s, m: (a * s)[m]`, with `a = torch.tensor([1., 2., 3.],
# requires_grad=True)`, `s = 2.0` and `m = torch.tensor([True, False, True])`, forward returns
# `tensor([2., 6.])`. With `grad_output` $(1, 10)$, the gradient of `a` is
# `tensor([2., 0., 20.])`; and `torch.rand(1)` drawn after that backward is the same number as
# drawn after the same step without a checkpoint.
# </details>

# %% nbgrader={"grade_id": "answer_CheckpointFunction", "solution": true}
class CheckpointFunction(torch.autograd.Function):
    """run_fn(*args), keeping only the tensor arguments and recomputing the rest in backward."""

    @staticmethod
    def forward(ctx, run_fn, *args):
        ### BEGIN SOLUTION
        ctx.run_fn = run_fn
        ctx.is_tensor = [isinstance(a, torch.Tensor) for a in args]
        ctx.others = [None if is_tensor else a for is_tensor, a in zip(ctx.is_tensor, args)]
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.devices = sorted({t.get_device() for t in tensors if t.is_cuda})
        ctx.cpu_state = torch.get_rng_state()
        ctx.cuda_states = [torch.cuda.get_rng_state(d) for d in ctx.devices]
        return run_fn(*args)  # autograd is off in forward: no activation is kept
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        saved = iter(ctx.saved_tensors)
        args = []
        for is_tensor, other, needs_grad in zip(ctx.is_tensor, ctx.others,
                                                ctx.needs_input_grad[1:]):
            if is_tensor:  # a fresh leaf, requiring grad where the argument did in forward
                other = next(saved).detach().requires_grad_(needs_grad)
            args.append(other)
        with torch.random.fork_rng(devices=ctx.devices):  # the caller's streams come back after
            torch.set_rng_state(ctx.cpu_state)
            for device, state in zip(ctx.devices, ctx.cuda_states):
                torch.cuda.set_rng_state(state, device)
            with torch.enable_grad():
                output = ctx.run_fn(*args)  # the same dropout masks as in forward
        if output.requires_grad:  # False: frozen parameters, no used input requiring grad
            torch.autograd.backward(output, grad_output)  # .grad accumulates on the parameters
        return (None, *(a.grad if isinstance(a, torch.Tensor) else None for a in args))
        ### END SOLUTION


# %% nbgrader={"grade_id": "CheckpointFunction", "grade": true, "points": 3}
self_check("CheckpointFunction", CheckpointFunction)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("CheckpointFunction", CheckpointFunction)
### END HIDDEN TESTS

# %% [markdown]
# The two predictions you made before the exercise, settled:

# %%
shown = written(predicted_x_grad_from_h, predicted_weight_grad_from_grad,
               predicted_weight_grad_from_backward)
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 3  # the caller's graph: x -> h
((h * 2) ** 2).sum().backward()
if shown:
    print("recorded from h: x.grad =", x.grad)
compare("x.grad written, from h", predicted_x_grad_from_h, x.grad is not None)

layer = nn.Linear(3, 2)
x = torch.randn(4, 3, requires_grad=True)
g = torch.ones(4, 2)
grad_x, = torch.autograd.grad(layer(x), x, g)
from_grad = layer.weight.grad is not None
if shown:
    print("after torch.autograd.grad: weight.grad is", layer.weight.grad)
layer(x).backward(g)  # Tensor.backward is torch.autograd.backward on one output
if shown:
    print("after Tensor.backward:     weight.grad is", layer.weight.grad.shape,
          "and x.grad equals the gradient above:", torch.allclose(x.grad, grad_x))
compare("weight.grad written by autograd.grad", predicted_weight_grad_from_grad, from_grad)
compare("weight.grad written by .backward", predicted_weight_grad_from_backward,
        layer.weight.grad is not None)

# %% [markdown]
# A graph recorded from a tensor of the caller's graph runs on into that graph, down to its
# leaves. `torch.autograd.backward` **accumulates** into the `.grad` of every leaf it reaches
# that requires grad; `torch.autograd.grad` returns what you ask for and writes nowhere.
#
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# 1. The tensor arguments go to `ctx.save_for_backward`; `run_fn`, the other arguments (and
#    where each tensor sat among them) and the random states are plain `ctx` attributes.
# 2. and 4. are answered after Exercise 3, whose backward rests on the same two answers: the
#    transfer is yours to make first.
# 3. Forward records the CPU random state, and that of each CUDA argument's device, before it
#    calls `run_fn`. Backward keeps the caller's states, writes forward's, recomputes under
#    `torch.enable_grad()`, and writes the caller's back: `torch.random.fork_rng` (the next
#    cell) does the keeping and writing back.
# 5. $1 + m$ values in forward's order: `None` for `run_fn`, then for each argument its
#    gradient if it is a tensor that requires grad, `None` otherwise.
# </details>
#
# `torch.random.fork_rng()` saves the global state on entry and puts it back on exit: whatever
# happens to the generator inside, the caller's stream continues as if the block had not run.
# Its `devices` argument names the CUDA devices whose generators it saves and restores too.

# %%
torch.manual_seed(3)
next_draw = torch.rand(3)          # what the caller would draw next
torch.manual_seed(3)
with torch.random.fork_rng():
    torch.manual_seed(123)         # anything inside: reseed, draw
    _ = torch.rand(100)
print("the caller's next draw is unchanged:", torch.equal(torch.rand(3), next_draw))

# %% [markdown]
# Try it on a block with dropout and parameters: the gradients must equal those of a plain run
# from the same seed, and the block's weights must have received theirs.

# %%
def not_written():
    """What a demo cell says while an exercise it runs is still a stub."""
    print("an exercise this cell runs is not written yet: run the cell again once it is")


block = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.3), nn.Tanh(), nn.Linear(6, 6))
x = torch.randn(5, 6, requires_grad=True)

torch.manual_seed(1)
torch.rand(3)  # layers before the block draw random numbers too
block(x).sum().backward()
plain = [x.grad.clone()] + [p.grad.clone() for p in block.parameters()]

x.grad = None
block.zero_grad(set_to_none=True)
torch.manual_seed(1)
torch.rand(3)
try:
    CheckpointFunction.apply(block, x).sum().backward()
    ours = [x.grad] + [p.grad for p in block.parameters()]
    print("same gradients for x and all four parameters:",
          all(torch.allclose(a, b) for a, b in zip(plain, ours)))
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# ## ✎ Exercise 2 · `checkpoint_sequential`
#
# `checkpoint_sequential(layers, segments, x)`, for any `segments` from 1 to `len(layers)`,
# runs `layers` (a list of modules, or an `nn.Sequential`; the caller's, rule 6) on `x` in
# checkpointed groups, built on your `CheckpointFunction`.
#
# **Contract.** Your function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - every layer runs once in forward, in order, in exactly `segments` consecutive groups, each
#   through `CheckpointFunction.apply` (the last may run without it);
# - no group holds more layers than the best split into `segments` groups needs;
# - the output is the plain stack's, dropout masks included, and so are the gradients of `x`
#   and of every layer's parameters whenever `x` requires grad.
#
# Before you write the split, decide it on paper: for $n$ layers in $k$ groups, what is the
# fewest layers the longest group can hold, and which group sizes reach it, for every $k$? Try
# $n = 16$, $k = 6$ first.

# %% nbgrader={"grade_id": "answer_checkpoint_sequential", "solution": true}
def checkpoint_sequential(layers, segments, x):
    """layers applied to x in `segments` checkpointed groups."""
    ### BEGIN SOLUTION
    layers = list(layers)
    size, longer = divmod(len(layers), segments)  # the first `longer` groups get one more
    start = 0
    for i in range(segments):
        end = start + size + (i < longer)
        x = CheckpointFunction.apply(nn.Sequential(*layers[start:end]), x)
        start = end
    return x
    ### END SOLUTION


# %% nbgrader={"grade_id": "checkpoint_sequential", "grade": true, "points": 1}
self_check("checkpoint_sequential", checkpoint_sequential)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("checkpoint_sequential", checkpoint_sequential)
### END HIDDEN TESTS

# %% [markdown]
# ## ✎ Exercise 3 (transfer) · `ReversibleCoupling`
#
# Checkpointing keeps a block's inputs. A **reversible** block keeps only its outputs: its
# inputs can be computed back from them, so backward rebuilds them. RevNet (Gomez et al.,
# 2017) and the Reformer are built from such blocks. The additive coupling splits the
# activations into two halves and computes, with two functions $f$ and $g$ (modules with
# parameters, shape-preserving, **deterministic**: backward calls them again and needs the
# values forward got):
#
# $$y_1 = x_1 + f(x_2), \qquad y_2 = x_2 + g(y_1).$$
#
# ```
# x1 ───────(+)────────────┬──────▶ y1
#            ▲             │
#            f             g
#            │             ▼
# x2 ────────┴────────────(+)─────▶ y2
# ```
#
# `ReversibleCoupling.apply(x1, x2, f, g)` returns the tuple `(y1, y2)`.
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - forward saves only the outputs `y1` and `y2`, no input in any form and no activation of
#   `f` or `g`, and backward keeps nothing of what it rebuilds once it returns;
# - backward rebuilds the inputs from the outputs and returns the gradients of `x1` and `x2`
#   the two equations give, also when a loss uses only one of the outputs;
# - the parameters of `f` and `g` receive their gradients in `.grad`, added to what it holds,
#   whenever `x1` or `x2` requires grad; frozen ones get none.
#
# The inputs backward rebuilds equal forward's only up to rounding; real RevNets accept the
# drift.
#
# Design it before you write it:
#
# 1. Backward holds $y_1$ and $y_2$ only. Which input can you compute first from them, and
#    then the other?
# 2. Which of your backward's calls of $f$ and $g$ must autograd record, and on which tensors
#    should the recorded graph start? Does any call need no graph?
# 3. How many times does your backward call $f$, and $g$? Could one call serve two purposes?
# 4. Two outputs, two incoming gradients, and parameters inside $f$ and $g$: how do both
#    gradients reach $x_1$, $x_2$ and every parameter's `.grad`, each counted once?
#
# <details><summary><b>Hint 1</b>: a question</summary>
#
# The gradients depend on what $f$ and $g$ were fed, $x_2$ and $y_1$. Which of those two does
# backward already hold? Is rebuilding the other a computation you need the gradient of, or
# only its value?
# </details>
#
# <details><summary><b>Hint 2</b>: a question</summary>
#
# Once $x_1$ and $x_2$ are back, what in Exercise 1's backward carries over, and what changes
# with two outputs? What happens if the graph you backpropagate is linked to the saved $y_1$
# and $y_2$, which lead back into this very node?
# </details>
#
# <details><summary><b>Hint 3</b>: numbers to hit</summary>
#
# With one-element tensors $x_1 = 1$, $x_2 = 2$, $f(h) = h^2$ and $g(h) = w\,h$, where $w = 3$
# is $g$'s one parameter: forward returns $y_1 = 5$, $y_2 = 17$. With both incoming gradients
# 1, backward returns 4 for $x_1$ and 17 for $x_2$, and `w.grad` becomes 5.
# </details>
#
# Question 1, checked alone: write `my_inverse(y1, y2, f, g)` returning `(x1, x2)`. The cell
# after it runs it on a random block and compares with the inputs.

# %%
### BEGIN WORKED
def my_inverse(y1, y2, f, g):
    x2 = y2 - g(y1)
    return y1 - f(x2), x2
### LEARNER
my_inverse = None  # question 1: def my_inverse(y1, y2, f, g): ... return x1, x2
### END WORKED

# %%
if my_inverse is None:
    print("Write my_inverse first (question 1).")
else:
    torch.manual_seed(2)
    f_try = nn.Sequential(nn.Linear(4, 4), nn.Tanh()).double()
    g_try = nn.Linear(4, 4).double()
    x1_try, x2_try = torch.randn(2, 3, 4, dtype=torch.float64)
    with torch.no_grad():
        y1_try = x1_try + f_try(x2_try)
        y2_try = x2_try + g_try(y1_try)
        try:
            rebuilt = tuple(my_inverse(y1_try, y2_try, f_try, g_try))
        except Exception as error:  # shown, not raised: Run All goes on
            rebuilt = ()
            print(f"my_inverse raises {type(error).__name__}:",
                  (str(error).splitlines() or [""])[0], "✗")
    for name, got, true in zip(("x1", "x2"), rebuilt, (x1_try, x2_try)):
        right = torch.is_tensor(got) and got.shape == true.shape and torch.allclose(got, true)
        print(f"{name} rebuilt from y1 and y2:", "✓" if right else "✗")


# %% nbgrader={"grade_id": "answer_ReversibleCoupling", "solution": true}
class ReversibleCoupling(torch.autograd.Function):
    """(y1, y2) = (x1 + f(x2), x2 + g(y1)), keeping only y1 and y2 for backward."""

    @staticmethod
    def forward(ctx, x1, x2, f, g):
        ### BEGIN SOLUTION
        ctx.f, ctx.g = f, g
        y1 = x1 + f(x2)
        y2 = x2 + g(y1)
        ctx.save_for_backward(y1, y2)
        return y1, y2
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_y1, grad_y2):
        ### BEGIN SOLUTION
        y1, y2 = ctx.saved_tensors
        with torch.no_grad():  # the inverse: y2 gives x2, then y1 gives x1
            x2 = y2 - ctx.g(y1)
            x1 = y1 - ctx.f(x2)
        x1.requires_grad_(ctx.needs_input_grad[0])  # fresh leaves, requiring grad where the
        x2.requires_grad_(ctx.needs_input_grad[1])  # inputs do: the other's .grad stays None
        with torch.enable_grad():
            z1 = x1 + ctx.f(x2)
            z2 = x2 + ctx.g(z1)
        torch.autograd.backward((z1, z2), (grad_y1, grad_y2))  # .grad on f's and g's parameters
        return x1.grad, x2.grad, None, None
        ### END SOLUTION


# %% nbgrader={"grade_id": "ReversibleCoupling", "grade": true, "points": 2}
self_check("ReversibleCoupling", ReversibleCoupling)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("ReversibleCoupling", ReversibleCoupling)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours</b>, after your self-check is green</summary>
#
# Exercise 1's questions 2 and 4 first. Its backward recomputes on fresh leaves: each saved
# tensor detached, so the rebuilt graph ends at the block, and requiring grad where
# `ctx.needs_input_grad` says the argument did when forward ran (rule 2; a boolean mask
# cannot). `torch.autograd.backward` on the rebuilt output accumulates into the `.grad` of
# every leaf it reaches, parameters included, and backward returns the fresh leaves' `.grad`.
#
# Here: $x_2 = y_2 - g(y_1)$, then $x_1 = y_1 - f(x_2)$, without grad (only their values are
# needed). They become fresh leaves in the same way, the block runs again on them under
# `torch.enable_grad()`, and one `torch.autograd.backward` on both rebuilt outputs, with
# `grad_y1` and `grad_y2`, fills every `.grad`.
# </details>
#
# <details><summary><b>What it costs</b> (open once your block passes)</summary>
#
# Inverting without grad, then recomputing with grad, runs $f$ and $g$ twice each. RevNet's
# Algorithm 1 calls each once, with grad, on a fresh leaf: one call serves both purposes.
# Both pass.
# </details>

# %% [markdown]
# ## Summary
#
# A checkpointed block keeps its inputs and recomputes everything else in backward: a
# backward may build and differentiate a graph of its own, if it switches autograd on, starts
# from detached inputs, replays the random state (in production, the autocast state too) and
# lets `.grad` accumulate on the parameters. A `Function`'s output requires grad only through
# its tensor inputs, so a block on data needs one input that does; `torch.utils.checkpoint`
# with `use_reentrant=False`, the production tool (appendix A.3), needs none. With
# $k \approx \sqrt{n a}$ segments, $a$ being what one block keeps, activation memory grows like
# $\sqrt{n}$, for about one extra forward per step; spread the remainder, so that the longest
# segment is as short as $k$ segments allow. A reversible block keeps only its outputs; a stack
# of them keeps memory constant only if it keeps the last block's alone (appendix A.1).
# Next lesson: a backward written entirely by hand, for attention, where the activations grow
# with the square of the sequence length.

# %% [markdown]
# ## Appendix (optional, not graded)
#
# **The main path ends with the summary above.** Everything below is optional: six
# independent parts, to read in any order or skip (in JupyterLab, collapse this heading to
# hide them all). A.1 a reversible stack that keeps one pair (an exercise); A.2 every segment
# count, the price in work, and the order of the segments; A.3 yours and
# `torch.utils.checkpoint`, side by side, on data too; A.4 a
# checkpoint that keeps autocast's dtype (an exercise, then production notes); A.5 four
# asides from the main path; A.6 common and rarer mistakes.
#
# ### ✎ A.1 · A reversible stack that keeps one pair
#
# **What one block does not buy.** A block's outputs are the next block's inputs, so a stack
# of blocks that each save their outputs keeps one pair per block: exactly what checkpointing
# every block keeps. Measured on torch 2.13 with the `ActivationMeter` above ($f$ and $g$ a
# `Linear` then `GELU` of width 64, batch 32; one unit is one (32, 64) float32 tensor):
#
# | depth | no checkpoint | `ReversibleCoupling` stacked, kept after forward | a checkpoint per block |
# |---|---|---|---|
# | 2 | 8 | 4 | 4 |
# | 4 | 16 | 8 | 8 |
# | 8 | 32 | 16 | 16 |
#
# The memory still grows with depth. RevNet and the Reformer keep it constant by keeping only
# the **last** block's outputs: going down in backward, each block rebuilds its inputs from
# the outputs just rebuilt above it, and those inputs are the outputs the block below needs.
# In code, that is one Function over the whole stack, or a stack whose blocks free each other's
# saved outputs once the next block has them (the stack owns those tensors; a single block's
# caller may still read its outputs, so your block leaves them alone). Your block is the part
# that makes that possible, the inversion and the recomputation; build the stack on it.
#
# Write `ReversibleStack.apply(x1, x2, blocks)`, where `blocks` is a list of `(f, g)` pairs:
# it runs the coupling of each pair in turn, bottom to top, returns the top block's
# `(y1, y2)`, and saves only those two tensors, however many blocks there are. Backward
# returns the gradients of `x1` and `x2` and `None` for `blocks`; the parameters of every $f$
# and $g$ receive theirs in `.grad`, as in Exercise 3. The cell after yours compares your
# gradients with plain autograd's on stacks of 2 and 4 blocks, and shows what the meter
# counts after forward.
#
# Going down, each block rebuilds the outputs of the block below. What else must block $i$
# receive from the block above, and from which of its results?
#
# <details><summary><b>Hint</b></summary>
#
# Number the blocks $1, \dots, n$ from the bottom, block $i$ mapping $x^{(i)}$ to $y^{(i)}$,
# so that $x^{(i+1)} = y^{(i)}$. Backward is given $y^{(n)}$ (saved) and $\bar y^{(n)}$. At
# block $i$ it needs the pair $y^{(i)}$ and its gradient $\bar y^{(i)}$, and
#
# $$y^{(i)} = x^{(i+1)}, \qquad \bar y^{(i)} = \bar x^{(i+1)} :$$
#
# both are what the block above has just produced.
# </details>

# %% nbgrader={"grade_id": "answer_ReversibleStack", "solution": true}
class ReversibleStack(torch.autograd.Function):
    """The couplings of `blocks`, a list of (f, g) pairs, bottom to top, keeping only the top
    block's outputs for backward."""

    @staticmethod
    def forward(ctx, x1, x2, blocks):
        ### BEGIN SOLUTION
        ctx.blocks = blocks
        for f, g in blocks:
            x1 = x1 + f(x2)
            x2 = x2 + g(x1)
        ctx.save_for_backward(x1, x2)
        return x1, x2
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_y1, grad_y2):
        ### BEGIN SOLUTION
        y1, y2 = ctx.saved_tensors
        for f, g in reversed(ctx.blocks):
            with torch.no_grad():  # this block's inputs, the outputs of the block below
                x2 = y2 - g(y1)
                x1 = y1 - f(x2)
            x1, x2 = x1.requires_grad_(), x2.requires_grad_()
            with torch.enable_grad():
                z1 = x1 + f(x2)
                z2 = x2 + g(z1)
            torch.autograd.backward((z1, z2), (grad_y1, grad_y2))
            grad_y1, grad_y2 = x1.grad, x2.grad  # what the block below receives
            y1, y2 = x1.detach(), x2.detach()
        return grad_y1, grad_y2, None
        ### END SOLUTION


# %% tags=["skip-when-grading"]
def check_reversible_stack():
    """Your ReversibleStack against plain autograd, 2 blocks deep and 4: the gradients of x1,
    x2 and every parameter, and the bytes the meter counts after forward."""
    original = vars(ReversibleStack)["backward"]
    depth = [0]

    def guarded(ctx, *grads):  # a backward that leads back into its own node would never end
        if depth[0]:
            raise RuntimeError("ReversibleStack.backward ran inside itself: it backpropagated "
                               "a graph that leads back into its own node (a saved output?)")
        depth[0] += 1
        try:
            return original.__get__(None, ReversibleStack)(ctx, *grads)
        finally:
            depth[0] -= 1

    ReversibleStack.backward = staticmethod(guarded)
    torch.manual_seed(0)
    kept = {}
    try:
        for n in (2, 4):
            blocks = [tuple(nn.Sequential(nn.Linear(16, 16), nn.Tanh()).double() for _ in "fg")
                      for _ in range(n)]
            parameters = [p for pair in blocks for module in pair for p in module.parameters()]
            names = ["x1", "x2"] + [f"block {i + 1}'s {which}" for i, pair in enumerate(blocks)
                                    for which, module in zip("fg", pair)
                                    for _ in module.parameters()]
            x1, x2 = (torch.randn(8, 16, dtype=torch.float64, requires_grad=True) for _ in "12")
            h1, h2 = x1, x2
            for f, g in blocks:
                h1 = h1 + f(h2)
                h2 = h2 + g(h1)
            leaves = [x1, x2, *parameters]
            want = torch.autograd.grad(h1.square().sum() + h2.sum(), leaves)
            with ActivationMeter(parameters) as meter:
                y1, y2 = ReversibleStack.apply(x1, x2, blocks)
                kept[n] = meter.now / (8 * 16 * 8)  # in (8, 16) float64 tensors
                (y1.square().sum() + y2.sum()).backward()
            for name, leaf, w in zip(names, leaves, want):
                if leaf.grad is None or not torch.allclose(leaf.grad, w):
                    print(f"✗ {n} blocks: the gradient of {name} differs from plain "
                          f"autograd's{' (it is None)' if leaf.grad is None else ''}")
                    return
    except NotImplementedError:
        print("ReversibleStack is not written yet")
        return
    except Exception as error:  # shown, not raised: Run All goes on
        print(f"✗ ReversibleStack raised {type(error).__name__}: {str(error).splitlines()[0]}")
        return
    finally:
        ReversibleStack.backward = original
    print(f"{'✓' if kept[2] == kept[4] == 2 else '✗'} the gradients match plain autograd's; "
          f"kept after forward: {kept[2]:g} tensors for 2 blocks, {kept[4]:g} for 4 "
          "(the top block's y1 and y2 are 2)")


check_reversible_stack()

# %% [markdown]
# Constant in depth: one block's outputs, for the price of inverting every block on the way
# down, and of the rounding drift Exercise 3 mentions, which grows with the number of
# blocks.

# %% [markdown]
# ### A.2 · Every segment count, the price in work, and the order of the segments
#
# Three parts: your `checkpoint_sequential` on the 16-block MLP for every $k$ (memory, work
# and time), the explorer on 8 blocks, and the order of uneven segments.

# %% [markdown]
# #### Memory against the number of segments, 16 blocks
#
# The 16-block MLP from the start of the lesson again, this time through your
# `checkpoint_sequential` with every $k$ from 1 to 16 segments. For each $k$ the meter reports what
# is kept after forward and the peak during the whole step; a counter (`CountFlops`, from the
# grading library) reports the matrix-multiply FLOPs backward spends beyond a plain backward,
# the price of the recomputation, the same on every machine; and a clock measures the time of
# one whole step (forward and backward, the fastest of five), on your machine.
#
# **Predict, then run.** At $k = 16$, one block per segment, how much work does the
# recomputation add to a step, counted in forward passes of the whole model: none, one, or one
# per segment (16)? The cell after shows its table and plots once your prediction is written.

# %%
### BEGIN WORKED
predicted_extra_forwards = "one"
### LEARNER
predicted_extra_forwards = None  # "none", "one" or "one per segment"
### END WORKED

# %%
def step_memory(model, x, run):
    """(bytes kept after forward, peak bytes over forward and backward) for one step."""
    with ActivationMeter(model.parameters()) as meter:
        loss = run(model, x).square().mean()
        kept = meter.now
        loss.backward()
    return kept, meter.peak


def backward_flops(model, x, run):
    """Matmul FLOPs of one backward, counted (the same on every machine): a checkpointed
    segment's recomputation runs inside backward, so it is counted with it."""
    loss = run(model, x).square().mean()
    with CountFlops() as counter:
        loss.backward()
    return counter.total


def step_ms(model, x, runs, repeats=5):
    """Milliseconds of one step (forward and backward) for each run, the fastest of
    ``repeats``, the runs taken in turn so that a busy moment slows them all alike; on one
    thread, steadier on a shared machine."""
    best = dict.fromkeys(runs, math.inf)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(repeats):
            for name, run in runs.items():
                model.zero_grad(set_to_none=True)
                start = time.perf_counter()
                run(model, x).square().mean().backward()
                best[name] = min(best[name], time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
    return {name: 1000 * seconds for name, seconds in best.items()}


model = deep_mlp()
# A Function's output requires grad only if one of its inputs does (A.3, a first block on data).
x_deep = torch.randn(64, 128, requires_grad=True)
with CountFlops() as counter:
    model(x_deep)
forward_flops = counter.total  # one forward pass of the whole model
segment_counts = list(range(1, 17))
runs = {"no checkpointing": lambda m, h: m(h)}
runs.update({f"{k} segments": (lambda m, h, k=k: checkpoint_sequential(m, k, h))
             for k in segment_counts})


def show_memory_and_price():
    print(f"{'':>17} {'kept after forward':>19} {'peak during step':>17} {'step time':>10}")
    for name, (kept, peak) in memory.items():
        print(f"{name:>17} {kib(kept):>19} {kib(peak):>17} {times[name]:>7.2f} ms")

    fig, (ax_memory, ax_time) = plt.subplots(1, 2, figsize=(11, 4.4))
    kept = [memory[f"{k} segments"][0] / 1024 for k in segment_counts]
    peak = [memory[f"{k} segments"][1] / 1024 for k in segment_counts]
    ax_memory.plot(segment_counts, kept, "o-", label="kept after forward")
    ax_memory.plot(segment_counts, peak, "s-", label="peak during the step")
    ax_memory.axhline(memory["no checkpointing"][1] / 1024, color="k", ls="--",
                      label="no checkpointing")
    ax_memory.axvline(math.sqrt(len(model) * 2), color="grey", ls=":",
                      label=r"$k=\sqrt{n a}$, $a = 2$")
    ax_memory.set(xscale="log", xlabel="segments k", ylabel="activation KiB",
                  title="Activation memory and recomputation, 16 blocks")
    ax_memory.set_xticks([1, 2, 4, 6, 8, 16], ["1", "2", "4", "6", "8", "16"])
    ax_cost = ax_memory.twinx()  # the price: backward's FLOPs beyond a plain backward's
    recomputed = [(flops[f"{k} segments"] - flops["no checkpointing"]) / 1e6
                  for k in segment_counts]
    ax_cost.plot(segment_counts, recomputed, "^-", color="C3",
                 label="recomputed in backward (MFLOP, right axis)")
    ax_cost.set(ylabel="recomputation MFLOP, counted", ylim=(0, 1.3 * max(recomputed) + 1))
    handles = [h for ax in (ax_memory, ax_cost) for h in ax.get_legend_handles_labels()[0]]
    ax_memory.legend(handles=handles, fontsize=8, ncol=2, loc="upper center",
                     bbox_to_anchor=(0.5, -0.18))
    ax_time.plot(segment_counts, [times[f"{k} segments"] for k in segment_counts], "o-",
                 color="C2", label="checkpointed step")
    ax_time.axhline(times["no checkpointing"], color="k", ls="--", label="no checkpointing")
    ax_time.set(xscale="log", xlabel="segments k", ylabel="ms per step, measured here",
                title="Time of one step (forward and backward)", ylim=(0, None))
    ax_time.set_xticks([1, 2, 4, 6, 8, 16], ["1", "2", "4", "6", "8", "16"])
    ax_time.legend(fontsize=8)
    plt.tight_layout()
    plt.show()


try:
    memory = {name: step_memory(model, x_deep, run) for name, run in runs.items()}
    flops = {name: backward_flops(model, x_deep, run) for name, run in runs.items()}
    times = step_ms(model, x_deep, runs)
    extra = (flops["16 segments"] - flops["no checkpointing"]) / forward_flops
    counted = "none" if extra < 0.5 else "one" if extra < 1.5 else "one per segment"
    if written(predicted_extra_forwards):
        print(f"k = 16: the recomputation adds {extra:.2f} forward passes of matmul FLOPs")
        show_memory_and_price()
    else:
        print("the table and the plots show once your prediction is written")
    compare("work added at k = 16, in forward passes", predicted_extra_forwards, counted,
            who="the counter")
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# The peak follows $M(k)$ (inputs kept, growing with $k$, plus one segment rebuilt, shrinking),
# while the counted price stays flat: whatever the split, backward recomputes every block once,
# one forward pass in all (a little less if your last segment runs plainly), on top of a plain
# step's forward and backward (about three forward passes of matmul work). The clock on the
# right is your machine's: every checkpointed step sits above the plain one, and with blocks
# this small (tens of microseconds of arithmetic each) it rises
# with $k$ as well, since each segment adds fixed costs the counter does not see (one more
# `Function` call, a random-state copy, a module built in the loop). On large blocks those
# costs vanish beside the arithmetic and the clock follows the counter. (Where $k$ divides
# $n$, the meter reads one unit less than $M(k)$: a segment's input is also its first block's
# saved input, the same memory, counted once.)

# %% [markdown]
# #### The explorer, 8 blocks
#
# The explorer runs your `checkpoint_sequential` for every $k$ from 1 to $n = 8$ blocks:
# left, the meter's bytes; right, the matrix-multiply FLOPs of forward and backward. Which $k$
# peaks lowest, and is it the one $M(k)$ picks?
#
# `torch.utils.checkpoint.checkpoint_sequential` splits otherwise: each segment gets
# $\lfloor n/k \rfloor$ blocks and the last one the rest, which it runs plainly (your
# self-check rejects that split). At $k = 5$ that last segment holds 4 of the 8 blocks, and
# torch's peak, 384 KiB, is twice the best split's. With torch's own function, choose a $k$
# that divides $n$, where the two rules agree.

# %%
checkpointing_explorer(checkpoint_sequential, lambda: deep_mlp(depth=8), x_deep, segments=3,
                       cost="flops")

# %% [markdown]
# FLOPs are the same on every machine; time is not. To time forward and backward apart on
# yours, run `checkpointing_explorer(checkpoint_sequential, deep_mlp, x_deep, cost="time")`
# (all 16 blocks, 17 runs, a few seconds): it measures milliseconds, with a button to measure
# again.
#
# **Predict, then run: the order of the segments.** $k = 6$ does not divide 16: the blocks go
# in groups of 3, 3, 3, 3, 2, 2 or of 2, 2, 3, 3, 3, 3, with the same longest group, so $M(6)$
# is the same for both. In which order does backward rebuild the segments, and when is a
# segment's input no longer needed? Which split peaks lower? The cell after runs both splits of
# the 16-block MLP through your `CheckpointFunction` and shows the peaks once your prediction is
# written.

# %%
### BEGIN WORKED
predicted_lower_peak = "longer first"
### LEARNER
predicted_lower_peak = None  # "longer first", "longer last" or "same"
### END WORKED

# %%
def in_groups(sizes):
    """run(model, x) through CheckpointFunction, one group of blocks per size, in order."""
    def run(m, h):
        start = 0
        for size in sizes:
            h = CheckpointFunction.apply(m[start:start + size], h)
            start += size
        return h
    return run


ORDERS = {"longer first": (3, 3, 3, 3, 2, 2), "longer last": (2, 2, 3, 3, 3, 3)}
try:
    sixteen = deep_mlp()
    order_peaks = {order: step_memory(sixteen, x_deep, in_groups(sizes))[1]
                   for order, sizes in ORDERS.items()}
    lower = ("same" if len(set(order_peaks.values())) == 1
             else min(order_peaks, key=order_peaks.get))
    if written(predicted_lower_peak):
        for order, sizes in ORDERS.items():
            print(f"k = 6, groups {sizes} ({order}): peak {kib(order_peaks[order])}")
    else:
        print("the peaks show once your prediction is written")
    compare("the split that peaks lower at k = 6", predicted_lower_peak, lower,
            who="the meter")
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Backward rebuilds the last segment first and frees each segment's input as it leaves it, so
# long segments at the front are rebuilt when fewer inputs are left; $M(k)$ charges every input
# for the whole time the longest segment is rebuilt, and misses it. The contract accepts either
# order: which did yours use?
# </details>

# %% [markdown]
# ### A.3 · Yours and `torch.utils.checkpoint`, side by side
#
# #### The production tool
#
# In a real model, use PyTorch's own: `torch.utils.checkpoint.checkpoint(fn, *args,
# use_reentrant=False)` and `checkpoint_sequential(functions, segments, input,
# use_reentrant=False)` (on torch 2.13, leaving `use_reentrant` out still works but warns).
# The gradients agree with yours:

# %%
from torch.utils.checkpoint import checkpoint_sequential as torch_checkpoint_sequential


model, x = deep_mlp(depth=8, width=64), torch.randn(16, 64, requires_grad=True)


def gradients(run):
    model.zero_grad(set_to_none=True)
    x.grad = None
    run().square().mean().backward()
    return [x.grad.clone()] + [p.grad.clone() for p in model.parameters()]


try:
    ours = gradients(lambda: checkpoint_sequential(model, 4, x))
    theirs = gradients(lambda: torch_checkpoint_sequential(model, 4, x, use_reentrant=False))
    print("same gradients as torch.utils.checkpoint:",
          all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, theirs)))
    kept_ours = step_memory(model, x, lambda m, h: checkpoint_sequential(m, 4, h))[0]
    kept_theirs = step_memory(
        model, x, lambda m, h: torch_checkpoint_sequential(m, 4, h, use_reentrant=False))[0]
    print("kept after forward, ours:", kib(kept_ours), "· torch's:", kib(kept_theirs))
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# #### Three more uses
#
# Three uses that your `CheckpointFunction`'s contract does not mention, run through yours and
# through `torch.utils.checkpoint`. **Quick question.** Predict what yours does in each, before
# you run the cell:
#
# 1. `torch.autograd.grad(loss, x)` through your checkpoint: does the block's `weight.grad`
#    stay `None`, as `autograd.grad` promises?
# 2. Under `torch.autocast("cpu", dtype=torch.bfloat16)`, which dtype does the block's `Linear`
#    produce in forward, and which in the recomputation?
# 3. A second derivative through your checkpoint (`create_graph=True`, then differentiate
#    again): an error, the right numbers, or wrong ones?
#
# Write your three predictions below, then run the cell after.

# %%
predicted_weight_grad_stays_none = None  # True or False
predicted_dtypes = None  # e.g. (torch.bfloat16, torch.bfloat16)
predicted_second_derivative = None  # "error", "right" or "wrong"

# %%
from torch.utils.checkpoint import checkpoint

layer = nn.Linear(8, 8)
x = torch.randn(4, 8, requires_grad=True)
try:
    _ = torch.autograd.grad(CheckpointFunction.apply(layer, x).sum(), x)
    print("1. weight.grad after autograd.grad through yours:", None if layer.weight.grad is None
          else tuple(layer.weight.grad.shape))
    stayed_none = layer.weight.grad is None
    layer.weight.grad = layer.bias.grad = None
    _ = torch.autograd.grad(checkpoint(layer, x, use_reentrant=False).sum(), x)
    print("   ... through torch's (use_reentrant=False):   ", layer.weight.grad)

    dtypes = []
    layer.register_forward_hook(lambda module, inputs, output: dtypes.append(output.dtype))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = CheckpointFunction.apply(layer, x)
    y.float().sum().backward()
    print("2. Linear's output dtype, forward then recomputation:", dtypes)


    def cube_block(h):
        return h ** 3


    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    for name, run in [("yours", lambda h: CheckpointFunction.apply(cube_block, h)),
                      ("torch's", lambda h: checkpoint(cube_block, h, use_reentrant=False))]:
        first, = torch.autograd.grad((run(x) + x ** 2).sum(), x, create_graph=True)
        second, = torch.autograd.grad(first.sum(), x)
        print(f"3. second derivative of x³ + x² through {name}:", second.tolist(),
              " true:", (6 * x + 2).tolist())
        if name == "yours":
            yours_right = torch.allclose(second, 6 * x.detach() + 2)
    compare("1. weight.grad stays None", predicted_weight_grad_stays_none, stayed_none)
    compare("2. dtypes", predicted_dtypes, tuple(dtypes))
    compare("3. second derivative", predicted_second_derivative,
            "right" if yours_right else "wrong")
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# 1. Yours writes `weight.grad`: its backward calls `torch.autograd.backward`, which
#    accumulates into every leaf it reaches, whatever the outer call asked for. That side
#    effect is the price of giving parameters their gradients without listing them;
#    `torch.utils.checkpoint` with `use_reentrant=False` leaves `.grad` alone, and its
#    `use_reentrant=True` variant refuses `torch.autograd.grad` outright.
# 2. bfloat16 in forward, float32 in the recomputation: autocast is a thread-local state,
#    on inside the `with torch.autocast(...)` block, and backward runs after the block has
#    closed (as PyTorch recommends). Your backward does not record and restore it, so the
#    gradients belong to a float32 block, not to the bfloat16 one forward computed, silently.
#    `torch.utils.checkpoint` records the autocast state in forward and restores it for the
#    recomputation.
# 3. Under `create_graph=True` grad mode is on inside your backward, but the gradient it
#    returns is computed on the detached copies of the inputs, so nothing links it to the
#    caller's `x`: the checkpointed block's share of the second derivative is lost (here the
#    $6x$), and only the $x^2$ term's $2$ survives. Passing `create_graph=True` on to
#    `torch.autograd.backward` inside does not help (it still gives $[2, 2]$): the graph it
#    builds ends at those copies. Without the $x^2$ term, the second call would raise
#    "element 0 of tensors does not require grad" (or, with that `create_graph`, "appears to
#    not have been used in the graph"). `use_reentrant=False` supports double backward.
# </details>

# %% [markdown]
# #### A first block on data
#
# Every checkpoint so far ran on an `x` that requires grad. In a real model the first block's
# input is a batch of data, which requires none.
#
# **Quick question.** A body `Linear, GELU, Linear, GELU` (four parameters) is followed by a
# `head`, and the body is checkpointed with your `CheckpointFunction` on a batch
# `batch = torch.randn(16, 8)`. After
# `head(CheckpointFunction.apply(body, batch)).square().mean().backward()`, how many of the
# body's four parameters have a `.grad`? And
# `checkpoint_sequential(body, 2, batch).square().mean().backward()`, with no head: does it run,
# or raise? Write your predictions below, then run the cell after.

# %%
predicted_body_params_with_grad = None  # an int, 0 to 4
predicted_sequential_on_data = None     # "runs" or "raises"

# %%
def with_grad(module):
    return sum(p.grad is not None for p in module.parameters())


torch.manual_seed(0)
body = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8), nn.GELU())
head = nn.Linear(8, 1)
batch = torch.randn(16, 8)  # a batch of data: it requires no grad

try:
    h = CheckpointFunction.apply(body, batch)
    head(h).square().mean().backward()
    body_count = with_grad(body)
    shown = written(predicted_body_params_with_grad, predicted_sequential_on_data)
    if shown:
        print("output requires grad:", h.requires_grad, "· body parameters with a gradient:",
              body_count, "of 4 · head's:", with_grad(head), "of 2")
    body.zero_grad(set_to_none=True)
    try:
        checkpoint_sequential(body, 2, batch).square().mean().backward()
        sequential = "runs"
        if shown:
            print("checkpoint_sequential on data runs; body parameters with a gradient:",
                  with_grad(body), "of 4")
    except RuntimeError as error:
        sequential = "raises"
        if shown:
            print("checkpoint_sequential on data raises:", error)
    compare("body parameters with a gradient", predicted_body_params_with_grad, body_count)
    compare("checkpoint_sequential on data", predicted_sequential_on_data, sequential)
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `Function.apply` marks its output as requiring grad only if at least one tensor **input**
# does. The parameters `run_fn` uses are not inputs: `apply` never sees them, and forward
# records nothing. With data as the only tensor, the output is a plain tensor with no node, so
# the head's backward stops there: the head trains, the body's parameters get nothing, and no
# error says so. With no head, nothing in the loss requires grad, and `backward` raises
# "element 0 of tensors does not require grad". (A `checkpoint_sequential` that runs its last
# segment without a checkpoint runs instead, and only that segment's parameters get gradients.)
# </details>
#
# The usual cure, a dummy input that requires grad, is in A.5; what `torch.utils.checkpoint`'s
# two variants do with this body follows.

# %% [markdown]
# #### A first block on data, through torch's two variants
#
# What the two variants do with the body, head and batch of "A first block on data" (the quick
# question above), where yours gave the body nothing.

# %%
import warnings

for reentrant in (True, False):
    body.zero_grad(set_to_none=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = checkpoint(body, batch, use_reentrant=reentrant)
    head(h).square().mean().backward()
    print(f"torch's, use_reentrant={reentrant}: {with_grad(body)} of 4",
          *(f"(it warns: {w.message})" for w in caught))

# %% [markdown]
# The reentrant variant is a `Function` like yours: it warns, and the body still gets
# nothing. `use_reentrant=False` runs forward with autograd **on**, as an unchecked block
# would, so the block's graph reaches its parameters and the output requires grad through
# them; its saved-tensor hooks only swap what that graph keeps for placeholders, recomputed in
# backward.

# %% [markdown]
# ### ✎ A.4 · A checkpoint that keeps autocast's dtype
#
# Write `checkpoint_autocast(run_fn, *args)`: the result of
# `CheckpointFunction.apply(run_fn, *args)`, except that the recomputation runs under the
# autocast state forward ran under, the CPU's and CUDA's, as `torch.utils.checkpoint` does.
# Build it on your `CheckpointFunction`, leaving that class as it is. The cell after yours
# runs a `Linear` through it with autocast on (bfloat16) and off, and compares the dtypes of
# forward and of the recomputation, and the gradients with `torch.utils.checkpoint`'s.
#
# When must the state be read, and how does backward's call of `run_fn` get it?
# `torch.is_autocast_enabled` and `torch.get_autocast_dtype` take a device type (`"cpu"`,
# `"cuda"`): what does `torch.is_autocast_enabled()`, with no argument, say inside
# `torch.autocast("cpu", ...)`? Run it and see.

# %% nbgrader={"grade_id": "answer_checkpoint_autocast", "solution": true}
def checkpoint_autocast(run_fn, *args):
    """CheckpointFunction.apply(run_fn, *args), recomputing under forward's autocast state."""
    ### BEGIN SOLUTION
    cpu = torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")
    cuda = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")

    def run_as_in_forward(*inputs):  # read now, in forward; applied again in backward
        with torch.autocast("cpu", dtype=cpu[1], enabled=cpu[0]), \
                torch.autocast("cuda", dtype=cuda[1], enabled=cuda[0]):
            return run_fn(*inputs)

    return CheckpointFunction.apply(run_as_in_forward, *args)
    ### END SOLUTION


# %% tags=["skip-when-grading"]
def check_checkpoint_autocast():
    """Your checkpoint_autocast with autocast on (bfloat16) and off: the dtype the Linear
    produces in forward and in the recomputation, and the gradients against
    torch.utils.checkpoint's."""
    torch.manual_seed(0)
    linear = nn.Linear(8, 8)
    x_in = torch.randn(4, 8, requires_grad=True)
    for on in (True, False):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on):
            out = checkpoint(linear, x_in, use_reentrant=False)
        want = torch.autograd.grad(out.float().sum(), [x_in, linear.weight])
        x_in.grad = linear.weight.grad = linear.bias.grad = None
        seen = []
        handle = linear.register_forward_hook(lambda module, i, o: seen.append(o.dtype))
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on):
                out = checkpoint_autocast(linear, x_in)
            out.float().sum().backward()
        except NotImplementedError:
            print("checkpoint_autocast (or your CheckpointFunction) is not written yet")
            return
        except Exception as error:  # shown, not raised: Run All goes on
            print(f"✗ checkpoint_autocast raised {type(error).__name__}: "
                  f"{str(error).splitlines()[0]}")
            return
        finally:
            handle.remove()
        where = "under autocast" if on else "without autocast"
        if len(seen) != 2 or seen[0] != seen[1]:
            print(f"✗ {where}, the Linear ran in {' then '.join(map(str, seen))}: forward and "
                  "the recomputation should run in the same dtype")
            return
        if seen[0] != (torch.bfloat16 if on else torch.float32):
            print(f"✗ {where}, the Linear ran in {seen[0]} both times: it should run as the "
                  "caller's autocast state says")
            return
        if not all(torch.allclose(a, b) for a, b in zip((x_in.grad, linear.weight.grad), want)):
            print(f"✗ {where}: the gradients differ from torch.utils.checkpoint's")
            return
        if torch.is_autocast_enabled("cpu"):
            print("✗ autocast is still on after backward: the recomputation left it on")
            return
    print("✓ the Linear ran in bfloat16 in forward and in the recomputation under autocast, in "
          "float32 both times without it; the gradients match torch.utils.checkpoint's")


check_checkpoint_autocast()

# %% [markdown]
# <details><summary><b>In practice</b> (open when you have time)</summary>
#
# **Who writes the call.** Often not you. FSDP codebases wrap chosen blocks with
# `apply_activation_checkpointing` (from `torch.distributed.algorithms._checkpoint.
# checkpoint_wrapper`), which puts this same checkpoint around each; and `torch.compile`
# decides on its own which cheap activations to recompute in backward rather than keep, a
# trade you can push further with `torch._functorch.config.activation_memory_budget` (1.0,
# the default, favours speed; lower values recompute more). What you wrote is the mechanism
# underneath all of them.
#
# **The other trade: offloading.** Saved-tensor hooks have a production use besides meters
# and checkpoints. `torch.autograd.graph.save_on_cpu(pin_memory=True)` is a pair of them: `pack`
# copies each saved GPU tensor into (pinned) host memory, `unpack` copies it back to its device
# when backward reads it. Nothing is recomputed; the price is two copies of every activation
# over the link between GPU and host instead of an extra forward's FLOPs, so it suits tensors
# that are expensive to recompute and cheap to move. The same FSDP module has
# `offload_wrapper` beside `checkpoint_wrapper`, and the two combine.
#
# **Two more knobs of `torch.utils.checkpoint`.** `preserve_rng_state=True` (the default)
# stashes the random state in forward and restores it for the recomputation, as your
# `CheckpointFunction` does; `False` skips that copy (on a GPU, of each device's generator
# state) for blocks that draw no random numbers, and with a dropout inside gives gradients for
# a mask forward never drew (checked on torch 2.13: they differ from an unchecked run's).
# `context_fn` turns on **selective activation checkpointing**: a policy, built with
# `torch.utils.checkpoint.create_selective_checkpoint_contexts`, names ops whose outputs are
# **saved** in forward; only the others are recomputed. Large language model training commonly
# saves the matrix multiplies and recomputes the cheap element-wise ops. On torch 2.13, for a
# `Linear, GELU, Linear, GELU` block with `use_reentrant=False`, an op counter (a
# `TorchDispatchMode`) saw backward recompute `addmm` twice and `gelu` once with a plain
# checkpoint, and `addmm` never and `gelu` once with a policy that saves `addmm`. The last GELU
# is never recomputed: its backward needs its input, not its output, and by default
# (`early_stop=True`) the recomputation stops once every saved tensor backward asked for is
# back.
#
# **The allocator's measure, on a GPU.** `torch.cuda.reset_peak_memory_stats()` before the step
# and `torch.cuda.max_memory_allocated()` after it count every byte, activations, weights,
# gradients and temporary buffers alike. The weights' gradients are part of that peak whatever
# you checkpoint, so the cell after this block (run when a GPU is present) feeds 4096 rows
# through 256 features: 8 MiB of activations per block against 256 KiB of weights. With 256 rows
# through 1024 features the gradients would dominate and no variant would look better
# (`tools/bench_checkpointing.py` measures a bigger model).
#
# **A `pack` that holds its tensor leaks.** The `saved_tensors_hooks` documentation's rule,
# which the meter follows: what `pack` returns must not hold the tensor it was given, only
# `tensor.detach()` (the same memory, no history). An op that saves its own output (`tanh`,
# `sigmoid`) would otherwise close a loop, output → its node → the saved value → your object →
# that same output. A backward (without `retain_graph`) breaks that loop when it frees the saved
# tensors; nothing else does. A graph dropped without a backward (a forward that records a graph
# and throws it away, an evaluation run under grad) is then never freed, not even by
# `gc.collect()`: the memory leaks, and a meter built that way reports as kept what autograd
# had let go.
#
# **What recomputation does not replay: module state.** A checkpoint replays the random state,
# not a module's buffers. A
# `BatchNorm` in training mode updates its running statistics on every call, so a
# checkpointed one updates them twice per step: on torch 2.13 `num_batches_tracked` is 2 after
# one step with either `use_reentrant`, and the running mean has moved almost twice as far as
# without the checkpoint. (A reversible block whose backward inverts and then recomputes calls
# $f$ three times.) Keep such layers outside the checkpointed segments, or use a normalisation
# with no running state (`LayerNorm`, `GroupNorm`).
#
# - **DDP and a reentrant checkpoint.** A reentrant checkpoint (yours, or `use_reentrant=True`)
#   runs a backward inside backward, and DDP's hook that marks a parameter's gradient ready
#   fires inside it. With `find_unused_parameters=True` that fails: on torch 2.13 (one process,
#   `gloo`, a checkpointed `Linear`), both raised "Expected to mark a variable ready only once".
#   `static_graph=True`, or `use_reentrant=False`, ran the same step with the same gradient.
# - **A recomputation is not promised bit-identical on a GPU.** Some CUDA kernels are
#   non-deterministic (atomic additions), and with `torch.backends.cudnn.benchmark` on, the
#   recomputation may pick another algorithm; PyTorch's reproducibility notes name both, and
#   `torch.use_deterministic_algorithms(True)` with benchmark off as the cure, at a cost in
#   speed (stated from the documentation, not run here on a CPU). The gradient then belongs to a
#   forward a rounding error away. The non-reentrant checkpoint's `determinism_check="default"`
#   compares only the number of tensors the recomputation saves and their shapes, dtypes and
#   devices: on torch 2.13 it caught another branch that saved other tensors, and said nothing
#   when the values alone differed, or when another branch saved the same kinds of tensors.
#   `debug=True` adds to its error a trace of the ops each run did.
#
# </details>

# %%
# "The allocator's measure, on a GPU", from the block above: this cell runs only on a GPU.
if torch.cuda.is_available():
    cuda_model = deep_mlp(width=256).cuda()
    cuda_x = torch.randn(4096, 256, device="cuda", requires_grad=True)
    variants = {
        "no checkpointing": lambda: cuda_model(cuda_x),
        "yours, 4 segments": lambda: checkpoint_sequential(cuda_model, 4, cuda_x),
        "torch, 4 segments": lambda: torch_checkpoint_sequential(cuda_model, 4, cuda_x,
                                                                 use_reentrant=False),
    }
    for name, run in variants.items():
        cuda_model.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        run().square().mean().backward()
        torch.cuda.synchronize()
        print(f"{name:>18}: peak {(torch.cuda.max_memory_allocated() - base) / 2**20:7.1f} MiB "
              "above the model")
else:
    print("No GPU here: the saved-tensor meter above is the CPU's measure.")


# %% [markdown]
# ### A.5 · Four asides from the main path
#
# Each one runs something the main path only states, or takes a step further. None is needed
# for the exercises, and each uses only what the main path defined.
#
# #### Inside backward: is anything recorded?
#
# Lesson 04's quick question 1 again. The backward of `GradModeReports` below calls `fancy` on
# a fresh leaf that requires grad, once as it is and once inside `with torch.enable_grad():`.
# Does `fancy`'s output require grad, each time? Predict, then run.

# %%
predicted_records_in_backward = None       # True or False: fancy called as it is
predicted_records_under_enable_grad = None  # True or False: inside torch.enable_grad()

# %%
class GradModeReports(torch.autograd.Function):
    """The identity, whose backward reports whether fancy's ops record."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        leaf = torch.ones(3, requires_grad=True)
        seen["as it is"] = fancy(leaf).requires_grad
        with torch.enable_grad():
            seen["under enable_grad"] = fancy(leaf).requires_grad
        return grad_output


seen = {}
GradModeReports.apply(torch.ones(3, requires_grad=True)).sum().backward()
if written(predicted_records_in_backward, predicted_records_under_enable_grad):
    print("inside backward, fancy's output requires grad:", seen)
compare("records, as it is", predicted_records_in_backward, seen["as it is"])
compare("records, under enable_grad", predicted_records_under_enable_grad,
        seen["under enable_grad"])

# %% [markdown]
# Grad mode is off inside an ordinary backward, so nothing there is recorded unless you switch
# it on: the context manager `torch.enable_grad()` does that for the code inside its `with`
# block.

# %% [markdown]
# #### A forward that records "to be safe"
#
# `EagerFancy` is `RecomputedFancy` (the worked example) with its forward wrapping the same call
# in `with torch.enable_grad():` "to be safe", so that `fancy`'s ops record while it runs.
# `apply` then gives the output its own node, whose backward is the hand-written one. Once
# `apply` has returned, does the meter count only `x` for `EagerFancy`, as for
# `RecomputedFancy`?

# %%
predicted_eager_keeps_only_x = None        # True or False, for EagerFancy

# %%
class EagerFancy(RecomputedFancy):
    """RecomputedFancy, but its forward switches autograd on around fancy(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        with torch.enable_grad():
            return fancy(x)


x_fancy = torch.randn(1000, dtype=torch.float64, requires_grad=True)
with ActivationMeter() as meter:
    y = EagerFancy.apply(x_fancy)
    eager_kept = meter.now
if written(predicted_eager_keeps_only_x):
    print(f"{'EagerFancy':>16}: keeps {meter.now:>6} bytes for backward, "
          f"after a peak of {meter.peak} bytes inside forward")
compare("EagerFancy keeps only x", predicted_eager_keeps_only_x,
        eager_kept == x_fancy.numel() * x_fancy.element_size())

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `EagerFancy` ends up keeping only `x`, as `RecomputedFancy` does, but not for the same
# reason. Under `enable_grad` the same ops record their own graph and save $t$, $s$
# and `x` while they run: the peak is what plain autograd keeps. Then `apply` gives the output
# its own node in place of that graph's last one; nothing else refers to the graph, so it and
# what it saved are freed before `apply` returns. The price is paid inside forward: the time to
# record a graph no backward will use, and the peak memory of it.
#
# It is worse when the output is a **view** of a tensor made inside forward (return
# `fancy(x).view(-1)`, say): the view holds on to its base, the base to its node, and the whole
# graph stays, 24000 bytes here, even after backward, for as long as the output lives (make
# that change in `EagerFancy` and run its cell again to see it). So a checkpoint's forward
# leaves grad off, as `apply` set it (the rarer-mistakes table, A.6, lists it).
# </details>

# %% [markdown]
# #### A first block on data: a dummy input
#
# The body, head and batch of A.3's "A first block on data" (run its cells first), where yours
# gave the body nothing. The usual
# cure for a `Function`-based checkpoint: a dummy input that requires grad, which
# `run_fn` ignores.

# %%
body.zero_grad(set_to_none=True)
dummy = torch.ones((), requires_grad=True)
try:
    head(CheckpointFunction.apply(lambda h, _: body(h), batch, dummy)).square().mean().backward()
    print("yours, with a dummy input:", with_grad(body), "of 4")
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# A dummy 0-d tensor that requires grad makes your output require grad, for the price of one
# more argument, and of one more case for your backward: freeze the body as well (fine-tuning
# only the head) and the output it rebuilds requires no grad, yet the step must still run and
# train the head (the contract's parameters bullet; the grader checks it). PyTorch's reentrant
# checkpoint raises there ("none of output has requires_grad=True"); its non-reentrant one
# runs. (The caller could also call `batch.requires_grad_()` itself, and make backward compute
# a gradient for the data that nobody reads; code handed the batch must not: it is the caller's.) What PyTorch's own checkpoint does with the same
# body is in A.3 above ("Yours and `torch.utils.checkpoint`, side by side").

# %%
body.requires_grad_(False)  # fine-tuning the head only
head.zero_grad(set_to_none=True)
try:
    head(CheckpointFunction.apply(lambda h, _: body(h), batch, dummy)).square().mean().backward()
    print("frozen body, a dummy input: the step runs; the head has .grad:",
          head.weight.grad is not None)
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()
except RuntimeError as error:  # what the contract rules out: shown, not raised
    print("frozen body, a dummy input: backward raised:", str(error).splitlines()[0])
body.requires_grad_(True)

# %% [markdown]
# #### Dropout inside a reversible block
#
# Your backward calls $f$ again,
# and each call draws a new mask: no error, and a gradient for
# $x_2$ that belongs to another network. The fix is Exercise 1's: note the random state when
# forward calls $f$, and replay it, inside `fork_rng`, on every later call. Below it goes into
# a wrapper around $f$, so your block stays as it is. The Hugging Face Reformer solves the same
# problem another way: each layer draws a fresh seed in forward (`torch.seed()`, which reseeds
# the global generator) and sets it again in backward. That changes which masks the model
# draws, so Exercise 1's contract and rule 6 of the Function contract (a checkpoint draws
# exactly what the unchecked model draws) rule it out there.

# %%
class SameMask(nn.Module):
    """Calls `inner` with the random state of its first call, every time."""

    def __init__(self, inner):
        super().__init__()
        self.inner, self.state = inner, None

    def forward(self, h):
        if self.state is None:  # forward's call: note where the generator is
            self.state = torch.get_rng_state()
            return self.inner(h)
        with torch.random.fork_rng(devices=[]):  # a later call: the same draw, nobody rewound
            torch.set_rng_state(self.state)
            return self.inner(h)


torch.manual_seed(0)
f = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5)).double()
g = nn.Linear(6, 6).double()
x1 = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
x2 = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)


def grad_x2(run):
    x2.grad = None
    torch.manual_seed(1)
    y1, y2 = run()
    (y1.sum() + 2 * y2.sum()).backward()
    return x2.grad


plain = grad_x2(lambda: (lambda y1: (y1, x2 + g(y1)))(x1 + f(x2)))
try:
    print("dropout in f, x2's gradient right:",
          torch.allclose(plain, grad_x2(lambda: ReversibleCoupling.apply(x1, x2, f, g))))
    print("f wrapped in SameMask, x2's gradient right:", torch.allclose(
        plain, grad_x2(lambda: ReversibleCoupling.apply(x1, x2, SameMask(f), g))))
except NotImplementedError:  # a stub: said, not raised, so Run All goes on
    not_written()

# %% [markdown]
# A `SameMask` serves one step: the next forward needs a new one (or `state = None`), or
# every step would draw the same mask.

# %% [markdown]
# ### A.6 · Common mistakes, and a misconception
#
# Each row is a mistake your self-checks name when you make it.
#
# | Mistake | What happens | Ask yourself |
# |---|---|---|
# | recompute, then `torch.autograd.grad(outputs, inputs=inputs)` | the block's parameters silently get **no gradient**: `.grad` stays `None` and they never train | which of the two calls writes `.grad` on leaves you did not list? |
# | recompute without restoring the random state | dropout draws a new mask: gradients for a different network | which mask did forward draw, and what decides it? |
# | restore inside `with torch.random.fork_rng():`, recompute after the `with` block | closing the block puts the caller's state back, so `run_fn` draws from it: a new mask | which state is in force on the line after the `with` block? |
# | `torch.set_rng_state(...)` without `fork_rng` | the generator is rewound for everybody after backward: random numbers repeat | what does the caller's next draw see once your backward returns? |
# | recompute without `torch.enable_grad()` | `element 0 of tensors does not require grad` | is autograd on inside backward? |
# | recompute on the saved tensors themselves | the rebuilt graph runs into the caller's graph and writes their `.grad` | where should the rebuilt graph end? |
# | forget the `None` for `run_fn` | `returned an incorrect number of gradients` | how many inputs did forward take? |
# | $\lceil n/k \rceil$ layers per segment | fewer segments than asked: 7 layers in 6 segments become 4 | how many segments do $\lceil 7/6 \rceil = 2$ layers each make? |
# | $\lfloor n/k \rfloor$ layers per segment and the rest in the last, as torch's | no error, right gradients, and one segment up to $k/2$ times as long as the best split's: 16 layers in 9 segments rebuild 8 layers at once | how many layers are left over, and how many segments could take one each? |
# | `def run(h)` in the loop reads `start` and `end` | late binding: in backward every segment recomputes the layers of whatever `start` and `end` hold after the loop: the last segment's (a `zip` loop), or none (`start = end` at the end of the body) | when does the function read `start` and `end`: when defined, or when called? |
#
# Rarer ones, each also named by your self-checks, follow. And one misconception:
#
# **"Recompute, then `torch.autograd.grad(outputs, inputs=input)`, is a complete checkpoint."**
# It is not, and it fails quietly: everything runs, the loss even goes down (the layers
# outside the block still train), and the layers inside never change, because
# `torch.autograd.grad` gives nothing to the parameters it was not asked about. Your
# self-check tests exactly this.

# %% [markdown]
# **Late binding, in three lines.** The table's last row comes from Python itself. Predict what
# the three functions below return when called after their loop, then run it.

# %%
predicted_calls = None  # a list of three numbers

# %%
functions = [lambda: i for i in range(3)]  # three functions, defined in a loop
compare("[f() for f in functions]", predicted_calls, [f() for f in functions], who="Python")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Each function reads `i` when it is called, not when it was defined, and by then the loop has
# left `i` at 2. A `run_fn` that reads the loop's `start` and `end` in backward reads whatever
# they hold when the loop has finished, for every segment. A default argument
# (`def run(h, start=start, end=end)`), `functools.partial`, or a module built per group
# (`nn.Sequential(*layers[start:end])`) fixes each segment when its function is made.
# </details>

# %% [markdown]
# #### Rarer mistakes
#
# Each row is a mistake your self-checks also name when you make it.
#
# | Mistake | What happens | Ask yourself |
# |---|---|---|
# | `torch.autograd.grad` (or `backward(inputs=...)`) over every parameter of the block, listed by hand | a frozen parameter (`requires_grad=False`, as in fine-tuning) among them makes backward raise | does every tensor you ask a gradient for require grad? |
# | `torch.autograd.backward` on the rebuilt output, whatever it is | every parameter frozen and the only argument that requires grad a dummy `run_fn` ignores: the rebuilt output requires no grad, and backward raises `element 0 of tensors does not require grad` | does the output you rebuilt require grad in every case the contract lists? |
# | random state recorded after `run_fn(*args)` has run | the recomputation draws the mask that comes *after* the forward's | at which moment was the generator where forward's draw began? |
# | save the seed (`torch.initial_seed()`) and replay it with `torch.manual_seed` in backward | the recomputation starts where the seed starts, not where forward's `run_fn` started: every draw since seeding (earlier dropout, data shuffling) is missed, so the mask is another one | is the generator still where the seed put it when your block runs? |
# | restore the random state only when `run_fn` holds an `nn.Dropout` | a block that draws with `F.dropout` or `torch.rand` gets new numbers in the recomputation: gradients for another network, no error | can your backward see every op in `run_fn` that draws? |
# | fresh leaves cast with `.float()` or `.to(grad_output.dtype)` | not forward's computation: a layer refuses the mix of dtypes, or a float64 argument is recomputed in float32 (`grad_output` has the output's dtype, not the arguments') and its gradient loses precision, or a bfloat16 one is recomputed in float32 and its gradient is not a plain run's, with no error | in which dtype did forward see each argument? |
# | `requires_grad_()` on every tensor argument | error for a boolean mask or an index tensor | can every tensor argument require grad? |
# | run `run_fn` (or a reversible block's $f$ and $g$) under `torch.enable_grad()` in forward "to be safe" | forward records and saves a whole graph that it then throws away: time wasted and the peak of an unchecked block; if `run_fn` returns a view, that graph is kept while the output lives: no memory saved at all | what is forward's grad mode for? |
# | group bounds in floating point, `int(i * (n / k))` | right for most $(n, k)$, but $11 \cdot (15/11)$ is 14.999999999999998 in float64: 15 layers in 11 segments never run the last | what does `int()` make of a float one ulp below 15? |
# | a reversible backward that inverts in place, into a saved output, or frees the saved outputs' storage, to save memory | no error, right gradients, and the caller's `y2` now holds $x_2$ (or freed memory): a saved output shares its memory with the tensor forward returned | whose memory does `ctx.saved_tensors` hand you? |
# | a backward that backpropagates a saved output (or a graph built from one under grad) | backward re-enters its own node without end: memory grows until it or the threads run out, then an error or a dead kernel | which tensors did you build from fresh leaves? |
# | `checkpoint_sequential` calls `zero_grad()` or `.train()` on the caller's layers "to start clean" | an earlier micro-batch's gradients vanish, or an `eval()` stack runs its dropout | whose stack is it, and what state did the caller leave it in? |
