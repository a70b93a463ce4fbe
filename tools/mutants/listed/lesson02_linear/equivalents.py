"""Lesson 02's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .equivalents_answers import OTHERS, SAVES
from .equivalent_reasons import _COPY, _MASK_COPY, _SAVES_ALWAYS, _bilinear, _fused, _linear

_SOLUTION_SAVE = "ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None)"
_FUSED_SAVE = ("ctx.save_for_backward(x if needs_weight else None, weight if needs_x else None, "
               "positive)")
_NEEDS = "needs_x, needs_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]"

_CLAMPED_SAVE = "ctx.save_for_backward(x, weight, (y > 0).reshape(-1))"  # review 58's U1

EQUIVALENTS = [
    _linear("save_copy", "ctx.save_for_backward(x, weight)",
            "ctx.save_for_backward(x.clone(), weight)"),
    _linear("save_copy", _SOLUTION_SAVE, _SOLUTION_SAVE.replace("x if", "x.clone() if")),
    _linear("save_copy", _SOLUTION_SAVE, _SOLUTION_SAVE.replace("weight if", "weight.clone() if")),
    _linear("ignore_needs_input_grad", _NEEDS, _NEEDS.replace("ctx.needs_input_grad[1]", "True"),
            _SAVES_ALWAYS),
    _linear("ignore_needs_input_grad", _NEEDS, _NEEDS.replace("ctx.needs_input_grad[0]", "True"),
            _SAVES_ALWAYS),
    _linear("add_copy", "return y", "return y.clone()",
            "the output returned is a copy of y, the same values; nothing saved refers to y"),
    _fused("save_copy", "ctx.save_for_backward(x, weight.T.contiguous(), mask)",
           "ctx.save_for_backward(x, weight.T.contiguous().clone(), mask)",
           "a copy of the contiguous weight.T forward just made holds the same values, and the "
           "first copy is freed when forward returns"),
    _fused("save_copy", _FUSED_SAVE, _FUSED_SAVE.replace("positive)", "positive.clone())"),
           _MASK_COPY),
    _fused("add_copy", _FUSED_SAVE, _FUSED_SAVE.replace("positive)", "positive.contiguous())"),
           _MASK_COPY),
    _fused("save_copy", _FUSED_SAVE, _FUSED_SAVE.replace("x if", "x.clone() if")),
    _fused("save_copy", _FUSED_SAVE, _FUSED_SAVE.replace("weight if", "weight.clone() if")),
    _fused("ignore_needs_input_grad", _NEEDS, _NEEDS.replace("ctx.needs_input_grad[0]", "True"),
           _SAVES_ALWAYS),
    _fused("ignore_needs_input_grad", _NEEDS, _NEEDS.replace("ctx.needs_input_grad[1]", "True"),
           _SAVES_ALWAYS),
    _bilinear("save_copy", "ctx.save_for_backward(x1, x2, weight)",
              "ctx.save_for_backward(x1.clone(), x2, weight)"),
    _bilinear("save_copy", "ctx.save_for_backward(x1, x2, weight)",
              "ctx.save_for_backward(x1, x2.clone(), weight)"),
    _bilinear("save_copy", "ctx.save_for_backward(x1, x2, weight)",
              "ctx.save_for_backward(x1, x2, weight.clone())"),
    _bilinear("add_copy", "ctx.save_for_backward(x1, x2, weight)",
              "ctx.save_for_backward(x1.contiguous(), x2, weight)"),
    _bilinear("add_copy", "ctx.save_for_backward(x1, x2, weight)",
              "ctx.save_for_backward(x1, x2.contiguous(), weight)"),
    _bilinear("add_copy", "ctx.save_for_backward(x1, x2, weight)",
              "ctx.save_for_backward(x1, x2, weight.contiguous())"),
    _bilinear("save_copy", "ctx.save_for_backward(x1 if n[1] or n[2] else None,",
              "ctx.save_for_backward(x1.clone() if n[1] or n[2] else None,"),
    _bilinear("ignore_needs_input_grad", "x2 if n[0] or n[2] else None,",
              "x2 if True or n[2] else None,",
              "saving x2 whatever needs_input_grad says keeps more memory, which Bilinear's "
              "contract allows; the gradients are unchanged"),
    _bilinear("flip_keepdim",
              "y = torch.stack([((a @ w) * b).sum(1) for w in weight], dim=1)",
              "y = torch.stack([((a @ w) * b).sum(1, keepdim=True) for w in weight], dim=1)",
              "the (rows, out, 1) stack is reshaped to (*, out) on the next line: the same "
              "entries in the same order"),
    _linear("save_copy", "weight if ctx.needs_input_grad[0] else None)",
            "weight.clone() if ctx.needs_input_grad[0] else None)"),
    _linear("save_copy", "ctx.save_for_backward(x, weight)",
            "ctx.save_for_backward(x, weight.clone())"),
    _fused("save_copy", "ctx.save_for_backward(x, weight, mask)",
           "ctx.save_for_backward(x, weight.clone(), mask)"),
    _fused("save_copy", "ctx.save_for_backward(x, weight, dead)",
           "ctx.save_for_backward(x, weight, dead.clone())", _MASK_COPY),
    _fused("reshape_to_view",
           "grad_x = (g @ weight).reshape(ctx.x_shape) if ctx.needs_input_grad[0] else None",
           "grad_x = (g @ weight).view(ctx.x_shape) if ctx.needs_input_grad[0] else None",
           "g @ weight is a fresh contiguous matmul result: view and reshape agree"),
    *[_fused("reshape_to_view", line, line.replace("grad_z.reshape(", "grad_z.view("),
             "grad_z = torch.where(positive, grad_output, 0) takes the layout of the mask, its "
             "first operand, and the mask comes from a fresh contiguous matmul result, so grad_z "
             "is contiguous whatever grad_output's layout: view and reshape agree (grad_output "
             "itself, viewed, still fails)")
      for line in ("grad_weight = grad_z.reshape(-1, out_features).T @ "
                   "x.reshape(-1, x.shape[-1])",
                   "grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)  # (out,)")],
    _fused("drop_copy", "weight.T.contiguous() if ctx.needs_input_grad[0] else None, mask)",
           "weight.T if ctx.needs_input_grad[0] else None, mask)",
           "weight.T is a view of weight with the same values; backward's matmul reads it in "
           "any layout, and it saves weight itself instead of a copy"),
    _fused("drop_copy", "ctx.save_for_backward(x, weight.T.contiguous(), mask)",
           "ctx.save_for_backward(x, weight.T, mask)",
           "weight.T is a view of weight with the same values; backward's matmul reads it in "
           "any layout, and it saves weight itself instead of a copy"),
    _bilinear("save_copy", "x2 if n[0] or n[2] else None,",
              "x2.clone() if n[0] or n[2] else None,"),
    _bilinear("reshape_to_view",
              "grad_x2 = (a.unsqueeze(1) @ gw).reshape(x2.shape) if need[1] else None",
              "grad_x2 = (a.unsqueeze(1) @ gw).view(x2.shape) if need[1] else None",
              "a.unsqueeze(1) @ gw is a fresh contiguous matmul result: view and reshape agree"),
    # review 54's catalogue answers
    *[_linear(op, "ctx.bias_given = len(inputs) > 2 and inputs[2] is not None",
              "ctx.bias_given = len(inputs) " + cmp + " and inputs[2] is not None",
              "with setup_context, apply binds forward's defaults: inputs always has 3 entries "
              "(bias=None filled in when apply(x, weight) omits it), so > 2 and " + cmp
              + " both hold")
      for op, cmp in (("swap_comparison", ">= 2"), ("move_threshold", "> 1.0"))],
    _linear("save_copy", "ctx.save_for_backward(x if n[1] else None, weight if n[0] else None)",
            "ctx.save_for_backward(x.clone() if n[1] else None, weight if n[0] else None)"),
    _linear("ignore_needs_input_grad",
            "ctx.save_for_backward(x if n[1] else None, weight if n[0] else None)",
            "ctx.save_for_backward(x if n[1] else None, weight if True else None)", _SAVES_ALWAYS),
    _fused("ignore_needs_input_grad",
           "ctx.save_for_backward(on, x if n[1] else None, weight if n[0] else None)",
           "ctx.save_for_backward(on, x if n[1] else None, weight if True else None)",
           _SAVES_ALWAYS),
    _fused("reshape_to_view", ").reshape(*x.shape[:-1], weight.shape[0])",
           ").view(*x.shape[:-1], weight.shape[0])",
           "torch.relu of a fresh (rows, out) matmul result is contiguous: view and reshape "
           "agree"),
    _bilinear("reshape_to_view",
              "gw = (G.T @ (a.unsqueeze(2) * b.unsqueeze(1)).reshape(-1, n1 * n2))"
              ".reshape(out, n1, n2)",
              "gw = (G.T @ (a.unsqueeze(2) * b.unsqueeze(1)).reshape(-1, n1 * n2))"
              ".view(out, n1, n2)",
              "G.T @ ... is a fresh contiguous (out, n1 * n2) matmul result: view and reshape "
              "agree"),
    _fused("reshape_to_view", "g = grad_output.masked_fill(~mask.reshape(grad_output.shape), 0)",
           "g = grad_output.masked_fill(~mask.view(grad_output.shape), 0)",
           "the saved mask is mask.reshape(-1) of the fresh contiguous z > 0: a contiguous 1-D "
           "tensor, which view and reshape give the same shape alike"),
    _bilinear("save_copy", "ctx.save_for_backward(x1 if (n[1] or n[2]) else None,",
              "ctx.save_for_backward(x1.clone() if (n[1] or n[2]) else None,"),
    _bilinear("save_copy", "x2 if (n[0] or n[2]) else None,",
              "x2.clone() if (n[0] or n[2]) else None,"),
    _fused("save_copy", _CLAMPED_SAVE, _CLAMPED_SAVE.replace("(x,", "(x.clone(),")),
    _fused("add_copy", _CLAMPED_SAVE, _CLAMPED_SAVE.replace("(x,", "(x.contiguous(),")),
    _fused("save_copy", _CLAMPED_SAVE, _CLAMPED_SAVE.replace(" weight,", " weight.clone(),")),
    _fused("add_copy", _CLAMPED_SAVE, _CLAMPED_SAVE.replace(" weight,", " weight.contiguous(),")),
    _fused("save_copy", _CLAMPED_SAVE, _CLAMPED_SAVE.replace("(-1))", "(-1).clone())"),
           _MASK_COPY),
    _fused("reshape_to_view", _CLAMPED_SAVE, _CLAMPED_SAVE.replace(".reshape(-1)", ".view(-1)"),
           "y > 0 is a new contiguous bool tensor, so view(-1) flattens it as reshape(-1) does"),
    _fused("add_copy", "return y", "return y.clone()",
           "the output returned is a copy of the clamped z, the same values; only the bool mask "
           "is saved, and the clamped z is freed when forward returns"),
]

# review 59b's mask from y > 0, flattened, scattered back into a fresh zeros tensor
_KEEP_SAVE = "ctx.save_for_backward(x, weight, keep.flatten())"
EQUIVALENTS += [
    _fused("save_copy", _KEEP_SAVE, _KEEP_SAVE.replace("(x,", "(x.clone(),")),
    _fused("add_copy", _KEEP_SAVE, _KEEP_SAVE.replace("(x,", "(x.contiguous(),")),
    _fused("save_copy", _KEEP_SAVE, _KEEP_SAVE.replace(" weight,", " weight.clone(),")),
    _fused("add_copy", _KEEP_SAVE, _KEEP_SAVE.replace(" weight,", " weight.contiguous(),")),
    _fused("save_copy", _KEEP_SAVE, _KEEP_SAVE.replace("flatten())", "flatten().clone())"),
           _MASK_COPY),
    _fused("reshape_to_view", "gz2 = gz.reshape(-1, gz.shape[-1])",
           "gz2 = gz.view(-1, gz.shape[-1])",
           "gz is a fresh contiguous new_zeros tensor: view and reshape agree"),
]

_INT_VIEW = "mask = z.view(torch.int64 if z.dtype == torch.float64 else torch.int32) > "
EQUIVALENTS.append(_fused(  # review 59c's unusual answer
    "move_threshold", _INT_VIEW + "0", _INT_VIEW + "1e-06",
    "z's bits viewed as an integer: an integer is > 1e-06 exactly when it is > 0"))

# the solutions' grad_bias kept as (1, out): the engine sums it to (out,) (rule 2)
_SUMMED = ("keepdim=True gives grad_bias the shape (1, out), the same values, which the engine "
           "sums to the bias's (out,) (rule 2 of the Function contract accepts a gradient of a "
           "shape its input broadcasts to)")
EQUIVALENTS += [
    make("flip_keepdim", line, line.replace("sum(dim=0)", "sum(dim=0, keepdim=True)"), _SUMMED)
    for make, line in (
        (_linear, "grad_bias = g2.sum(dim=0)  # (M, out) -> (out,)"),
        (_fused, "grad_bias = grad_z.reshape(-1, out_features).sum(dim=0)  # (out,)"),
        (_bilinear, "grad_bias = grad_output.reshape(-1, weight.shape[0]).sum(dim=0)"))]

EQUIVALENTS += SAVES + OTHERS  # the catalogued answers' own (make mutants --cap 0)
