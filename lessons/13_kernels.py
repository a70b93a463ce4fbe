# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 13 · Your own kernels: Triton and C++ behind a custom operator
#
# **About 135 minutes** for the main path: about 30 to read and run it, and about 105 for its
# two exercises, each a derivation, a design and a kernel of your own. The optional appendix
# after the Summary takes about 70 more.
#
# The Functions people ship for speed do not compose PyTorch ops: Liger-Kernel's SwiGLU and
# RMSNorm, FlashAttention and Unsloth's layers are **Triton or CUDA kernels behind an autograd
# Function**. A fused kernel reads its inputs once and writes its output once, where
# `F.silu(a) * b` writes and reads a temporary in between; on a GPU, where such ops wait on
# memory, that is the speed-up. Autograd knows nothing of a kernel: its backward is yours to
# derive, and to write as a kernel too.
#
# By the end of this lesson you can:
# 1. read and write a Triton kernel: programs, blocks, masks, `tl.constexpr`, and a reduction
#    across programs;
# 2. run it on CPU in Triton's interpreter, and say where that is slow or not faithful;
# 3. put forward and backward kernels behind a `torch.library.custom_op` with `register_fake`
#    and `register_autograd`, checked by `opcheck` and `torch.compile(fullgraph=True)`.
#
# Exercises: **✎ 1 `silu_mul`** (SwiGLU's gate) and **✎ 2 `rms_norm_rows`**. The appendix
# (printing from a kernel, an unmasked load, `triton_op`, `torch.export`, speed, int32 offsets,
# a C++ kernel) is never graded.
#
# This lesson needs `triton` (and `ninja` for the C++ section): `make install` brings both;
# elsewhere the cell below installs whichever is missing
# (`pip install triton==3.9.0 ninja==1.13.2`).

# %% nbgrader={"locked": true}
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import time
import warnings

import torch

LESSON_PACKAGES = {"triton": "triton==3.9.0", "ninja": "ninja==1.13.2"}  # as checked
missing = [pin for module, pin in LESSON_PACKAGES.items()
           if importlib.util.find_spec(module) is None]
if missing:
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *missing])
    if installed.returncode != 0:
        raise ModuleNotFoundError(f"Lesson 13 needs {' and '.join(missing)}, which pip could not "
                                  f"install here: pip install {' '.join(missing)}, then restart "
                                  "the kernel")
    importlib.invalidate_caches()
    print(f"Installed {' and '.join(missing)} with pip; the lesson goes on as usual.")
if shutil.which("ninja") is None and importlib.util.find_spec("ninja") is not None:
    import ninja  # load_inline runs `ninja` from PATH, which may not hold the kernel's scripts

    os.environ["PATH"] = ninja.BIN_DIR + os.pathsep + os.environ.get("PATH", "")
if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # no GPU: run kernels in Triton's interpreter

import torch.nn.functional as F
import triton
import triton.language as tl
from torch.utils._python_dispatch import TorchDispatchMode

from autograder import quick_check, self_check
from autograder.exercises.lesson13_kernels.steps import (check_rms_steps, check_silu_design,
                                                         check_silu_steps)
from autograder.predictions import same_answer, written
from widgets import kernel_grid_view


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
_ = torch.manual_seed(0)
print("Triton", triton.__version__, "|", "compiler: kernels run on the GPU"
      if DEVICE == "cuda" else "interpreter (TRITON_INTERPRET=1): kernels run on CPU, in NumPy")

# %% [markdown]
# ## Two ways to run a Triton kernel
#
# On a GPU, `@triton.jit` **compiles** a Python function the first time it is called with new
# argument types and constants. Without a GPU, the cell above set `TRITON_INTERPRET=1` before
# `import triton`, and the same decorator runs the kernel in Triton's **interpreter**: the
# programs of a launch run one after the other, in Python, with NumPy arrays for the blocks.
# The same operations in the same order (float64 works, `print` works), but hundreds of times
# slower than torch's ops, so keep tensors small; and not for **bfloat16** arithmetic, which the
# interpreter computes on the values' raw bits: convert after loading, `x.to(tl.float32)`.
# Running programs one at a time also hides **races** ("The grid" says how).
#
# ## Triton's model: programs over blocks
#
# A kernel is launched on a **grid** of programs, `kernel[grid](args...)`; each finds its number
# with `tl.program_id(0)` and works on one **block** at once: `tl.arange(0, BLOCK)` is a vector
# of `BLOCK` lane indices, a power of two known when the kernel compiles, so a `tl.constexpr`
# argument. Tensors arrive as **pointers** to their first element; `ptr + offsets` is a block of
# pointers, `tl.load` reads them, `tl.store` writes. A size that is not a multiple of the block
# leaves the last program lanes past the end: a **mask** switches them off. Pointers know nothing
# of strides: the kernels here call `.contiguous()` on the host first (free for a contiguous
# tensor, a full copy otherwise; passing strides avoids it).
#
# Drag the sliders: 10 elements in blocks of 4 take `cdiv(10, 4) = 3` programs, the last with
# two lanes masked.

# %%
kernel_grid_view(n=10, block=4)

# %% [markdown]
# ## Worked example: a sum of squares, a reduction behind a custom operator
#
# $s = \sum_i x_i^2$: one tensor in, one number out. No program sees the whole tensor, and
# programs that run at once cannot wait for each other, so a sum across programs is partials
# reduced afterwards (or atomic adds). Here **one program per block** of 128 elements stores
# **one partial sum**, `tl.sum` of its block's squares, and the host adds the `cdiv(n, 128)`
# partials up. The program's number is made int64 before it is multiplied, so the offsets
# cannot wrap past $2^{31}$. (A kernel may also loop, `for i in range(lo, hi)` with bounds
# known only when it runs, carrying values from one iteration to the next; this one needs none.)
#
# Around the kernel, a `custom_op` with `register_fake` (an output's metadata, for the tracers
# of `torch.compile`, `torch.export` and `opcheck`) and `register_autograd`. This op's glue is
# the simplest there is: one output, a backward of composed torch ops. Exercise 1's is not; its
# glue is yours to design, not to copy from here.
#
# A masked load needs `other` when its lanes are added up (a masked-off lane is undefined
# without it; the interpreter happens to give 0). Half precision would go wrong unconverted:
# a float16 square overflows from 256 on (past 65504), and the interpreter's bfloat16
# arithmetic is wrong; so the kernel converts each block to its partials' dtype (float32,
# float64 for float64 input). Exercise 1's kernels have no buffer in that dtype to
# take it from: how will they tell the input dtypes apart?
#
# The cell records which kind of tensor the operator's body and the registered backward are
# handed, eagerly and while `torch.compile` traces: watch the second line it prints.

# %%
SUM_BLOCK = 128


@triton.jit
def sum_of_squares_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    """This program's partial sum of x^2 over its one block."""
    program = tl.program_id(0).to(tl.int64)  # int64: the offsets never wrap
    offsets = program * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n  # which lanes fall inside the tensor
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)  # masked-off lanes: other
    x = x.to(partial_ptr.dtype.element_ty)  # float32 or float64
    tl.store(partial_ptr + program, tl.sum(x * x, axis=0))  # one partial per program


def blocks(n):
    """The grid: one program per block of SUM_BLOCK elements (one, for an empty tensor)."""
    return (max(1, triton.cdiv(n, SUM_BLOCK)),)


@torch.library.custom_op("autograd_course::sum_of_squares", mutates_args=())
def sum_of_squares(x: torch.Tensor) -> torch.Tensor:
    handed.append(("forward body", type(x).__name__))  # which tensors reach the kernel
    x = x.contiguous()  # the kernel reads flat memory
    partials = torch.zeros(blocks(x.numel()), device=x.device,
                           dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)
    if x.numel():  # an empty tensor launches nothing: its sum is 0
        sum_of_squares_kernel[blocks(x.numel())](x, partials, x.numel(), BLOCK=SUM_BLOCK)
    return partials.sum().to(x.dtype)  # the sum across programs, on the host


@sum_of_squares.register_fake
def _(x):
    return x.new_empty(())  # a 0-d tensor of x's dtype, on x's device


def sum_of_squares_setup_context(ctx, inputs, output):
    x, = inputs
    ctx.save_for_backward(x)  # the output is not needed


def sum_of_squares_autograd(ctx, grad_output):
    x, = ctx.saved_tensors
    handed.append(("backward", type(x).__name__))
    return 2 * grad_output * x  # composed ops; one gradient: one input


sum_of_squares.register_autograd(sum_of_squares_autograd,
                                 setup_context=sum_of_squares_setup_context)

handed = []  # (who, type of tensor it was handed), appended by the two functions above
x = torch.randn(1000, dtype=torch.float64, device=DEVICE, requires_grad=True)
sum_of_squares(x).backward()
print("eager forward and backward were handed:", handed)
handed.clear()
compiled = torch.compile(lambda x: sum_of_squares(x * 2).sqrt(), fullgraph=True,
                         backend="aot_eager")
compiled(x).backward()
print("torch.compile, its trace and its run:   ", handed)
print("forward matches x.square().sum():",
      torch.allclose(sum_of_squares(x), x.square().sum()))
print("gradcheck (float64, 10 elements):", torch.autograd.gradcheck(
    sum_of_squares, (x[:10].detach().requires_grad_(),)))
torch.library.opcheck(sum_of_squares, (x[:50].detach().requires_grad_(),))
print("opcheck: schema, fake tensor, autograd registration and AOT dispatch all pass")
print("torch.compile(fullgraph=True) matches eager:",
      torch.allclose(compiled(x), sum_of_squares(x * 2).sqrt()))
for n in (1000, 100_000):
    print(f"n = {n}: {blocks(n)[0]} programs, one per block; {blocks(n)[0]} partials to add")
big = torch.randn(100_000, device=DEVICE)
print("n = 100000 matches x.square().sum():",
      torch.allclose(sum_of_squares(big), big.square().sum()))

# %% [markdown]
# Under `torch.compile` the operator's body was handed real tensors only: the compiler asks
# `register_fake` for its output instead. The registered backward was traced with a
# `FunctionalTensor`, a wrapper over a fake tensor with no memory behind it; composed torch ops
# trace through it. (`backend="aot_eager"` traces as the default backend does, then runs the
# graphs eagerly instead of compiling C++.)

# %% [markdown]
# ## ✎ Exercise 1 · `silu_mul`, SwiGLU's gate
#
# Llama-style MLPs compute `down(silu(gate(x)) * up(x))`. Liger-Kernel fuses the middle,
# $y = \mathrm{silu}(a)\, b$ with $\mathrm{silu}(a) = a\,\sigma(a)$, into one kernel forward and
# one backward. Derive $\partial L/\partial a$ and $\partial L/\partial b$ from
# $g = \partial L/\partial y$ (silu is lesson 04's Swish at $\beta = 1$), then:
#
# 1. Which quantity do the two gradients share, so that the kernel computes it once?
# 2. How few exponentials per element can the backward kernel get away with?
#
# **Check one step live.** At $a = -2$, $b = 3$, what is $\partial y/\partial a$, a number from
# your derivation (no autograd, no `F.silu`)? Write it and your answers to the two questions
# (question 1 as an expression in $a$, $b$ and $g$) in the next cell, and run it.

# %%
### BEGIN WORKED
my_dy_da = -0.2724  # b s (1 + a (1 - s)) at a = -2, b = 3, s = sigmoid(-2) = 0.1192
my_shared = "sigmoid(a)"  # both gradients need it; silu(a) = a * sigmoid(a) is one product
my_exps_per_element = 1  # exp(-a), inside sigmoid(a)
### LEARNER
my_dy_da = None  # dy/da at a = -2, b = 3: a number, 4 decimals
my_shared = None  # question 1: an expression in a, b and g, e.g. "a * b + g"
my_exps_per_element = None  # question 2: a whole number
### END WORKED

check_silu_steps(my_dy_da, my_shared, my_exps_per_element)  # autograd's dy/da, and named slips

# %% [markdown]
# <details><summary><b>Hint 1 · a question</b></summary>
#
# $y$ is a product of two factors, and only one of them depends on $a$. What does
# $\partial L/\partial b$ need, then, and which quantity do both gradients share?
# </details>
#
# <details><summary><b>Hint 2 · the key step</b></summary>
#
# $\mathrm{silu}(a) = a\,\sigma(a)$ is a product too. What is $\sigma'$ in terms of $\sigma$
# (lesson 01), and can you factor $\sigma(a)$ out of the product rule's sum? For the kernel: in
# float32, which of $1/(1 + e^{-a})$ and $e^{a}/(1 + e^{a})$ is still finite at $a = 95$?
# </details>
#
# Then turn `silu_mul(a, b)` below, for `a` and `b` of the same shape, into the custom operator
# `autograd_course::silu_mul`, its kernels and every registration in that one cell. Both passes
# are elementwise: the grid, the block and the mask are yours. The backward is a kernel too,
# which reads two inputs and a gradient and writes two gradients. Design it before writing it:
#
# 1. The worked example printed what its operator's body and its registered backward were
#    handed, eagerly and under `torch.compile`. Where, then, can the backward's kernel launch?
# 2. What does that place take and return, and what do the tracers need to know about it?
# 3. What does `setup_context` save, and which tensors can reach the backward non-contiguous?
#
# Answer question 3's first half and question 1 in the next cell: it checks what you save
# against your derivation, and where you launch against what the worked example printed.

# %%
### BEGIN WORKED
my_saved = ("a", "b")
my_backward_launch = "in a custom operator of its own, which the registered backward calls"
### LEARNER
my_saved = None  # what setup_context saves for backward: some of "a", "b", "y", e.g. ("y",)
my_backward_launch = None  # question 1, in a few words: what launches the backward's kernel
### END WORKED

check_silu_design(my_saved, my_backward_launch)  # what you save; where the kernel can launch

# %% [markdown]
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - **one** forward kernel and **one** backward kernel, each launched once, the backward
#   computing the gradients needed in a single pass over memory;
# - each kernel behind a `torch.library.custom_op` (not `triton_op`) with a fake
#   implementation, and an autograd registration on `silu_mul`: `opcheck` and
#   `torch.compile(fullgraph=True)` pass;
# - the arithmetic in your kernels (the host only allocates, views, copies and casts); float16
#   and bfloat16 computed in float32, every product included, and returned in the input's dtype;
# - `setup_context` keeps nothing beyond the inputs' own memory (no copy, no output); finite
#   wherever silu is, and each gradient a tensor of its own.
#
# Rule 1's "every shape" stops short of tensors past $2^{31}$ elements here: int64 offsets, as
# in the worked example, are taught but not graded.
#
# Re-running the cell redefines the operators: re-run the cells that use them too. The
# self-check takes tens of seconds on a CPU, where every one of its checks runs your kernels in
# Triton's interpreter; while you iterate, `quick_check("silu_mul", silu_mul)` in a scratch
# cell compares values and gradients on one small input in about a second.

# %% nbgrader={"grade_id": "answer_silu_mul", "solution": true}
def silu_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b by your Triton kernels, as the custom operator autograd_course::silu_mul."""
    ### BEGIN SOLUTION
    a, b = a.contiguous(), b.contiguous()
    y = torch.empty_like(a)
    silu_mul_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, y, a.numel(), BLOCK=BLOCK)
    return y


# the function form of the decorator; the kernels are found when silu_mul is called
silu_mul = torch.library.custom_op("autograd_course::silu_mul", silu_mul, mutates_args=())
BLOCK = 1024  # the block of Triton's vector-add tutorial


@triton.jit
def silu_mul_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = silu(a) * b on one block."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)  # past 2**31 too
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if a.dtype != tl.float64:
        a, b = a.to(tl.float32), b.to(tl.float32)
    y = a / (1 + tl.exp(-a)) * b
    tl.store(y_ptr + offsets, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def silu_mul_backward_kernel(grad_ptr, a_ptr, b_ptr, grad_a_ptr, grad_b_ptr, n,
                             BLOCK: tl.constexpr, NEED_A: tl.constexpr, NEED_B: tl.constexpr):
    """The gradients of y = silu(a) * b that are needed, in one pass over memory."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    grad = tl.load(grad_ptr + offsets, mask=mask)
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask)
    if a.dtype != tl.float64:
        grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)
    sigmoid = 1 / (1 + tl.exp(-a))
    if NEED_A:  # constexpr: a gradient nobody asked for is never computed nor stored
        grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))  # d silu/da = s (1 + a (1 - s))
        tl.store(grad_a_ptr + offsets, grad_a.to(grad_a_ptr.dtype.element_ty), mask=mask)
    if NEED_B:
        tl.store(grad_b_ptr + offsets, (grad * a * sigmoid).to(grad_b_ptr.dtype.element_ty),
                 mask=mask)


@silu_mul.register_fake
def _(a, b):
    return torch.empty_like(a, memory_format=torch.contiguous_format)


@torch.library.custom_op("autograd_course::silu_mul_backward", mutates_args=())
def silu_mul_backward(grad: torch.Tensor, a: torch.Tensor, b: torch.Tensor, need_a: bool,
                      need_b: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(grad_a, grad_b); a gradient not needed comes back empty, never computed."""
    grad, a, b = grad.contiguous(), a.contiguous(), b.contiguous()
    grad_a, grad_b = _backward_outputs(a, b, need_a, need_b)
    silu_mul_backward_kernel[(triton.cdiv(a.numel(), BLOCK),)](
        grad, a, b, grad_a, grad_b, a.numel(), BLOCK=BLOCK, NEED_A=need_a, NEED_B=need_b)
    return grad_a, grad_b


def _backward_outputs(a, b, need_a, need_b):
    """Contiguous gradients like a and b, or an empty tensor for one not needed."""
    return (torch.empty_like(a, memory_format=torch.contiguous_format) if need_a
            else a.new_empty(0),
            torch.empty_like(b, memory_format=torch.contiguous_format) if need_b
            else b.new_empty(0))


@silu_mul_backward.register_fake
def _(grad, a, b, need_a, need_b):
    return _backward_outputs(a, b, need_a, need_b)


def silu_mul_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def silu_mul_autograd(ctx, grad_output):
    a, b = ctx.saved_tensors
    need_a, need_b = ctx.needs_input_grad
    grad_a, grad_b = silu_mul_backward(grad_output, a, b, need_a, need_b)
    return grad_a if need_a else None, grad_b if need_b else None


silu_mul.register_autograd(silu_mul_autograd, setup_context=silu_mul_setup_context)
### END SOLUTION


# %% nbgrader={"grade_id": "silu_mul", "grade": true, "points": 3}
self_check("silu_mul", silu_mul)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("silu_mul", silu_mul)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours, after your self-check is green</b></summary>
#
# With $s = \sigma(a)$: $\partial L/\partial b = g\,a\,s$ (silu itself) and
# $\partial L/\partial a = g\,b\,s\,\big(1 + a(1 - s)\big)$, from
# $\frac{d}{da}\,a\,s = s + a\,s(1 - s)$. One exponential serves both.
#
# The operator's body is handed real tensors, the registered backward a `FunctionalTensor`
# while `torch.compile` traces, so the backward kernel launches inside an operator of its own
# (`silu_mul_backward(grad, a, b, need_a, need_b)`), which the registered backward calls with
# `ctx.needs_input_grad`. It returns `tuple[torch.Tensor, torch.Tensor]`, two tensors each
# allocated for itself (one tensor holding both would hand autograd two views of one buffer), an
# empty one for a gradient not needed, which the kernel (its flags `tl.constexpr`) neither
# computes nor stores, and the registered backward returns `None` there; its fake returns the
# same. `setup_context` saves `a` and `b`; `grad_output` and the saved inputs can arrive
# non-contiguous, so the backward operator makes all three contiguous.
# </details>
#
# ## The grid
#
# The **grid** follows what one program must see. `silu_mul` needs no neighbours: a **flat
# grid** of `cdiv(n, BLOCK)` programs. Exercise 2's `rms_norm_rows` is not elementwise: each
# $y_j$ of a row needs the sum of that row's squares.

# %% [markdown]
# Programs that run at once and store into one shared address **race**: on a GPU whichever
# store lands last wins, and a load, add and store back loses updates. The interpreter hides
# it, so the grader, on CPU, refuses any address two programs of one launch write with plain
# stores (the appendix shows one). Atomic adds (`tl.atomic_add`) lose no update, but a GPU
# applies them in whatever order programs arrive, so a float sum's last bits change from run to
# run.

# %% [markdown]
# ## ✎ Exercise 2 · `rms_norm_rows`, a reduction per row
#
# RMSNorm normalises each row of $x$ of shape $(\dots, D)$:
# $r = 1/\sqrt{\frac1D \sum_j x_j^2 + \varepsilon}$, $y_j = x_j\, r\, w_j$. Lesson 10 derived its
# backward with composed ops; here the question is what one program can compute from the rows
# it sees. Work out:
#
# 1. $\partial L/\partial x_j$ for one row, in closed form, from $g$, $w$, $\hat x = x\,r$ and
#    $r$. Which sum does it need, and does the row's program have it?
# 2. $\partial L/\partial w_j$: the weight is shared by every row, and programs cannot add into
#    one shared row (the race above). Where does each program put its share, who adds the
#    shares up, and when? How many programs does your backward launch, and which rows does
#    each one take? Size your choice: how big is its buffer of shares at 1,000 rows, and at a
#    million?
#
# **Check one step of each live.** For step 1, the row $x = (1, 2, 3)$, $w = (1, 0.5, 2)$,
# $\varepsilon = 0$: what is $\partial y_0/\partial x_1$ (`y[0]` against `x[1]`)? For step 2,
# how many partial rows of the weight gradient does your layout store at 1,000 rows
# (`my_partials_1k`) and at a million (`my_partials_1m`)? And what will `setup_context` keep
# (`my_rms_saved`: each tensor by name, marked `"input"` or sized in `rows` and `D`)? Write
# them in the next cell and run it: it sizes your buffer against $x$, and what you keep
# against the contract's bound below.

# %%
### BEGIN WORKED
my_dy0_dx1 = -0.0661  # x_0 w_0 dr/dx_1 = -x_0 w_0 r^3 x_1 / D: y_0 feels x_1 through r only
my_partials_1k = 32  # min(rows, 32) programs, each over a group of consecutive rows
my_partials_1m = 32  # the same 32: the buffer does not grow with the batch
my_rms_saved = {"x": "input", "weight": "input", "rstd": "rows"}  # r, one per row, from forward
### LEARNER
my_dy0_dx1 = None  # dy[0]/dx[1] for that row: a number, 4 decimals
my_partials_1k = None  # partial rows your layout stores at 1,000 rows: a whole number
my_partials_1m = None  # and at 1,000,000 rows
my_rms_saved = None  # {name: "input", or an element count in rows and D}, e.g. {"h": "D"}
### END WORKED

check_rms_steps(my_dy0_dx1, my_partials_1k, my_partials_1m, my_rms_saved)  # the bound too

# %% [markdown]
# <details><summary><b>Hint 1 · a question</b></summary>
#
# $y_k = x_k\, r\, w_k$ for every $k$ of the row, and $r$ depends on every $x_j$. So $x_j$
# reaches the loss through $y_j$ directly and through $r$ in every $y_k$. Which sum over the row
# does that second path need, and does one program have it?
# </details>
#
# <details><summary><b>Hint 2 · the key step</b></summary>
#
# Write $r = (q + \varepsilon)^{-1/2}$ with $q = \frac1D \sum_k x_k^2$: what is
# $\partial r/\partial x_j$, in terms of $r$ and $x_j$ (and $D$)? With $\hat g_k = g_k w_k$, add
# the two paths, then write the sum over $k$ with $\hat x$. For step 2: which rows' terms does
# a program have, and what decides how many programs there are?
# </details>
#
# Define `rms_norm_rows(x, weight, eps)` returning `F.rms_norm(x, x.shape[-1:], weight, eps)`
# for `x` of shape $(\dots, D)$ and `weight` of shape $(D,)$, computed by custom operators of
# the `autograd_course` namespace, all in this one cell: how many operators, what each returns
# and which one `rms_norm_rows` calls are yours to decide.
#
# <details><summary><b>Design it first</b> (open before you write the cell)</summary>
#
# 1. Your step 1 reads $g$, $w$, $\hat x$ and $r$. What does `setup_context` save for it? Could
#    it save `y` and recover $\hat x$ from it?
# 2. `setup_context` sees only an operator's inputs and its output. How does the $r$ that your
#    forward kernel computes reach it? What does the backward operator take and return?
# 3. Your step 2 layout: does the forward kernel need the same one? Whatever the number of
#    rows, does every row belong to exactly one program, and does every program stay inside
#    `x`?
# </details>
#
# **Contract.** Your Function obeys the [Function contract](function_contract.md); this
# exercise's own contract:
#
# - `setup_context` keeps nothing beyond the inputs' own memory but at most one number per row,
#   none narrower than float32 (nor than float64 for float64 input); backward sums no row's
#   squares again;
# - the weight's gradient summed across programs with no atomic adds and no address that two
#   programs of one launch store to without a lock;
# - `F.rms_norm`'s values and gradients for any `D` up to 4096 and any number of rows, finite
#   for any weight (zeros included), and nothing returned that no program stored;
# - each kernel behind a `torch.library.custom_op` whose fake describes its real outputs,
#   strides included; the arithmetic in your kernels (on the host nothing but allocations,
#   views, copies, casts and sums), float16 and bfloat16 computed in float32.
#
# Rule 2's `None` for an input that needs no gradient holds here too, but this exercise bounds
# no work (exercise 1 did): your backward may compute both gradients and return the one needed.
#
# As in exercise 1, rule 1 stops short of tensors past $2^{31}$ elements (int64 offsets taught,
# not graded), and `quick_check("rms_norm_rows", rms_norm_rows)` in a scratch cell takes about
# a second where the self-check takes tens of seconds on a CPU.

# %% nbgrader={"grade_id": "answer_rms_norm_rows", "solution": true}
def rms_norm_rows(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """F.rms_norm(x, x.shape[-1:], weight, eps) by your Triton kernels, behind custom operators
    of the autograd_course namespace."""
    ### BEGIN SOLUTION
    return rms_norm_rows_forward(x, weight, eps)[0]


# the operators rms_norm_rows calls, and their kernels (found when it is called)
@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, D, eps, BLOCK_D: tl.constexpr):
    """One program per row: y = x * rstd * w, and rstd saved."""
    row = tl.program_id(0).to(tl.int64)  # int64: row * D passes 2**31 in a big tensor
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if x.dtype != tl.float64:
        x, w = x.to(tl.float32), w.to(tl.float32)
    rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    tl.store(rstd_ptr + row, rstd.to(rstd_ptr.dtype.element_ty))
    tl.store(y_ptr + row * D + columns, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, rows,
                             D, rows_per_program, BLOCK_D: tl.constexpr):
    """One program per group of rows: their rows of grad_x, and one partial row of
    grad_weight summed over the group."""
    program = tl.program_id(0).to(tl.int64)
    first = program * rows_per_program
    columns = tl.arange(0, BLOCK_D)
    mask = columns < D
    w = tl.load(w_ptr + columns, mask=mask, other=0.0)
    if w.dtype != tl.float64:
        w = w.to(tl.float32)
    partial_w = tl.zeros((BLOCK_D,), dtype=partial_w_ptr.dtype.element_ty)
    # int64 offsets, moved on by D each row: under the interpreter the loop index i is a
    # Python int and D an int32, so i * D would be int32 there
    offsets = first * D + columns
    for i in range(0, tl.minimum(rows_per_program, rows - first)):
        grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0)
        x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
        if x.dtype != tl.float64:
            grad, x = grad.to(tl.float32), x.to(tl.float32)
        rstd = tl.load(rstd_ptr + first + i)
        x_hat = x * rstd
        grad_hat = grad * w
        grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)
        tl.store(grad_x_ptr + offsets, grad_x.to(grad_x_ptr.dtype.element_ty), mask=mask)
        partial_w += grad * x_hat
        offsets += D
    tl.store(partial_w_ptr + program * D + columns, partial_w, mask=mask)


@torch.library.custom_op("autograd_course::rms_norm_rows", mutates_args=())
def rms_norm_rows_forward(x: torch.Tensor, weight: torch.Tensor,
                          eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, rstd): y like x, rstd one per row."""
    D = x.shape[-1]
    rows = x.reshape(-1, D).contiguous()
    y = torch.empty_like(rows)
    rstd = torch.empty(rows.shape[0], device=x.device,
                       dtype=torch.float64 if x.dtype == torch.float64 else torch.float32)
    if rows.shape[0]:
        # eps arrives as a Python float, typed float32: compiled, a float64 sum gets it rounded
        # (the interpreter adds its float64 value)
        rms_norm_kernel[(rows.shape[0],)](rows, weight.contiguous(), y, rstd, D, eps,
                                          BLOCK_D=triton.next_power_of_2(D))
    return y.view(x.shape), rstd


@rms_norm_rows_forward.register_fake
def _(x, weight, eps):
    rstd_dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    return (torch.empty(x.shape, dtype=x.dtype, device=x.device),
            x.new_empty(x.shape[:-1].numel(), dtype=rstd_dtype))


@torch.library.custom_op("autograd_course::rms_norm_rows_backward", mutates_args=())
def rms_norm_rows_backward(grad_y: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                           rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(grad_x, grad_weight)."""
    D = x.shape[-1]
    rows, grad_rows = x.reshape(-1, D).contiguous(), grad_y.reshape(-1, D).contiguous()
    grad_x = torch.empty_like(rows)
    programs = min(rows.shape[0], 32)  # a fixed number, whatever the batch (Liger: one per SM)
    rows_per_program = triton.cdiv(rows.shape[0], max(programs, 1))
    partial_w = torch.empty(programs, D, device=x.device, dtype=rstd.dtype)
    if rows.shape[0]:
        rms_norm_backward_kernel[(programs,)](grad_rows, rows, weight.contiguous(), rstd,
                                              grad_x, partial_w, rows.shape[0], D,
                                              rows_per_program, BLOCK_D=triton.next_power_of_2(D))
    return grad_x.view(x.shape), partial_w.sum(0).to(weight.dtype)  # partials reduced


@rms_norm_rows_backward.register_fake
def _(grad_y, x, weight, rstd):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight)


def rms_norm_setup_context(ctx, inputs, output):
    x, weight, eps = inputs
    y, rstd = output
    ctx.save_for_backward(x, weight, rstd)


def rms_norm_autograd(ctx, grad_y, grad_rstd):
    x, weight, rstd = ctx.saved_tensors
    grad_x, grad_weight = rms_norm_rows_backward(grad_y, x, weight, rstd)
    return (grad_x if ctx.needs_input_grad[0] else None,
            grad_weight if ctx.needs_input_grad[1] else None, None)


rms_norm_rows_forward.register_autograd(rms_norm_autograd, setup_context=rms_norm_setup_context)
### END SOLUTION


# %% nbgrader={"grade_id": "rms_norm_rows", "grade": true, "points": 3}
self_check("rms_norm_rows", rms_norm_rows)
### BEGIN HIDDEN TESTS
from autograder import grade; grade("rms_norm_rows", rms_norm_rows)
### END HIDDEN TESTS

# %% [markdown]
# <details><summary><b>Compare with yours, after your self-check is green</b></summary>
#
# 1. $\partial L/\partial x_j = r\,\big(\hat g_j - \hat x_j \cdot
#    \tfrac1D \sum_k \hat g_k \hat x_k\big)$ with $\hat g = g\,w$, $\hat x = x\,r$: one row's
#    sum, so one program per row has all it needs.
# 2. $\partial L/\partial w_j = \sum_{\text{rows}} g_j \hat x_j$, a sum **across** programs: each
#    program stores the sum over its own rows, and the partial rows are added up afterwards
#    (Liger-Kernel on the host; Triton's layer-norm tutorial behind a lock, then a second
#    kernel). A fixed number of programs keeps the buffer at (programs, $D$) whatever $N$.
#
# The design: `setup_context` saves `x`, `weight` and `rstd`, one $r$ per row; not `y`, since
# $\hat x = y / w$ is $0/0$ where the weight is 0. The forward operator returns `(y, rstd)` and
# `rms_norm_rows` returns its `[0]`; the backward operator takes `(grad_y, x, weight, rstd)` and
# returns `(grad_x, grad_weight)`, and the registered backward returns `None` for `eps` and
# for an input whose `ctx.needs_input_grad` entry is `False`. The
# backward launches `min(rows, 32)` programs over `cdiv(rows, programs)` consecutive rows each,
# each loop stopping at the last row.
# </details>

# %% [markdown]
# ## Summary
#
# A Triton kernel is a function over blocks: a grid of programs, each loading a masked block of
# pointers, computing, storing. Behind `custom_op` with `register_fake` and `register_autograd`,
# its backward kernel behind an operator of its own, it works in eager mode, under `opcheck`,
# `torch.compile(fullgraph=True)` and `torch.export` (appendix), compiled on a GPU and
# interpreted on CPU. The backward is the maths of the earlier lessons, written per block; a
# reduction across programs becomes per-program partials summed afterwards. A C++ kernel takes
# the same place (the appendix builds one), completed by the same registrations from Python.

# %% [markdown]
# ## Optional appendix (not graded; its cells run with the rest)
#
# Everything below deepens the main line and nothing after it depends on it: read it
# when you have time.
#
# ### How both exercises are graded
#
# - Values against torch in float64 (`gradcheck`), float32, float16 and bfloat16 (within 2 ulp
#   of the float32-computed result cast back), on sizes no block divides, transposed,
#   strided and expanded inputs, and under `opcheck` and `torch.compile(fullgraph=True)`.
# - A probe lists every torch op your operators dispatch and every kernel they launch, and
#   counts the launches (on a tensor smaller than a block and on one past the largest block
#   Triton accepts): arithmetic outside your kernels, or more launches than the contract's,
#   fails.
# - Masked-off lanes and every buffer you allocate uninitialised are filled with NaN, as a GPU
#   may leave them; loads and stores outside your tensors are refused before they happen.
# - Every launch's stores and atomic operations are watched: two programs of one launch
#   storing to one address without a lock, or an atomic add, fail. Exercise 1: with one input
#   alone requiring a gradient, the addresses your backward's kernels store to are counted
#   against that gradient's size.
# - Exercise 2: every saved value that comes one per row is doubled, and the gradients must
#   move (a backward that sums the squares again does not); any other saved tensor that does
#   not share an input's memory fails, a contiguous or cast copy of one included (probed with
#   a transposed `x` and a strided `weight` in each of the four dtypes).
# - int64 offsets, for tensors past 2**31 elements, are taught but not graded.

# %% [markdown]
# ### Printing from a kernel
#
# A kernel can `print` its blocks, the first tool for seeing what a program reads: under the
# interpreter it prints NumPy arrays (a compiled kernel prints too, one line per lane).
# Program 2 of a launch over 10 elements in blocks of 4:

# %%
@triton.jit
def show_program_kernel(n, BLOCK: tl.constexpr):
    """Prints what program 2 sees; loads and stores nothing."""
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    if tl.program_id(0) == 2:
        print("program", tl.program_id(0), "offsets", offsets, "mask", offsets < n)


show_program_kernel[(triton.cdiv(10, 4),)](10, BLOCK=4)

# %% [markdown]
# ### An unmasked load
#
# **Predict, then run.** The kernel below is `sum_of_squares_kernel` without `mask=` and
# `other=`. It runs over the first `n = 1000` elements of a tensor of 1024, in blocks of 128, on
# 8 programs. What happens (`"error"`, `"wrong values"` or `"right values"`), and which first and
# last index does the last program load? Write both in the next cell, then run the one after.

# %%
### BEGIN WORKED
my_prediction = "wrong values"  # nothing stops the read: the buffer has room past n
my_last_block = (896, 1023)  # the last block, 7 * 128 to 8 * 128 - 1
### LEARNER
my_prediction = ""  # "error", "wrong values" or "right values"
my_last_block = (None, None)  # (first index, last index) the last program loads
### END WORKED

# %%
@triton.jit
def sum_of_squares_unmasked(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    program = tl.program_id(0).to(tl.int64)
    offsets = program * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets).to(partial_ptr.dtype.element_ty)  # no mask
    tl.store(partial_ptr + program, tl.sum(x * x, axis=0))


x_padded = torch.randn(1024, device=DEVICE)
partials = torch.empty(blocks(1000), device=DEVICE)
right = x_padded[:1000].square().sum()
if not written(my_prediction, my_last_block):  # what happened, once both are written
    print("write both predictions first, then run this cell again")
else:
    try:
        sum_of_squares_unmasked[blocks(1000)](x_padded, partials, 1000, BLOCK=SUM_BLOCK)
        outcome = "right values" if torch.allclose(partials.sum(), right) else "wrong values"
    except Exception as error:  # any failure of the launch is the outcome "error"
        outcome = "error"
        print(type(error).__name__, str(error).splitlines()[0])
    verdict = ("as you predicted" if same_answer(my_prediction, outcome)
               else "not what you predicted: why?")
    print(f"you predicted {my_prediction!r}; it gave {outcome!r} ({verdict})")
    if outcome != "error":
        print(f"the sum is {partials.sum():.2f}, the first 1000 elements give {right:.2f}")
    last = ((blocks(1000)[0] - 1) * SUM_BLOCK, blocks(1000)[0] * SUM_BLOCK - 1)
    index_verdict = ("as you predicted" if tuple(my_last_block) == last else
                     "not what you predicted: why?")
    print(f"the last program loads indices {last[0]} to {last[1]}; you predicted "
          f"{my_last_block} ({index_verdict})")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# No error, and a wrong sum: the last program's block covers 896 to 1023, so it added the
# squares of 24 elements past `n`; nothing stopped it, the buffer had room. On a GPU an unmasked
# load past a tensor reads a neighbour's memory or stops the kernel with an illegal access, and
# an unmasked store corrupts it. Nor is the mask alone enough here: masked-off lanes must load 0
# (`other=0.0`) to add nothing.
# </details>

# %% [markdown]
# ### Exercise 2's forward grid
#
# **Predict** the course's forward grid: for 10 rows of `D = 300`, how many
# programs does the forward launch, and how many lanes (its block's width) does each have?
# Write both in the next cell, then run the one after it.

# %%
### BEGIN WORKED
my_forward_programs = 10  # one program per row: a row's sum is one program's tl.sum
my_forward_lanes = 512  # the smallest power of two that covers a row of 300
### LEARNER
my_forward_programs = None  # programs the forward launches for 10 rows of D = 300
my_forward_lanes = None  # lanes per program (the block's width) for D = 300
### END WORKED

# %%
if not written(my_forward_programs, my_forward_lanes):  # the grid, once both are written
    print("write both predictions first, then run this cell again")
else:
    print("10 rows of D = 300: 10 programs (one per row), BLOCK_D = next_power_of_2(300) = "
          f"{triton.next_power_of_2(300)} lanes each")
    for D in (300, 4096, 4097):
        lanes = triton.next_power_of_2(D)
        print(f"  D = {D}: BLOCK_D = {lanes}, {(lanes - D) / lanes:.3f} of the lanes masked off")
    for name, mine, ours in (("programs", my_forward_programs, 10),
                             ("lanes", my_forward_lanes, triton.next_power_of_2(300))):
        print(f"{name}: you predicted {mine!r} (" + ("as the solution does" if same_answer(
            mine, ours) else "not the solution's: is yours right too? see below") + ")")

# %% [markdown]
# A row's sum is one `tl.sum` only inside one program, so the forward takes a row per program,
# with a power-of-two block: 512 lanes for 300 entries, 212 masked off (work left undone, no
# memory traffic). A loop over the row in narrower blocks is right too.

# %% [markdown]
# ### The interpreter against a compiled kernel
#
# Not bit for bit: on an NVIDIA GPU a compiled `tl.exp` and `tl.sqrt` are fast
# approximations, so they may differ from the interpreter's NumPy results in the last bits.
# Not with the same values either: both type a Python `float` argument as float32 (an
# `eps=1e-5` stored alone arrives as 9.999999747378752e-06), but added to a float64 tensor
# the interpreter uses its float64 value, 1e-05, where a compiled kernel widens the float32
# one. Exercise 2's solution passes `eps` as a Python float: on a GPU its float64 `rstd`
# then uses `eps` rounded to float32, at most $2^{-24}$ of `eps` off, which moves `rstd` by at
# most about $3\cdot 10^{-8}\,\varepsilon/(q + \varepsilon)$ relative ($q$ the row's mean
# square): nothing for rows well above `eps`, up to $3\cdot 10^{-8}$ for a row near zero (pass
# a float64 tensor and load it to keep float64 exact).
#
# NumPy has no bfloat16, so Triton 3.9's interpreter keeps a bfloat16 value as the 16-bit
# integer of its bits, and an operation on bfloat16 values (`x * x`, `x + y`, `-x`,
# `x * 2.0`, `tl.sum(x)`) computes on those integers and gives garbage: for
# `x = [1.5, -2, 16, 0.55]` in bfloat16, `x * x` gives `[2.5e-29, 0, 2, 4.0e23]`. float16 is
# computed right, and so is a bfloat16 value times a float32 one (Triton converts the bfloat16
# side first). Two conversions into bfloat16 differ too (More common mistakes, below).
#
# ### `triton_op`: letting the compiler see into the kernel
#
# To `torch.compile`, a `custom_op` is a black box: it calls it, and fuses nothing across it.
# `torch.library.triton_op` with `wrap_triton(kernel)[grid](...)` instead records the launch
# itself in the graph, so that Inductor can schedule it with the code around it, and it needs
# no `register_fake`. It needs a GPU, though: on CPU, `opcheck` of a `triton_op` fails (the
# next section runs it and says why). So: `custom_op` with `register_fake`
# everywhere, including on CPU and in the grader; `triton_op` when a GPU is there and the
# compiler should see the kernel. The exercises ask for `custom_op` (the contract names it).
#
# ### `triton_op` on CPU
#
# `triton_op` needs no `register_fake`: tracing runs the Python around the launch on fake
# tensors, and the recorded launch stands in for the kernel. On torch 2.13, `wrap_triton` hands
# an interpreted kernel back unwrapped (it lacks the compiled kernel's metadata the graph node
# is built from), so nothing is recorded, and tracing runs the kernel itself, in the
# interpreter, on fake tensors. Run the cell: on CPU, the fake-tensor test of `opcheck` fails
# where the interpreter copies each tensor argument's storage to the host, as it does before
# every launch: a fake tensor's storage is on the `meta` device and holds no data.

# %%
@torch.library.triton_op("autograd_course::sum_of_squares_traced", mutates_args=())
def sum_of_squares_traced(x: torch.Tensor) -> torch.Tensor:
    partials = torch.empty(blocks(x.numel()), device=x.device, dtype=torch.float32)
    torch.library.wrap_triton(sum_of_squares_kernel)[blocks(x.numel())](
        x, partials, x.numel(), BLOCK=SUM_BLOCK)
    return partials.sum().to(x.dtype)


x = torch.randn(300, device=DEVICE)
print("eager call:", torch.allclose(sum_of_squares_traced(x), x.square().sum()))
fake_tensor_log = logging.getLogger("torch._subclasses.fake_tensor")
level, fake_tensor_log.level = fake_tensor_log.level, logging.CRITICAL  # its traceback: below
try:
    with warnings.catch_warnings(action="ignore"):  # the failing trace's own warnings
        torch.library.opcheck(sum_of_squares_traced, (x,))
    print("opcheck passes (compiled Triton, on a GPU)")
except Exception as error:
    print("opcheck fails:", type(error).__name__, "-", str(error).splitlines()[0][:150])
finally:
    fake_tensor_log.setLevel(level)

# %% [markdown]
# The grader checks the exercises with `opcheck`, as this cell did: a `triton_op` answer
# fails there on CPU, and is not accepted on a GPU either (the contract names `custom_op`).
# Nothing in this lesson uses `@triton.autotune`: autotuning runs and times each
# configuration on a GPU. Under the interpreter a single configuration runs (there is nothing
# to time), and two or more stop with "0 active drivers" (Triton 3.9).

# %% [markdown]
# ### `torch.export`: a module that calls your operator
#
# `torch.export.export` traces a module ahead of time into a graph of ATen and custom
# operators, for serving without Python. Your operator appears in it as one node, traced with
# its fake implementation; running the exported program runs your kernel.

# %%
class RegressionLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x, target):
        return sum_of_squares(self.linear(x) - target)


model = RegressionLoss().to(DEVICE)
example, target = torch.randn(2, 4, 8, device=DEVICE)
exported = torch.export.export(model, (example, target))
print([str(node.target) for node in exported.graph.nodes if node.op == "call_function"])
print("exported program matches the module:",
      torch.allclose(exported.module()(example, target), model(example, target)))

# %% [markdown]
# ### Speed, derived before it is measured
#
# A kernel like this does a few operations per element and spends its time moving elements
# between memory and the chip. So count what moves. **Derive, then run:** for $n$ elements,
# how many elements does each version read plus write, **forward and backward together**
# (backward called with a gradient `g` for `y`)?
#
# - the composed ops, `F.silu(a) * b`, as autograd runs them: every op reads each of its
#   tensor inputs once and writes its output once. Which ops does autograd's backward run, and
#   what does each read?
# - your operator: one forward kernel and one backward kernel; read their loads and stores.
#
# Write both counts in units of $n$ in `my_moved`, composed first.

# %%
### BEGIN WORKED
my_moved = (14, 8)  # composed: silu 2n, mul 3n, backward 9n; fused: 3n forward, 5n backward
### LEARNER
my_moved = (None, None)  # (composed, fused): elements read + written, in units of n
### END WORKED

# %%
class Traffic(TorchDispatchMode):
    """Logs every op that runs, forward and backward, with the elements it reads (its tensor
    arguments) and writes (its results)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if not func.is_view:  # a view (detach, reshape) moves no data
            def elements(tree):
                return sum(t.numel() for t in torch.utils._pytree.tree_leaves(tree)
                           if isinstance(t, torch.Tensor))
            self.calls.append((str(func), elements((args, kwargs)), elements(result)))
        return result


def traffic(f, n):
    """The ops that forward and backward of f(a, b) run, on meta tensors (sizes, no data)."""
    a, b = (torch.empty(n, device="meta", requires_grad=True) for _ in range(2))
    g = torch.empty(n, device="meta")  # the gradient for y, made before logging starts
    with Traffic() as log:
        f(a, b).backward(g)
    return log.calls


n = 1 << 20
moved = {}
for name, f in [("composed", lambda a, b: F.silu(a) * b), ("fused", silu_mul)]:
    try:
        calls = traffic(f, n)  # a custom operator runs its fake on meta tensors
    except NotImplementedError:
        print(f"{name}: solve Exercise 1 first")
        continue
    moved[name] = sum(read + wrote for _, read, wrote in calls) / n
    if written(*my_moved):  # each op's traffic, once your counts are written
        for op, read, wrote in calls:
            print(f"  {name:>8} {op:<40} reads {read / n:.0f}n, writes {wrote / n:.0f}n")
measured = tuple(moved.get(k) for k in ("composed", "fused"))
if not written(*my_moved):
    print("write both counts first, then run this cell again")
else:
    verdict = ("as you derived" if tuple(my_moved) == measured
               else "not what you derived: which op did you miss?")
    print(f"you said {my_moved}; measured (composed, fused) = {measured}, in units of n "
          f"({verdict})")
if len(moved) == 2 and written(*my_moved):
    print(f"fused / composed = {moved['fused'] / moved['composed']:.3f}: the shortest time the "
          "fused op can take, as a fraction of the composed ops' time, when both move bytes "
          "at the same rate")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# Composed: forward runs `silu` (reads $n$, writes $n$) and `mul` ($2n$, $n$): $5n$. Backward
# runs three ops of $3n$ each: $g \cdot \mathrm{silu}(a)$ for `b`'s gradient (which is why
# autograd keeps `silu(a)`), $g \cdot b$ for the gradient reaching silu, and `silu_backward`
# reading that and `a`: $9n$, $14n$ in all. Fused: $a, b$ in and $y$ out, then
# $g, a, b$ in and both gradients out: $3n + 5n = 8n$. So the fused op can at best take
# $8/14 = 0.571$ of the composed time: the temporaries it saves are the gain, and nothing
# else.
# </details>
#
# ### Timing it
#
# On a GPU, the next cell times forward and backward of your operator and of the composed
# ops from $2^{20}$ to $2^{28}$ elements (1 Mi to 256 Mi), and prints both times, the ratio
# against the byte ratio, your kernels' achieved bandwidth (bytes moved over time) and its
# fraction of the device's peak (In practice, at the end of the appendix, reads these numbers). On
# CPU the kernels run in the interpreter, one program after another in NumPy: that time says
# nothing about a GPU, and the cell shows it once at a small size, then prints the byte model
# only.

# %%
def forward_backward_seconds(f, n, rounds):
    """Seconds per forward and backward of f(a, b) on n float32 elements."""
    a, b = (torch.randn(n, device=DEVICE, requires_grad=True) for _ in range(2))
    g = torch.randn(n, device=DEVICE)
    for i in range(rounds + 1):  # call 0 warms up (and compiles, on a GPU)
        if i == 1:
            if DEVICE == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        a.grad = b.grad = None  # store the gradients, not add to old ones
        f(a, b).backward(g)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / rounds


composed_op = lambda a, b: F.silu(a) * b  # noqa: E731
byte_ratio = 8 / 14  # fused / composed, forward and backward: the derivation above
try:
    solved = silu_mul(torch.ones(1, device=DEVICE), torch.ones(1, device=DEVICE)) is not None
except NotImplementedError:
    solved = False
    print("solve Exercise 1 first")
if solved and DEVICE == "cuda":
    props = torch.cuda.get_device_properties(0)
    peak = (2 * getattr(props, "memory_bus_width", 0) / 8
            * getattr(props, "memory_clock_rate", 0) * 1e3)  # bytes/s; the clock is in kHz
    print(f"{props.name}, peak {peak / 1e9:.0f} GB/s (bus width x memory clock x 2); byte "
          f"ratio {byte_ratio:.3f}")
    print(f"{'n':>6} {'composed':>10} {'fused':>10} {'ratio':>6} {'fused GB/s':>11} "
          f"{'of peak':>8}")
    for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28):
        rounds = 20 if n <= 1 << 24 else 5
        t_composed = forward_backward_seconds(composed_op, n, rounds)
        t_fused = forward_backward_seconds(silu_mul, n, rounds)
        achieved = 8 * n * 4 / t_fused
        print(f"{n >> 20:>4}Mi {t_composed * 1e3:>8.3f}ms {t_fused * 1e3:>8.3f}ms "
              f"{t_fused / t_composed:>6.3f} {achieved / 1e9:>11.0f} "
              f"{achieved / peak if peak else float('nan'):>8.2f}")
elif solved:
    n = 1 << 14  # best of 5, the composed op over 100 calls: a single call is noisy
    t_composed = min(forward_backward_seconds(composed_op, n, 100) for _ in range(5))
    t_fused = min(forward_backward_seconds(silu_mul, n, 1) for _ in range(5))
    print(f"interpreter, n = {n}: fused {t_fused * 1e3:.1f} ms, composed {t_composed * 1e3:.2f} "
          f"ms, {t_fused / t_composed:.0f} times slower: a measure of Python, not of a GPU")
    for n in (1 << 20, 1 << 28):
        print(f"n = {n >> 20} Mi float32: composed moves {14 * n * 4 / 2**20:,.0f} MiB, fused "
              f"{8 * n * 4 / 2**20:,.0f} MiB: at best {byte_ratio:.3f} of the composed time")
    print("timing the kernels needs a GPU")

# %% [markdown]
# ### int32 offsets
#
# **Predict, then run.** Rows of `D = 2**30` elements would take 4 GiB each in float32, but
# no memory is needed to see what the third program (`row = 2`, from `tl.program_id(0)`)
# computes as its row's first offset, `row * D`, with `D` passed as the Python int `2**30`.
# The kernel stores it into an int64 tensor. Predict the number stored.

# %%
### BEGIN WORKED
my_offset = -2**31  # 2 * 2**30 = 2**31 wraps in int32
### LEARNER
my_offset = None  # the value the third program stores for row * D
### END WORKED

# %%
@triton.jit
def row_offsets(out_ptr, D):
    row = tl.program_id(0)
    tl.store(out_ptr + row, row * D)
    tl.store(out_ptr + 3 + row, row.to(tl.int64) * D)


offsets = torch.empty(6, dtype=torch.int64, device=DEVICE)
row_offsets[(3,)](offsets, 2**30)
stored = offsets[2].item()
if not written(my_offset):  # what was stored, once your prediction is written
    print("write your prediction first, then run this cell again")
else:
    verdict = "as you predicted" if my_offset == stored else "not what you predicted: why?"
    print(f"row * D for rows 0, 1, 2: {offsets[:3].tolist()} ({verdict})")
    print(f"with the row made int64 first: {offsets[3:].tolist()}")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# `tl.program_id(0)` is an int32, and so is an integer argument that fits in one, such as
# `D`: their product is computed in int32 before it is stored, whatever the tensor's dtype.
# $2 \cdot 2^{30} = 2^{31}$ does not fit in an int32 and wraps to $-2^{31}$, in the interpreter
# as in a compiled kernel: the third row's loads would start 8 GiB before the tensor. Any
# tensor past $2^{31}$ elements reaches such offsets, and the grader's small tensors never do,
# so a kernel meant for large tensors makes the row int64 first:
# `tl.program_id(0).to(tl.int64)`, as Liger-Kernel's SwiGLU and cross-entropy kernels do. In a
# loop over rows, carry an int64 offset and add `D` each row: under the interpreter the loop
# index is a Python int, and a Python int times the int32 `D` is an int32 again.
# </details>
#
# ### A race in the interpreter
#
# **Predict, then run** (optional). The kernel below is `sum_of_squares_kernel` with one
# change: every program stores its partial into the same address, `total_ptr`, instead of
# `partial_ptr + tl.program_id(0)`. On 1000 elements, 8 programs, which number is left there:
# `"the whole sum"`, `"the first program's partial"` or `"the last program's partial"`?

# %%
### BEGIN WORKED
my_race_prediction = "the last program's partial"  # one program at a time, each overwriting
### LEARNER
my_race_prediction = ""  # "the whole sum", "the first program's partial" or "the last ..."
### END WORKED

# %%
@triton.jit
def sum_of_squares_shared(x_ptr, total_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0).to(total_ptr.dtype.element_ty)
    tl.store(total_ptr, tl.sum(x * x, axis=0))  # every program: one shared address


x = torch.randn(1000, device=DEVICE)
total = torch.zeros(1, device=DEVICE)
sum_of_squares_shared[blocks(1000)](x, total, 1000, BLOCK=SUM_BLOCK)
partials = torch.zeros(blocks(1000), device=DEVICE)
sum_of_squares_kernel[blocks(1000)](x, partials, 1000, BLOCK=SUM_BLOCK)
candidates = {"the whole sum": partials.sum(), "the first program's partial": partials[0],
              "the last program's partial": partials[-1]}
outcome = next((k for k, v in candidates.items() if torch.allclose(total[0], v)), "another")
if not written(my_race_prediction):  # what was stored, once your prediction is written
    print("write your prediction first, then run this cell again")
else:
    verdict = ("as you predicted" if same_answer(my_race_prediction, outcome)
               else "not what you predicted: why?")
    print(f"stored {total.item():.2f}; whole sum {partials.sum():.2f}, partials "
          f"{[round(p, 2) for p in partials.tolist()]}")
    print(f"you predicted {my_race_prediction!r}; it is {outcome!r} ({verdict})")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The interpreter runs the programs one after another, 0 to 7: each store overwrites the one
# before, and the last program's partial stays, the same on every run. On a GPU the 8
# programs run at once and whichever store lands last wins, which can change from run to run.
# Loading the shared number, adding and storing back would be right in the interpreter, one
# program at a time, and lose updates on a GPU: the reason the grader refuses any address two
# programs of one launch write with plain stores.
# </details>
#
# ### Common mistakes
#
# The ones both exercises meet first; more, about grids over groups of rows, the weight
# gradient across programs, fusion, offsets, buffers, layouts, bfloat16 in the interpreter
# and registration, follow (More common mistakes).
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | no mask on the tail (`tl.load(ptr + offsets)`) | an elementwise kernel's values look right, a reduction's sum is wrong; loads and stores past the end: corrupt memory or an illegal access on a GPU; the grader names it | `mask = offsets < n` in every `tl.load` and `tl.store` |
# | a masked load without `other` feeding a `tl.sum` | the masked-off lanes are undefined in Triton (the interpreter happens to give 0, so a plain CPU run hides it; the grader and the self-check fill them with NaN, so it fails there) | `other=0.0` on every load whose lanes are added up |
# | a block narrower than the row (`BLOCK_D = 128` for `D = 300`) | the columns past the block are never computed | `BLOCK_D = triton.next_power_of_2(D)`, masked; or loop over the row |
# | float16 loaded and computed in float16 | `tl.exp`, `tl.sqrt`, `tl.sigmoid` and Triton's other math functions raise "Expected dtype ['fp32', 'fp64'] but got fp16"; plain `*` and `+` run, but can end more than 2 ulp off, and a row's sum of squares loses digits or overflows | `.to(tl.float32)` after loading, cast when storing |
# | an operation between bfloat16 values (`x * x`, `x + y`, `tl.sum(x)` on a bfloat16 load), in the interpreter | garbage: Triton 3.9's interpreter computes on the 16-bit integers that hold the values' bits (`1.5 * 1.5` gives `2.5e-29`); float16 is right, so only bfloat16 fails; the grader names it | `.to(tl.float32)` after loading, cast when storing |
# | a kernel launched directly in the registered backward | eager works; `opcheck` and `torch.compile` fail on fake tensors | put the backward kernel behind its own `custom_op` with `register_fake` |
# | `register_fake` returning `torch.empty_like(x)` for a transposed `x`, in the forward operator's fake or the backward operator's (whose saved inputs are the caller's views), or `torch.empty_like(grad)` (`grad_output` arrives transposed or expanded too) | strides differ from the real (contiguous) output; `opcheck` of that operator on a transposed input complains, and so does the self-check, for both operators | `memory_format=torch.contiguous_format` |
#
# ### More common mistakes
#
# | Mistake | What happens | Fix |
# |---|---|---|
# | `row * D` with the row from `tl.program_id(0)` | `program_id` is int32, and so is `D` when it fits: past 2**31 elements the offset wraps (in the interpreter too: program 2 times `D = 2**30` gives -2**31), and a GPU reads the wrong rows or faults; the course's small tensors never get there | `tl.program_id(0).to(tl.int64)` before multiplying; in a loop over rows, carry an int64 offset and add `D` each row (under the interpreter the loop index is a Python int, so `i * D` stays int32) |
# | one row of weight-gradient partials per row of `x` | right, but an `(N, D)` float32 buffer: as big as `x`, twice `x` in bfloat16 | a fixed number of programs, each looping over a group of rows into its own partial row (Liger-Kernel); Triton's layer-norm tutorial shares a few partial rows between programs, behind a lock |
# | the kernel stores into an input (`tl.store(a_ptr + ...)`) | the caller's tensor changes behind autograd's back | allocate outputs with `torch.empty_like` |
# | an output buffer kept per shape to save an allocation, returned (or a view of it) by every call | each call alone is right, but the next call writes over the result the caller still holds: in a two-layer MLP the first layer's output, saved by the matmul after it, is the second's, and the weight gradient is wrong without an error; the self-check names it | allocate every output in the call that returns it |
# | a staging buffer or workspace cached in a global, never returned (a float32 buffer for half inputs, partial rows per `D`) | right values, but the cache grows with every new size and two calls at once write into the same memory; the self-check names the global that holds it | allocate it in the call: PyTorch's caching allocator makes `torch.empty` cheap |
# | non-contiguous input passed as is | a transposed tensor is read in memory order: wrong values | `.contiguous()` on the host, or pass strides |
# | a float64 value stored into a bfloat16 tensor, in the interpreter | zeros, denormals, nan (Triton 3.9's interpreter converts it wrongly) | `.to(tl.float32)` before the cast to bfloat16 |
# | expecting a bfloat16 result bit for bit equal to torch's, in the interpreter | float32 stored into bfloat16 is truncated there (0.55 gives 0.546875; torch rounds to 0.55078125): one ulp apart | compare within a bfloat16 ulp; a compiled kernel rounds as torch does |
# | `setup_context` keeping tensors as attributes (`ctx.a, ctx.b = inputs`) | right values, but autograd no longer checks them for in-place changes, saved-tensor hooks never see them, and a kept output (`ctx.rstd = output[1]`) makes a reference cycle through its `grad_fn`; the self-check refuses it | `ctx.save_for_backward(...)`, read back from `ctx.saved_tensors` |
# | `triton_op` / `wrap_triton` on CPU | fake-tensor tracing reaches the interpreter | `custom_op` with `register_fake` |
# | `rows_per_program = rows // programs` for a fixed grid over groups of rows | the last `rows % programs` rows belong to no program: their gradient for `x` is whatever the buffer held, and the weight gradient leaves them out; right whenever the grid divides the rows | count the rows your groups cover for 137 rows: each row in exactly one group |
# | each program's loop over its group not stopped at the last row | with rounding up, the last groups are shorter or empty, and their programs read and write past the tensors: in the interpreter nan, or the Python process dies (it touches memory nobody owns); on a GPU a neighbour's memory is read and written, or the kernel stops with an illegal memory access; the grader refuses it before it happens | bound each program's loop by the rows that are left as well as by its group's size |
# | every program stores its part of the weight gradient into one shared row | the last program wins (on a GPU: whichever came last) | per-program partials, summed afterwards (on the host or by a second kernel) |
# | every program loads the shared row, adds its part and stores it back | right in the interpreter, which runs the programs one at a time; a race on a GPU, where they run at once: updates lost, a different sum from run to run; the self-check refuses two programs storing to one address | the same: per-program partials |
# | every program adds its part into one shared row with `tl.atomic_add` | no update lost, but a GPU applies the adds in whatever order the programs arrive: the weight gradient's last bits change from run to run, and the programs wait on the same addresses; the self-check refuses it | per-program partials, reduced afterwards in a fixed order |
# | the backward as two kernels, or one launched twice, one gradient each | right values, but `a` and `b` read twice: the fusion is lost; the self-check counts the launches | one kernel storing both gradients |
# | the arithmetic on the host (`torch.sigmoid(a)` passed to the kernel) | right values, no fusion: the memory traffic the kernel was for | compute inside the kernel |
#
# ### C++ behind an operator
#
# Before Triton, a custom kernel meant C++ or CUDA, the path the textbooks describe. The C++
# below puts an elementwise op, softsign $x / (1 + |x|)$ with derivative $1 / (1 + |x|)^2$,
# behind operators the way the Python decorators did for the Triton kernels, in two blocks:
# `TORCH_LIBRARY` defines the operators `autograd_course_cpp::softsign` and
# `autograd_course_cpp::softsign_backward` by their schemas, and `TORCH_LIBRARY_IMPL` binds a
# kernel to each for CPU tensors. `AT_DISPATCH_FLOATING_TYPES` picks the loop's C++ type
# (`scalar_t`) from the tensor's dtype; `at::parallel_for` splits it over CPU threads.
#
# `torch.utils.cpp_extension.load_inline` compiles the source into a shared library and loads
# it; loading runs the two blocks, which register the operators with PyTorch's dispatcher, and
# Python then reaches them as `torch.ops.autograd_course_cpp.softsign`. So no Python module is
# built (`is_python_module=False`, no pybind11 bindings), and the source includes only the
# headers it uses (`no_implicit_headers=True`) instead of `torch/extension.h`, which brings
# pybind11 and all of PyTorch's C++ API. The first build takes about 5 to 20 s on this
# course's two-core machine (torch 2.13), depending on its load, and a pybind11 module of the
# same kernel built on `torch/extension.h` about three times as long; later runs, in any
# kernel, reuse it from `~/.cache/torch_extensions` (or `$TORCH_EXTENSIONS_DIR`).
# A namespace can be defined only once in a process: to load an edited source, restart the
# kernel.

# %% tags=["skip-when-grading"]
SOFTSIGN_CPP = r"""
#include <cmath>

#include <ATen/core/Tensor.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

at::Tensor softsign_cpu(const at::Tensor& input) {
  at::Tensor x = input.contiguous();
  at::Tensor y = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "softsign", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* out = y.data_ptr<scalar_t>();
    at::parallel_for(0, x.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = in[i] / (1 + std::abs(in[i]));
    });
  });
  return y;
}

at::Tensor softsign_backward_cpu(const at::Tensor& grad_output, const at::Tensor& input) {
  at::Tensor grad = grad_output.contiguous();
  at::Tensor x = input.contiguous();
  at::Tensor grad_x = at::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "softsign_backward", [&] {
    const scalar_t* g = grad.data_ptr<scalar_t>();
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* out = grad_x.data_ptr<scalar_t>();
    at::parallel_for(0, x.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        scalar_t d = 1 + std::abs(in[i]);
        out[i] = g[i] / (d * d);
      }
    });
  });
  return grad_x;
}

TORCH_LIBRARY(autograd_course_cpp, m) {
  m.def("softsign(Tensor x) -> Tensor");
  m.def("softsign_backward(Tensor grad, Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(autograd_course_cpp, CPU, m) {
  m.impl("softsign", &softsign_cpu);
  m.impl("softsign_backward", &softsign_backward_cpu);
}
"""

from torch.utils import cpp_extension  # noqa: E402

if not cpp_extension.is_ninja_available():
    print("The C++ section needs ninja: pip install ninja==1.13.2, then restart the kernel")
elif hasattr(torch.ops.autograd_course_cpp, "softsign"):
    print("autograd_course_cpp is loaded in this kernel already (restart the kernel to load an "
          "edited source: a second library defining the namespace would abort the process)")
else:
    started = time.perf_counter()
    cpp_extension.load_inline("autograd_course_cpp", cpp_sources=SOFTSIGN_CPP,
                              is_python_module=False, no_implicit_headers=True,
                              extra_cflags=["-O3"])
    print(f"compiled (or reused) and loaded in {time.perf_counter() - started:.1f} s")
cpp_loaded = hasattr(torch.ops.autograd_course_cpp, "softsign")

# %% [markdown]
# The C++ side gave the operators their schemas and CPU kernels; Python adds the rest of the
# five pieces with the same `torch.library` calls, on the operators' qualified names: a fake
# implementation for each, and the autograd formula. They go into a `torch.library.Library`
# object of their own: re-running the cell drops the old registrations with the old object,
# where registering over them would print a warning.

# %% tags=["skip-when-grading"]
if cpp_loaded:
    softsign_cpp = torch.ops.autograd_course_cpp.softsign
    softsign_cpp_backward = torch.ops.autograd_course_cpp.softsign_backward
    cpp_registrations = torch.library.Library("autograd_course_cpp", "FRAGMENT")

    @torch.library.register_fake("autograd_course_cpp::softsign", lib=cpp_registrations)
    def _(x):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    @torch.library.register_fake("autograd_course_cpp::softsign_backward", lib=cpp_registrations)
    def _(grad, x):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    def softsign_cpp_setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def softsign_cpp_autograd(ctx, grad_output):
        x, = ctx.saved_tensors
        return softsign_cpp_backward(grad_output, x)

    torch.library.register_autograd("autograd_course_cpp::softsign", softsign_cpp_autograd,
                                    setup_context=softsign_cpp_setup_context,
                                    lib=cpp_registrations)

    x = torch.randn(2**20, dtype=torch.float32, requires_grad=True)
    torch.library.opcheck(softsign_cpp, (x[:100].detach().requires_grad_(),))
    print("opcheck passes; gradcheck:", torch.autograd.gradcheck(
        softsign_cpp, (x[:20].detach().double().requires_grad_(),)))
    for name, f in [("composed ops", F.softsign), ("C++ kernel", softsign_cpp)]:
        f(x).sum().backward()  # warm-up
        started = time.perf_counter()
        for _ in range(5):
            f(x).sum().backward()
        print(f"{name:>12}: {(time.perf_counter() - started) / 5 * 1e3:.2f} ms "
              "forward and backward, 2**20 floats")

# %% [markdown]
# On CPU the composed ops are already vectorised loops: the C++ kernel wins by the temporaries
# it neither writes nor reads back (here `|x|`, `1 + |x|`, and backward's several), and by how
# much depends on the size and the threads; `make bench` shows time and bytes moved side by
# side.
#
# **Predict, then run.** Both kernels above dispatch with `AT_DISPATCH_FLOATING_TYPES`.
# What does `softsign_cpp` do with a float16 tensor: `"error"`, `"float16 result"` or
# `"float32 result"`?

# %%
### BEGIN WORKED
my_half_prediction = "error"  # no case of the switch for float16
### LEARNER
my_half_prediction = ""  # "error", "float16 result" or "float32 result"
### END WORKED

# %% tags=["skip-when-grading"]
if cpp_loaded and not written(my_half_prediction):  # the outcome, once yours is written
    print("write your prediction first, then run this cell again")
elif cpp_loaded:
    try:
        half_outcome = str(softsign_cpp(torch.randn(5).half()).dtype).removeprefix("torch.")
        half_outcome += " result"
    except RuntimeError as error:
        half_outcome = "error"
        print("RuntimeError:", str(error).splitlines()[0])
    verdict = ("as you predicted" if same_answer(my_half_prediction, half_outcome)
               else "not what you predicted: why?")
    print(f"you predicted {my_half_prediction!r}; it gave {half_outcome!r} ({verdict})")

# %% [markdown]
# <details><summary><b>Explanation</b> (open after running)</summary>
#
# The macro is a `switch` on the dtype at run time, with one case per type it names (float and
# double for `AT_DISPATCH_FLOATING_TYPES`); any other dtype reaches the default case, which
# raises. Nothing converts the input for you.
# </details>
#
# **Your turn (optional, not graded).** `ATen/Dispatch.h` has variants of the macro that add
# types to the two. Find the one that adds float16, use it in both kernels, restart the
# Python kernel (the namespace can be defined once per process), run the lesson's import
# cell (the one printing the Triton version) and then this section again with `x` in
# float16: the build takes about 5 to 20 s, `opcheck` passes, and the result is within one float16 ulp of `F.softsign`
# computed in float16 (checked on torch 2.13). bfloat16 still raises: that takes another
# variant.
#
# <details><summary><b>In practice</b> (beyond the main line; open when you have time)</summary>
#
# **From bytes to time.** For a kernel that waits on memory, time
# $\approx t_0 + \text{bytes} / \text{bandwidth}$: a fixed cost per call plus the bytes over
# the rate memory delivers them. Two numbers say how well a kernel does:
#
# - **achieved bandwidth** = bytes moved / time (your $8n$ elements times 4 bytes in float32,
#   over the measured time), against the device's **peak**, which the timing cell computes
#   from its memory bus width and memory clock (two transfers per clock). A simple elementwise
#   kernel that reaches most of the peak at large sizes has nothing left to gain;
# - the **time ratio** fused / composed against the byte ratio 0.571: above it, the fused
#   kernels reach a smaller fraction of the peak than PyTorch's own kernels do, or the fixed
#   cost is not yet hidden.
#
# The fixed cost $t_0$ is what a call pays whatever its size: the custom operator's Python
# dispatch, autograd's bookkeeping, each kernel launch. Only large tensors hide it, and it is
# cut by fewer launches (one backward kernel for both gradients, not two), and by letting
# `torch.compile` call the kernel from its own generated code (`triton_op`, above), where
# CUDA graphs (`mode="reduce-overhead"`) can replay the launches.
#
# **BLOCK, num_warps and the grid on a GPU.** One program runs on one streaming
# multiprocessor as `num_warps` warps of 32 threads (Triton's default is 4 warps, 128
# threads), and its `BLOCK` lanes are shared among them: `BLOCK = 256` with 4 warps gives each
# thread 2 elements per tensor. A larger block gives each thread more loads in flight while it
# waits on memory, and fewer programs to schedule; too large, and the values no longer fit in
# the threads' registers. There is no formula: the choice is timed. `@triton.autotune` times a
# list of `triton.Config({"BLOCK": ...}, num_warps=...)` on the first call of each size and
# keeps the fastest (a GPU only); Unsloth and Liger-Kernel choose from the row length instead:
# `BLOCK = next_power_of_2(D)`, 4 warps, 8 from 2048, 16 from 8192, 32 from 32768. One
# program per row goes wrong two ways: few long rows launch fewer programs than the GPU has
# multiprocessors (an H100 SXM has 132), and many short rows give each program little to do
# (pack several rows into one program then, a 2-D block of rows by columns).
#
# **Measured elsewhere.** On an H100 with torch 2.11 and Triton 3.6 (not this course's pinned
# torch 2.13 and Triton 3.9; whether an SXM or a PCIe card was not recorded, and a fraction of
# the peak assumes the variant's own: 3.35 TB/s for the SXM, 2.0 for the PCIe), forward and backward of this lesson's solution (then with `BLOCK = 256`) took 0.79 times
# the composed ops' time at $2^{26}$ elements (64 Mi) and 0.72 at $2^{28}$ (256 Mi): 26 to 38%
# above the byte bound of 0.571 you derived, so its kernels reached a smaller fraction of the
# peak than PyTorch's did; and 1.9 times the composed time at $2^{22}$ elements (4 Mi), where
# the fixed cost (the custom operator's Python dispatch and the launches, about 0.3 ms for
# forward and backward together there) is not hidden. The timing cell above measures your
# own kernels when a GPU is there, and `make bench` measures time and bytes side by side.
# Autograd adds memory too: the composed ops keep `silu(a)` for backward, where your operator
# keeps only `a` and `b`.
#
# **Strides instead of `.contiguous()`.** Liger-Kernel's kernels take a row stride
# (`X.stride(0)`), as "Triton's model" suggests, though its autograd Functions still make
# their inputs contiguous first (`@ensure_contiguous`).
#
# **When not to write this kernel.** `torch.compile` finds this fusion by itself: on torch
# 2.13, compiling `lambda a, b: F.silu(a) * b` (even on CPU) generates one loop for forward,
# reading `a` and `b` and writing `y`, and one loop for backward computing both gradients,
# saving only `a` and `b`: what your two kernels do (`torch._inductor.utils.run_and_get_code`
# shows the generated code). Here the kernel is the exercise, not the advice. Compile first and
# measure; write a kernel for eager code, or where the fusion needs an algorithm the compiler
# does not write for you.
#
# **Memory, Liger-Kernel's way.** Liger's SwiGLU backward (`src/liger_kernel/ops/swiglu.py`)
# stores the two gradients into the saved `a` and `b` themselves, saving two allocations the
# size of the activations. In a Llama MLP nothing reads `gate(x)` and `up(x)` after that
# backward, so it works; anywhere else it is silently wrong: the kernel writes through raw
# pointers, so autograd's version counters do not see it, and a second backward
# (`retain_graph=True`) reads the first one's gradients as `a` and `b` and returns wrong
# gradients without an error (checked on a Liger-style Function in the interpreter). Behind a
# custom operator the writes would have to be declared (`mutates_args`), which is why this
# exercise keeps its inputs untouched.
# </details>
