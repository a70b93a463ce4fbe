"""Lesson 12's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

REVERSAL_CLAUSES = (
    Clause("forward returns `x`'s values and saves no tensor;",
           {"GradientReversal/saves-tensors": "saves x"}),
    Clause("backward returns your answer to question 2 for `x`, for `alpha` any Python float (0 "
           "and negative included).",
           {"GradientReversal/no-reversal": "no reversal at all",
            "GradientReversal/forgets-alpha": "alpha forgotten",
            "GradientReversal/forgets-sign": "sign forgotten",
            "GradientReversal/ignores-grad-output": "grad_output left out",
            "GradientReversal/mishandles-negative-alpha": "negative alpha dropped",
            "GradientReversal/zeroes-small-alpha": "a small alpha taken for 0"}),
)
REVERSAL_RULES = {
    "values": {"GradientReversal/float32-constant": "alpha as a float32 tensor",
               "GradientReversal/float32-gradient": "gradient returned in float32"},
    "gradients": {"GradientReversal/gradient-for-non-tensor": "a gradient for alpha"},
    "ctx": {"GradientReversal/state-on-class": "alpha kept on the class (issue 37)",
            "GradientReversal/tensor-on-ctx": "alpha kept as a tensor on ctx"},
    "unwritten": {"GradientReversal/modifies-x-in-place": "forward writes into x",
                  "GradientReversal/writes-grad-output": "grad_output negated in place"},
}


CLIP_CLAUSES = (
    Clause("forward returns `x`'s values and saves no tensor;",
           {"ClipGradientNorm/saves-tensors": "saves x"}),
    Clause("backward brings every row (last dimension) of `grad_output` whose L2 norm is above "
           "`max_norm` to norm `max_norm`, its direction kept, exactly (nothing added to the "
           "norm);",
           {"ClipGradientNorm/whole-norm": "global norm, as clip_grad_norm_",
            "ClipGradientNorm/ignores-max-norm": "factor ignores max_norm",
            "ClipGradientNorm/squared-norm-compared": "squared norm compared with max_norm",
            "ClipGradientNorm/clamps-elements": "each element clamped",
            "ClipGradientNorm/clips-columns": "columns clipped",
            "ClipGradientNorm/clips-dim0-slices": "each sample's slice (dim 0) clipped",
            "ClipGradientNorm/eps-in-norm": "renorm over flattened rows (its eps of 1e-7)"}),
    Clause("every other row comes back unchanged, a row of zeros included;",
           {"ClipGradientNorm/scales-small-rows-up": "every row scaled to max_norm",
            "ClipGradientNorm/nan-on-zero-row": "nan on a row of zeros",
            "ClipGradientNorm/changes-unclipped-row": "F.normalize's clamp at 1e-12"}),
    Clause("for float64, float32 and float16 rows whose squared norms are inside the dtype's "
           "range, and `max_norm` from 1e-3 to 1e3, each row comes back right to the "
           "dtype's precision: no step the result depends on overflows, or falls so far below the "
           "normal numbers that entries lose their digits.",
           {"ClipGradientNorm/max-norm-product-overflows": "divide by the norm clamped from "
                                                           "below",
            "ClipGradientNorm/max-norm-product-underflows": "torch.where, multiplying by "
                                                            "max_norm before dividing",
            "ClipGradientNorm/norm-ratio-overflows": "divides by clamp(norm / max_norm, min=1)",
            "ClipGradientNorm/dtype-range": "squares summed in float16"}),
)
CLIP_RULES = {
    "values": {"ClipGradientNorm/float32-constant": "max_norm as a float32 tensor",
               "ClipGradientNorm/float32-factor": "factor from a float32 rsqrt for float64 rows",
               "raised:RuntimeError": "rows through .view"},
    "ctx": {"ClipGradientNorm/state-on-class": "max_norm kept on the class (issue 37)"},
    "unwritten": {"ClipGradientNorm/modifies-x-in-place": "forward writes into x",
                  "ClipGradientNorm/writes-grad-output": "scaled in place"},
}


SOFT_CLAUSES = (
    Clause("forward returns $\\operatorname{sign}(x)\\max(|x| - \\lambda, 0)$, and backward its "
           "gradients for `x` and `lam`, at $|x| = \\lambda$ ($\\lambda = 0$ included) the values "
           "of step 2's convention;",
           {"SoftThreshold/passes-kink": "gradient 1 at |x| == lam",
            "SoftThreshold/passes-kink-at-lam-0": "grad_output passed through at lam == 0",
            "SoftThreshold/lam-counts-kink": "lam's gradient alone counts the kink",
            "SoftThreshold/lam-wrong-sign": "lam's gradient with the wrong sign",
            "SoftThreshold/lam-averaged": "lam's gradient averaged",
            "SoftThreshold/nan-at-kink": "relu(z) / z as the slope",
            "SoftThreshold/lam-without-sign": "lam's gradient without sign(x) (issue 37)",
            "SoftThreshold/lam-without-mask": "lam's gradient without the mask (issue 37)",
            "SoftThreshold/wrong-on-one-side": "x < -lam dropped (relu's gradient, y > 0)"}),
    Clause("forward saves at most as many bytes per entry as `x` takes (and `lam` if you like), "
           "never `x` itself, and enough for backward to be exact (question 4 asks for the "
           "least).",
           {"SoftThreshold/saves-x": "BrokenSoftThreshold with its two lines mended",
            "SoftThreshold/saves-too-much": "|x| - lam and sign(x) saved, two float tensors",
            "SoftThreshold/code-loses-small-y": "y saved as a float16 code",
            "SoftThreshold/casts-non-finite-to-integer": "int8 code as sign(x) / [|x| > lam]: "
                                                         "inf and nan cast to int8"}),
)
SOFT_RULES = {
    "gradients": {"SoftThreshold/gate-on-wrong-entry": "lam's gradient gated on "
                                                       "needs_input_grad[0]"},
    "by-hand": {"SoftThreshold/asks-autograd": "autograd inside backward"},
    "ctx": {"SoftThreshold/tensor-on-ctx": "lam kept on ctx"},
    "unwritten": {"SoftThreshold/writes-grad-output": "grad_output masked in place"},
}


PER_SAMPLE_CLIPPING_CLAUSES = (
    Clause("forward returns `x @ weight.T`, and backward `grad_output @ weight` for `x`, "
           "unclipped;",
           {"PerSampleClippedLinear/clips-grad-x": "grad_x clipped too"}),
    Clause("for `weight`, the sum over samples of each sample's gradient of `weight` times "
           "$\\min(1,\\ m / \\lVert\\text{that gradient}\\rVert_F)$, $m$ = `max_norm`, exactly "
           "(nothing added to the norm; a zero gradient keeps factor 1);",
           {"PerSampleClippedLinear/no-clipping": "no clipping",
            "PerSampleClippedLinear/norm-of-g-alone": "clipped by ||g_n|| alone",
            "PerSampleClippedLinear/norm-of-x-alone": "clipped by ||x_n|| alone",
            "PerSampleClippedLinear/whole-grad-output-norm": "||grad_output|| ||x_n|| as each "
                                                             "sample's norm",
            "case:clips by ||g_n|| + ||x_n||": "a sample's norm written as ||g_n|| + ||x_n||",
            "case:squared norm": "squared norms",
            "PerSampleClippedLinear/clips-summed-gradient": "the summed gradient clipped",
            "PerSampleClippedLinear/bias-in-norm": "a bias's 1 counted in ||x_n||",
            "PerSampleClippedLinear/scales-small-samples-up": "every sample scaled to max_norm",
            "PerSampleClippedLinear/nan-on-zero-sample": "nan for a zero sample",
            "PerSampleClippedLinear/eps-in-norm": "eps 1e-10 added to the norm",
            "PerSampleClippedLinear/changes-tiny-sample": "a clamp of the norm at 1e-12",
            "PerSampleClippedLinear/clamps-norm": "norm clamped at 1e-12, max_norm 1e-14"}),
    Clause("no sample's gradient of `weight` built, whole or in part, no loop over samples (one "
           "or a few at a time), and no work for `weight`, in forward or backward, when it needs "
           "no gradient.",
           {"PerSampleClippedLinear/per-sample-outer-products": "per-sample outer products "
                                                                "built",
            "PerSampleClippedLinear/gradient-per-sample": "a loop over samples, one outer "
                                                          "product each",
            "PerSampleClippedLinear/stack-outside-torch": "the (N, out, in) stack built in "
                                                          "NumPy",
            "PerSampleClippedLinear/loops-over-samples": "a loop over samples for the factors",
            "case:does as much work": "both computed, only the wanted one returned",
            "PerSampleClippedLinear/norms-when-weight-frozen": "norms computed with weight "
                                                               "frozen"}),
)
PER_SAMPLE_CLIPPING_RULES = {
    "by-hand": {"PerSampleClippedLinear/batch-squared": "an (N, N) diagonal matrix of factors"},
    "values": {"PerSampleClippedLinear/fails-on-empty-batch": "norms.max() raises on an empty "
                                                              "batch",
               "PerSampleClippedLinear/float32-constant": "max_norm as a float32 tensor"},
    "gradients": {"PerSampleClippedLinear/computes-frozen-gradient": "both gradients always "
                                                                     "computed"},
    "unwritten": {"PerSampleClippedLinear/writes-grad-output": "grad_output scaled in place",
                  "PerSampleClippedLinear/writes-input": "the saved x scaled in place"},
}


# each exercise's tables, by its name
CLAUSES = {
    "GradientReversal": REVERSAL_CLAUSES,
    "ClipGradientNorm": CLIP_CLAUSES,
    "SoftThreshold": SOFT_CLAUSES,
    "PerSampleClippedLinear": PER_SAMPLE_CLIPPING_CLAUSES,
}
RULES = {
    "GradientReversal": REVERSAL_RULES,
    "ClipGradientNorm": CLIP_RULES,
    "SoftThreshold": SOFT_RULES,
    "PerSampleClippedLinear": PER_SAMPLE_CLIPPING_RULES,
}
