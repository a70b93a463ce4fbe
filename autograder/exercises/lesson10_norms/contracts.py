"""Lesson 10's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


LAYER_NORM_CLAUSES = (
    Clause("for a float32 or float64 `x` of shape `(*, D)` (a 1-D `x` included; half precision "
           "is not graded here, only in ✎ 3), `weight` and `bias` each of shape `(D,)` or "
           "`None`, independently, and `eps` a Python float: the value of "
           "`F.layer_norm(x, x.shape[-1:], weight, bias, eps)` and the gradients autograd gives "
           "it.",
           {"LayerNormFunction/misses-projection-term": "no projection term",
            "LayerNormFunction/misses-mean-term": "no mean term",
            "LayerNormFunction/ignores-weight": "grad_x ignores the weight",
            "LayerNormFunction/unbiased-variance": "unbiased variance (correction=1)",
            "LayerNormFunction/mean-over-whole-tensor": "mean term's mean over the whole tensor",
            "LayerNormFunction/wrong-row-length": "row means divided by x.shape[0]",
            "LayerNormFunction/state-on-class": "eps kept on the class",
            "LayerNormFunction/eps-outside-root": "eps added outside the square root",
            "LayerNormFunction/eps-as-floor": "eps as a floor under the variance",
            "LayerNormFunction/eps-lost-in-backward": "backward rebuilds rstd from the variance "
                                                      "without eps",
            "raised:TypeError": "weight assumed present in backward",
            "raised:RuntimeError": "grad_output flattened with .view for the bias gradient"}),
    Clause("Forward computes the variance so that rows far from $0$ keep their accuracy, "
           "float32 rows such as $10^4 + \\mathcal N(0, 1)$ and float64 rows such as "
           "$10^8 + \\mathcal N(0, 1)$: $E[x^2] - E[x]^2$ in `x`'s own dtype fails "
           "both.",
           {"case:a precision loss": "E[x^2] - E[x]^2 variance",
            "case:on rows like 1e8 + N(0, 1) in float64": "E[x^2] - E[x]^2 variance accumulated "
                                                         "in float64"}),
    # the bytes themselves are in a collapsed box after the statement's decisions: the bullet
    # would otherwise answer the first decision (what to save); the box says what is graded
    Clause("What forward saves for backward has a budget in bytes, given in the box after the "
           "three decisions below (open it once you have made the first): the weight saved "
           "itself is free; everything else saved counts, `x` itself included.",
           {"case:saved 2 full-size tensors": "saves the normalised input as well as x",
            "LayerNormFunction/saves-wider-copy": "a float64 normalised copy saved for a "
                                                  "float32 x",
            "LayerNormFunction/saves-wider-statistics": "float64 mean and rstd saved for a "
                                                        "float32 x",
            "case:saved the bias": "saves the bias",
            "LayerNormFunction/tensor-on-ctx": "mean and rstd kept on ctx",
            "LayerNormFunction/saves-narrower-dtype": "float32 statistics saved for float64 "
                                                      "inputs"}),
    Clause("Backward is your derivation, **by hand** (no `torch.autograd.grad`, no "
           "`native_layer_norm_backward`), and returns each input's gradient in forward's "
           "order, `None` for `eps`.",
           {"LayerNormFunction/asks-autograd": "autograd of F.layer_norm inside backward",
            "LayerNormFunction/builtin-backward-op": "the built-in native_layer_norm_backward"}),
    Clause("`None` for, and no gradient computed for, any input whose `ctx.needs_input_grad` is "
           "`False` (`weight=None` or `bias=None` gives `False` there): the ops backward runs "
           "are logged, and a tensor that only unrequested gradients use is never made.",
           {"LayerNormFunction/gradient-for-non-tensor": "every gradient returned whatever "
                                                         "needs_input_grad says",
            "LayerNormFunction/returns-none-gradient": "grad_weight gated on the bias's "
                                                       "needs_input_grad entry",
            "case:does as much work": "grad_x computed even when only weight needs a gradient",
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
    Clause("No $D \\times D$ matrix (a Jacobian, or `torch.eye(D)`): backward allocates no "
           "tensor of more than 4 times `x`'s elements, checked on rows of $D = 32$.",
           {"LayerNormFunction/square-matrix-in-backward": "each row's D x D Jacobian built in "
                                                           "backward"}),
    Clause("The weight and bias gradients have shape `(D,)`: summed over **every** leading dim, "
           "however many there are, none included.",
           {"case:returned grad_weight of shape": "weight gradient summed over dim 0 only",
            "case:returned a 0-d grad_weight": "sum(dim=()) for a 1-D input"}),
)


RMS_NORM_CLAUSES = (
    Clause("for a float32 or float64 `x` of shape `(*, D)` (as in ✎ 1, half precision is ✎ 3's), "
           "`weight` of shape `(D,)` or `None`, `eps` a Python float: the value of "
           "`F.rms_norm(x, x.shape[-1:], weight, eps)` and the gradients autograd gives it.",
           {"RMSNormFunction/misses-projection-term": "no projection term",
            "RMSNormFunction/subtracts-mean-term": "LayerNorm's mean term as well",
            "RMSNormFunction/wrong-row-length": "projection's row mean divided by x.shape[0]",
            "RMSNormFunction/ignores-weight": "grad_x ignores the weight",
            "RMSNormFunction/state-on-class": "eps kept on the class",
            "case:ignores its eps argument": "eps ignored",
            "RMSNormFunction/eps-as-floor": "eps as a floor under the mean square",
            "RMSNormFunction/eps-lost-in-backward": "backward rebuilds rstd from the mean square "
                                                    "without eps",
            "raised:RuntimeError": "grad_weight's rows flattened with .view"}),
    # the bytes are in a collapsed box after the contract, not in the bullet that would answer
    # the statement's question (what is the least forward can keep)
    Clause("What forward saves for backward has a budget in bytes, the least that answers the "
           "question above: the box after the contract gives it (open it once you have "
           "decided).",
           {"case:saved 2 full-size tensors": "saves the normalised x too",
            "case:instead of x": "x.contiguous() saved",
            "RMSNormFunction/saves-wider-statistics": "float64 rstd saved for a float32 x",
            "case:saved a copy of the weight": "a copy of the weight saved",
            "RMSNormFunction/saves-narrower-dtype": "float32 rstd saved for float64 inputs"}),
    Clause("Backward by hand, from your derivation; the weight gradient summed over every "
           "leading dim to shape `(D,)`; `None` for `eps`, and `None` for, and no gradient "
           "computed for, an input that needs none (the ops are logged and read as in ✎ 1).",
           {"RMSNormFunction/asks-autograd": "autograd of F.rms_norm inside backward",
            "case:returned grad_weight of shape": "weight gradient not summed",
            "case:does as much work": "weight gradient computed whatever needs_input_grad "
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


GROUP_NORM_CLAUSES = (
    Clause("for a float32 or float64 `x` of shape $(N, C, *)$ (as in ✎ 1, half precision is "
           "✎ 3's; no spatial dims, or any number; an empty batch, $N = 0$, included, as "
           "`F.group_norm` accepts it; every other size at least 1), $C$ divisible by "
           "`num_groups`, `weight` and `bias` each of shape $(C,)$ or `None`, `eps` a Python "
           "float: the value of `F.group_norm(x, num_groups, weight, bias, eps)` and the "
           "gradients autograd gives it.",
           {"GroupNormFunction/instance-norm": "statistics per channel (instance norm)",
            "GroupNormFunction/per-channel-shape-fixed-rank": "weight reshaped to (C, 1) "
                                                              "whatever x's rank",
            "GroupNormFunction/unbiased-variance": "unbiased variance (correction=1)",
            "case:puts channel c in group c % num_groups": "channel c in group c % num_groups "
                                                           "(interleaved groups)",
            "case:normalises each position of a group separately": "statistics per position "
                                                                   "(spatial dims left out)",
            "GroupNormFunction/misses-projection-term": "no projection term",
            "GroupNormFunction/misses-mean-term": "no mean term",
            "GroupNormFunction/statistics-held-constant": "mean and rstd treated as constants",
            "GroupNormFunction/ignores-weight": "grad_x ignores the weight",
            "GroupNormFunction/weight-after-group-means": "weight multiplied in after the group means",
            "case:ignores its eps argument": "eps hard-coded to 1e-5",
            "GroupNormFunction/eps-outside-root": "eps added outside the square root",
            "GroupNormFunction/eps-as-floor": "eps as a floor under the variance",
            "GroupNormFunction/eps-lost-in-backward": "backward rebuilds rstd from the variance "
                                                      "without eps",
            "case:x of shape (0, 4, 3)": "rows of length -1, an empty batch unhandled",
            "GroupNormFunction/state-on-class": "num_groups kept on the class",
            "raised:RuntimeError": "grad_output viewed as rows"}),
    Clause("As in ✎ 1, forward computes each group's variance so that groups far from $0$ keep "
           "their accuracy (float32 groups such as $10^4 + \\mathcal N(0, 1)$): $E[x^2] - "
           "E[x]^2$ in `x`'s own dtype fails.",
           {"case:a precision loss": "E[x^2] - E[x]^2 variance"}),
    Clause("Backward in closed form, by hand, with no $M \\times M$ matrix for a group of $M$ "
           "elements: backward allocates no tensor of more than 4 times `x`'s elements, checked "
           "on groups of $M = 32$; `None` for `num_groups` and `eps`.",
           {"GroupNormFunction/asks-autograd": "autograd of the composed ops inside backward",
            "GroupNormFunction/square-matrix-in-backward": "each group's M x M Jacobian built "
                                                           "in backward"}),
    Clause("The weight and bias gradients have shape $(C,)$: summed over $N$ and every spatial "
           "dim.", {"GroupNormFunction/wrong-gradient-shape": "weight gradient summed over N only"}),
    Clause("What forward saves for backward has a budget in bytes, as in ✎ 1: the size of "
           "`x` in `x`'s dtype plus two numbers per group in `x`'s dtype. The weight saved itself "
           "is free; everything else saved counts.",
           {"case:saved the bias": "saves the bias",
            "GroupNormFunction/saves-wider-copy": "a float64 normalised copy saved for a "
                                                  "float32 x",
            "GroupNormFunction/saves-narrower-dtype": "float32 rstd saved for float64 inputs",
            "GroupNormFunction/saves-wider-statistics": "float64 mean and rstd saved for a "
                                                        "float32 x"}),
    Clause("As in ✎ 1, compute only the gradients `ctx.needs_input_grad` asks for: `None` for, "
           "and no gradient computed for, an input that needs none (logged and read as in "
           "✎ 1).",
           {"case:returned a gradient for weight, which needs none": "grad_weight computed "
                                                                      "whenever there is a "
                                                                      "weight",
            "GroupNormFunction/grad-x-work-for-frozen-x": "grad_x's group sums computed "
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


RMS_NORM_MODULE_CLAUSES = (
    Clause("built as `torch.nn.RMSNorm` is: `RMSNorm(dim)`, `RMSNorm(dim, eps)` or "
           "`RMSNorm(dim, eps=eps)`, `eps=1e-6` by default; each module keeps its own eps;",
           {"RMSNorm/eps-not-per-instance": "eps kept on the class",
            "RMSNorm/eps-not-second-argument": "eps the third parameter of __init__",
            "case:does not use eps=1e-6 by default": "default eps 1e-5",
            "RMSNorm/constant-ignored": "forward passes eps=1e-6 whatever eps it was built "
                                        "with",
            "RMSNorm/zero-eps-taken-for-none": "eps=0.0 taken for None (self.eps or ...)"}),
    Clause("`forward(x)` computes through your `RMSNormFunction`;",
           {"case:does not call RMSNormFunction.apply": "forward calls F.rms_norm",
            "RMSNorm/bypasses-function": "half inputs sent to F.rms_norm"}),
    Clause("the same `state_dict`: one `nn.Parameter` named `weight`, ones at start, each "
           "module its own; it loads `torch.nn.RMSNorm(dim).state_dict()` and saves one that "
           "`torch.nn.RMSNorm` loads;",
           {"case:its weight is a plain tensor": "weight a plain tensor",
            "case:give it exactly one, named weight": "parameter named scale",
            "case:does not start as ones": "weight starts random",
            "case:cannot load torch.nn.RMSNorm's state_dict": "eps kept as a buffer",
            "RMSNorm/weight-dtype": "weight built in float64",
            "RMSNorm/shared-weight": "every RMSNorm(dim) wraps one cached ones tensor"}),
    Clause("the same outputs and gradients as `torch.nn.RMSNorm` holding the same weight, in "
           "the same dtypes, whenever it is called: float32 and float64 inputs to a float32 "
           "module, float64 inputs to a float64 one, to float64's precision;",
           {"RMSNorm/float32-step": "a float64 x computed in the float32 weight's dtype, cast "
                                    "back",
            "case:float64, the module's weight float32": "x cast to the weight's dtype",
            "RMSNorm/stale-weight-copy": "self.weight.to(wide) cached at the first call and "
                                         "reused",
            "case:keep the input's dtype": "forward in float64 whatever x's dtype",
            "case:received no gradient": "weight passed as .data",
            "case:its backward returns None for it": "the Function returns None for the "
                                                     "weight"}),
    Clause("trained by an optimiser beside `torch.nn.RMSNorm`, the same weights after every "
           "step;", {"case:an optimiser would never move it": "weight created with "
                                                              "requires_grad=False"}),
    Clause("a bfloat16 or float16 module given an input in its dtype: an output in that dtype, "
           "each entry `torch.nn.RMSNorm`'s or its neighbour at a near-tie, and a gradient for "
           "its weight.",
           {"RMSNorm/half-weight-cut-off": "a half module's weight detached",
            "RMSNorm/half-output-dtype": "float16 and bfloat16 computed and returned in float32",
            "RMSNorm/half-rounded-per-step": "a bfloat16 row computed in bfloat16, float16 "
                                             "widened",
            "RMSNorm/half-computed-in-half": "a float16 x squared in float16",
            "RMSNorm/bfloat16-weight-through-float16": "a half module's weight cast with "
                                                       ".half(), a bfloat16 one through "
                                                       "float16"}),
)
