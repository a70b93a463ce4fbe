"""Lesson 10's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

# ✎ 1, 2 and 4 decide the same thing about work: what an unrequested gradient alone would use
NO_WORK = ("Backward computes only the gradients `ctx.needs_input_grad` asks for: nothing that "
           "only an unrequested gradient uses is computed.")


LAYER_NORM_CLAUSES = (
    Clause("Forward computes each row's variance so that rows far from $0$ keep their accuracy: "
           "float32 rows such as $10^4 + \\mathcal N(0, 1)$ and float64 rows such as "
           "$10^8 + \\mathcal N(0, 1)$.",
           {"case:a precision loss": "E[x^2] - E[x]^2 variance",
            "case:on rows like 1e8 + N(0, 1) in float64": "E[x^2] - E[x]^2 variance accumulated "
                                                         "in float64"}),
    Clause("Forward saves one tensor of `x`'s size and at most two numbers per row, in `x`'s "
           "dtype, besides the weight: nothing else.",
           {"case:saved 2 full-size tensors": "saves the normalised input as well as x",
            "LayerNormFunction/saves-wider-copy": "a float64 normalised copy saved for a "
                                                  "float32 x",
            "LayerNormFunction/saves-wider-statistics": "float64 mean and rstd saved for a "
                                                        "float32 x",
            "case:saved the bias": "saves the bias",
            "LayerNormFunction/saves-narrower-dtype": "float32 statistics saved for float64 "
                                                      "inputs"}),
    Clause(NO_WORK,
           {"case:does as much work": "grad_x computed even when only weight needs a gradient",
            "LayerNormFunction/grad-x-work-for-frozen-x": "grad_x's row sums computed before "
                                                          "needs_input_grad is read",
            "LayerNormFunction/g-hat-for-frozen-x": "grad_output * weight formed with x frozen",
            "LayerNormFunction/x-hat-for-bias-only": "x_hat recomputed when only the bias needs "
                                                     "a gradient",
            "LayerNormFunction/grad-weight-work-for-frozen-weight": "grad_output * x_hat made "
                                                                    "whenever x_hat is, weight "
                                                                    "frozen",
            "LayerNormFunction/dead-work-for-unrequested-gradient": "a dead (D,) sum of "
                                                                    "grad_output beside the "
                                                                    "conditional grad_bias"}),
)

LAYER_NORM_RULES = {
    "values": {"LayerNormFunction/misses-projection-term": "no projection term",
               "LayerNormFunction/misses-mean-term": "no mean term",
               "LayerNormFunction/ignores-weight": "grad_x ignores the weight",
               "LayerNormFunction/unbiased-variance": "unbiased variance (correction=1)",
               "LayerNormFunction/mean-over-whole-tensor": "mean term's mean over the whole "
                                                           "tensor",
               "LayerNormFunction/wrong-row-length": "row means divided by x.shape[0]",
               "LayerNormFunction/eps-outside-root": "eps added outside the square root",
               "LayerNormFunction/eps-as-floor": "eps as a floor under the variance",
               "LayerNormFunction/eps-lost-in-backward": "backward rebuilds rstd from the "
                                                         "variance without eps",
               "LayerNormFunction/saved-x-hat-written-in-place": "weight and bias written into "
                                                                 "the saved x_hat in place",
               "raised:TypeError": "weight assumed present in backward",
               "LayerNormFunction/assumes-contiguous-grad-output": "grad_output flattened with "
                                                                   ".view for the bias gradient"},
    "gradients": {"LayerNormFunction/gradient-for-non-tensor": "every gradient returned whatever "
                                                               "needs_input_grad says",
                  "LayerNormFunction/returns-none-gradient": "grad_weight gated on the bias's "
                                                             "needs_input_grad entry",
                  "case:returned a 0-d grad_weight": "sum(dim=()) for a 1-D input"},
    "by-hand": {"LayerNormFunction/asks-autograd": "autograd of F.layer_norm inside backward",
                "LayerNormFunction/builtin-backward-op": "the built-in "
                                                         "native_layer_norm_backward",
                "LayerNormFunction/square-matrix-in-backward": "each row's D x D Jacobian built "
                                                               "in backward"},
    "ctx": {"LayerNormFunction/state-on-class": "eps kept on the class",
            "LayerNormFunction/tensor-on-ctx": "mean and rstd kept on ctx"},
    "unwritten": {"case:modified grad_output in place": "grad_output scaled in place",
                  "case:modified its input x in place": "centred in place into the input"},
}


RMS_NORM_CLAUSES = (
    Clause("Forward saves, beyond the tensors it was handed and saves as they are, at most one "
           "number per row, in `x`'s dtype.",
           {"case:saved 2 full-size tensors": "saves the normalised x too",
            "case:instead of x": "x.contiguous() saved",
            "RMSNormFunction/saves-wider-statistics": "float64 rstd saved for a float32 x",
            "case:saved a copy of the weight": "a copy of the weight saved",
            "RMSNormFunction/saves-narrower-dtype": "float32 rstd saved for float64 inputs"}),
    Clause(NO_WORK,
           {"case:does as much work": "weight gradient computed whatever needs_input_grad "
                                       "says",
            "RMSNormFunction/grad-x-work-for-frozen-x": "grad_x's row sum computed before "
                                                        "needs_input_grad is read",
            "RMSNormFunction/g-hat-for-frozen-x": "grad_output * weight formed with x frozen",
            "RMSNormFunction/grad-weight-work-for-frozen-weight": "grad_output * x_hat made "
                                                                  "before needs_input_grad is "
                                                                  "read",
            "RMSNormFunction/dead-work-for-unrequested-gradient": "a dead einsum for grad_weight "
                                                                  "beside the conditional one"}),
)

RMS_NORM_RULES = {
    "values": {"RMSNormFunction/misses-projection-term": "no projection term",
               "RMSNormFunction/subtracts-mean-term": "LayerNorm's mean term as well",
               "RMSNormFunction/wrong-row-length": "projection's row mean divided by x.shape[0]",
               "RMSNormFunction/ignores-weight": "grad_x ignores the weight",
               "case:ignores its eps argument": "eps ignored",
               "RMSNormFunction/eps-as-floor": "eps as a floor under the mean square",
               "RMSNormFunction/eps-lost-in-backward": "backward rebuilds rstd from the mean "
                                                       "square without eps",
               "RMSNormFunction/assumes-contiguous-grad-output": "grad_weight's rows flattened "
                                                                 "with .view"},
    "by-hand": {"RMSNormFunction/asks-autograd": "autograd of F.rms_norm inside backward"},
    "ctx": {"RMSNormFunction/state-on-class": "eps kept on the class"},
    "unwritten": {"RMSNormFunction/writes-grad-output": "projection subtracted in place from "
                                                        "grad_output (weight=None)"},
}


GROUP_NORM_CLAUSES = (
    Clause("Forward computes each group's variance so that groups far from $0$ keep their "
           "accuracy: float32 groups such as $10^4 + \\mathcal N(0, 1)$ and float64 groups such "
           "as $10^8 + \\mathcal N(0, 1)$.",
           {"case:a precision loss": "E[x^2] - E[x]^2 variance",
            "case:on rows like 1e8 + N(0, 1) in float64": "a one-pass group variance widened "
                                                         "to float64"}),
    Clause("Forward saves one tensor of `x`'s size and at most two numbers per group, in `x`'s "
           "dtype, besides the weight: nothing else.",
           {"case:saved the bias": "saves the bias",
            "GroupNormFunction/saves-wider-copy": "a float64 normalised copy saved for a "
                                                  "float32 x",
            "GroupNormFunction/saves-narrower-dtype": "float32 rstd saved for float64 inputs",
            "GroupNormFunction/saves-wider-statistics": "float64 mean and rstd saved for a "
                                                        "float32 x"}),
    Clause(NO_WORK,
           {"GroupNormFunction/grad-x-work-for-frozen-x": "grad_x's group sums computed "
                                                          "before needs_input_grad is read",
            "GroupNormFunction/x-hat-for-bias-only": "x_hat recomputed when only the bias "
                                                     "needs a gradient",
            "GroupNormFunction/grad-weight-work-for-frozen-weight": "grad_output * x_hat made "
                                                                    "before needs_input_grad "
                                                                    "is read",
            "GroupNormFunction/dead-work-for-unrequested-gradient": "a dead (C,) sum of "
                                                                    "grad_output beside the "
                                                                    "conditional grad_bias"}),
)

GROUP_NORM_RULES = {
    "values": {"GroupNormFunction/instance-norm": "statistics per channel (instance norm)",
               "GroupNormFunction/per-channel-shape-fixed-rank": "weight reshaped to (C, 1) "
                                                                 "whatever x's rank",
               "GroupNormFunction/unbiased-variance": "unbiased variance (correction=1)",
               "case:puts channel c in group c % num_groups": "channel c in group c % "
                                                              "num_groups (interleaved groups)",
               "case:normalises each position of a group separately": "statistics per position "
                                                                      "(spatial dims left out)",
               "GroupNormFunction/misses-projection-term": "no projection term",
               "GroupNormFunction/misses-mean-term": "no mean term",
               "GroupNormFunction/statistics-held-constant": "mean and rstd treated as "
                                                             "constants",
               "GroupNormFunction/group-size-without-positions": "group sums divided by C / "
                                                                 "num_groups",
               "GroupNormFunction/ignores-weight": "grad_x ignores the weight",
               "GroupNormFunction/weight-after-group-means": "weight multiplied in after the "
                                                             "group means",
               "case:ignores its eps argument": "eps hard-coded to 1e-5",
               "GroupNormFunction/eps-outside-root": "eps added outside the square root",
               "GroupNormFunction/eps-as-floor": "eps as a floor under the variance",
               "GroupNormFunction/eps-lost-in-backward": "backward rebuilds rstd from the "
                                                         "variance without eps",
               "case:x of shape (0, 4, 3)": "rows of length -1, an empty batch unhandled",
               "GroupNormFunction/assumes-contiguous-grad-output": "grad_output viewed as "
                                                                   "rows"},
    "gradients": {"case:returned a gradient for weight, which needs none": "grad_weight computed "
                                                                           "whenever there is a "
                                                                           "weight",
                  "GroupNormFunction/wrong-gradient-shape": "weight gradient summed over N "
                                                            "only"},
    "by-hand": {"GroupNormFunction/asks-autograd": "autograd of the composed ops inside "
                                                   "backward",
                "GroupNormFunction/square-matrix-in-backward": "each group's M x M Jacobian "
                                                               "built in backward"},
    "ctx": {"GroupNormFunction/state-on-class": "num_groups kept on the class"},
}


RMS_NORM_MODULE_CLAUSES = (
    Clause("Built as `torch.nn.RMSNorm` is, `RMSNorm(dim)`, `RMSNorm(dim, eps)` or "
           "`RMSNorm(dim, eps=eps)`, each module keeping its own eps, `1e-6` by default here "
           "(torch's default is `None`).",
           {"RMSNorm/eps-not-per-instance": "eps kept on the class",
            "RMSNorm/eps-not-second-argument": "eps the third parameter of __init__",
            "case:does not use eps=1e-6 by default": "default eps 1e-5",
            "RMSNorm/constant-ignored": "forward passes eps=1e-6 whatever eps it was built "
                                        "with",
            "RMSNorm/zero-eps-taken-for-none": "eps=0.0 taken for None (self.eps or ...)"}),
    Clause("The `state_dict` of `torch.nn.RMSNorm(dim)`: one `nn.Parameter` named `weight`, "
           "ones at start, each module its own, which an optimiser trains as "
           "`torch.nn.RMSNorm`'s.",
           {"case:its weight is a plain tensor": "weight a plain tensor",
            "case:give it exactly one, named weight": "parameter named scale",
            "case:does not start as ones": "weight starts random",
            "case:cannot load torch.nn.RMSNorm's state_dict": "eps kept as a buffer",
            "RMSNorm/weight-dtype": "weight built in float64",
            "RMSNorm/shared-weight": "every RMSNorm(dim) wraps one cached ones tensor",
            "case:an optimiser would never move it": "weight created with requires_grad=False"}),
    Clause("`forward(x)` computes through your `RMSNormFunction` the outputs and gradients of "
           "`torch.nn.RMSNorm` holding the same weight, whenever it is called, a float64 input "
           "to a float32 module in float64.",
           {"case:does not call RMSNormFunction.apply": "forward calls F.rms_norm",
            "RMSNorm/bypasses-function": "half inputs sent to F.rms_norm",
            "RMSNorm/float32-step": "a float64 x computed in the float32 weight's dtype, cast "
                                    "back",
            "case:float64, the module's weight float32": "x cast to the weight's dtype",
            "RMSNorm/stale-weight-copy": "self.weight.to(wide) cached at the first call and "
                                         "reused",
            "case:keep the input's dtype": "forward in float64 whatever x's dtype",
            "case:received no gradient": "weight passed as .data",
            "RMSNorm/uses-failing-exercise": "the Function returns None for the weight"}),
    Clause("A bfloat16 or float16 `x`, in a module of any dtype, computes as `torch.nn.RMSNorm` "
           "does and rounds once: an output in `x`'s dtype, each entry `torch.nn.RMSNorm`'s or "
           "its neighbour at a near-tie.",
           {"RMSNorm/output-not-in-x-dtype": "output in the promoted dtype of x and the weight",
            "RMSNorm/half-weight-cut-off": "a half module's weight detached",
            "RMSNorm/half-output-dtype": "float16 and bfloat16 computed and returned in float32",
            "RMSNorm/half-rounded-per-step": "a bfloat16 row computed in bfloat16, float16 "
                                             "widened",
            "RMSNorm/half-computed-in-half": "a float16 x squared in float16",
            "RMSNorm/half-weight-rounded-to-x-dtype": "a half x computed in float32, the "
                                                      "weight first rounded to x's dtype",
            "RMSNorm/bfloat16-weight-through-float16": "a half module's weight cast with "
                                                       ".half(), a bfloat16 one through "
                                                       "float16"}),
)

RMS_NORM_MODULE_RULES = {
    "values": {"RMSNorm/fails-through-function": "RMSNormFunction without its projection term"},
}


# each exercise's tables, by its name
CLAUSES = {
    "LayerNormFunction": LAYER_NORM_CLAUSES,
    "RMSNormFunction": RMS_NORM_CLAUSES,
    "RMSNorm": RMS_NORM_MODULE_CLAUSES,
    "GroupNormFunction": GROUP_NORM_CLAUSES,
}
RULES = {
    "LayerNormFunction": LAYER_NORM_RULES,
    "RMSNormFunction": RMS_NORM_RULES,
    "RMSNorm": RMS_NORM_MODULE_RULES,
    "GroupNormFunction": GROUP_NORM_RULES,
}
