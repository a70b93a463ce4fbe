"""Lesson 12's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


REVERSAL_CLAUSES = (
    Clause("forward returns `x` unchanged in value (a view or a copy, never writing into `x`);",
           {"GradientReversal/modifies-x-in-place": "forward writes into x"}),
    Clause("backward returns your answer to question 2 for `x`, for `alpha` any Python float (0 "
           "and negative included), and `None` for `alpha`;",
           {"GradientReversal/no-reversal": "no reversal at all",
            "GradientReversal/forgets-alpha": "alpha forgotten",
            "GradientReversal/forgets-sign": "sign forgotten",
            "GradientReversal/ignores-grad-output": "grad_output left out",
            "GradientReversal/mishandles-negative-alpha": "negative alpha dropped",
            "GradientReversal/zeroes-small-alpha": "a small alpha taken for 0",
            "GradientReversal/float32-constant": "alpha as a float32 tensor",
            "GradientReversal/float32-gradient": "gradient returned in float32",
            "GradientReversal/gradient-for-non-tensor": "a gradient for alpha",
            "GradientReversal/writes-grad-output": "grad_output negated in place",
            "GradientReversal/state-on-class": "alpha kept on the class (issue 37)"}),
    Clause("forward saves no tensor.",
           {"GradientReversal/saves-tensors": "saves x",
            "GradientReversal/tensor-on-ctx": "alpha kept as a tensor on ctx"}),
)


CLIP_CLAUSES = (
    Clause("forward returns `x` unchanged in value (`x` has at least one dimension);",
           {"ClipGradientNorm/modifies-x-in-place": "forward writes into x"}),
    Clause("backward returns `grad_output` with every row (last dimension) whose L2 norm is "
           "above `max_norm` brought to norm `max_norm`, its direction kept, with no eps added "
           "to the norm; every other row, a row of zeros included, unchanged, and nothing "
           "`nan`; for `max_norm` any positive float and float64, float32 or float16 rows, in "
           "the range below; `None` for `max_norm`;",
           {"ClipGradientNorm/whole-norm": "global norm, as clip_grad_norm_",
            "ClipGradientNorm/ignores-max-norm": "factor ignores max_norm",
            "ClipGradientNorm/squared-norm-compared": "squared norm compared with max_norm",
            "ClipGradientNorm/clamps-elements": "each element clamped",
            "ClipGradientNorm/scales-small-rows-up": "every row scaled to max_norm",
            "ClipGradientNorm/nan-on-zero-row": "nan on a row of zeros",
            "ClipGradientNorm/changes-tiny-row": "F.normalize's clamp at 1e-12",
            "ClipGradientNorm/clamps-norm": "norm clamped at 1e-12, max_norm 1e-13",
            "ClipGradientNorm/clips-columns": "columns clipped",
            "ClipGradientNorm/eps-in-norm": "renorm over flattened rows (its eps of 1e-7)",
            "ClipGradientNorm/float32-constant": "max_norm as a float32 tensor",
            "ClipGradientNorm/float32-step": "norms computed in float32",
            "ClipGradientNorm/float32-factor": "factor from a float32 rsqrt for float64 rows",
            "ClipGradientNorm/max-norm-product-overflows": "divide by the norm clamped from "
                                                           "below",
            "ClipGradientNorm/norm-ratio-overflows": "divides by clamp(norm / max_norm, min=1)",
            "ClipGradientNorm/float16-squares": "squares summed in float16",
            "ClipGradientNorm/underflows-inside-range": "grad_output * m / norms inside the "
                                                        "where, float32 rows only",
            "ClipGradientNorm/nan-on-zeros-at-tiny-max-norm": "the lesson's former solution, "
                                                              "(m / norms).clamp(max=1)",
            "ClipGradientNorm/state-on-class": "max_norm kept on the class (issue 37)",
            "raised:RuntimeError": "rows through .view"}),
    Clause("backward never writes into `grad_output`, and forward saves no tensor.",
           {"ClipGradientNorm/writes-grad-output": "scaled in place"}),
)


SOFT_CLAUSES = (
    Clause("forward returns $\\operatorname{sign}(x)\\max(|x| - \\lambda, 0)$ for `lam` a 0-d "
           "tensor that may require grad, and backward the gradients you derived: for `x`, and "
           "for `lam` summed to `lam`'s shape; at $|x| = \\lambda$ ($\\lambda = 0$ included) the "
           "values of step 2's convention;",
           {"SoftThreshold/passes-kink": "gradient 1 at |x| == lam",
            "SoftThreshold/passes-kink-at-lam-0": "grad_output passed through at lam == 0",
            "SoftThreshold/lam-counts-kink": "lam's gradient alone counts the kink",
            "SoftThreshold/lam-wrong-sign": "lam's gradient with the wrong sign",
            "SoftThreshold/lam-gradient-not-summed": "lam's gradient not summed",
            "SoftThreshold/lam-averaged": "lam's gradient averaged",
            "SoftThreshold/lam-gradient-not-0d": "lam's gradient summed to shape (1,)",
            "SoftThreshold/nan-at-kink": "relu(z) / z as the slope",
            "SoftThreshold/lam-without-sign": "lam's gradient without sign(x) (issue 37)",
            "SoftThreshold/lam-without-mask": "lam's gradient without the mask (issue 37)",
            "SoftThreshold/code-loses-small-y": "y saved as a float16 code",
            "SoftThreshold/wrong-on-one-side": "x < -lam dropped (relu's gradient, y > 0)"}),
    Clause("each gradient right when the other input needs none (the self-check runs `x` and "
           "`lam` each alone requiring grad);",
           {"SoftThreshold/gate-on-wrong-entry": "lam's gradient gated on needs_input_grad[0]"}),
    Clause("by hand (no autograd inside backward), without writing into `grad_output`, and with "
           "tensors saved only through `save_for_backward`;",
           {"SoftThreshold/asks-autograd": "autograd inside backward",
            "SoftThreshold/writes-grad-output": "grad_output masked in place",
            "SoftThreshold/tensor-on-ctx": "lam kept on ctx"}),
    Clause("forward saves your answer to question 4 and no more: per entry of `x`, at most as "
           "many bytes as that entry of `x` takes, in all (and `lam` if you like), never `x` "
           "itself in any dtype, and enough for backward to be exact.",
           {"SoftThreshold/saves-x": "BrokenSoftThreshold with its two lines mended",
            "SoftThreshold/saves-too-much": "|x| - lam and sign(x) saved, two float tensors",
            "SoftThreshold/casts-non-finite-to-integer": "int8 code as sign(x) / [|x| > lam]: "
                                                         "inf and nan cast to int8"}),
)


PER_SAMPLE_CLIPPING_CLAUSES = (
    Clause("forward returns `x @ weight.T` for `x` of shape `(N, in)`, an empty batch `N = 0` "
           "included, and `weight` of shape `(out, in)` (`max_norm` any positive Python float, "
           "`1e300` and `1e-300` included), and backward, for `x`, "
           "`grad_output @ weight`, as for any linear layer (not clipped);",
           {"PerSampleClippedLinear/clips-grad-x": "grad_x clipped too"}),
    Clause("backward returns, for `weight`, the sum over samples $n$ of sample $n$'s gradient of "
           "`weight`, each scaled by $\\min(1,\\ m / \\lVert\\text{that gradient}\\rVert)$ with "
           "$m$ = `max_norm` (Frobenius norm), exactly, with no eps added to the norm; a sample "
           "whose gradient is 0 keeps factor 1, and nothing is `nan`; in float64 and float32, in "
           "the range below; `None` for `max_norm`;",
           {"PerSampleClippedLinear/no-clipping": "no clipping",
            "PerSampleClippedLinear/norm-of-g-alone": "clipped by ||g_n|| alone",
            "PerSampleClippedLinear/norm-of-x-alone": "clipped by ||x_n|| alone",
            "PerSampleClippedLinear/whole-grad-output-norm": "||grad_output|| ||x_n|| as each "
                                                             "sample's norm",
            "case:clips by ||g_n|| + ||x_n||": "a sample's norm written as ||g_n|| + ||x_n||",
            "case:squared norm": "squared norms",
            "PerSampleClippedLinear/clips-summed-gradient": "the summed gradient clipped",
            "PerSampleClippedLinear/scales-small-samples-up": "every sample scaled to max_norm",
            "PerSampleClippedLinear/nan-on-zero-sample": "nan for a zero sample",
            "PerSampleClippedLinear/eps-in-norm": "eps 1e-10 added to the norm",
            "PerSampleClippedLinear/changes-tiny-sample": "a clamp of the norm at 1e-12",
            "PerSampleClippedLinear/clamps-norm": "norm clamped at 1e-12, max_norm 1e-14",
            "PerSampleClippedLinear/float32-overflow": "product of the two squared norms",
            "PerSampleClippedLinear/max-norm-product-overflows": "TF's order, g * m / max(n, m)",
            "PerSampleClippedLinear/norm-ratio-overflows": "F.linear, factor 1 / clamp(norm / "
                                                              "m, min=1), x's rows clipped, "
                                                              "einsum",
            "PerSampleClippedLinear/fails-on-empty-batch": "norms.max() raises on an empty batch",
            "PerSampleClippedLinear/float32-constant": "max_norm as a float32 tensor",
            "PerSampleClippedLinear/underflows-inside-range": "max_norm on grad_output's rows, "
                                                              "1 / norm on x's rows",
            "PerSampleClippedLinear/nan-on-zeros-at-tiny-max-norm": "the lesson's former "
                                                                    "solution, (m / norms)"
                                                                    ".clamp(max=1)"}),
    Clause("backward never builds a sample's gradient of `weight`, whole or in part, in any "
           "layout: no tensor or NumPy array holding pieces of two or more samples' gradients "
           "side by side, scaled or not (a block or a slice of the `(N, out, in)` stack too), not "
           "even for a moment, and no loop over samples (one step per sample that builds or "
           "adds its `(out, in)` gradient, in place or not);",
           {"PerSampleClippedLinear/per-sample-outer-products": "per-sample outer products "
                                                                "built",
            "PerSampleClippedLinear/gradient-per-sample": "a loop over samples, one outer "
                                                          "product each",
            "PerSampleClippedLinear/stack-outside-torch": "the (N, out, in) stack built in "
                                                          "NumPy"}),
    Clause("backward writes into none of `grad_output`, `x` and `weight` (the tensors "
           "`save_for_backward` keeps are the caller's own);",
           {"PerSampleClippedLinear/modifies-grad-output": "grad_output scaled in place",
            "PerSampleClippedLinear/writes-into-input": "the saved x scaled in place"}),
    Clause("backward computes each gradient only when `ctx.needs_input_grad` asks for it, "
           "returning `None` otherwise.",
           {"PerSampleClippedLinear/computes-frozen-gradient": "both gradients always computed",
            "case:does as much work": "both computed, only the wanted one returned",
            "PerSampleClippedLinear/norms-when-weight-frozen": "norms computed with weight "
                                                               "frozen"}),
)
