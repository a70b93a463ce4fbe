"""Lesson 10's surviving mutants that leave the answer correct (see tools.mutants.listed)."""

from .. import EquivalentMutant
from .equivalents_answers import EQUIVALENTS as ANSWER_EQUIVALENTS
from .equivalents_eps import EQUIVALENTS as EPS_EQUIVALENTS
from .equivalent_reasons import (_FRESH_VIEW, _OUTPUT_COPY, _SHIFTED_ONE_PASS, _SIZE_ONE_DIMS,
                                 _STATISTIC_COPY, _X_COPY)


_LN_SAVE = "ctx.save_for_backward(x, weight, mean, rstd)  # x_hat is recomputed in backward"
_RMS_SAVE = "ctx.save_for_backward(x, weight, rstd)"
_GN_SAVE = "ctx.save_for_backward(x, weight, mean, rstd)"
_PROMOTE_IF = "if self.weight.dtype in (torch.float32, torch.float64):"
_PROMOTE_REASON = ("the compute dtype promoted with the weight's differs from x's (or float32) "
                   "only for a float64 weight given a float32 x, a case the contract leaves out")

EQUIVALENTS = [
    EquivalentMutant("LayerNormFunction", "save_copy", _LN_SAVE,
                     _LN_SAVE.replace("(x,", "(x.clone(),"), _X_COPY),
    EquivalentMutant("LayerNormFunction", "add_copy", _LN_SAVE,
                     _LN_SAVE.replace("(x,", "(x.contiguous(),"), _X_COPY),
    EquivalentMutant("LayerNormFunction", "save_copy", _LN_SAVE,
                     _LN_SAVE.replace("mean,", "mean.clone(),"), _STATISTIC_COPY),
    EquivalentMutant("LayerNormFunction", "add_copy", _LN_SAVE,
                     _LN_SAVE.replace("mean,", "mean.contiguous(),"),
                     "mean, the result of x.mean(-1, keepdim=True), is contiguous: "
                     ".contiguous() returns it"),
    EquivalentMutant("LayerNormFunction", "save_copy", _LN_SAVE,
                     _LN_SAVE.replace("rstd)", "rstd.clone())"), _STATISTIC_COPY),
    EquivalentMutant("LayerNormFunction", "add_copy", _LN_SAVE,
                     _LN_SAVE.replace("rstd)", "rstd.contiguous())"),
                     "rstd is torch.rsqrt's fresh, contiguous result: .contiguous() returns it"),
    EquivalentMutant("LayerNormFunction", "add_copy", "return y", "return y.clone()",
                     _OUTPUT_COPY),
    EquivalentMutant("LayerNormFunction", "save_copy",
                     "ctx.save_for_backward(rows, weight, mean, rstd)",
                     "ctx.save_for_backward(rows, weight, mean.clone(), rstd)", _STATISTIC_COPY),
    EquivalentMutant("LayerNormFunction", "drop_copy", "return y.clone() if y is x_hat else y",
                     "return y if y is x_hat else y",
                     "with no weight and no bias the output is the saved x_hat itself: the same "
                     "values and no more memory; autograd saves it as an output, so an in-place "
                     "change downstream raises at backward instead of changing the gradient"),
    EquivalentMutant("LayerNormFunction", "reshape_to_view",
                     "grad_weight = rstd.reshape(-1) @ buffer.reshape(-1, features)",
                     "grad_weight = rstd.view(-1) @ buffer.reshape(-1, features)",
                     "rstd is torch.rsqrt's fresh, contiguous result"),
    EquivalentMutant("LayerNormFunction", "add_copy",
                     "return grad_x, grad_weight, grad_bias, None",
                     "return grad_x, grad_weight, grad_bias.clone(), None", _OUTPUT_COPY),
    EquivalentMutant("LayerNormFunction", "save_copy",
                     "ctx.save_for_backward(x, weight, mean, rstd)",
                     "ctx.save_for_backward(x.clone(), weight, mean, rstd)", _X_COPY),
    EquivalentMutant("LayerNormFunction", "narrow_accumulator",
                     "wide = x.double() if x.dtype == torch.float32 else x",
                     "wide = x.double() if x.dtype == torch.float16 else x", _SHIFTED_ONE_PASS),
    EquivalentMutant("LayerNormFunction", "narrow_accumulator",
                     "wide = x.double() if x.dtype == torch.float32 else x",
                     "wide = x.float() if x.dtype == torch.float32 else x", _SHIFTED_ONE_PASS),
    EquivalentMutant("LayerNormFunction", "drop_copy",
                     "grad_bias = grad_output.sum(leading) if leading else grad_output.clone()",
                     "grad_bias = grad_output.sum(leading) if leading else grad_output",
                     "with no leading dims the bias gradient is grad_output itself: autograd "
                     "accepts a gradient that is grad_output (the contract forbids writing into "
                     "it, not returning it)"),
    EquivalentMutant("RMSNormFunction", "save_copy", _RMS_SAVE,
                     _RMS_SAVE.replace("rstd)", "rstd.clone())"), _STATISTIC_COPY),
    EquivalentMutant("RMSNormFunction", "add_copy", _RMS_SAVE,
                     _RMS_SAVE.replace("rstd)", "rstd.contiguous())"),
                     "rstd is torch.rsqrt's fresh, contiguous result: .contiguous() returns it"),
    EquivalentMutant("RMSNormFunction", "add_copy", "return y", "return y.clone()",
                     _OUTPUT_COPY),
    EquivalentMutant("RMSNorm", "drop_statement", "self.normalized_shape = (dim,)", "pass",
                     "normalized_shape is read by extra_repr alone, the module's printed form, "
                     "which the contract leaves free"),
    EquivalentMutant("GroupNormFunction", "save_copy", _GN_SAVE,
                     _GN_SAVE.replace("(x,", "(x.clone(),"), _X_COPY),
    EquivalentMutant("GroupNormFunction", "add_copy", _GN_SAVE,
                     _GN_SAVE.replace("(x,", "(x.contiguous(),"), _X_COPY),
    EquivalentMutant("GroupNormFunction", "save_copy", _GN_SAVE,
                     _GN_SAVE.replace("mean,", "mean.clone(),"), _STATISTIC_COPY),
    EquivalentMutant("GroupNormFunction", "save_copy", _GN_SAVE,
                     _GN_SAVE.replace("rstd)", "rstd.clone())"), _STATISTIC_COPY),
    EquivalentMutant("GroupNormFunction", "add_copy", _GN_SAVE,
                     _GN_SAVE.replace("rstd)", "rstd.contiguous())"),
                     "rstd is torch.rsqrt's fresh, contiguous result: .contiguous() returns it"),
    EquivalentMutant("GroupNormFunction", "reshape_to_view", "y = y + bias.reshape(per_channel)",
                     "y = y + bias.view(per_channel)", _SIZE_ONE_DIMS),
    EquivalentMutant("GroupNormFunction", "reshape_to_view",
                     "y = (centred * rstd).reshape(x.shape)",
                     "y = (centred * rstd).view(x.shape)",
                     "an elementwise result laid out as rows, a reshape of x: row-major, so "
                     "contiguous"),
    EquivalentMutant("GroupNormFunction", "reshape_to_view", "grad_x = grad_x.reshape(x.shape)",
                     "grad_x = grad_x.view(x.shape)",
                     "grad_x is a fresh elementwise result laid out as rows: contiguous"),
    EquivalentMutant("GroupNormFunction", "reshape_to_view", "y = y * weight.reshape(per_channel)",
                     "y = y * weight.view(per_channel)", _SIZE_ONE_DIMS),
    EquivalentMutant("GroupNormFunction", "reshape_to_view",
                     "g = grad_output * weight.reshape(per_channel) if weight is not None else "
                     "grad_output",
                     "g = grad_output * weight.view(per_channel) if weight is not None else "
                     "grad_output", _SIZE_ONE_DIMS),
    EquivalentMutant("GroupNormFunction", "add_copy", _GN_SAVE,
                     _GN_SAVE.replace("mean,", "mean.contiguous(),"),
                     "mean, a fresh mean over the rows' last dim, is contiguous: .contiguous() "
                     "returns it"),
    EquivalentMutant("GroupNormFunction", "reshape_to_view",
                     "grad_weight = (grad_output * x_hat.reshape(x.shape)).sum(summed)",
                     "grad_weight = (grad_output * x_hat.view(x.shape)).sum(summed)",
                     "x_hat is computed in backward from a reshape and two "
                     "elementwise ops: contiguous"),
    EquivalentMutant("GroupNormFunction", "add_copy", "return y", "return y.clone()",
                     _OUTPUT_COPY),
    EquivalentMutant("GroupNormFunction", "add_copy",
                     "return grad_x, None, grad_weight, grad_bias, None  # x_hat only for those "
                     "two",
                     "return grad_x, None, grad_weight, grad_bias.clone(), None  # x_hat only "
                     "for those two", _OUTPUT_COPY),
]

# found by the uncapped mutants (session 54), past the default cap of 120 per exercise
EQUIVALENTS += [
    EquivalentMutant("GroupNormFunction", "reshape_to_view",
                     "ds_g = (ds * gam).reshape(N, G, C // G).sum(-1)",
                     "ds_g = (ds * gam).view(N, G, C // G).sum(-1)", _FRESH_VIEW),
    EquivalentMutant("GroupNormFunction", "reshape_to_view",
                     "y = ((rows - mean) * rstd).reshape(x.shape)",
                     "y = ((rows - mean) * rstd).view(x.shape)", _FRESH_VIEW),
    EquivalentMutant("GroupNormFunction", "drop_copy",
                     "y = x_hat * weight.reshape(view) if weight is not None else x_hat.clone()",
                     "y = x_hat * weight.reshape(view) if weight is not None else x_hat",
                     "with no weight the output is the saved x_hat itself: the same values and "
                     "no more memory; autograd saves it as an output, so an in-place change "
                     "downstream raises at backward instead of changing the gradient"),
    EquivalentMutant("GroupNormFunction", "save_copy",
                     "ctx.save_for_backward(x_hat, weight, rstd)",
                     "ctx.save_for_backward(x_hat, weight, rstd.clone())", _STATISTIC_COPY),
    # the promotion with a float32 or float64 weight's dtype changes the dtype only for a
    # float64 weight given a float32 x, which the contract leaves out (review 57's answer)
    *(EquivalentMutant("RMSNorm", kind, _PROMOTE_IF, mutated, _PROMOTE_REASON)
      for kind, mutated in (
          ("narrow_accumulator", _PROMOTE_IF.replace("torch.float64", "torch.float32")),
          ("narrow_accumulator", _PROMOTE_IF.replace("torch.float32", "torch.float16")),
          ("swap_comparison", _PROMOTE_IF.replace(" in ", " not in ")))),
    EquivalentMutant("RMSNorm", "drop_statement",
                     "compute = torch.promote_types(compute, self.weight.dtype)", "pass",
                     _PROMOTE_REASON),
]


EQUIVALENTS += ANSWER_EQUIVALENTS  # the catalogued answers', in their own module
EQUIVALENTS += EPS_EQUIVALENTS  # eps=None's, ungraded since review 59d, and that review's

_ENGINE_SUMS = ("grad_weight of a shape weight's (D,) broadcasts to, (1, D) or (N, D): the engine "
                "sums it down to weight's shape, as the Function contract accepts (rule 1)")

EQUIVALENTS += [
    EquivalentMutant('RMSNormFunction', 'flip_keepdim', 'grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0)', 'grad_weight = (grad_output * x_hat).reshape(-1, x.shape[-1]).sum(0, keepdim=True)', _ENGINE_SUMS),
    EquivalentMutant('RMSNormFunction', 'move_threshold', 'grad_weight = (grad_output * x * r).flatten(0, -2).sum(0) if x.dim() > 1 \\', 'grad_weight = (grad_output * x * r).flatten(0, -2).sum(0) if x.dim() > 2 \\', _ENGINE_SUMS),
]
