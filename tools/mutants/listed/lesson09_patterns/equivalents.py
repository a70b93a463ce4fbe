"""Lesson 09's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_NO_SAVING_RULE = ("a copy of, or an extra, saved tensor holds the same values; this exercise's "
                   "contract bounds no saved memory")
_MADE_IN_FORWARD = ("a copy of a tensor forward made and then drops: the same bytes saved, and "
                    "the contract counts what is saved, not which buffer holds it")
_RETURNED_COPY = ("a gradient or output returned as a copy, or as grad_output itself, holds the "
                  "same values; autograd accepts both")
_EMPTY = ("the branch for an empty tensor only: the general path gives the same (empty or "
          "zero) result there, and a one-element slice's gradient is grad_output itself")
_TO_OWN_SHAPE = ("x.shape is the moved-back tensor's own shape, or () from (1,) for a 0-d x: view "
                 "to a tensor's own shape, or of one entry, never needs a copy, as reshape's")


_TIE = ("a strict and a non-strict comparison of the norm with eps differ only on a row whose "
        "norm equals eps in x's dtype, which the contract lets take either side")


def _e(exercise, operator, before, after, reason):
    return EquivalentMutant(exercise, operator, before, after, reason)


_SAVE_AB = "ctx.save_for_backward(a, b)"
_LOOP_SAVE = "ctx.save_for_backward(indices.movedim(-1, dim).reshape(x.shape))"
_CUMMAX_SAVE = "ctx.save_for_backward(indices)  # int64 positions of the running maxima"

EQUIVALENTS = [
    # BroadcastMul: no saving rule
    _e("BroadcastMul", "move_threshold", "if own.dim() == 0:", "if own.dim() == 1e-06:",
       "dim() is an int, never 1e-06: the general branch, which handles a 0-d input too, runs"),
    _e("BroadcastMul", "save_copy", _SAVE_AB, "ctx.save_for_backward(a.clone(), b)",
       _NO_SAVING_RULE),
    _e("BroadcastMul", "save_copy", _SAVE_AB, "ctx.save_for_backward(a, b.clone())",
       _NO_SAVING_RULE),
    _e("BroadcastMul", "add_copy", _SAVE_AB, "ctx.save_for_backward(a.contiguous(), b)",
       _NO_SAVING_RULE),
    _e("BroadcastMul", "add_copy", _SAVE_AB, "ctx.save_for_backward(a, b.contiguous())",
       _NO_SAVING_RULE),
    _e("BroadcastMul", "save_input_not_output", "ctx.save_for_backward(a, b, y)",
       "ctx.save_for_backward(a, b, a)", "the third saved tensor is never read by backward; "
       + _NO_SAVING_RULE),
    _e("BroadcastMul", "ignore_needs_input_grad", "a if ctx.needs_input_grad[1] else None)",
       "a if True else None)", "saves a where backward then does not read it; "
       + _NO_SAVING_RULE),
    # ProdOverDim
    _e("ProdOverDim", "save_copy", "ctx.save_for_backward(x)", "ctx.save_for_backward(x.clone())",
       _NO_SAVING_RULE),
    _e("ProdOverDim", "add_copy", "ctx.save_for_backward(x)",
       "ctx.save_for_backward(x.contiguous())", _NO_SAVING_RULE),
    _e("ProdOverDim", "drop_copy", "return grad_output.clone(), None", "return grad_output, None",
       _RETURNED_COPY),
    _e("ProdOverDim", "nudge_constant", "ones = torch.ones_like(x.narrow(dim, 0, 1))",
       "ones = torch.ones_like(x.narrow(dim, -1, 1))",
       "ones_like reads only the slice's shape, the same for the first and the last slice"),
    # Cumsum
    _e("Cumsum", "drop_copy", "return grad_output.clone(), None", "return grad_output, None",
       _RETURNED_COPY),
    _e("Cumsum", "drop_copy",
       "return (torch.cat(parts, dim) if parts else grad_output.clone()), None",
       "return (torch.cat(parts, dim) if parts else grad_output), None", _RETURNED_COPY),
    # IndexSelect
    _e("IndexSelect", "reshape_to_view",
       "rows = index.reshape(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)",
       "rows = index.view(-1, *([1] * (grad_output.dim() - 1))).expand_as(grad_output)",
       "index is 1-D: view only appends dims of size 1, which any stride allows"),
    _e("IndexSelect", "add_copy", "return out, None", "return out.clone(), None", _RETURNED_COPY),
    # Normalize
    _e("Normalize", "save_copy", "ctx.save_for_backward(y, norm)",
       "ctx.save_for_backward(y, norm.clone())", _MADE_IN_FORWARD),
    _e("Normalize", "save_copy", "ctx.save_for_backward(y, n)",
       "ctx.save_for_backward(y, n.clone())", _MADE_IN_FORWARD),
    _e("Normalize", "add_copy", "ctx.save_for_backward(y, norm)",
       "ctx.save_for_backward(y, norm.contiguous())", _MADE_IN_FORWARD),
    _e("Normalize", "add_copy", "ctx.save_for_backward(y, n)",
       "ctx.save_for_backward(y, n.contiguous())", _MADE_IN_FORWARD),
    _e("Normalize", "save_copy", "ctx.save_for_backward(y, divisor)",
       "ctx.save_for_backward(y, divisor.clone())", _MADE_IN_FORWARD),
    _e("Normalize", "swap_comparison", "above = norm >= ctx.eps", "above = norm > ctx.eps",
       "the two differ only on a row whose norm equals eps, which the contract lets take either "
       "side"),
    # CumMax: the indices are forward's own (only the values are returned); .contiguous() of
    # contiguous indices is those indices (a .clone() is a tensor made only to be saved, which
    # check_saves_cummax_indices fails)
    _e("CumMax", "add_copy", "ctx.save_for_backward(indices)",
       "ctx.save_for_backward(indices.contiguous())", _MADE_IN_FORWARD),
    _e("CumMax", "add_copy", _CUMMAX_SAVE,
       _CUMMAX_SAVE.replace("(indices)", "(indices.contiguous())"), _MADE_IN_FORWARD),
    _e("CumMax", "add_copy", "return values", "return values.clone()", _RETURNED_COPY),
    _e("CumMax", "move_threshold", "if indices.numel() == 0:", "if indices.numel() == -1e-06:",
       _EMPTY),
    _e("CumMax", "move_threshold", "if indices.numel() == 0:", "if indices.numel() == 1e-06:",
       _EMPTY),
    _e("CumMax", "nudge_constant", "if indices.numel() == 0:", "if indices.numel() == 1:",
       _EMPTY),
    _e("CumMax", "drop_copy", "return grad_output.clone(), None", "return grad_output, None",
       _RETURNED_COPY),
    # the second round (cap 120)
    _e("BroadcastMul", "save_copy", "ctx.save_for_backward(b if ctx.needs_input_grad[0] else None,",
       "ctx.save_for_backward(b.clone() if ctx.needs_input_grad[0] else None,", _NO_SAVING_RULE),
    _e("BroadcastMul", "save_copy", "ctx.save_for_backward(a, b, y)",
       "ctx.save_for_backward(a.clone(), b, y)", _NO_SAVING_RULE),
    _e("BroadcastMul", "move_threshold",
       "dims = [i for i, size in enumerate(own.shape) if size == 1 and g.shape[i] != 1]",
       "dims = [i for i, size in enumerate(own.shape) if size == 1 and g.shape[i] != 0.5]",
       "the test then also keeps dims where g has size 1 too: summing those with keepdim "
       "changes nothing"),
    # found by the uncapped mutants (session 56)
    # the route through logs (review 56): nz holds no zero, and sign is +1 or -1
    _e("ProdOverDim", "swap_comparison", "sign = torch.where(nz < 0, -1.0, 1.0).to(x.dtype)",
       "sign = torch.where(nz <= 0, -1.0, 1.0).to(x.dtype)",
       "nz has its zeros replaced by ones, so no entry of it is 0"),
    _e("ProdOverDim", "swap_arithmetic",
       "others_nz = sign.prod(dim, keepdim=True) * sign * torch.exp(total_log - logs)",
       "others_nz = sign.prod(dim, keepdim=True) / sign * torch.exp(total_log - logs)",
       "sign is +1 or -1, so multiplying by it and dividing by it are the same"),
    _e("IndexSelect", "add_copy", "return grad_x, None", "return grad_x.clone(), None",
       _RETURNED_COPY),
    _e("CumMax", "add_copy", "return out, None", "return out.clone(), None", _RETURNED_COPY),
    # CumMax's catalogued correct answers (review 56)
    _e("CumMax", "nudge_constant", "if indices.numel() == 0:", "if indices.numel() == -1:",
       _EMPTY),
    _e("CumMax", "nudge_constant",
       "best, where = moved[..., 0], torch.zeros_like(moved[..., 0], dtype=torch.int64)",
       "best, where = moved[..., 0], torch.zeros_like(moved[..., -1], dtype=torch.int64)",
       "the first and last entries along dim have the same shape: zeros of one are zeros of "
       "the other"),
    # found by the uncapped mutants (review 57): the unusual answers' own copies and branches
    _e("BroadcastMul", "move_threshold",
       "keep = [i for i in range(own.dim()) if own.shape[i] == 1 and g.shape[i] != 1]",
       "keep = [i for i in range(own.dim()) if own.shape[i] == 1 and g.shape[i] != 0.5]",
       "the test then also keeps dims where g has size 1 too: summing those with keepdim "
       "changes nothing"),
    _e("BroadcastMul", "move_threshold", "if own.dim() == 0:", "if own.dim() == -1e-06:",
       "dim() is an int, never -1e-06: the general branch, which handles a 0-d input too, runs"),
    _e("BroadcastMul", "nudge_constant", "if own.dim() == 0:", "if own.dim() == -1:",
       "dim() is never -1: the general branch, which handles a 0-d input too, runs"),
    *(_e("BroadcastMul", op, "ctx.save_for_backward(a, b, y)", after, _NO_SAVING_RULE)
      for op, after in (("save_copy", "ctx.save_for_backward(a, b, y.clone())"),
                        ("add_copy", "ctx.save_for_backward(a, b, y.contiguous())"),
                        ("add_copy", "ctx.save_for_backward(a.contiguous(), b, y)"),
                        ("save_copy", "ctx.save_for_backward(a, b.clone(), y)"),
                        ("add_copy", "ctx.save_for_backward(a, b.contiguous(), y)"))),
    _e("BroadcastMul", "add_copy", "return y", "return y.clone()", _RETURNED_COPY),
    _e("BroadcastMul", "ignore_needs_input_grad",
       "ctx.save_for_backward(b if ctx.needs_input_grad[0] else None,",
       "ctx.save_for_backward(b if True else None,",
       "saves b where backward then does not read it; " + _NO_SAVING_RULE),
    _e("BroadcastMul", "save_copy", "a if ctx.needs_input_grad[1] else None)",
       "a.clone() if ctx.needs_input_grad[1] else None)", _NO_SAVING_RULE),
    # Normalize: a row at eps may take either side (review 71)
    _e("Normalize", "swap_comparison",
       "above = norm >= ctx.eps  # below eps the divisor is a constant: no projection",
       "above = norm > ctx.eps  # below eps the divisor is a constant: no projection", _TIE),
    _e("Normalize", "swap_comparison", "above = norm > ctx.eps", "above = norm >= ctx.eps",
       _TIE),
    _e("Normalize", "swap_comparison",
       "return torch.where(n < ctx.eps, g / ctx.eps, proj / n.clamp_min(ctx.eps)), None",
       "return torch.where(n <= ctx.eps, g / ctx.eps, proj / n.clamp_min(ctx.eps)), None", _TIE),
    _e("Normalize", "swap_comparison",
       "return torch.where(norm >= ctx.eps, above, grad_output / ctx.eps), None",
       "return torch.where(norm > ctx.eps, above, grad_output / ctx.eps), None", _TIE),
    _e("Normalize", "narrow_accumulator",
       "div = torch.where(norm.double() >= eps, norm.double(), eps64).to(x.dtype)",
       "div = torch.where(norm.float() >= eps, norm.double(), eps64).to(x.dtype)",
       "the forward's divisor changes only for a row whose norm is within a float32 rounding of "
       "eps, from eps to the norm: y moves by that rounding, within the tolerance, and backward "
       "still picks the case with norm.double()"),
    _e("Normalize", "save_copy", "ctx.save_for_backward(y, norm * norm)",
       "ctx.save_for_backward(y, (norm * norm).clone())", _MADE_IN_FORWARD),
    # review 74: a 0-d x graded for the scans and the selection (rule 1); the catalogued answers
    # rewritten to take it
    _e("IndexSelect", "drop_copy", "return grad_output.clone(), None", "return grad_output, None",
       _RETURNED_COPY),
    _e("CumMax", "reshape_to_view", "moved = (x.movedim(dim, -1) if x.dim() else x.reshape(1))",
       "moved = (x.movedim(dim, -1) if x.dim() else x.view(1))",
       "x is 0-d on that branch: a view of its one entry as shape (1,) needs no stride to agree"),
    _e("CumMax", "reshape_to_view", "return values.movedim(-1, dim).reshape(x.shape)",
       "return values.movedim(-1, dim).view(x.shape)", _TO_OWN_SHAPE),
    _e("CumMax", "reshape_to_view", _LOOP_SAVE, _LOOP_SAVE.replace(".reshape(", ".view("),
       _TO_OWN_SHAPE),
    _e("CumMax", "save_copy", _LOOP_SAVE, _LOOP_SAVE.replace("))", ").clone())"),
       "a forward that finds the running maximum without torch.cummax is held to the byte count "
       "(check_saves_indices_only): a copy of the int64 indices it made has the same bytes; "
       + _MADE_IN_FORWARD),
]

_EXPANDED_GRADIENT = ("grad_output expanded to x's shape without a copy: autograd takes a gradient of "
                      "any layout, stride 0 included, and adds it like any other")
_CUMPROD_ALWAYS_RIGHT = ("the zero count only picks the path: the exclusive-cumprod path is right for "
                         "every slice, with zeros or without, so sending more slices (or all) down "
                         "it changes no gradient beyond rounding")
_ZERO_GUARDED_TWICE = ("safe already holds 1 where x == 0, so at x == 0 both branches give the "
                       "product of the nonzero entries")

EQUIVALENTS += [
    EquivalentMutant('ProdOverDim', 'save_copy', 'ctx.save_for_backward(input, output)', 'ctx.save_for_backward(input.clone(), output)', _NO_SAVING_RULE),
    EquivalentMutant('ProdOverDim', 'drop_copy', 'return grad_output.expand_as(inp).clone()', 'return grad_output.expand_as(inp)', _EXPANDED_GRADIENT),
    EquivalentMutant('ProdOverDim', 'flip_boolean', 'slice_zero_count = zero_mask.sum(dim, True)', 'slice_zero_count = zero_mask.sum(dim, False)', _CUMPROD_ALWAYS_RIGHT),
    EquivalentMutant('ProdOverDim', 'save_copy', 'ctx.save_for_backward(input, output)', 'ctx.save_for_backward(input, output.clone())', _NO_SAVING_RULE),
    EquivalentMutant('ProdOverDim', 'add_copy', 'ctx.save_for_backward(input, output)', 'ctx.save_for_backward(input, output.contiguous())', _NO_SAVING_RULE),
    EquivalentMutant('ProdOverDim', 'swap_comparison', 'zero_mask = input == 0', 'zero_mask = input != 0', _CUMPROD_ALWAYS_RIGHT),
    EquivalentMutant('ProdOverDim', 'move_threshold', 'others = torch.where(x == 0, product_of_nonzeros, product_of_nonzeros / safe)', 'others = torch.where(x == -1e-06, product_of_nonzeros, product_of_nonzeros / safe)', _ZERO_GUARDED_TWICE),
]
