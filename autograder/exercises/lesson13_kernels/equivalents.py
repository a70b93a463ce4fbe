"""Lesson 13's surviving mutants that leave the answer correct (see autograder.equivalents)."""

from ...equivalents import EquivalentMutant

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
    EquivalentMutant("rms_norm_rows", "add_copy", "return grad_x, grad_weight, None",
                     "return grad_x, grad_weight.clone(), None", _COPY_RETURNED),
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
