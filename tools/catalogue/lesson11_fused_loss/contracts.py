"""Lesson 11's contracts as data (``tools.catalogue.clauses``), keyed by exercise: ``CLAUSES``,
each exercise's bullets as the lesson lists them, each with the checks that enforce it and a
wrong answer of this catalogue that each check fails; ``RULES``, the checks through which
each exercise enforces the Function contract's rules (``autograder.function_contract``),
which the page states once and no bullet repeats, each with its witness. Grading never
reads them (``tools.catalogue.contract_of`` does)."""

from ..clauses import Clause

SMOOTHED_LOSS_CLAUSES = (
    Clause("Forward and backward are stable at logits of magnitude $10^4$, in float32 and float64.",
           {"SmoothedCrossEntropy/overflows-at-large-logits": "z-loss of raw exp sums"}),
    Clause("Forward saves the logits themselves and, besides them, only tensors of at most $N$ "
           "elements.",
           {"SmoothedCrossEntropy/saves-probabilities": "saves the probabilities",
            "SmoothedCrossEntropy/saves-logits-copy": "logits saved as a contiguous copy"}),
)

SMOOTHED_LOSS_RULES = {
    "values": {
        "SmoothedCrossEntropy/misses-smoothing-term": "smoothing term left out of the gradient",
        "SmoothedCrossEntropy/gradient-ignores-smoothing": "backward ignores label_smoothing",
        "SmoothedCrossEntropy/misses-mean-log-p-term": "(1 - smoothing)(P - Y) without the "
                                                       "smoothing term's gradient",
        "SmoothedCrossEntropy/misses-z-loss-term": "z-loss left out of the gradient",
        "SmoothedCrossEntropy/z-loss-gradient-halved": "z-loss gradient without the factor 2",
        "SmoothedCrossEntropy/divides-by-all-rows": "dividing by N instead of the counted rows",
        "SmoothedCrossEntropy/ignored-target-not-a-class": "ignored targets made valid with "
                                                           "clamp(min=0)",
        "SmoothedCrossEntropy/smoothing-over-other-classes": "smoothing spread over the C - 1 "
                                                             "other classes",
        "SmoothedCrossEntropy/z-loss-not-squared": "z-loss of lse, not lse ** 2, in forward and "
                                                   "backward",
        "SmoothedCrossEntropy/z-loss-over-every-row": "z-loss averaged over every row",
        "SmoothedCrossEntropy/z-loss-divided-by-all-rows": "the z-loss summed over the counted "
                                                           "rows, divided by N",
        "SmoothedCrossEntropy/smoothing-over-every-row": "the smoothing term averaged over every "
                                                         "row, ignored ones included",
        "SmoothedCrossEntropy/z-loss-gradient-without-lse": "z-loss gradient without the "
                                                            "log-sum-exp factor",
        "SmoothedCrossEntropy/ignored-rows-get-gradient": "ignored rows left in the gradient",
        "SmoothedCrossEntropy/z-loss-term-wrong": "the z-loss factor (1 + 2 lambda lse) on the "
                                                  "whole P - Y",
        "SmoothedCrossEntropy/smoothing-term-wrong": "the smoothing gradient over 2C classes",
        "SmoothedCrossEntropy/terms-combined-wrongly": "the z-loss factor on the smoothing term "
                                                       "too",
        "SmoothedCrossEntropy/saves-narrower-dtype": "float32 log-sum-exp saved for float64 "
                                                     "logits",
        "raised:RuntimeError": "ignored rows' targets made class 1",
        "SmoothedCrossEntropy/fails-on-size-one": "log-sum-exp and the picked logits squeezed"},
    "gradients": {"SmoothedCrossEntropy/gradient-for-target": "a gradient for the target"},
    "ctx": {"SmoothedCrossEntropy/state-on-class": "label_smoothing and z_loss kept on the class",
            "SmoothedCrossEntropy/tensor-on-ctx": "the log-sum-exp kept on ctx"},
    "unwritten": {"SmoothedCrossEntropy/writes-input": "softmax computed in place in the saved "
                                                       "logits"},
}


CE_CLAUSES = (
    Clause("Forward and backward are stable at logits of magnitude $10^4$, in float32 and float64.",
           {"CrossEntropy/overflows-at-large-logits": "softmax without the max shift"}),
    Clause("Beyond the logits themselves, what forward keeps for backward is $O(N)$ elements.",
           {"CrossEntropy/saves-probabilities": "saves the probabilities",
            "CrossEntropy/saves-logits-copy": "logits saved as a contiguous copy"}),
)

CE_RULES = {
    "values": {"CrossEntropy/divides-by-all-rows": "dividing by N instead of the counted rows",
               "CrossEntropy/ignored-rows-get-gradient": "ignored rows keep their gradient",
               "CrossEntropy/softmax-term-only": "the softmax term alone, no one-hot",
               "CrossEntropy/wrong-gradient-sign": "one_hot - softmax",
               "CrossEntropy/ignores-grad-output": "backward ignores grad_output",
               "case:is past the last class": "ignored targets made valid with clamp(min=0)",
               "raised:RuntimeError": "ignored rows' targets made class 1",
               "CrossEntropy/fails-on-size-one": "logits squeezed before the log-sum-exp over "
                                                 "dim 1"},
    "gradients": {"CrossEntropy/gradient-for-target": "a gradient for the target"},
    "ctx": {"CrossEntropy/state-shared-between-calls": "the count of counted rows in a module "
                                                       "global",
            "CrossEntropy/tensor-on-ctx": "the log-sum-exp kept on ctx"},
    "unwritten": {"CrossEntropy/writes-input": "softmax computed in place in the saved logits"},
}


LCE_CLAUSES = (
    Clause("Stable at logits of magnitude $10^4$ in float32 and float64; in float16 and "
           "bfloat16, the loss and gradients in the input's dtype, within about one rounding "
           "of their largest entry.",
           {"linear_cross_entropy/overflows-at-large-logits": "float64 arithmetic with no max "
                                                              "shift",
            "linear_cross_entropy/casts-before-dividing-by-n": "the float32 loss cast to float16 "
                                                               "before the division by N",
            "linear_cross_entropy/softmax-in-float16": "each chunk's log-sum-exp and softmax "
                                                       "computed in float16, accumulators in "
                                                       "float32",
            "linear_cross_entropy/g-rounded-to-float16": "G rounded to float16 before the two "
                                                         "products",
            "linear_cross_entropy/narrow-accumulation": "accumulating in bfloat16",
            "linear_cross_entropy/accumulates-narrow-without-grad": "a float16 running sum on "
                                                                    "the loss-only path under "
                                                                    "no_grad"}),
    Clause("No tensor larger than one chunk of logits, `x` or `weight`, in any grad mode, and "
           "at most eight chunk-sized tensors alive at once in forward.",
           {"linear_cross_entropy/materialises-logits": "all the logits at once",
            "case:under torch.no_grad() creates a tensor": "the composed ops under no_grad",
            "linear_cross_entropy/keeps-every-chunk": "every chunk's softmax kept in a list, the "
                                                      "gradients in a second pass",
            "linear_cross_entropy/too-many-chunk-tensors": "eight copies of each chunk's "
                                                           "logits kept to the end of the loop"}),
    Clause("What forward keeps for backward is $O(Nd + Vd)$ elements, any tensor of `x`'s or "
           "`weight`'s shape in its dtype, and backward returns new tensors.",
           {"linear_cross_entropy/returns-saved-tensor": "the saved gradients themselves "
                                                         "returned when grad_output == 1",
            "linear_cross_entropy/ignores-grad-output": "backward ignores grad_output",
            "case:saves grad_x as float32 for bfloat16 inputs": "float32 gradients saved for "
                                                                "bfloat16 inputs"}),
    Clause("Forward and backward together do at most one matrix product beyond the composed "
           "loss's three (about $2NdV$ FLOPs each), and no matrix product for a gradient nobody "
           "needs, under `torch.no_grad()` included.",
           {"case:FLOPs of matrix products": "logits recomputed in backward once per gradient",
            "linear_cross_entropy/no-grad-mode-check": "no grad-mode check",
            "case:though weight does not require grad": "both gradients always",
            "case:although ctx.needs_input_grad is (False, False)": "detaching wrapper, forward "
                                                                    "ignores needs_input_grad",
            "case:answers True inside forward": "torch.is_grad_enabled() asked inside "
                                                "forward"}),
)

LCE_RULES = {
    "values": {"linear_cross_entropy/averages-chunk-means": "the mean of each chunk's mean",
               "linear_cross_entropy/divides-chunk-by-its-rows": "each chunk's G divided by its "
                                                                 "own rows, not N",
               "case:the short last chunk": "the loop stops before a short last chunk"},
    "by-hand": {"linear_cross_entropy/not-a-custom-function": "the composed loss, no Function"},
    "ctx": {"linear_cross_entropy/stale-after-in-place-update": "a float32 weight copy cached "
                                                                "between calls, keyed on id and "
                                                                "_version",
            "linear_cross_entropy/buffer-shared-between-calls": "a grad_weight buffer kept "
                                                                "between calls",
            "linear_cross_entropy/state-shared-between-calls": "gradients kept on the class",
            "linear_cross_entropy/tensor-on-ctx": "the gradients kept on ctx"},
    "unwritten": {"linear_cross_entropy/writes-input": "x scaled by 1/N in place for grad_weight",
                  "linear_cross_entropy/scales-saved-in-place": "saved gradients scaled in "
                                                                "place"},
}


# each exercise's tables, by its name
CLAUSES = {
    "CrossEntropy": CE_CLAUSES,
    "linear_cross_entropy": LCE_CLAUSES,
    "SmoothedCrossEntropy": SMOOTHED_LOSS_CLAUSES,
}
RULES = {
    "CrossEntropy": CE_RULES,
    "linear_cross_entropy": LCE_RULES,
    "SmoothedCrossEntropy": SMOOTHED_LOSS_RULES,
}
