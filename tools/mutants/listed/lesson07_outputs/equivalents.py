"""Lesson 07's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant

_UNSTABLE = ("stable=False is torch.sort's own default, which the contract names; the grader "
             "accepts any order of ties whose indices route the gradient they return")
_MATERIALISE = ("the only other output is the int64 indices, which never get a gradient, and "
                "backward ignores grad_indices: zeros or None change nothing")
_OUTPUT_COPY = ("an output or gradient returned as a copy holds the same values; the contract "
                "bounds what forward saves, not what it returns")
_INDICES_COPY = ("the contract allows one new int64 tensor of x's shape (the inverse "
                 "permutation): a copy of the indices is such a tensor, the same bytes")
_SIGN_COPY = ("a copy of the one-byte sign forward made and then drops: the same bytes saved, "
              "one tensor of at most one byte per element, as the contract allows")
_MASK_COPY = ("a copy of the bool mask forward made and then drops: one byte per element "
              "saved, as the contract allows")

_PERMUTATION_COPY = ("a copy of the one permutation forward made and then drops (narrowed or "
                     "inverted as it was): the same bytes saved, one tensor, as the contract "
                     "allows")
_ZERO_DIM_GRAD = ("for a 0-d x the gradient is grad_values itself; returning it uncopied, as "
                  "CloneBackward does, is allowed: backward only must not write into it")
_VIEW_OF_FRESH = ("the tensor reshaped is a fresh contiguous result (stack or cat), so view "
                  "never needs the copy reshape may make")
_WIDER_AT_BOUNDARY = ("the narrowest dtype picked one step wider at a row length at its boundary "
                      "(128, 32768, ...): the wider dtype still holds every index, within the "
                      "8 bytes per element the contract allows")
_PACKED_COPY = ("a copy of the packed 2-bit codes forward made and then drops: the same bytes "
                "saved, under one byte per element, as the contract allows")


def _sort(operator: str, before: str, after: str, reason: str):
    return EquivalentMutant("SortWithIndices", operator, before, after, reason)


_SAVE = "ctx.save_for_backward(indices)"
_SAVE_SOLUTION = "ctx.save_for_backward(indices)  # the permutation is all backward needs"
_SAVE_INVERSE = ("ctx.save_for_backward(torch.argsort(indices, dim=-1) if x.dim() else "
                 "indices)")
_ZERO_DIM_N = "n = x.shape[-1] if x.dim() else 1"
_SAVE_INVERSE_OF_INDICES = ("ctx.save_for_backward(torch.argsort(indices, dim=-1) if "
                            "indices.dim() else indices)")
_TOPK = ("values, indices = torch.topk(x, x.shape[-1] if x.dim() else 1, dim=-1, "
         "largest=False)")
_EARLIER_WIDER = ("int32 holds every position int16 does: the threshold only moves where the "
                  "saved permutation switches to the wider dtype, within the 8 bytes per "
                  "element the contract allows")
_ABS_WHERE = ("return torch.where(sign == 0, torch.zeros_like(grad_output), grad_output * "
              "sign)")

EQUIVALENTS = [
    _sort("flip_boolean", "values, indices = torch.sort(x, dim=-1, stable=True)",
          "values, indices = torch.sort(x, dim=-1, stable=False)", _UNSTABLE),
    _sort("flip_boolean", "ctx.set_materialize_grads(False)", "ctx.set_materialize_grads(True)",
          _MATERIALISE),
    _sort("drop_ctx_declaration", "ctx.set_materialize_grads(False)", "pass", _MATERIALISE),
    _sort("add_copy", "return values, indices", "return values.clone(), indices", _OUTPUT_COPY),
    _sort("add_copy", "return out", "return out.clone()", _OUTPUT_COPY),
    _sort("save_copy", _SAVE, _SAVE.replace("indices)", "indices.clone())"), _INDICES_COPY),
    _sort("add_copy", _SAVE, _SAVE.replace("indices)", "indices.contiguous())"), _INDICES_COPY),
    _sort("save_copy", _SAVE_SOLUTION, _SAVE_SOLUTION.replace("(indices)", "(indices.clone())"),
          _INDICES_COPY),
    _sort("add_copy", _SAVE_SOLUTION,
          _SAVE_SOLUTION.replace("(indices)", "(indices.contiguous())"), _INDICES_COPY),
    _sort("save_copy", _SAVE_INVERSE, _SAVE_INVERSE.replace("else indices)",
                                                            "else indices.clone())"),
          _INDICES_COPY),
    _sort("drop_copy", "inverse = torch.argsort(indices, dim=-1) if x.dim() else indices.clone()",
          "inverse = torch.argsort(indices, dim=-1) if x.dim() else indices",
          "for a 0-d x the permutation is the one index 0: saving the indices themselves or a "
          "copy of them keeps the same one int64 tensor the contract allows"),
    _sort("drop_copy",
          "return grad_values.gather(-1, inverse) if inverse.dim() else grad_values.clone()",
          "return grad_values.gather(-1, inverse) if inverse.dim() else grad_values",
          "for a 0-d x the gradient is grad_values itself; returning it uncopied, as "
          "CloneBackward does, is allowed: backward only must not write into it"),
    EquivalentMutant("SplitHalves", "nudge_constant",
                     "out = present[0].new_zeros(*present[0].shape[:-1], 2 * h)",
                     "out = present[-1].new_zeros(*present[0].shape[:-1], 2 * h)",
                     "both gradients have the dtype and device of x's halves, and new_zeros "
                     "takes only those from the tensor it is called on"),
    EquivalentMutant("ReLUInPlace", "save_copy", "ctx.save_for_backward(x > 0)",
                     "ctx.save_for_backward((x > 0).clone())", _MASK_COPY),
    EquivalentMutant("ReLUInPlace", "swap_comparison", "x.masked_fill_(x < 0, 0)",
                     "x.masked_fill_(x <= 0, 0)",
                     "where x == 0 the fill writes the 0 already there (-0.0 becomes +0.0, "
                     "both clamped to >= 0 and equal)"),
    EquivalentMutant("AbsInPlace", "save_copy", "ctx.save_for_backward(sign)",
                     "ctx.save_for_backward(sign.clone())", _SIGN_COPY),
    EquivalentMutant("AbsInPlace", "add_copy", "ctx.save_for_backward(sign)",
                     "ctx.save_for_backward(sign.contiguous())", _SIGN_COPY),
    EquivalentMutant("AbsInPlace", "save_copy", "ctx.save_for_backward(code)",
                     "ctx.save_for_backward(code.clone())", _SIGN_COPY),
    EquivalentMutant("AbsInPlace", "add_copy", "ctx.save_for_backward(code)",
                     "ctx.save_for_backward(code.contiguous())", _SIGN_COPY),
    EquivalentMutant("AbsInPlace", "reshape_to_view",
                     "codes = codes[:g.numel()].reshape(g.shape)  # g has x's shape",
                     "codes = codes[:g.numel()].view(g.shape)  # g has x's shape",
                     "codes is a leading slice of a flattened new tensor, contiguous, so view "
                     "never needs the copy reshape may make"),
    EquivalentMutant("AbsInPlace", "swap_arithmetic", _ABS_WHERE,
                     _ABS_WHERE.replace("grad_output * sign", "grad_output / sign"),
                     "where sign is not 0 (the branch kept) it is -1 or 1, and dividing by +-1 "
                     "is multiplying by it"),
    _sort("swap_arithmetic", "dtype = torch.int16 if n <= 2 ** 15 else torch.int32",
          "dtype = torch.int16 if n <= 2 * 15 else torch.int32",
          "int32 holds every position as int16 does for short rows: the threshold only moves "
          "where the saved permutation switches to the wider dtype, which the contract allows"),
    _sort("swap_comparison", "dtype = torch.int16 if n <= 2 ** 15 else torch.int32",
          "dtype = torch.int16 if n < 2 ** 15 else torch.int32",
          "only a row of exactly 2 ** 15 changes, saved as int32 instead of int16: a wider "
          "permutation holding the same positions, as the contract allows"),
    _sort("save_copy", "ctx.save_for_backward(indices.to(dtype))",
          "ctx.save_for_backward(indices.to(dtype).clone())", _PERMUTATION_COPY),
    _sort("save_copy", "ctx.save_for_backward(indices.to(torch.int32))",
          "ctx.save_for_backward(indices.to(torch.int32).clone())", _PERMUTATION_COPY),
    _sort("save_copy", "ctx.save_for_backward(inverse)", "ctx.save_for_backward(inverse.clone())",
          _PERMUTATION_COPY),
    _sort("save_copy",
          "ctx.save_for_backward(torch.argsort(indices, dim=-1) if indices.dim() else indices)",
          "ctx.save_for_backward(torch.argsort(indices, dim=-1) if indices.dim() else "
          "indices.clone())", _INDICES_COPY),
    _sort("flip_boolean", "indices = torch.argsort(x, dim=-1, stable=True)",
          "indices = torch.argsort(x, dim=-1, stable=False)", _UNSTABLE),
    _sort("drop_copy", "return grad_values.clone()", "return grad_values", _ZERO_DIM_GRAD),
    _sort("drop_copy",
          "values = torch.take_along_dim(x, indices, dim=-1) if x.dim() else x.clone()",
          "values = torch.take_along_dim(x, indices, dim=-1) if x.dim() else x",
          "for a 0-d x the values are x's one entry: autograd hands back an input returned "
          "as-is as a new tensor with the same value, and the contract asks the values, not "
          "fresh memory (that promise is SplitHalves')"),
    EquivalentMutant("ReLUInPlace", "save_copy", "ctx.save_for_backward(positive)",
                     "ctx.save_for_backward(positive.clone())", _MASK_COPY),
    EquivalentMutant("ReLUInPlace", "add_copy", "ctx.save_for_backward(positive)",
                     "ctx.save_for_backward(positive.contiguous())", _MASK_COPY),
    EquivalentMutant("ReLUInPlace", "swap_comparison", "x[x < 0] = 0", "x[x <= 0] = 0",
                     "where x == 0 the write puts the 0 already there (-0.0 becomes +0.0, "
                     "both clamped to >= 0 and equal)"),
    EquivalentMutant("ReLUInPlace", "add_copy",
                     "return grad_output  # nothing clamped: pass it through",
                     "return grad_output.clone()  # nothing clamped: pass it through",
                     _OUTPUT_COPY),
    EquivalentMutant("ReLUInPlace", "swap_comparison",
                     "x.masked_fill_(x <= 0, 0); ctx.mark_dirty(x); ctx.save_for_backward(x); "
                     "return x",
                     "x.masked_fill_(x < 0, 0); ctx.mark_dirty(x); ctx.save_for_backward(x); "
                     "return x",
                     "where x == 0 the fill is skipped and the 0 stays (-0.0 stays -0.0, == 0.0); "
                     "the saved output is 0 there either way, so the gradient is too"),
    EquivalentMutant("AbsInPlace", "reshape_to_view",
                     "codes = torch.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], "
                     "dim=-1).reshape(-1)",
                     "codes = torch.stack([(packed >> s) & 3 for s in (0, 2, 4, 6)], "
                     "dim=-1).view(-1)", _VIEW_OF_FRESH),
    EquivalentMutant("AbsInPlace", "reshape_to_view",
                     "code = torch.cat([code, code.new_zeros(pad)]).reshape(-1, 4)",
                     "code = torch.cat([code, code.new_zeros(pad)]).view(-1, 4)", _VIEW_OF_FRESH),
    EquivalentMutant("AbsInPlace", "save_copy", "ctx.save_for_backward(packed)",
                     "ctx.save_for_backward(packed.clone())", _PACKED_COPY),
    EquivalentMutant("AbsInPlace", "add_copy", "ctx.save_for_backward(s)",
                     "ctx.save_for_backward(s.contiguous())", _SIGN_COPY),
    EquivalentMutant("AbsInPlace", "save_copy", "ctx.save_for_backward(s)",
                     "ctx.save_for_backward(s.clone())", _SIGN_COPY),
    _sort("swap_arithmetic", "if n - 1 <= torch.iinfo(d).max)",
          "if n + 1 <= torch.iinfo(d).max)", _WIDER_AT_BOUNDARY),
    _sort("drop_term", "if n - 1 <= torch.iinfo(d).max)", "if n <= torch.iinfo(d).max)",
          _WIDER_AT_BOUNDARY),
    _sort("swap_comparison", "if n - 1 <= torch.iinfo(d).max)",
          "if n - 1 < torch.iinfo(d).max)", _WIDER_AT_BOUNDARY),
    # the catalogued answers' own, found by make mutants --cap 0
    _sort("nudge_constant", "dtype = torch.int16 if n <= 2 ** 15 else torch.int32",
          "dtype = torch.int16 if n <= 2 ** 14 else torch.int32", _EARLIER_WIDER),
    _sort("nudge_constant", "dtype = torch.int16 if n <= 2 ** 15 else torch.int32",
          "dtype = torch.int16 if n <= 1 ** 15 else torch.int32", _EARLIER_WIDER),
    *[_sort("nudge_constant", _ZERO_DIM_N, _ZERO_DIM_N.replace("else 1", f"else {n}"),
            "for a 0-d x, n only picks the saved dtype, and 0, 1 and 2 pick the same one for "
            "its one index 0") for n in (0, 2)],
    _sort("nudge_constant", "if n - 1 <= torch.iinfo(d).max)", "if n - 0 <= torch.iinfo(d).max)",
          _WIDER_AT_BOUNDARY),
    _sort("save_copy", "ctx.save_for_backward(indices.to(narrow))",
          "ctx.save_for_backward(indices.to(narrow).clone())", _PERMUTATION_COPY),
    _sort("save_copy", _SAVE_INVERSE,
          _SAVE_INVERSE.replace("dim=-1) if", "dim=-1).clone() if"), _PERMUTATION_COPY),
    _sort("save_copy", _SAVE_INVERSE_OF_INDICES,
          _SAVE_INVERSE_OF_INDICES.replace("dim=-1) if", "dim=-1).clone() if"),
          _PERMUTATION_COPY),
    _sort("add_copy", "ctx.save_for_backward(inverse)",
          "ctx.save_for_backward(inverse.contiguous())",
          "the inverse permutation itself, or where it is strided a contiguous copy of it that "
          "forward saves in its place: one int64 tensor of x's shape, as the contract allows"),
    _sort("nudge_constant", _TOPK, _TOPK.replace("else 1", "else 0"),
          "for a 0-d x torch.topk takes k = 0 as k = 1 (a 0-d tensor's one entry): the same "
          "value and index 0, so the same gradient"),
    # review 57's copysign_ answer: copysign reads only the sign of its second argument, and
    # the all-+1 shortcut returns what grad_output * sign gives there anyway
    *(EquivalentMutant("AbsInPlace", "nudge_constant", "x.copysign_(1.0)",
                       f"x.copysign_({c})", "copysign takes the magnitude of x and only the sign "
                       "of its second argument: any positive number writes |x|")
      for c in ("0.5", "2.0")),
    *(EquivalentMutant("AbsInPlace", "move_threshold", "if bool((sign == 1).all()):",
                       f"if bool((sign == {c}).all()):", "the shortcut for an all-positive x "
                       "skipped: grad_output * sign, which it then returns, is grad_output there")
      for c in ("2", "0.5")),
    EquivalentMutant("AbsInPlace", "add_copy", "return grad_output", "return grad_output.clone()",
                     _OUTPUT_COPY),
    EquivalentMutant("AbsInPlace", "add_copy", "ctx.save_for_backward(packed)",
                     "ctx.save_for_backward(packed.contiguous())", _PACKED_COPY),
    *(EquivalentMutant("AbsInPlace", "move_threshold",
                       "return torch.where(sign == 0, torch.zeros_like(grad_output), "
                       "grad_output * sign)",
                       f"return torch.where(sign == {c}, torch.zeros_like(grad_output), "
                       "grad_output * sign)",
                       "an int8 sign never equals +-1e-6, and grad_output * sign is already 0 "
                       "where the sign is 0: the where only spelled that out")
      for c in ("1e-06", "-1e-06")),
    EquivalentMutant("AbsInPlace", "swap_comparison",
                     "x.mul_(1 - 2 * (x < 0).to(torch.int8))  # |x| by a sign flip, exact at "
                     "+-inf",
                     "x.mul_(1 - 2 * (x <= 0).to(torch.int8))  # |x| by a sign flip, exact at "
                     "+-inf",
                     "at x == 0 the flip writes -0.0, which == counts equal to abs's 0 (the "
                     "contract's exactness is ==)"),
    *(EquivalentMutant("SplitHalves", "nudge_constant", before, before.replace(
        "present[0].shape", "present[-1].shape"), "with both halves present they have one "
        "shape (the last dim is even): either gives the same width and leading shape")
      for before in ("h = present[0].shape[-1]",
                     "out = present[0].new_zeros(*present[0].shape[:-1], 2 * h)")),
]

_AT_TINY = ("> and >= differ only where y is exactly the smallest normal number, a float extreme "
            "the Function contract leaves ungraded; every other y gets the same mask")

EQUIVALENTS += [
    EquivalentMutant('ReLUInPlace', 'swap_comparison', 'return grad_output * (y > torch.finfo(y.dtype).tiny)', 'return grad_output * (y >= torch.finfo(y.dtype).tiny)', _AT_TINY),
]
