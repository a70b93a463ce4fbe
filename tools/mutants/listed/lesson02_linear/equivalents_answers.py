"""Lesson 02's catalogued unusual answers: their surviving mutants that leave them correct
(``make mutants --cap 0``), listed with the reasons and makers of ``equivalent_reasons``. The saving
lines first (a saved input or mask copied, an input saved whatever needs_input_grad says), then
the rest one by one, each proven by grading and by an exact comparison with the unmutated
answer on every layout (each input strided alone too), bias given and None, float32 and
float64, leading dims none to two, an empty batch and size-one features."""

import re

from .. import EquivalentMutant
from .equivalent_reasons import _COPY, _MASK_COPY, _SAVES_ALWAYS, _bilinear, _fused, _linear

_WEIGHT_T_COPY = ("a copy of the contiguous weight.T forward just made holds the same values, "
                  "and the first copy is freed when forward returns")
_BILINEAR_ALWAYS = ("saving an input whatever needs_input_grad says keeps more memory, which "
                    "Bilinear's contract allows; the gradients are unchanged")


def _each(make, before: str, reason: str, *edits) -> list[EquivalentMutant]:
    """One listing per edit of the saving line ``before``: 'x.clone()' (save_copy) or
    'x.contiguous()' (add_copy) copies the saved x where it first stands alone; 'n[1]'
    (ignore_needs_input_grad) reads as True where it first appears, (old, new) replaces old."""
    found = []
    for edit in edits:
        if isinstance(edit, tuple) or not edit.endswith(("clone()", "contiguous()")):
            old, new = edit if isinstance(edit, tuple) else (edit, "True")
            found.append(make("ignore_needs_input_grad", before, before.replace(old, new, 1),
                              reason))
            continue
        name, _, suffix = edit.rpartition(".")
        after = re.sub(rf"(?<![\w.]){re.escape(name)}(?![\w.(\[])", edit, before, count=1)
        found.append(make("save_copy" if suffix == "clone()" else "add_copy", before, after,
                          reason))
    return found


_S0 = 'ctx.save_for_backward(x, weight)'
_S1 = 'ctx.save_for_backward(x if need[1] else None, weight if need[0] else None)'
_S2 = 'ctx.save_for_backward(x if n[1] else None, weight if n[0] else None)'
_S3 = 'weight if ctx.needs_input_grad[0] else None)'
_S4 = 'ctx.save_for_backward(x if ctx.needs_input_grad[1] else None,'
_S5 = 'ctx.save_for_backward(x, weight, mask)'
_S6 = 'ctx.save_for_backward(x, weight, dead)'
_S7 = 'ctx.save_for_backward(x, weight.T.contiguous(), mask)'
_S8 = 'ctx.save_for_backward(x2 if n[1] else None, weight if n[0] else None, on)'
_S9 = 'ctx.save_for_backward(on, x if n[1] else None, weight if n[0] else None)'
_S10 = 'weight.T.contiguous() if ctx.needs_input_grad[0] else None, mask)'
_S11 = 'ctx.save_for_backward(x if need[1] else None, weight if need[0] else None, dead)'
_S12 = 'weight if ctx.needs_input_grad[0] else None, mask)'
_S13 = 'ctx.save_for_backward(rows, weight, mask)'
_S14 = 'ctx.save_for_backward(x, weight, mask.reshape(-1))'
_S15 = 'ctx.save_for_backward(x1 if (n[1] or n[2]) else None, x2 if (n[0] or n[2]) else None,'
_S16 = 'weight if (n[0] or n[1]) else None)'
_S17 = 'ctx.save_for_backward(x1 if n[1] or n[2] else None,'
_S18 = 'weight if n[0] or n[1] else None)'
_S19 = 'x2 if n[0] or n[2] else None,'
_S20 = 'ctx.save_for_backward(x1 if (n[1] or n[2]) else None,'
_S21 = 'x2 if (n[0] or n[2]) else None,'
_S22 = 'ctx.save_for_backward(x if n[1] else None, weight if n[0] else None, mask)'

SAVES = [
    *_each(_linear, _S0, _COPY, 'weight.contiguous()', 'x.contiguous()'),
    *_each(_linear, _S1, _COPY, 'weight.clone()', 'x.clone()'),
    *_each(_linear, _S1, _SAVES_ALWAYS, 'need[0]', 'need[1]'),
    *_each(_linear, _S2, _COPY, 'weight.clone()'),
    *_each(_linear, _S2, _SAVES_ALWAYS, 'n[1]'),
    *_each(_linear, _S3, _SAVES_ALWAYS, 'ctx.needs_input_grad[0]'),
    *_each(_linear, _S4, _COPY, 'x.clone()'),
    *_each(_linear, _S4, _SAVES_ALWAYS, 'ctx.needs_input_grad[1]'),
    *_each(_fused, _S5, _MASK_COPY, 'mask.contiguous()', 'mask.clone()'),
    *_each(_fused, _S5, _COPY, 'x.clone()', 'weight.contiguous()', 'x.contiguous()'),
    *_each(_fused, _S6, _COPY, 'weight.contiguous()', 'x.clone()', 'weight.clone()',
           'x.contiguous()'),
    *_each(_fused, _S6, _MASK_COPY, 'dead.contiguous()'),
    *_each(_fused, _S7, _COPY, 'x.contiguous()', 'x.clone()'),
    *_each(_fused, _S7, _MASK_COPY, 'mask.clone()', 'mask.contiguous()'),
    *_each(_fused, _S8, _SAVES_ALWAYS, 'n[1]', 'n[0]'),
    *_each(_fused, _S8, _COPY, 'x2.clone()', 'weight.clone()'),
    *_each(_fused, _S8, _MASK_COPY, 'on.clone()', 'on.contiguous()'),
    *_each(_fused, _S9, _SAVES_ALWAYS, 'n[1]'),
    *_each(_fused, _S9, _MASK_COPY, 'on.clone()', 'on.contiguous()'),
    *_each(_fused, _S9, _COPY, 'weight.clone()', 'x.clone()'),
    *_each(_fused, _S10, _WEIGHT_T_COPY, 'weight.T.contiguous().clone()'),
    *_each(_fused, _S4, _COPY, 'x.clone()'),
    *_each(_fused, _S10, _MASK_COPY, 'mask.contiguous()', 'mask.clone()'),
    *_each(_fused, _S4, _SAVES_ALWAYS, 'ctx.needs_input_grad[1]'),
    *_each(_fused, _S10, _SAVES_ALWAYS, 'ctx.needs_input_grad[0]'),
    *_each(_fused, _S11, _COPY, 'weight.clone()', 'x.clone()'),
    *_each(_fused, _S11, _MASK_COPY, 'dead.clone()', 'dead.contiguous()'),
    *_each(_fused, _S11, _SAVES_ALWAYS, 'need[0]', 'need[1]'),
    *_each(_fused, _S12, _COPY, 'weight.clone()'),
    *_each(_fused, _S12, _MASK_COPY, 'mask.contiguous()', 'mask.clone()'),
    *_each(_fused, _S12, _SAVES_ALWAYS, 'ctx.needs_input_grad[0]'),
    *_each(_fused, _S13, _COPY, 'rows.clone()', 'weight.contiguous()', 'weight.clone()',
           'rows.contiguous()'),
    *_each(_fused, _S13, _MASK_COPY, 'mask.clone()', 'mask.contiguous()'),
    *_each(_fused, _S14, _COPY, 'x.contiguous()', 'x.clone()', 'weight.contiguous()',
           'weight.clone()'),
    *_each(_fused, _S14, _MASK_COPY, 'mask.reshape(-1).clone()'),
    *_each(_bilinear, _S15, _COPY, 'x2.clone()', 'x1.clone()'),
    *_each(_bilinear, _S16, _BILINEAR_ALWAYS, 'n[0]', 'n[1]'),
    *_each(_bilinear, _S15, _BILINEAR_ALWAYS, ('x2 if (n[0] or n[2]', 'x2 if (n[0] or True'),
           'n[0]', 'n[1]', 'n[2]'),
    *_each(_bilinear, _S16, _COPY, 'weight.clone()'),
    *_each(_bilinear, _S17, _BILINEAR_ALWAYS, 'n[1]', 'n[2]'),
    *_each(_bilinear, _S18, _COPY, 'weight.clone()'),
    *_each(_bilinear, _S19, _BILINEAR_ALWAYS, 'n[2]'),
    *_each(_bilinear, _S18, _BILINEAR_ALWAYS, 'n[0]', 'n[1]'),
    *_each(_bilinear, _S20, _BILINEAR_ALWAYS, 'n[1]', 'n[2]'),
    *_each(_bilinear, _S21, _BILINEAR_ALWAYS, 'n[2]', 'n[0]'),
    *_each(_fused, _S22, _COPY, 'weight.clone()'),
    *_each(_fused, _S22, _SAVES_ALWAYS, 'n[0]'),
]


def _view(make, before: str, reshaped: str, reason: str) -> EquivalentMutant:
    """``reshaped`` ('y.reshape(') of ``before`` as a view: reshape_to_view."""
    return make("reshape_to_view", before,
                before.replace(reshaped, reshaped.replace(".reshape(", ".view("), 1), reason)


_FRESH = ("reshapes a fresh matmul (mm, addmm, @) result, contiguous, or a squeeze of one: view "
          "and reshape agree")
_MASKED_LAYOUT = ("torch.where(mask, grad_output, 0) and grad_output.masked_fill(mask, 0) are "
                  "new tensors in the contiguous mask's layout (and masked_fill's out-of-place "
                  "copy is contiguous) whatever grad_output's strides: view and reshape agree")
_MASK_VIEW = ("the mask is a comparison of a fresh matmul result or output, or a flat view of "
              "one, saved as it is: contiguous, so view and reshape agree")
_FRESH_WHERE = ("torch.where of a mask and pre-activation made from a fresh (rows, out) matmul "
                "result is contiguous: view and reshape agree")
_EINSUM = ("einsum of the flattened (rows, ...) operands returns a new contiguous (rows, n) "
           "tensor whatever the inputs' strides (each strided alone and all together): view and "
           "reshape agree")
_SUM_OF_PRODUCTS = ("each term multiplies a (rows, 1) column by a fresh contiguous (rows, n) "
                    "matmul result, whose layout the product and the sum keep: view and reshape "
                    "agree")
_SQUEEZE = ("squeeze only drops a dimension of size 1, and the reshape to (*lead, n) that "
            "follows puts the same entries in the same order whichever one it drops")
_RULE_2 = ("(rule 2 of the Function contract accepts a gradient of a shape its input "
           "broadcasts to)")
_SUMMED = ("keepdim=True gives grad_bias the shape (1, out), the same values, which the engine "
           "sums to the bias's (out,) " + _RULE_2)
_ITSELF = ("grad_output itself holds the values its copy holds; backward writes into neither, "
           "and the engine sums or copies a returned gradient before it accumulates it, as "
           "x @ W.T + b's own backward returns grad_output itself for the bias (the catalogued "
           "'grad_bias = grad_output itself for 1-D inputs' is correct)")
_LINEAR_GB = "grad_bias = g2.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None"
_BILINEAR_GB = ("grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(0) if ctx.has_bias and "
                "need[3] else None")
_ONE_ROW = ("grad_bias = (g2[0] if g2.shape[0] == 1 else g2.sum(0)) if ctx.has_bias and "
            "ctx.needs_input_grad[2] else None")
_ONE_D = ("grad_bias = (grad_output if grad_output.dim() == 1 else grad_output.reshape(-1, "
          "weight.shape[0]).sum(0)) if ctx.has_bias and need[3] else None")
_INPUTS_HOLD_THREE = ("with setup_context, apply binds forward's defaults: inputs always has 3 "
                      "entries (bias=None filled in), so the bound holds either way")
_WEIGHT_NEVER_NONE = ("inputs[1] is weight, never None, so bias_given is True for bias=None too; "
                      "but needs_input_grad[2] is False for a None bias, so grad_bias is still "
                      "computed only when a bias requires grad")
_BIAS_GIVEN = "ctx.bias_given = len(inputs) > 2 and inputs[2] is not None"
_PER_ROW_X2 = ("res[0] = (gw_ @ x2.reshape(-1, x2.shape[-1], 1)).squeeze(-1)"
               ".reshape(*lead, w.shape[1])")
_PER_ROW_X1 = ("res[1] = (x1.reshape(-1, 1, x1.shape[-1]) @ gw_).squeeze(-2)"
               ".reshape(*lead, w.shape[2])")
_EINSUM_X1 = ("grad_x1 = torch.einsum('mo,oij,mj->mi', g, weight, x2.reshape(-1, n2))"
              ".reshape(*grad_output.shape[:-1], n1)")
_EINSUM_X2 = ("grad_x2 = torch.einsum('mo,oij,mi->mj', g, weight, x1.reshape(-1, n1))"
              ".reshape(*grad_output.shape[:-1], n2)")
_PERMUTED_GW = ("gw = (G.T @ (a[:, :, None] * b[:, None, :]).reshape(-1, n1 * n2))"
                ".reshape(out, n1, n2)")
_FLAT_GW = ("grad_weight = (g.T @ (a.unsqueeze(2) * b.unsqueeze(1)).reshape(-1, n1 * n2))"
            ".reshape(out, n1, n2) if need[2] else None")
_FLAT_G = ("gw = None if not (need[0] or need[1]) else (g @ weight.reshape(out, n1 * n2))"
           ".reshape(-1, n1, n2)")

OTHERS = [
    _view(_linear, "return y.reshape(*x.shape[:-1], weight.shape[0])", "y.reshape(", _FRESH),
    _view(_linear, "grad_x = (g2 @ weight).reshape(x.shape) if ctx.needs_input_grad[0] else None",
          ").reshape(", _FRESH),
    _view(_linear, "return y2.reshape(*x.shape[:-1], weight.shape[0])", "y2.reshape(", _FRESH),
    *[make(op, _BIAS_GIVEN, _BIAS_GIVEN.replace(old, new), reason)
      for make in (_linear, _fused)
      for op, old, new, reason in (
          ("nudge_constant", "inputs[2]", "inputs[1]", _WEIGHT_NEVER_NONE),
          ("nudge_constant", "> 2", "> 1", _INPUTS_HOLD_THREE))],
    *[_fused(op, _BIAS_GIVEN, _BIAS_GIVEN.replace("> 2", new), _INPUTS_HOLD_THREE)
      for op, new in (("move_threshold", "> 1.0"), ("swap_comparison", ">= 2"))],
    _view(_fused, "g2 = g.reshape(-1, weight.shape[0])", "g.reshape(", _MASKED_LAYOUT),
    _view(_fused, "g2 = g.reshape(-1, g.shape[-1])", "g.reshape(", _MASKED_LAYOUT),
    _view(_fused, "grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)", "z.reshape(",
          _MASKED_LAYOUT),
    _view(_fused, "return torch.where(on, z2, 0).reshape(*lead, weight.shape[0])", ").reshape(",
          _FRESH_WHERE),
    _view(_fused, "return torch.where(mask, z, 0.0).reshape(*x.shape[:-1], weight.shape[0])",
          ").reshape(", _FRESH_WHERE),
    _view(_fused, "if n[0]: gx = (gz @ w).reshape(*ctx.lead, w.shape[1])", ").reshape(", _FRESH),
    _view(_fused, "gx = (gz @ weight).reshape(*grad_output.shape[:-1], weight.shape[1])",
          ").reshape(", _FRESH),
    _view(_fused, "dead = (output <= 0).reshape(-1, weight.shape[0])", ").reshape(", _MASK_VIEW),
    _view(_fused, "positive = (z > 0).reshape(-1, z.shape[-1])", ").reshape(", _MASK_VIEW),
    _view(_fused, "grad_z = torch.where(positive.reshape(grad_output.shape), grad_output, 0)",
          "positive.reshape(", _MASK_VIEW),
    _view(_fused, "g = torch.where(mask.reshape(grad_output.shape), grad_output, 0.0)",
          "mask.reshape(", _MASK_VIEW),
    _view(_fused, "ctx.save_for_backward(x, weight, mask.reshape(-1))", "mask.reshape(",
          _MASK_VIEW),
    _bilinear("change_dim", _PER_ROW_X2, _PER_ROW_X2.replace("squeeze(-1)", "squeeze(-2)"),
              _SQUEEZE),
    _bilinear("change_dim", _PER_ROW_X2, _PER_ROW_X2.replace("squeeze(-1)", "squeeze(0)"),
              _SQUEEZE),
    _bilinear("change_dim", _PER_ROW_X1, _PER_ROW_X1.replace("squeeze(-2)", "squeeze(-3)"),
              _SQUEEZE),
    _bilinear("change_dim", _PER_ROW_X1, _PER_ROW_X1.replace("squeeze(-2)", "squeeze(-1)"),
              _SQUEEZE),
    _view(_bilinear, _PER_ROW_X2, ").reshape(", _FRESH),
    _view(_bilinear, _PER_ROW_X1, ").reshape(", _FRESH),
    _view(_bilinear, "res[2] = (g2.T @ outer).reshape(w.shape if w is not None else "
          "(o, a.shape[1], b.shape[1]))", ").reshape(", _FRESH),
    _bilinear("nudge_constant", "res = [None] * 4", "res = [None] * 5",
              "a fifth None past forward's four inputs: autograd accepts trailing None "
              "gradients beyond the inputs and drops them"),
    _view(_bilinear, _EINSUM_X1, ").reshape(", _EINSUM),
    _view(_bilinear, _EINSUM_X2, ").reshape(", _EINSUM),
    _view(_bilinear, "if n[1]: g2 = (a.unsqueeze(1) @ T).reshape(*lead, n2)", ").reshape(",
          _FRESH),
    _view(_bilinear, "T = (G @ weight.reshape(out, n1 * n2)).reshape(-1, n1, n2)   # (M, n1, n2)",
          ").reshape(", _FRESH),
    _view(_bilinear, "if n[0]: g1 = (T @ b.unsqueeze(-1)).reshape(*lead, n1)", ").reshape(",
          _FRESH),
    _view(_bilinear, _PERMUTED_GW, ").reshape(out", _FRESH),
    _view(_bilinear, "grad_x2 = sum(g[:, k:k + 1] * (a @ weight[k]) for k in range(out))"
          ".reshape(x2.shape)", ").reshape(", _SUM_OF_PRODUCTS),
    _view(_bilinear, "grad_x1 = sum(g[:, k:k + 1] * (b @ weight[k].t()) for k in range(out))"
          ".reshape(x1.shape)", ").reshape(", _SUM_OF_PRODUCTS),
    _view(_bilinear, "y = y.reshape(*x1.shape[:-1], weight.shape[0])", "y.reshape(",
          "y is a fresh torch.stack of the per-feature sums, contiguous: view and reshape "
          "agree"),
    _view(_bilinear, _FLAT_GW, ").reshape(out", _FRESH),
    _view(_bilinear, "grad_x1 = (gw @ b.unsqueeze(-1)).reshape(x1.shape) if need[0] else None",
          ").reshape(", _FRESH),
    _view(_bilinear, _FLAT_G, ").reshape(-1, n1", _FRESH),
    # grad_bias of a shape the bias broadcasts to, or grad_output itself (rule 2, _SUMMED)
    _linear("flip_keepdim", _LINEAR_GB, _LINEAR_GB.replace("sum(0)", "sum(0, keepdim=True)"),
            _SUMMED),
    _fused("flip_keepdim", _LINEAR_GB, _LINEAR_GB.replace("sum(0)", "sum(0, keepdim=True)"),
           _SUMMED),
    _bilinear("flip_keepdim", _BILINEAR_GB,
              _BILINEAR_GB.replace("sum(0)", "sum(0, keepdim=True)"), _SUMMED),
    _bilinear("flip_keepdim", "grad_bias = g.reshape(-1, g.shape[-1]).sum(0, keepdim=True)",
              "grad_bias = g.reshape(-1, g.shape[-1]).sum(0, keepdim=False)",
              "keepdim=False gives grad_bias the bias's own shape (out,), the same values the "
              "unmutated answer's (1, out) gives after the engine sums it"),
    _linear("move_threshold", _ONE_ROW, _ONE_ROW.replace("== 1", "== 0.5"),
            "a shape is never 0.5, so grad_bias is always g2.sum(0): for one row that is g2[0]'s "
            "values, summed over a single row"),
    *[_bilinear("move_threshold", _ONE_D, _ONE_D.replace("== 1", new), reason)
      for new, reason in (
          ("== 0.5", "a dim() is never 0.5, so grad_bias is always the reshaped sum: for 1-D "
                     "inputs that is grad_output's own values, summed over one row"),
          ("== 2", "for 2-D grad_output, grad_bias is grad_output itself, (rows, out), which "
                   "the engine sums to (out,) " + _RULE_2 + "; for 1-D it is the reshaped sum, "
                   "grad_output's own values"))],
    *[_linear("drop_copy", line, line.replace("grad_output.clone()", "grad_output"), _ITSELF)
      for line in ("grad_bias = grad_output.clone() if ctx.has_bias and ctx.needs_input_grad[2] "
                   "else None",
                   "grad_bias = grad_output.clone() if grad_output.dim() == 1 else "
                   "grad_output.sum(dim=tuple(range(grad_output.dim() - 1)))")],
]
