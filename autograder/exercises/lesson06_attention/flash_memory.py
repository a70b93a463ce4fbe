"""Lesson 06: FlashAttention's memory clause: no tensor beyond BLOCK x BLOCK per batch-head
besides the inputs, outputs and per-row statistics and pieces of them of at most BLOCK rows,
and only a few tiles alive at once, forward and backward, with grad and without, by the
allocations it makes and (on CUDA) its peak."""

import math

import torch
from torch.utils._pytree import tree_flatten

from ...checks import (case, make_inputs, run_forward)
from ...diagnose import diagnose_values
from ...errors import GradingError
from ...memory import TensorAccounting, cuda_peak
from .flash_probes import NAME, block_size, flash_values
from .flash_spec import FLASH, describe, flash_backward as _backward, flash_reference


class _Accounting(TensorAccounting):
    """``TensorAccounting`` that also notes, per phase, which op first created each shape
    and in which dtype (``phase.made``), so that a refusal names the op behind the tensor, and
    the peak bytes of live working tensors (``phase.working``: those whose shape ``working``
    accepts, the tiles, not what is shaped as an input, an output or a per-row statistic),
    with how many were alive then (``phase.tiles``) and the largest's shape (``phase.tile``)."""

    def __init__(self, working=lambda shape: False):
        self._working, self._kept, self._kept_bytes = working, {}, 0
        super().__init__()

    def start(self, name: str):
        phase = super().start(name)
        phase.made, phase.working, phase.tile, phase.tiles = {}, 0, None, 0
        return phase

    def _sweep(self) -> None:
        super()._sweep()
        for key in [key for key in self._kept if key not in self.live]:
            self._kept_bytes -= self._kept.pop(key)[1]

    def _record(self, func, out) -> None:
        before = set(self.live)
        known = len(self.phase.shapes)
        super()._record(func, out)
        for tensor in tree_flatten(out)[0]:
            if not isinstance(tensor, torch.Tensor) or tensor.numel() == 0:
                continue
            try:
                key = tensor.untyped_storage().data_ptr()
            except (RuntimeError, NotImplementedError):
                continue
            if key in self.live and key not in before and key not in self._kept and \
                    self._working(tuple(tensor.shape)):
                self._kept[key] = (tuple(tensor.shape), self.live[key][1])
                self._kept_bytes += self.live[key][1]
        if self._kept_bytes > self.phase.working:
            self.phase.working = self._kept_bytes
            self.phase.tile = max((shape for shape, _ in self._kept.values()),
                                  key=math.prod)
            self.phase.tiles = len(self._kept)
        if len(self.phase.shapes) == known:
            return
        for tensor in tree_flatten(out)[0]:
            if isinstance(tensor, torch.Tensor):
                shape = tuple(tensor.shape)
                if shape in self.phase.shapes and shape not in self.phase.made:
                    self.phase.made[shape] = (func.overloadpacket.__name__, tensor.dtype)


def _budget(values: dict, block: int) -> tuple[int, int]:
    """(elements of the largest tensor allowed, bytes of live tensors allowed) per phase:
    BLOCK x BLOCK per batch-head, or one input's, output's or gradient's worth, and a few
    tiles beyond a few copies of Q, K, V and O in float32 or wider."""
    Q, K, V = values["Q"], values["K"], values["V"]
    heads, (Lq, d), (Lk, dv) = math.prod(Q.shape[:-2]), Q.shape[-2:], V.shape[-2:]
    width = max(Q.element_size(), 4)
    largest = heads * max(block * block, Lq * max(d, dv), Lk * max(d, dv))
    whole = heads * (Lq * (d + dv) + Lk * (d + dv)) * width
    return largest, 3 * whole + 8 * heads * block * block * width


def _fixed_tile(function, device, phase: str) -> tuple | None:
    """The shape of the largest tensor ``phase`` creates on 72 x 72 scores, when it is the same
    for BLOCK = 4 and BLOCK = 8 and smaller than the whole matrix (a hard-coded block size)."""
    values = flash_values((), 72, 72, 2, 2, device)
    shapes = []
    for block in (4, 8):  # a tile of scores bigger than either, yet not the whole matrix
        inputs = make_inputs(values)
        with block_size(function, block), TensorAccounting() as books:
            books.start("forward")
            output = function.apply(*inputs.values())
            books.start("backward")
            if phase == "backward":
                _backward(output, inputs, torch.ones_like(output))
        largest = books.phases[phase].largest
        shapes.append(largest.shape if largest else None)
    same = shapes[0] == shapes[1] and shapes[0] is not None
    return shapes[0] if same and 8 < min(shapes[0][-2:]) < 72 else None


def _per_head(shape: tuple, lead: tuple) -> tuple:
    """``shape`` per batch-head: without Q's leading dimensions where it starts with them (a
    tensor that lacks them is shared by every batch-head, as a broadcast mask is)."""
    return tuple(shape[len(lead):]) if tuple(shape[:len(lead)]) == lead else tuple(shape)


def _beyond_a_tile(shapes, values: dict, block: int) -> tuple | None:
    """The largest shape among ``shapes`` that holds more than BLOCK x BLOCK elements per
    batch-head and is not shaped as an input, an output or a per-row statistic (L, Lq x d,
    d x Lk, ... per batch-head, any leading dimensions of size 1; a per-row statistic also with
    its leading dimensions flattened into one), or as a piece of one of at most BLOCK rows (BLOCK x d, d x BLOCK): a block of rows against every key, say, which the
    element budget of one whole input lets through."""
    Q, V = values["Q"], values["V"]
    lead, (Lq, d), Lk, dv = tuple(Q.shape[:-2]), Q.shape[-2:], values["K"].shape[-2], V.shape[-1]
    lengths, widths = {Lq, Lk}, {d, dv}
    flattened = {math.prod(lead) * length for length in lengths}
    found = []
    for shape in shapes:
        own = shape[len(lead):] if shape[:len(lead)] == lead else shape  # per batch-head
        own = tuple(size for size in own if size != 1)
        if math.prod(own) <= block * block:
            continue
        if len(own) == 1 and own[0] in lengths:  # a per-row statistic, or positions
            continue
        if len(own) == 1 and own[0] in flattened:
            continue  # a per-row statistic of every batch-head, its leading dimensions
            # flattened: what einsum and batched @ make of rowsum(dO * O) (bmm's (B*Lq, 1, 1))
        if len(own) == 2 and ((own[0] in lengths | set(range(1, block + 1))
                               and own[1] in widths)
                              or (own[0] in widths
                                  and own[1] in lengths | set(range(1, block + 1)))):
            continue  # an input's, an output's or a gradient's worth, or a BLOCK-row piece
        found.append(shape)
    return max(found, key=math.prod) if found else None


# working memory (tiles and what is made of them) alive at once, in BLOCK x BLOCK tiles per
# batch-head: the course's answers peak at 4 in forward and 7 in backward (lucidrains-style
# einsum tiles); a forward that lists a row's score tiles before exponentiating them holds
# Lk / BLOCK of them, a backward that keeps every dS tile for a second pass Lq x Lk / BLOCK^2
_TILES = 12


def _tiles_kept(books, phase: str, values: dict, block: int, tiles: int) -> None:
    """Refuse a phase that had more than ``_TILES`` tiles' worth of working memory alive at
    once, naming the list a row's (or the problem's) tiles were kept in."""
    row = -(-values["K"].shape[-2] // block)  # the key tiles of one query block
    every = row * -(-values["Q"].shape[-2] // block)
    if phase == "forward" and books.tiles >= every > row:
        cause = (f"kept the tiles of every query block alive: a list of tiles ({books.tiles} "
                 f"tensors where the problem has {every} score tiles)")
    elif phase == "forward" and books.tiles >= row:
        cause = (f"kept every tile of a row alive: a list of tiles (the {row} score tiles of a "
                 "query block, all held before the row was done)")
    elif books.tiles >= row:
        cause = (f"kept tiles alive across the loop: a list of tiles ({books.tiles} tensors "
                 f"where a query block meets {row} key tiles), kept for a later pass")
    else:
        cause = "kept more tiles alive than one step of the loop uses"
    raise GradingError(
        f"{NAME}'s {phase} {cause}: {books.working} bytes of working memory alive at once "
        f"({books.tiles} tensors, the largest {books.tile}) where a few BLOCK x BLOCK tiles "
        f"take at most {tiles}; let each tile go once it has been used, before the next is "
        "made (no list of tiles)",
        mistake=f"FlashAttention/tiles-kept-alive-in-{phase}")


def _working(values: dict, block: int):
    """Whether a tensor of a given shape is working memory: more than BLOCK elements per
    batch-head and not shaped as an input, an output, a gradient or a per-row statistic, nor
    as a piece of one of at most BLOCK rows (what ``_beyond_a_tile`` lets through at any size):
    the score tiles and what is made of them."""
    Q, V = values["Q"], values["V"]
    lead, (Lq, d), Lk, dv = tuple(Q.shape[:-2]), Q.shape[-2:], values["K"].shape[-2], V.shape[-1]
    lengths, widths = {Lq, Lk}, {d, dv}
    flattened = {math.prod(lead) * length for length in lengths}
    rows = lengths | set(range(1, block + 1))

    def working(shape: tuple) -> bool:
        own = shape[len(lead):] if shape[:len(lead)] == lead else shape
        own = tuple(size for size in own if size != 1)
        if math.prod(own) <= block or (len(own) == 1 and own[0] in lengths | flattened):
            return False
        return not (len(own) == 2 and ((own[0] in rows and own[1] in widths)
                                       or (own[0] in widths and own[1] in rows)))
    return working


def check_allocations(function, values: dict, block: int, *, grad: bool = True) -> None:
    """The largest tensor and the peak of live tensors in forward and in backward, by
    live-tensor accounting; with ``grad=False``, of forward alone under torch.no_grad() (as
    inference runs it: the contract's memory holds there too)."""
    Q, K = values["Q"], values["K"]
    heads, Lq, Lk = math.prod(Q.shape[:-2]), Q.shape[-2], K.shape[-2]
    largest, budget = _budget(values, block)
    tiles = _TILES * heads * block * block * max(Q.element_size(), 4)
    inputs = make_inputs(values, requires_grad=grad)
    grad_output = torch.randn((*Q.shape[:-1], values["V"].shape[-1]), dtype=Q.dtype,
                              generator=torch.Generator().manual_seed(1)).to(Q.device)
    where = describe(values, block) + ("" if grad else ", under torch.no_grad()")
    with block_size(function, block), case(where):
        with _Accounting(_working(values, block)) as books, torch.set_grad_enabled(grad):
            books.start("forward")
            forward = run_forward(function, FLASH, inputs)
            books.start("backward")
            if grad:
                _backward(forward.output, inputs, grad_output)
        diagnose_values(f"{NAME}'s output", forward.output, flash_reference(
            **make_inputs(values, requires_grad=False)), rtol=1e-5, atol=1e-7,
            computed_in=Q.dtype)
        for phase in ("forward", "backward") if grad else ("forward",):
            books_ = books.phases[phase]
            if any("scaled_dot_product" in op for op in books_.ops):
                raise GradingError(f"{NAME}.{phase} calls F.scaled_dot_product_attention: "
                                   "compute it tile by tile yourself")
            big = books_.largest
            if big is not None and big.numel > largest:
                fixed = _fixed_tile(function, Q.device, phase)
                own = _per_head(big.shape, tuple(Q.shape[:-2]))
                if fixed is not None:
                    raise GradingError(
                        f"{NAME} ignores {NAME}.BLOCK in {phase}: its largest {phase} tile is "
                        f"{fixed} whether BLOCK is 4 or 8 (one batch-head), and {own} per "
                        f"batch-head here, with BLOCK={block}: the block size is fixed in the "
                        f"code, not read from {NAME}.BLOCK, which the grader sets",
                        mistake=f"FlashAttention/block-hard-coded-in-{phase}")
                full = big.shape[-2:] in ((Lq, Lk), (Lk, Lq))
                mask = full and (big.dtype == torch.bool or big.op in ("ones", "tril", "triu"))
                what = ("builds a full Lq x Lk mask" if mask else "materialises the full Lq x "
                        "Lk matrix" if full else "creates a tensor bigger than a tile")
                cause = (": a mask of every query against every key, where a tile's mask "
                         "depends only on that tile's query and key positions" if mask else
                         ": every score of a batch-head at once, where a tile holds BLOCK x "
                         "BLOCK of them" if full else "")
                raise GradingError(
                    f"{NAME}'s {phase} {what}: it created a tensor of shape {big.shape} (by "
                    f"{big.op}), {math.prod(own)} elements per batch-head where a BLOCK x "
                    f"BLOCK tile holds {block * block} (BLOCK={block}){cause}")
            if True:  # both passes: the contract's clause is about forward and backward
                shape = _beyond_a_tile(books_.shapes, values, block)
                if shape is not None:
                    block_rows = any(0 < s <= block for s in shape)
                    rows = ("a block of query rows against every key, BLOCK x Lk"
                            if Lk in shape and block_rows and phase == "forward" else
                            "a block of keys against every query, Lq x BLOCK"
                            if Lq in shape and block_rows else
                            "more than a BLOCK x BLOCK tile")
                    op, dtype = books_.made.get(shape, ("an op", None))
                    advice = ("build each tile's mask from that tile's query and key positions"
                              if dtype == torch.bool else
                              f"make what {op} computes one tile, or one block of rows, at a "
                              "time")
                    raise GradingError(
                        f"{NAME}'s {phase} creates a tensor of shape {shape} (by {op}), {rows}: "
                        f"{phase} may create at most BLOCK x BLOCK = {block * block} elements "
                        "per batch-head besides tensors shaped as the inputs, outputs and "
                        "per-row statistics and pieces of them of at most BLOCK rows; "
                        f"{advice}",
                        mistake=f"FlashAttention/row-block-tensor-in-{phase}")
            if books_.working > tiles:
                _tiles_kept(books_, phase, values, block, tiles)
            if books_.peak > budget:
                raise GradingError(
                    f"{NAME}'s {phase} had {books_.peak} bytes of tensors alive at its peak "
                    f"where tiles need at most {budget}: let each tile go before the next "
                    "(no list of tiles, no full-size scores)")


def check_cuda_peak(function, values: dict, block: int) -> None:
    """On CUDA: torch.cuda.max_memory_allocated during forward and during backward."""
    _, budget = _budget(values, block)
    inputs = make_inputs(values)
    device = values["Q"].device
    grad_output = torch.randn_like(values["Q"][..., :values["V"].shape[-1]])
    with block_size(function, block), case(describe(values, block)):
        held = {}
        forward_peak = cuda_peak(lambda: held.update(out=function.apply(*inputs.values())),
                                 device)
        backward_peak = cuda_peak(lambda: held["out"].backward(grad_output), device)
        for phase, peak in (("forward", forward_peak), ("backward", backward_peak)):
            if peak > budget:
                raise GradingError(f"{NAME}'s {phase} allocated {peak} bytes at its CUDA peak "
                                   f"where tiles need at most {budget}: no full-size scores")
