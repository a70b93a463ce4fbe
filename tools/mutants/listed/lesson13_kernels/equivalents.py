"""Lesson 13's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_COPY_RETURNED = ("a copy of a result just computed is returned in its place: the same values, "
                  "and the original is freed on return")

EQUIVALENTS = [
    EquivalentMutant("silu_mul", "add_copy", "return grad_a, grad_b",
                     "return grad_a, grad_b.clone()", _COPY_RETURNED),
    EquivalentMutant("silu_mul", "add_copy", "return grad_a, grad_b",
                     "return grad_a.clone(), grad_b", _COPY_RETURNED),
    EquivalentMutant("rms_norm_rows", "add_copy", "return y.view(x.shape), rstd",
                     "return y.view(x.shape), rstd.clone()", _COPY_RETURNED),
    EquivalentMutant("rms_norm_rows", "save_copy", "ctx.save_for_backward(x, weight, rstd)",
                     "ctx.save_for_backward(x, weight, rstd.clone())",
                     "a copy of the per-row rstd the kernel just wrote replaces it in the saved "
                     "set: one rstd per row, the same values"),
    EquivalentMutant("silu_mul", "add_copy", "return y", "return y.clone()", _COPY_RETURNED),
    EquivalentMutant("rms_norm_rows", "change_dim",
                     "grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=0) / D)",
                     "grad_x = rstd * (grad_hat - x_hat * tl.sum(grad_hat * x_hat, axis=-1) / D)",
                     "grad_hat * x_hat is one row, a 1-D block: its axis -1 is its axis 0"),
    EquivalentMutant("rms_norm_rows", "drop_statement",
                     "grad, x = grad.to(tl.float32), x.to(tl.float32)", "pass",
                     "a half grad or x meets only float32 values (w, converted before the loop; "
                     "rstd, loaded from float32), and Triton converts the half operand of each "
                     "product to float32 first: the same arithmetic, bit for bit in float16 and "
                     "bfloat16"),
]

# found by grading every mutant of the solutions (session 54), past the cap of 12
_MASKED_LANE = ("a masked-off lane's {} meets a factor loaded as 0 there ({}), in every product "
                "that reaches a sum or a store; masked lanes are never stored")
_PROGRAMS = ("rows_per_program = cdiv(rows, programs): any number of programs from 1 to the "
             "rows covers every row once")
_EMPTY_GRID = ("the guard skips a launch with no rows; a grid of zero programs launches nothing "
               "either, and D is never 0")
_BRANCHES = ("both branches are exact forms of silu, each within an ulp on either side of 0, "
             "so which one takes |a| <= 1e-6 changes no digit the contract sees")
EQUIVALENTS += [
    EquivalentMutant("silu_mul", "nudge_constant", "BLOCK = 1024", "BLOCK = 1023",
                     "this answer never reads the module's BLOCK: each launch passes "
                     "BLOCK=triton.next_power_of_2(width)"),
    *[EquivalentMutant("silu_mul", "move_threshold",
                       "y = tl.where(a > 0, a / (1 + tl.exp(-a)),",
                       f"y = tl.where(a > {bound}, a / (1 + tl.exp(-a)),", _BRANCHES)
      for bound in ("-1e-06", "1e-06")],
    EquivalentMutant("rms_norm_rows", "drop_statement", "w = w.to(tl.float32)", "pass",
                     "a half w meets only float32 values (grad and x converted in the loop, rstd "
                     "loaded from float32), and Triton converts the half operand of each product "
                     "to float32 first"),
    EquivalentMutant("rms_norm_rows", "change_dim",
                     "rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)",
                     "rstd = 1 / tl.sqrt(tl.sum(x * x, axis=-1) / D + eps)",
                     "x * x is one row, a 1-D block: its axis -1 is its axis 0"),
    EquivalentMutant("rms_norm_rows", "add_copy", "ctx.save_for_backward(x, weight, rstd)",
                     "ctx.save_for_backward(x, weight, rstd.contiguous())",
                     "rstd is a fresh torch.empty the kernel wrote: contiguous, so .contiguous() "
                     "returns it"),
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "x = tl.load(x_ptr + offsets, mask=mask, other=0.0)",
                     "x = tl.load(x_ptr + offsets, mask=mask, other=1.0)",
                     _MASKED_LANE.format("x", "grad and w")),
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "grad = tl.load(grad_ptr + offsets, mask=mask, other=0.0)",
                     "grad = tl.load(grad_ptr + offsets, mask=mask, other=1.0)",
                     _MASKED_LANE.format("grad", "w and x")),
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "w = tl.load(w_ptr + columns, mask=mask, other=0.0)",
                     "w = tl.load(w_ptr + columns, mask=mask, other=1.0)",
                     "in forward a masked-off lane's w only scales a y that is never stored; the "
                     "sum of squares reads x alone, loaded as 0 there"),
    *[EquivalentMutant("rms_norm_rows", "nudge_constant", "if rows.shape[0]:",
                       f"if rows.shape[{dim}]:", _EMPTY_GRID) for dim in ("1", "-1")],
    *[EquivalentMutant("rms_norm_rows", "nudge_constant",
                       "programs = min(rows.shape[0], 32)  # a fixed number, whatever the batch "
                       "(Liger: one per SM)",
                       f"programs = min(rows.shape[0], {count})  # a fixed number, whatever the "
                       "batch (Liger: one per SM)", _PROGRAMS) for count in ("31", "33")],
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "rows_per_program = triton.cdiv(rows.shape[0], max(programs, 1))",
                     "rows_per_program = triton.cdiv(rows.shape[0], max(programs, 2))",
                     "programs is at least 2 whenever there are 2 rows; for one row cdiv(1, 2) is "
                     "1, as cdiv(1, 1) is; no rows launch nothing"),
]

# found by grading every silu_mul mutant (review 57, round C)
_CONVERTED_TWICE = ("this answer converts half precision twice, on the host (.float()) and in the "
                    "kernel (.to(tl.float32)): either alone computes in float32")
EQUIVALENTS += [
    EquivalentMutant("silu_mul", "nudge_constant", "BLOCK = 1024", "BLOCK = 1025",
                     "this answer never reads the module's BLOCK: each launch passes "
                     "BLOCK=triton.next_power_of_2(width)"),
    *[EquivalentMutant("silu_mul", "drop_statement", line, "pass", _CONVERTED_TWICE) for line in (
        "grad, a, b = grad.float(), a.float(), b.float()", "a, b = a.float(), b.float()",
        "grad, a, b = grad.to(tl.float32), a.to(tl.float32), b.to(tl.float32)",
        "a, b = a.to(tl.float32), b.to(tl.float32)")],
    EquivalentMutant("silu_mul", "nudge_constant",
                     "block = min(1024, triton.next_power_of_2(max(a.numel(), 1)))",
                     "block = min(1024, triton.next_power_of_2(max(a.numel(), 2)))",
                     "a block of 2 for 0 or 1 elements: the extra lane is masked, and an empty "
                     "tensor launches cdiv(0, 2) = 0 programs either way"),
    *[EquivalentMutant("silu_mul", operator, "y = tl.where(a > 0, a / (1 + tl.exp(-a)),",
                       f"y = tl.where({test}, a / (1 + tl.exp(-a)),",
                       "both branches are exact forms of silu, and for |a| <= 1 neither exp "
                       "overflows: which takes a in [-1, 1] moves a digit at most, inside the "
                       "tolerance")
      for operator, test in (("swap_comparison", "a >= 0"), ("nudge_constant", "a > 1"),
                             ("nudge_constant", "a > -1"))],
]

# found by grading every rms_norm_rows mutant (--cap 0, review 59): the catalogue's answers
_SAVED = "ctx.save_for_backward(x, weight, output[1])"
_BACKWARD_LANE = ("in the backward kernel a masked-off lane's {} meets {}, 0 there (grad and w "
                  "loaded as 0), in every product that reaches a sum or a store; masked lanes "
                  "are never stored")
_STORED_MASKED = ("{} reaches only a store masked with the same mask: a masked-off lane's value "
                  "is never stored nor reduced")
_ZEROED_ROWS = ("the partial rows are torch.zeros, so the first program's plain store equals "
                "adding to its row: every program adding under the lock is the same sum")
_DROPPED_TERM = "first = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)"
EQUIVALENTS += [
    EquivalentMutant("rms_norm_rows", "save_copy", _SAVED,
                     "ctx.save_for_backward(x, weight, output[1].clone())",
                     "a copy of the per-row rstd the kernel just wrote replaces it in the saved "
                     "set: one rstd per row, the same values"),
    *[EquivalentMutant("rms_norm_rows", "add_copy", before, after, _COPY_RETURNED)
      for before, after in (
          ("return grad_x.view(x.shape), partial_w", "return grad_x.view(x.shape), "
           "partial_w.clone()"),
          ("return grad_x.view(x.shape), grad_weight",
           "return grad_x.view(x.shape), grad_weight.clone()"))],
    *[EquivalentMutant("rms_norm_rows", "change_dim", line, line.replace("axis=0", "axis=-1"),
                       "a one-row block is 1-D: its axis -1 is its axis 0") for line in (
        "rstd = tl.rsqrt(tl.sum(x * x, axis=0) / D + eps)",
        "rstd = 1 / tl.sqrt(tl.sum(total, axis=0) / D + eps)")],
    *[EquivalentMutant("rms_norm_rows", "nudge_constant", line, line.replace("other=0.0",
                                                                             "other=1.0"), why)
      for line, why in (
          ("grad = tl.load(grad_ptr + row * D + columns, mask=mask, other=0.0)",
           _BACKWARD_LANE.format("grad", "w and x")),
          ("x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0)",
           _BACKWARD_LANE.format("x", "grad and grad * w") + " (the forward kernel's same "
           "line sums it in x * x: that mutant is killed)"),
          ("grad = tl.load(grad_ptr + row * D + columns, mask=mask, other=0.0).to(w.dtype)",
           _BACKWARD_LANE.format("grad", "w and x")),
          ("x = tl.load(x_ptr + row * D + columns, mask=mask, other=0.0).to(w.dtype)",
           _BACKWARD_LANE.format("x", "grad and grad * w")),
          ("w = tl.load(w_ptr + columns, mask=columns < D, other=0.0)",
           _STORED_MASKED.format("in forward w")),
          ("x = tl.load(x_ptr + row * D + start + columns, mask=inside, other=0.0)"
           ".to(total.dtype)", _STORED_MASKED.format("the second loop's x")),
          ("w = tl.load(w_ptr + start + columns, mask=inside, other=0.0).to(total.dtype)",
           _STORED_MASKED.format("the second loop's w")),
          ("total = tl.load(partial_ptr + columns, mask=mask, other=0.0)  # float32, or float64",
           _STORED_MASKED.format("the column sum")),
          ("total += tl.load(partial_ptr + row * D + columns, mask=mask, other=0.0)",
           _STORED_MASKED.format("the column sum")),
          ("partial += tl.load(partial_w_ptr + group * D + columns, mask=mask, other=0.0)",
           _STORED_MASKED.format("the shared row's sum")),
          (_DROPPED_TERM, "first is read for its dtype alone"))],
    *[EquivalentMutant("rms_norm_rows", "drop_term", _DROPPED_TERM, after,
                       "first is read for its dtype alone, and the address stays inside x "
                       "(row + columns < rows * D on the unmasked lanes)") for after in (
        "first = tl.load(x_ptr + columns, mask=mask, other=0.0)",
        "first = tl.load(x_ptr + row + columns, mask=mask, other=0.0)")],
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "rms_norm_kernel[(triton.cdiv(rows.shape[0], 4),)](",
                     "rms_norm_kernel[(triton.cdiv(rows.shape[0], 3),)](",
                     "cdiv(rows, 3) programs of 4 rows cover every row; an extra program's rows "
                     "are all past n_rows, masked out of every load and store"),
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "column_sum_kernel[(triton.cdiv(D, 64),)](partial_w, grad_weight, "
                     "rows.shape[0], D,",
                     "column_sum_kernel[(triton.cdiv(D, 63),)](partial_w, grad_weight, "
                     "rows.shape[0], D,",
                     "cdiv(D, 63) programs of 64 columns cover every column; an extra program's "
                     "columns are all past D, masked out of every load and store"),
]
_LOCKS = "lock, count = lock_ptr + group, lock_ptr + GROUP + group"
EQUIVALENTS += [
    EquivalentMutant("rms_norm_rows", "drop_term", _LOCKS,
                     "lock, count = lock_ptr, lock_ptr + GROUP + group",
                     "one lock for the four rows still lets one program at a time update any "
                     "row: a coarser lock, slower, never a race"),
    EquivalentMutant("rms_norm_rows", "drop_term", _LOCKS,
                     "lock, count = lock_ptr + group, lock_ptr + GROUP", _ZEROED_ROWS),
    EquivalentMutant("rms_norm_rows", "drop_term", _LOCKS,
                     "lock, count = lock_ptr + group, lock_ptr + group",
                     "count is the held lock, 1 when read: every program adds under the lock "
                     "to a row of torch.zeros, the same sum"),
    *[EquivalentMutant("rms_norm_rows", operator, "if tl.load(count) == 0:", after, _ZEROED_ROWS)
      for operator, after in (("move_threshold", "if tl.load(count) == 1e-06:"),
                              ("move_threshold", "if tl.load(count) == -1e-06:"),
                              ("swap_comparison", "if tl.load(count) != 0:"),
                              ("nudge_constant", "if tl.load(count) == 1:"),
                              ("nudge_constant", "if tl.load(count) == -1:"))],
    EquivalentMutant("rms_norm_rows", "nudge_constant", "tl.atomic_xchg(count, 1)",
                     "tl.atomic_xchg(count, 2)", "count is only compared with 0: 2 marks a "
                     "written row as 1 does"),
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "partial_w = torch.zeros((4, D), device=x.device, dtype=rstd.dtype)",
                     "partial_w = torch.zeros((5, D), device=x.device, dtype=rstd.dtype)",
                     "the extra row of zeros is never written and adds 0 to partial_w.sum(0)"),
    EquivalentMutant("rms_norm_rows", "nudge_constant",
                     "locks = torch.zeros(8, device=x.device, dtype=torch.int32)",
                     "locks = torch.zeros(9, device=x.device, dtype=torch.int32)",
                     "the kernel reads the first 2 * GROUP = 8 ints: a ninth is never touched"),
    EquivalentMutant("rms_norm_rows", "nudge_constant", "grad_x, partial_w, D, locks, GROUP=4,",
                     "grad_x, partial_w, D, locks, GROUP=3,",
                     "three groups share rows 0-2 behind locks 0-2 (counts 3-5, inside the 8 "
                     "ints); row 3 stays zeros and adds 0 to partial_w.sum(0)"),
]
