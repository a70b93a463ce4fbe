"""Lesson 06's contracts as the learner reads them: each exercise's bullets, with
the checks that enforce each and a wrong answer each check fails (autograder.clauses)."""

from ...clauses import Clause

# the prefixes of the exercises' mistake ids, and the memory clause's case
S_ = "ScaledDotProductAttention/"
M_ = "MemoryEfficientAttention/"
F_ = "FlashAttention/"
FULL = "case:materialises the full Lq x Lk matrix"
B_ = "AttentionWithBias/"


SCALED_DOT_PRODUCT_CLAUSES = (
    Clause("The output, and the gradients of `Q`, `K` and `V`, that "
           "`F.scaled_dot_product_attention` gives, for any Python-float `scale`, in float64 and"
           " float32, for any number of leading dimensions, any $N_q$ and $N_k$, and inputs and "
           "`grad_output` in any layout (the table below lists the cases the checks use); `None`"
           " for `scale` and for `mask`.",
           {S_ + "softmax-as-element-wise": "no row sum",
            S_ + "jacobian-diagonal-only": "diagonal of the Jacobian only",
            S_ + "row-sum-over-the-queries": "row sum over the queries",
            S_ + "row-sum-without-keepdim": "row sum without keepdim",
            S_ + "row-sum-laid-out-as-a-row": "row sums unsqueezed as a row",
            S_ + "gradient-off-by-a-factor": "scale missing from dQ and dK",
            S_ + "view-on-multihead-layout": "scores by torch.bmm on Q.view(-1, Lq, d)",
            S_ + "view-on-multihead-grad-output": "grad_output flattened by .view",
            S_ + "gradient-for-non-tensor": "a gradient for the float scale",
            S_ + "mask-gradient-not-none": "zeros returned as the mask's gradient",
            S_ + "scale-ignored": "d ** -0.5 in place of the scale given",
            S_ + "scale-out-of-range": "scale split as its square root over Q and K"}),
    Clause("`mask` is `None` (the most common call) or a boolean tensor broadcastable to `(..., "
           "Lq, Lk)`, `True` = attend and `False` = masked out: a masked key gets probability "
           "exactly 0, whatever its score and the scores of its row.",
           {S_ + "mask-polarity-reversed": "reversed mask",
            "raised:TypeError": "no mask=None path",
            S_ + "finite-mask-fill": "masked scores filled with -1e4",
            S_ + "finfo-min-mask-fill": "masked scores filled with torch.finfo(dtype).min",
            S_ + "masked-scores-take-part": "softmax over every key, then masked and renormalised"}),
    Clause("Scores of any magnitude softmax handles (the table below).",
           {S_ + "no-row-maximum": "no maximum subtracted",
            S_ + "mask-after-global-maximum": "mask applied after a global max",
            S_ + "one-global-maximum": "one global max, the mask filled first"}),
    Clause("Backward by hand, from your derivation: no `torch.autograd.grad` inside it, no "
           "built-in `*_backward` op, and no tensor that forward saved changed in place.",
           {S_ + "asks-autograd": "softmax gradient from torch.autograd.grad",
            S_ + "builtin-backward-op": "built-in _softmax_backward_data",
            S_ + "backward-modifies-saved-tensor": "dS built in place on the saved P"}),
    Clause("Forward keeps what backward reads through `ctx.save_for_backward`, one call's state "
           "per `ctx`: no tensor as a `ctx` attribute, on the class or in a module global, and "
           "no saved copy of an input (its very values, transposed or not, in any dtype); a "
           "tensor computed from an input, such as `Q * scale`, may be saved.",
           {S_ + "tensor-on-ctx": "mask kept as a ctx attribute",
            S_ + "state-on-class": "scale kept on the class",
            S_ + "state-in-shared-container": "P kept in a dict on the class, keyed by id(ctx)",
            S_ + "saves-a-copy": "saves K transposed and made contiguous"}),
    Clause("Keep the `@once_differentiable` that `backward` comes with (lesson 04; an optional "
           "block at the end shows what it guards and what it lets through).",
           {S_ + "missing-once-differentiable": "backward without @once_differentiable"}),
)


MEMORY_EFFICIENT_CLAUSES = (
    Clause("Every bullet of Exercise 1's contract.",
           {M_ + "softmax-as-element-wise": "no row sum",
            M_ + "row-sum-without-keepdim": "D = rowsum(dO * O) without keepdim",
            M_ + "view-on-multihead-layout": "scores by torch.bmm on Q.view(-1, Lq, d)",
            M_ + "view-on-multihead-grad-output": "grad_output flattened by .view",
            M_ + "mask-gradient-not-none": "zeros returned as the mask's gradient",
            M_ + "finite-mask-fill": "masked scores filled with -1e4 in both passes",
            M_ + "finfo-min-mask-fill": "masked scores filled with torch.finfo(dtype).min",
            M_ + "state-in-shared-container": "P kept in a dict on the class, keyed by id(ctx)",
            M_ + "missing-once-differentiable": "backward without @once_differentiable"}),
    Clause("Forward keeps only $Q$, $K$, $V$, the mask as given (or `None`; a view of it, such "
           "as `mask.expand`, is fine), the output $O$ and the log-sum-exp $L$ of shape $(\\dots,"
           " N_q)$ or $(\\dots, N_q, 1)$ (or a row maximum and a row sum, shaped alike: at most "
           "two numbers per query row), in the inputs' dtype or wider: **no $N_q \\times N_k$ tensor kept between forward and "
           "backward**, in `ctx` or anywhere else, no new mask tensor, no copy of an input or of"
           " $O$.",
           {M_ + "saves-full-size-tensor": "saves the probabilities",
            M_ + "saves-expanded-mask": "saves the mask expanded to the scores' shape",
            M_ + "saves-a-new-mask": "the inverted mask saved",
            M_ + "saves-mask-as-float": "mask saved as a float copy",
            M_ + "saves-in-lower-precision": "log-sum-exp kept in float32 for float64 inputs",
            M_ + "saves-a-copy": "saves a float64 copy of the output for accuracy",
            M_ + "saves-more-than-row-statistics": "saves K transposed and made contiguous",
            M_ + "saves-copy-of-output": "saves a copy of the output",
            M_ + "saves-something-else": "the scale saved as a 0-d tensor beside L",
            M_ + "row-statistic-misshapen": "L squeezed of every dimension of size 1"}),
    Clause("Backward recomputes $P$, masked as in forward, from the saved $L$: no second "
           "softmax, no second pass for each row's maximum or sum.",
           {M_ + "recomputes-softmax-without-lse":
                "backward calls softmax again, ignoring the saved log-sum-exp",
            M_ + "renormalises-recomputed-probabilities":
                "backward divides exp(S - L) by its row sum again",
            M_ + "backward-drops-mask": "mask left out of backward's recomputation",
            M_ + "mask-multiplied-after-exp": "the recomputed P multiplied by the mask",
            M_ + "backward-takes-row-maximum-again":
                "backward takes each row's maximum again beside the saved L"}),
    Clause("$L$ right at any magnitude of score (the table under Exercise 1).",
           {M_ + "log-sum-exp-without-maximum": "log-sum-exp without the row maximum",
            M_ + "masked-scores-take-part": "row maximum taken before the mask fill",
            M_ + "one-global-maximum": "log-sum-exp with one global max, the mask filled first"}),
)


FLASH_ATTENTION_CLAUSES = (
    Clause("**Forward** loops over query and key blocks of at most `FlashAttention.BLOCK` rows "
           "with your online softmax, creating no tensor of more than `BLOCK x BLOCK` elements "
           "per batch-head besides the inputs, the outputs, the per-row statistics and pieces of"
           " them of at most `BLOCK` rows (a `BLOCK x d` block of $Q$ or $O$; a `BLOCK x Lk` row"
           " block of scores is too big).",
           {F_ + "running-output-not-rescaled": "no rescaling of the running output",
            F_ + "rescales-with-wrong-maximum": "rescaling with the wrong max",
            FULL: "full Lq x Lk matrix in forward",
            "case:under torch.no_grad()":
                "composed ops when no input requires grad (the full scores under no_grad)",
            "case:builds a full Lq x Lk mask": "full causal mask, sliced per tile",
            F_ + "row-block-tensor-in-forward":
                "a query block's causal mask against every key, sliced per tile",
            F_ + "state-in-shared-container": "L kept in a dict on the class, keyed by id(ctx)",
            F_ + "blocks-of-more-than-block-rows":
                "query blocks of 1 row, key blocks of BLOCK^2 rows"}),
    Clause("Forward saves $Q$, $K$, $V$ and the $O$ it returns themselves, no copy of them in "
           "any dtype (for float16/bfloat16 inputs, no float32 copy either), and $L$, one number"
           " per query row in float32 or wider (float64 for float64 inputs): nothing else.",
           {"case:tensors besides Q, K, V and O": "every score tile saved for backward",
            F_ + "saves-a-copy": "saves a float64 copy of the output for accuracy",
            F_ + "saves-output-accumulator":
                "the float32 accumulator of O saved for half inputs, O rounded returned",
            F_ + "saves-something-else-than-the-inputs": "Q * scale saved in place of Q",
            F_ + "log-sum-exp-narrower-than-inputs":
                "log-sum-exp kept in float32 for float64 inputs"}),
    Clause("**Backward** recomputes each tile from $L$, with $D$ from your `my_row_sum`, by hand, "
           "marked `@once_differentiable`; return `None` for `scale` and `causal`.",
           {F_ + "recomputes-softmax-without-lse":
                "backward recomputes L by its own pass over the tiles, ignoring the saved one",
            F_ + "row-sum-from-one-tile": "D from dP instead of dO * O",
            FULL: "full Lq x Lk matrix in backward",
            F_ + "missing-once-differentiable": "backward without @once_differentiable"}),
    Clause("Under `causal`, skip the tiles entirely above the diagonal, in both passes (a "
           "backward in two passes may compute a needed tile twice: that is fine).",
           {"case:computes score tiles entirely above the causal diagonal":
                "every tile computed under causal",
            F_ + "causal-mask-top-left": "top-left causal mask",
            F_ + "causal-mask-hides-diagonal": "causal mask with >=",
            F_ + "tile-mask-without-offset":
                "each tile masked as tril(Lk - Lq), without the tile's offset",
            F_ + "causal-skip-bound-off-by-one-in-forward":
                "forward key loop ends at the last visible key (BLOCK rows)",
            F_ + "causal-skip-bound-off-by-one-in-backward":
                "backward's first query block one query late"}),
    Clause("Scores of any magnitude softmax handles (the table under Exercise 1).",
           {F_ + "forward-overflows": "no running maximum",
            F_ + "forward-underflows": "running maximum started at 0"}),
    Clause("float16/bfloat16 inputs: the tile of scores, its exponentials and every accumulator "
           "in float32 ($P$ may be rounded to the input dtype for $P V$); return the input "
           "dtype.",
           {F_ + "scores-in-half": "score tile computed in the input dtype",
            F_ + "running-output-in-half": "running output kept in float16",
            F_ + "backward-accumulates-in-half": "dQ accumulated in float16",
            F_ + "row-sum-d-in-half": "D = rowsum(dO * O) in float16",
            F_ + "dk-dv-accumulated-in-half": "dK, dV accumulated in float16 across query blocks",
            F_ + "gradient-in-accumulator-dtype": "grad_Q returned in its float32 accumulator"}),
    Clause("Read the block size as `FlashAttention.BLOCK`: the checks set it from 2 to 16, and "
           "measure the largest tensor you create and the peak of live tensors, forward and "
           "backward, with `TensorAccounting`.",
           {F_ + "block-hard-coded-in-forward": "block size hard-coded",
            F_ + "block-hard-coded-in-backward": "block size hard-coded in backward only",
            F_ + "block-default-not-64": "BLOCK = 128 by default",
            "case:no list of tiles": "two-pass backward keeping every dS tile for the dQ pass"}),
)


ATTENTION_BIAS_CLAUSES = (
    Clause("Gradients for `Q`, `K`, `V` and `bias`, **each only when it is needed**: how does "
           "backward know which ones were asked for? And `None` for `scale`. Ask the same of "
           "what you build on the way: when only `V` needs a gradient, does backward need $dP$ "
           "at all? The checks accept the extra product, but it is an $N_q \\times N_k$ tensor "
           "built for nothing.",
           {B_ + "computes-frozen-gradient": "every gradient computed",
            "case:computes dK = dS^T Q": "dQ and dK computed always, returned only when needed",
            "case:sums dS down to the bias's shape":
                "grad_bias computed always, returned only when needed"}),
    Clause("`backward` itself returns the bias gradient with exactly `bias.shape`. (Autograd's "
           "engine would quietly accept one of the scores' shape; the checks look at what your "
           "backward returns.)",
           {B_ + "bias-gradient-not-reduced": "bias gradient left at the scores' shape",
            B_ + "wrong-gradient-shape": "bias summed over the key dimension too"}),
    Clause("No built-in softmax backward: no autograd inside `backward`, no "
           "`_softmax_backward_data`.",
           {B_ + "asks-autograd": "softmax backward by autograd"}),
)
