"""Lesson 13: rms_norm_rows with Triton's layer-norm tutorial's reduction: four rows of partials
shared by the programs behind a lock (an atomic compare-and-swap); and every program adding
into one float32 row with tl.atomic_add (refused: the contract asks for per-program partial
sums reduced afterwards; an atomic sum's last bits vary from run to run on a GPU). The check for two programs storing to one address must leave
both alone, and name a lock taken without waiting for it or released before the barrier."""

from .. import Mistake, Unusual
from .common import _edit
from .rms_norm_rows import RMS

LOCKED = _edit(
    RMS,
    ("def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,\n"
     "                             BLOCK_D: tl.constexpr):",
     "def rms_norm_backward_kernel(grad_ptr, x_ptr, w_ptr, rstd_ptr, grad_x_ptr, partial_w_ptr, D,\n"
     "                             lock_ptr, GROUP: tl.constexpr, BLOCK_D: tl.constexpr):"),
    ("    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(\n"
     "        partial_w_ptr.dtype.element_ty), mask=mask)",
     "    group = row % GROUP\n"
     "    lock, count = lock_ptr + group, lock_ptr + GROUP + group\n"
     "    partial = (grad * x_hat).to(partial_w_ptr.dtype.element_ty)\n"
     "    while tl.atomic_cas(lock, 0, 1) == 1:\n"
     "        pass\n"
     "    if tl.load(count) == 0:\n"
     "        tl.atomic_xchg(count, 1)\n"
     "    else:\n"
     "        partial += tl.load(partial_w_ptr + group * D + columns, mask=mask, other=0.0)\n"
     "    tl.store(partial_w_ptr + group * D + columns, partial, mask=mask)\n"
     "    tl.debug_barrier()\n"
     "    tl.atomic_xchg(lock, 0)"),
    ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
     "    partial_w = torch.zeros((4, D), device=x.device, dtype=rstd.dtype)\n"
     "    locks = torch.zeros(8, device=x.device, dtype=torch.int32)"),
    ("                                                   grad_x, partial_w, D,",
     "                                                   grad_x, partial_w, D, locks, GROUP=4,"))

ATOMIC = _edit(
    RMS,
    ("    tl.store(partial_w_ptr + row * D + columns, (grad * x_hat).to(\n"
     "        partial_w_ptr.dtype.element_ty), mask=mask)",
     "    tl.atomic_add(partial_w_ptr + columns, (grad * x_hat).to(partial_w_ptr.dtype.element_ty),\n"
     "                  mask=mask)"),
    ("    partial_w = torch.empty(rows.shape, device=x.device, dtype=rstd.dtype)",
     "    partial_w = torch.zeros((1, D), device=x.device, dtype=rstd.dtype)"))

UNUSUAL = [Unusual("rms_norm_rows", "four partial rows shared behind a lock (Triton's layer-norm "
                   "tutorial)", LOCKED)]

MISTAKES = [Mistake("rms_norm_rows", "every program adds into one shared row with tl.atomic_add",
                    "adds into shared memory with an atomic operation", ATOMIC),
            Mistake("rms_norm_rows", "the lock tried once, not waited for",
                    "store to the same address, and not both holding one lock",
                    _edit(LOCKED, ("    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass\n",
                                   "    tl.atomic_cas(lock, 0, 1)\n"))),
            Mistake("rms_norm_rows", "the lock released with no barrier after the stores",
                    "with no tl.debug_barrier() in between",
                    _edit(LOCKED, ("    tl.debug_barrier()\n", "")))]
