"""Lesson 11's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause


SMOOTHED_LOSS_CLAUSES = (
    Clause("that value and its gradient, for `ignore_index` any int, `label_smoothing` in "
           "$[0, 1]$ and `z_loss` $\\geq 0$, at least one row counted, each call's its own when "
           "two calls share a graph;",
           {"SmoothedCrossEntropy/misses-smoothing-term": "smoothing term left out of the gradient",
            "SmoothedCrossEntropy/gradient-ignores-smoothing": "backward ignores label_smoothing",
            "SmoothedCrossEntropy/misses-mean-log-p-term": "(1 - smoothing)(P - Y) without the smoothing "
                                              "term's gradient",
            "SmoothedCrossEntropy/misses-z-loss-term": "z-loss left out of the gradient",
            "SmoothedCrossEntropy/z-loss-gradient-halved": "z-loss gradient without the factor 2",
            "SmoothedCrossEntropy/divides-by-all-rows": "dividing by N instead of the counted rows",
            "SmoothedCrossEntropy/ignored-target-not-a-class": "ignored targets made valid with clamp(min=0)",
            "SmoothedCrossEntropy/smoothing-over-other-classes": "smoothing spread over the C - 1 other "
                                                    "classes",
            "SmoothedCrossEntropy/z-loss-not-squared": "z-loss of lse, not lse ** 2, in forward and backward",
            "SmoothedCrossEntropy/z-loss-over-every-row": "z-loss averaged over every row",
            "SmoothedCrossEntropy/z-loss-divided-by-all-rows": "the z-loss summed over the "
                                                               "counted rows, divided by N",
            "SmoothedCrossEntropy/smoothing-over-every-row": "the smoothing term averaged over "
                                                             "every row, ignored ones included",
            "SmoothedCrossEntropy/z-loss-gradient-without-lse": "z-loss gradient without the "
                                                                "log-sum-exp factor",
            "SmoothedCrossEntropy/ignored-rows-get-gradient": "ignored rows left in the gradient",
            "SmoothedCrossEntropy/state-on-class": "label_smoothing and z_loss kept on the class",
            "SmoothedCrossEntropy/z-loss-term-wrong": "the z-loss factor (1 + 2 lambda lse) on "
                                                      "the whole P - Y",
            "SmoothedCrossEntropy/smoothing-term-wrong": "the smoothing gradient over 2C "
                                                         "classes",
            "SmoothedCrossEntropy/terms-combined-wrongly": "the z-loss factor on the smoothing "
                                                           "term too",
            "raised:RuntimeError": "ignored rows' targets made class 1"}),
    Clause("stable at logits of magnitude $10^4$;",
           {"SmoothedCrossEntropy/overflows-at-large-logits": "z-loss of raw exp sums"}),
    Clause("the logits themselves its only saved $(N, C)$ tensor (other saved tensors at most "
           "$N$ elements);",
           {"SmoothedCrossEntropy/saves-probabilities": "saves the probabilities",
            "SmoothedCrossEntropy/saves-logits-copy": "logits saved as a contiguous copy",
            "SmoothedCrossEntropy/saves-narrower-dtype": "float32 log-sum-exp saved for float64 logits"}),
    Clause("backward by hand, and `None` for everything but `logits`;",
           {"SmoothedCrossEntropy/gradient-for-target": "a gradient for the target"}),
    Clause("`logits` untouched, and tensors kept only through `ctx.save_for_backward`.",
           {"SmoothedCrossEntropy/writes-input": "softmax computed in place in the saved logits",
            "SmoothedCrossEntropy/tensor-on-ctx": "the log-sum-exp kept on ctx"}),
)


CE_CLAUSES = (
    Clause("for `logits` of shape $(N, C)$, `target` of shape $(N,)$, int64, and `ignore_index` "
           "any int, a class or not: the value of `F.cross_entropy(logits, target, "
           "ignore_index=ignore_index)`, the mean of $\\ell_i$ over the rows whose target is not "
           "`ignore_index` (at least one row counts; every row ignored is outside the "
           "contract), and its gradient, each call's its own when two calls share a graph.",
           {"CrossEntropy/divides-by-all-rows": "dividing by N instead of the counted rows",
            "CrossEntropy/ignored-rows-get-gradient": "ignored rows keep their gradient",
            "CrossEntropy/softmax-term-only": "the softmax term alone, no one-hot",
            "CrossEntropy/wrong-gradient-sign": "one_hot - softmax",
            "CrossEntropy/ignores-grad-output": "backward ignores grad_output",
            "case:is past the last class": "ignored targets made valid with clamp(min=0)",
            "raised:RuntimeError": "ignored rows' targets made class 1",
            "CrossEntropy/state-shared-between-calls": "the count of counted rows in a module "
                                                       "global"}),
    Clause("Forward must be stable at logits of magnitude $10^4$ (the section on computing the "
           "loss stably). Picking $z_{iy_i}$ needs a valid class index in every row: what do "
           "the ignored rows' targets (such as -100) become first?",
           {"CrossEntropy/overflows-at-large-logits": "softmax without the max shift"}),
    Clause("Save the logits themselves (not a copy of them, whatever their strides) and, "
           "besides them, only tensors of at most $N$ elements; **not** the probabilities.",
           {"CrossEntropy/saves-probabilities": "saves the probabilities",
            "CrossEntropy/saves-logits-copy": "logits saved as a contiguous copy"}),
    Clause("Backward follows your derivation, by hand, and returns `None` for `target` and "
           "`ignore_index`.", {"CrossEntropy/gradient-for-target": "a gradient for the target"}),
    Clause("As in every lesson: forward and backward leave `logits` untouched (no in-place "
           "write), and a tensor kept for backward goes through `ctx.save_for_backward`, never "
           "onto a `ctx` attribute.",
           {"CrossEntropy/writes-input": "softmax computed in place in the saved logits",
            "CrossEntropy/tensor-on-ctx": "the log-sum-exp kept on ctx"}),
)


LCE_CLAUSES = (
    Clause("the value and gradients of `F.cross_entropy(x @ weight.T, target)` (the mean over "
           "all $N$ rows; every target a valid class) for `x` $(N, d)$, `weight` $(V, d)$, "
           "`target` $(N,)$ and any `chunk_size` from 1 past $N$, from the values `x` and "
           "`weight` hold at each call, however they were changed since the last (an optimizer "
           "step in place, or a write through `weight.data`, which leaves `weight._version` as "
           "it was), stable where the logits pass float32's `exp` range.",
           {"linear_cross_entropy/averages-chunk-means": "the mean of each chunk's mean",
            "linear_cross_entropy/divides-chunk-by-its-rows": "each chunk's G divided by its own "
                                                              "rows, not N",
            "linear_cross_entropy/stale-after-in-place-update": "a float32 weight copy cached "
                                                                "between calls, keyed on id "
                                                                "and _version",
            "linear_cross_entropy/buffer-shared-between-calls": "a grad_weight buffer kept "
                                                                "between calls",
            "linear_cross_entropy/state-shared-between-calls": "gradients kept on the class",
            "case:the short last chunk": "the loop stops before a short last chunk",
            "case:at float32 logits of magnitude 100": "no max shift in the chunk's exp"}),
    Clause("**No tensor with more elements than the largest of** `chunk_size * V`, `N * d` and "
           "`V * d`, in every grad mode.",
           {"linear_cross_entropy/materialises-logits": "all the logits at once",
            "case:under torch.no_grad() creates a tensor": "the composed ops under no_grad"}),
    Clause("When gradients are needed: forward keeps for backward only tensors of `x`'s and "
           "`weight`'s shapes and ones of at most $N$ elements (no logits), and backward does no "
           "matrix product; a loss multiplied by any factor gets that many times the gradients, "
           "a graph walked twice (`retain_graph=True`) gives the same gradients both times, and "
           "backward returns new tensors, never one forward saved (not even when `grad_output` "
           "is 1).",
           {"linear_cross_entropy/scales-saved-in-place": "saved gradients scaled in place",
            "linear_cross_entropy/returns-saved-tensor": "the saved gradients themselves "
                                                         "returned when grad_output == 1",
            "linear_cross_entropy/ignores-grad-output": "backward ignores grad_output",
            "case:FLOPs of matrix products": "gradients recomputed in backward (Cut "
                                             "Cross-Entropy)"}),
    Clause("Under `torch.no_grad()`, or when neither `x` nor `weight` requires grad: the loss's "
           "work only (about $2NdV$ FLOPs); when one of them requires grad, only its gradient "
           "(about $2NdV$ FLOPs fewer than both).",
           {"linear_cross_entropy/no-grad-mode-check": "no grad-mode check",
            "case:skip grad_weight when": "both gradients always",
            "case:although ctx.needs_input_grad is (False, False)": "detaching wrapper, forward "
                                                                    "ignores needs_input_grad",
            "case:answers True inside forward": "torch.is_grad_enabled() asked inside "
                                                "forward"}),
    Clause("float16 / bfloat16: loss and gradients returned in the input's dtype, as accurate as "
           "accumulating in float32 makes them (each chunk's logits may be multiplied in the "
           "input's dtype, as the composed loss does), in every grad mode; what forward keeps "
           "for backward no wider than the input's dtype. The grader compares with float64 over 512 "
           "chunks in float16 and 64 in bfloat16, at $N = 4096$, $V = 512$ in float16, and in "
           "float16 where the sums over the rows, before the division by $N$, pass 65504 (at "
           "`chunk_size` 1024 and past $N$).",
           {"linear_cross_entropy/casts-before-dividing-by-n": "the float32 loss cast to float16 "
                                                               "before the division by N",
            "linear_cross_entropy/softmax-in-float16": "each chunk's log-sum-exp and softmax "
                                                       "computed in float16, accumulators in "
                                                       "float32",
            "linear_cross_entropy/g-rounded-to-float16": "G rounded to float16 before the two "
                                                         "products",
            "case:accumulate the loss and the gradients in float32": "accumulating in bfloat16",
            "linear_cross_entropy/accumulates-narrow-without-grad": "a float16 running sum on "
                                                                    "the loss-only path under "
                                                                    "no_grad",
            "case:saves grad_x as float32 for bfloat16 inputs": "float32 gradients saved for "
                                                                "bfloat16 inputs"}),
    Clause("By hand: no `torch.autograd.grad` in forward or backward; `x` and `weight` "
           "untouched; a tensor kept for backward goes through `ctx.save_for_backward`, never "
           "onto a `ctx` attribute.",
           {"case:LinearCrossEntropy.forward calls": "autograd inside forward",
            "linear_cross_entropy/not-a-custom-function": "the composed loss, no Function",
            "linear_cross_entropy/writes-input": "x scaled by 1/N in place for grad_weight",
            "linear_cross_entropy/tensor-on-ctx": "the gradients kept on ctx"}),
)
